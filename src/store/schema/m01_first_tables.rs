//! Schema step: The first tables: global ids, V3 sessions, integrations, alerts, incident settings, the outbox, V3 usage.
//!
//! SQLite took four releases to reach them (1 to 4); PostgreSQL, added later, creates them at once in its step 1,
//! together with what only several replicas need (the per-project iid counter `alert_iids`) and the store's own
//! facts (`svcgate_meta`, SQLite's migration 10, in step m07).

use super::Step;

/// This step in both dialects.
pub const STEP: Step = Step {
    sqlite: &[
        (
            1,
            "CREATE TABLE id_index (
        kind TEXT NOT NULL,
        id INTEGER NOT NULL,
        project_id INTEGER NOT NULL,
        iid INTEGER NOT NULL,
        PRIMARY KEY (kind, id)
    ) WITHOUT ROWID;",
        ),
        (
            2,
            "CREATE TABLE sessions (
        token_hash TEXT PRIMARY KEY,
        access_token TEXT NOT NULL,
        user_id INTEGER,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    ) WITHOUT ROWID;",
        ),
        (
            3,
            "CREATE TABLE integrations (
        id INTEGER PRIMARY KEY,
        project_id INTEGER NOT NULL,
        project_path TEXT NOT NULL,
        type TEXT NOT NULL CHECK (type IN ('generic', 'http', 'prometheus', 'opsgenie')),
        name TEXT NOT NULL,
        active INTEGER NOT NULL,
        endpoint_identifier TEXT,
        token_nonce BLOB NOT NULL,
        token_ciphertext BLOB NOT NULL,
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
        id INTEGER PRIMARY KEY,
        project_id INTEGER NOT NULL,
        iid INTEGER NOT NULL,
        integration_id INTEGER,
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
        events INTEGER NOT NULL,
        last_event_at TEXT NOT NULL,
        payload TEXT NOT NULL,
        incident_iid INTEGER,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (project_id, iid)
    );
    -- At most one open alert per project and fingerprint: the schema, not only the code, holds the rule.
    CREATE UNIQUE INDEX alerts_one_open ON alerts (project_id, fingerprint)
        WHERE status != 'resolved' AND fingerprint IS NOT NULL;
    CREATE INDEX alerts_by_project_status ON alerts (project_id, status);
    CREATE TABLE alert_settings (
        project_id INTEGER PRIMARY KEY,
        create_incident INTEGER NOT NULL,
        auto_close_incident INTEGER NOT NULL
    );
    CREATE TABLE outbox (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('create_incident', 'close_incident')),
        project_id INTEGER NOT NULL,
        alert_id INTEGER NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at TEXT NOT NULL,
        last_error TEXT,
        done_at TEXT
    );
    CREATE INDEX outbox_due ON outbox (next_attempt_at) WHERE done_at IS NULL;",
        ),
        (
            4,
            "CREATE TABLE v3_usage (
        route TEXT NOT NULL,
        since TEXT NOT NULL,
        client TEXT NOT NULL,
        user_agent TEXT NOT NULL,
        calls INTEGER NOT NULL,
        errors INTEGER NOT NULL,
        first_seen TEXT NOT NULL,
        last_seen TEXT NOT NULL,
        PRIMARY KEY (route, client, user_agent)
    ) WITHOUT ROWID;",
        ),
    ],
    postgres: &[
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
    ],
};
