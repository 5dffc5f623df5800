//! Schema step: Finished incident calls indexed by when they finished, for the outbox sweep.

use super::Step;

/// This step in both dialects.
pub const STEP: Step = Step {
    sqlite: &[(
        11,
        "-- Finished incident calls, by when they finished: the outbox sweep removes the oldest first.
    CREATE INDEX outbox_done ON outbox (done_at) WHERE done_at IS NOT NULL;",
    )],
    postgres: &[(
        6,
        "-- Finished incident calls, by when they finished: the outbox sweep removes the oldest first.
    CREATE INDEX outbox_done ON outbox (done_at) WHERE done_at IS NOT NULL;",
    )],
};
