//! The Alertmanager webhook (contract `alerts.md` section 7): an envelope of alerts, one [`NormalizedAlert`] per
//! element. Check 7 of the receiving order for Prometheus integrations: a body that is not an envelope is refused;
//! inside an element, every field problem is a default plus a warning.

use serde_json::{Map, Value};
use time::OffsetDateTime;

use super::fingerprint::fingerprint_of;
use super::mapping::AttributeMapping;
use super::normalized::{
    hosts, present, severity, start_time, text, type_name, Attribute, Edition, NormalizedAlert, Severity,
    DEFAULT_TITLE, DESCRIPTION_MAX_CHARS, IGNORED, TITLE_MAX_CHARS,
};
use super::payload::{parse_json, PayloadError};
use crate::util::time_format::parse_time;

/// `monitoring_tool` of every Alertmanager alert.
pub const PROMETHEUS_MONITORING_TOOL: &str = "Prometheus";

/// The payload reader of Prometheus integrations (their line in [`super::kinds::KINDS`]): the body as JSON, then
/// [`normalize_prometheus`]. Custom mappings are not offered for them: `_mapping` is always `None`.
pub fn read(
    bytes: &[u8],
    max_depth: usize,
    received_at: OffsetDateTime,
    edition: Edition,
    _mapping: Option<&AttributeMapping>,
) -> Result<Vec<NormalizedAlert>, PayloadError> {
    parse_json(bytes, max_depth).and_then(|(value, _)| normalize_prometheus(&value, received_at, edition))
}

/// Normalizes an Alertmanager webhook (version 4): one [`NormalizedAlert`] per element of `alerts`, in order, none
/// dropped. Refused ([`PayloadError::NotAnEnvelope`], 422) when the body is not an object with an `alerts` array
/// of objects. Prometheus alerts always carry a fingerprint, whatever the edition.
pub fn normalize_prometheus(
    envelope: &Value,
    received_at: OffsetDateTime,
    _edition: Edition,
) -> Result<Vec<NormalizedAlert>, PayloadError> {
    let object = envelope
        .as_object()
        .ok_or_else(|| not_an_envelope(format!("the body is {}, not an object", type_name(envelope))))?;
    let alerts = match object.get("alerts") {
        Some(Value::Array(alerts)) => alerts,
        Some(other) => {
            return Err(not_an_envelope(format!(
                "alerts is {}, not an array",
                type_name(other)
            )))
        }
        None => return Err(not_an_envelope("there is no alerts array".to_owned())),
    };
    let envelope_status = object.get("status").and_then(Value::as_str);
    alerts
        .iter()
        .enumerate()
        .map(|(index, element)| prometheus_alert(index, element, envelope_status, received_at))
        .collect()
}

fn not_an_envelope(reason: String) -> PayloadError {
    PayloadError::NotAnEnvelope(reason)
}

fn prometheus_alert(
    index: usize,
    element: &Value,
    envelope_status: Option<&str>,
    received_at: OffsetDateTime,
) -> Result<NormalizedAlert, PayloadError> {
    let object = element.as_object().ok_or_else(|| {
        not_an_envelope(format!(
            "alerts[{index}] is {}, not an object",
            type_name(element)
        ))
    })?;
    let mut warnings = Vec::new();
    let w = &mut warnings;
    let labels = sub_object(object, "labels", w);
    let annotations = sub_object(object, "annotations", w);
    let resolved = object
        .get("status")
        .and_then(Value::as_str)
        .or(envelope_status)
        .is_some_and(|status| status.trim().eq_ignore_ascii_case("resolved"));
    let alert = NormalizedAlert {
        title: prometheus_title(labels, annotations, w),
        description: text(
            field(annotations, "description"),
            "annotations.description",
            DESCRIPTION_MAX_CHARS,
            IGNORED,
            w,
        ),
        started_at: start_time(present(object.get("startsAt")), "startsAt", received_at, w),
        ended_at: resolved.then(|| resolved_end(present(object.get("endsAt")), received_at, w)),
        service: None,
        monitoring_tool: Some(PROMETHEUS_MONITORING_TOOL.to_owned()),
        hosts: hosts(field(labels, "instance"), "labels.instance", w),
        severity: severity(
            field(labels, "severity"),
            "labels.severity",
            Severity::parse_prometheus,
            w,
        ),
        fingerprint: Some(prometheus_fingerprint(object, labels, w)),
        environment: text(
            field(labels, Attribute::EnvironmentName.key()),
            &format!("labels.{}", Attribute::EnvironmentName.key()),
            usize::MAX,
            IGNORED,
            w,
        ),
        payload: element.to_string(),
        warnings,
    };
    Ok(alert)
}

