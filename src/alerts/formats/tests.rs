//! Tests of the formats: every example body under `tests/fixtures/formats/<format>/` against its expected mapping
//! (one table, one case per body, so adding a sender is one file plus its fixtures), the built-in Alertmanager
//! file against the prometheus kind's reader, the checker's file-and-line errors, and bodies that must never
//! panic the reader.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use serde_json::{json, Value};
use time::macros::datetime;
use time::OffsetDateTime;

use super::compile::compile_file;
use super::times::parse_iso;
use super::*;
use crate::alerts::fingerprint::fingerprint_of;
use crate::alerts::normalized::{Edition, NormalizedAlert};
use crate::alerts::payload::PayloadError;
use crate::alerts::prometheus::normalize_prometheus;

/// The time of receipt of every fixture.
const RECEIVED: OffsetDateTime = datetime!(2026-11-26 06:00:00 UTC);

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/formats")
}

/// Every `(format, case, body path)` of the fixtures, in name order.
fn fixture_cases() -> Vec<(String, String, PathBuf)> {
    let mut cases = Vec::new();
    let mut formats: Vec<_> = std::fs::read_dir(fixtures_dir())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_dir())
        .collect();
    formats.sort();
    for dir in formats {
        let format = dir.file_name().unwrap().to_str().unwrap().to_owned();
        let mut bodies: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| {
                let name = path.file_name().unwrap().to_str().unwrap();
                name.ends_with(".json") && !name.ends_with(".expected.json")
            })
            .collect();
        bodies.sort();
        for body in bodies {
            let case = body.file_stem().unwrap().to_str().unwrap().to_owned();
            cases.push((format.clone(), case, body));
        }
    }
    cases
}

/// The delivery a fixture describes in its expected file's `request` (suffix, query, headers).
struct Request {
    suffix: String,
    query: Option<String>,
    headers: http::HeaderMap,
}

fn request_of(expected: &Value) -> Request {
    let request = expected.get("request").cloned().unwrap_or(json!({}));
    let mut headers = http::HeaderMap::new();
    if let Some(map) = request.get("headers").and_then(Value::as_object) {
        for (name, value) in map {
            headers.insert(
                http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                http::HeaderValue::from_str(value.as_str().unwrap()).unwrap(),
            );
        }
    }
    Request {
        suffix: request["suffix"].as_str().unwrap_or("").to_owned(),
        query: request["query"].as_str().map(str::to_owned),
        headers,
    }
}

fn read_fixture(
    catalog: &Catalog,
    format: &str,
    body: &[u8],
    request: &Request,
) -> Result<Reading, PayloadError> {
    let format = catalog
        .get(format)
        .unwrap_or_else(|| panic!("no format {format}"));
    let delivery = Delivery {
        body,
        suffix: &request.suffix,
        query: request.query.as_deref(),
        headers: &request.headers,
    };
    format.read(&delivery, 64, RECEIVED, Edition::Premium)
}

fn time_text(time: OffsetDateTime) -> String {
    crate::util::time_format::format_time(time)
}

/// One alert as its expected file writes it (times compared as instants, written with milliseconds).
fn alert_view(alert: &NormalizedAlert) -> Value {
    json!({
        "title": alert.title,
        "description": alert.description,
        "severity": alert.severity.as_str(),
        "fingerprint": alert.fingerprint,
        "start": time_text(alert.started_at),
        "end": alert.ended_at.map(time_text),
        "state": if alert.is_resolve() { "resolve" } else { "fire" },
        "hosts": alert.hosts,
        "service": alert.service,
        "monitoring_tool": alert.monitoring_tool,
        "environment": alert.environment,
        "warnings": alert.warnings,
    })
}

