//! The Alertmanager webhook (contract `alerts.md` section 7): an envelope of alerts, one [`NormalizedAlert`] per
//! element. Check 7 of the receiving order for Prometheus integrations: a body that is not an envelope is refused;
//! inside an element, every field problem is a default plus a warning.

use serde_json::{Map, Value};
use time::OffsetDateTime;

use super::fingerprint::fingerprint_of;
use super::normalized::{
    hosts, present, severity, start_time, text, type_name, Attribute, Edition, NormalizedAlert, Severity,
    DEFAULT_TITLE, DESCRIPTION_MAX_CHARS, IGNORED, TITLE_MAX_CHARS,
};
use super::payload::PayloadError;
use crate::time_format::parse_time;

/// `monitoring_tool` of every Alertmanager alert.
pub const PROMETHEUS_MONITORING_TOOL: &str = "Prometheus";

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
