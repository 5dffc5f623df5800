//! The shared store: PostgreSQL, for several svcgate replicas behind one load balancer.
//!
//! Connections come from a `deadpool-postgres` pool (`database_pool_size`), over TLS through rustls unless the
//! URL says `sslmode=disable`. Reads and single writes take a pooled connection each. Incoming alerts go through
//! writer tasks (`database_alert_writers`, each keeping one connection of the pool and running one transaction at
//! a time) that commit them in batches, so
//! that one commit (and one WAL flush, `synchronous_commit` on) serves many senders; a sender is answered only
//! after its batch committed. An event goes to the writer of its project and fingerprint, so one fingerprint's
//! events are written in the order they came, as with one writer, while different fingerprints' batches commit
//! side by side and share WAL flushes. A batch is a few statements whatever its size: its events are written by
//! one multi-row `INSERT … ON CONFLICT` per round of distinct fingerprints (see [`plan`]).
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

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use deadpool_postgres::{GenericClient, Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio::sync::{mpsc, oneshot};
use tokio_postgres::error::SqlState;
use tokio_postgres::Row;

use super::postgres_connect::{self, DatabaseLimits};
use super::{
    postgres_schema, AlertEvent, AlertPage, AlertQuery, AlertRecord, AlertSettings, EventOutcome, IdKind,
    IdRecord, IntegrationName, IntegrationRecord, OAuthStateRecord, OutboxFailure, OutboxItem, OutboxState,
    PageSessionRecord, Store, StoreError, StoreFuture, UsageDelta, UsageRow,
};
use crate::store::lifecycle::{self, Action};

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
        let target = postgres_connect::target(&options.url, options.ca_bundle.as_deref(), &options.limits)?;
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
                Err(deadpool_postgres::PoolError::Backend(error))
                    if postgres_connect::offers_no_tls(&error) =>
                {
                    return Err(postgres_connect::plaintext_refused(target.mode))
                }
                Err(error) => return Err(error.into()),
            };
            Ok(postgres_schema::apply(&mut client).await?)
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

use super::rows::{self, ALERT_COLUMNS, OUTBOX_STATE_COLUMNS, USAGE_COLUMNS};

fn collect<T>(
    rows: Vec<Row>,
    mapper: fn(&Row) -> Result<T, tokio_postgres::Error>,
) -> Result<Vec<T>, StoreError> {
    rows.iter()
        .map(|row| mapper(row).map_err(StoreError::from))
        .collect()
}

async fn settings_get<C: GenericClient>(client: &C, project_id: u64) -> Result<AlertSettings, StoreError> {
    let row = client.query_opt(rows::SETTINGS_GET, &[&int(project_id)]).await?;
    Ok(match row {
        Some(row) => rows::settings(&row)?,
        None => AlertSettings::default(),
    })
}

async fn enqueue<C: GenericClient>(
    client: &C,
    kind: &str,
    project_id: u64,
    alert_id: u64,
    now: &str,
) -> Result<(), StoreError> {
    client
        .execute(
            rows::OUTBOX_ENQUEUE,
            &[&kind, &int(project_id), &int(alert_id), &now],
        )
        .await?;
    Ok(())
}

async fn alert_by_id<C: GenericClient>(client: &C, id: u64) -> Result<AlertRecord, StoreError> {
    let row = client
        .query_one(
            &format!("SELECT {ALERT_COLUMNS} FROM alerts WHERE id = $1"),
            &[&int(id)],
        )
        .await?;
    Ok(rows::alert(&row)?)
}

/// A writer's own connection: taken from the pool once and kept while it works, so that every batch goes to the
/// same PostgreSQL backend. (Taking one from the pool per batch handed the batches to the pool's connections in
/// turn: row 7 of `bench/` measured 10.5k alerts/s that way, against 12.5k on one connection kept.)
struct WriterConnection {
    pool: Pool,
    client: Option<deadpool_postgres::Object>,
    /// Longest the wait for a connection, and then the batch, may each take (`database_timeout`).
    timeout: Duration,
    /// Marked when a batch fails with its connection in hand.
    abandoned: Arc<Abandoned>,
}

impl WriterConnection {
    /// The connection, a fresh one from the pool if there was none or it closed.
    async fn get(&mut self) -> Result<&deadpool_postgres::Object, StoreError> {
        if self.client.as_ref().is_some_and(|client| client.is_closed()) {
            self.client = None;
        }
        if self.client.is_none() {
            match tokio::time::timeout(self.timeout, self.pool.get()).await {
                Ok(client) => self.client = Some(client?),
                Err(_) => {
                    return Err(StoreError::Unavailable(format!(
                        "no connection to PostgreSQL within {:?} (database_timeout)",
                        self.timeout
                    )))
                }
            }
        }
        self.client
            .as_ref()
            .ok_or_else(|| StoreError::Unavailable("no connection for the alert writer".to_owned()))
    }

    /// Applies `events` in one transaction on the writer's connection (see [`run_batch`]), within
    /// `database_timeout`. After any failure but a statement PostgreSQL refused, the connection is let go (out of
    /// the pool too): it may be closing, or its path dead. A failure after the `COMMIT` was sent is
    /// [`StoreError::Undecided`]; one before, [`StoreError::Unavailable`]: nothing of the batch was stored.
    async fn run(
        &mut self,
        events: &[&AlertEvent],
    ) -> Result<Vec<Result<EventOutcome, StoreError>>, StoreError> {
        let timeout = self.timeout;
        let client = self.get().await?;
        let commit_sent = std::sync::atomic::AtomicBool::new(false);
        let result = match tokio::time::timeout(timeout, run_batch(client, events, &commit_sent)).await {
            Ok(result) => result,
            Err(_) => Err(StoreError::Unavailable(format!(
                "no answer from PostgreSQL within {timeout:?} (database_timeout)"
            ))),
        };
        let Err(error) = result else {
            return result;
        };
        if refused_by_postgres(&error) {
            return Err(error);
        }
        if let Some(client) = self.client.take() {
            drop(deadpool_postgres::Object::take(client));
            // The path that failed this connection has likely failed the idle ones too: the next batch connects
            // afresh rather than trying them one by one.
            self.abandoned.mark();
        }
        Err(if commit_sent.load(std::sync::atomic::Ordering::SeqCst) {
            StoreError::Undecided(error.to_string())
        } else {
            error
        })
    }
}

/// Whether `error` is a statement PostgreSQL refused (a deadlock, a constraint) on a connection it keeps: the
/// transaction was then rolled back. Any other failure (the connection lost, the server ending the session) may
/// have come after the commit.
fn refused_by_postgres(error: &StoreError) -> bool {
    let (StoreError::Conflict(source) | StoreError::Database(source)) = error else {
        return false;
    };
    source
        .downcast_ref::<tokio_postgres::Error>()
        .and_then(tokio_postgres::Error::as_db_error)
        .is_some_and(|refusal| {
            // The parsed severity: the text one is in the server's language. A session the server ends (shut down,
            // idle in a transaction too long) may end after the commit.
            !matches!(
                refusal.parsed_severity(),
                Some(tokio_postgres::error::Severity::Fatal | tokio_postgres::error::Severity::Panic)
            ) && !refusal.code().code().starts_with("57P")
                && !refusal.code().code().starts_with("08")
                && *refusal.code() != SqlState::IDLE_IN_TRANSACTION_SESSION_TIMEOUT
        })
}

