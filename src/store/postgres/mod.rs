//! The shared store: PostgreSQL, for several svcgate replicas behind one load balancer.
//!
//! This folder owns the PostgreSQL side of [`Store`](super::Store): here the store itself (its pool, how long an
//! operation may take, start-up), `connect.rs` the connection's URL, TLS and time bounds, `writer.rs` the batched
//! alert writer, `queries.rs` every other operation, and `listen.rs` the integration changes between replicas.
//! It uses the store's shared records and statements (`super::rows`), the schema, and [`crate::store::lifecycle`].
//!
//! Connections come from a `deadpool-postgres` pool (`database_pool_size`), over TLS through rustls unless the
//! URL says `sslmode=disable`. Reads and single writes take a pooled connection each. Incoming alerts go through
//! writer tasks (`database_alert_writers`, each keeping one connection of the pool and running one transaction at
//! a time) that commit them in batches, so
//! that one commit (and one WAL flush, `synchronous_commit` on) serves many senders; a sender is answered only
//! after its batch committed. An event goes to the writer of its project and fingerprint, so one fingerprint's
//! events are written in the order they came, as with one writer, while different fingerprints' batches commit
//! side by side and share WAL flushes. A batch is a few statements whatever its size: its events are written by
//! one multi-row `INSERT … ON CONFLICT` per round of distinct fingerprints (see `plan` in `writer.rs`).
//!
//! # Correct with many replicas
//!
//! - **One open alert per project and fingerprint** is PostgreSQL's unique index `alerts_one_open`: an event that
//!   does not resolve is one `INSERT … ON CONFLICT (project_id, fingerprint) … DO UPDATE` that creates the alert
//!   or counts one more event of the open one, never a read and then a write. The two branches are
//!   [`lifecycle::decide`]'s `Create` and `Group` rows; a resolving event is one `UPDATE … RETURNING` (its
//!   `Resolve` row) or finds nothing (`Ignore`).
//! - **Per-project iids** come from `alert_iids`: a batch creates its new alerts with provisional negative iids,
//!   then takes as many numbers from each project's counter as it created there and gives them out, just before it
//!   commits. The counter row stays locked from then to the commit, so iids are given without gaps (a rolled-back
//!   batch gives its numbers back) or duplicates, and the lock is held only for that last step: several replicas'
//!   batches of one project write their alerts at the same time.
//! - **No deadlocks between replicas**: a batch writes alert rows in one order, by project then fingerprint, and
//!   takes counters last, in project order; a batch holding a counter waits for no alert row. A repeat within the
//!   batch comes back, in a later round, to a row the batch already holds; an event that fires after an end of its
//!   fingerprint in the same batch waits for the next batch, since its new row would be inserted out of that order.
//!   Should PostgreSQL still find a deadlock, the batch is rolled back and each of its events tried again alone.
//! - **The outbox** is claimed with `FOR UPDATE SKIP LOCKED` and a lease ([`super::OUTBOX_LEASE`]): a claimed call is
//!   not due again until its lease ends, so one incident is created once however many replicas run, and a
//!   replica that dies mid-call is taken over when its lease runs out.

pub mod connect;
mod listen;
mod queries;
mod writer;

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio::sync::{mpsc, oneshot};
use tokio_postgres::error::SqlState;

use self::connect::DatabaseLimits;
use self::listen::listen_for_changes;
use self::writer::{write_events, WriterConnection};
use super::rows;
use super::{AlertEvent, EventOutcome, StoreError, StoreFuture};

/// The most alert events one commit takes.
const MAX_BATCH: usize = 512;

/// How to reach the database.
#[derive(Debug, Clone)]
pub struct PostgresOptions {
    /// `postgres://user:password@host:port/database?sslmode=…`.
    pub url: String,
    /// Connections in the pool.
    pub pool_size: usize,
    /// PEM file of the CAs to trust for the database's certificate (else the system's).
    pub ca_bundle: Option<PathBuf>,
    /// Transactions of incoming alerts in flight at once (one writer task each).
    pub alert_writers: usize,
    /// How long svcgate waits on the database.
    pub limits: DatabaseLimits,
}

/// The PostgreSQL implementation of [`Store`].
pub struct PostgresStore {
    pool: Pool,
    /// Longest one operation may take (`database_timeout`), the wait for a connection included.
    operation_timeout: Duration,
    /// When an operation was last abandoned with a connection in hand (see [`Abandoned`]).
    abandoned: Arc<Abandoned>,
    /// One channel per writer task; an event goes to the writer of its fingerprint (see [`PostgresStore::writer`]).
    writers: Vec<mpsc::Sender<EventJob>>,
    /// Spreads events without a fingerprint over the writers.
    next_writer: std::sync::atomic::AtomicUsize,
    /// Counts the signals that integrations may have changed (see [`Store::integration_changes`]).
    integration_changes: tokio::sync::watch::Receiver<u64>,
    /// Where the writers report each commit.
    commits: super::commits::CommitObserver,
}

