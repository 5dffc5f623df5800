//! The shared store: PostgreSQL, for several svcgate replicas behind one load balancer.
//!
//! Connections come from a `deadpool-postgres` pool (`database_pool_size`), over TLS through rustls unless the
//! URL says `sslmode=disable`. Reads and single writes take a pooled connection each. Incoming alerts go through
//! one writer task per replica that commits them in batches, as the SQLite store does, so that one commit (and one
//! WAL flush, `synchronous_commit` on) serves many senders; a sender is answered only after its batch committed.
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
//!   takes counters last, in project order; a batch holding a counter waits for no alert row.
//! - **The outbox** is claimed with `FOR UPDATE SKIP LOCKED` and a lease ([`super::OUTBOX_LEASE`]): a claimed call is
//!   not due again until its lease ends, so one incident is created once however many replicas run, and a
//!   replica that dies mid-call is taken over when its lease runs out.

use std::path::PathBuf;
use std::sync::Arc;

use deadpool_postgres::{GenericClient, Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio::sync::{mpsc, oneshot};
use tokio_postgres::error::SqlState;
use tokio_postgres::Row;

use super::{
    postgres_schema, AlertEvent, AlertPage, AlertQuery, AlertRecord, AlertSettings, EventOutcome, IdKind,
    IdRecord, IntegrationRecord, OAuthStateRecord, OutboxItem, OutboxState, PageSessionRecord, Store,
    StoreError, StoreFuture, UsageDelta, UsageRow,
};
use crate::lifecycle::{self, Action};

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
}