/// A writer: takes the events waiting on its channel (up to [`MAX_BATCH`]) and commits them together.
async fn write_events(
    mut connection: WriterConnection,
    mut receiver: mpsc::Receiver<EventJob>,
    commits: super::commits::CommitObserver,
) {
    let mut carried: Option<EventJob> = None;
    loop {
        let first = match carried.take() {
            Some(job) => job,
            None => match receiver.recv().await {
                Some(job) => job,
                None => return,
            },
        };
        // One yield before taking the batch lets the runtime read its sockets and run the requests they wake, so
        // that the batch carries the alerts that have already arrived, not only those queued before the first.
        // Row 7 of `bench/` (quick runs): 12.0k-12.7k alerts/s with it, 8.2k-9.2k without.
        tokio::task::yield_now().await;
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match receiver.try_recv() {
                Ok(job) if fires_after_its_end(&batch, &job.event) => {
                    carried = Some(job);
                    break;
                }
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let events: Vec<&AlertEvent> = batch.iter().map(|job| &job.event).collect();
        let started = std::time::Instant::now();
        let committed = connection.run(&events).await;
        commits.observe(events.len(), started);
        match committed {
            Ok(outcomes) => {
                for (job, outcome) in batch.into_iter().zip(outcomes) {
                    drop(job.reply.send(outcome));
                }
            }
            // PostgreSQL refused the batch and rolled it back whole; each event is tried again alone, so that one
            // event's failure is its own answer only.
            // Should the connection fail meanwhile, the events not tried yet are answered at once: nothing of theirs
            // was sent, and each would otherwise wait out its own timeouts in turn.
            Err(error) if refused_by_postgres(&error) => {
                let mut failed: Option<String> = None;
                for job in batch {
                    if let Some(reason) = &failed {
                        drop(job.reply.send(Err(StoreError::Unavailable(reason.clone()))));
                        continue;
                    }
                    let started = std::time::Instant::now();
                    let alone = connection.run(&[&job.event]).await;
                    commits.observe(1, started);
                    if let Err(error) = &alone {
                        if !refused_by_postgres(error) {
                            failed = Some(error.to_string());
                        }
                    }
                    let outcome = alone.and_then(|mut outcomes| {
                        outcomes.pop().unwrap_or_else(|| {
                            Err(StoreError::Unavailable("an event had no outcome".to_owned()))
                        })
                    });
                    drop(job.reply.send(outcome));
                }
            }
            // The connection failed or timed out. After the commit was sent the batch may have committed before its
            // answer was lost, so it is not written again; either way its senders are told (which of the two it was),
            // and send again.
            Err(error) => {
                for job in batch {
                    let answer = match &error {
                        StoreError::Undecided(text) => StoreError::Undecided(text.clone()),
                        other => StoreError::Unavailable(other.to_string()),
                    };
                    drop(job.reply.send(Err(answer)));
                }
            }
        }
    }
}

/// Whether `event` fires for a fingerprint that an event of `batch` resolves: such an event waits for the next
/// batch. Its new alert would be inserted in a later round of the batch, after rows of other fingerprints are
/// locked, and could so wait on another replica's batch that waits on this one (the resolve having matched
/// nothing, this batch holds no row of the fingerprint yet).
fn fires_after_its_end(batch: &[EventJob], event: &AlertEvent) -> bool {
    event.ended_at.is_none()
        && event.fingerprint.is_some()
        && batch.iter().any(|job| {
            job.event.ended_at.is_some()
                && job.event.project_id == event.project_id
                && job.event.fingerprint == event.fingerprint
        })
}

/// Events that do not resolve, with fingerprints, at most one per project and fingerprint: each creates its alert,
/// with a provisional iid, or counts one more event of the open alert of its fingerprint (`alerts_one_open`), all
/// in one statement, in the order given (by project, then fingerprint). A created alert's incident is queued when
/// its project's `create_incident` (else `$15`, the default) says so. Answers carry the fingerprint, which maps them
/// back.
const FIRE_MANY: &str = "WITH given AS (
        SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[],
            $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $14::text[])
            WITH ORDINALITY AS given(project_id, integration_id, fingerprint, title, description, severity, service,
                monitoring_tool, hosts, environment, started_at, now, payload, ord)
    ), up AS (
        INSERT INTO alerts (project_id, iid, integration_id, fingerprint, status, title, description, severity,
            service, monitoring_tool, hosts, environment, started_at, events, last_event_at, payload, created_at,
            updated_at)
        SELECT project_id, -nextval('alert_provisional_iids'), integration_id, fingerprint, 'triggered', title,
            description, severity, service, monitoring_tool, hosts, environment, started_at, 1, now, payload, now, now
        FROM given ORDER BY ord
        ON CONFLICT (project_id, fingerprint) WHERE status <> 'resolved' AND fingerprint IS NOT NULL
        DO UPDATE SET events = alerts.events + 1, last_event_at = EXCLUDED.last_event_at,
            updated_at = EXCLUDED.updated_at
        RETURNING id, project_id, iid, status, title, events, incident_iid, (xmax = 0) AS created, fingerprint
    ), incident AS (
        INSERT INTO outbox (kind, project_id, alert_id, next_attempt_at)
        SELECT 'create_incident', up.project_id, up.id, given.now FROM up
        JOIN given ON given.project_id = up.project_id AND given.fingerprint = up.fingerprint
        LEFT JOIN alert_settings ON alert_settings.project_id = up.project_id
        WHERE up.created AND COALESCE(alert_settings.create_incident, $13)
    )
    SELECT id, project_id, iid, status, title, events, incident_iid, created, fingerprint FROM up";

/// An event that does not resolve and has no fingerprint: always a new alert, with a provisional iid; its incident
/// is queued when the project's `create_incident` (else `$13`, the default) says so.
const FIRE: &str = "WITH up AS (
        INSERT INTO alerts (project_id, iid, integration_id, fingerprint, status, title, description, severity,
            service, monitoring_tool, hosts, environment, started_at, events, last_event_at, payload, created_at,
            updated_at)
        VALUES ($1, -nextval('alert_provisional_iids'), $2, $3, 'triggered', $4, $5, $6, $7, $8, $9, $10, $11, 1,
            $12, $14, $12, $12)
        RETURNING id, project_id, iid, status, title, events, incident_iid, true AS created
    ), incident AS (
        INSERT INTO outbox (kind, project_id, alert_id, next_attempt_at)
        SELECT 'create_incident', project_id, id, $12 FROM up
        WHERE COALESCE((SELECT create_incident FROM alert_settings WHERE project_id = $1), $13)
    )
    SELECT id, project_id, iid, status, title, events, incident_iid, created FROM up";

/// An event that resolves: closes the open alert of its fingerprint, if any, keeping the resolving payload (`$6`) as
/// its latest, and queues the closing of its incident when the project's `auto_close_incident` (else `$5`, the
/// default) says so.
const RESOLVE: &str = "WITH resolved AS (
        UPDATE alerts SET status = 'resolved', ended_at = $3, updated_at = $4, payload = $6
        WHERE project_id = $1 AND fingerprint = $2 AND status <> 'resolved'
        RETURNING id, project_id, iid, status, title, events, incident_iid
    ), closing AS (
        INSERT INTO outbox (kind, project_id, alert_id, next_attempt_at)
        SELECT 'close_incident', project_id, id, $4 FROM resolved
        WHERE incident_iid IS NOT NULL
            AND COALESCE((SELECT auto_close_incident FROM alert_settings WHERE project_id = $1), $5)
    )
    SELECT id, project_id, iid, status, title, events, incident_iid FROM resolved";

/// Makes sure project `$1` has its iid counter (starting at the project's highest iid). An existing counter is
/// neither changed, nor locked, nor is the highest iid looked for.
const ENSURE_COUNTER: &str = "INSERT INTO alert_iids (project_id, last_iid)
    SELECT $1, (SELECT COALESCE(MAX(iid), 0) FROM alerts WHERE project_id = $1 AND iid > 0)
    WHERE NOT EXISTS (SELECT 1 FROM alert_iids WHERE project_id = $1)
    ON CONFLICT (project_id) DO NOTHING";

/// Notes, for this transaction, the last provisional iid given before it wrote anything (`svcgate.provisional_floor`):
/// its own alerts' provisional iids are below the negative of that. (`alert_provisional_iids` hands out one value at a
/// time, `CACHE 1`, so a later `nextval` anywhere is larger.)
const PROVISIONAL_FLOOR: &str = "SELECT set_config('svcgate.provisional_floor',
        (CASE WHEN is_called THEN last_value ELSE last_value - 1 END)::text, true)
    FROM alert_provisional_iids";

