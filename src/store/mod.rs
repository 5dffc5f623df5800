//! Durable state: the [`Store`] trait, and its two implementations, embedded SQLite and shared PostgreSQL.
//!
//! What this folder owns, by file:
//!
//! - `mod.rs`: the [`Store`] trait (the contract both stores keep) and [`StoreError`];
//! - `records.rs`: the records both stores take and answer ([`IntegrationRecord`], [`AlertRecord`], …);
//! - `rows.rs`: what both stores share about rows: column lists, one mapper per record over either driver's row,
//!   the statements written once for both;
//! - `sqlite/`: the SQLite store; `postgres/`: the PostgreSQL store;
//! - `schema/`: the schema, one file per step holding its SQLite and PostgreSQL migrations side by side;
//! - [`commits`] (what the writers report of each commit to the metrics), `counts.rs` ([`StoreCounts`], what the
//!   metrics count in the store when scraped), [`copy`] (`svcgate store copy`, SQLite into PostgreSQL).
//!
//! It may use the helpers (time, secrets) and [`crate::store::lifecycle`] (the alert lifecycle's decision); nothing of the
//! HTTP side, the backend or the pages. Within it, `records.rs` uses nothing, `rows.rs` only the records, and
//! each store the records, the rows and the schema; neither store uses the other.
//!
//! Everything the gateway must remember across restarts goes through [`Store`], so that a PostgreSQL
//! implementation can take the SQLite one's place for several replicas sharing state. Failures are a
//! [`StoreError`], whose variant says what happened (a conflict, a missing row, a store that cannot be used), so
//! callers match on it and never on its text.
//!
//! # At most one open alert per project and fingerprint
//!
//! This is the alert lifecycle's central rule, and it is held in three places, each backing the next:
//!
//! 1. **The decision.** [`crate::store::lifecycle::decide`] groups into or resolves the open alert of the event's
//!    fingerprint and only creates one when there is none.
//! 2. **A single writer.** Every write goes through one writer thread ([`SqliteStore::write`]), which runs the
//!    lookup and the write of one event in the same transaction (`process_event` in `sqlite/alerts.rs`), so two
//!    events of one fingerprint never both see "no open alert".
//! 3. **A constraint.** The writer connection keeps the open alerts in a table keyed by `(project_id,
//!    fingerprint)`, kept in step with `alerts` by triggers (`open_alerts.rs`): a second open alert, written by
//!    any code path on that connection (reopening a resolved alert included), is refused as
//!    [`StoreError::Conflict`]. It is not a persistent unique index on `alerts` on purpose: such an index capped
//!    durable intake at about 17k alerts/s and was dropped by SQLite's migration 6 (see `schema/m03_open_alert_table.rs`). Rows written by
//!    another program (the `sqlite3` shell) bypass it; should they hold two open alerts of one fingerprint, the
//!    older is the one grouped into.
//!
//! [`lifecycle`] is the decision both stores carry out for each incoming alert. May use: [`crate::util`] only.

pub mod commits;
pub mod copy;
mod counts;
pub mod lifecycle;
pub mod postgres;
pub mod read_usage;
mod records;
pub mod rows;
mod schema;
mod sqlite;

use std::future::Future;
use std::pin::Pin;

pub use commits::{CommitMetrics, CommitObserver};
pub use counts::StoreCounts;
pub use postgres::connect::{DatabaseLimits, SslMode};
pub use postgres::{PostgresOptions, PostgresStore};
pub use records::{
    AlertEvent, AlertPage, AlertQuery, AlertRecord, AlertSettings, EventOutcome, IdKind, IdRecord,
    IntegrationName, IntegrationRecord, OAuthStateRecord, OutboxFailure, OutboxItem, OutboxState,
    PageSessionRecord, TouchedAlert, UsageDelta, UsageRow, OTHERS,
};
pub use sqlite::SqliteStore;

/// Which store to open and what readiness asks of it.
#[derive(Debug, Clone)]
pub struct StoreSettings {
    /// The SQLite store's directory (`data_dir`); `None` means a temporary one (only with `dev` or `database`).
    pub data_dir: Option<std::path::PathBuf>,
    /// PostgreSQL, when replicas share state there instead of the embedded store (`database_url`, …).
    pub database: Option<PostgresOptions>,
    /// Free space readiness asks of the SQLite data directory's file system (`ready_min_free_bytes`).
    pub min_free_bytes: u64,
}