/// `labels` or `annotations` of an element; `None` when absent, or not an object (with a warning).
fn sub_object<'a>(
    object: &'a Map<String, Value>,
    key: &str,
    warnings: &mut Vec<String>,
) -> Option<&'a Map<String, Value>> {
    match present(object.get(key))? {
        Value::Object(map) => Some(map),
        other => {
            warnings.push(format!(
                "{key} is {}, not an object; it was ignored",
                type_name(other)
            ));
            None
        }
    }
}

/// The present value of `key` in an optional map.
fn field<'a>(map: Option<&'a Map<String, Value>>, key: &str) -> Option<&'a Value> {
    present(map?.get(key))
}

/// `annotations.title`, else `annotations.summary`, else `labels.alertname`, else the default title.
fn prometheus_title(
    labels: Option<&Map<String, Value>>,
    annotations: Option<&Map<String, Value>>,
    warnings: &mut Vec<String>,
) -> String {
    let candidates = [
        ("annotations.title", field(annotations, "title")),
        ("annotations.summary", field(annotations, "summary")),
        ("labels.alertname", field(labels, "alertname")),
    ];
    candidates
        .into_iter()
        .find_map(|(name, value)| {
            text(
                value,
                name,
                TITLE_MAX_CHARS,
                "the next title source was used",
                warnings,
            )
        })
        .unwrap_or_else(|| DEFAULT_TITLE.to_owned())
}

/// The end of a resolved element: `endsAt`, or the time of receipt when it is missing, unparseable or Go's zero
/// time (which Alertmanager sends for alerts that have not ended).
fn resolved_end(
    value: Option<&Value>,
    received_at: OffsetDateTime,
    warnings: &mut Vec<String>,
) -> OffsetDateTime {
    let parsed = value
        .and_then(Value::as_str)
        .and_then(parse_time)
        .filter(|t| t.year() > 1);
    parsed.unwrap_or_else(|| {
        warnings.push(
            "endsAt of a resolved alert is missing or not a time; the time of receipt was used".to_owned(),
        );
        received_at
    })
}

