//! Schema step: an integration may hold `pending_confirmation`, the address a sender asked to be opened to confirm
//! its subscription (Amazon SNS's `SubscribeURL`). svcgate never fetches an address taken from a payload: it keeps
//! it for a maintainer to open from the integration's page, until the sender's first notification shows the
//! subscription confirmed. Existing rows hold none.

use super::Step;

/// This step in both dialects.
pub const STEP: Step = Step {
    sqlite: &[(
        16,
        "-- A subscription confirmation address a sender asked to be opened, kept for a maintainer.
    ALTER TABLE integrations ADD COLUMN pending_confirmation TEXT;",
    )],
    postgres: &[(
        11,
        "-- A subscription confirmation address a sender asked to be opened, kept for a maintainer.
    ALTER TABLE integrations ADD COLUMN pending_confirmation TEXT;",
    )],
};