/// A boxed future returned by the store's methods.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// Why the store could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A constraint of the schema refused the write: a second open alert of one fingerprint, a second integration
    /// of a one-per-project type, a reused endpoint identifier. The caller's request conflicts with what is stored.
    #[error("refused by a constraint: {0}")]
    Conflict(#[source] DatabaseError),
    /// A row the operation works on is gone (it was there when the operation began).
    #[error("the row is gone")]
    NotFound,
    /// The store cannot be used now, and nothing of the operation was written: the writer has stopped (shutting
    /// down), the database could not be reached or did not answer before the commit was sent, or a transaction
    /// could not begin or commit (the text is the database's, for the log).
    #[error("store unavailable: {0}")]
    Unavailable(String),
    /// The commit was sent and its answer never came (the connection failed, or the operation timed out, after
    /// it): what the operation wrote may or may not be stored.
    #[error("store unavailable after the commit was sent, so the write may or may not be stored: {0}")]
    Undecided(String),
    /// The database failed the operation otherwise.
    #[error("database: {0}")]
    Database(#[source] DatabaseError),
    /// The store was set up with another secret key: integration keys sealed with it cannot be opened.
    #[error(
        "the secret key (secret_key, else secret.key in the data directory) does not match the key this store was \
         set up with (fingerprint {stored}, this key's {given}): what was sealed with it cannot be opened; start with \
         the store's key (on PostgreSQL, give every replica the same secret_key)"
    )]
    KeyMismatch {
        /// The fingerprint stored in the database.
        stored: String,
        /// The fingerprint of the configured key.
        given: String,
    },
    /// The data directory could not be used.
    #[error("data directory {path}: {source}")]
    DataDir {
        /// The directory.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// How long a process owns an outbox call it claimed unless `outbox_lease` says otherwise; after that, another
/// replica (or this one, restarted) may take it over. Three quarters of it hold an incident call's search and
/// create at the default `backend_timeout` (60 s) each.
pub const OUTBOX_LEASE: std::time::Duration = std::time::Duration::from_secs(180);

/// Compares the key fingerprint a store recorded with the one of the key given (both stores' `check_key`).
fn same_key(stored: String, given: &str) -> Result<(), StoreError> {
    if stored == given {
        Ok(())
    } else {
        Err(StoreError::KeyMismatch {
            stored,
            given: given.to_owned(),
        })
    }
}

/// When a lease of `lease` taken at `now` (the store's time text) ends.
fn outbox_lease_end(now: &str, lease: std::time::Duration) -> Result<String, StoreError> {
    crate::util::time_format::parse_time(now)
        .map(|now| crate::util::time_format::format_time(now + lease))
        .ok_or_else(|| StoreError::Unavailable(format!("outbox: unreadable time {now}")))
}

/// A database driver's error, whichever database it came from.
pub type DatabaseError = Box<dyn std::error::Error + Send + Sync>;

impl From<rusqlite::Error> for StoreError {
    /// Sorts a failed statement by what it means for the caller.
    fn from(error: rusqlite::Error) -> Self {
        match &error {
            rusqlite::Error::SqliteFailure(failure, _)
                if failure.code == rusqlite::ErrorCode::ConstraintViolation =>
            {
                StoreError::Conflict(Box::new(error))
            }
            rusqlite::Error::QueryReturnedNoRows => StoreError::NotFound,
            _ => StoreError::Database(Box::new(error)),
        }
    }
}

impl StoreError {
    /// Whether a constraint of the schema refused the write ([`StoreError::Conflict`]).
    pub fn is_conflict(&self) -> bool {
        matches!(self, StoreError::Conflict(_))
    }
}

/// The gateway's durable state. The counts its metrics read at scrape time are [`StoreCounts`].
pub trait Store: StoreCounts + Send + Sync {
    /// Checks that the store can take an ordinary alert now, asking afresh (for readiness): SQLite's writer commits
    /// and its file system has room; PostgreSQL answers on a connection that can write.
    fn ping(&self) -> StoreFuture<'_, ()>;
    /// Reports each commit's size and duration into `metrics` from now on.
    fn observe_commits(&self, metrics: CommitMetrics);
    /// Looks up a global id.
    fn id_lookup(&self, kind: IdKind, id: u64) -> StoreFuture<'_, Option<IdRecord>>;
    /// Records id ↔ iid pairs (new or changed ones replace old ones).
    fn id_record(&self, records: Vec<IdRecord>) -> StoreFuture<'_, ()>;
    /// Keeps a password-login session: the hash of the token svcgate issued, and the backend token it stands for
    /// (sealed by the caller).
    fn session_put(
        &self,
        token_hash: String,
        access_token: String,
        user_id: Option<u64>,
    ) -> StoreFuture<'_, ()>;
    /// The backend token of a session, by the hash of the issued token.
    fn session_get(&self, token_hash: String) -> StoreFuture<'_, Option<String>>;
    /// Keeps a signed-in page session (replacing one with the same id hash).
    fn page_session_put(&self, session: PageSessionRecord) -> StoreFuture<'_, ()>;
    /// A page session by the hash of its cookie, unless it has expired by `now`.
    fn page_session_get(&self, id_hash: String, now: String) -> StoreFuture<'_, Option<PageSessionRecord>>;
    /// Replaces a session's tokens after a refresh (and ends the claim on it), if `old_sealed_refresh_token` is
    /// still its refresh token;
    /// answers whether it was (false: another refresh won, or the session is gone).
    fn page_session_refreshed(
        &self,
        id_hash: String,
        old_sealed_refresh_token: String,
        sealed_token: String,
        sealed_refresh_token: String,
        token_expires_at: String,
    ) -> StoreFuture<'_, bool>;
    /// Claims the refresh of a session's OAuth token until `until`, if `sealed_refresh_token` is still its refresh
    /// token and no other claim holds at `now`; answers whether this caller now holds it.
    fn page_session_claim_refresh(
        &self,
        id_hash: String,
        sealed_refresh_token: String,
        now: String,
        until: String,
    ) -> StoreFuture<'_, bool>;
    /// Gives up a claim on a session's refresh (the refresh could not be made).
    fn page_session_release_refresh(
        &self,
        id_hash: String,
        sealed_refresh_token: String,
    ) -> StoreFuture<'_, ()>;
    /// Keeps a pending OAuth sign-in, first removing those expired by `now`, unless `limit` unexpired ones are
    /// kept already; answers whether it was kept.
    fn oauth_state_put(&self, record: OAuthStateRecord, now: String, limit: u64) -> StoreFuture<'_, bool>;
    /// Takes a pending OAuth sign-in by the hash of its state: answered once, then gone; `None` when unknown,
    /// used or expired by `now`.
    fn oauth_state_take(&self, state_hash: String, now: String) -> StoreFuture<'_, Option<OAuthStateRecord>>;
    /// Ends a page session whose refresh the provider refused, if `sealed_refresh_token` is still its refresh
    /// token; answers whether it did (false: another refresh replaced the token meanwhile, or the session is gone).
    fn page_session_end_refused(
        &self,
        id_hash: String,
        sealed_refresh_token: String,
    ) -> StoreFuture<'_, bool>;
    /// Ends a page session.
    fn page_session_delete(&self, id_hash: String) -> StoreFuture<'_, ()>;
    /// Removes the page sessions expired by `now`, answering how many.
    fn page_sessions_sweep(&self, now: String) -> StoreFuture<'_, u64>;
    /// Every alert integration not deleted.
    fn integrations(&self) -> StoreFuture<'_, Vec<IntegrationRecord>>;
    /// The name of integration `id`, deleted or not (`None`: no such id was ever given).
    fn integration_named(&self, id: u64) -> StoreFuture<'_, Option<IntegrationName>>;
    /// Adds an integration; a second one of a one-per-project type is a conflict.
    fn integration_insert(&self, record: IntegrationRecord) -> StoreFuture<'_, IntegrationRecord>;
    /// Replaces an integration's mutable fields.
    fn integration_update(&self, record: IntegrationRecord) -> StoreFuture<'_, ()>;
    /// Removes an integration.
    fn integration_delete(&self, id: u64) -> StoreFuture<'_, ()>;
    /// Sets (or clears) only an integration's pending subscription confirmation, if it is not deleted: nothing else
    /// of its row, which a person may be changing at the same time.
    fn integration_confirmation(&self, id: u64, address: Option<String>) -> StoreFuture<'_, ()>;
    /// Applies one incoming alert durably (the lifecycle), answering what it did.
    fn alert_event(&self, event: AlertEvent) -> StoreFuture<'_, EventOutcome>;
    /// One alert.
    fn alert(&self, project_id: u64, iid: u64) -> StoreFuture<'_, Option<AlertRecord>>;
    /// A page of alerts.
    fn alerts(&self, query: AlertQuery) -> StoreFuture<'_, AlertPage>;
    /// Open alerts that name an environment.
    fn alerts_by_environment(&self, project_id: u64) -> StoreFuture<'_, Vec<AlertRecord>>;
    /// Changes an alert's status.
    fn alert_status(
        &self,
        project_id: u64,
        iid: u64,
        status: String,
        now: String,
    ) -> StoreFuture<'_, Option<AlertRecord>>;
    /// A project's incident settings.
    fn alert_settings(&self, project_id: u64) -> StoreFuture<'_, AlertSettings>;
    /// Stores a project's incident settings.
    fn alert_settings_put(&self, project_id: u64, settings: AlertSettings) -> StoreFuture<'_, ()>;
    /// Claims the incident calls due at `now` for `lease` ([`OUTBOX_LEASE`] by default): a claimed call is not due
    /// again until its lease ends or it is retried, so that it is made once however many replicas run.
    fn outbox_due(
        &self,
        now: String,
        lease: std::time::Duration,
        limit: u32,
    ) -> StoreFuture<'_, Vec<OutboxItem>>;
    /// An incident call under `claim` ([`OutboxItem::claim`]) succeeded. Answers `false`, changing nothing, when
    /// the call is no longer under that claim.
    fn outbox_done(
        &self,
        id: u64,
        claim: String,
        alert_id: u64,
        incident_iid: Option<u64>,
        now: String,
    ) -> StoreFuture<'_, bool>;
    /// Removes at most `limit` of the incident calls that finished before `done_before` (pending ones stay);
    /// answers how many.
    fn outbox_sweep(&self, done_before: String, limit: u32) -> StoreFuture<'_, u64>;
    /// An incident call under `claim` failed; try again at `next_attempt_at`. Answers `false`, changing nothing,
    /// when the call is no longer under that claim.
    fn outbox_retry(
        &self,
        id: u64,
        claim: String,
        next_attempt_at: String,
        error: String,
    ) -> StoreFuture<'_, bool>;
    /// The incident calls of `integration_id`'s alerts that failed and are still retried, newest first, at most
    /// `limit`.
    fn outbox_failures(&self, integration_id: u64, limit: u32) -> StoreFuture<'_, Vec<OutboxFailure>>;
    /// The incident calls of an alert.
    fn outbox_of(&self, alert_id: u64) -> StoreFuture<'_, Vec<OutboxState>>;
    /// Adds a batch of V3 usage counts, keeping at most `max_clients` clients a route.
    fn usage_add(&self, deltas: Vec<UsageDelta>, max_clients: usize) -> StoreFuture<'_, ()>;
    /// Every V3 usage row.
    fn usage(&self) -> StoreFuture<'_, Vec<UsageRow>>;
    /// For a store shared by replicas: a signal that changes whenever another process may have changed the
    /// integrations (a change was committed, or the store reconnected and may have missed some), so that each
    /// replica reloads them. `None` for a store only this process writes.
    fn integration_changes(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        None
    }
    /// Records that `replica` is alive and answers how many replicas are (itself included): 1 for a store only
    /// this process uses.
    fn replica_heartbeat(&self, replica: String) -> StoreFuture<'_, u64> {
        drop(replica);
        Box::pin(async { Ok(1) })
    }
}

/// How often a replica on a shared store says it is alive.
pub const HEARTBEAT_INTERVAL: std::time::Duration = std::time::Duration::from_secs(5);
/// A replica not heard from for this long is no longer counted as live.
pub const REPLICA_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(15);