/// The PostgreSQL implementation of [`Store`].
pub struct PostgresStore {
    pool: Pool,
    events: mpsc::Sender<EventJob>,
    /// Counts the signals that integrations may have changed (see [`Store::integration_changes`]).
    integration_changes: tokio::sync::watch::Receiver<u64>,
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

/// The client-side TLS setup for the database: the system's roots plus `ca_bundle`.
fn tls(ca_bundle: Option<&PathBuf>) -> Result<tokio_postgres_rustls::MakeRustlsConnect, StoreError> {
    let mut roots = rustls::RootCertStore::empty();
    for certificate in rustls_native_certs::load_native_certs().certs {
        // A system certificate rustls cannot use is skipped, as every rustls client does.
        drop(roots.add(certificate));
    }
    if let Some(path) = ca_bundle {
        for certificate in crate::upstream::read_certs("database_ca_bundle", path)
            .map_err(|error| StoreError::Unavailable(error.to_string()))?
        {
            roots
                .add(certificate)
                .map_err(|error| StoreError::Unavailable(format!("database_ca_bundle: {error}")))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|error| StoreError::Unavailable(error.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

impl PostgresStore {
    /// Connects, applies the schema's migrations (once, whichever replica comes first) and starts the writer.
    pub async fn connect(options: &PostgresOptions) -> Result<Self, StoreError> {
        let mut config: tokio_postgres::Config = options
            .url
            .parse()
            .map_err(|error| StoreError::Unavailable(format!("database_url: {error}")))?;
        // An alert is acknowledged only once its commit is durable, whatever the database's default says.
        let session_options = match config.get_options() {
            Some(given) => format!("{given} -c synchronous_commit=on"),
            None => "-c synchronous_commit=on".to_owned(),
        };
        config.options(&session_options);
        let manager_config = ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        };
        let tls = if config.get_ssl_mode() == tokio_postgres::config::SslMode::Disable {
            None
        } else {
            Some(tls(options.ca_bundle.as_ref())?)
        };
        let manager = match tls.clone() {
            None => Manager::from_config(config.clone(), tokio_postgres::NoTls, manager_config),
            Some(tls) => Manager::from_config(config.clone(), tls, manager_config),
        };
        let pool = Pool::builder(manager)
            .max_size(options.pool_size.max(2))
            .build()
            .map_err(|error| StoreError::Unavailable(format!("database pool: {error}")))?;
        {
            let mut client = pool.get().await?;
            postgres_schema::apply(&mut client).await?;
        }
        let (events, receiver) = mpsc::channel(MAX_BATCH * 4);
        tokio::spawn(write_events(pool.clone(), receiver));
        let (changed, integration_changes) = tokio::sync::watch::channel(0);
        tokio::spawn(listen_for_changes(config, tls, changed));
        Ok(PostgresStore {
            pool,
            events,
            integration_changes,
        })
    }

    /// Records `fingerprint` as the secret key's on first use, and refuses a different key later: integration
    /// keys sealed with one key cannot be opened with another.
    pub async fn check_key(&self, fingerprint: &str) -> Result<(), StoreError> {
        let client = self.pool.get().await?;
        client
            .execute(
                "INSERT INTO svcgate_meta (name, value) VALUES ('key_fingerprint', $1) ON CONFLICT (name) DO NOTHING",
                &[&fingerprint],
            )
            .await?;
        let stored: String = client
            .query_one(
                "SELECT value FROM svcgate_meta WHERE name = 'key_fingerprint'",
                &[],
            )
            .await?
            .try_get(0)?;
        if stored == fingerprint {
            Ok(())
        } else {
            Err(StoreError::KeyMismatch {
                stored,
                given: fingerprint.to_owned(),
            })
        }
    }

    async fn client(&self) -> Result<deadpool_postgres::Object, StoreError> {
        Ok(self.pool.get().await?)
    }

    /// A setting of the pool's sessions (`current_setting`), as PostgreSQL reports it.
    pub async fn setting(&self, name: &str) -> Result<String, StoreError> {
        Ok(self
            .client()
            .await?
            .query_one("SELECT current_setting($1)", &[&name])
            .await?
            .try_get(0)?)
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

/// The writer: takes the events waiting (up to [`MAX_BATCH`]) and commits them together.
async fn write_events(pool: Pool, mut receiver: mpsc::Receiver<EventJob>) {
    while let Some(first) = receiver.recv().await {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match receiver.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let events: Vec<&AlertEvent> = batch.iter().map(|job| &job.event).collect();
        match run_batch(&pool, &events).await {
            Ok(outcomes) => {
                for (job, outcome) in batch.into_iter().zip(outcomes) {
                    drop(job.reply.send(Ok(outcome)));
                }
            }
            // The batch was rolled back whole; each event is tried again alone, so that one event's failure is
            // its own answer only.
            Err(_) => {
                for job in batch {
                    let outcome = run_batch(&pool, &[&job.event]).await.and_then(|mut outcomes| {
                        outcomes
                            .pop()
                            .ok_or_else(|| StoreError::Unavailable("an event had no outcome".to_owned()))
                    });
                    drop(job.reply.send(outcome));
                }
            }
        }
    }
}

/// An event that does not resolve: creates the alert, with a provisional iid, or counts one more event of the open
/// alert of its fingerprint (`alerts_one_open`), in one statement; a created alert's incident is queued when `$13`
/// (the project's `create_incident`) says so.
const FIRE: &str = "WITH up AS (
        INSERT INTO alerts (project_id, iid, integration_id, fingerprint, status, title, description, severity,
            service, monitoring_tool, hosts, environment, started_at, events, last_event_at, payload, created_at,
            updated_at)
        VALUES ($1, -nextval('alert_provisional_iids'), $2, $3, 'triggered', $4, $5, $6, $7, $8, $9, $10, $11, 1,
            $12, $14, $12, $12)
        ON CONFLICT (project_id, fingerprint) WHERE status <> 'resolved' AND fingerprint IS NOT NULL
        DO UPDATE SET events = alerts.events + 1, last_event_at = EXCLUDED.last_event_at,
            updated_at = EXCLUDED.updated_at
        RETURNING id, project_id, iid, status, title, events, incident_iid, (xmax = 0) AS created
    ), incident AS (
        INSERT INTO outbox (kind, project_id, alert_id, next_attempt_at)
        SELECT 'create_incident', project_id, id, $12 FROM up WHERE created AND $13
    )
    SELECT id, project_id, iid, status, title, events, incident_iid, created FROM up";

/// An event that resolves: closes the open alert of its fingerprint, if any, and queues the closing of its
/// incident when `$5` (the project's `auto_close_incident`) says so.
const RESOLVE: &str = "WITH resolved AS (
        UPDATE alerts SET status = 'resolved', ended_at = $3, updated_at = $4
        WHERE project_id = $1 AND fingerprint = $2 AND status <> 'resolved'
        RETURNING id, project_id, iid, status, title, events, incident_iid
    ), closing AS (
        INSERT INTO outbox (kind, project_id, alert_id, next_attempt_at)
        SELECT 'close_incident', project_id, id, $4 FROM resolved WHERE incident_iid IS NOT NULL AND $5
    )
    SELECT id, project_id, iid, status, title, events, incident_iid FROM resolved";

/// Takes `$2` iids from a project's counter (creating it at the project's highest iid), locking it until commit;
/// answers the last one taken.
const TAKE_IIDS: &str = "INSERT INTO alert_iids (project_id, last_iid)
    VALUES ($1, (SELECT COALESCE(MAX(iid), 0) FROM alerts WHERE project_id = $1 AND iid > 0) + $2)
    ON CONFLICT (project_id) DO UPDATE SET last_iid = alert_iids.last_iid + $2
    RETURNING last_iid";

/// Gives created alerts their iids: `$1` their ids, `$2` their iids, in the same order.
const SET_IIDS: &str =
    "UPDATE alerts SET iid = given.iid FROM unnest($1::bigint[], $2::bigint[]) AS given(id, iid) WHERE alerts.id = given.id";

/// Applies `events` in one transaction, answering their outcomes in their order.
///
/// Pipelined statements (tokio-postgres sends statements issued together without waiting, and PostgreSQL runs them
/// in the order sent): the incident settings of the batch's projects; one statement per event, in the order the
/// events came, so that repeats, ends and new alerts of one fingerprint apply as they were sent, a new alert taking
/// a provisional iid; then, per project in project order, the iids of its new alerts from its counter, and the
/// commit. A project's counter row is so locked only from that last step to the commit, which is what lets several
/// replicas' batches of one project overlap. Numbers are given without gaps or duplicates: a batch that rolls back
/// gives its numbers back with the rest.
async fn run_batch(pool: &Pool, events: &[&AlertEvent]) -> Result<Vec<EventOutcome>, StoreError> {
    let mut client = pool.get().await?;
    let transaction = client.transaction().await?;
    let (settings, fire, resolve, take_iids, set_iids) = tokio::try_join!(
        transaction.prepare_cached(rows::SETTINGS_GET),
        transaction.prepare_cached(FIRE),
        transaction.prepare_cached(RESOLVE),
        transaction.prepare_cached(TAKE_IIDS),
        transaction.prepare_cached(SET_IIDS),
    )?;
    let mut projects: Vec<i64> = events.iter().map(|event| int(event.project_id)).collect();
    projects.sort_unstable();
    projects.dedup();
    let (settings, transaction_ref) = (&settings, &transaction);
    let found = futures_util::future::try_join_all(
        projects
            .iter()
            .map(|project| async move { transaction_ref.query_opt(settings, &[project]).await }),
    )
    .await?;
    let mut project_settings = std::collections::HashMap::new();
    for (project, row) in projects.iter().zip(found) {
        let settings = match row {
            Some(row) => rows::settings(&row)?,
            None => AlertSettings::default(),
        };
        project_settings.insert(*project, settings);
    }
    let settings_of = |event: &AlertEvent| {
        project_settings
            .get(&int(event.project_id))
            .copied()
            .unwrap_or_default()
    };
    // Statements go in one order, by project then fingerprint (each fingerprint's events in the order they came), so
    // that two replicas' batches lock the alert rows they share in the same order.
    let mut order: Vec<usize> = (0..events.len()).collect();
    order.sort_by(|&a, &b| {
        (events[a].project_id, &events[a].fingerprint).cmp(&(events[b].project_id, &events[b].fingerprint))
    });
    let statements = order.iter().map(|&index| {
        let event = events[index];
        let (fire, resolve) = (&fire, &resolve);
        let settings = settings_of(event);
        async move {
            let project_id = int(event.project_id);
            let row = match (&event.ended_at, &event.fingerprint) {
                (Some(ended_at), Some(fingerprint)) => {
                    transaction_ref
                        .query_opt(
                            resolve,
                            &[
                                &project_id,
                                fingerprint,
                                ended_at,
                                &event.now,
                                &settings.auto_close_incident,
                            ],
                        )
                        .await?
                }
                // An end without a fingerprint has no open alert to close.
                (Some(_), None) => None,
                (None, _) => Some(
                    transaction_ref
                        .query_one(
                            fire,
                            &[
                                &project_id,
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
                                &settings.create_incident,
                                &event.payload_json,
                            ],
                        )
                        .await?,
                ),
            };
            outcome(event, row.as_ref())
        }
    });
    let mut outcomes: Vec<Option<EventOutcome>> = (0..events.len()).map(|_| None).collect();
    let mut created: std::collections::BTreeMap<i64, Vec<usize>> = std::collections::BTreeMap::new();
    for (index, outcome) in order
        .iter()
        .zip(futures_util::future::try_join_all(statements).await?)
    {
        outcomes[*index] = Some(outcome);
    }
    let mut outcomes: Vec<EventOutcome> = outcomes
        .into_iter()
        .map(|outcome| outcome.ok_or_else(|| StoreError::Unavailable("an event had no outcome".to_owned())))
        .collect::<Result<_, _>>()?;
    // The alerts created in each project, in the order their statements ran.
    for &index in &order {
        let outcome = &outcomes[index];
        if outcome.outcome == "created" {
            created
                .entry(int(events[index].project_id))
                .or_default()
                .push(index);
        }
    }
    // Counters in project order, so that two batches never wait on each other's counters in a circle.
    let takes = created.iter().map(|(project, indexes)| {
        let take_iids = &take_iids;
        let count = i64::try_from(indexes.len()).unwrap_or(i64::MAX);
        async move { transaction_ref.query_one(take_iids, &[project, &count]).await }
    });
    let lasts = futures_util::future::try_join_all(takes).await?;
    let (mut ids, mut iids) = (Vec::new(), Vec::new());
    for ((_, indexes), last) in created.iter().zip(lasts) {
        let last: i64 = last.try_get(0)?;
        let first = last - i64::try_from(indexes.len()).unwrap_or(i64::MAX) + 1;
        for (offset, &index) in (0_i64..).zip(indexes) {
            if let Some(alert) = &outcomes[index].alert {
                ids.push(int(alert.id));
                iids.push(first + offset);
            }
        }
    }
    // Every answer about a new alert (its own, and those of later events of the batch that grouped into it or
    // resolved it) carries its number, not the provisional one.
    let numbered: std::collections::HashMap<u64, u64> = ids
        .iter()
        .zip(&iids)
        .map(|(id, iid)| (uint(*id), uint(*iid)))
        .collect();
    for alert in outcomes.iter_mut().filter_map(|outcome| outcome.alert.as_mut()) {
        if let Some(iid) = numbered.get(&alert.id) {
            alert.iid = *iid;
        }
    }
    if !ids.is_empty() {
        transaction.execute(&set_iids, &[&ids, &iids]).await?;
    }
    transaction.commit().await?;
    Ok(outcomes)
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
) {
    let signal = |changed: &tokio::sync::watch::Sender<u64>| changed.send_modify(|count| *count += 1);
    loop {
        let outcome = match &tls {
            None => listen_once(&config, tokio_postgres::NoTls, &changed, signal).await,
            Some(tls) => listen_once(&config, tls.clone(), &changed, signal).await,
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

/// One listening connection, until it fails or the store is dropped.
async fn listen_once<T>(
    config: &tokio_postgres::Config,
    tls: T,
    changed: &tokio::sync::watch::Sender<u64>,
    signal: impl Fn(&tokio::sync::watch::Sender<u64>),
) -> Result<(), tokio_postgres::Error>
where
    T: tokio_postgres::tls::MakeTlsConnect<tokio_postgres::Socket>,
    T::Stream: Send + 'static,
{
    let (client, mut connection) = config.connect(tls).await?;
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
    client
        .batch_execute(&format!("LISTEN {INTEGRATIONS_CHANNEL}"))
        .await?;
    // Whatever changed while this replica was not listening is picked up by one reload.
    signal(changed);
    loop {
        tokio::select! {
            notified = received.recv() => match notified {
                Some(()) => signal(changed),
                None => break,
            },
            () = changed.closed() => break,
        }
    }
    drop(client);
    match driver.await {
        Ok(outcome) => outcome,
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
    fn integration_changes(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        Some(self.integration_changes.clone())
    }

    fn replica_heartbeat(&self, replica: String) -> StoreFuture<'_, u64> {
        Box::pin(async move {
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
        Box::pin(async move {
            self.client().await?.query_one("SELECT 1", &[]).await?;
            Ok(())
        })
    }

    fn id_lookup(&self, kind: IdKind, id: u64) -> StoreFuture<'_, Option<IdRecord>> {
        Box::pin(async move {
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
        Box::pin(async move {
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
        Box::pin(async move {
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
        Box::pin(async move {
            let row = self
                .client()
                .await?
                .query_opt(rows::SESSION_GET, &[&token_hash])
                .await?;
            Ok(row.map(|row| row.try_get(0)).transpose()?)
        })
    }

    fn page_session_put(&self, session: PageSessionRecord) -> StoreFuture<'_, ()> {
        Box::pin(async move {
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
        Box::pin(async move {
            let row = self
                .client()
                .await?
                .query_opt(rows::PAGE_SESSION_GET, &[&id_hash, &now])
                .await?;
            Ok(match row {
                Some(row) => Some(PageSessionRecord {
                    id_hash,
                    sealed_token: row.try_get(0)?,
                    username: row.try_get(1)?,
                    csrf: row.try_get(2)?,
                    expires_at: row.try_get(3)?,
                    sealed_refresh_token: row.try_get(4)?,
                    token_expires_at: row.try_get(5)?,
                }),
                None => None,
            })
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
        Box::pin(async move {
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
        Box::pin(async move {
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
        Box::pin(async move {
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

    fn oauth_state_put(&self, record: OAuthStateRecord, now: String) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let client = self.client().await?;
            client.execute(rows::OAUTH_STATES_SWEEP, &[&now]).await?;
            client
                .execute(
                    rows::OAUTH_STATE_PUT,
                    &[
                        &record.state_hash,
                        &record.sealed_verifier,
                        &record.return_to,
                        &record.expires_at,
                    ],
                )
                .await?;
            Ok(())
        })
    }

    fn oauth_state_take(&self, state_hash: String, now: String) -> StoreFuture<'_, Option<OAuthStateRecord>> {
        Box::pin(async move {
            let row = self
                .client()
                .await?
                .query_opt(rows::OAUTH_STATE_TAKE, &[&state_hash, &now])
                .await?;
            Ok(match row {
                Some(row) => Some(OAuthStateRecord {
                    state_hash,
                    sealed_verifier: row.try_get(0)?,
                    return_to: row.try_get(1)?,
                    expires_at: row.try_get(2)?,
                }),
                None => None,
            })
        })
    }

    fn page_session_delete(&self, id_hash: String) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            self.client()
                .await?
                .execute(rows::PAGE_SESSION_DELETE, &[&id_hash])
                .await?;
            Ok(())
        })
    }

    fn page_sessions_sweep(&self, now: String) -> StoreFuture<'_, u64> {
        Box::pin(async move {
            let removed = self
                .client()
                .await?
                .execute(rows::PAGE_SESSIONS_SWEEP, &[&now])
                .await?;
            Ok(removed)
        })
    }

    fn integrations(&self) -> StoreFuture<'_, Vec<IntegrationRecord>> {
        Box::pin(async move {
            let rows = self.client().await?.query(rows::INTEGRATIONS_ALL, &[]).await?;
            collect(rows, rows::integration)
        })
    }

    fn integration_insert(&self, record: IntegrationRecord) -> StoreFuture<'_, IntegrationRecord> {
        Box::pin(with_notification(self, move |client| {
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
        Box::pin(with_notification(self, move |client| {
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
        Box::pin(with_notification(self, move |client| {
            Box::pin(async move {
                client.execute(rows::INTEGRATION_DELETE, &[&int(id)]).await?;
                Ok(())
            })
        }))
    }

    fn alert_event(&self, event: AlertEvent) -> StoreFuture<'_, EventOutcome> {
        Box::pin(async move {
            let (reply, answer) = oneshot::channel();
            self.events
                .send(EventJob { event, reply })
                .await
                .map_err(|_| StoreError::Unavailable("the alert writer has stopped".to_owned()))?;
            answer
                .await
                .map_err(|_| StoreError::Unavailable("the alert writer has stopped".to_owned()))?
        })
    }

    fn alert(&self, project_id: u64, iid: u64) -> StoreFuture<'_, Option<AlertRecord>> {
        Box::pin(async move {
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
        Box::pin(async move { alerts_list(&self.client().await?, &query).await })
    }

    fn alerts_by_environment(&self, project_id: u64) -> StoreFuture<'_, Vec<AlertRecord>> {
        Box::pin(async move {
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
        Box::pin(async move {
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
        Box::pin(async move { settings_get(&self.client().await?, project_id).await })
    }

    fn alert_settings_put(&self, project_id: u64, settings: AlertSettings) -> StoreFuture<'_, ()> {
        Box::pin(async move {
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
        Box::pin(async move {
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
        Box::pin(async move {
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

    fn outbox_retry(&self, id: u64, next_attempt_at: String, error: String) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            self.client()
                .await?
                .execute(rows::OUTBOX_RETRY, &[&int(id), &next_attempt_at, &error])
                .await?;
            Ok(())
        })
    }

    fn outbox_of(&self, alert_id: u64) -> StoreFuture<'_, Vec<OutboxState>> {
        Box::pin(async move {
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
        Box::pin(async move {
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
        Box::pin(async move {
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
