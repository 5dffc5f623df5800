//! Alert data in the SQLite store: integrations, alerts and their lifecycle, incident settings, the outbox.
//!
//! [`process_event`] carries out the lifecycle of one incoming alert as one write job, inside the writer's group
//! commit: it looks up the open alert of the event's fingerprint, [`lifecycle::decide`] says what to do (create,
//! group, resolve, or nothing), and this module does it. How "at most one open alert per project and fingerprint"
//! is held is told in [the store's module documentation](crate::store).

use std::sync::LazyLock;

use rusqlite::{params, Connection, OptionalExtension};

use crate::store::lifecycle::{self, Action};
use crate::store::rows::{self, ALERT_COLUMNS, OUTBOX_STATE_COLUMNS, TOUCHED_COLUMNS};
use crate::store::{
    AlertEvent, AlertPage, AlertQuery, AlertRecord, AlertSettings, EventOutcome, IntegrationName,
    IntegrationRecord, OutboxFailure, OutboxItem, OutboxState, TouchedAlert,
};

/// One integration's name by id, deleted or not.
pub fn integration_named(connection: &Connection, id: u64) -> rusqlite::Result<Option<IntegrationName>> {
    connection
        .prepare_cached(&rows::sqlite(rows::INTEGRATION_NAMED))?
        .query_row([id], |row| rows::integration_name(row))
        .optional()
}

/// Every integration.
pub fn integrations_all(connection: &Connection) -> rusqlite::Result<Vec<IntegrationRecord>> {
    let mut statement = connection.prepare(&rows::sqlite(rows::INTEGRATIONS_ALL))?;
    let rows = statement.query_map([], |row| rows::integration(row))?;
    rows.collect()
}

/// Inserts an integration (its id is ignored) and returns it with its id.
pub fn integration_insert(
    connection: &Connection,
    record: &IntegrationRecord,
) -> rusqlite::Result<IntegrationRecord> {
    let id: u64 = connection.query_row(
        &rows::sqlite(rows::INTEGRATION_INSERT),
        params![
            record.project_id,
            record.project_path,
            record.kind,
            record.name,
            record.active,
            record.endpoint_identifier,
            record.token_nonce,
            record.token_ciphertext,
            record.api_url,
            record.payload_example,
            record.payload_attribute_mapping,
            record.created_at,
            record.updated_at,
            record.one_per_project,
            record.payload_format,
            record.pending_confirmation,
        ],
        |row| row.get(0),
    )?;
    Ok(IntegrationRecord { id, ..record.clone() })
}

/// Replaces an integration's mutable fields.
pub fn integration_update(connection: &Connection, record: &IntegrationRecord) -> rusqlite::Result<usize> {
    connection.execute(
        &rows::sqlite(rows::INTEGRATION_UPDATE),
        params![
            record.id,
            record.name,
            record.active,
            record.token_nonce,
            record.token_ciphertext,
            record.api_url,
            record.payload_example,
            record.payload_attribute_mapping,
            record.updated_at,
            record.project_path,
            record.payload_format,
            record.pending_confirmation,
        ],
    )
}

/// Sets an integration's pending subscription confirmation alone.
pub fn integration_confirmation(
    connection: &Connection,
    id: u64,
    address: Option<&str>,
) -> rusqlite::Result<usize> {
    connection.execute(
        &rows::sqlite(rows::INTEGRATION_CONFIRMATION),
        rusqlite::params![id, address],
    )
}

/// Deletes an integration (its row stays, marked deleted).
pub fn integration_delete(connection: &Connection, id: u64) -> rusqlite::Result<usize> {
    connection.execute(&rows::sqlite(rows::INTEGRATION_DELETE), [id])
}

/// A project's incident settings (defaults when never set).
pub fn settings_get(connection: &Connection, project_id: u64) -> rusqlite::Result<AlertSettings> {
    Ok(connection
        .prepare_cached(&rows::sqlite(rows::SETTINGS_GET))?
        .query_row([project_id], |row| rows::settings(row))
        .optional()?
        .unwrap_or_default())
}

/// Stores a project's incident settings.
pub fn settings_put(
    connection: &Connection,
    project_id: u64,
    settings: AlertSettings,
) -> rusqlite::Result<()> {
    connection.execute(
        &rows::sqlite(rows::SETTINGS_PUT),
        params![project_id, settings.create_incident, settings.auto_close_incident],
    )?;
    Ok(())
}

fn open_alert(
    connection: &Connection,
    project_id: u64,
    fingerprint: &str,
) -> rusqlite::Result<Option<TouchedAlert>> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT {TOUCHED_COLUMNS} FROM alerts WHERE id = {} AND status != 'resolved'",
            super::open_alerts::OPEN_ALERT_ID
        )
    });
    connection
        .prepare_cached(&SQL)?
        .query_row(params![project_id, fingerprint], |row| rows::touched(row))
        .optional()
}

