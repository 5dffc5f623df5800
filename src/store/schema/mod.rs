//! The schema of both stores, step by step: each step one file holding its SQLite and its PostgreSQL migrations
//! side by side (a step may have none in one dialect), so that a schema change is one place to look. Migrations
//! are numbered per dialect, applied in order at start, and never change once released; this folder also owns
//! applying them ([`apply_sqlite`], [`apply_postgres`]).
//!
//! The tables and columns are the same in both dialects, with PostgreSQL's types there: `BIGINT` ids, `BOOLEAN`
//! flags, `BYTEA` sealed tokens. Times stay RFC 3339 text in UTC with milliseconds, which sorts as it reads, so
//! both stores compare and order them alike. What only several replicas need is PostgreSQL's alone: the
//! per-project iid counter, the replicas table, and the one-open-alert rule as a unique index.
//!
//! To change the schema, add a step file (the next `mNN_`), list it last in [`STEPS`], and give it the next
//! version number of each dialect it changes. It uses nothing of the store but the drivers.

mod m01_first_tables;
mod m02_sealed_sessions;
mod m03_open_alert_table;
mod m04_page_sessions;
mod m05_replicas;
mod m06_oauth;
mod m07_store_facts;
mod m08_outbox_done;
mod m09_deleted_integrations;
mod m10_kinds_in_rust;
mod m11_one_per_project_in_rust;
mod m12_payload_format;
mod m13_pending_confirmation;

use rusqlite::Connection;
use tokio_postgres::Client;

/// One step of the schema: the migrations, by version number, that carry it out in each dialect.
#[derive(Debug)]
pub struct Step {
    /// SQLite's migrations of this step, in order.
    pub sqlite: &'static [(i64, &'static str)],
    /// PostgreSQL's migrations of this step, in order.
    pub postgres: &'static [(i64, &'static str)],
}

/// Every step, in order: each dialect's versions ascend through them.
const STEPS: &[Step] = &[
    m01_first_tables::STEP,
    m02_sealed_sessions::STEP,
    m03_open_alert_table::STEP,
    m04_page_sessions::STEP,
    m05_replicas::STEP,
    m06_oauth::STEP,
    m07_store_facts::STEP,
    m08_outbox_done::STEP,
    m09_deleted_integrations::STEP,
    m10_kinds_in_rust::STEP,
    m11_one_per_project_in_rust::STEP,
    m12_payload_format::STEP,
    m13_pending_confirmation::STEP,
];

/// SQLite's migrations, in order.
fn sqlite_migrations() -> impl Iterator<Item = &'static (i64, &'static str)> {
    STEPS.iter().flat_map(|step| step.sqlite.iter())
}

/// PostgreSQL's migrations, in order.
fn postgres_migrations() -> impl Iterator<Item = &'static (i64, &'static str)> {
    STEPS.iter().flat_map(|step| step.postgres.iter())
}

