//! The rule "at most one open alert per project and fingerprint", held by the writer connection in memory.
//!
//! A persistent unique index on `(project_id, fingerprint)` put a random key (a SHA-256) into a B-tree for every
//! new alert, so every commit wrote one 4 KiB index page per alert, and the checkpoint wrote it again: that index
//! alone capped durable intake at about 17k alerts/s on the bench machine (`examples/store_floor.rs`). Instead,
//! the writer connection keeps a table in memory (a private attached database, see [`INSTALL`]) keyed by
//! `(project_id, fingerprint)`. TEMP triggers keep it in step with every insert, status change and delete of
//! `alerts` in the same statement, so its primary key refuses a second open alert exactly as the index did
//! (`UNIQUE constraint failed`), and a rolled-back job or batch takes its entries back with it. The writer fills it before its first batch (not before the gateway is
//! ready), from the open alerts read through the covering `alerts_open` index (which new alerts only append to)
//! and sorted by key: about 4.4 µs per open alert, 1.5 s for 350,000 on the bench machine.
//!
//! Another program writing to the file (the `sqlite3` shell) bypasses the triggers. `PRAGMA data_version` tells
//! the writer that happened; [`OpenAlerts::refresh_if_changed`] then rebuilds the table before the next batch.
//! The table costs memory: roughly 100 bytes per open alert.

use rusqlite::Connection;

/// Creates the table and its triggers.
///
/// The table lives in a private in-memory database attached through SQLite's `memdb` VFS rather than in the TEMP
/// schema. A TEMP table with `temp_store = MEMORY` keeps every page in its page cache, and SQLite scans that whole
/// cache at the end of any transaction in which a B-tree page split swapped page numbers (`balance_nonroot`
/// renumbers through the pending-byte page, which pushes the cache's largest key past its end): with 300,000 open
/// alerts that scan was 16 % of the writer thread's time, growing with every open alert. A `memdb` database is
/// an ordinary file to the pager, so its cache is purgeable and stays near `cache_size` (about twice it at the end
/// of a batch), and the scan with it: about 5 % of the writer whatever the number of open alerts. Pages outside
/// the cache are copied from memory. Its rollback journal is kept in memory, so a rolled-back batch or savepoint takes
/// its entries back as before. The TEMP triggers find the table by its plain name, as TEMP triggers may.
/// `temp_store = MEMORY` keeps the TEMP schema (the triggers) and the writer's sorts off disk.
const INSTALL: &str = "
PRAGMA temp_store = MEMORY;
ATTACH DATABASE 'file:svcgate-open-alerts?vfs=memdb' AS open_alert_set;
PRAGMA open_alert_set.journal_mode = MEMORY;
CREATE TABLE IF NOT EXISTS open_alert_set.open_alerts (
    project_id INTEGER NOT NULL,
    fingerprint TEXT NOT NULL,
    alert_id INTEGER NOT NULL,
    PRIMARY KEY (project_id, fingerprint)
) WITHOUT ROWID;
CREATE TEMP TRIGGER IF NOT EXISTS open_alerts_on_insert AFTER INSERT ON main.alerts
    WHEN NEW.status != 'resolved' AND NEW.fingerprint IS NOT NULL
BEGIN
    INSERT INTO open_alerts (project_id, fingerprint, alert_id) VALUES (NEW.project_id, NEW.fingerprint, NEW.id);
END;
CREATE TEMP TRIGGER IF NOT EXISTS open_alerts_on_update AFTER UPDATE OF status, project_id, fingerprint ON main.alerts
BEGIN
    DELETE FROM open_alerts
        WHERE project_id = OLD.project_id AND fingerprint = OLD.fingerprint AND alert_id = OLD.id;
    INSERT INTO open_alerts (project_id, fingerprint, alert_id)
        SELECT NEW.project_id, NEW.fingerprint, NEW.id
        WHERE NEW.status != 'resolved' AND NEW.fingerprint IS NOT NULL;
END;
CREATE TEMP TRIGGER IF NOT EXISTS open_alerts_on_delete AFTER DELETE ON main.alerts
BEGIN
    DELETE FROM open_alerts
        WHERE project_id = OLD.project_id AND fingerprint = OLD.fingerprint AND alert_id = OLD.id;
END;
";

