//! Alert payloads: from request bytes to [`NormalizedAlert`]s, as pure functions with no I/O.
//!
//! This module owns checks 6 and 7 of the receiving order (contract `alerts.md` section 3: is the body JSON, and is
//! it the shape the integration expects), the field rules of a generic or HTTP Endpoint payload (section 4), custom
//! attribute mappings (section 6) and the Alertmanager webhook (section 7). Whether a normalized alert creates,
//! groups or resolves is the lifecycle's business; this module only says what the payload means: its fields, its
//! fingerprint (see [`super::fingerprint`]) and, through `ended_at`, whether it resolves.
//!
//! A field of a wrong type never rejects an alert: it falls back to its default or is truncated, and the fact is
//! recorded in [`NormalizedAlert::warnings`], which the intake returns to the sender.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use time::format_description::well_known::{Iso8601, Rfc3339};
use time::{OffsetDateTime, PrimitiveDateTime, UtcOffset};

use super::members;
use crate::plain_value;

pub use super::fingerprint::fingerprint_of;

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
/// Default nesting limit of a request body (section 3, check 6).
pub const DEFAULT_MAX_DEPTH: usize = 64;
/// Deepest nesting `serde_json` itself parses; a larger configured limit is capped to this.
pub const PARSER_MAX_DEPTH: usize = 127;
/// `monitoring_tool` of every Alertmanager alert.
pub const PROMETHEUS_MONITORING_TOOL: &str = "Prometheus";

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

/// Why a body cannot be taken as alerts at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PayloadError {
    /// A generic or HTTP Endpoint body that is valid JSON but not an object (422).
    #[error("the payload must be a JSON object")]
    NotAnObject,
    /// A Prometheus body that is not an Alertmanager webhook envelope (422); the text says what is wrong.
    #[error("the payload is not an Alertmanager webhook: {0}")]
    NotAnEnvelope(String),
    /// The body is not JSON (400), with the parser's position (1-based line and column).
    #[error("invalid JSON at line {line} column {column}: {message}")]
    InvalidJson {
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
        /// The parser's message, without its position.
        message: String,
    },
    /// The body nests arrays and objects deeper than the limit (400).
    #[error("the JSON nests arrays and objects more than {limit} levels deep")]
    TooDeep {
        /// The limit that applied.
        limit: usize,
    },
}

impl PayloadError {
    /// The status this error is answered with: 400 for a body that is not usable JSON, 422 for a wrong shape.
    pub fn status(&self) -> http::StatusCode {
        match self {
            PayloadError::InvalidJson { .. } | PayloadError::TooDeep { .. } => http::StatusCode::BAD_REQUEST,
            PayloadError::NotAnObject | PayloadError::NotAnEnvelope(_) => {
                http::StatusCode::UNPROCESSABLE_ENTITY
            }
        }
    }

    /// The `error` code of the JSON answer: `invalid_json` or `invalid_payload`.
    pub fn code(&self) -> &'static str {
        match self {
            PayloadError::InvalidJson { .. } | PayloadError::TooDeep { .. } => "invalid_json",
            PayloadError::NotAnObject | PayloadError::NotAnEnvelope(_) => "invalid_payload",
        }
    }
}

/// Parses a request body as JSON, refusing it when arrays and objects nest more than `max_depth` levels
/// (`{"a":[1]}` nests two). `serde_json` itself stops at [`PARSER_MAX_DEPTH`], so a larger limit is capped to it.
/// Answers the value and the body as text: JSON is UTF-8 throughout, so a body that parses is text.
pub fn parse_json(bytes: &[u8], max_depth: usize) -> Result<(Value, &str), PayloadError> {
    let limit = max_depth.min(PARSER_MAX_DEPTH);
    // One UTF-8 check of the whole body, then `from_str`, which need not check each string again.
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        // Not UTF-8: `from_slice` tells where, as a JSON error with its line and column.
        Err(not_utf8) => {
            return Err(match plain_value::from_slice(bytes) {
                Err(error) => json_error(&error, limit),
                // serde_json refuses bytes that are not UTF-8 inside and outside strings; should it ever read
                // them, the body is refused all the same, at the first such byte.
                Ok(_) => {
                    let valid = &bytes[..not_utf8.valid_up_to()];
                    let line_start = valid
                        .iter()
                        .rposition(|&byte| byte == b'\n')
                        .map_or(0, |at| at + 1);
                    PayloadError::InvalidJson {
                        line: 1 + valid.iter().filter(|&&byte| byte == b'\n').count(),
                        column: valid.len() - line_start + 1,
                        message: "invalid UTF-8".to_owned(),
                    }
                }
            });
        }
    };
    let value = plain_value::from_str(text).map_err(|e| json_error(&e, limit))?;
    if nesting_depth(&value) > limit {
        return Err(PayloadError::TooDeep { limit });
    }
    Ok((value, text))
}

/// A serde_json error as the payload error it means (`TooDeep` for its recursion limit).
pub(super) fn json_error(error: &serde_json::Error, limit: usize) -> PayloadError {
    let full = error.to_string();
    if full.starts_with("recursion limit exceeded") {
        return PayloadError::TooDeep { limit };
    }
    let position = format!(" at line {} column {}", error.line(), error.column());
    let message = full.strip_suffix(&position).unwrap_or(&full).to_owned();
    PayloadError::InvalidJson {
        line: error.line(),
        column: error.column(),
        message,
    }
}

/// How many arrays and objects nest at the deepest point. Payload values are read by [`plain_value`], so they nest
/// at most 128 levels (serde_json's recursion limit, which its own `Value` reader lets a `RawValue` token escape)
/// and the recursion is bounded.
pub(super) fn nesting_depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(nesting_depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(nesting_depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// Reads an RFC 3339 or ISO 8601 time, in UTC. A time without an offset is taken as UTC. A time is `None` (the
/// caller's default applies, with a warning) when its offset is beyond ±24 hours or it falls, in UTC, before 1970
/// or after 9999: no monitoring tool sends such a time, and the store and pages show four-digit years.
pub fn parse_time(text: &str) -> Option<OffsetDateTime> {
    let text = text.trim();
    let parsed = OffsetDateTime::parse(text, &Rfc3339)
        .or_else(|_| OffsetDateTime::parse(text, &Iso8601::DEFAULT))
        .or_else(|_| PrimitiveDateTime::parse(text, &Iso8601::DEFAULT).map(PrimitiveDateTime::assume_utc))
        .ok()?;
    if parsed.offset().whole_seconds().abs() > 24 * 3600 {
        return None;
    }
    in_supported_years(parsed.checked_to_offset(UtcOffset::UTC)?)
}

/// An instant given as integer milliseconds since the Unix epoch, if it falls between 1970 and 9999.
pub fn from_epoch_millis(millis: i64) -> Option<OffsetDateTime> {
    in_supported_years(OffsetDateTime::from_unix_timestamp_nanos(i128::from(millis) * 1_000_000).ok()?)
}

/// The time, when its UTC year is 1970 to 9999.
fn in_supported_years(utc: OffsetDateTime) -> Option<OffsetDateTime> {
    (1970..=9999).contains(&utc.year()).then_some(utc)
}

/// RFC 3339 in UTC with milliseconds, e.g. `2026-11-22T10:00:00.000Z`.
pub fn format_time(t: OffsetDateTime) -> String {
    let utc = t.checked_to_offset(UtcOffset::UTC).unwrap_or(t);
    let Ok(year) = u32::try_from(utc.year()) else {
        return format_time_general(t);
    };
    if !utc.offset().is_utc() || year > 9999 {
        return format_time_general(t);
    }
    // The digits are written directly: every alert formats two or three times, and `format!` with padded
    // integers cost about 2 k instructions each.
    let mut text = String::with_capacity(24);
    let fields = [
        (year, 4, '-'),
        (u32::from(u8::from(utc.month())), 2, '-'),
        (u32::from(utc.day()), 2, 'T'),
        (u32::from(utc.hour()), 2, ':'),
        (u32::from(utc.minute()), 2, ':'),
        (u32::from(utc.second()), 2, '.'),
        (u32::from(utc.millisecond()), 3, 'Z'),
    ];
    for (value, width, after) in fields {
        for place in (0..width).rev() {
            text.push(char::from_digit(value / 10u32.pow(place) % 10, 10).unwrap_or('0'));
        }
        text.push(after);
    }
    text
}

/// [`format_time`] through `format!`, for every time: years outside 0–9999, and an offset kept when the time cannot
/// be moved to UTC.
fn format_time_general(t: OffsetDateTime) -> String {
    let utc = t.checked_to_offset(UtcOffset::UTC).unwrap_or(t);
    let offset = utc.offset();
    let zone = if offset.is_utc() {
        "Z".to_owned()
    } else {
        let sign = if offset.is_negative() { '-' } else { '+' };
        format!(
            "{sign}{:02}:{:02}",
            offset.whole_hours().abs(),
            offset.minutes_past_hour().abs()
        )
    };
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}{zone}",
        utc.year(),
        u8::from(utc.month()),
        utc.day(),
        utc.hour(),
        utc.minute(),
        utc.second(),
        utc.millisecond()
    )
}