/// Numbers the alerts this transaction created in project `$1`, in the order they were written: takes as many iids
/// from the project's counter, locking it until commit, and gives them out. The alerts with provisional (negative)
/// iids a transaction sees are its own (every transaction numbers its alerts before it commits); they are looked for
/// only among the provisional iids given since [`PROVISIONAL_FLOOR`], since the index keeps the entries of every
/// earlier alert's first row version until vacuum. A transaction that created nothing in the project leaves the
/// counter alone. Answers each alert's id and iid.
const NUMBER: &str = "WITH mine AS (
        SELECT id, row_number() OVER (ORDER BY id) AS ord, count(*) OVER () AS created
        FROM alerts
        WHERE project_id = $1 AND iid < 0
            AND iid < -current_setting('svcgate.provisional_floor')::bigint
    ), counter AS (
        UPDATE alert_iids SET last_iid = last_iid + (SELECT count(*) FROM mine)
        WHERE project_id = $1 AND EXISTS (SELECT 1 FROM mine)
        RETURNING last_iid
    )
    UPDATE alerts SET iid = counter.last_iid - mine.created + mine.ord
    FROM mine, counter
    WHERE alerts.id = mine.id
    RETURNING alerts.id, alerts.iid";

/// One statement of a batch, naming the events it carries (their indexes in the batch).
#[derive(Debug, PartialEq, Eq)]
enum Step {
    /// Non-resolving events with fingerprints, distinct by project and fingerprint: one [`FIRE_MANY`].
    FireMany(Vec<usize>),
    /// A non-resolving event without fingerprint: one [`FIRE`].
    Fire(usize),
    /// A resolving event with a fingerprint: one [`RESOLVE`].
    Resolve(usize),
}

/// The statements that carry out `events`, in the order they must run.
///
/// Events are taken by project then fingerprint, each fingerprint's events in the order they came, so that two
/// batches lock the alert rows they share in the same order. The first event of every fingerprint goes in the first
/// round, the second in the second, and so on: one statement cannot touch a row twice, and a later event of a
/// fingerprint must see what the earlier one did. Within a round, neighbouring non-resolving events share one
/// statement. An event that resolves and has no fingerprint has no open alert to close and needs no statement.
fn plan(events: &[&AlertEvent]) -> Vec<Step> {
    let mut order: Vec<usize> = (0..events.len()).collect();
    order.sort_by(|&a, &b| {
        (events[a].project_id, &events[a].fingerprint).cmp(&(events[b].project_id, &events[b].fingerprint))
    });
    let mut rounds: Vec<Vec<usize>> = Vec::new();
    let mut without_fingerprint = Vec::new();
    let mut previous: Option<(u64, &str)> = None;
    let mut round = 0;
    for index in order {
        let event = events[index];
        let Some(fingerprint) = event.fingerprint.as_deref() else {
            if event.ended_at.is_none() {
                without_fingerprint.push(Step::Fire(index));
            }
            continue;
        };
        let key = (event.project_id, fingerprint);
        round = if previous == Some(key) { round + 1 } else { 0 };
        previous = Some(key);
        if rounds.len() <= round {
            rounds.push(Vec::new());
        }
        rounds[round].push(index);
    }
    let mut steps = Vec::new();
    for round in rounds {
        let mut firing = Vec::new();
        for index in round {
            if events[index].ended_at.is_some() {
                if !firing.is_empty() {
                    steps.push(Step::FireMany(std::mem::take(&mut firing)));
                }
                steps.push(Step::Resolve(index));
            } else {
                firing.push(index);
            }
        }
        if !firing.is_empty() {
            steps.push(Step::FireMany(firing));
        }
    }
    steps.extend(without_fingerprint);
    steps
}

/// The prepared statements a batch uses.
struct BatchStatements {
    fire_many: tokio_postgres::Statement,
    fire: tokio_postgres::Statement,
    resolve: tokio_postgres::Statement,
}

/// Sends one [`Step`]'s statement, answering the rows PostgreSQL answered (read into outcomes by [`step_rows`]).
async fn run_step(
    client: &tokio_postgres::Client,
    statements: &BatchStatements,
    events: &[&AlertEvent],
    step: &Step,
) -> Result<Vec<Row>, tokio_postgres::Error> {
    let defaults = AlertSettings::default();
    match step {
        Step::Resolve(index) => {
            let event = events[*index];
            client
                .query(
                    &statements.resolve,
                    &[
                        &int(event.project_id),
                        &event.fingerprint,
                        &event.ended_at,
                        &event.now,
                        &defaults.auto_close_incident,
                        &event.payload_json,
                    ],
                )
                .await
        }
        Step::Fire(index) => {
            let event = events[*index];
            client
                .query(
                    &statements.fire,
                    &[
                        &int(event.project_id),
                        &int(event.integration_id),
                        &event.fingerprint,
                        &event.title,
                        &event.description,
                        &event.severity,
                        &event.service,
                        &event.monitoring_tool,
                        &event.hosts_json,
                        &event.environment,
                        &event.started_at,
                        &event.now,
                        &defaults.create_incident,
                        &event.payload_json,
                    ],
                )
                .await
        }
        Step::FireMany(indexes) => {
            let each: Vec<&AlertEvent> = indexes.iter().map(|&index| events[index]).collect();
            let column =
                |field: fn(&AlertEvent) -> &str| each.iter().map(|event| field(event)).collect::<Vec<_>>();
            let optional = |field: fn(&AlertEvent) -> Option<&str>| {
                each.iter().map(|event| field(event)).collect::<Vec<_>>()
            };
            let project_ids: Vec<i64> = each.iter().map(|event| int(event.project_id)).collect();
            let integration_ids: Vec<i64> = each.iter().map(|event| int(event.integration_id)).collect();
            client
                .query(
                    &statements.fire_many,
                    &[
                        &project_ids,
                        &integration_ids,
                        &optional(|event| event.fingerprint.as_deref()),
                        &column(|event| &event.title),
                        &optional(|event| event.description.as_deref()),
                        &column(|event| &event.severity),
                        &optional(|event| event.service.as_deref()),
                        &optional(|event| event.monitoring_tool.as_deref()),
                        &column(|event| &event.hosts_json),
                        &optional(|event| event.environment.as_deref()),
                        &column(|event| &event.started_at),
                        &column(|event| &event.now),
                        &defaults.create_incident,
                        &column(|event| &event.payload_json),
                    ],
                )
                .await
        }
    }
}

/// The row a committed [`Step`] answered for each of its events, by event index. A [`Step::FireMany`]'s rows carry
/// their fingerprint, distinct within their project, which maps them back to the events.
fn step_rows(
    step: &Step,
    rows: Vec<Row>,
    events: &[&AlertEvent],
) -> Vec<(usize, Result<Option<Row>, StoreError>)> {
    match step {
        Step::Resolve(index) => vec![(*index, Ok(rows.into_iter().next()))],
        Step::Fire(index) => {
            let row = rows
                .into_iter()
                .next()
                .ok_or_else(|| StoreError::Unavailable("a new alert had no answer".to_owned()))
                .map(Some);
            vec![(*index, row)]
        }
        Step::FireMany(indexes) => {
            let mut by_key = std::collections::HashMap::new();
            for row in rows {
                if let (Ok(project), Ok(fingerprint)) =
                    (row.try_get::<_, i64>(1), row.try_get::<_, String>(8))
                {
                    by_key.insert((project, fingerprint), row);
                }
            }
            indexes
                .iter()
                .map(|&index| {
                    let event = events[index];
                    let key = (
                        int(event.project_id),
                        event.fingerprint.clone().unwrap_or_default(),
                    );
                    let row = by_key
                        .remove(&key)
                        .ok_or_else(|| StoreError::Unavailable("an alert event had no answer".to_owned()));
                    (index, row.map(Some))
                })
                .collect()
        }
    }
}