/// When an operation on the database was last abandoned unfinished (it overran `database_timeout`, or whoever
/// awaited it stopped waiting, as readiness does after `ready_timeout`). A connection used before that moment may be
/// the one left mid-statement on a dead path, or share its path: the pool's `pre_recycle` hook lets none of them out
/// again, so the next operation connects afresh instead of hanging on it.
#[derive(Debug, Default)]
struct Abandoned(Mutex<Option<Instant>>);

impl Abandoned {
    fn mark(&self) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(Instant::now());
    }

    /// Whether a connection last taken at `used` may be handed out again.
    fn may_reuse(&self, used: Instant) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .map_or(true, |abandoned| used > abandoned)
    }
}

/// Marks [`Abandoned`] when dropped before [`Unfinished::finished`]: an operation's future dropped mid-way.
struct Unfinished<'a> {
    abandoned: &'a Abandoned,
    done: bool,
}

impl Unfinished<'_> {
    fn finished(mut self) {
        self.done = true;
    }
}

impl Drop for Unfinished<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.abandoned.mark();
        }
    }
}

/// The channel integration changes are announced on, in the transaction that makes them.
const INTEGRATIONS_CHANNEL: &str = "svcgate_integrations";

/// One incoming alert waiting for the writer, and where its outcome goes.
struct EventJob {
    event: AlertEvent,
    reply: oneshot::Sender<Result<EventOutcome, StoreError>>,
}

impl From<tokio_postgres::Error> for StoreError {
    /// Sorts a failed statement by what it means for the caller.
    fn from(error: tokio_postgres::Error) -> Self {
        let code = error.code().cloned();
        match code {
            Some(code)
                if code == SqlState::UNIQUE_VIOLATION
                    || code == SqlState::CHECK_VIOLATION
                    || code == SqlState::FOREIGN_KEY_VIOLATION =>
            {
                StoreError::Conflict(Box::new(error))
            }
            None if error.is_closed() => StoreError::Unavailable(error.to_string()),
            _ => StoreError::Database(Box::new(error)),
        }
    }
}

impl From<deadpool_postgres::PoolError> for StoreError {
    fn from(error: deadpool_postgres::PoolError) -> Self {
        match error {
            deadpool_postgres::PoolError::Backend(error) => error.into(),
            other => StoreError::Unavailable(format!("no database connection: {other}")),
        }
    }
}