// ---------------------------------------------------------------------------------------------------------------
// Custom attribute mapping (section 6)
// ---------------------------------------------------------------------------------------------------------------

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
            Attribute::EnvironmentName => crate::identifier::names().environment_name.as_str(),
        }
    }

    /// The attribute of a key, if it is one.
    pub fn from_key(key: &str) -> Option<Attribute> {
        Attribute::ALL.into_iter().find(|a| a.key() == key)
    }

    /// The mapping types this attribute accepts. Times may also be mapped as `string` (a string holding a time);
    /// `hosts` and `fingerprint` as a single string or an array.
    pub fn allowed_types(self) -> &'static [MappingType] {
        match self {
            Attribute::StartTime | Attribute::EndTime => &[MappingType::Datetime, MappingType::String],
            Attribute::Hosts | Attribute::Fingerprint => &[MappingType::String, MappingType::Array],
            _ => &[MappingType::String],
        }
    }
}

/// The declared type of a mapped value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MappingType {
    /// `string`.
    String,
    /// `datetime`.
    Datetime,
    /// `array`.
    Array,
}

impl MappingType {
    /// The name used in `payload_attribute_mapping`.
    pub fn as_str(self) -> &'static str {
        match self {
            MappingType::String => "string",
            MappingType::Datetime => "datetime",
            MappingType::Array => "array",
        }
    }

    fn parse(text: &str) -> Option<MappingType> {
        [MappingType::String, MappingType::Datetime, MappingType::Array]
            .into_iter()
            .find(|t| t.as_str() == text)
    }
}

/// One step of a path into a payload.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PathSegment {
    /// An object key.
    Key(String),
    /// A 0-based array index.
    Index(usize),
}

impl From<&PathSegment> for Value {
    fn from(segment: &PathSegment) -> Value {
        match segment {
            PathSegment::Key(key) => Value::String(key.clone()),
            PathSegment::Index(index) => Value::from(*index),
        }
    }
}

/// Where one attribute is read from, and as what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MappedPath {
    /// Keys and indexes from the payload's root; never empty.
    pub path: Vec<PathSegment>,
    /// The declared type, one of the attribute's [`Attribute::allowed_types`].
    pub kind: MappingType,
}

/// A custom mapping of an HTTP Endpoint (section 6): for some attributes, the path of the sender's payload to read
/// them from. Reading applies the attribute's own rule to whatever value is found, so a sender whose value
/// changes type is still handled, with a warning, never rejected; the declared type is validated against the
/// attribute and kept for the settings page.
///
/// Deserialises from the JSON `payload_attribute_mapping` object, e.g.
/// `{"title": {"path": ["alert", "name"], "type": "string"}}`; a `null` entry means "not mapped".
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(try_from = "Map<String, Value>", into = "Map<String, Value>")]
pub struct AttributeMapping {
    entries: BTreeMap<Attribute, MappedPath>,
}

/// Why a `payload_attribute_mapping` is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MappingError {
    /// The mapping is not a JSON object.
    #[error("payload_attribute_mapping must be a JSON object")]
    NotAnObject,
    /// A key that is not a mappable attribute.
    #[error("'{0}' cannot be mapped; the attributes are {list}", list = attribute_list())]
    UnknownAttribute(String),
    /// An entry that is not an object.
    #[error("the mapping of {attribute} must be an object {{\"path\": [...], \"type\": \"...\"}}")]
    NotAnEntry {
        /// The attribute's key.
        attribute: &'static str,
    },
    /// An entry with a key other than `path` and `type`.
    #[error("the mapping of {attribute} has an unknown key '{key}'; only path and type are allowed")]
    UnknownEntryKey {
        /// The attribute's key.
        attribute: &'static str,
        /// The unknown key.
        key: String,
    },
    /// A missing, empty or malformed path.
    #[error("the path of {attribute} {reason}")]
    BadPath {
        /// The attribute's key.
        attribute: &'static str,
        /// What is wrong, as the end of a sentence.
        reason: String,
    },
    /// A missing type or one that is not `string`, `datetime` or `array`.
    #[error("the type of {attribute} must be one of string, datetime, array")]
    BadType {
        /// The attribute's key.
        attribute: &'static str,
    },
    /// A type the attribute does not accept.
    #[error("{attribute} cannot be mapped as {kind}; use {allowed}")]
    TypeNotAllowed {
        /// The attribute's key.
        attribute: &'static str,
        /// The refused type.
        kind: &'static str,
        /// The accepted types, `or`-separated.
        allowed: String,
    },
}

fn attribute_list() -> String {
    Attribute::ALL.map(Attribute::key).join(", ")
}

impl AttributeMapping {
    /// Validates a `payload_attribute_mapping` JSON value.
    pub fn from_json(value: &Value) -> Result<AttributeMapping, MappingError> {
        match value {
            Value::Object(map) => AttributeMapping::try_from(map.clone()),
            _ => Err(MappingError::NotAnObject),
        }
    }

    /// Where `attribute` is read from, if it is mapped.
    pub fn get(&self, attribute: Attribute) -> Option<&MappedPath> {
        self.entries.get(&attribute)
    }

    /// Maps `attribute`, checking the path is not empty and the type is one the attribute accepts.
    pub fn insert(&mut self, attribute: Attribute, mapped: MappedPath) -> Result<(), MappingError> {
        if mapped.path.is_empty() {
            return Err(bad_path(attribute, "must not be empty"));
        }
        check_type(attribute, mapped.kind)?;
        self.entries.insert(attribute, mapped);
        Ok(())
    }

    /// The mapped attributes, in the contract's order.
    pub fn iter(&self) -> impl Iterator<Item = (Attribute, &MappedPath)> {
        self.entries
            .iter()
            .map(|(attribute, mapped)| (*attribute, mapped))
    }

    /// Whether nothing is mapped.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl TryFrom<Map<String, Value>> for AttributeMapping {
    type Error = MappingError;

    fn try_from(map: Map<String, Value>) -> Result<Self, Self::Error> {
        let mut mapping = AttributeMapping::default();
        for (key, entry) in &map {
            let attribute =
                Attribute::from_key(key).ok_or_else(|| MappingError::UnknownAttribute(key.clone()))?;
            if let Some(mapped) = parse_entry(attribute, entry)? {
                mapping.insert(attribute, mapped)?;
            }
        }
        Ok(mapping)
    }
}

impl From<AttributeMapping> for Map<String, Value> {
    fn from(mapping: AttributeMapping) -> Self {
        let mut out = Map::new();
        for (attribute, mapped) in mapping.iter() {
            let mut entry = Map::new();
            entry.insert(
                "path".to_owned(),
                Value::Array(mapped.path.iter().map(Value::from).collect()),
            );
            entry.insert("type".to_owned(), Value::String(mapped.kind.as_str().to_owned()));
            out.insert(attribute.key().to_owned(), Value::Object(entry));
        }
        out
    }
}

fn parse_entry(attribute: Attribute, entry: &Value) -> Result<Option<MappedPath>, MappingError> {
    let entry = match entry {
        Value::Null => return Ok(None),
        Value::Object(entry) => entry,
        _ => {
            return Err(MappingError::NotAnEntry {
                attribute: attribute.key(),
            })
        }
    };
    if let Some(key) = entry.keys().find(|k| *k != "path" && *k != "type") {
        return Err(MappingError::UnknownEntryKey {
            attribute: attribute.key(),
            key: key.clone(),
        });
    }
    let path = parse_path(attribute, entry.get("path"))?;
    let kind = entry
        .get("type")
        .and_then(Value::as_str)
        .and_then(MappingType::parse)
        .ok_or(MappingError::BadType {
            attribute: attribute.key(),
        })?;
    Ok(Some(MappedPath { path, kind }))
}

fn parse_path(attribute: Attribute, path: Option<&Value>) -> Result<Vec<PathSegment>, MappingError> {
    let items = match path {
        Some(Value::Array(items)) => items,
        Some(_) => return Err(bad_path(attribute, "must be an array of keys and indexes")),
        None => return Err(bad_path(attribute, "is missing")),
    };
    items
        .iter()
        .enumerate()
        .map(|(position, item)| match item {
            Value::String(key) => Ok(PathSegment::Key(key.clone())),
            Value::Number(n) => n
                .as_u64()
                .and_then(|i| usize::try_from(i).ok())
                .map(PathSegment::Index)
                .ok_or_else(|| bad_path(attribute, &format!("has {n} at {position}, not an array index"))),
            other => Err(bad_path(
                attribute,
                &format!("has {} at {position}, not a key or an index", type_name(other)),
            )),
        })
        .collect()
}

fn bad_path(attribute: Attribute, reason: &str) -> MappingError {
    MappingError::BadPath {
        attribute: attribute.key(),
        reason: reason.to_owned(),
    }
}

fn check_type(attribute: Attribute, kind: MappingType) -> Result<(), MappingError> {
    let allowed = attribute.allowed_types();
    if allowed.contains(&kind) {
        return Ok(());
    }
    Err(MappingError::TypeNotAllowed {
        attribute: attribute.key(),
        kind: kind.as_str(),
        allowed: allowed
            .iter()
            .map(|t| t.as_str())
            .collect::<Vec<_>>()
            .join(" or "),
    })
}

/// The value at `path` inside `root`: keys step into objects, indexes into arrays.
pub fn value_at<'a>(root: &'a Value, path: &[PathSegment]) -> Option<&'a Value> {
    path.iter().try_fold(root, |node, segment| match (segment, node) {
        (PathSegment::Key(key), Value::Object(map)) => map.get(key),
        (PathSegment::Index(index), Value::Array(items)) => items.get(*index),
        _ => None,
    })
}

