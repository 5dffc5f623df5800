//! Numbered schema migrations, applied in order at start; a migration never changes once released.

use rusqlite::Connection;

/// Every migration: its number and its SQL.
const MIGRATIONS: &[(i64, &str)] = &[
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
    (
        5,
        "-- Session access tokens are stored sealed from now on; sessions kept in the clear before are dropped
    -- (their holders sign in again).
    DELETE FROM sessions;",
    ),
    (
        6,
        "-- One open alert per project and fingerprint is held by the writer's in-memory table from now on
    -- (store/open_alerts.rs): this index put a random key on disk for every new alert. What the table is filled
    -- from at start: the open alerts in id order, so new alerts only ever append to it (status is there so
    -- the start-up read needs no table row).
    DROP INDEX alerts_one_open;
    CREATE INDEX alerts_open ON alerts (id, project_id, fingerprint, status)
        WHERE status != 'resolved' AND fingerprint IS NOT NULL;",
    ),
    (
        7,
        "-- The status check, unchanged in meaning, as comparisons: SQLite evaluates `IN` over more than two
    -- constants by building a temporary B-tree of them, and a CHECK does so for every row written (about 20 k
    -- instructions per new alert). SQLite cannot change a CHECK in place, so the table is rebuilt (the procedure
    -- of its ALTER TABLE documentation): the same columns in the same order, then the same indexes.
    CREATE TABLE alerts_rebuilt (
        id INTEGER PRIMARY KEY,
        project_id INTEGER NOT NULL,
        iid INTEGER NOT NULL,
        integration_id INTEGER,
        fingerprint TEXT,
        status TEXT NOT NULL CHECK (
            status = 'triggered' OR status = 'acknowledged' OR status = 'resolved' OR status = 'ignored'
        ),
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
    INSERT INTO alerts_rebuilt SELECT * FROM alerts;
    DROP TABLE alerts;
    ALTER TABLE alerts_rebuilt RENAME TO alerts;
    CREATE INDEX alerts_by_project_status ON alerts (project_id, status);
    CREATE INDEX alerts_open ON alerts (id, project_id, fingerprint, status)
        WHERE status != 'resolved' AND fingerprint IS NOT NULL;",
    ),
    // No migration puts back a partial unique index on `alerts (project_id, fingerprint) WHERE status !=
    // 'resolved'` for "at most one open alert per project and fingerprint", on purpose. Migration 6 dropped
    // exactly that index: its random keys cost one index page written per new alert per commit and capped durable
    // intake at about 17k alerts/s on the bench machine (`examples/store_floor.rs`). The rule is held by the
    // lifecycle's decision, the single writer and the writer's in-memory open-alert table, whose primary key
    // refuses a second open alert as the index did (see the store's module documentation and `open_alerts.rs`).
    // The index would also refuse rows another program writes (the `sqlite3` shell), which the store accepts and
    // groups into, older first. Should it come back, duplicates an older build or the shell left must be resolved
    // first (all but the oldest open alert of each key), or the migration fails on existing data.
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
    (
        10,
        "-- Facts about the store itself: the fingerprint of the secret key its sealed values were sealed with.
    CREATE TABLE svcgate_meta (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL
    ) WITHOUT ROWID;",
    ),
    (
        11,
        "-- Finished incident calls, by when they finished: the outbox sweep removes the oldest first.
    CREATE INDEX outbox_done ON outbox (done_at) WHERE done_at IS NOT NULL;",
    ),
    (
        12,
        "-- Ids are never given twice. A deleted integration's row stays, marked deleted, its sealed key erased: its
    -- id and address are never another's, and its alerts keep naming it. Integrations deleted before this
    -- migration, which alerts still name, get such a row too, so their ids are not given again either.
    ALTER TABLE integrations ADD COLUMN deleted_at TEXT;
    INSERT INTO integrations (id, project_id, project_path, type, name, active, token_nonce, token_ciphertext,
        created_at, updated_at, deleted_at)
    SELECT integration_id, MIN(project_id), '', 'generic', 'a deleted integration', 0, x'', x'',
        CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP
    FROM alerts WHERE integration_id IS NOT NULL AND integration_id NOT IN (SELECT id FROM integrations)
    GROUP BY integration_id;
    DROP INDEX integrations_one_per_project;
    CREATE UNIQUE INDEX integrations_one_per_project ON integrations (project_id, type)
        WHERE type IN ('generic', 'prometheus', 'opsgenie') AND deleted_at IS NULL;
    -- Finished incident calls are removed by the sweep; AUTOINCREMENT keeps the highest id ever given, so a call
    -- never takes the id of one removed. SQLite cannot add it in place: the table is rebuilt, same columns.
    CREATE TABLE outbox_rebuilt (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL CHECK (kind IN ('create_incident', 'close_incident')),
        project_id INTEGER NOT NULL,
        alert_id INTEGER NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at TEXT NOT NULL,
        last_error TEXT,
        done_at TEXT
    );
    INSERT INTO outbox_rebuilt (id, kind, project_id, alert_id, attempts, next_attempt_at, last_error, done_at)
        SELECT id, kind, project_id, alert_id, attempts, next_attempt_at, last_error, done_at FROM outbox;
    DROP TABLE outbox;
    ALTER TABLE outbox_rebuilt RENAME TO outbox;
    CREATE INDEX outbox_due ON outbox (next_attempt_at) WHERE done_at IS NULL;
    CREATE INDEX outbox_done ON outbox (done_at) WHERE done_at IS NOT NULL;",
    ),
];

/// Applies every migration the database has not seen, each in its own transaction.
pub fn apply(connection: &mut Connection) -> rusqlite::Result<()> {
    apply_through(connection, i64::MAX)
}

/// Applies the migrations up to and including `last` that the database has not seen.
fn apply_through(connection: &mut Connection, last: i64) -> rusqlite::Result<()> {
    connection.execute_batch(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
            version INTEGER PRIMARY KEY,
            applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        );",
    )?;
    for (version, sql) in MIGRATIONS.iter().take_while(|(version, _)| *version <= last) {
        let seen: bool = connection.query_row(
            "SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = ?1)",
            [version],
            |row| row.get(0),
        )?;
        if seen {
            continue;
        }
        let transaction = connection.transaction()?;
        transaction.execute_batch(sql)?;
        transaction.execute("INSERT INTO schema_migrations (version) VALUES (?1)", [version])?;
        transaction.commit()?;
    }
    Ok(())
}