/// The sender's `fingerprint` string hashed (so it is always 64 hex digits), else the hash of the labels.
fn prometheus_fingerprint(
    object: &Map<String, Value>,
    labels: Option<&Map<String, Value>>,
    warnings: &mut Vec<String>,
) -> String {
    let labels_hash = || fingerprint_of(&Value::Object(labels.cloned().unwrap_or_default()));
    match present(object.get("fingerprint")) {
        Some(value @ Value::String(_)) => fingerprint_of(value),
        Some(other) => {
            warnings.push(format!(
                "fingerprint is {}, not a string; the hash of the labels was used",
                type_name(other)
            ));
            labels_hash()
        }
        None => labels_hash(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::alerts::fingerprint::fingerprint_of;
    use crate::alerts::normalized::*;
    use crate::alerts::payload::*;
    use crate::alerts::test_support::*;
    use proptest::prelude::*;
    use serde_json::json;
    use serde_json::Value;
    use time::macros::datetime;
    use time::OffsetDateTime;

    #[test]
    fn prometheus_envelope_errors() {
        let cases: Vec<(Value, &str)> = vec![
            (json!([]), "the body is an array, not an object"),
            (json!("x"), "the body is a string, not an object"),
            (json!({"status": "firing"}), "there is no alerts array"),
            (json!({"alerts": {"0": {}}}), "alerts is an object, not an array"),
            (json!({"alerts": null}), "alerts is null, not an array"),
            (
                json!({"alerts": [{}, "x"]}),
                "alerts[1] is a string, not an object",
            ),
        ];
        for (envelope, reason) in cases {
            assert_eq!(
                normalize_prometheus(&envelope, RECEIVED, Edition::Premium),
                Err(PayloadError::NotAnEnvelope(reason.to_owned())),
                "for {envelope}"
            );
        }
        assert_eq!(prometheus(json!([])), Vec::new());
    }

    #[test]
    fn prometheus_processes_every_element_in_order() {
        let alerts = prometheus(json!([
            {"status": "firing", "labels": {"alertname": "A"}},
            {"status": "resolved", "labels": {"alertname": "B"}, "endsAt": "2026-11-22T09:59:00Z"},
            {"status": "firing", "labels": {"alertname": "C"}},
        ]));
        let titles: Vec<&str> = alerts.iter().map(|a| a.title.as_str()).collect();
        assert_eq!(titles, ["A", "B", "C"]);
        let resolving: Vec<bool> = alerts.iter().map(NormalizedAlert::is_resolve).collect();
        assert_eq!(resolving, [false, true, false]);
    }

    #[test]
    fn prometheus_reads_every_field() {
        let element = json!({
            "status": "firing",
            "labels": {"alertname": "HighLatency", "severity": "warning", "instance": "web1:9100",
                       "svc_environment_name": "production", "job": "node"},
            "annotations": {"title": "Latency high", "summary": "s", "description": "p99 above 1s"},
            "startsAt": "2026-11-22T09:58:00.123456Z",
            "endsAt": "0001-01-01T00:00:00Z",
            "generatorURL": "http://prom/graph",
            "fingerprint": "5d3c1ad5a2f0a7e2"
        });
        let alert = prometheus(json!([element.clone()])).remove(0);
        assert_eq!(alert.title, "Latency high");
        assert_eq!(alert.description.as_deref(), Some("p99 above 1s"));
        assert_eq!(alert.severity, Severity::Low);
        assert_eq!(alert.started_at, datetime!(2026-11-22 09:58:00.123456 UTC));
        assert_eq!(
            alert.ended_at, None,
            "a firing alert with Go's zero endsAt does not resolve"
        );
        assert_eq!(alert.environment.as_deref(), Some("production"));
        assert_eq!(alert.monitoring_tool.as_deref(), Some("Prometheus"));
        assert_eq!(alert.service, None);
        assert_eq!(alert.hosts, ["web1:9100"]);
        assert_eq!(
            alert.fingerprint,
            Some(fingerprint_of(&json!("5d3c1ad5a2f0a7e2")))
        );
        assert_eq!(payload_value(&alert), element);
        assert!(alert.warnings.is_empty(), "{:?}", alert.warnings);
    }

    #[test]
    fn prometheus_title_sources_in_order() {
        let long_title = "x".repeat(200);
        let cases: Vec<(Value, Value, &str, usize)> = vec![
            (
                json!({"title": "T", "summary": "S"}),
                json!({"alertname": "A"}),
                "T",
                0,
            ),
            (json!({"summary": "S"}), json!({"alertname": "A"}), "S", 0),
            (json!({"title": ""}), json!({"alertname": "A"}), "A", 0),
            (json!({}), json!({}), DEFAULT_TITLE, 0),
            (json!({"title": 5, "summary": "S"}), json!({}), "S", 1),
            (
                json!({"summary": "x".repeat(300)}),
                json!({}),
                long_title.as_str(),
                1,
            ),
        ];
        for (annotations, labels, want, warnings) in cases {
            let alert = prometheus(json!([{"annotations": annotations, "labels": labels}])).remove(0);
            assert_eq!(alert.title, want, "for {annotations} {labels}");
            assert_eq!(alert.warnings.len(), warnings, "{:?}", alert.warnings);
        }
    }

    #[test]
    fn prometheus_severity_from_labels() {
        let cases: [(Value, Severity, usize); 6] = [
            (json!({"severity": "page"}), Severity::High, 0),
            (json!({"severity": "P3"}), Severity::Medium, 0),
            (json!({"severity": "notice"}), Severity::Info, 0),
            (json!({"severity": "info"}), Severity::Info, 0),
            (json!({}), Severity::Critical, 0),
            (json!({"severity": "loud"}), Severity::Critical, 1),
        ];
        for (labels, want, warnings) in cases {
            let alert = prometheus(json!([{ "labels": labels }])).remove(0);
            assert_eq!(alert.severity, want, "for {labels}");
            assert_eq!(alert.warnings.len(), warnings);
        }
        let warned = prometheus(json!([{"labels": {"severity": "loud"}}])).remove(0);
        assert_eq!(
            warned.warnings,
            ["labels.severity 'loud' is not known; critical was used"]
        );
    }

    #[test]
    fn prometheus_firing_versus_resolved() {
        let ends = json!("2026-11-22T09:59:00Z");
        let ended = Some(datetime!(2026-11-22 09:59:00 UTC));
        let zero = json!("0001-01-01T00:00:00Z");
        let cases: Vec<(Value, Option<OffsetDateTime>, usize)> = vec![
            (json!({"status": "firing", "endsAt": zero}), None, 0),
            (json!({"status": "firing", "endsAt": ends}), None, 0),
            (json!({"status": "resolved", "endsAt": ends}), ended, 0),
            (json!({"status": "RESOLVED", "endsAt": ends}), ended, 0),
            (json!({"status": "resolved"}), Some(RECEIVED), 1),
            (json!({"status": "resolved", "endsAt": zero}), Some(RECEIVED), 1),
            (
                json!({"status": "resolved", "endsAt": "later"}),
                Some(RECEIVED),
                1,
            ),
        ];
        for (element, want, warnings) in cases {
            let alert = prometheus(json!([element])).remove(0);
            assert_eq!(alert.ended_at, want, "for {element}");
            assert_eq!(
                alert.warnings.len(),
                warnings,
                "for {element}: {:?}",
                alert.warnings
            );
        }
    }

    #[test]
    fn prometheus_element_status_falls_back_to_the_envelope() {
        let envelope = json!({"status": "resolved", "alerts": [{"endsAt": "2026-11-22T09:59:00Z"},
                                                              {"status": "firing"}]});
        let alerts = normalize_prometheus(&envelope, RECEIVED, Edition::Premium).unwrap();
        assert_eq!(alerts[0].ended_at, Some(datetime!(2026-11-22 09:59:00 UTC)));
        assert_eq!(alerts[1].ended_at, None);
    }

    #[test]
    fn prometheus_start_time() {
        let cases: [(Value, OffsetDateTime, usize); 3] = [
            (
                json!({"startsAt": "2026-11-22T09:00:00+01:00"}),
                datetime!(2026-11-22 08:00:00 UTC),
                0,
            ),
            (json!({}), RECEIVED, 0),
            (json!({"startsAt": "now"}), RECEIVED, 1),
        ];
        for (element, want, warnings) in cases {
            let alert = prometheus(json!([element])).remove(0);
            assert_eq!(alert.started_at, want, "for {element}");
            assert_eq!(alert.warnings.len(), warnings);
        }
    }

    #[test]
    fn prometheus_fingerprint_rules() {
        let labels = json!({"alertname": "A", "instance": "i1"});
        let reordered = json!({"instance": "i1", "alertname": "A"});
        let cases: Vec<(Value, String, usize)> = vec![
            (
                json!({"fingerprint": "abc", "labels": labels}),
                fingerprint_of(&json!("abc")),
                0,
            ),
            (json!({"labels": labels}), fingerprint_of(&labels), 0),
            (json!({"labels": reordered}), fingerprint_of(&labels), 0),
            (
                json!({"fingerprint": "", "labels": labels}),
                fingerprint_of(&labels),
                0,
            ),
            (
                json!({"fingerprint": 12, "labels": labels}),
                fingerprint_of(&labels),
                1,
            ),
            (json!({}), fingerprint_of(&json!({})), 0),
        ];
        for (element, want, warnings) in cases {
            let alert = prometheus(json!([element])).remove(0);
            assert_eq!(alert.fingerprint.as_deref(), Some(want.as_str()), "for {element}");
            assert_eq!(alert.warnings.len(), warnings, "for {element}");
        }
        let free = normalize_prometheus(&json!({"alerts": [{}]}), RECEIVED, Edition::Free).unwrap();
        assert!(
            free[0].fingerprint.is_some(),
            "Prometheus alerts group on Free too"
        );
    }

    #[test]
    fn prometheus_wrong_shapes_inside_an_element_are_warnings() {
        let alert = prometheus(json!([{"labels": "x", "annotations": [1], "startsAt": 5}])).remove(0);
        assert_eq!(alert.title, DEFAULT_TITLE);
        assert_eq!(
            alert.warnings,
            [
                "labels is a string, not an object; it was ignored",
                "annotations is an array, not an object; it was ignored",
                "startsAt 5 is not an ISO 8601 time; the time of receipt was used",
            ]
        );
        let hosts =
            prometheus(json!([{"labels": {"instance": ["a", ["b"]], "svc_environment_name": 3}}])).remove(0);
        assert_eq!(hosts.hosts, ["a", "b"]);
        assert_eq!(hosts.environment, None);
        assert_eq!(
            hosts.warnings,
            ["labels.svc_environment_name is a number, not a string; it was ignored"]
        );
    }

    proptest! {
    #[test]
    fn normalize_prometheus_never_panics(value in json_value(), elements in prop::collection::vec(json_value(), 0..5)) {
        let is_envelope = value
            .get("alerts")
            .and_then(Value::as_array)
            .is_some_and(|alerts| alerts.iter().all(Value::is_object));
        match normalize_prometheus(&value, RECEIVED, Edition::Free) {
            Ok(alerts) => prop_assert!(is_envelope && Some(alerts.len()) == value["alerts"].as_array().map(Vec::len)),
            Err(PayloadError::NotAnEnvelope(reason)) => prop_assert!(!is_envelope && !reason.is_empty()),
            Err(other) => prop_assert!(false, "unexpected {:?}", other),
        }
        let objects: Vec<Value> = elements.into_iter().filter(Value::is_object).collect();
        let envelope = json!({"status": "firing", "alerts": objects});
        let alerts = normalize_prometheus(&envelope, RECEIVED, Edition::Free).unwrap();
        prop_assert_eq!(alerts.len(), objects.len());
        for alert in &alerts {
            prop_assert!(alert.fingerprint.is_some());
            check_invariants(alert)?;
        }
    }
    }
}