/// The expected alert with `fingerprint_source` hashed and its times brought to the same text.
fn expected_view(expected: &Value) -> Value {
    let mut view = expected.clone();
    let map = view.as_object_mut().unwrap();
    let source = map.remove("fingerprint_source").expect("fingerprint_source");
    map.insert(
        "fingerprint".to_owned(),
        if source.is_null() {
            Value::Null
        } else {
            json!(fingerprint_of(&source))
        },
    );
    for key in ["start", "end"] {
        if let Some(text) = map.get(key).and_then(Value::as_str) {
            let parsed = parse_iso(text).unwrap_or_else(|| panic!("{key} {text:?} is not a time"));
            map.insert(key.to_owned(), json!(time_text(parsed)));
        }
    }
    map.entry("warnings").or_insert(json!([]));
    map.entry("description").or_insert(Value::Null);
    view
}

fn reading_view(reading: &Reading) -> Value {
    match reading {
        Reading::Alerts(alerts) => json!({
            "reading": "alerts",
            "count": alerts.len(),
            "alerts": alerts.iter().map(alert_view).collect::<Vec<_>>(),
        }),
        Reading::Confirmation { subscribe_url } => {
            json!({"reading": "confirmation", "subscribe_url": subscribe_url})
        }
        Reading::Ignored { reason } => json!({"reading": "ignored", "reason": reason}),
    }
}

fn expected_reading(expected: &Value) -> Value {
    let mut view = expected.clone();
    let map = view.as_object_mut().unwrap();
    map.remove("request");
    if let Some(alerts) = map.get("alerts").and_then(Value::as_array) {
        let alerts: Vec<Value> = alerts.iter().map(expected_view).collect();
        map.insert("alerts".to_owned(), Value::Array(alerts));
    }
    view
}

