//! The counts the metrics read from the store at each scrape: open alerts by severity and the incident calls
//! waiting. They are counted in the database rather than kept by this process, so that every replica sharing a
//! PostgreSQL database reports the same whole count, and a change made by another replica (or the `sqlite3`
//! shell) shows at the next scrape.
//!
//! Both statements are cheap however many resolved alerts the store holds: the open alerts are found through
//! `alerts_by_project_status`, one project at a time (the projects themselves found by a loose index scan, a
//! lookup per project rather than a read of every alert), and the waiting calls through the partial index
//! `outbox_due`.

use super::postgres::PostgresStore;
use super::sqlite::SqliteStore;
use super::{StoreError, StoreFuture};

/// Open alerts (triggered or acknowledged) per severity. One text for both databases.
const OPEN_BY_SEVERITY: &str = "WITH RECURSIVE projects (project_id) AS (
        SELECT MIN(project_id) FROM alerts
        UNION ALL
        SELECT (SELECT MIN(project_id) FROM alerts WHERE project_id > projects.project_id) FROM projects
        WHERE projects.project_id IS NOT NULL
    )
    SELECT severity, COUNT(*) FROM alerts
    WHERE project_id IN (SELECT project_id FROM projects) AND status IN ('triggered', 'acknowledged')
    GROUP BY severity";

/// Incident calls not yet accepted by the backend.
const OUTBOX_WAITING: &str = "SELECT COUNT(*) FROM outbox WHERE done_at IS NULL";

/// What the metrics count in the store when scraped.
pub trait StoreCounts {
    /// Open alerts (triggered or acknowledged) per stored severity.
    fn open_alert_counts(&self) -> StoreFuture<'_, Vec<(String, u64)>>;
    /// Incident calls waiting in the outbox (due or waiting for a retry).
    fn outbox_backlog(&self) -> StoreFuture<'_, u64>;
}

/// A count as the databases answer it (a signed 64-bit integer), never negative.
fn count(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

impl StoreCounts for SqliteStore {
    fn open_alert_counts(&self) -> StoreFuture<'_, Vec<(String, u64)>> {
        Box::pin(self.read(|connection| {
            let mut statement = connection.prepare_cached(OPEN_BY_SEVERITY)?;
            let rows = statement.query_map([], |row| Ok((row.get(0)?, count(row.get(1)?))))?;
            rows.collect()
        }))
    }

    fn outbox_backlog(&self) -> StoreFuture<'_, u64> {
        Box::pin(
            self.read(|connection| connection.query_row(OUTBOX_WAITING, [], |row| Ok(count(row.get(0)?)))),
        )
    }
}

impl StoreCounts for PostgresStore {
    fn open_alert_counts(&self) -> StoreFuture<'_, Vec<(String, u64)>> {
        self.within_timeout(async move {
            let client = self.pool_client().await?;
            let rows = client.query(OPEN_BY_SEVERITY, &[]).await?;
            rows.iter()
                .map(|row| Ok((row.try_get(0)?, count(row.try_get(1)?))))
                .collect::<Result<_, tokio_postgres::Error>>()
                .map_err(StoreError::from)
        })
    }

    fn outbox_backlog(&self) -> StoreFuture<'_, u64> {
        self.within_timeout(async move {
            let client = self.pool_client().await?;
            let row = client.query_one(OUTBOX_WAITING, &[]).await?;
            Ok(count(row.try_get(0)?))
        })
    }
}
