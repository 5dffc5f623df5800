//! Tests of the alert model across its files: from request bytes ([`super::payload`]) through a format
//! ([`super::generic`] with [`super::mapping`], [`super::prometheus`]) to the [`super::normalized`] alert and its
//! field rules. Most cases go through a whole normalisation, so they are kept together with their shared helpers
//! and property strategies.

#![allow(clippy::unwrap_used)]

use super::fingerprint::fingerprint_of;
use super::generic::*;
use super::mapping::*;
use super::normalized::*;
use super::payload::*;
use super::prometheus::*;
use crate::plain_value;
use proptest::prelude::*;
use serde_json::json;
use serde_json::{Map, Value};
use time::macros::datetime;
use time::OffsetDateTime;

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
    let firing = generic(json!({"title": "Disk full", "start_time": "2026-11-22T09:00:00Z", "hosts": "db1"}));
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
    let text = r#"{"service":"first","title":"Disk full","service":"checkout","hosts":["web-1"],"other":1}"#;
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
