//! From normalised alerts to stored outcomes and the intake's answer: each alert becomes one store write, in which
//! [`crate::store::lifecycle::decide`] says whether it creates, groups, resolves or finds no open alert; all writes of one
//! request are committed together by the store's group commit.

use serde::Serialize;

use super::integrations::Integration;
use super::normalized::NormalizedAlert;
use crate::store::{AlertEvent, EventOutcome, Store, StoreError};
use crate::util::time_format::format_time;

/// The answer entry for one alert: svc's `iid` and `title`, plus what svcgate did. Serialized as it is (fields
/// in this order), not through a `serde_json::Value`, whose map would hash every key of every answer.
#[derive(Debug, Serialize)]
pub struct AnswerEntry {
    /// The alert's per-project number; `null` when no alert was touched.
    iid: Option<u64>,
    /// The stored alert's title, else the received one.
    title: String,
    /// The stored alert's status; `null` when no alert was touched.
    status: Option<String>,
    /// Events grouped into the alert.
    events: u64,
    /// `created`, `grouped`, `resolved` or `no_open_alert`.
    outcome: &'static str,
    /// The hashed fingerprint the alert was grouped by.
    fingerprint: Option<String>,
    /// What was ignored or cut in the payload.
    warnings: Vec<String>,
}

impl AnswerEntry {
    /// What svcgate did with the alert: `created`, `grouped`, `resolved` or `no_open_alert`.
    pub fn outcome(&self) -> &'static str {
        self.outcome
    }

    /// The touched alert's per-project number; `None` when no alert was touched.
    pub fn iid(&self) -> Option<u64> {
        self.iid
    }
}

/// Applies `alerts` received through `integration`, answering one entry per alert in order.
pub async fn process(
    store: &dyn Store,
    integration: &Integration,
    mut alerts: Vec<NormalizedAlert>,
    now: time::OffsetDateTime,
) -> Result<Vec<AnswerEntry>, StoreError> {
    let now = format_time(now);
    let writes = alerts
        .iter_mut()
        .map(|alert| store.alert_event(event_of(integration, alert, &now)));
    let outcomes = futures_util::future::join_all(writes).await;
    // A payload of several alerts is answered as one: if any of them may be stored (its commit was sent, or it is
    // stored), the sender is not told that nothing was.
    let any_stored = outcomes
        .iter()
        .any(|outcome| matches!(outcome, Ok(_) | Err(StoreError::Undecided(_))));
    alerts
        .into_iter()
        .zip(outcomes)
        .map(|(alert, outcome)| match outcome {
            Ok(outcome) => Ok(entry(alert, outcome)),
            Err(StoreError::Unavailable(text)) if any_stored => Err(StoreError::Undecided(format!(
                "another alert of the same payload may be stored: {text}"
            ))),
            Err(error) => Err(error),
        })
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
        hosts_json: hosts_json(&alert.hosts),
        environment: alert.environment.take(),
        started_at: format_time(alert.started_at),
        payload_json: std::mem::take(&mut alert.payload),
        now: now.to_owned(),
    }
}

/// The hosts as the JSON array the store keeps.
fn hosts_json(hosts: &[String]) -> String {
    // A list of strings always serializes; the fallback is never taken.
    serde_json::to_string(hosts).unwrap_or_else(|_| "[]".to_owned())
}

/// The answer entry for one alert.
fn entry(alert: NormalizedAlert, outcome: EventOutcome) -> AnswerEntry {
    let (iid, title, status, events) = match outcome.alert {
        Some(stored) => (Some(stored.iid), stored.title, Some(stored.status), stored.events),
        None => (None, alert.title, None, 0),
    };
    AnswerEntry {
        iid,
        title,
        status,
        events,
        outcome: outcome.outcome,
        fingerprint: alert.fingerprint,
        warnings: alert.warnings,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::alerts::generic::normalize_generic;
    use crate::alerts::normalized::Edition;
    use crate::store::TouchedAlert;

    fn received(text: &str, edition: Edition) -> NormalizedAlert {
        let payload: serde_json::Value = serde_json::from_str(text).unwrap();
        let now = time::macros::datetime!(2026-11-22 10:00:00 UTC);
        normalize_generic(&payload, text, now, edition, None).unwrap()
    }

    #[test]
    fn an_answer_entry_shows_the_stored_alert_with_its_keys_in_order() {
        let alert = received(
            r#"{"title":"Disk full","fingerprint":"f","severity":"loud"}"#,
            Edition::Premium,
        );
        let fingerprint = alert.fingerprint.clone().unwrap();
        let stored = TouchedAlert {
            id: 7,
            project_id: 1,
            iid: 3,
            status: "triggered".to_owned(),
            title: "Disk full (first)".to_owned(),
            events: 2,
            incident_iid: None,
        };
        let outcome = EventOutcome {
            outcome: "grouped",
            alert: Some(stored),
        };
        let text = serde_json::to_string(&entry(alert, outcome)).unwrap();
        assert_eq!(
            text,
            format!(
                r#"{{"iid":3,"title":"Disk full (first)","status":"triggered","events":2,"outcome":"grouped","fingerprint":"{fingerprint}","warnings":["severity 'loud' is not known; critical was used"]}}"#
            )
        );
    }

    #[test]
    fn an_answer_entry_without_a_stored_alert_shows_the_received_title() {
        let alert = received(
            r#"{"title":"Disk full","end_time":"2026-11-22T10:00:00Z"}"#,
            Edition::Free,
        );
        let outcome = EventOutcome {
            outcome: "no_open_alert",
            alert: None,
        };
        let text = serde_json::to_string(&entry(alert, outcome)).unwrap();
        assert_eq!(
            text,
            r#"{"iid":null,"title":"Disk full","status":null,"events":0,"outcome":"no_open_alert","fingerprint":null,"warnings":[]}"#
        );
    }
}
