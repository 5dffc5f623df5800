//! Schema step: Sessions signed in through the backend's OAuth: refresh tokens, expiry, refresh claims, pending sign-ins.

use super::Step;

/// This step in both dialects.
pub const STEP: Step = Step {
    sqlite: &[
        (
            9,
            "-- A session signed in through the backend's OAuth keeps its refresh token (sealed) and its access token's
    -- expiry, and while one replica refreshes the token, until when it holds that refresh (so that no other replica
    -- spends the same refresh token); a pasted personal token has none of them. A pending OAuth sign-in is a row until its callback takes it.
    ALTER TABLE page_sessions ADD COLUMN sealed_refresh_token TEXT;
    ALTER TABLE page_sessions ADD COLUMN token_expires_at TEXT;
    ALTER TABLE page_sessions ADD COLUMN refresh_claimed_until TEXT;
    CREATE TABLE oauth_states (
        state_hash TEXT PRIMARY KEY,
        sealed_verifier TEXT NOT NULL,
        return_to TEXT NOT NULL,
        expires_at TEXT NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX oauth_states_expiry ON oauth_states (expires_at);",
        ),
    ],
    postgres: &[
        (
            5,
            "-- A session signed in through the backend's OAuth keeps its refresh token (sealed) and its access token's
    -- expiry, and while one replica refreshes the token, until when it holds that refresh (so that no other replica
    -- spends the same refresh token); a pasted personal token has none of them. A pending OAuth sign-in is a row until its callback takes it,
    -- on whichever replica the browser comes back to.
    ALTER TABLE page_sessions ADD COLUMN sealed_refresh_token TEXT;
    ALTER TABLE page_sessions ADD COLUMN token_expires_at TEXT;
    ALTER TABLE page_sessions ADD COLUMN refresh_claimed_until TEXT;
    CREATE TABLE oauth_states (
        state_hash TEXT PRIMARY KEY,
        sealed_verifier TEXT NOT NULL,
        return_to TEXT NOT NULL,
        expires_at TEXT NOT NULL
    );
    CREATE INDEX oauth_states_expiry ON oauth_states (expires_at);",
        ),
    ],
};
