//! The normalised alert and its field rules: what one alert means once read, whatever format it came in.
//!
//! This module owns [`NormalizedAlert`], its [`Severity`], the [`Edition`] that decides grouping without a
//! fingerprint, the [`Attribute`]s (the fields a payload may carry, and their keys), and the rules of contract
//! `alerts.md` section 4 that every format applies to a field: what counts as absent, how text is truncated, how
//! times, severities and hosts are read. Whether an alert creates, groups or resolves is
//! [`crate::store::lifecycle`]'s business; a normalised alert only says, through `ended_at`, whether it resolves.
//!
//! A field of a wrong type never rejects an alert: it falls back to its default or is truncated, and the fact is
//! recorded in [`NormalizedAlert::warnings`], which the intake returns to the sender.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;

use crate::util::time_format::{from_epoch_millis, parse_time};

/// Title used when a payload has none (the seed's wording).
pub const DEFAULT_TITLE: &str = "New: Incident";
/// Longest title kept, in characters.
pub const TITLE_MAX_CHARS: usize = 200;
/// Longest description kept, in characters.
pub const DESCRIPTION_MAX_CHARS: usize = 1_000;
/// Longest `service` and `monitoring_tool` kept, in characters.
pub const SHORT_TEXT_MAX_CHARS: usize = 100;
/// Most characters kept over all hosts together.
pub const HOSTS_MAX_CHARS: usize = 255;

/// Longest piece of a sender's value quoted back in a warning, so that warnings stay short.
const QUOTE_MAX_CHARS: usize = 64;

/// The tier, as configured (`edition`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Edition {
    /// One HTTP Endpoint, no Opsgenie, no grouping of payloads without a `fingerprint`.
    Free,
    /// Everything; the default.
    #[default]
    Premium,
}

/// Alert severities, the contract's six, ordered from most to least severe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// `critical`, also the default.
    Critical,
    /// `high`.
    High,
    /// `medium`.
    Medium,
    /// `low`.
    Low,
    /// `info`.
    Info,
    /// `unknown`: the sender said it does not know.
    Unknown,
}

impl Severity {
    /// All severities, most severe first.
    pub const ALL: [Severity; 6] = [
        Severity::Critical,
        Severity::High,
        Severity::Medium,
        Severity::Low,
        Severity::Info,
        Severity::Unknown,
    ];

    /// The wire and storage name: `critical`, `high`, `medium`, `low`, `info` or `unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Critical => "critical",
            Severity::High => "high",
            Severity::Medium => "medium",
            Severity::Low => "low",
            Severity::Info => "info",
            Severity::Unknown => "unknown",
        }
    }

    /// One of the six names, case-insensitive, surrounding white space ignored; `None` for anything else.
    pub fn parse(text: &str) -> Option<Severity> {
        let text = text.trim();
        Severity::ALL
            .into_iter()
            .find(|s| s.as_str().eq_ignore_ascii_case(text))
    }

    /// A Prometheus `severity` label: the six names or one of the aliases of section 7, case-insensitive.
    pub fn parse_prometheus(text: &str) -> Option<Severity> {
        Severity::parse(text).or_else(|| {
            let alias = text.trim().to_ascii_lowercase();
            match alias.as_str() {
                "s1" | "p1" | "emergency" | "fatal" => Some(Severity::Critical),
                "s2" | "p2" | "major" | "page" => Some(Severity::High),
                "s3" | "p3" | "error" | "alert" => Some(Severity::Medium),
                "s4" | "p4" | "warn" | "warning" | "minor" => Some(Severity::Low),
                "s5" | "p5" | "debug" | "information" | "notice" => Some(Severity::Info),
                _ => None,
            }
        })
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One alert as the lifecycle needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct NormalizedAlert {
    /// At most [`TITLE_MAX_CHARS`] characters; [`DEFAULT_TITLE`] when the payload has none.
    pub title: String,
    /// At most [`DESCRIPTION_MAX_CHARS`] characters.
    pub description: Option<String>,
    /// The sender's start time, in UTC; the time of receipt when missing or unparseable.
    pub started_at: OffsetDateTime,
    /// `Some` when this payload resolves its alert, with the time it ended, in UTC.
    pub ended_at: Option<OffsetDateTime>,
    /// At most [`SHORT_TEXT_MAX_CHARS`] characters.
    pub service: Option<String>,
    /// At most [`SHORT_TEXT_MAX_CHARS`] characters.
    pub monitoring_tool: Option<String>,
    /// At most [`HOSTS_MAX_CHARS`] characters over all hosts.
    pub hosts: Vec<String>,
    /// [`Severity::Critical`] when missing or not known.
    pub severity: Severity,
    /// 64 lowercase hex digits, or `None` (Free edition and no `fingerprint` key: no grouping).
    pub fingerprint: Option<String>,
    /// `svc_environment_name`.
    pub environment: Option<String>,
    /// The raw object as JSON text, stored with the alert: a generic body as the sender wrote it (without
    /// surrounding whitespace; a key the sender repeated is kept twice), for Prometheus the element of `alerts`.
    /// The alert's page and the management API show it parsed again (a repeated key once, its last value).
    pub payload: String,
    /// What was defaulted, truncated or ignored, for the sender.
    pub warnings: Vec<String>,
}

impl NormalizedAlert {
    /// Whether this payload resolves an open alert rather than firing one.
    pub fn is_resolve(&self) -> bool {
        self.ended_at.is_some()
    }
}

/// An attribute of a normalized alert that an HTTP Endpoint may map to a path of its sender's payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Attribute {
    /// `title`.
    Title,
    /// `description`.
    Description,
    /// `start_time`.
    StartTime,
    /// `end_time`.
    EndTime,
    /// `service`.
    Service,
    /// `monitoring_tool`.
    MonitoringTool,
    /// `hosts`.
    Hosts,
    /// `severity`.
    Severity,
    /// `fingerprint`.
    Fingerprint,
    /// `svc_environment_name`.
    EnvironmentName,
}