fn int(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

fn uint(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

impl PostgresStore {
    /// The writer of `event`: always the same for one project and fingerprint, so that one fingerprint's events are
    /// written in the order they came, in one transaction after another, as with a single writer.
    fn writer(&self, event: &AlertEvent) -> &mpsc::Sender<EventJob> {
        use std::hash::{Hash, Hasher};
        let slot = match &event.fingerprint {
            Some(fingerprint) => {
                let mut hasher = std::hash::DefaultHasher::new();
                (event.project_id, fingerprint).hash(&mut hasher);
                usize::try_from(hasher.finish() % self.writers.len() as u64).unwrap_or(0)
            }
            None => {
                self.next_writer
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                    % self.writers.len()
            }
        };
        &self.writers[slot]
    }

    /// Connects, applies the schema's migrations (once, whichever replica comes first) and starts the writer. A
    /// server that offers no TLS where `sslmode` requires it is refused with a line that says how to allow it.
    pub async fn connect(options: &PostgresOptions) -> Result<Self, StoreError> {
        let target = connect::target(&options.url, options.ca_bundle.as_deref(), &options.limits)?;
        let limits = options.limits;
        let manager_config = ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        };
        let manager = match target.tls.clone() {
            None => Manager::from_config(target.config.clone(), tokio_postgres::NoTls, manager_config),
            Some(tls) => Manager::from_config(target.config.clone(), tls, manager_config),
        };
        let abandoned = Arc::new(Abandoned::default());
        let reusable = Arc::clone(&abandoned);
        let pool = Pool::builder(manager)
            // Each writer keeps a connection; at least two more serve reads, the outbox and the heartbeat.
            .max_size(
                options
                    .pool_size
                    .max(options.alert_writers.max(1).saturating_add(2)),
            )
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .wait_timeout(Some(limits.operation_timeout))
            .create_timeout(Some(limits.connect_timeout))
            .recycle_timeout(Some(limits.operation_timeout))
            .pre_recycle(deadpool_postgres::Hook::sync_fn(move |_, metrics| {
                if reusable.may_reuse(metrics.recycled.unwrap_or(metrics.created)) {
                    Ok(())
                } else {
                    Err(deadpool_postgres::HookError::message(
                        "used before an operation was abandoned",
                    ))
                }
            }))
            .build()
            .map_err(|error| StoreError::Unavailable(format!("database pool: {error}")))?;
        let migrated = tokio::time::timeout(limits.start_timeout(), async {
            let mut client = match pool.get().await {
                Ok(client) => client,
                Err(deadpool_postgres::PoolError::Backend(error)) if connect::offers_no_tls(&error) => {
                    return Err(connect::plaintext_refused(target.mode))
                }
                Err(error) => return Err(error.into()),
            };
            Ok(crate::store::schema::apply_postgres(&mut client).await?)
        });
        migrated.await.map_err(|_| {
            StoreError::Unavailable(format!(
                "PostgreSQL did not finish the start-up (connection and migrations) within {:?} \
                 (12 × database_timeout)",
                limits.start_timeout()
            ))
        })??;
        let commits = super::commits::CommitObserver::default();
        let writers = (0..options.alert_writers.max(1))
            .map(|_| {
                let (events, receiver) = mpsc::channel(MAX_BATCH * 4);
                let connection = WriterConnection {
                    pool: pool.clone(),
                    client: None,
                    timeout: limits.operation_timeout,
                    abandoned: Arc::clone(&abandoned),
                };
                tokio::spawn(write_events(connection, receiver, commits.clone()));
                events
            })
            .collect();
        let (changed, integration_changes) = tokio::sync::watch::channel(0);
        tokio::spawn(listen_for_changes(
            target.config,
            target.tls,
            changed,
            limits.operation_timeout,
        ));
        Ok(PostgresStore {
            pool,
            operation_timeout: limits.operation_timeout,
            abandoned,
            writers,
            next_writer: std::sync::atomic::AtomicUsize::new(0),
            integration_changes,
            commits,
        })
    }

    /// Runs one operation within `database_timeout`. One that overruns, or whose caller stops waiting, is
    /// abandoned: no connection used before that moment is handed out again ([`Abandoned`]), since a path that
    /// left one operation without an answer has likely left them dead too, and the next operation connects afresh.
    /// An operation that overran may have sent its commit: what it wrote may or may not be stored.
    fn bounded<'a, T: Send + 'a>(
        &'a self,
        operation: impl std::future::Future<Output = Result<T, StoreError>> + Send + 'a,
    ) -> StoreFuture<'a, T> {
        Box::pin(async move {
            let unfinished = Unfinished {
                abandoned: &self.abandoned,
                done: false,
            };
            let outcome = tokio::time::timeout(self.operation_timeout, operation).await;
            match outcome {
                Ok(outcome) => {
                    unfinished.finished();
                    outcome
                }
                Err(_) => Err(StoreError::Undecided(format!(
                    "no answer from PostgreSQL within {:?} (database_timeout)",
                    self.operation_timeout
                ))),
            }
        })
    }

    /// Records `fingerprint` as the secret key's on first use, and refuses a different key later: integration
    /// keys sealed with one key cannot be opened with another.
    pub async fn check_key(&self, fingerprint: &str) -> Result<(), StoreError> {
        let stored = self
            .bounded(async move {
                let client = self.client().await?;
                client
                    .execute(rows::KEY_FINGERPRINT_RECORD, &[&fingerprint])
                    .await?;
                let stored: String = client.query_one(rows::KEY_FINGERPRINT, &[]).await?.try_get(0)?;
                Ok(stored)
            })
            .await?;
        super::same_key(stored, fingerprint)
    }

    async fn client(&self) -> Result<deadpool_postgres::Object, StoreError> {
        Ok(self.pool.get().await?)
    }

    /// A setting of the pool's sessions (`current_setting`), as PostgreSQL reports it.
    pub async fn setting(&self, name: &str) -> Result<String, StoreError> {
        self.bounded(async move {
            Ok(self
                .client()
                .await?
                .query_one("SELECT current_setting($1)", &[&name])
                .await?
                .try_get(0)?)
        })
        .await
    }

    /// Runs `operation` within `database_timeout` (see [`PostgresStore::bounded`]), for the store's other modules.
    pub(crate) fn within_timeout<'a, T: Send + 'a>(
        &'a self,
        operation: impl std::future::Future<Output = Result<T, StoreError>> + Send + 'a,
    ) -> StoreFuture<'a, T> {
        self.bounded(operation)
    }

    /// A pooled connection, for work that spans tables (`store copy`).
    pub(crate) async fn pool_client(&self) -> Result<deadpool_postgres::Object, StoreError> {
        self.client().await
    }
}