/// Takes the value at `path` out of `root` for grouping: an object key is removed, an array element becomes
/// `null` so that the other indexes keep their meaning, and trailing `null`s are dropped so that an array that
/// only gains the element on a recovery (`[start]` then `[start, end]`) groups with its firing form.
fn blank_at(root: &mut Value, path: &[PathSegment]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let parent = parents
        .iter()
        .try_fold(root, |node, segment| match (segment, node) {
            (PathSegment::Key(key), Value::Object(map)) => map.get_mut(key),
            (PathSegment::Index(index), Value::Array(items)) => items.get_mut(*index),
            _ => None,
        });
    match (last, parent) {
        (PathSegment::Key(key), Some(Value::Object(map))) => {
            map.shift_remove(key);
        }
        (PathSegment::Index(index), Some(Value::Array(items))) => {
            if let Some(item) = items.get_mut(*index) {
                *item = Value::Null;
            }
            while items.last().is_some_and(Value::is_null) {
                items.pop();
            }
        }
        _ => {}
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Generic and HTTP Endpoint payloads (section 4)
// ---------------------------------------------------------------------------------------------------------------

/// Normalizes a generic or HTTP Endpoint payload. Only a body that is not a JSON object is refused
/// ([`PayloadError::NotAnObject`], 422); every field problem becomes a default plus a warning.
///
/// With a `mapping`, each mapped attribute is read from its path and, when that value is absent, from its default
/// key. Custom mappings are a Premium feature: the caller passes `None` on Free.
///
/// `payload_text` must be the text `payload` was parsed from: it is stored as the raw payload as received, so no
/// serialising is spent on it.
pub fn normalize_generic(
    payload: &Value,
    payload_text: &str,
    received_at: OffsetDateTime,
    edition: Edition,
    mapping: Option<&AttributeMapping>,
) -> Result<NormalizedAlert, PayloadError> {
    let object = payload.as_object().ok_or(PayloadError::NotAnObject)?;
    let source = Source {
        payload: Some(payload),
        by_key: Source::by_key(object),
        mapping,
    };
    Ok(normalize_source(&source, payload_text, received_at, edition))
}

/// Reads and normalizes a generic payload from the request body: [`parse_json`] then [`normalize_generic`], with
/// the same answers. Without a custom mapping, and unless Premium must hash a payload that has no fingerprint,
/// only the attributes' values are built as `Value`s (see [`super::members`]).
pub fn read_generic(
    bytes: &[u8],
    max_depth: usize,
    received_at: OffsetDateTime,
    edition: Edition,
    mapping: Option<&AttributeMapping>,
) -> Result<NormalizedAlert, PayloadError> {
    if let (None, Ok(text)) = (mapping, std::str::from_utf8(bytes)) {
        if let Some(by_key) = members::read(text, max_depth)? {
            let source = Source {
                payload: None,
                by_key: by_key.each_ref().map(Option::as_ref),
                mapping: None,
            };
            if edition == Edition::Free || source.get(Attribute::Fingerprint).is_some() {
                return Ok(normalize_source(&source, text, received_at, edition));
            }
        }
    }
    // A mapping reads paths anywhere in the payload, and Premium hashes a payload without a fingerprint whole;
    // a body that is not UTF-8 or not an object gets its answer here.
    let (value, text) = parse_json(bytes, max_depth)?;
    normalize_generic(&value, text, received_at, edition, mapping)
}

fn normalize_source(
    source: &Source<'_>,
    payload_text: &str,
    received_at: OffsetDateTime,
    edition: Edition,
) -> NormalizedAlert {
    let mut warnings = Vec::new();
    let w = &mut warnings;
    let title = text(
        source.get(Attribute::Title),
        "title",
        TITLE_MAX_CHARS,
        TITLE_FALLBACK,
        w,
    );
    NormalizedAlert {
        title: title.unwrap_or_else(|| DEFAULT_TITLE.to_owned()),
        description: source.text(Attribute::Description, DESCRIPTION_MAX_CHARS, w),
        started_at: start_time(source.get(Attribute::StartTime), "start_time", received_at, w),
        ended_at: end_time(source.get(Attribute::EndTime), "end_time", w),
        service: source.text(Attribute::Service, SHORT_TEXT_MAX_CHARS, w),
        monitoring_tool: source.text(Attribute::MonitoringTool, SHORT_TEXT_MAX_CHARS, w),
        hosts: hosts(source.get(Attribute::Hosts), "hosts", w),
        severity: severity(source.get(Attribute::Severity), "severity", Severity::parse, w),
        fingerprint: source.fingerprint(edition),
        environment: source.text(Attribute::EnvironmentName, usize::MAX, w),
        payload: payload_text.trim().to_owned(),
        warnings,
    }
}

/// The value under each attribute's default key, indexed by `Attribute as usize`.
type Slots<'a> = [Option<&'a Value>; Attribute::ALL.len()];

/// The payload of one generic alert, with its mapping.
struct Source<'a> {
    /// The whole payload; `None` when only its attributes' values were read (see [`read_generic`]).
    payload: Option<&'a Value>,
    /// The value under each attribute's default key.
    by_key: Slots<'a>,
    mapping: Option<&'a AttributeMapping>,
}

impl<'a> Source<'a> {
    /// The values under the attributes' default keys, found in one pass over the payload's keys: ten lookups
    /// in the map would each hash a key (SipHash), several times what comparing the keys costs.
    fn by_key(object: &'a Map<String, Value>) -> Slots<'a> {
        let mut by_key = [None; Attribute::ALL.len()];
        for (key, value) in object {
            if let Some(attribute) = Attribute::from_key(key) {
                by_key[attribute as usize] = Some(value);
            }
        }
        by_key
    }

    /// The attribute's value: from its mapped path when that is present, else from its default key.
    fn get(&self, attribute: Attribute) -> Option<&'a Value> {
        self.mapped(attribute)
            .or_else(|| present(self.by_key[attribute as usize]))
    }

    /// An optional text attribute, truncated to `max` characters; a value of another type is ignored.
    fn text(&self, attribute: Attribute, max: usize, warnings: &mut Vec<String>) -> Option<String> {
        text(self.get(attribute), attribute.key(), max, IGNORED, warnings)
    }