/// One request of a batch's transaction, and what it answers.
type Request<'a> =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<Answer, tokio_postgres::Error>> + Send + 'a>>;

/// What a [`Request`] answered.
enum Answer {
    /// `BEGIN`, `COMMIT`, a counter made sure of.
    Done,
    /// The rows of the [`Step`] of this index in the plan.
    Step(usize, Vec<Row>),
    /// The (id, iid) rows of a [`NUMBER`].
    Numbered(Vec<Row>),
}

/// Sends `requests` to PostgreSQL in their order, without waiting for answers in between, then collects the
/// answers in the same order.
///
/// tokio-postgres sends a request on its first poll, so each request is polled once here before the next one is:
/// the order is the order of this list, not whatever order a join would poll them in. The order is what makes the
/// transaction: `BEGIN` first, `COMMIT` last, a project's numbering after the statements that created its alerts.
/// A request that fails before it is sent (it could not be encoded, the connection is closed) stops the sending:
/// `ROLLBACK` goes instead of the rest, so that nothing after it commits and the connection (which its writer
/// keeps for the next batch) is left outside any transaction. A statement PostgreSQL refuses makes it refuse the rest and turn the `COMMIT` into a
/// rollback; its error is the answer.
async fn pipeline(
    client: &tokio_postgres::Client,
    requests: Vec<Request<'_>>,
    all_sent: &std::sync::atomic::AtomicBool,
) -> Result<Vec<Answer>, tokio_postgres::Error> {
    use std::task::Poll;
    let mut sent = Vec::with_capacity(requests.len());
    for mut request in requests {
        match std::future::poll_fn(|context| Poll::Ready(request.as_mut().poll(context))).await {
            Poll::Ready(Err(error)) => {
                drop(sent);
                // The rollback's own failure would only say the connection is gone, which the pool finds out.
                drop(client.batch_execute("ROLLBACK").await);
                return Err(error);
            }
            early => sent.push((request, early)),
        }
    }
    // Every statement, the `COMMIT` last, is now on its way.
    all_sent.store(true, std::sync::atomic::Ordering::SeqCst);
    let mut answers = Vec::with_capacity(sent.len());
    for (request, early) in sent {
        answers.push(match early {
            Poll::Ready(answer) => answer?,
            Poll::Pending => request.await?,
        });
    }
    Ok(answers)
}

/// Applies `events` in one transaction, answering their outcomes in their order.
///
/// The whole transaction is one round trip: every statement is sent before any answer is read (see [`pipeline`]).
/// In order: `BEGIN`; the [`PROVISIONAL_FLOOR`]; each project's counter made sure of; the [`plan`]'s statements, a new alert taking a
/// provisional iid; per project in project order, the numbering of its new alerts from its counter; `COMMIT`. A
/// project's counter row is so locked only from the numbering to the commit, which is what lets several
/// transactions of one project write their alerts at the same time. Numbers are given without gaps or duplicates: a
/// batch that rolls back gives its numbers back with the rest.
///
/// An `Err` that PostgreSQL answered ([`refused_by_postgres`]) means the batch was rolled back (nothing of it is
/// stored); after any other, whether it committed is unknown. Once it committed, every event has its own answer,
/// an error only if its row could not be read back: such an event is stored, and is not written again.
async fn run_batch(
    client: &deadpool_postgres::Object,
    events: &[&AlertEvent],
    commit_sent: &std::sync::atomic::AtomicBool,
) -> Result<Vec<Result<EventOutcome, StoreError>>, StoreError> {
    let (fire_many, fire, resolve, ensure_counter, floor, number) = tokio::try_join!(
        client.prepare_cached(FIRE_MANY),
        client.prepare_cached(FIRE),
        client.prepare_cached(RESOLVE),
        client.prepare_cached(ENSURE_COUNTER),
        client.prepare_cached(PROVISIONAL_FLOOR),
        client.prepare_cached(NUMBER),
    )?;
    let statements = BatchStatements {
        fire_many,
        fire,
        resolve,
    };
    // The projects where this batch may create alerts, in project order.
    let mut projects: Vec<i64> = events
        .iter()
        .filter(|event| event.ended_at.is_none())
        .map(|event| int(event.project_id))
        .collect();
    projects.sort_unstable();
    projects.dedup();
    let steps = plan(events);
    let client: &tokio_postgres::Client = client;
    let (statements, ensure_counter, floor, number) = (&statements, &ensure_counter, &floor, &number);
    let mut requests: Vec<Request<'_>> = vec![
        Box::pin(async move {
            client.batch_execute("BEGIN").await?;
            Ok(Answer::Done)
        }),
        Box::pin(async move {
            client.query(floor, &[]).await?;
            Ok(Answer::Done)
        }),
    ];
    for project in &projects {
        requests.push(Box::pin(async move {
            client.execute(ensure_counter, &[project]).await?;
            Ok(Answer::Done)
        }));
    }
    for (position, step) in steps.iter().enumerate() {
        requests.push(Box::pin(async move {
            Ok(Answer::Step(
                position,
                run_step(client, statements, events, step).await?,
            ))
        }));
    }
    for project in &projects {
        requests.push(Box::pin(async move {
            Ok(Answer::Numbered(client.query(number, &[project]).await?))
        }));
    }
    requests.push(Box::pin(async move {
        client.batch_execute("COMMIT").await?;
        Ok(Answer::Done)
    }));
    let answers = pipeline(client, requests, commit_sent).await?;
    // Committed: from here on, nothing fails the batch.
    let mut rows: Vec<Option<Result<Option<Row>, StoreError>>> = (0..events.len()).map(|_| None).collect();
    let mut iids = std::collections::HashMap::new();
    for answer in answers {
        match answer {
            Answer::Done => {}
            Answer::Step(position, answered) => {
                if let Some(step) = steps.get(position) {
                    for (index, row) in step_rows(step, answered, events) {
                        rows[index] = Some(row);
                    }
                }
            }
            Answer::Numbered(numbered) => {
                for row in numbered {
                    if let (Ok(id), Ok(iid)) = (row.try_get::<_, i64>(0), row.try_get::<_, i64>(1)) {
                        iids.insert(uint(id), uint(iid));
                    }
                }
            }
        }
    }
    // Every answer about a new alert (its own, and those of later events of the batch that grouped into it or
    // resolved it) carries its number, not the provisional one.
    Ok(rows
        .into_iter()
        .zip(events)
        .map(|(row, event)| {
            // An event that resolves without a fingerprint had no statement: it closed nothing.
            let row = row.unwrap_or(Ok(None))?;
            let mut outcome = outcome(event, row.as_ref())?;
            if let Some(alert) = outcome.alert.as_mut() {
                if let Some(iid) = iids.get(&alert.id) {
                    alert.iid = *iid;
                }
            }
            Ok(outcome)
        })
        .collect())
}

/// What one event did, from the row its statement answered: the rows of [`lifecycle::decide`]'s table, as
/// PostgreSQL carried them out (a created row is its `Create`, an updated one its `Group`, a resolved one its
/// `Resolve`, none its `Ignore`).
fn outcome(event: &AlertEvent, row: Option<&Row>) -> Result<EventOutcome, StoreError> {
    let touched = row.map(rows::touched).transpose()?;
    let created = match (row, &event.ended_at) {
        (Some(row), None) => row.try_get::<_, bool>(7)?,
        _ => false,
    };
    // For a new alert the decision is taken as if no open alert had been found.
    let open = if created { None } else { touched.clone() };
    let action = lifecycle::decide(open, decision_event(event));
    Ok(EventOutcome {
        outcome: action.outcome(),
        alert: match action {
            Action::Ignore => None,
            _ => touched,
        },
    })
}