impl Attribute {
    /// Every mappable attribute, in the contract's order.
    pub const ALL: [Attribute; 10] = [
        Attribute::Title,
        Attribute::Description,
        Attribute::StartTime,
        Attribute::EndTime,
        Attribute::Service,
        Attribute::MonitoringTool,
        Attribute::Hosts,
        Attribute::Severity,
        Attribute::Fingerprint,
        Attribute::EnvironmentName,
    ];

    /// The attribute's key in a generic payload and in `payload_attribute_mapping`.
    pub fn key(self) -> &'static str {
        match self {
            Attribute::Title => "title",
            Attribute::Description => "description",
            Attribute::StartTime => "start_time",
            Attribute::EndTime => "end_time",
            Attribute::Service => "service",
            Attribute::MonitoringTool => "monitoring_tool",
            Attribute::Hosts => "hosts",
            Attribute::Severity => "severity",
            Attribute::Fingerprint => "fingerprint",
            // `svc_environment_name` under the default identifier word.
            Attribute::EnvironmentName => crate::util::identifier::names().environment_name.as_str(),
        }
    }

    /// The attribute of a key, if it is one.
    pub fn from_key(key: &str) -> Option<Attribute> {
        Attribute::ALL.into_iter().find(|a| a.key() == key)
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Field rules shared by every format
// ---------------------------------------------------------------------------------------------------------------

pub(super) const TITLE_FALLBACK: &str = "the default title was used";
pub(super) const IGNORED: &str = "it was ignored";

/// `None` for the values that count as absent: `null`, `""` and `[]`.
pub(super) fn present(value: Option<&Value>) -> Option<&Value> {
    value.filter(|v| match v {
        Value::Null => false,
        Value::String(s) => !s.is_empty(),
        Value::Array(items) => !items.is_empty(),
        _ => true,
    })
}

/// A string field truncated to `max` characters; another type is dropped with a warning ending in `fallback`.
pub(super) fn text(
    value: Option<&Value>,
    name: &str,
    max: usize,
    fallback: &str,
    warnings: &mut Vec<String>,
) -> Option<String> {
    match value? {
        Value::String(s) => {
            let (kept, truncated) = truncate_chars(s, max);
            if truncated {
                warnings.push(format!("{name} was truncated to {max} characters"));
            }
            Some(kept)
        }
        other => {
            warnings.push(format!(
                "{name} is {}, not a string; {fallback}",
                type_name(other)
            ));
            None
        }
    }
}

/// The start time, or `received_at` (with a warning when a value was given but is not an ISO 8601 time).
pub(super) fn start_time(
    value: Option<&Value>,
    name: &str,
    received_at: OffsetDateTime,
    warnings: &mut Vec<String>,
) -> OffsetDateTime {
    let Some(value) = value else {
        return received_at;
    };
    match value.as_str().and_then(parse_time) {
        Some(t) => t,
        None => {
            warnings.push(format!(
                "{name} {} is not an ISO 8601 time; the time of receipt was used",
                describe(value)
            ));
            received_at
        }
    }
}

/// The end time: an ISO 8601 string or integer epoch milliseconds; anything else is ignored with a warning, and
/// the payload then does not resolve.
pub(super) fn end_time(
    value: Option<&Value>,
    name: &str,
    warnings: &mut Vec<String>,
) -> Option<OffsetDateTime> {
    let value = value?;
    let parsed = match value {
        Value::String(s) => parse_time(s),
        Value::Number(n) => n.as_i64().and_then(from_epoch_millis),
        _ => None,
    };
    if parsed.is_none() {
        warnings.push(format!(
            "{name} {} is neither an ISO 8601 time nor integer epoch milliseconds; the alert was not resolved",
            describe(value)
        ));
    }
    parsed
}

/// The severity read with `parse`; missing is critical, anything unknown is critical with a warning.
pub(super) fn severity(
    value: Option<&Value>,
    name: &str,
    parse: fn(&str) -> Option<Severity>,
    warnings: &mut Vec<String>,
) -> Severity {
    let Some(value) = value else {
        return Severity::Critical;
    };
    let parsed = value.as_str().and_then(parse);
    parsed.unwrap_or_else(|| {
        warnings.push(format!(
            "{name} {} is not known; critical was used",
            describe(value)
        ));
        Severity::Critical
    })
}

/// Hosts from a string, a scalar or an array (nested arrays flattened, scalars turned into strings, absent
/// values skipped), then cut to [`HOSTS_MAX_CHARS`] characters in total, host by host.
pub(super) fn hosts(value: Option<&Value>, name: &str, warnings: &mut Vec<String>) -> Vec<String> {
    let Some(value) = value else {
        return Vec::new();
    };
    if value.is_object() {
        warnings.push(format!(
            "{name} is an object, not a string or an array; it was ignored"
        ));
        return Vec::new();
    }
    let (flat, skipped_objects) = flatten_hosts(value);
    if skipped_objects {
        warnings.push(format!("{name} contains objects; they were ignored"));
    }
    let (kept, truncated) = limit_hosts(flat, HOSTS_MAX_CHARS);
    if truncated {
        warnings.push(format!(
            "{name} was truncated to {HOSTS_MAX_CHARS} characters in total"
        ));
    }
    kept
}

/// Flattens in document order without recursion; returns whether objects were met (and skipped).
fn flatten_hosts(value: &Value) -> (Vec<String>, bool) {
    let mut out = Vec::new();
    let mut skipped_objects = false;
    let mut stack = vec![value];
    while let Some(node) = stack.pop() {
        match node {
            Value::Array(items) => stack.extend(items.iter().rev()),
            Value::String(s) if !s.is_empty() => out.push(s.clone()),
            Value::Number(n) => out.push(n.to_string()),
            Value::Bool(b) => out.push(b.to_string()),
            Value::Object(_) => skipped_objects = true,
            Value::String(_) | Value::Null => {}
        }
    }
    (out, skipped_objects)
}

/// Keeps hosts while their characters fit in `budget`; the host that crosses it is cut, later ones dropped.
fn limit_hosts(hosts: Vec<String>, mut budget: usize) -> (Vec<String>, bool) {
    let mut kept = Vec::with_capacity(hosts.len());
    let mut truncated = false;
    for host in hosts {
        if budget == 0 {
            truncated = true;
            break;
        }
        let (part, cut) = truncate_chars(&host, budget);
        budget -= part.chars().count();
        truncated |= cut;
        kept.push(part);
    }
    (kept, truncated)
}

/// The first `max` characters of `text`, and whether anything was cut.
fn truncate_chars(text: &str, max: usize) -> (String, bool) {
    // No character is shorter than a byte: a text of at most `max` bytes has at most `max` characters.
    if text.len() <= max {
        return (text.to_owned(), false);
    }
    match text.char_indices().nth(max) {
        Some((byte, _)) => (text[..byte].to_owned(), true),
        None => (text.to_owned(), false),
    }
}

/// A value as quoted in a warning: a string in quotes, shortened; other types by their type.
pub(super) fn describe(value: &Value) -> String {
    match value {
        Value::String(s) => {
            let (short, cut) = truncate_chars(s, QUOTE_MAX_CHARS);
            format!("'{short}{}'", if cut { "…" } else { "" })
        }
        Value::Number(n) => n.to_string(),
        other => format!("({})", type_name(other)),
    }
}

/// "a number", "an object"… for messages.
pub(super) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn severity_names_round_trip() {
        for severity in Severity::ALL {
            assert_eq!(Severity::parse(severity.as_str()), Some(severity));
            assert_eq!(Severity::parse(&severity.as_str().to_uppercase()), Some(severity));
            assert_eq!(Severity::parse_prometheus(severity.as_str()), Some(severity));
            assert_eq!(severity.to_string(), severity.as_str());
            assert_eq!(serde_json::to_value(severity).unwrap(), json!(severity.as_str()));
        }
        assert_eq!(Severity::parse("sev1"), None);
        assert_eq!(Severity::parse(""), None);
    }

    #[test]
    fn prometheus_severity_aliases() {
        let cases: [(&[&str], Severity); 5] = [
            (&["s1", "P1", "emergency", "FATAL"], Severity::Critical),
            (&["s2", "p2", "Major", "page"], Severity::High),
            (&["S3", "p3", "error", "alert"], Severity::Medium),
            (&["s4", "p4", "warn", "Warning", "minor"], Severity::Low),
            (&["s5", "p5", "debug", "information", "NOTICE"], Severity::Info),
        ];
        for (aliases, want) in cases {
            for alias in aliases {
                assert_eq!(Severity::parse_prometheus(alias), Some(want), "{alias}");
                assert_eq!(Severity::parse(alias), None, "{alias} is not a generic severity");
            }
        }
        assert_eq!(Severity::parse_prometheus("s6"), None);
    }
}
