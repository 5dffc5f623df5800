//! Schema step: SQLite only: the store's own facts (the secret key's fingerprint).
//!
//! PostgreSQL created `svcgate_meta` in its first step.

use super::Step;

/// This step in both dialects.
pub const STEP: Step = Step {
    sqlite: &[
        (
            10,
            "-- Facts about the store itself: the fingerprint of the secret key its sealed values were sealed with.
    CREATE TABLE svcgate_meta (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL
    ) WITHOUT ROWID;",
        ),
    ],
    postgres: &[],
};
