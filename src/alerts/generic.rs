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

/// The payload reader of Generic and HTTP Endpoint integrations (their line in [`super::kinds::KINDS`]): one alert
/// per body, by [`read_generic`].
pub fn read(
    bytes: &[u8],
    max_depth: usize,
    received_at: OffsetDateTime,
    edition: Edition,
    mapping: Option<&AttributeMapping>,
) -> Result<Vec<NormalizedAlert>, PayloadError> {
    read_generic(bytes, max_depth, received_at, edition, mapping).map(|alert| vec![alert])
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
    use serde_json::{Map, Value};
    use time::macros::datetime;
    use time::OffsetDateTime;

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
