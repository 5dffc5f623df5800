//! Schema step: PostgreSQL only: the replicas alive (they share the rate limits), and provisional iids for alerts being
//! written.
//!
//! SQLite has one process: nothing to do there.

use super::Step;

/// This step in both dialects.
pub const STEP: Step = Step {
    sqlite: &[],
    postgres: &[
        (
            3,
            "-- The replicas alive, each refreshing its row every few seconds: they share the rate limits among them.
    CREATE TABLE replicas (
        id TEXT PRIMARY KEY,
        last_seen TIMESTAMPTZ NOT NULL
    );",
        ),
        (
            4,
            "-- An alert is created with a provisional negative iid from this sequence, and given its project's next
    -- iid just before its batch commits: the project's counter is locked only for that last step.
    CREATE SEQUENCE alert_provisional_iids;",
        ),
    ],
};