fn decision_event(event: &AlertEvent) -> lifecycle::Event<'_> {
    lifecycle::Event {
        fingerprint: event.fingerprint.as_deref(),
        ended_at: event.ended_at.as_deref(),
    }
}

/// A page of a project's alerts: the statements the SQLite store runs, with text compared by bytes as SQLite does.
async fn alerts_list<C: GenericClient>(client: &C, query: &AlertQuery) -> Result<AlertPage, StoreError> {
    let statements = rows::alert_list(query, " COLLATE \"C\"");
    let project_id = int(query.project_id);
    let mut values: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = vec![&project_id];
    values.extend(
        statements
            .texts
            .iter()
            .map(|text| text as &(dyn tokio_postgres::types::ToSql + Sync)),
    );
    let counts = client
        .query(&statements.counts, &values)
        .await?
        .iter()
        .map(rows::status_count)
        .collect::<Result<_, _>>()?;
    let total = uint(client.query_one(&statements.total, &values).await?.try_get(0)?);
    let alerts = collect(client.query(&statements.page, &values).await?, rows::alert)?;
    Ok(AlertPage {
        alerts,
        total,
        counts,
    })
}

/// Keeps one connection (outside the pool) listening on [`INTEGRATIONS_CHANNEL`], and signals `changed` on every
/// notification and after every (re)connection, when notifications may have been missed. Runs until the store is
/// dropped (nobody holds a receiver any more).
async fn listen_for_changes(
    config: tokio_postgres::Config,
    tls: Option<tokio_postgres_rustls::MakeRustlsConnect>,
    changed: tokio::sync::watch::Sender<u64>,
    timeout: Duration,
) {
    let signal = |changed: &tokio::sync::watch::Sender<u64>| changed.send_modify(|count| *count += 1);
    loop {
        let outcome = match &tls {
            None => listen_once(&config, tokio_postgres::NoTls, &changed, signal, timeout).await,
            Some(tls) => listen_once(&config, tls.clone(), &changed, signal, timeout).await,
        };
        if changed.is_closed() {
            return;
        }
        if let Err(error) = outcome {
            tracing::warn!(%error, "listening for integration changes failed; reconnecting in 1 s");
        }
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    }
}

/// How often the listening connection, which otherwise only receives, asks the server something to find out that
/// its path still works.
const LISTENER_CHECK_INTERVAL: Duration = Duration::from_secs(10);

/// One listening connection, until it fails (or a check of it gets no answer within `timeout`) or the store is
/// dropped.
async fn listen_once<T>(
    config: &tokio_postgres::Config,
    tls: T,
    changed: &tokio::sync::watch::Sender<u64>,
    signal: impl Fn(&tokio::sync::watch::Sender<u64>),
    timeout: Duration,
) -> Result<(), StoreError>
where
    T: tokio_postgres::tls::MakeTlsConnect<tokio_postgres::Socket>,
    T::Stream: Send + 'static,
{
    let no_answer = || {
        StoreError::Unavailable(format!(
            "the listening connection got no answer within {timeout:?}"
        ))
    };
    let connect_within = config.get_connect_timeout().copied().unwrap_or(timeout);
    let (client, mut connection) = tokio::time::timeout(connect_within, config.connect(tls))
        .await
        .map_err(|_| no_answer())??;
    let (notifications, mut received) = mpsc::unbounded_channel();
    // The connection delivers notifications only while it is polled for messages.
    let driver = tokio::spawn(async move {
        let mut messages = futures_util::stream::poll_fn(move |context| connection.poll_message(context));
        while let Some(message) = futures_util::StreamExt::next(&mut messages).await {
            match message {
                Ok(tokio_postgres::AsyncMessage::Notification(_)) => {
                    if notifications.send(()).is_err() {
                        return Ok(());
                    }
                }
                Ok(_) => {}
                Err(error) => return Err(error),
            }
        }
        Ok(())
    });
    let listened = async {
        tokio::time::timeout(
            timeout,
            client.batch_execute(&format!("LISTEN {INTEGRATIONS_CHANNEL}")),
        )
        .await
        .map_err(|_| no_answer())??;
        // Whatever changed while this replica was not listening is picked up by one reload.
        signal(changed);
        let mut checks = tokio::time::interval(LISTENER_CHECK_INTERVAL);
        checks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                notified = received.recv() => match notified {
                    Some(()) => signal(changed),
                    None => return Ok(()),
                },
                _ = checks.tick() => {
                    // A path that died silently (a dropped NAT entry, a failover) would otherwise leave this
                    // replica deaf to other replicas' changes until the kernel gives up on it.
                    if tokio::time::timeout(timeout, client.simple_query("")).await.map_err(|_| no_answer())?.is_err() {
                        return Ok(());
                    }
                }
                () = changed.closed() => return Ok(()),
            }
        }
    }
    .await;
    drop(client);
    if let Err(error) = listened {
        // Its connection may never end by itself on a dead path.
        driver.abort();
        return Err(error);
    }
    match driver.await {
        Ok(outcome) => Ok(outcome?),
        Err(_) => Ok(()),
    }
}

/// Runs `write` and announces the integration change in the same transaction: the notification is delivered
/// to every listening replica when, and only if, the change commits.
async fn with_notification<T>(
    store: &PostgresStore,
    write: impl for<'a> FnOnce(
        &'a deadpool_postgres::Transaction<'a>,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<T, StoreError>> + Send + 'a>,
    >,
) -> Result<T, StoreError> {
    let mut client = store.client().await?;
    let transaction = client.transaction().await?;
    let outcome = write(&transaction).await?;
    transaction
        .execute("SELECT pg_notify($1, '')", &[&INTEGRATIONS_CHANNEL])
        .await?;
    transaction.commit().await?;
    Ok(outcome)
}

impl Store for PostgresStore {
    fn observe_commits(&self, metrics: super::commits::CommitMetrics) {
        self.commits.attach(metrics);
    }

    fn integration_changes(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        Some(self.integration_changes.clone())
    }