fn alert_by_id(connection: &Connection, id: u64) -> rusqlite::Result<AlertRecord> {
    connection
        .prepare_cached(&format!("SELECT {ALERT_COLUMNS} FROM alerts WHERE id = ?1"))?
        .query_row([id], |row| rows::alert(row))
}

fn enqueue(
    connection: &Connection,
    kind: &str,
    project_id: u64,
    alert_id: u64,
    now: &str,
) -> rusqlite::Result<()> {
    connection.execute(
        &rows::sqlite(rows::OUTBOX_ENQUEUE),
        params![kind, project_id, alert_id, now],
    )?;
    Ok(())
}

/// The lifecycle of one incoming alert (section 5 of the alert contract), as one write job: looks up the open
/// alert of the event's fingerprint, asks [`lifecycle::decide`] what to do, and does it.
///
/// Its writes that fire the open-alert triggers say `OR FAIL`: a failed constraint stops the statement without
/// undoing what it wrote before, which is safe because a failing job is always undone whole (the writer rolls back
/// its batch, or its savepoint). With the default `ABORT`, SQLite keeps a statement journal for every statement
/// that writes through a trigger, copying each page it is about to change: about 9.5 k instructions per new alert.
pub fn process_event(connection: &Connection, event: &AlertEvent) -> rusqlite::Result<EventOutcome> {
    // The answer's columns come from the open-alert lookup, or from the values just written: no row is read
    // back after a write (a cached read by id cost about 7 k instructions per alert).
    let open = match &event.fingerprint {
        Some(fingerprint) => open_alert(connection, event.project_id, fingerprint)?,
        None => None,
    };
    let action = lifecycle::decide(
        open,
        lifecycle::Event {
            fingerprint: event.fingerprint.as_deref(),
            ended_at: event.ended_at.as_deref(),
        },
    );
    let outcome = action.outcome();
    let alert = match action {
        Action::Ignore => None,
        Action::Resolve { alert, ended_at } => Some(resolve(connection, alert, ended_at, event)?),
        Action::Group(alert) => Some(group(connection, alert, event)?),
        Action::Create => Some(create(connection, event)?),
    };
    Ok(EventOutcome { outcome, alert })
}

/// [`Action::Resolve`]: closes the open alert, keeping the resolving payload as its latest (the alert's page shows
/// what ended it), and asks for its incident to be closed when the project wants that.
fn resolve(
    connection: &Connection,
    mut alert: TouchedAlert,
    ended_at: &str,
    event: &AlertEvent,
) -> rusqlite::Result<TouchedAlert> {
    let changed = connection
        .prepare_cached(
            "UPDATE OR FAIL alerts SET status = 'resolved', ended_at = ?2, updated_at = ?3, payload = ?4
            WHERE id = ?1",
        )?
        .execute(params![alert.id, ended_at, event.now, event.payload_json])?;
    one_row_changed(changed)?;
    alert.status = "resolved".to_owned();
    if alert.incident_iid.is_some() && settings_get(connection, event.project_id)?.auto_close_incident {
        enqueue(
            connection,
            "close_incident",
            alert.project_id,
            alert.id,
            &event.now,
        )?;
    }
    Ok(alert)
}

/// [`Action::Group`]: counts one more occurrence of the open alert.
fn group(
    connection: &Connection,
    mut alert: TouchedAlert,
    event: &AlertEvent,
) -> rusqlite::Result<TouchedAlert> {
    let changed = connection
        .prepare_cached(
            "UPDATE alerts SET events = events + 1, last_event_at = ?2, updated_at = ?2 WHERE id = ?1",
        )?
        .execute(params![alert.id, event.now])?;
    one_row_changed(changed)?;
    alert.events += 1;
    Ok(alert)
}