/// Fills the table from the file. Should another program have stored two open alerts of one fingerprint, the
/// older one is the one grouped into. The rows go in in key order (sorted in memory), so the table is built by
/// appending rather than by inserting at random places, which would copy pages in and out of its bounded cache.
const FILL: &str = "
DELETE FROM open_alert_set.open_alerts;
INSERT OR IGNORE INTO open_alert_set.open_alerts (project_id, fingerprint, alert_id)
    SELECT project_id, fingerprint, id FROM main.alerts INDEXED BY alerts_open
    WHERE status != 'resolved' AND fingerprint IS NOT NULL ORDER BY project_id, fingerprint, id;
";

/// The writer connection's open-alert table, and the file version it was last filled from.
#[derive(Debug)]
pub struct OpenAlerts {
    /// `PRAGMA data_version` when the table was last filled; `None` until the first batch fills it.
    data_version: Option<i64>,
}

impl OpenAlerts {
    /// Creates the (empty) table and its triggers on `connection` (the writer). The writer thread fills it
    /// before its first batch, so a store with many open alerts does not delay start-up.
    pub fn install(connection: &Connection) -> rusqlite::Result<Self> {
        connection.execute_batch(INSTALL)?;
        Ok(OpenAlerts { data_version: None })
    }

    /// Fills the table on the first call, and again whenever another connection has committed since; call
    /// inside the batch's transaction, before its jobs. Answers whether it filled the table.
    pub fn refresh_if_changed(&mut self, connection: &Connection) -> rusqlite::Result<bool> {
        let now = data_version(connection)?;
        if self.data_version != Some(now) {
            let started = std::time::Instant::now();
            connection.execute_batch(FILL)?;
            let open = open_count(connection)?;
            tracing::info!(
                open_alerts = open,
                elapsed_ms = started.elapsed().as_millis() as u64,
                "open alerts loaded"
            );
            self.data_version = Some(now);
            return Ok(true);
        }
        Ok(false)
    }
}

impl OpenAlerts {
    /// Marks the table stale, so that the next batch fills it again. For a batch whose transaction failed: a
    /// fill inside it was rolled back with it, though its file version was already noted.
    pub fn forget(&mut self) {
        self.data_version = None;
    }
}

/// How many open alerts the table holds.
fn open_count(connection: &Connection) -> rusqlite::Result<u64> {
    connection.query_row("SELECT COUNT(*) FROM open_alert_set.open_alerts", [], |row| {
        row.get(0)
    })
}

fn data_version(connection: &Connection) -> rusqlite::Result<i64> {
    connection
        .prepare_cached("PRAGMA data_version")?
        .query_row([], |row| row.get(0))
}