    fn replica_heartbeat(&self, replica: String) -> StoreFuture<'_, u64> {
        self.bounded(async move {
            let client = self.client().await?;
            let timeout = super::REPLICA_TIMEOUT.as_secs_f64();
            client
                .execute(
                    "INSERT INTO replicas (id, last_seen) VALUES ($1, now())
                     ON CONFLICT (id) DO UPDATE SET last_seen = now()",
                    &[&replica],
                )
                .await?;
            // Rows of replicas gone for a day are removed; the count is of those heard from lately.
            client
                .execute(
                    "DELETE FROM replicas WHERE last_seen < now() - interval '1 day'",
                    &[],
                )
                .await?;
            let live: i64 = client
                .query_one(
                    "SELECT count(*) FROM replicas WHERE last_seen > now() - make_interval(secs => $1)",
                    &[&timeout],
                )
                .await?
                .try_get(0)?;
            Ok(uint(live).max(1))
        })
    }

    fn ping(&self) -> StoreFuture<'_, ()> {
        self.bounded(async move {
            // A server that answers but cannot write (a standby after a failover) cannot take alerts either.
            let read_only: String = self
                .client()
                .await?
                .query_one("SELECT current_setting('transaction_read_only')", &[])
                .await?
                .try_get(0)?;
            if read_only == "on" {
                return Err(StoreError::Unavailable(
                    "the database is read-only (a standby?)".to_owned(),
                ));
            }
            Ok(())
        })
    }

    fn id_lookup(&self, kind: IdKind, id: u64) -> StoreFuture<'_, Option<IdRecord>> {
        self.bounded(async move {
            let row = self
                .client()
                .await?
                .query_opt(rows::ID_LOOKUP, &[&kind.as_str(), &int(id)])
                .await?;
            Ok(match row {
                Some(row) => Some(IdRecord {
                    kind,
                    id,
                    project_id: uint(row.try_get(0)?),
                    iid: uint(row.try_get(1)?),
                }),
                None => None,
            })
        })
    }

    fn id_record(&self, records: Vec<IdRecord>) -> StoreFuture<'_, ()> {
        self.bounded(async move {
            let client = self.client().await?;
            let statement = client.prepare_cached(rows::ID_RECORD).await?;
            // Sent together: the client pipelines them on its connection.
            let writes = records.iter().map(|record| {
                let (id, project_id, iid) = (int(record.id), int(record.project_id), int(record.iid));
                let statement = &statement;
                let client = &client;
                async move {
                    client
                        .execute(statement, &[&record.kind.as_str(), &id, &project_id, &iid])
                        .await
                }
            });
            for outcome in futures_util::future::join_all(writes).await {
                outcome?;
            }
            Ok(())
        })
    }

    fn session_put(
        &self,
        token_hash: String,
        access_token: String,
        user_id: Option<u64>,
    ) -> StoreFuture<'_, ()> {
        self.bounded(async move {
            self.client()
                .await?
                .execute(
                    rows::SESSION_PUT,
                    &[&token_hash, &access_token, &user_id.map(int)],
                )
                .await?;
            Ok(())
        })
    }

    fn session_get(&self, token_hash: String) -> StoreFuture<'_, Option<String>> {
        self.bounded(async move {
            let row = self
                .client()
                .await?
                .query_opt(rows::SESSION_GET, &[&token_hash])
                .await?;
            Ok(row.map(|row| row.try_get(0)).transpose()?)
        })
    }

    fn page_session_put(&self, session: PageSessionRecord) -> StoreFuture<'_, ()> {
        self.bounded(async move {
            self.client()
                .await?
                .execute(
                    rows::PAGE_SESSION_PUT,
                    &[
                        &session.id_hash,
                        &session.sealed_token,
                        &session.username,
                        &session.csrf,
                        &session.expires_at,
                        &session.sealed_refresh_token,
                        &session.token_expires_at,
                    ],
                )
                .await?;
            Ok(())
        })
    }

    fn page_session_get(&self, id_hash: String, now: String) -> StoreFuture<'_, Option<PageSessionRecord>> {
        self.bounded(async move {
            let row = self
                .client()
                .await?
                .query_opt(rows::PAGE_SESSION_GET, &[&id_hash, &now])
                .await?;
            Ok(row.map(|row| rows::page_session(&row, id_hash)).transpose()?)
        })
    }

    fn page_session_refreshed(
        &self,
        id_hash: String,
        old_sealed_refresh_token: String,
        sealed_token: String,
        sealed_refresh_token: String,
        token_expires_at: String,
    ) -> StoreFuture<'_, bool> {
        self.bounded(async move {
            let changed = self
                .client()
                .await?
                .execute(
                    rows::PAGE_SESSION_REFRESHED,
                    &[
                        &id_hash,
                        &sealed_token,
                        &sealed_refresh_token,
                        &token_expires_at,
                        &old_sealed_refresh_token,
                    ],
                )
                .await?;
            Ok(changed == 1)
        })
    }

    fn page_session_claim_refresh(
        &self,
        id_hash: String,
        sealed_refresh_token: String,
        now: String,
        until: String,
    ) -> StoreFuture<'_, bool> {
        self.bounded(async move {
            let changed = self
                .client()
                .await?
                .execute(
                    rows::PAGE_SESSION_CLAIM_REFRESH,
                    &[&id_hash, &sealed_refresh_token, &now, &until],
                )
                .await?;
            Ok(changed == 1)
        })
    }

    fn page_session_release_refresh(
        &self,
        id_hash: String,
        sealed_refresh_token: String,
    ) -> StoreFuture<'_, ()> {
        self.bounded(async move {
            self.client()
                .await?
                .execute(
                    rows::PAGE_SESSION_RELEASE_REFRESH,
                    &[&id_hash, &sealed_refresh_token],
                )
                .await?;
            Ok(())
        })
    }

    fn oauth_state_put(&self, record: OAuthStateRecord, now: String, limit: u64) -> StoreFuture<'_, bool> {
        self.bounded(async move {
            let client = self.client().await?;
            client.execute(rows::OAUTH_STATES_SWEEP, &[&now]).await?;
            // Sign-ins started at the same instant on several replicas may each see room for one more: the cap
            // can be passed by a few, which is all it needs to bound the table.
            let kept = client
                .execute(
                    rows::OAUTH_STATE_PUT,
                    &[
                        &record.state_hash,
                        &record.sealed_verifier,
                        &record.return_to,
                        &record.expires_at,
                        &now,
                        &i64::try_from(limit).unwrap_or(i64::MAX),
                    ],
                )
                .await?;
            Ok(kept == 1)
        })
    }

    fn oauth_state_take(&self, state_hash: String, now: String) -> StoreFuture<'_, Option<OAuthStateRecord>> {
        self.bounded(async move {
            let row = self
                .client()
                .await?
                .query_opt(rows::OAUTH_STATE_TAKE, &[&state_hash, &now])
                .await?;
            Ok(row.map(|row| rows::oauth_state(&row, state_hash)).transpose()?)
        })
    }

    fn page_session_end_refused(
        &self,
        id_hash: String,
        sealed_refresh_token: String,
    ) -> StoreFuture<'_, bool> {
        self.bounded(async move {
            let removed = self
                .client()
                .await?
                .execute(rows::PAGE_SESSION_END_REFUSED, &[&id_hash, &sealed_refresh_token])
                .await?;
            Ok(removed == 1)
        })
    }

    fn page_session_delete(&self, id_hash: String) -> StoreFuture<'_, ()> {
        self.bounded(async move {
            self.client()
                .await?
                .execute(rows::PAGE_SESSION_DELETE, &[&id_hash])
                .await?;
            Ok(())
        })
    }

    fn page_sessions_sweep(&self, now: String) -> StoreFuture<'_, u64> {
        self.bounded(async move {
            let removed = self
                .client()
                .await?
                .execute(rows::PAGE_SESSIONS_SWEEP, &[&now])
                .await?;
            Ok(removed)
        })
    }

    fn integrations(&self) -> StoreFuture<'_, Vec<IntegrationRecord>> {
        self.bounded(async move {
            let rows = self.client().await?.query(rows::INTEGRATIONS_ALL, &[]).await?;
            collect(rows, rows::integration)
        })
    }

    fn integration_named(&self, id: u64) -> StoreFuture<'_, Option<IntegrationName>> {
        self.bounded(async move {
            let row = self
                .client()
                .await?
                .query_opt(rows::INTEGRATION_NAMED, &[&int(id)])
                .await?;
            Ok(row.map(|row| rows::integration_name(&row)).transpose()?)
        })
    }

    fn integration_insert(&self, record: IntegrationRecord) -> StoreFuture<'_, IntegrationRecord> {
        self.bounded(with_notification(self, move |client| {
            Box::pin(async move {
                let row = client
                    .query_one(
                        rows::INTEGRATION_INSERT,
                        &[
                            &int(record.project_id),
                            &record.project_path,
                            &record.kind,
                            &record.name,
                            &record.active,
                            &record.endpoint_identifier,
                            &record.token_nonce,
                            &record.token_ciphertext,
                            &record.api_url,
                            &record.payload_example,
                            &record.payload_attribute_mapping,
                            &record.created_at,
                            &record.updated_at,
                        ],
                    )
                    .await?;
                Ok(IntegrationRecord {
                    id: uint(row.try_get(0)?),
                    ..record
                })
            })
        }))
    }

    fn integration_update(&self, record: IntegrationRecord) -> StoreFuture<'_, ()> {
        self.bounded(with_notification(self, move |client| {
            Box::pin(async move {
                client
                    .execute(
                        rows::INTEGRATION_UPDATE,
                        &[
                            &int(record.id),
                            &record.name,
                            &record.active,
                            &record.token_nonce,
                            &record.token_ciphertext,
                            &record.api_url,
                            &record.payload_example,
                            &record.payload_attribute_mapping,
                            &record.updated_at,
                            &record.project_path,
                        ],
                    )
                    .await?;
                Ok(())
            })
        }))
    }

    fn integration_delete(&self, id: u64) -> StoreFuture<'_, ()> {
        self.bounded(with_notification(self, move |client| {
            Box::pin(async move {
                client.execute(rows::INTEGRATION_DELETE, &[&int(id)]).await?;
                Ok(())
            })
        }))
    }

    fn alert_event(&self, event: AlertEvent) -> StoreFuture<'_, EventOutcome> {
        Box::pin(async move {
            let (reply, answer) = oneshot::channel();
            self.writer(&event)
                .send(EventJob { event, reply })
                .await
                .map_err(|_| StoreError::Unavailable("the alert writer has stopped".to_owned()))?;
            answer
                .await
                .map_err(|_| StoreError::Unavailable("the alert writer has stopped".to_owned()))?
        })
    }

    fn alert(&self, project_id: u64, iid: u64) -> StoreFuture<'_, Option<AlertRecord>> {
        self.bounded(async move {
            let row = self
                .client()
                .await?
                .query_opt(
                    &format!("SELECT {ALERT_COLUMNS} FROM alerts WHERE project_id = $1 AND iid = $2"),
                    &[&int(project_id), &int(iid)],
                )
                .await?;
            Ok(row.map(|row| rows::alert(&row)).transpose()?)
        })
    }

    fn alerts(&self, query: AlertQuery) -> StoreFuture<'_, AlertPage> {
        self.bounded(async move { alerts_list(&self.client().await?, &query).await })
    }

    fn alerts_by_environment(&self, project_id: u64) -> StoreFuture<'_, Vec<AlertRecord>> {
        self.bounded(async move {
            let rows = self
                .client()
                .await?
                .query(
                    &format!(
                        "SELECT {ALERT_COLUMNS} FROM alerts
                         WHERE project_id = $1 AND status <> 'resolved' AND environment IS NOT NULL
                         ORDER BY environment COLLATE \"C\", CASE severity WHEN 'critical' THEN 0 WHEN 'high' THEN 1
                            WHEN 'medium' THEN 2 WHEN 'low' THEN 3 WHEN 'info' THEN 4 ELSE 5 END,
                            started_at COLLATE \"C\" DESC"
                    ),
                    &[&int(project_id)],
                )
                .await?;
            collect(rows, rows::alert)
        })
    }

    fn alert_status(
        &self,
        project_id: u64,
        iid: u64,
        status: String,
        now: String,
    ) -> StoreFuture<'_, Option<AlertRecord>> {
        self.bounded(async move {
            let mut client = self.client().await?;
            let transaction = client.transaction().await?;
            let row = transaction
                .query_opt(
                    &format!(
                        "SELECT {ALERT_COLUMNS} FROM alerts WHERE project_id = $1 AND iid = $2 FOR UPDATE"
                    ),
                    &[&int(project_id), &int(iid)],
                )
                .await?;
            let Some(alert) = row.map(|row| rows::alert(&row)).transpose()? else {
                return Ok(None);
            };
            let ended_at =
                (status == "resolved").then(|| alert.ended_at.clone().unwrap_or_else(|| now.clone()));
            // Reopening an alert while a newer one of its fingerprint is open breaks `alerts_one_open`: a conflict.
            let updated = transaction
                .query_one(
                    &format!(
                        "UPDATE alerts SET status = $2, ended_at = $3, updated_at = $4 WHERE id = $1
                         RETURNING {ALERT_COLUMNS}"
                    ),
                    &[&int(alert.id), &status, &ended_at, &now],
                )
                .await?;
            if status == "resolved"
                && alert.status != "resolved"
                && alert.incident_iid.is_some()
                && settings_get(&transaction, project_id).await?.auto_close_incident
            {
                enqueue(&transaction, "close_incident", alert.project_id, alert.id, &now).await?;
            }
            let updated = rows::alert(&updated)?;
            transaction.commit().await?;
            Ok(Some(updated))
        })
    }

    fn alert_settings(&self, project_id: u64) -> StoreFuture<'_, AlertSettings> {
        self.bounded(async move { settings_get(&self.client().await?, project_id).await })
    }

    fn alert_settings_put(&self, project_id: u64, settings: AlertSettings) -> StoreFuture<'_, ()> {
        self.bounded(async move {
            self.client()
                .await?
                .execute(
                    rows::SETTINGS_PUT,
                    &[
                        &int(project_id),
                        &settings.create_incident,
                        &settings.auto_close_incident,
                    ],
                )
                .await?;
            Ok(())
        })
    }

    /// Rows another replica is claiming are skipped (`SKIP LOCKED`).
    fn outbox_due(
        &self,
        now: String,
        lease: std::time::Duration,
        limit: u32,
    ) -> StoreFuture<'_, Vec<OutboxItem>> {
        self.bounded(async move {
            let lease_until = super::outbox_lease_end(&now, lease)?;
            let mut client = self.client().await?;
            let transaction = client.transaction().await?;
            let rows = transaction
                .query(
                    "UPDATE outbox SET next_attempt_at = $3 WHERE id IN (
                        SELECT id FROM outbox WHERE done_at IS NULL AND next_attempt_at <= $1
                        ORDER BY next_attempt_at, id LIMIT $2 FOR UPDATE SKIP LOCKED)
                     RETURNING id, kind, attempts, alert_id",
                    &[&now, &i64::from(limit), &lease_until],
                )
                .await?;
            let mut items = Vec::with_capacity(rows.len());
            for row in rows {
                items.push(OutboxItem {
                    id: uint(row.try_get(0)?),
                    kind: row.try_get(1)?,
                    attempts: uint(row.try_get(2)?),
                    alert: alert_by_id(&transaction, uint(row.try_get(3)?)).await?,
                });
            }
            transaction.commit().await?;
            items.sort_by_key(|item| item.id);
            Ok(items)
        })
    }

    fn outbox_done(
        &self,
        id: u64,
        alert_id: u64,
        incident_iid: Option<u64>,
        now: String,
    ) -> StoreFuture<'_, ()> {
        self.bounded(async move {
            let mut client = self.client().await?;
            let transaction = client.transaction().await?;
            transaction.execute(rows::OUTBOX_DONE, &[&int(id), &now]).await?;
            if let Some(iid) = incident_iid {
                transaction
                    .execute(rows::ALERT_SET_INCIDENT, &[&int(alert_id), &int(iid)])
                    .await?;
                // An alert resolved before its incident existed still gets the incident closed.
                let alert = alert_by_id(&transaction, alert_id).await?;
                if alert.status == "resolved"
                    && settings_get(&transaction, alert.project_id)
                        .await?
                        .auto_close_incident
                {
                    enqueue(&transaction, "close_incident", alert.project_id, alert.id, &now).await?;
                }
            }
            transaction.commit().await?;
            Ok(())
        })
    }

    fn outbox_sweep(&self, done_before: String, limit: u32) -> StoreFuture<'_, u64> {
        self.bounded(async move {
            let client = self.client().await?;
            Ok(client
                .execute(rows::OUTBOX_SWEEP, &[&done_before, &i64::from(limit)])
                .await?)
        })
    }

    fn outbox_retry(&self, id: u64, next_attempt_at: String, error: String) -> StoreFuture<'_, ()> {
        self.bounded(async move {
            self.client()
                .await?
                .execute(rows::OUTBOX_RETRY, &[&int(id), &next_attempt_at, &error])
                .await?;
            Ok(())
        })
    }

    fn outbox_failures(&self, integration_id: u64, limit: u32) -> StoreFuture<'_, Vec<OutboxFailure>> {
        self.bounded(async move {
            let found = self
                .client()
                .await?
                .query(rows::OUTBOX_FAILURES, &[&int(integration_id), &i64::from(limit)])
                .await?;
            collect(found, rows::outbox_failure)
        })
    }

    fn outbox_of(&self, alert_id: u64) -> StoreFuture<'_, Vec<OutboxState>> {
        self.bounded(async move {
            let found = self
                .client()
                .await?
                .query(
                    &format!("SELECT {OUTBOX_STATE_COLUMNS} FROM outbox WHERE alert_id = $1 ORDER BY id"),
                    &[&int(alert_id)],
                )
                .await?;
            collect(found, rows::outbox_state)
        })
    }

    fn usage_add(&self, deltas: Vec<UsageDelta>, max_clients: usize) -> StoreFuture<'_, ()> {
        self.bounded(async move {
            let mut client = self.client().await?;
            let transaction = client.transaction().await?;
            let mut routes = std::collections::BTreeSet::new();
            // Counts add up across replicas: each adds its own deltas to the shared rows.
            for delta in &deltas {
                transaction
                    .execute(
                        "INSERT INTO v3_usage (route, since, client, user_agent, calls, errors, first_seen, last_seen)
                         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
                         ON CONFLICT (route, client, user_agent) DO UPDATE SET
                            calls = v3_usage.calls + EXCLUDED.calls, errors = v3_usage.errors + EXCLUDED.errors,
                            since = EXCLUDED.since,
                            first_seen = LEAST(v3_usage.first_seen, EXCLUDED.first_seen),
                            last_seen = GREATEST(v3_usage.last_seen, EXCLUDED.last_seen)",
                        &[
                            &delta.route,
                            &delta.since,
                            &delta.client,
                            &delta.user_agent,
                            &int(delta.calls),
                            &int(delta.errors),
                            &delta.first_seen,
                            &delta.last_seen,
                        ],
                    )
                    .await?;
                routes.insert(delta.route.clone());
            }
            for route in routes {
                fold_usage(&transaction, &route, max_clients).await?;
            }
            transaction.commit().await?;
            Ok(())
        })
    }

    fn usage(&self) -> StoreFuture<'_, Vec<UsageRow>> {
        self.bounded(async move {
            let found = self
                .client()
                .await?
                .query(
                    &format!("SELECT {USAGE_COLUMNS} FROM v3_usage ORDER BY route COLLATE \"C\", calls DESC"),
                    &[],
                )
                .await?;
            collect(found, rows::usage)
        })
    }
}

