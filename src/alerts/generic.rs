//! Generic and HTTP Endpoint payloads (contract `alerts.md` section 4): one JSON object, one alert, its fields under
//! the attributes' keys or, with a custom mapping, at the mapped paths. Check 7 of the receiving order for these
//! integrations: a body that is not a JSON object is refused; every field problem is a default plus a warning.

use serde_json::{Map, Value};
use time::OffsetDateTime;

use super::fingerprint::fingerprint_of;
use super::mapping::{blank_at, value_at, AttributeMapping, PathSegment};
use super::members;
use super::normalized::{
    end_time, hosts, present, severity, start_time, text, Attribute, Edition, NormalizedAlert, Severity,
    DEFAULT_TITLE, DESCRIPTION_MAX_CHARS, IGNORED, SHORT_TEXT_MAX_CHARS, TITLE_FALLBACK, TITLE_MAX_CHARS,
};
use super::payload::{parse_json, PayloadError};

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