/// The open alert of `fingerprint` in a project, as the lookup the lifecycle uses.
pub const OPEN_ALERT_ID: &str =
    "(SELECT alert_id FROM open_alert_set.open_alerts WHERE project_id = ?1 AND fingerprint = ?2)";

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use rusqlite::params;

    use crate::store::sqlite::queued;
    use crate::store::{AlertEvent, SqliteStore, Store, StoreError};

    const NOW: &str = "2026-11-22T10:00:00Z";

    /// An open alert of project 1 written without the lifecycle: `(iid, fingerprint, now)`.
    const INSERT_OPEN: &str =
        "INSERT INTO alerts (project_id, iid, fingerprint, status, title, severity, hosts,
            started_at, events, last_event_at, payload, created_at, updated_at)
        VALUES (1, ?1, ?2, 'triggered', 't', 'critical', '[]', ?3, 1, ?3, '{}', ?3, ?3)";

    fn firing(fingerprint: &str) -> AlertEvent {
        AlertEvent {
            project_id: 1,
            integration_id: 1,
            fingerprint: Some(fingerprint.to_owned()),
            ended_at: None,
            title: "Disk full".to_owned(),
            description: None,
            severity: "critical".to_owned(),
            service: None,
            monitoring_tool: None,
            hosts_json: "[]".to_owned(),
            environment: None,
            started_at: NOW.to_owned(),
            payload_json: "{}".to_owned(),
            now: NOW.to_owned(),
        }
    }

    fn resolving(fingerprint: &str) -> AlertEvent {
        AlertEvent {
            ended_at: Some(NOW.to_owned()),
            ..firing(fingerprint)
        }
    }

    /// Stores one more open alert of `fingerprint` behind the lifecycle's back, as iid `iid`.
    async fn insert_open(
        store: &SqliteStore,
        fingerprint: &'static str,
        iid: u64,
    ) -> Result<usize, StoreError> {
        store
            .write(move |connection| connection.execute(INSERT_OPEN, params![iid, fingerprint, NOW]))
            .await
    }

    async fn outcome(store: &SqliteStore, event: AlertEvent) -> (&'static str, u64, u64) {
        let outcome = store.alert_event(event).await.unwrap();
        let alert = outcome.alert.unwrap();
        (outcome.outcome, alert.iid, alert.events)
    }

    #[tokio::test]
    async fn a_second_open_alert_of_a_fingerprint_is_refused_until_the_first_is_resolved() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path()).unwrap();
        assert_eq!(outcome(&store, firing("f")).await, ("created", 1, 1));
        assert_eq!(outcome(&store, firing("f")).await, ("grouped", 1, 2));
        assert!(insert_open(&store, "f", 2).await.unwrap_err().is_conflict());
        insert_open(&store, "other", 2).await.unwrap();
        assert_eq!(outcome(&store, resolving("f")).await, ("resolved", 1, 2));
        assert_eq!(outcome(&store, firing("f")).await, ("created", 3, 1));
    }

    #[tokio::test]
    async fn a_failing_neighbour_in_the_batch_leaves_the_open_alerts_as_they_were() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path()).unwrap();
        assert_eq!(outcome(&store, firing("f")).await, ("created", 1, 1));
        // Hold the writer so that the next three jobs share a batch; the failing one rolls the batch back once.
        let release = store.hold_writer().await;
        let mut grouped = std::pin::pin!(outcome(&store, firing("f")));
        queued(grouped.as_mut()).await;
        let mut bad = std::pin::pin!(
            store.write(|connection| connection.execute("INSERT INTO no_such_table VALUES (1)", []))
        );
        queued(bad.as_mut()).await;
        let mut created = std::pin::pin!(outcome(&store, firing("g")));
        queued(created.as_mut()).await;
        release.send(()).unwrap();
        let (grouped, bad, created) = tokio::join!(grouped, bad, created);
        assert!(bad.is_err());
        assert_eq!((grouped, created), (("grouped", 1, 2), ("created", 2, 1)));
        assert_eq!(outcome(&store, firing("g")).await, ("grouped", 2, 2));
        assert_eq!(outcome(&store, firing("f")).await, ("grouped", 1, 3));
    }

    #[tokio::test]
    async fn reopening_a_resolved_alert_collides_with_a_newer_open_one() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path()).unwrap();
        outcome(&store, firing("f")).await;
        outcome(&store, resolving("f")).await;
        outcome(&store, firing("f")).await;
        let reopened = store
            .alert_status(1, 1, "triggered".to_owned(), NOW.to_owned())
            .await;
        assert!(reopened.unwrap_err().is_conflict());
        assert_eq!(store.alert(1, 1).await.unwrap().unwrap().status, "resolved");
        // Acknowledging keeps the alert open and its fingerprint taken.
        store
            .alert_status(1, 2, "acknowledged".to_owned(), NOW.to_owned())
            .await
            .unwrap();
        assert_eq!(outcome(&store, firing("f")).await, ("grouped", 2, 2));
    }

    #[tokio::test]
    async fn a_rolled_back_job_leaves_no_open_alert_behind() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path()).unwrap();
        let failed = store
            .write(|connection| {
                connection.execute(INSERT_OPEN, params![1, "f", NOW])?;
                connection.execute("INSERT INTO no_such_table VALUES (1)", [])
            })
            .await;
        assert!(failed.is_err());
        assert_eq!(outcome(&store, firing("f")).await, ("created", 1, 1));
    }

    #[tokio::test]
    async fn each_answer_of_the_lifecycle_shows_the_alert_as_stored() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path()).unwrap();
        outcome(&store, firing("older")).await;
        for (event, expected) in [
            (firing("f"), "created"),
            (firing("f"), "grouped"),
            (resolving("f"), "resolved"),
        ] {
            let answer = store.alert_event(event).await.unwrap();
            assert_eq!(answer.outcome, expected);
            let touched = answer.alert.unwrap();
            let stored = store.alert(1, touched.iid).await.unwrap().unwrap();
            assert_eq!(
                (
                    touched.id,
                    touched.project_id,
                    touched.status,
                    touched.title,
                    touched.events,
                    touched.incident_iid,
                ),
                (
                    stored.id,
                    stored.project_id,
                    stored.status,
                    stored.title,
                    stored.events,
                    stored.incident_iid,
                ),
                "{expected}"
            );
        }
    }

    #[tokio::test]
    async fn a_new_alert_refused_by_the_trigger_leaves_no_row_behind() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path()).unwrap();
        // An open-alert entry naming no alert: the lifecycle finds no open alert of "f", writes a new row, and
        // the trigger's insert then fails. `INSERT OR FAIL` leaves the row written so far; the job's failure must
        // undo it with the rest of the batch.
        let refused = store
            .write(|connection| {
                connection.execute(
                    "INSERT INTO open_alert_set.open_alerts (project_id, fingerprint, alert_id) VALUES (1, 'f', 999)",
                    [],
                )?;
                crate::store::sqlite::alerts::process_event(connection, &firing("f"))
            })
            .await;
        assert!(refused.unwrap_err().is_conflict());
        assert_eq!(outcome(&store, firing("f")).await, ("created", 1, 1));
        let rows = store
            .write(|connection| {
                connection.query_row("SELECT COUNT(*) FROM alerts", [], |row| row.get::<_, u64>(0))
            })
            .await
            .unwrap();
        assert_eq!(rows, 1);
    }

    #[tokio::test]
    async fn open_alerts_are_found_again_after_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = SqliteStore::open(dir.path()).unwrap();
            outcome(&store, firing("kept")).await;
            outcome(&store, firing("closed")).await;
            outcome(&store, resolving("closed")).await;
        }
        let store = SqliteStore::open(dir.path()).unwrap();
        assert_eq!(outcome(&store, firing("kept")).await, ("grouped", 1, 2));
        assert_eq!(outcome(&store, firing("closed")).await, ("created", 3, 1));
    }

    #[tokio::test]
    async fn of_two_open_alerts_another_program_stored_for_one_fingerprint_the_older_is_grouped_into() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path()).unwrap();
        outcome(&store, firing("first")).await;
        let shell = rusqlite::Connection::open(store.path()).unwrap();
        shell.execute(INSERT_OPEN, params![2, "twice", NOW]).unwrap();
        shell.execute(INSERT_OPEN, params![3, "twice", NOW]).unwrap();
        assert_eq!(outcome(&store, firing("twice")).await, ("grouped", 2, 2));
    }

    #[tokio::test]
    async fn alerts_written_by_another_program_are_grouped_into() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path()).unwrap();
        outcome(&store, firing("first")).await;
        let shell = rusqlite::Connection::open(store.path()).unwrap();
        shell.execute(INSERT_OPEN, params![2, "from-shell", NOW]).unwrap();
        shell
            .execute("UPDATE alerts SET status = 'resolved' WHERE iid = 1", [])
            .unwrap();
        assert_eq!(outcome(&store, firing("from-shell")).await, ("grouped", 2, 2));
        assert_eq!(outcome(&store, firing("first")).await, ("created", 3, 1));
    }
}