#[test]
fn every_fixture_maps_as_expected() {
    let catalog = Catalog::builtin().unwrap();
    let cases = fixture_cases();
    assert!(cases.len() >= 6, "fixtures found: {}", cases.len());
    let mut failures = Vec::new();
    for (format, case, body_path) in &cases {
        let body = std::fs::read(body_path).unwrap();
        let expected_path = body_path.with_file_name(format!("{case}.expected.json"));
        let expected: Value = match std::fs::read(&expected_path) {
            Ok(text) => serde_json::from_slice(&text).unwrap(),
            Err(_) => {
                let got = read_fixture(&catalog, format, &body, &request_of(&json!({}))).map_or_else(
                    |error| json!({"error": error.to_string()}),
                    |reading| reading_view(&reading),
                );
                failures.push(format!(
                    "{format}/{case}: no {case}.expected.json; it reads {got}"
                ));
                continue;
            }
        };
        let request = request_of(&expected);
        let got = match read_fixture(&catalog, format, &body, &request) {
            Ok(reading) => reading_view(&reading),
            Err(error) => json!({"reading": "error", "error": error.to_string()}),
        };
        let want = expected_reading(&expected);
        if got != want {
            failures.push(format!(
                "{format}/{case}:\n  want {}\n  got  {}",
                serde_json::to_string(&want).unwrap(),
                serde_json::to_string(&got).unwrap()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_builtin_format_has_a_firing_and_a_resolving_fixture() {
    let catalog = Catalog::builtin().unwrap();
    for summary in catalog.list().into_iter().filter(|s| s.name != GENERIC) {
        let dir = fixtures_dir().join(&summary.name);
        let expected: Vec<Value> = std::fs::read_dir(&dir)
            .unwrap_or_else(|_| panic!("no fixtures for {}", summary.name))
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.to_str().unwrap().ends_with(".expected.json"))
            .map(|path| serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap())
            .collect();
        let states: Vec<&str> = expected
            .iter()
            .flat_map(|e| e["alerts"].as_array().cloned().unwrap_or_default())
            .filter_map(|alert| alert["state"].as_str().map(str::to_owned))
            .map(|state| if state == "fire" { "fire" } else { "resolve" })
            .collect();
        assert!(states.contains(&"fire"), "{}: no firing fixture", summary.name);
        assert!(
            states.contains(&"resolve"),
            "{}: no resolving fixture",
            summary.name
        );
    }
}

#[test]
fn alertmanager_file_maps_as_the_prometheus_reader_does() {
    let catalog = Catalog::builtin().unwrap();
    let cases: Vec<_> = fixture_cases()
        .into_iter()
        .filter(|(format, _, _)| format == "alertmanager")
        .collect();
    assert!(cases.len() >= 2);
    for edition in [Edition::Free, Edition::Premium] {
        for (_, case, path) in &cases {
            let body = std::fs::read(path).unwrap();
            let value: Value = serde_json::from_slice(&body).unwrap();
            let want = normalize_prometheus(&value, RECEIVED, edition).unwrap();
            let delivery = Delivery {
                body: &body,
                suffix: "",
                query: None,
                headers: &http::HeaderMap::new(),
            };
            let got = catalog
                .get("alertmanager")
                .unwrap()
                .read(&delivery, 64, RECEIVED, edition)
                .unwrap();
            assert_eq!(got, Reading::Alerts(want), "{case} on {edition:?}");
        }
    }
    // The shape errors are the same words.
    for body in [
        json!([]),
        json!({"status": "firing"}),
        json!({"alerts": {"0": {}}}),
        json!({"alerts": [{}, "x"]}),
    ] {
        let text = body.to_string();
        let delivery = Delivery {
            body: text.as_bytes(),
            suffix: "",
            query: None,
            headers: &http::HeaderMap::new(),
        };
        let got = catalog
            .get("alertmanager")
            .unwrap()
            .read(&delivery, 64, RECEIVED, Edition::Free);
        let Err(PayloadError::NotTheFormat { reason, .. }) = got else {
            panic!("{body}: {got:?}");
        };
        let Err(PayloadError::NotAnEnvelope(want)) = normalize_prometheus(&body, RECEIVED, Edition::Free)
        else {
            panic!("{body}");
        };
        assert_eq!(reason, want, "{body}");
    }
}

/// Compiles one file's text as an operator's file named `broken.toml`.
fn check(text: &str) -> Vec<String> {
    match compile_file("broken.toml", "broken", text, Origin::BuiltIn) {
        Ok(_) => Vec::new(),
        Err(errors) => errors,
    }
}

#[test]
fn checker_errors_name_file_and_line_and_what_was_expected() {
    let cases: [(&str, &str); 16] = [
        ("description = \"x\"\nlist = 5\n", "broken.toml:2: "),
        (
            "description = \"x\"\nbogus = 1\n",
            "broken.toml:2: unknown field `bogus`",
        ),
        (
            "description = \"x\"\n[fields]\ntitle = \"alerts.title\"\n",
            "broken.toml:3: fields.title: expected a path starting with $",
        ),
        (
            "description = \"x\"\n[fields]\n\ntitle = { path = \"$.a\", regex = \"(\" }\n",
            "broken.toml:4: fields.title: regex: ",
        ),
        (
            "description = \"x\"\n[fields]\ntitle = { path = \"$.a\", const = 1 }\n",
            "broken.toml:3: fields.title: expected a path",
        ),
        (
            "description = \"x\"\n[fields]\ntitle = { path = \"$.a\", time = \"epoch_ms\" }\n",
            "broken.toml:3: fields.title: time: only the start and end fields read times",
        ),
        (
            "description = \"x\"\n[fields]\nstart = { path = \"$.a\", time = \"ticks\" }\n",
            "broken.toml:3: fields.start: time: expected iso, epoch_s or epoch_ms, not \"ticks\"",
        ),
        (
            "description = \"x\"\n[severity]\nfrom = \"$.s\"\nmap = { loud = \"urgent\" }\n",
            "broken.toml:4: severity.map.loud: expected critical, high, medium, low, info, unknown or ignore",
        ),
        (
            "description = \"x\"\n[state]\nfrom = \"$.s\"\nmap = { done = \"close\" }\n",
            "broken.toml:4: state.map.done: expected fire, resolve or ignore, not \"close\"",
        ),
        (
            "description = \"x\"\n[receive]\nsuccess_status = 204\n",
            "broken.toml:3: success_status: expected 200, 201 or 202, not 204",
        ),
        (
            "description = \"x\"\n\n[[receive.route]]\nsuffix = \"v2/{alias\"\n",
            "broken.toml:3: route suffix \"v2/{alias\": expected \"\" or a suffix starting with /",
        ),
        (
            "description = \"x\"\n[receive]\nform_field = \"\"\n",
            "broken.toml:3: form_field: expected a field name",
        ),
        (
            "description = \"x\"\n[receive]\nkey_in_body = \"$.key\"\nform_field = \"data\"\n",
            "broken.toml:4: form_field: a format whose key travels in the body (key_in_body) takes no forms",
        ),
        (
            "description = \"x\"\n[receive]\nauth = [{ scheme = \"Key\" }]\n",
            "broken.toml:3: auth: expected { header = \"NAME\" }",
        ),
        (
            "list = \"$.alerts\"\n",
            "broken.toml:1: expected a `description = \"…\"` line",
        ),
        (
            "description = \"x\"\n\n[[variant]]\nname = \"a\"\nwhen = { path = \"hdr.x\" }\n",
            "broken.toml:3: variant \"a\": when.path: expected a path starting with $",
        ),
    ];
    for (text, want) in cases {
        let errors = check(text);
        assert!(
            errors.iter().any(|error| error.starts_with(want)),
            "for {text:?}: want {want:?}, got {errors:?}"
        );
    }
    assert_eq!(check("description = \"ok\"\n"), Vec::<String>::new());
}

#[test]
fn an_operator_directory_adds_and_replaces_formats_and_reports_its_errors() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("grafana.toml"),
        "description = \"Our own Grafana\"\n[fields]\ntitle = \"$.title\"\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("acme.toml"), "description = \"ACME monitor\"\n").unwrap();
    let catalog = Catalog::load(Some(dir.path())).unwrap();
    let list = catalog.list();
    assert_eq!(list[0].name, GENERIC);
    assert_eq!(list[0].origin, Origin::Code);
    let grafana = list.iter().find(|s| s.name == "grafana").unwrap();
    assert_eq!(grafana.description, "Our own Grafana");
    assert_eq!(grafana.origin, Origin::File(dir.path().join("grafana.toml")));
    assert!(list.iter().any(|s| s.name == "acme"));
    assert!(list
        .iter()
        .any(|s| s.name == "alertmanager" && s.origin == Origin::BuiltIn));
    assert!(catalog.get(GENERIC).is_none());
    assert!(catalog.contains(GENERIC));

    std::fs::write(
        dir.path().join("broken.toml"),
        "description = \"x\"\n\n[fields]\nhosts = 3\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("generic.toml"), "description = \"x\"\n").unwrap();
    let errors = Catalog::load(Some(dir.path())).unwrap_err().0;
    let broken = dir.path().join("broken.toml").display().to_string();
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with(&format!("{broken}:4: fields.hosts: expected a path"))),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.contains("generic is read by svcgate's own code")),
        "{errors:?}"
    );
    assert!(Catalog::load(Some(&dir.path().join("missing"))).is_err());
}

