//! Schema step: Signed-in page sessions are rows, so that a restart (or another replica) keeps people signed in.

use super::Step;

/// This step in both dialects.
pub const STEP: Step = Step {
    sqlite: &[
        (
            8,
            "-- Signed-in page sessions are rows, so that a restart keeps people signed in: found by the hash of the
    -- session cookie, the backend token sealed with the secret key, swept once expired.
    CREATE TABLE page_sessions (
        id_hash TEXT PRIMARY KEY,
        sealed_token TEXT NOT NULL,
        username TEXT NOT NULL,
        csrf TEXT NOT NULL,
        expires_at TEXT NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX page_sessions_expiry ON page_sessions (expires_at);",
        ),
    ],
    postgres: &[
        (
            2,
            "-- Signed-in page sessions, shared by every replica: found by the hash of the session cookie, the backend
    -- token sealed with the secret key, swept once expired.
    CREATE TABLE page_sessions (
        id_hash TEXT PRIMARY KEY,
        sealed_token TEXT NOT NULL,
        username TEXT NOT NULL,
        csrf TEXT NOT NULL,
        expires_at TEXT NOT NULL
    );
    CREATE INDEX page_sessions_expiry ON page_sessions (expires_at);",
        ),
    ],
};