/// Folds a route's least recent clients into `others` until at most `max_clients` rows remain besides it.
async fn fold_usage<C: GenericClient>(client: &C, route: &str, max_clients: usize) -> Result<(), StoreError> {
    let others = super::usage::OTHERS;
    let count = uint(
        client
            .query_one(
                "SELECT COUNT(*) FROM v3_usage WHERE route = $1 AND client <> $2",
                &[&route, &others],
            )
            .await?
            .try_get(0)?,
    );
    let max_clients = max_clients as u64;
    if count <= max_clients {
        return Ok(());
    }
    let folded = client
        .query(
            "DELETE FROM v3_usage WHERE (route, client, user_agent) IN (
                SELECT route, client, user_agent FROM v3_usage WHERE route = $1 AND client <> $2
                ORDER BY last_seen ASC LIMIT $3)
             RETURNING calls, errors, first_seen, last_seen, since",
            &[&route, &others, &int(count - max_clients)],
        )
        .await?;
    for row in folded {
        let (calls, errors): (i64, i64) = (row.try_get(0)?, row.try_get(1)?);
        let (first_seen, last_seen, since): (String, String, String) =
            (row.try_get(2)?, row.try_get(3)?, row.try_get(4)?);
        client
            .execute(
                "INSERT INTO v3_usage (route, since, client, user_agent, calls, errors, first_seen, last_seen)
                 VALUES ($1, $2, $3, '', $4, $5, $6, $7)
                 ON CONFLICT (route, client, user_agent) DO UPDATE SET
                    calls = v3_usage.calls + EXCLUDED.calls, errors = v3_usage.errors + EXCLUDED.errors,
                    first_seen = LEAST(v3_usage.first_seen, EXCLUDED.first_seen),
                    last_seen = GREATEST(v3_usage.last_seen, EXCLUDED.last_seen)",
                &[&route, &since, &others, &calls, &errors, &first_seen, &last_seen],
            )
            .await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{fires_after_its_end, plan, AlertEvent, EventJob, Step};

    fn event(project_id: u64, fingerprint: Option<&str>, resolves: bool) -> AlertEvent {
        AlertEvent {
            project_id,
            integration_id: 1,
            fingerprint: fingerprint.map(str::to_owned),
            ended_at: resolves.then(|| "2026-11-24T10:00:00Z".to_owned()),
            title: "t".to_owned(),
            description: None,
            severity: "high".to_owned(),
            service: None,
            monitoring_tool: None,
            hosts_json: "[]".to_owned(),
            environment: None,
            started_at: "2026-11-24T09:00:00Z".to_owned(),
            payload_json: "{}".to_owned(),
            now: "2026-11-24T10:00:00Z".to_owned(),
        }
    }

    #[test]
    fn a_batch_is_planned_in_rounds_of_distinct_fingerprints_by_project_then_fingerprint() {
        use Step::{Fire, FireMany, Resolve};
        // (project, fingerprint, resolves) per event, in the order they came → the statements, in order.
        type Sent<'a> = Vec<(u64, Option<&'a str>, bool)>;
        let cases: Vec<(Sent, Vec<Step>)> = vec![
            (vec![], vec![]),
            (
                vec![(1, Some("b"), false), (1, Some("a"), false)],
                vec![FireMany(vec![1, 0])],
            ),
            (
                vec![(2, Some("a"), false), (1, Some("z"), false)],
                vec![FireMany(vec![1, 0])],
            ),
            // A repeat waits for the next round: one statement never touches a row twice.
            (
                vec![
                    (1, Some("a"), false),
                    (1, Some("a"), false),
                    (1, Some("b"), false),
                ],
                vec![FireMany(vec![0, 2]), FireMany(vec![1])],
            ),
            // Fire, resolve, fire again of one fingerprint: three rounds, in the order they came.
            (
                vec![(1, Some("a"), false), (1, Some("a"), true), (1, Some("a"), false)],
                vec![FireMany(vec![0]), Resolve(1), FireMany(vec![2])],
            ),
            // A resolve between fingerprints of one round splits its fires, keeping the row order.
            (
                vec![(1, Some("c"), false), (1, Some("b"), true), (1, Some("a"), false)],
                vec![FireMany(vec![2]), Resolve(1), FireMany(vec![0])],
            ),
            // No fingerprint: a fire is a new alert of its own; a resolve closes nothing.
            (
                vec![
                    (1, None, false),
                    (1, None, true),
                    (1, Some("a"), false),
                    (1, None, false),
                ],
                vec![FireMany(vec![2]), Fire(0), Fire(3)],
            ),
        ];
        for (given, expected) in cases {
            let events: Vec<AlertEvent> = given.iter().map(|&(p, f, r)| event(p, f, r)).collect();
            let refs: Vec<&AlertEvent> = events.iter().collect();
            assert_eq!(plan(&refs), expected, "for {given:?}");
        }
    }

    #[test]
    fn a_fire_after_an_end_of_its_fingerprint_waits_for_the_next_batch() {
        let job = |event: AlertEvent| EventJob {
            event,
            reply: tokio::sync::oneshot::channel().0,
        };
        let batch = vec![job(event(1, Some("a"), true)), job(event(1, Some("z"), false))];
        assert!(fires_after_its_end(&batch, &event(1, Some("a"), false)));
        // Another fingerprint, another project, another end, or a fire after a fire: the batch goes on.
        assert!(!fires_after_its_end(&batch, &event(1, Some("b"), false)));
        assert!(!fires_after_its_end(&batch, &event(2, Some("a"), false)));
        assert!(!fires_after_its_end(&batch, &event(1, Some("a"), true)));
        assert!(!fires_after_its_end(&batch, &event(1, Some("z"), false)));
        assert!(!fires_after_its_end(&batch, &event(1, None, false)));
    }
}
