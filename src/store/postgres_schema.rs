//! The PostgreSQL schema: numbered migrations, applied in order at start under an advisory lock, so that replicas
//! starting at the same moment apply each migration once. A migration never changes once released.
//!
//! The tables and columns are the SQLite store's (`migrations.rs`), with PostgreSQL's types: `BIGINT` ids,
//! `BOOLEAN` flags, `BYTEA` sealed tokens. Times stay RFC 3339 text in UTC with milliseconds, which sorts as
//! it reads, so both stores compare and order them alike. What only several replicas need is new here: the
//! per-project iid counter, the key fingerprint, and the one-open-alert rule as a unique index.

use tokio_postgres::Client;

/// The advisory lock migrations run under (any fixed number; "svcgate" in ASCII).
const MIGRATION_LOCK: i64 = 0x0073_7663_6761_7465;

/// The migrations, in order.
const MIGRATIONS: &[(i64, &str)] = &[
    (
        1,
    "CREATE TABLE id_index (
        kind TEXT NOT NULL,
        id BIGINT NOT NULL,
        project_id BIGINT NOT NULL,
        iid BIGINT NOT NULL,
        PRIMARY KEY (kind, id)
    );
    CREATE TABLE sessions (
        token_hash TEXT PRIMARY KEY,
        access_token TEXT NOT NULL,
        user_id BIGINT,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now()
    );
    CREATE TABLE integrations (
        id BIGSERIAL PRIMARY KEY,
        project_id BIGINT NOT NULL,
        project_path TEXT NOT NULL,
        type TEXT NOT NULL CHECK (type IN ('generic', 'http', 'prometheus', 'opsgenie')),
        name TEXT NOT NULL,
        active BOOLEAN NOT NULL,
        endpoint_identifier TEXT,
        token_nonce BYTEA NOT NULL,
        token_ciphertext BYTEA NOT NULL,
        api_url TEXT,
        payload_example TEXT,
        payload_attribute_mapping TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE UNIQUE INDEX integrations_one_per_project ON integrations (project_id, type)
        WHERE type IN ('generic', 'prometheus', 'opsgenie');
    CREATE UNIQUE INDEX integrations_endpoint ON integrations (endpoint_identifier)
        WHERE endpoint_identifier IS NOT NULL;
    CREATE TABLE alerts (
        id BIGSERIAL PRIMARY KEY,
        project_id BIGINT NOT NULL,
        iid BIGINT NOT NULL,
        integration_id BIGINT,
        fingerprint TEXT,
        status TEXT NOT NULL CHECK (status IN ('triggered', 'acknowledged', 'resolved', 'ignored')),
        title TEXT NOT NULL,
        description TEXT,
        severity TEXT NOT NULL,
        service TEXT,
        monitoring_tool TEXT,
        hosts TEXT NOT NULL,
        environment TEXT,
        started_at TEXT NOT NULL,
        ended_at TEXT,
        events BIGINT NOT NULL,
        last_event_at TEXT NOT NULL,
        payload TEXT NOT NULL,
        incident_iid BIGINT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (project_id, iid)
    );
    -- At most one open alert per project and fingerprint, held by PostgreSQL for every replica: the intake's
    -- INSERT ... ON CONFLICT names this index, so a repeat groups into the open alert instead of creating one.
    CREATE UNIQUE INDEX alerts_one_open ON alerts (project_id, fingerprint)
        WHERE status <> 'resolved' AND fingerprint IS NOT NULL;
    CREATE INDEX alerts_by_project_status ON alerts (project_id, status);
    -- The last iid given in each project. Creating an alert locks its project's row until commit, so iids come
    -- without gaps or duplicates however many replicas write.
    CREATE TABLE alert_iids (
        project_id BIGINT PRIMARY KEY,
        last_iid BIGINT NOT NULL
    );
    CREATE TABLE alert_settings (
        project_id BIGINT PRIMARY KEY,
        create_incident BOOLEAN NOT NULL,
        auto_close_incident BOOLEAN NOT NULL
    );
    CREATE TABLE outbox (
        id BIGSERIAL PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('create_incident', 'close_incident')),
        project_id BIGINT NOT NULL,
        alert_id BIGINT NOT NULL,
        attempts BIGINT NOT NULL DEFAULT 0,
        next_attempt_at TEXT NOT NULL,
        last_error TEXT,
        done_at TEXT
    );
    CREATE INDEX outbox_due ON outbox (next_attempt_at) WHERE done_at IS NULL;
    CREATE INDEX outbox_by_alert ON outbox (alert_id);
    CREATE TABLE v3_usage (
        route TEXT NOT NULL,
        since TEXT NOT NULL,
        client TEXT NOT NULL,
        user_agent TEXT NOT NULL,
        calls BIGINT NOT NULL,
        errors BIGINT NOT NULL,
        first_seen TEXT NOT NULL,
        last_seen TEXT NOT NULL,
        PRIMARY KEY (route, client, user_agent)
    );
    -- Facts about the database itself: the fingerprint of the secret_key its integration keys are sealed with.
    CREATE TABLE svcgate_meta (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );",
    ),
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
    (
        6,
        "-- Finished incident calls, by when they finished: the outbox sweep removes the oldest first.
    CREATE INDEX outbox_done ON outbox (done_at) WHERE done_at IS NOT NULL;",
    ),
    (
        7,
        "-- A deleted integration's row stays, marked deleted, its sealed key erased: its alerts keep naming it (ids
    -- come from sequences, never given twice).
    ALTER TABLE integrations ADD COLUMN deleted_at TEXT;
    DROP INDEX integrations_one_per_project;
    CREATE UNIQUE INDEX integrations_one_per_project ON integrations (project_id, type)
        WHERE type IN ('generic', 'prometheus', 'opsgenie') AND deleted_at IS NULL;",
    ),
];

/// Applies every migration not yet applied, in one transaction under [`MIGRATION_LOCK`]: a replica that starts
/// while another migrates waits, then finds the work done.
pub async fn apply(client: &mut Client) -> Result<(), tokio_postgres::Error> {
    let transaction = client.transaction().await?;
    transaction
        .execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await?;
    transaction
        .batch_execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (
                version BIGINT PRIMARY KEY,
                applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
            )",
        )
        .await?;
    for (version, sql) in MIGRATIONS {
        let seen = transaction
            .query_opt("SELECT 1 FROM schema_migrations WHERE version = $1", &[version])
            .await?
            .is_some();
        if !seen {
            transaction.batch_execute(sql).await?;
            transaction
                .execute("INSERT INTO schema_migrations (version) VALUES ($1)", &[version])
                .await?;
        }
    }
    transaction.commit().await
}