/// [`Action::Create`]: stores a new open alert with the next per-project iid, and asks for an incident when the
/// project wants one. The open-alert table's primary key refuses it should another open alert of its fingerprint
/// exist after all.
fn create(connection: &Connection, event: &AlertEvent) -> rusqlite::Result<TouchedAlert> {
    let iid: u64 = connection
        .prepare_cached("SELECT COALESCE(MAX(iid), 0) + 1 FROM alerts WHERE project_id = ?1")?
        .query_row([event.project_id], |row| row.get(0))?;
    connection
        .prepare_cached(
            "INSERT OR FAIL INTO alerts (project_id, iid, integration_id, fingerprint, status, title, description,
            severity, service, monitoring_tool, hosts, environment, started_at, events, last_event_at, payload,
            created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, 'triggered', ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 1, ?13, ?14, ?13, ?13)",
        )?
        .execute(params![
            event.project_id,
            iid,
            event.integration_id,
            event.fingerprint,
            event.title,
            event.description,
            event.severity,
            event.service,
            event.monitoring_tool,
            event.hosts_json,
            event.environment,
            event.started_at,
            event.now,
            event.payload_json,
        ])?;
    // The row's id: the trigger that records an open alert inserts too, but `last_insert_rowid` goes back to the
    // outer insert's row when the trigger ends.
    let alert = TouchedAlert {
        id: connection.last_insert_rowid() as u64,
        project_id: event.project_id,
        iid,
        status: "triggered".to_owned(),
        title: event.title.clone(),
        events: 1,
        incident_iid: None,
    };
    if settings_get(connection, event.project_id)?.create_incident {
        enqueue(
            connection,
            "create_incident",
            alert.project_id,
            alert.id,
            &event.now,
        )?;
    }
    Ok(alert)
}

/// An update by id that found its row (it was read in the same transaction) changed exactly one.
fn one_row_changed(changed: usize) -> rusqlite::Result<()> {
    match changed {
        1 => Ok(()),
        _ => Err(rusqlite::Error::QueryReturnedNoRows),
    }
}

/// One alert by its per-project iid.
pub fn alert_get(
    connection: &Connection,
    project_id: u64,
    iid: u64,
) -> rusqlite::Result<Option<AlertRecord>> {
    connection
        .query_row(
            &format!("SELECT {ALERT_COLUMNS} FROM alerts WHERE project_id = ?1 AND iid = ?2"),
            params![project_id, iid],
            |row| rows::alert(row),
        )
        .optional()
}

/// Sets an alert's status: `resolved` sets `ended_at`, any other status clears it. Answers the alert, or
/// `Ok(None)` when it does not exist. Reopening can collide with a newer open alert of the same fingerprint
/// (the open-alert table's primary key refuses it).
pub fn alert_set_status(
    connection: &Connection,
    project_id: u64,
    iid: u64,
    status: &str,
    now: &str,
) -> rusqlite::Result<Option<AlertRecord>> {
    let Some(alert) = alert_get(connection, project_id, iid)? else {
        return Ok(None);
    };
    let ended_at = if status == "resolved" {
        Some(alert.ended_at.clone().unwrap_or_else(|| now.to_owned()))
    } else {
        None
    };
    connection.execute(
        &rows::sqlite(rows::ALERT_SET_STATUS),
        params![alert.id, status, ended_at, now],
    )?;
    if status == "resolved"
        && alert.status != "resolved"
        && alert.incident_iid.is_some()
        && settings_get(connection, project_id)?.auto_close_incident
    {
        enqueue(connection, "close_incident", alert.project_id, alert.id, now)?;
    }
    alert_get(connection, project_id, iid)
}

/// A page of a project's alerts.
pub fn alerts_list(connection: &Connection, query: &AlertQuery) -> rusqlite::Result<AlertPage> {
    let statements = rows::alert_list(query, "");
    let mut values: Vec<rusqlite::types::Value> = vec![rusqlite::types::Value::Integer(
        i64::try_from(query.project_id).unwrap_or(i64::MAX),
    )];
    values.extend(statements.texts.iter().cloned().map(rusqlite::types::Value::Text));
    let counts = connection
        .prepare(&statements.counts)?
        .query_map(rusqlite::params_from_iter(values.iter()), |row| {
            rows::status_count(row)
        })?
        .collect::<rusqlite::Result<_>>()?;
    let total: u64 = connection.query_row(
        &statements.total,
        rusqlite::params_from_iter(values.iter()),
        |row| row.get(0),
    )?;
    let alerts = connection
        .prepare(&statements.page)?
        .query_map(rusqlite::params_from_iter(values.iter()), |row| rows::alert(row))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(AlertPage {
        alerts,
        total,
        counts,
    })
}

/// Open alerts of a project that name an environment, most severe first.
pub fn open_by_environment(connection: &Connection, project_id: u64) -> rusqlite::Result<Vec<AlertRecord>> {
    let mut statement = connection.prepare(&format!(
        "SELECT {ALERT_COLUMNS} FROM alerts WHERE project_id = ?1 AND status != 'resolved' AND environment IS NOT NULL
         ORDER BY environment, CASE severity WHEN 'critical' THEN 0 WHEN 'high' THEN 1 WHEN 'medium' THEN 2
            WHEN 'low' THEN 3 WHEN 'info' THEN 4 ELSE 5 END, started_at DESC"
    ))?;
    let found = statement.query_map([project_id], |row| rows::alert(row))?;
    found.collect()
}

