//! The batched alert writer of the PostgreSQL store: writer tasks that each keep one connection, take the
//! incoming alerts waiting on their channel and commit them together, a few pipelined statements per batch (see
//! [`plan`] and [`run_batch`]). How this holds the lifecycle's rules with many replicas is told in
//! [the PostgreSQL store's documentation](super).

use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::Pool;
use tokio::sync::mpsc;
use tokio_postgres::error::SqlState;
use tokio_postgres::Row;

use super::{int, uint, Abandoned, EventJob, MAX_BATCH};
use crate::store::lifecycle::{self, Action};
use crate::store::rows;
use crate::store::{AlertEvent, AlertSettings, EventOutcome, StoreError};

/// A writer's own connection: taken from the pool once and kept while it works, so that every batch goes to the
/// same PostgreSQL backend. (Taking one from the pool per batch handed the batches to the pool's connections in
/// turn: row 7 of `bench/` measured 10.5k alerts/s that way, against 12.5k on one connection kept.)
pub(super) struct WriterConnection {
    pub(super) pool: Pool,
    pub(super) client: Option<deadpool_postgres::Object>,
    /// Longest the wait for a connection, and then the batch, may each take (`database_timeout`).
    pub(super) timeout: Duration,
    /// Marked when a batch fails with its connection in hand.
    pub(super) abandoned: Arc<Abandoned>,
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
pub(super) async fn write_events(
    mut connection: WriterConnection,
    mut receiver: mpsc::Receiver<EventJob>,
    commits: crate::store::commits::CommitObserver,
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