#[cfg(test)]
mod refill_tests {
    #![allow(clippy::unwrap_used)]

    use rusqlite::Connection;

    use super::OpenAlerts;

    fn open_count(connection: &Connection) -> u64 {
        super::open_count(connection).unwrap()
    }

    #[test]
    fn a_fill_rolled_back_with_its_batch_is_done_again_once_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let mut connection = Connection::open(dir.path().join("svcgate.db")).unwrap();
        crate::store::schema::apply_sqlite(&mut connection).unwrap();
        connection
            .execute(
                "INSERT INTO alerts (project_id, iid, fingerprint, status, title, severity, hosts, started_at,
                    events, last_event_at, payload, created_at, updated_at)
                 VALUES (1, 1, 'f', 'triggered', 't', 'critical', '[]', 'now', 1, 'now', '{}', 'now', 'now')",
                [],
            )
            .unwrap();
        let mut open_alerts = OpenAlerts::install(&connection).unwrap();
        let batch = connection.transaction().unwrap();
        assert!(
            open_alerts.refresh_if_changed(&batch).unwrap(),
            "the first call fills"
        );
        assert!(
            !open_alerts.refresh_if_changed(&batch).unwrap(),
            "nothing changed since"
        );
        assert_eq!(open_count(&batch), 1);
        drop(batch); // the batch's commit failed: everything in it is rolled back, the fill included
        assert_eq!(open_count(&connection), 0);
        open_alerts.forget();
        open_alerts.refresh_if_changed(&connection).unwrap();
        assert_eq!(open_count(&connection), 1);
    }
}