#[test]
fn a_lookup_route_is_a_get_ending_in_its_request_id() {
    let opsgenie = Catalog::builtin().unwrap().get("opsgenie").unwrap();
    assert!(opsgenie.has_lookup());
    assert_eq!(
        opsgenie.lookup_id("/v2/alerts/requests/abc.123").as_deref(),
        Some("abc.123")
    );
    assert_eq!(opsgenie.lookup_id("/v2/alerts"), None);
    // A lookup route is not posted to, and the close route is not looked up.
    assert!(!opsgenie.accepts_suffix("/v2/alerts/requests/abc"));
    assert_eq!(opsgenie.lookup_id("/v2/alerts/abc/close"), None);
    let map = http::HeaderMap::new();
    let close = Delivery {
        body: b"{}",
        suffix: "/v2/alerts/4242/close",
        query: Some("identifierType=alias"),
        headers: &map,
    };
    assert_eq!(opsgenie.sender_key(&close, 64).as_deref(), Some("4242"));
    let create = Delivery {
        body: br#"{"message": "m", "alias": "a-1"}"#,
        suffix: "/v2/alerts",
        ..close
    };
    assert_eq!(opsgenie.sender_key(&create, 64).as_deref(), Some("a-1"));

    let head = "description = \"x\"\n[receive]\n[[receive.route]]\n";
    for (route, expected) in [
        (
            "suffix = \"/r/{request_id}\"\nmethod = \"GET\"\n",
            "add lookup = true",
        ),
        (
            "suffix = \"/r/{request_id}\"\nlookup = true\n",
            "add method = \"GET\"",
        ),
        (
            "suffix = \"/r/{id}\"\nmethod = \"GET\"\nlookup = true\n",
            "ends in {request_id}",
        ),
        (
            "suffix = \"/r\"\nmethod = \"PATCH\"\n",
            "expected POST, PUT or GET",
        ),
    ] {
        let errors = check(&format!("{head}{route}"));
        assert!(
            errors
                .iter()
                .any(|error| error.starts_with("broken.toml:") && error.contains(expected)),
            "{route}: {errors:?}"
        );
    }
}