    fn mapped(&self, attribute: Attribute) -> Option<&'a Value> {
        let mapped = self.mapping?.get(attribute)?;
        present(value_at(self.payload?, &mapped.path))
    }

    /// The sender's fingerprint hashed; without one, on Premium, the hash of the payload without the fields that
    /// change between occurrences (start, end, hosts, by key and by mapped path); on Free, none.
    fn fingerprint(&self, edition: Edition) -> Option<String> {
        if let Some(value) = self.get(Attribute::Fingerprint) {
            return Some(fingerprint_of(value));
        }
        match edition {
            Edition::Free => None,
            Edition::Premium => self.grouping_view().map(|view| fingerprint_of(&view)),
        }
    }

    fn grouping_view(&self) -> Option<Value> {
        let mut view = self.payload?.clone();
        for attribute in [Attribute::StartTime, Attribute::EndTime, Attribute::Hosts] {
            blank_at(&mut view, &[PathSegment::Key(attribute.key().to_owned())]);
            if let Some(mapped) = self.mapping.and_then(|m| m.get(attribute)) {
                blank_at(&mut view, &mapped.path);
            }
        }
        Some(view)
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Prometheus (section 7)
// ---------------------------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------------------------
// Field rules shared by both formats
// ---------------------------------------------------------------------------------------------------------------

const TITLE_FALLBACK: &str = "the default title was used";
const IGNORED: &str = "it was ignored";

/// `None` for the values that count as absent: `null`, `""` and `[]`.
fn present(value: Option<&Value>) -> Option<&Value> {
    value.filter(|v| match v {
        Value::Null => false,
        Value::String(s) => !s.is_empty(),
        Value::Array(items) => !items.is_empty(),
        _ => true,
    })
}

/// A string field truncated to `max` characters; another type is dropped with a warning ending in `fallback`.
fn text(
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
fn start_time(
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
fn end_time(value: Option<&Value>, name: &str, warnings: &mut Vec<String>) -> Option<OffsetDateTime> {
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
fn severity(
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
fn hosts(value: Option<&Value>, name: &str, warnings: &mut Vec<String>) -> Vec<String> {
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
fn describe(value: &Value) -> String {
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
fn type_name(value: &Value) -> &'static str {
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
    use proptest::prelude::*;
    use serde_json::json;
    use time::macros::datetime;

    const RECEIVED: OffsetDateTime = datetime!(2026-11-22 10:00:00 UTC);

    /// `normalize_generic` of `payload` received as its compact text.
    fn normalize(
        payload: &Value,
        edition: Edition,
        mapping: Option<&AttributeMapping>,
    ) -> Result<NormalizedAlert, PayloadError> {
        normalize_generic(payload, &payload.to_string(), RECEIVED, edition, mapping)
    }

    fn generic(payload: Value) -> NormalizedAlert {
        normalize(&payload, Edition::Premium, None).unwrap()
    }

    fn generic_on(edition: Edition, payload: Value) -> NormalizedAlert {
        normalize(&payload, edition, None).unwrap()
    }

    fn mapped(mapping: Value, payload: Value) -> NormalizedAlert {
        let mapping = AttributeMapping::from_json(&mapping).unwrap();
        normalize(&payload, Edition::Premium, Some(&mapping)).unwrap()
    }

    fn payload_value(alert: &NormalizedAlert) -> Value {
        plain_value::from_str(&alert.payload).unwrap()
    }

    fn prometheus(alerts: Value) -> Vec<NormalizedAlert> {
        let envelope = json!({"version": "4", "status": "firing", "alerts": alerts});
        normalize_prometheus(&envelope, RECEIVED, Edition::Free).unwrap()
    }

    fn nested_arrays(depth: usize) -> String {
        format!("{}{}", "[".repeat(depth), "]".repeat(depth))
    }

    // parse_json ----------------------------------------------------------------------------------------------

    #[test]
    fn parse_json_accepts_valid_json() {
        let cases: [(&str, Value); 5] = [
            ("{}", json!({})),
            (" {\"a\": [1, 2]}\n", json!({"a": [1, 2]})),
            ("[]", json!([])),
            ("\"text\"", json!("text")),
            ("null", json!(null)),
        ];
        for (text, want) in cases {
            assert_eq!(
                parse_json(text.as_bytes(), DEFAULT_MAX_DEPTH).unwrap(),
                (want, text),
                "for {text}"
            );
        }
    }

    #[test]
    fn parse_json_reports_line_and_column() {
        let cases: [(&[u8], usize, usize); 7] = [
            (b"{\n  \"a\": }", 2, 8),
            (b"", 1, 0),
            (b"{\"a\": 1} x", 1, 10),
            (b"{'a': 1}", 1, 2),
            (b"[1,\n2,\n", 3, 0),
            // Bytes that are not UTF-8, in a string and outside one.
            (b"{\"a\": \"\xff\"}", 1, 8),
            (b"{\"a\": 1}\n\xff", 2, 1),
        ];
        for (text, line, column) in cases {
            match parse_json(text, DEFAULT_MAX_DEPTH) {
                Err(PayloadError::InvalidJson {
                    line: l,
                    column: c,
                    message,
                }) => {
                    assert_eq!((l, c), (line, column), "for {text:?}: {message}");
                    assert!(!message.contains(" at line "), "position repeated in {message:?}");
                    assert!(!message.is_empty());
                }
                other => panic!("for {text:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn parse_json_enforces_the_depth_limit() {
        let cases: [(usize, usize, Result<(), PayloadError>); 7] = [
            (64, 64, Ok(())),
            (65, 64, Err(PayloadError::TooDeep { limit: 64 })),
            (3, 2, Err(PayloadError::TooDeep { limit: 2 })),
            (200, 64, Err(PayloadError::TooDeep { limit: 64 })),
            (127, 1_000, Ok(())),
            (
                128,
                1_000,
                Err(PayloadError::TooDeep {
                    limit: PARSER_MAX_DEPTH,
                }),
            ),
            (0, 0, Ok(())),
        ];
        for (depth, limit, want) in cases {
            let text = if depth == 0 {
                "1".to_owned()
            } else {
                nested_arrays(depth)
            };
            let got = parse_json(text.as_bytes(), limit).map(|_| ());
            assert_eq!(got, want, "depth {depth}, limit {limit}");
        }
        let object_depth = "{\"a\":{\"b\":[{}]}}";
        assert!(parse_json(object_depth.as_bytes(), 4).is_ok());
        assert_eq!(
            parse_json(object_depth.as_bytes(), 3),
            Err(PayloadError::TooDeep { limit: 3 })
        );
    }

    #[test]
    fn payload_errors_know_their_answer() {
        let cases = [
            (PayloadError::NotAnObject, 422, "invalid_payload"),
            (
                PayloadError::NotAnEnvelope("x".to_owned()),
                422,
                "invalid_payload",
            ),
            (
                PayloadError::InvalidJson {
                    line: 1,
                    column: 2,
                    message: "m".to_owned(),
                },
                400,
                "invalid_json",
            ),
            (PayloadError::TooDeep { limit: 64 }, 400, "invalid_json"),
        ];
        for (error, status, code) in cases {
            assert_eq!(error.status().as_u16(), status, "{error}");
            assert_eq!(error.code(), code, "{error}");
        }
        let message = PayloadError::InvalidJson {
            line: 2,
            column: 8,
            message: "expected value".to_owned(),
        };
        assert_eq!(
            message.to_string(),
            "invalid JSON at line 2 column 8: expected value"
        );
    }

    // generic: shape and defaults -------------------------------------------------------------------------------

    #[test]
    fn generic_refuses_non_objects() {
        for value in [
            json!([]),
            json!([{"title": "x"}]),
            json!("x"),
            json!(1),
            json!(null),
            json!(true),
        ] {
            assert_eq!(
                normalize(&value, Edition::Premium, None),
                Err(PayloadError::NotAnObject),
                "for {value}"
            );
        }
    }

    #[test]
    fn generic_defaults_for_an_empty_object() {
        let alert = generic(json!({}));
        assert_eq!(alert.title, DEFAULT_TITLE);
        assert_eq!(alert.description, None);
        assert_eq!(alert.started_at, RECEIVED);
        assert_eq!(alert.ended_at, None);
        assert!(!alert.is_resolve());
        assert_eq!(alert.service, None);
        assert_eq!(alert.monitoring_tool, None);
        assert!(alert.hosts.is_empty());
        assert_eq!(alert.severity, Severity::Critical);
        assert_eq!(alert.environment, None);
        assert_eq!(alert.payload, "{}");
        assert!(alert.warnings.is_empty(), "{:?}", alert.warnings);
    }

    #[test]
    fn generic_keeps_the_senders_text_as_the_raw_payload() {
        let text = " {\"title\": \"Disk full\",\n  \"extra\": [1, 2]}\n";
        let value: Value = serde_json::from_str(text).unwrap();
        let alert = normalize_generic(&value, text, RECEIVED, Edition::Premium, None).unwrap();
        assert_eq!(alert.payload, "{\"title\": \"Disk full\",\n  \"extra\": [1, 2]}");
    }

    #[test]
    fn generic_reads_every_field() {
        let payload = json!({
            "title": "Disk full", "description": "sda1 at 100%", "start_time": "2026-11-22T09:00:00Z",
            "service": "db", "monitoring_tool": "probe", "hosts": ["db1", "db2"], "severity": "low",
            "svc_environment_name": "production", "extra": {"kept": true}
        });
        let alert = generic(payload.clone());
        assert_eq!(alert.title, "Disk full");
        assert_eq!(alert.description.as_deref(), Some("sda1 at 100%"));
        assert_eq!(alert.started_at, datetime!(2026-11-22 09:00:00 UTC));
        assert_eq!(alert.service.as_deref(), Some("db"));
        assert_eq!(alert.monitoring_tool.as_deref(), Some("probe"));
        assert_eq!(alert.hosts, ["db1", "db2"]);
        assert_eq!(alert.severity, Severity::Low);
        assert_eq!(alert.environment.as_deref(), Some("production"));
        assert_eq!(payload_value(&alert), payload, "the raw payload is kept whole");
        assert!(alert.warnings.is_empty(), "{:?}", alert.warnings);
    }

    #[test]
    fn title_rules() {
        let long = "é".repeat(250);
        let exact = "x".repeat(200);
        let cases: Vec<(Value, String, Option<&str>)> = vec![
            (json!("Disk full"), "Disk full".to_owned(), None),
            (json!(""), DEFAULT_TITLE.to_owned(), None),
            (json!(null), DEFAULT_TITLE.to_owned(), None),
            (json!([]), DEFAULT_TITLE.to_owned(), None),
            (
                json!(42),
                DEFAULT_TITLE.to_owned(),
                Some("title is a number, not a string; the default title was used"),
            ),
            (
                json!({"a": 1}),
                DEFAULT_TITLE.to_owned(),
                Some("title is an object, not a string; the default title was used"),
            ),
            (
                json!(["a"]),
                DEFAULT_TITLE.to_owned(),
                Some("title is an array, not a string; the default title was used"),
            ),
            (
                json!(true),
                DEFAULT_TITLE.to_owned(),
                Some("title is a boolean, not a string; the default title was used"),
            ),
            (
                json!(long),
                "é".repeat(200),
                Some("title was truncated to 200 characters"),
            ),
            (json!(exact.clone()), exact, None),
        ];
        for (value, want, warning) in cases {
            let alert = generic(json!({ "title": value }));
            assert_eq!(alert.title, want, "for {value}");
            assert_eq!(
                alert.warnings,
                warning.map(str::to_owned).into_iter().collect::<Vec<_>>(),
                "for {value}"
            );
        }
    }

    #[test]
    fn text_fields_are_truncated_by_characters() {
        type Read = fn(&NormalizedAlert) -> Option<&str>;
        let cases: [(&str, usize, Read); 3] = [
            ("description", 1_000, |a| a.description.as_deref()),
            ("service", 100, |a| a.service.as_deref()),
            ("monitoring_tool", 100, |a| a.monitoring_tool.as_deref()),
        ];
        for (key, max, read) in cases {
            let fits = generic(json!({ key: "ü".repeat(max) }));
            assert_eq!(
                read(&fits).map(|s| s.chars().count()),
                Some(max),
                "{key} at the limit"
            );
            assert!(fits.warnings.is_empty(), "{key}: {:?}", fits.warnings);

            let long = generic(json!({ key: format!("{}🔥tail", "ü".repeat(max - 1)) }));
            assert_eq!(
                read(&long),
                Some(format!("{}🔥", "ü".repeat(max - 1)).as_str()),
                "{key} cut"
            );
            assert_eq!(
                long.warnings,
                [format!("{key} was truncated to {max} characters")]
            );

            let wrong = generic(json!({ key: 12 }));
            assert_eq!(read(&wrong), None, "{key} of a wrong type");
            assert_eq!(
                wrong.warnings,
                [format!("{key} is a number, not a string; it was ignored")]
            );
        }
    }

    #[test]
    fn empty_values_count_as_absent() {
        let keys = [
            "title",
            "description",
            "start_time",
            "end_time",
            "service",
            "monitoring_tool",
            "hosts",
            "severity",
            "fingerprint",
            "svc_environment_name",
        ];
        let baseline = generic_on(Edition::Free, json!({}));
        for key in keys {
            for empty in [json!(""), json!(null), json!([])] {
                let payload = json!({ key: empty });
                let alert = generic_on(Edition::Free, payload.clone());
                let want = NormalizedAlert {
                    payload: payload.to_string(),
                    ..baseline.clone()
                };
                assert_eq!(alert, want, "{key}: {empty}");
            }
        }
    }

    #[test]
    fn environment_is_read_as_text() {
        let alert = generic(json!({"svc_environment_name": "staging"}));
        assert_eq!(alert.environment.as_deref(), Some("staging"));
        let wrong = generic(json!({"svc_environment_name": ["staging"]}));
        assert_eq!(wrong.environment, None);
        assert_eq!(
            wrong.warnings,
            ["svc_environment_name is an array, not a string; it was ignored"]
        );
    }

    // severity -------------------------------------------------------------------------------------------------

    #[test]
    fn generic_severity_rules() {
        let cases: Vec<(Value, Severity, Option<&str>)> = vec![
            (json!("critical"), Severity::Critical, None),
            (json!("HIGH"), Severity::High, None),
            (json!("Medium"), Severity::Medium, None),
            (json!("low"), Severity::Low, None),
            (json!("iNfO"), Severity::Info, None),
            (json!("unknown"), Severity::Unknown, None),
            (json!(" low "), Severity::Low, None),
            (
                json!("urgent"),
                Severity::Critical,
                Some("severity 'urgent' is not known; critical was used"),
            ),
            (
                json!("warning"),
                Severity::Critical,
                Some("severity 'warning' is not known; critical was used"),
            ),
            (
                json!(3),
                Severity::Critical,
                Some("severity 3 is not known; critical was used"),
            ),
            (
                json!({"level": 1}),
                Severity::Critical,
                Some("severity (an object) is not known; critical was used"),
            ),
        ];
        for (value, want, warning) in cases {
            let alert = generic(json!({ "severity": value }));
            assert_eq!(alert.severity, want, "for {value}");
            assert_eq!(
                alert.warnings,
                warning.map(str::to_owned).into_iter().collect::<Vec<_>>(),
                "for {value}"
            );
        }
    }

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

    // times ----------------------------------------------------------------------------------------------------

    #[test]
    fn start_time_rules() {
        let cases: Vec<(Value, OffsetDateTime, bool)> = vec![
            (
                json!("2026-11-22T09:00:00Z"),
                datetime!(2026-11-22 09:00:00 UTC),
                false,
            ),
            (
                json!("2026-11-22T09:00:00.250+02:00"),
                datetime!(2026-11-22 07:00:00.250 UTC),
                false,
            ),
            (
                json!("2026-11-22T09:00:00-05:30"),
                datetime!(2026-11-22 14:30:00 UTC),
                false,
            ),
            (
                json!("20261122T090000Z"),
                datetime!(2026-11-22 09:00:00 UTC),
                false,
            ),
            (
                json!("2026-11-22T09:00:00"),
                datetime!(2026-11-22 09:00:00 UTC),
                false,
            ),
            (
                json!("2026-11-22T09:00Z"),
                datetime!(2026-11-22 09:00:00 UTC),
                false,
            ),
            (json!("yesterday"), RECEIVED, true),
            (json!("2026-13-01T00:00:00Z"), RECEIVED, true),
            (json!(1_795_000_000_000_i64), RECEIVED, true),
            (json!({"t": 1}), RECEIVED, true),
        ];
        for (value, want, warned) in cases {
            let alert = generic(json!({ "start_time": value }));
            assert_eq!(alert.started_at, want, "for {value}");
            assert_eq!(
                alert.warnings.len(),
                usize::from(warned),
                "for {value}: {:?}",
                alert.warnings
            );
            assert_eq!(alert.ended_at, None);
        }
        let warned = generic(json!({"start_time": "yesterday"}));
        assert_eq!(
            warned.warnings,
            ["start_time 'yesterday' is not an ISO 8601 time; the time of receipt was used"]
        );
    }

    #[test]
    fn end_time_rules() {
        let cases: Vec<(Value, Option<OffsetDateTime>)> = vec![
            (
                json!("2026-11-22T11:00:00Z"),
                Some(datetime!(2026-11-22 11:00:00 UTC)),
            ),
            (
                json!("2026-11-22T12:00:00.5+01:00"),
                Some(datetime!(2026-11-22 11:00:00.5 UTC)),
            ),
            (
                json!(1_795_000_000_123_i64),
                Some(datetime!(2026-11-18 11:06:40.123 UTC)),
            ),
            (json!(0), Some(datetime!(1970-01-01 00:00:00 UTC))),
            (json!("soon"), None),
            (json!(1.5e12), None),
            (json!(i64::MAX), None),
            (json!(true), None),
            (json!(["2026-11-22T11:00:00Z"]), None),
        ];
        for (value, want) in cases {
            let alert = generic(json!({ "end_time": value }));
            assert_eq!(alert.ended_at, want, "for {value}");
            assert_eq!(alert.is_resolve(), want.is_some());
            assert_eq!(
                alert.warnings.len(),
                usize::from(want.is_none()),
                "for {value}: {:?}",
                alert.warnings
            );
        }
        let warned = generic(json!({"end_time": "soon"}));
        assert_eq!(
            warned.warnings,
            ["end_time 'soon' is neither an ISO 8601 time nor integer epoch milliseconds; the alert was not resolved"]
        );
    }

    #[test]
    fn long_values_are_quoted_short_in_warnings() {
        let alert = generic(json!({"severity": "x".repeat(500)}));
        assert_eq!(alert.warnings.len(), 1);
        assert!(alert.warnings[0].chars().count() < 120, "{}", alert.warnings[0]);
        assert!(alert.warnings[0].contains('…'));
    }

    #[test]
    fn format_time_table() {
        let cases = [
            (datetime!(2026-11-22 10:00:00 UTC), "2026-11-22T10:00:00.000Z"),
            (
                datetime!(2026-11-22 10:00:00.123456 UTC),
                "2026-11-22T10:00:00.123Z",
            ),
            (
                datetime!(2026-11-22 12:30:05.9 +02:00),
                "2026-11-22T10:30:05.900Z",
            ),
            (datetime!(2026-01-01 00:30:00 +01:00), "2025-12-31T23:30:00.000Z"),
            (datetime!(0001-01-01 00:00:00 UTC), "0001-01-01T00:00:00.000Z"),
        ];
        for (t, want) in cases {
            assert_eq!(format_time(t), want);
        }
    }

    #[test]
    fn format_time_outside_four_digit_years_keeps_the_general_form() {
        let t = datetime!(-0001-06-01 00:00:00 UTC);
        assert_eq!(format_time(t), format_time_general(t));
        assert!(format_time(t).starts_with("-001-06-01T"));
    }

    #[test]
    fn format_time_and_parse_time_round_trip() {
        let t = datetime!(2026-11-22 10:00:00.123 UTC);
        assert_eq!(parse_time(&format_time(t)), Some(t));
        assert_eq!(
            parse_time("9999-12-31T23:00:00-05:00"),
            None,
            "no UTC equivalent in range"
        );
    }

    #[test]
    fn times_before_1970_after_9999_or_offset_beyond_a_day_are_refused() {
        for refused in [
            "1969-12-31T23:59:59Z",
            "0001-01-01T00:00:00Z",
            "+10000-01-01T00:00:00Z",
            "2026-11-22T10:00:00+25:00",
            "2026-11-22T10:00:00-24:30",
        ] {
            assert_eq!(parse_time(refused), None, "{refused}");
        }
        for accepted in [
            "1970-01-01T00:00:00Z",
            "9999-12-31T23:59:59Z",
            "2026-11-22T10:00:00+24:00",
        ] {
            assert!(parse_time(accepted).is_some(), "{accepted}");
        }
        assert_eq!(from_epoch_millis(-1), None);
        assert_eq!(from_epoch_millis(253_402_300_800_000), None, "year 10000");
        assert!(from_epoch_millis(0).is_some());
    }

    // hosts ----------------------------------------------------------------------------------------------------

    #[test]
    fn hosts_rules() {
        let cases: Vec<(Value, Vec<&str>, Vec<&str>)> = vec![
            (json!("web1"), vec!["web1"], vec![]),
            (json!(["web1", "web2"]), vec!["web1", "web2"], vec![]),
            (
                json!(["a", ["b", ["c", []]], "d"]),
                vec!["a", "b", "c", "d"],
                vec![],
            ),
            (json!([1, 2.5, true, "x"]), vec!["1", "2.5", "true", "x"], vec![]),
            (json!(["a", null, "", [null], "b"]), vec!["a", "b"], vec![]),
            (json!(8080), vec!["8080"], vec![]),
            (json!(false), vec!["false"], vec![]),
            (
                json!({"h": "a"}),
                vec![],
                vec!["hosts is an object, not a string or an array; it was ignored"],
            ),
            (
                json!(["a", {"h": "b"}, "c"]),
                vec!["a", "c"],
                vec!["hosts contains objects; they were ignored"],
            ),
        ];
        for (value, want, warnings) in cases {
            let alert = generic(json!({ "hosts": value }));
            assert_eq!(alert.hosts, want, "for {value}");
            assert_eq!(alert.warnings, warnings, "for {value}");
        }
    }

    #[test]
    fn hosts_are_limited_to_255_characters_host_by_host() {
        let h = |c: &str, n: usize| c.repeat(n);
        let warning = "hosts was truncated to 255 characters in total";
        let cases: Vec<(Vec<String>, Vec<String>, bool)> = vec![
            (
                vec![h("a", 100), h("b", 100), h("c", 100)],
                vec![h("a", 100), h("b", 100), h("c", 55)],
                true,
            ),
            (vec![h("a", 255)], vec![h("a", 255)], false),
            (
                vec![h("a", 200), h("b", 55)],
                vec![h("a", 200), h("b", 55)],
                false,
            ),
            (vec![h("a", 255), h("b", 1)], vec![h("a", 255)], true),
            (vec![h("a", 300)], vec![h("a", 255)], true),
            (
                vec![h("ж", 250), h("日本", 5)],
                vec![h("ж", 250), h("日本", 2) + "日"],
                true,
            ),
            (
                vec![h("a", 200), h("b", 100), h("c", 5)],
                vec![h("a", 200), h("b", 55)],
                true,
            ),
        ];
        for (given, want, truncated) in cases {
            let alert = generic(json!({ "hosts": given }));
            assert_eq!(alert.hosts, want);
            assert!(alert.hosts.iter().map(|h| h.chars().count()).sum::<usize>() <= HOSTS_MAX_CHARS);
            let want_warnings: Vec<&str> = if truncated { vec![warning] } else { vec![] };
            assert_eq!(alert.warnings, want_warnings);
        }
    }

    // fingerprint ----------------------------------------------------------------------------------------------

    #[test]
    fn fingerprint_rules() {
        let firing = json!({"title": "Disk full", "service": "db", "start_time": "2026-11-22T09:00:00Z",
                            "hosts": ["db1"]});
        let cases: Vec<(Edition, Value, Option<String>)> = vec![
            (
                Edition::Premium,
                json!({"fingerprint": "abc"}),
                Some(fingerprint_of(&json!("abc"))),
            ),
            (
                Edition::Free,
                json!({"fingerprint": "abc"}),
                Some(fingerprint_of(&json!("abc"))),
            ),
            (
                Edition::Free,
                json!({"fingerprint": ["ab", "c"]}),
                Some(fingerprint_of(&json!(["ab", "c"]))),
            ),
            (
                Edition::Free,
                json!({"fingerprint": {"b": 1, "a": 2}}),
                Some(fingerprint_of(&json!({"a": 2, "b": 1}))),
            ),
            (
                Edition::Free,
                json!({"fingerprint": 7}),
                Some(fingerprint_of(&json!(7))),
            ),
            (Edition::Free, json!({"title": "x"}), None),
            (Edition::Free, json!({"title": "x", "fingerprint": ""}), None),
            (
                Edition::Premium,
                firing.clone(),
                Some(fingerprint_of(&json!({"title": "Disk full", "service": "db"}))),
            ),
        ];
        for (edition, payload, want) in cases {
            assert_eq!(
                generic_on(edition, payload.clone()).fingerprint,
                want,
                "{edition:?} {payload}"
            );
        }
        assert_ne!(
            generic(json!({"fingerprint": ["ab", "c"]})).fingerprint,
            generic(json!({"fingerprint": "abc"})).fingerprint
        );
    }

    #[test]
    fn premium_fingerprint_lets_a_recovery_find_its_alert() {
        let firing =
            generic(json!({"title": "Disk full", "start_time": "2026-11-22T09:00:00Z", "hosts": "db1"}));
        let recovery = generic(json!({"hosts": ["db1", "db2"], "end_time": 1_795_000_000_000_i64,
                                      "start_time": "2026-11-22T09:05:00Z", "title": "Disk full"}));
        let other = generic(json!({"title": "Disk fine", "start_time": "2026-11-22T09:00:00Z"}));
        assert!(recovery.is_resolve());
        assert_eq!(firing.fingerprint, recovery.fingerprint);
        assert_ne!(firing.fingerprint, other.fingerprint);
        let fp = firing.fingerprint.unwrap();
        assert_eq!(fp.len(), 64);
        assert!(fp
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
    }

    #[test]
    fn free_without_fingerprint_never_groups() {
        let alert = generic_on(Edition::Free, json!({"title": "Disk full", "service": "db"}));
        assert_eq!(alert.fingerprint, None);
    }

    // custom mapping -------------------------------------------------------------------------------------------

    #[test]
    fn mapping_deserialises_and_round_trips() {
        let json = json!({
            "title": {"path": ["alert", "name"], "type": "string"},
            "start_time": {"path": ["alert", "times", 0], "type": "datetime"},
            "hosts": {"path": ["targets"], "type": "array"},
            "fingerprint": {"path": ["id"], "type": "string"},
            "severity": null
        });
        let mapping: AttributeMapping = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(mapping, AttributeMapping::from_json(&json).unwrap());
        assert_eq!(
            mapping.get(Attribute::StartTime),
            Some(&MappedPath {
                path: vec![
                    PathSegment::Key("alert".into()),
                    PathSegment::Key("times".into()),
                    PathSegment::Index(0)
                ],
                kind: MappingType::Datetime,
            })
        );
        assert_eq!(mapping.get(Attribute::Severity), None);
        assert_eq!(mapping.iter().count(), 4);
        let back = serde_json::to_value(&mapping).unwrap();
        let again: AttributeMapping = serde_json::from_value(back).unwrap();
        assert_eq!(again, mapping);
        assert!(AttributeMapping::default().is_empty());
    }

    #[test]
    fn mapping_validation_errors() {
        let cases: Vec<(Value, MappingError)> = vec![
            (json!([]), MappingError::NotAnObject),
            (
                json!({"colour": {"path": ["c"], "type": "string"}}),
                MappingError::UnknownAttribute("colour".into()),
            ),
            (
                json!({"title": "name"}),
                MappingError::NotAnEntry { attribute: "title" },
            ),
            (
                json!({"title": {"path": ["a"], "type": "string", "default": "x"}}),
                MappingError::UnknownEntryKey {
                    attribute: "title",
                    key: "default".into(),
                },
            ),
            (
                json!({"title": {"type": "string"}}),
                MappingError::BadPath {
                    attribute: "title",
                    reason: "is missing".into(),
                },
            ),
            (
                json!({"title": {"path": [], "type": "string"}}),
                MappingError::BadPath {
                    attribute: "title",
                    reason: "must not be empty".into(),
                },
            ),
            (
                json!({"title": {"path": "a.b", "type": "string"}}),
                MappingError::BadPath {
                    attribute: "title",
                    reason: "must be an array of keys and indexes".into(),
                },
            ),
            (
                json!({"title": {"path": ["a", -1], "type": "string"}}),
                MappingError::BadPath {
                    attribute: "title",
                    reason: "has -1 at 1, not an array index".into(),
                },
            ),
            (
                json!({"title": {"path": ["a", 1.5], "type": "string"}}),
                MappingError::BadPath {
                    attribute: "title",
                    reason: "has 1.5 at 1, not an array index".into(),
                },
            ),
            (
                json!({"title": {"path": [{"k": 1}], "type": "string"}}),
                MappingError::BadPath {
                    attribute: "title",
                    reason: "has an object at 0, not a key or an index".into(),
                },
            ),
            (
                json!({"title": {"path": ["a"]}}),
                MappingError::BadType { attribute: "title" },
            ),
            (
                json!({"title": {"path": ["a"], "type": "number"}}),
                MappingError::BadType { attribute: "title" },
            ),
            (
                json!({"title": {"path": ["a"], "type": "array"}}),
                MappingError::TypeNotAllowed {
                    attribute: "title",
                    kind: "array",
                    allowed: "string".into(),
                },
            ),
            (
                json!({"end_time": {"path": ["a"], "type": "array"}}),
                MappingError::TypeNotAllowed {
                    attribute: "end_time",
                    kind: "array",
                    allowed: "datetime or string".into(),
                },
            ),
            (
                json!({"hosts": {"path": ["a"], "type": "datetime"}}),
                MappingError::TypeNotAllowed {
                    attribute: "hosts",
                    kind: "datetime",
                    allowed: "string or array".into(),
                },
            ),
        ];
        for (json, want) in cases {
            assert_eq!(
                AttributeMapping::from_json(&json),
                Err(want.clone()),
                "for {json}"
            );
            if json.is_object() {
                let via_serde = serde_json::from_value::<AttributeMapping>(json.clone()).unwrap_err();
                assert_eq!(via_serde.to_string(), want.to_string());
            }
        }
        let listed = MappingError::UnknownAttribute("colour".into()).to_string();
        assert!(listed.contains("svc_environment_name"), "{listed}");
    }

    #[test]
    fn mapping_insert_validates() {
        let mut mapping = AttributeMapping::default();
        let empty = MappedPath {
            path: vec![],
            kind: MappingType::String,
        };
        assert!(mapping.insert(Attribute::Title, empty).is_err());
        let wrong = MappedPath {
            path: vec![PathSegment::Index(0)],
            kind: MappingType::Datetime,
        };
        assert!(mapping.insert(Attribute::Service, wrong).is_err());
        let good = MappedPath {
            path: vec![PathSegment::Key("s".into())],
            kind: MappingType::String,
        };
        assert!(mapping.insert(Attribute::Service, good).is_ok());
        assert!(!mapping.is_empty());
    }

    #[test]
    fn attribute_keys_round_trip() {
        for attribute in Attribute::ALL {
            assert_eq!(Attribute::from_key(attribute.key()), Some(attribute));
            assert!(!attribute.allowed_types().is_empty());
        }
        assert_eq!(Attribute::from_key("environment"), None);
    }

    #[test]
    fn read_generic_measures_the_depth_of_members_it_does_not_keep() {
        let text = r#"{"labels":{"a":{"b":[1]}},"fingerprint":"x"}"#;
        assert_eq!(
            read_generic(text.as_bytes(), 3, RECEIVED, Edition::Premium, None),
            Err(PayloadError::TooDeep { limit: 3 })
        );
        let alert = read_generic(text.as_bytes(), 4, RECEIVED, Edition::Premium, None).unwrap();
        assert_eq!(alert.payload, text);
        // A number out of range inside a member it does not keep is refused where the whole read refuses it.
        let out_of_range = br#"{"title":"t","x":[1e400]}"#;
        let refused = read_generic(out_of_range, 4, RECEIVED, Edition::Free, None).unwrap_err();
        assert!(
            matches!(refused, PayloadError::InvalidJson { line: 1, .. }),
            "{refused:?}"
        );
        assert_eq!(Err(refused), parse_json(out_of_range, 4).map(drop));
    }

    #[test]
    fn a_payload_means_what_it_spells_even_with_serde_jsons_raw_value_key() {
        let token = "$serde_json::private::RawValue";
        // serde_json's own reader would take the string for the document (title "x"), or refuse the comma after it.
        let embedded = format!(r#"{{"{token}":"{{\"title\":\"x\"}}"}}"#);
        let followed = format!(r#"{{"{token}":"1","fingerprint":"f","title":"Disk full"}}"#);
        for (text, title) in [(embedded, DEFAULT_TITLE), (followed, "Disk full")] {
            for edition in [Edition::Free, Edition::Premium] {
                let lean = read_generic(text.as_bytes(), 8, RECEIVED, edition, None).unwrap();
                let (value, whole) = parse_json(text.as_bytes(), 8).unwrap();
                // The key stays a member like any other.
                assert!(value[token].is_string());
                assert_eq!(
                    lean,
                    normalize_generic(&value, whole, RECEIVED, edition, None).unwrap()
                );
                assert_eq!(lean.title, title);
            }
        }
    }

    #[test]
    fn each_attribute_is_read_from_its_own_key_and_the_last_duplicate_wins() {
        // `ALL` lists the attributes in declaration order, so `attribute as usize` is its place in `ALL`.
        for (place, attribute) in Attribute::ALL.into_iter().enumerate() {
            assert_eq!(attribute as usize, place);
        }
        let text =
            r#"{"service":"first","title":"Disk full","service":"checkout","hosts":["web-1"],"other":1}"#;
        let payload: Value = serde_json::from_str(text).unwrap();
        let alert = normalize_generic(&payload, text, RECEIVED, Edition::Premium, None).unwrap();
        assert_eq!(alert.title, "Disk full");
        assert_eq!(alert.service.as_deref(), Some("checkout"));
        assert_eq!(alert.hosts, ["web-1"]);
        assert_eq!(alert.monitoring_tool, None);
    }

    #[test]
    fn mapped_attributes_are_read_from_their_paths() {
        let mapping = json!({
            "title": {"path": ["alert", "name"], "type": "string"},
            "description": {"path": ["alert", "text"], "type": "string"},
            "start_time": {"path": ["times", 0], "type": "datetime"},
            "end_time": {"path": ["times", 1], "type": "datetime"},
            "service": {"path": ["svc"], "type": "string"},
            "monitoring_tool": {"path": ["tool"], "type": "string"},
            "hosts": {"path": ["targets"], "type": "array"},
            "severity": {"path": ["alert", "level"], "type": "string"},
            "fingerprint": {"path": ["alert", "id"], "type": "string"},
            "svc_environment_name": {"path": ["env"], "type": "string"}
        });
        let payload = json!({
            "alert": {"name": "CPU hot", "text": "95%", "level": "HIGH", "id": "cpu-1"},
            "times": ["2026-11-22T08:00:00Z", "2026-11-22T08:30:00Z"],
            "svc": "api", "tool": "probe", "targets": [["a"], "b"], "env": "prod",
            "title": "ignored while the mapped value is present"
        });
        let alert = mapped(mapping, payload);
        assert_eq!(alert.title, "CPU hot");
        assert_eq!(alert.description.as_deref(), Some("95%"));
        assert_eq!(alert.started_at, datetime!(2026-11-22 08:00:00 UTC));
        assert_eq!(alert.ended_at, Some(datetime!(2026-11-22 08:30:00 UTC)));
        assert_eq!(alert.service.as_deref(), Some("api"));
        assert_eq!(alert.monitoring_tool.as_deref(), Some("probe"));
        assert_eq!(alert.hosts, ["a", "b"]);
        assert_eq!(alert.severity, Severity::High);
        assert_eq!(alert.fingerprint, Some(fingerprint_of(&json!("cpu-1"))));
        assert_eq!(alert.environment.as_deref(), Some("prod"));
        assert!(alert.warnings.is_empty(), "{:?}", alert.warnings);
    }

    #[test]
    fn absent_mapped_values_fall_back_to_the_default_key() {
        let mapping = json!({
            "title": {"path": ["alert", "name"], "type": "string"},
            "severity": {"path": ["alert", "level"], "type": "string"},
            "end_time": {"path": ["times", 3], "type": "datetime"}
        });
        let cases: Vec<(Value, &str, Severity)> = vec![
            (
                json!({"title": "fallback", "severity": "low"}),
                "fallback",
                Severity::Low,
            ),
            (
                json!({"alert": {"name": ""}, "title": "fallback"}),
                "fallback",
                Severity::Critical,
            ),
            (
                json!({"alert": {"name": null, "level": "info"}, "title": "fallback"}),
                "fallback",
                Severity::Info,
            ),
            (
                json!({"alert": "not an object", "title": "fallback"}),
                "fallback",
                Severity::Critical,
            ),
            (json!({"alert": {"name": []}}), DEFAULT_TITLE, Severity::Critical),
            (
                json!({"alert": {"name": "mapped"}, "title": "fallback"}),
                "mapped",
                Severity::Critical,
            ),
        ];
        for (payload, title, severity) in cases {
            let alert = mapped(mapping.clone(), payload.clone());
            assert_eq!(alert.title, title, "for {payload}");
            assert_eq!(alert.severity, severity, "for {payload}");
            assert_eq!(alert.ended_at, None, "for {payload}");
        }
        let by_key = mapped(
            mapping,
            json!({"times": ["x"], "end_time": "2026-11-22T11:00:00Z"}),
        );
        assert_eq!(by_key.ended_at, Some(datetime!(2026-11-22 11:00:00 UTC)));
    }

    #[test]
    fn mapped_values_of_a_wrong_type_default_with_a_warning() {
        let mapping = json!({"title": {"path": ["alert", "name"], "type": "string"}});
        let alert = mapped(
            mapping,
            json!({"alert": {"name": {"first": "x"}}, "title": "not used"}),
        );
        assert_eq!(alert.title, DEFAULT_TITLE);
        assert_eq!(
            alert.warnings,
            ["title is an object, not a string; the default title was used"]
        );
    }

    #[test]
    fn mapped_times_and_hosts_are_left_out_of_the_premium_fingerprint() {
        let mapping = json!({
            "start_time": {"path": ["alert", "since"], "type": "datetime"},
            "end_time": {"path": ["times", 1], "type": "datetime"},
            "hosts": {"path": ["alert", "where"], "type": "array"}
        });
        let firing = mapped(
            mapping.clone(),
            json!({"alert": {"name": "x", "since": "2026-11-22T08:00:00Z", "where": ["a"]}, "times": ["t0"]}),
        );
        let recovery = mapped(
            mapping,
            json!({"alert": {"name": "x", "since": "2026-11-22T08:01:00Z", "where": ["b"]},
                   "times": ["t0", "2026-11-22T09:00:00Z"]}),
        );
        assert_eq!(firing.ended_at, None);
        assert!(recovery.is_resolve());
        assert_eq!(firing.fingerprint, recovery.fingerprint);
    }

    #[test]
    fn value_at_and_blank_at() {
        let root = json!({"a": [{"b": 1}, 2], "c": "x"});
        let path = |segments: &[PathSegment]| segments.to_vec();
        let key = |k: &str| PathSegment::Key(k.to_owned());
        let cases: Vec<(Vec<PathSegment>, Option<Value>)> = vec![
            (path(&[key("a"), PathSegment::Index(0), key("b")]), Some(json!(1))),
            (path(&[key("a"), PathSegment::Index(1)]), Some(json!(2))),
            (path(&[key("a"), PathSegment::Index(2)]), None),
            (path(&[key("a"), key("0")]), None),
            (path(&[key("c"), PathSegment::Index(0)]), None),
            (path(&[]), Some(root.clone())),
        ];
        for (p, want) in cases {
            assert_eq!(value_at(&root, &p).cloned(), want, "{p:?}");
        }
        let mut blanked = root.clone();
        blank_at(&mut blanked, &[key("a"), PathSegment::Index(0)]);
        blank_at(&mut blanked, &[key("c")]);
        blank_at(&mut blanked, &[key("missing"), key("deeper")]);
        assert_eq!(blanked, json!({"a": [null, 2]}));
    }

    // Prometheus -----------------------------------------------------------------------------------------------

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

    // properties -----------------------------------------------------------------------------------------------

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            (-4_000i32..4_000).prop_map(|n| Value::from(f64::from(n) / 8.0)),
            ".{0,300}".prop_map(Value::String),
            Just(json!("2026-11-22T10:00:00Z")),
            Just(json!("resolved")),
        ];
        leaf.prop_recursive(5, 64, 8, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
                prop::collection::vec((key(), inner), 0..8)
                    .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
            ]
        })
    }

    /// Mostly the keys the rules read, so that the properties exercise them with values of every type.
    fn key() -> impl Strategy<Value = String> {
        let known: Vec<&'static str> = Attribute::ALL
            .map(Attribute::key)
            .into_iter()
            .chain([
                "alerts",
                "labels",
                "annotations",
                "status",
                "startsAt",
                "endsAt",
                "instance",
                "alertname",
                // serde_json's own `Value` reader gives this key a meaning; payloads must not.
                "$serde_json::private::RawValue",
            ])
            .collect();
        prop_oneof![prop::sample::select(known).prop_map(str::to_owned), "[a-z]{0,4}"]
    }

    fn mapping() -> impl Strategy<Value = Option<AttributeMapping>> {
        let segment = prop_oneof![
            key().prop_map(PathSegment::Key),
            (0usize..3).prop_map(PathSegment::Index)
        ];
        let entry = (
            prop::sample::select(Attribute::ALL.to_vec()),
            prop::collection::vec(segment, 1..4),
        );
        prop::option::of(prop::collection::vec(entry, 0..6).prop_map(|entries| {
            let mut mapping = AttributeMapping::default();
            for (attribute, path) in entries {
                let kind = attribute.allowed_types()[0];
                mapping.insert(attribute, MappedPath { path, kind }).unwrap();
            }
            mapping
        }))
    }

    fn check_invariants(alert: &NormalizedAlert) -> Result<(), TestCaseError> {
        prop_assert!(alert.title.chars().count() <= TITLE_MAX_CHARS);
        prop_assert!(!alert.title.is_empty());
        prop_assert!(alert.description.as_ref().map_or(0, |d| d.chars().count()) <= DESCRIPTION_MAX_CHARS);
        prop_assert!(alert.service.as_ref().map_or(0, |d| d.chars().count()) <= SHORT_TEXT_MAX_CHARS);
        prop_assert!(alert.monitoring_tool.as_ref().map_or(0, |d| d.chars().count()) <= SHORT_TEXT_MAX_CHARS);
        prop_assert!(alert.hosts.iter().map(|h| h.chars().count()).sum::<usize>() <= HOSTS_MAX_CHARS);
        prop_assert!(alert.hosts.iter().all(|h| !h.is_empty()));
        if let Some(fp) = &alert.fingerprint {
            prop_assert_eq!(fp.len(), 64);
            prop_assert!(fp
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
        }
        prop_assert!(alert.started_at.offset().is_utc());
        prop_assert!(alert.ended_at.map_or(true, |t| t.offset().is_utc()));
        Ok(())
    }

    proptest! {
        #[test]
        fn normalize_generic_never_panics(value in json_value(), mapping in mapping(), premium in any::<bool>()) {
            let edition = if premium { Edition::Premium } else { Edition::Free };
            match normalize(&value, edition, mapping.as_ref()) {
                Ok(alert) => {
                    prop_assert!(value.is_object());
                    prop_assert_eq!(payload_value(&alert), value);
                    if premium {
                        prop_assert!(alert.fingerprint.is_some());
                    }
                    check_invariants(&alert)?;
                }
                Err(error) => {
                    prop_assert!(!value.is_object());
                    prop_assert_eq!(error, PayloadError::NotAnObject);
                }
            }
        }

        #[test]
        fn generic_objects_always_normalize(pairs in prop::collection::vec((key(), json_value()), 0..12)) {
            let value = Value::Object(pairs.into_iter().collect());
            let alert = normalize(&value, Edition::Premium, None).unwrap();
            check_invariants(&alert)?;
        }

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

        #[test]
        fn read_generic_answers_as_parse_json_then_normalize_generic(
            bytes in prop_oneof![
                json_value().prop_map(|value| value.to_string().into_bytes()),
                prop::collection::vec((key(), json_value()), 0..12)
                    .prop_map(|pairs| Value::Object(pairs.into_iter().collect()).to_string().into_bytes()),
                "[\\[\\]{}\":,0-9a-z \\\\\n]{0,200}".prop_map(String::into_bytes),
                prop::collection::vec(any::<u8>(), 0..64),
            ],
            limit in 0usize..8,
            premium in any::<bool>(),
        ) {
            let edition = if premium { Edition::Premium } else { Edition::Free };
            let whole = parse_json(&bytes, limit)
                .and_then(|(value, text)| normalize_generic(&value, text, RECEIVED, edition, None));
            prop_assert_eq!(read_generic(&bytes, limit, RECEIVED, edition, None), whole);
        }

        #[test]
        fn parse_json_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..512), limit in 0usize..200) {
            let _ = parse_json(&bytes, limit);
        }

        #[test]
        fn parse_json_accepts_exactly_what_serde_json_reads_from_bytes(
            bytes in prop_oneof![
                prop::collection::vec(any::<u8>(), 0..64),
                "[\\[\\]{}\":,0-9a-z \\\\\u{e9}\u{1f600}\n]{0,200}".prop_map(String::into_bytes),
                "[\\[\\]{}\":,0-9a-z]{0,100}".prop_map(|text| {
                    let mut bytes = text.into_bytes();
                    bytes.insert(bytes.len() / 2, 0xff);
                    bytes
                }),
            ]
        ) {
            let from_bytes = serde_json::from_slice::<Value>(&bytes);
            match parse_json(&bytes, PARSER_MAX_DEPTH) {
                Ok((value, text)) => {
                    prop_assert_eq!(Some(value), from_bytes.ok());
                    prop_assert_eq!(text.as_bytes(), &bytes[..]);
                }
                Err(PayloadError::InvalidJson { line, column, .. }) => {
                    let error = from_bytes.err();
                    prop_assert_eq!(error.as_ref().map(|e| (e.line(), e.column())), Some((line, column)));
                }
                Err(other) => prop_assert!(false, "unexpected {:?}", other),
            }
        }

        #[test]
        fn parse_json_never_panics_on_json_like_bytes(text in "[\\[\\]{}\":,0-9a-z \\\\\n]{0,400}", limit in 0usize..200) {
            match parse_json(text.as_bytes(), limit) {
                Ok((value, _)) => prop_assert!(nesting_depth(&value) <= limit),
                Err(PayloadError::InvalidJson { line, .. }) => prop_assert!(line >= 1),
                Err(PayloadError::TooDeep { limit: l }) => prop_assert_eq!(l, limit.min(PARSER_MAX_DEPTH)),
                Err(other) => prop_assert!(false, "unexpected {:?}", other),
            }
        }

        #[test]
        fn parse_json_depth_limit_is_exact(depth in 1usize..140, limit in 1usize..140) {
            let text = nested_arrays(depth);
            let got = parse_json(text.as_bytes(), limit);
            prop_assert_eq!(got.is_ok(), depth <= limit.min(PARSER_MAX_DEPTH));
        }

        #[test]
        fn format_time_writes_what_format_writes(
            seconds in 0i64..253_402_300_799,
            nanos in 0u32..1_000_000_000,
            offset_minutes in -1439i32..1439,
        ) {
            let offset = UtcOffset::from_whole_seconds(offset_minutes * 60).unwrap();
            let t = OffsetDateTime::from_unix_timestamp(seconds).unwrap().replace_nanosecond(nanos).unwrap().to_offset(offset);
            prop_assert_eq!(format_time(t), format_time_general(t));
        }

        #[test]
        fn parse_json_reads_what_serde_json_writes(value in json_value()) {
            let text = serde_json::to_vec(&value).unwrap();
            prop_assert_eq!(parse_json(&text, DEFAULT_MAX_DEPTH).unwrap().0, value);
        }

        #[test]
        fn premium_fingerprint_ignores_key_order(pairs in prop::collection::vec(("[a-z]{1,3}", json_value()), 0..8)) {
            let forward: Map<String, Value> = pairs.iter().cloned().collect();
            let backward: Map<String, Value> = pairs.iter().rev().cloned().collect();
            let dedup_backward: Map<String, Value> =
                backward.keys().map(|k| (k.clone(), forward[k].clone())).collect();
            let a = generic(Value::Object(forward)).fingerprint;
            let b = generic(Value::Object(dedup_backward)).fingerprint;
            prop_assert_eq!(a, b);
        }

        #[test]
        fn fingerprint_keys_do_not_collide_with_their_concatenation(a in ".{0,6}", b in ".{0,6}") {
            prop_assume!(!(a.is_empty() && b.is_empty()));
            let split = generic(json!({"fingerprint": [a.clone(), b.clone()]})).fingerprint;
            let joined = generic(json!({"fingerprint": format!("{a}{b}")})).fingerprint;
            prop_assert_ne!(split, joined);
        }
    }
}