/// The highest migration number this build knows.
#[cfg(test)]
pub fn latest() -> i64 {
    MIGRATIONS.last().map_or(0, |(version, _)| *version)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use rusqlite::Connection;

    use super::{apply, apply_through};

    const INSERT_ALERT: &str =
        "INSERT INTO alerts (project_id, iid, fingerprint, status, title, severity, hosts,
            started_at, events, last_event_at, payload, created_at, updated_at)
        VALUES (1, ?1, ?2, ?3, 't', 'critical', '[]', 'then', 1, 'then', '{}', 'then', 'then')";

    #[test]
    fn rebuilding_the_alerts_table_keeps_its_rows_indexes_and_status_check() {
        let dir = tempfile::tempdir().unwrap();
        let mut connection = Connection::open(dir.path().join("svcgate.db")).unwrap();
        apply_through(&mut connection, 6).unwrap();
        connection.execute(INSERT_ALERT, (1, "a", "resolved")).unwrap();
        connection.execute(INSERT_ALERT, (2, "b", "triggered")).unwrap();
        apply(&mut connection).unwrap();

        let rows: Vec<(u64, u64, String)> = connection
            .prepare("SELECT id, iid, status FROM alerts ORDER BY id")
            .unwrap()
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            rows,
            [(1, 1, "resolved".to_owned()), (2, 2, "triggered".to_owned())]
        );
        let indexes: Vec<String> = connection
            .prepare(
                "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'alerts' ORDER BY name",
            )
            .unwrap()
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            indexes,
            [
                "alerts_by_project_status",
                "alerts_open",
                "sqlite_autoindex_alerts_1"
            ]
        );
        let refused = connection.execute(INSERT_ALERT, (3, "c", "closed")).unwrap_err();
        assert!(
            refused.to_string().contains("CHECK constraint failed"),
            "{refused}"
        );
        assert!(
            connection.execute(INSERT_ALERT, (2, "d", "ignored")).is_err(),
            "iid is unique per project"
        );
        connection
            .execute(INSERT_ALERT, (3, "c", "acknowledged"))
            .unwrap();
    }

    #[test]
    fn ids_of_integrations_deleted_and_outbox_calls_swept_before_migration_12_are_not_given_again() {
        let dir = tempfile::tempdir().unwrap();
        let mut connection = Connection::open(dir.path().join("svcgate.db")).unwrap();
        apply_through(&mut connection, 11).unwrap();
        let insert_integration = "INSERT INTO integrations (id, project_id, project_path, type, name, active,
            token_nonce, token_ciphertext, created_at, updated_at)
            VALUES (?1, 1, 'g/p', 'http', 'Old', 1, x'00', x'00', 'then', 'then')";
        connection.execute(insert_integration, [4]).unwrap();
        connection.execute(insert_integration, [5]).unwrap();
        connection.execute(INSERT_ALERT, (1, "a", "triggered")).unwrap();
        connection
            .execute("UPDATE alerts SET integration_id = 5", [])
            .unwrap();
        // Deleted before the migration, the highest id among the integrations; its alert still names it.
        connection
            .execute("DELETE FROM integrations WHERE id = 5", [])
            .unwrap();
        connection
            .execute(
                "INSERT INTO outbox (id, kind, project_id, alert_id, next_attempt_at) VALUES (9, 'create_incident', 1, 1, 'then')",
                [],
            )
            .unwrap();
        apply(&mut connection).unwrap();

        connection.execute("DELETE FROM outbox", []).unwrap();
        connection
            .execute(
                "INSERT INTO outbox (kind, project_id, alert_id, next_attempt_at) VALUES ('create_incident', 1, 1, 'then')",
                [],
            )
            .unwrap();
        let call: i64 = connection
            .query_row("SELECT id FROM outbox", [], |row| row.get(0))
            .unwrap();
        assert_eq!(call, 10, "an outbox id was given again");
        connection
            .execute(
                "INSERT INTO integrations (project_id, project_path, type, name, active, token_nonce,
                    token_ciphertext, created_at, updated_at) VALUES (1, 'g/p', 'generic', 'New', 1, x'00', x'00', 'now', 'now')",
                [],
            )
            .unwrap();
        let id: i64 = connection
            .query_row("SELECT id FROM integrations WHERE name = 'New'", [], |row| {
                row.get(0)
            })
            .unwrap();
        assert_eq!(id, 6, "the deleted integration's id was given again");
        let kept: i64 = connection
            .query_row(
                "SELECT count(*) FROM integrations WHERE id = 5 AND deleted_at IS NOT NULL",
                [],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(kept, 1);
    }
}