fn format_of(text: &str) -> Format {
    compile_file("test.toml", "test", text, Origin::BuiltIn).unwrap()
}

fn read_one(
    format: &Format,
    body: &str,
    suffix: &str,
    query: Option<&str>,
    headers: &[(&str, &str)],
) -> Reading {
    let mut map = http::HeaderMap::new();
    for (name, value) in headers {
        map.insert(
            http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            http::HeaderValue::from_str(value).unwrap(),
        );
    }
    let delivery = Delivery {
        body: body.as_bytes(),
        suffix,
        query,
        headers: &map,
    };
    format.read(&delivery, 64, RECEIVED, Edition::Premium).unwrap()
}

fn only_alert(reading: Reading) -> NormalizedAlert {
    match reading {
        Reading::Alerts(mut alerts) if alerts.len() == 1 => alerts.remove(0),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_language_constructs() {
    let format = format_of(
        r#"
description = "constructs"
[receive]
auth = [{ header = "Authorization", scheme = "GenieKey" }, { query = "token" }]
answer = { result = "ok", id = "{request_id}", missing = "{nothing}" }
[[receive.route]]
suffix = ""
[[receive.route]]
suffix = "/v2/alerts/{alias}/close"
state = "resolve"
[let]
M = { path = "$.Message", parse = "json" }
[fields]
title = { template = "{$.event} on {$.resource}" }
hosts = { path = "$.tags", split = ",", kv = ":", get = "host" }
service = "$.pairs[0=service][1]"
environment = "M.env"
monitoring_tool = { path = "$.title", regex = "^\\[(\\w+)" }
description = "$.dims[name=InstanceId].value"
fingerprint = [{ all = ["$.env", "$.resource"] }, "route.alias"]
start = { path = "$.at", time = "epoch_ms" }
[severity]
from = "$.level"
map = { "2" = "high", pending = "ignore" }
"#,
    );
    let body = json!({
        "event": "Down", "resource": "web01", "tags": "env:prod, host:web-01", "pairs": [["x", "1"], ["service", "api"]],
        "Message": "{\"env\": \"staging\"}", "title": "[Triggered on x] CPU", "dims": [{"name": "InstanceId", "value": "i-1"}],
        "env": "prod", "at": "1795670765600", "level": 2
    });
    let alert = only_alert(read_one(&format, &body.to_string(), "", None, &[]));
    assert_eq!(alert.title, "Down on web01");
    assert_eq!(alert.hosts, ["web-01"]);
    assert_eq!(alert.service.as_deref(), Some("api"));
    assert_eq!(alert.environment.as_deref(), Some("staging"));
    assert_eq!(alert.monitoring_tool.as_deref(), Some("Triggered"));
    assert_eq!(alert.description.as_deref(), Some("i-1"));
    assert_eq!(alert.fingerprint, Some(fingerprint_of(&json!(["prod", "web01"]))));
    assert_eq!(alert.started_at, datetime!(2026-11-26 05:26:05.600 UTC));
    assert_eq!(alert.severity, crate::alerts::normalized::Severity::High);
    assert!(!alert.is_resolve());
    assert!(alert.warnings.is_empty(), "{:?}", alert.warnings);

    let closed = only_alert(read_one(
        &format,
        "",
        "/v2/alerts/abc%20d/close/",
        Some("identifierType=alias"),
        &[],
    ));
    assert_eq!(closed.fingerprint, Some(fingerprint_of(&json!("abc d"))));
    assert_eq!(closed.ended_at, Some(RECEIVED));
    assert!(format.accepts_suffix("/v2/alerts/x/close"));
    assert!(!format.accepts_suffix("/v2/alerts//close"));
    assert!(!format.accepts_suffix("/alert"));

    let ignored = read_one(&format, r#"{"level": "Pending"}"#, "", None, &[]);
    assert!(matches!(ignored, Reading::Ignored { .. }), "{ignored:?}");

    assert_eq!(
        format.answer_body(&[("request_id", "r-1")]),
        Some(json!({"result": "ok", "id": "r-1", "missing": ""}))
    );
    assert_eq!(format.auth_schemes().len(), 3);
    assert_eq!(format.auth_schemes()[0], AuthScheme::Bearer);
    let mut headers = http::HeaderMap::new();
    headers.insert(
        http::header::AUTHORIZATION,
        http::HeaderValue::from_static("geniekey  k-1"),
    );
    let presented: Vec<Option<String>> = format
        .auth_schemes()
        .iter()
        .map(|scheme| scheme.presented_key(&headers, Some("a=b&token=k%202")))
        .collect();
    assert_eq!(presented, [None, Some("k-1".to_owned()), Some("k 2".to_owned())]);
    headers.insert(
        http::header::AUTHORIZATION,
        http::HeaderValue::from_static("Bearer k-3"),
    );
    assert_eq!(
        format.auth_schemes()[0].presented_key(&headers, None).as_deref(),
        Some("k-3")
    );
    assert_eq!(format.auth_schemes()[1].presented_key(&headers, None), None);
    assert_eq!(
        format.auth_schemes()[2].presented_key(&headers, Some("token=")),
        None
    );
    assert_eq!(format.success_status(), http::StatusCode::OK);
}

#[test]
fn variants_are_chosen_by_header_or_field() {
    let format = format_of(
        r#"
description = "variants"
[fields]
title = "$.title"
[[variant]]
name = "confirm"
when = { path = "$.Type", is = ["SubscriptionConfirmation"] }
confirm = "$.SubscribeURL"
[[variant]]
name = "metric"
when = { path = "header.X-Resource", is = ["metric_alert"] }
[variant.fields]
title = "$.data.name"
[[variant]]
name = "test"
when = { path = "$.test" }
ignore = "a test message"
"#,
    );
    let body = r#"{"Type": "SubscriptionConfirmation", "SubscribeURL": "https://sns.example/confirm"}"#;
    assert_eq!(
        read_one(&format, body, "", None, &[]),
        Reading::Confirmation {
            subscribe_url: "https://sns.example/confirm".to_owned()
        }
    );
    let metric = only_alert(read_one(
        &format,
        r#"{"title": "t", "data": {"name": "m"}}"#,
        "",
        None,
        &[("x-resource", "metric_alert")],
    ));
    assert_eq!(metric.title, "m");
    let plain = only_alert(read_one(
        &format,
        r#"{"title": "t", "data": {"name": "m"}}"#,
        "",
        None,
        &[],
    ));
    assert_eq!(plain.title, "t");
    assert_eq!(
        read_one(&format, r#"{"test": true}"#, "", None, &[]),
        Reading::Ignored {
            reason: "a test message".to_owned()
        }
    );
    assert_eq!(format.variant_names(), ["confirm", "metric", "test"]);
}

#[test]
fn shape_errors_say_what_was_expected() {
    let catalog = Catalog::builtin().unwrap();
    let pagerduty = catalog.get("pagerduty").unwrap();
    let headers = http::HeaderMap::new();
    let read = |body: &str, suffix: &str| {
        pagerduty.read(
            &Delivery {
                body: body.as_bytes(),
                suffix,
                query: None,
                headers: &headers,
            },
            64,
            RECEIVED,
            Edition::Free,
        )
    };
    assert_eq!(
        read(r#"{"dedup_key": "x"}"#, "").unwrap_err().to_string(),
        "the payload is not a pagerduty body: expected a value at $.event_action"
    );
    assert_eq!(
        read(r#"{"event_action": "trigger"}"#, "/alert").unwrap_err().to_string(),
        "the payload is not a pagerduty body: the address suffix \"/alert\" is not one this format is posted to"
    );
    assert!(matches!(read("{", ""), Err(PayloadError::InvalidJson { .. })));
    assert_eq!(read("[]", "").unwrap_err().status().as_u16(), 422);
    assert_eq!(
        pagerduty
            .key_in_body(br#"{"routing_key": "k1", "event_action": "trigger"}"#)
            .as_deref(),
        Some("k1")
    );
    assert_eq!(pagerduty.key_in_body(b"not json"), None);
    assert_eq!(pagerduty.success_status(), http::StatusCode::ACCEPTED);
    assert_eq!(
        pagerduty.answer_body(&[("dedup_key", "k-9")]),
        Some(json!({"status": "success", "message": "Event processed", "dedup_key": "k-9"}))
    );
}

#[test]
fn every_builtin_format_tells_its_senders_setup_with_the_address() {
    let catalog = Catalog::builtin().unwrap();
    for summary in catalog.list().into_iter().filter(|s| s.name != GENERIC) {
        let format = catalog.get(&summary.name).unwrap();
        let setup = format
            .setup(&[("address", "https://svcgate.example/g/p/alerts/notify/x/1.json")])
            .unwrap_or_else(|| panic!("{} has no setup", summary.name));
        assert!(
            setup.contains("https://svcgate.example/g/p/alerts/notify/x/1.json"),
            "{}: {setup}",
            summary.name
        );
        assert!(!setup.contains("{address}"), "{setup}");
    }
    let datadog = catalog
        .get("datadog")
        .unwrap()
        .setup(&[("address", "A")])
        .unwrap();
    assert!(
        datadog.contains(r#"Custom Headers: {"Authorization": "Bearer <key>"}"#),
        "{datadog}"
    );
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-4_000i32..4_000).prop_map(|n| Value::from(f64::from(n) / 8.0)),
        prop_oneof![
            Just("resolved".to_owned()),
            Just("2026-11-26 05:26:05.600".to_owned()),
            Just("{\"AlarmName\": 1}".to_owned()),
            ".{0,12}"
        ]
        .prop_map(Value::String),
    ];
    let keys = prop_oneof![
        Just("alerts".to_owned()),
        Just("status".to_owned()),
        Just("labels".to_owned()),
        Just("payload".to_owned()),
        Just("event_action".to_owned()),
        Just("Message".to_owned()),
        Just("data".to_owned()),
        "[a-z]{1,6}",
    ];
    leaf.prop_recursive(5, 64, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((keys.clone(), inner), 0..6)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn no_body_panics_the_reader(value in json_value(), bytes in prop::collection::vec(any::<u8>(), 0..64),
                                  suffix in prop_oneof![Just(String::new()), Just("/v2/alerts/a/close".to_owned()), "/[a-z/]{0,12}"]) {
        let catalog = Catalog::builtin().unwrap();
        let text = value.to_string();
        let headers = http::HeaderMap::new();
        for summary in catalog.list().into_iter().filter(|s| s.name != GENERIC) {
            let format = catalog.get(&summary.name).unwrap();
            for body in [text.as_bytes(), &bytes[..]] {
                let delivery = Delivery { body, suffix: &suffix, query: Some("a=b&token"), headers: &headers };
                for edition in [Edition::Free, Edition::Premium] {
                    if let Ok(Reading::Alerts(alerts)) = format.read(&delivery, 64, RECEIVED, edition) {
                        for alert in alerts {
                            prop_assert!(alert.title.chars().count() <= 200);
                            prop_assert!(alert.fingerprint.as_ref().map_or(true, |f| f.len() == 64));
                        }
                    }
                }
                let _ = format.key_in_body(body);
            }
        }
    }
}