/// Applies every migration the database has not seen, each in its own transaction.
pub fn apply_sqlite(connection: &mut Connection) -> rusqlite::Result<()> {
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
    for (version, sql) in sqlite_migrations().take_while(|(version, _)| *version <= last) {
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

/// The highest SQLite migration number this build knows.
pub fn latest_sqlite() -> i64 {
    sqlite_migrations().last().map_or(0, |(version, _)| *version)
}

/// The highest PostgreSQL migration number this build knows.
pub fn latest_postgres() -> i64 {
    postgres_migrations().last().map_or(0, |(version, _)| *version)
}

/// The advisory lock migrations run under (any fixed number; "svcgate" in ASCII).
const MIGRATION_LOCK: i64 = 0x0073_7663_6761_7465;

/// Applies every migration not yet applied, in one transaction under [`MIGRATION_LOCK`]: a replica that starts
/// while another migrates waits, then finds the work done.
pub async fn apply_postgres(client: &mut Client) -> Result<(), tokio_postgres::Error> {
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
    for (version, sql) in postgres_migrations() {
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use rusqlite::Connection;

    use super::{apply_sqlite as apply, apply_through, postgres_migrations, sqlite_migrations};

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

    #[test]
    fn rebuilding_the_integrations_table_keeps_its_rows_and_indexes_and_drops_the_kind_list() {
        let dir = tempfile::tempdir().unwrap();
        let mut connection = Connection::open(dir.path().join("svcgate.db")).unwrap();
        apply_through(&mut connection, 12).unwrap();
        let insert = "INSERT INTO integrations (project_id, project_path, type, name, active, endpoint_identifier,
            token_nonce, token_ciphertext, created_at, updated_at) VALUES (1, 'g/p', ?1, 'I', 1, ?2, x'00', x'00',
            'then', 'then')";
        connection.execute(insert, ("generic", None::<String>)).unwrap();
        connection
            .execute(insert, ("http", Some("0123456789abcdef")))
            .unwrap();
        assert!(connection.execute(insert, ("pagerduty", None::<String>)).is_err());
        apply_through(&mut connection, 13).unwrap();

        let kinds: Vec<(i64, String)> = connection
            .prepare("SELECT id, type FROM integrations ORDER BY id")
            .unwrap()
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(kinds, [(1, "generic".to_owned()), (2, "http".to_owned())]);
        assert!(
            connection.execute(insert, ("generic", None::<String>)).is_err(),
            "one generic integration per project"
        );
        assert!(
            connection
                .execute(insert, ("http", Some("0123456789abcdef")))
                .is_err(),
            "an endpoint identifier is given once"
        );
        connection.execute(insert, ("pagerduty", None::<String>)).unwrap();
    }

    #[test]
    fn one_per_project_is_carried_by_each_row_and_backfilled() {
        let dir = tempfile::tempdir().unwrap();
        let mut connection = Connection::open(dir.path().join("svcgate.db")).unwrap();
        apply_through(&mut connection, 13).unwrap();
        let old = "INSERT INTO integrations (project_id, project_path, type, name, active, endpoint_identifier,
            token_nonce, token_ciphertext, created_at, updated_at) VALUES (?1, 'g/p', ?2, 'I', 1, ?3, x'00', x'00',
            'then', 'then')";
        for (kind, endpoint) in [
            ("generic", None),
            ("prometheus", None),
            ("opsgenie", None),
            ("http", Some("0123456789abcdef")),
        ] {
            connection.execute(old, (1, kind, endpoint)).unwrap();
        }
        apply(&mut connection).unwrap();

        let flags: Vec<(String, bool)> = connection
            .prepare("SELECT type, one_per_project FROM integrations ORDER BY id")
            .unwrap()
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            flags,
            [
                ("generic".to_owned(), true),
                ("prometheus".to_owned(), true),
                ("opsgenie".to_owned(), true),
                ("http".to_owned(), false)
            ]
        );
        let new = "INSERT INTO integrations (project_id, project_path, type, name, active, endpoint_identifier,
            token_nonce, token_ciphertext, created_at, updated_at, one_per_project) VALUES (?1, 'g/p', ?2, 'I', 1,
            ?3, x'00', x'00', 'then', 'then', ?4)";
        for kind in ["generic", "prometheus", "opsgenie"] {
            assert!(
                connection.execute(new, (1, kind, None::<String>, true)).is_err(),
                "a second {kind} in the project"
            );
            connection.execute(new, (2, kind, None::<String>, true)).unwrap();
        }
        connection
            .execute(new, (1, "http", Some("fedcba9876543210"), false))
            .unwrap();
        connection
            .execute(new, (1, "pagerduty", None::<String>, false))
            .unwrap();
        connection
            .execute(new, (1, "pagerduty", None::<String>, false))
            .unwrap();
        connection
            .execute(
                "UPDATE integrations SET deleted_at = 'now' WHERE project_id = 2",
                [],
            )
            .unwrap();
        connection
            .execute(new, (2, "generic", None::<String>, true))
            .unwrap();
    }

    #[test]
    fn every_existing_integration_reads_generic_payloads_after_the_payload_format_step() {
        let dir = tempfile::tempdir().unwrap();
        let mut connection = Connection::open(dir.path().join("svcgate.db")).unwrap();
        apply_through(&mut connection, 14).unwrap();
        let old = "INSERT INTO integrations (project_id, project_path, type, name, active, endpoint_identifier,
            token_nonce, token_ciphertext, created_at, updated_at, one_per_project) VALUES (1, 'g/p', ?1, 'I', 1,
            ?2, x'00', x'00', 'then', 'then', ?3)";
        connection
            .execute(old, ("generic", None::<String>, true))
            .unwrap();
        connection
            .execute(old, ("http", Some("0123456789abcdef"), false))
            .unwrap();
        connection
            .execute(old, ("prometheus", None::<String>, true))
            .unwrap();
        apply(&mut connection).unwrap();

        let formats: Vec<(String, String)> = connection
            .prepare("SELECT type, payload_format FROM integrations ORDER BY id")
            .unwrap()
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            formats,
            [
                ("generic".to_owned(), "generic".to_owned()),
                ("http".to_owned(), "generic".to_owned()),
                ("prometheus".to_owned(), "generic".to_owned())
            ]
        );
        connection
            .execute(
                "UPDATE integrations SET payload_format = 'grafana' WHERE type = 'http'",
                [],
            )
            .unwrap();
        assert!(
            connection
                .execute(
                    "UPDATE integrations SET payload_format = NULL WHERE type = 'http'",
                    []
                )
                .is_err(),
            "a payload format is always named"
        );
    }

    #[test]
    fn each_dialect_numbers_its_migrations_from_one_without_gaps() {
        let sqlite: Vec<i64> = sqlite_migrations().map(|(version, _)| *version).collect();
        let postgres: Vec<i64> = postgres_migrations().map(|(version, _)| *version).collect();
        assert_eq!(sqlite, (1..=sqlite.len() as i64).collect::<Vec<_>>());
        assert_eq!(postgres, (1..=postgres.len() as i64).collect::<Vec<_>>());
    }
}
