//! From normalised alerts to stored outcomes: each alert becomes one lifecycle write (created, grouped,
//! resolved, or no open alert), all of one request committed together by the store's group commit.

use serde_json::{json, Value};

use super::integrations::Integration;
use super::payload::{format_time, NormalizedAlert};
use crate::store::{AlertEvent, EventOutcome, Store, StoreError};

/// Applies `alerts` received through `integration`, answering one entry per alert in order.
pub async fn process(
    store: &dyn Store,
    integration: &Integration,
    mut alerts: Vec<NormalizedAlert>,
    now: time::OffsetDateTime,
) -> Result<Vec<Value>, StoreError> {
    let now = format_time(now);
    let writes = alerts
        .iter_mut()
        .map(|alert| store.alert_event(event_of(integration, alert, &now)));
    let outcomes = futures_util::future::join_all(writes).await;
    alerts
        .iter()
        .zip(outcomes)
        .map(|(alert, outcome)| outcome.map(|outcome| entry(alert, &outcome)))
        .collect()
}

/// The store's event for `alert`. What the answer does not show (payload, description, service, tool, hosts,
/// environment) moves into the event; the title and fingerprint are copied.
fn event_of(integration: &Integration, alert: &mut NormalizedAlert, now: &str) -> AlertEvent {
    AlertEvent {
        project_id: integration.record.project_id,
        integration_id: integration.record.id,
        fingerprint: alert.fingerprint.clone(),
        ended_at: alert.ended_at.map(format_time),
        title: alert.title.clone(),
        description: alert.description.take(),
        severity: alert.severity.as_str().to_owned(),
        service: alert.service.take(),
        monitoring_tool: alert.monitoring_tool.take(),
        hosts_json: Value::from(std::mem::take(&mut alert.hosts)).to_string(),
        environment: alert.environment.take(),
        started_at: format_time(alert.started_at),
        payload_json: std::mem::take(&mut alert.payload),
        now: now.to_owned(),
    }
}

/// The answer entry for one alert: svc's `iid` and `title`, plus what svcgate did.
fn entry(alert: &NormalizedAlert, outcome: &EventOutcome) -> Value {
    let stored = outcome.alert.as_ref();
    json!({
        "iid": stored.map(|alert| alert.iid),
        "title": stored.map_or(alert.title.as_str(), |alert| alert.title.as_str()),
        "status": stored.map(|alert| alert.status.as_str()),
        "events": stored.map_or(0, |alert| alert.events),
        "outcome": outcome.outcome,
        "fingerprint": alert.fingerprint,
        "warnings": alert.warnings,
    })
}