/// Claims the outbox items due at `now`, oldest first, until `lease_until`: a claimed item is due again only when
/// its lease ends (the process stopped mid-call) or when it is retried or done. The PostgreSQL store claims the
/// same way, so that one call is made once however many replicas run.
pub fn outbox_claim(
    connection: &Connection,
    now: &str,
    lease_until: &str,
    limit: u32,
) -> rusqlite::Result<Vec<OutboxItem>> {
    let mut statement = connection.prepare_cached(
        "SELECT id, kind, attempts, alert_id FROM outbox WHERE done_at IS NULL AND next_attempt_at <= ?1
         ORDER BY next_attempt_at, id LIMIT ?2",
    )?;
    let rows = statement.query_map(params![now, limit], |row| {
        Ok((
            row.get::<_, u64>(0)?,
            row.get::<_, String>(1)?,
            row.get::<_, u64>(2)?,
            row.get::<_, u64>(3)?,
        ))
    })?;
    let due: Vec<(u64, String, u64, u64)> = rows.collect::<rusqlite::Result<_>>()?;
    let mut items = Vec::with_capacity(due.len());
    for (id, kind, attempts, alert_id) in due {
        connection.execute(
            "UPDATE outbox SET next_attempt_at = ?2 WHERE id = ?1",
            params![id, lease_until],
        )?;
        items.push(OutboxItem {
            id,
            kind,
            attempts,
            alert: alert_by_id(connection, alert_id)?,
            claim: lease_until.to_owned(),
        });
    }
    Ok(items)
}

/// Marks an outbox item under `claim` done; a created incident's iid is stored on its alert. Answers `false`,
/// changing nothing, for an item no longer under `claim`.
pub fn outbox_done(
    connection: &Connection,
    id: u64,
    claim: &str,
    alert_id: u64,
    incident_iid: Option<u64>,
    now: &str,
) -> rusqlite::Result<bool> {
    if connection.execute(&rows::sqlite(rows::OUTBOX_DONE), params![id, now, claim])? == 0 {
        return Ok(false);
    }
    if let Some(iid) = incident_iid {
        connection.execute(&rows::sqlite(rows::ALERT_SET_INCIDENT), params![alert_id, iid])?;
        // An alert resolved before its incident existed still gets the incident closed.
        let alert = alert_by_id(connection, alert_id)?;
        if alert.status == "resolved" && settings_get(connection, alert.project_id)?.auto_close_incident {
            enqueue(connection, "close_incident", alert.project_id, alert.id, now)?;
        }
    }
    Ok(true)
}

/// Removes at most `limit` of the incident calls that finished before `done_before`; answers how many.
pub fn outbox_sweep(connection: &Connection, done_before: &str, limit: u32) -> rusqlite::Result<u64> {
    let removed = connection.execute(&rows::sqlite(rows::OUTBOX_SWEEP), params![done_before, limit])?;
    Ok(u64::try_from(removed).unwrap_or(u64::MAX))
}

/// Records a failed attempt under `claim` and when to try again. Answers `false`, changing nothing, for an item
/// no longer under `claim`.
pub fn outbox_retry(
    connection: &Connection,
    id: u64,
    claim: &str,
    next_attempt_at: &str,
    error: &str,
) -> rusqlite::Result<bool> {
    let claimed = connection.execute(
        &rows::sqlite(rows::OUTBOX_RETRY),
        params![id, next_attempt_at, error, claim],
    )?;
    Ok(claimed > 0)
}

/// The failing incident calls of an integration's alerts, newest first.
pub fn outbox_failures(
    connection: &Connection,
    integration_id: u64,
    limit: u32,
) -> rusqlite::Result<Vec<OutboxFailure>> {
    // Only pending calls can be failing, and the partial index `outbox_due` holds exactly those: without it
    // (SQLite has no statistics unless ANALYZE ran) every done call would be scanned on each page view.
    let statement_text = rows::sqlite(rows::OUTBOX_FAILURES).replacen(
        "FROM outbox o ",
        "FROM outbox o INDEXED BY outbox_due ",
        1,
    );
    let mut statement = connection.prepare(&statement_text)?;
    let found = statement.query_map(rusqlite::params![integration_id, limit], |row| {
        rows::outbox_failure(row)
    })?;
    found.collect()
}

/// The incident calls of an alert.
pub fn outbox_of(connection: &Connection, alert_id: u64) -> rusqlite::Result<Vec<OutboxState>> {
    let mut statement = connection.prepare(&format!(
        "SELECT {OUTBOX_STATE_COLUMNS} FROM outbox WHERE alert_id = $1 ORDER BY id"
    ))?;
    let found = statement.query_map([alert_id], |row| rows::outbox_state(row))?;
    found.collect()
}
