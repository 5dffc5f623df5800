//! Schema step: V3 session tokens are stored sealed: sessions kept in the clear before are dropped.
//!
//! PostgreSQL stored them sealed from its first step: nothing to do there.

use super::Step;

/// This step in both dialects.
pub const STEP: Step = Step {
    sqlite: &[
        (
            5,
            "-- Session access tokens are stored sealed from now on; sessions kept in the clear before are dropped
    -- (their holders sign in again).
    DELETE FROM sessions;",
        ),
    ],
    postgres: &[],
};
