//! A real sender of the `opsgenie` format: Zabbix's own Opsgenie media type (its script and parameters, from
//! Debian's zabbix-frontend-php) run by `zabbix_js` (Debian's zabbix-server-pgsql), both unpacked by `./test.sh`
//! into `tests/.cache/zabbix/`. The script creates with `POST …/v2/alerts/`, closes with
//! `POST …/v2/alerts/{event_id}/close?identifierType=alias`, needs 202 with `result` and `requestId` each time,
//! then polls `GET …/v2/alerts/requests/{requestId}` until svcgate says what it did.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use http::{Method, StatusCode};
use serde_json::{json, Map, Value};

use crate::common::alerts::{alerts, AlertWorld};
use crate::common::send;

/// Where `./test.sh` unpacks the two Debian packages.
fn zabbix_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/.cache/zabbix")
}

/// The Opsgenie media type's export, as Zabbix ships it.
fn media_type_file() -> PathBuf {
    zabbix_root().join("usr/share/doc/zabbix-frontend-php/templates/media/opsgenie/media_opsgenie.yaml")
}

/// `zabbix_js` and the media type's text; fails naming `./test.sh` when they are not unpacked.
fn zabbix() -> (PathBuf, String) {
    let binary = zabbix_root().join("usr/bin/zabbix_js");
    let media = media_type_file();
    assert!(
        binary.is_file() && media.is_file(),
        "{} or {} is missing: run ./test.sh, which downloads Debian's zabbix-server-pgsql and zabbix-frontend-php \
         and unpacks them there",
        binary.display(),
        media.display()
    );
    (binary, std::fs::read_to_string(media).unwrap())
}

/// The media type's script: the `script: |` block of the export, its indentation removed.
fn script_of(export: &str) -> String {
    let mut lines = export.lines();
    let start = lines
        .by_ref()
        .position(|line| line.trim() == "script: |")
        .expect("the export has a script block");
    let indent = export.lines().nth(start).unwrap().find("script").unwrap() + 2;
    let mut script = String::new();
    for line in export.lines().skip(start + 1) {
        let blank = line.trim().is_empty();
        if !blank && line.len() - line.trim_start().len() < indent {
            break;
        }
        script.push_str(if blank { "" } else { &line[indent..] });
        script.push('\n');
    }
    script
}

/// The media type's parameters with their default values: the `name:`/`value:` pairs before its script.
fn parameters_of(export: &str) -> Map<String, Value> {
    let head = &export[..export.find("script: |").unwrap()];
    let mut parameters = Map::new();
    let mut name = None;
    for line in head.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("name: ") {
            name = Some(rest.to_owned());
        } else if let (Some(rest), Some(key)) = (line.strip_prefix("value: "), name.take()) {
            let value = rest
                .strip_prefix('\'')
                .and_then(|quoted| quoted.strip_suffix('\''))
                .map_or_else(|| rest.to_owned(), |quoted| quoted.replace("''", "'"));
            parameters.insert(key, Value::String(value));
        }
    }
    parameters
}

/// Runs the media type's script with `parameters`, as Zabbix's alerter would: its exit status and output.
async fn run_media_script(binary: &Path, script: &str, parameters: &Map<String, Value>) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    let script_path = dir.path().join("media_opsgenie.js");
    let input_path = dir.path().join("params.json");
    std::fs::write(&script_path, script).unwrap();
    std::fs::write(&input_path, Value::Object(parameters.clone()).to_string()).unwrap();
    let binary = binary.to_owned();
    let output = tokio::task::spawn_blocking(move || {
        Command::new(binary)
            .arg("-s")
            .arg(&script_path)
            .arg("-i")
            .arg(&input_path)
            .args(["-t", "30", "-l", "4"])
            .env_remove("http_proxy")
            .env_remove("HTTP_PROXY")
            .env_remove("all_proxy")
            .env_remove("ALL_PROXY")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    drop(dir);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

#[tokio::test]
async fn zabbix_opsgenie_media_type_creates_the_alert_on_a_problem_and_resolves_it_on_recovery() {
    let (binary, export) = zabbix();
    let script = script_of(&export);
    assert!(
        script.contains("getAlertId"),
        "not the Opsgenie script:\n{script}"
    );
    let world = AlertWorld::new().await;
    let (url, key) = world.endpoint("opsgenie").await;

    let mut parameters = parameters_of(&export);
    assert!(parameters.contains_key("opsgenie_api"), "{parameters:?}");
    for (name, value) in [
        ("alert_subject", "Problem: Disk space is low on db-1"),
        (
            "alert_message",
            "Problem started at 10:00:00 on 2026.11.26\nHost: db-1\nSeverity: High",
        ),
        ("event_id", "4242"),
        ("event_nseverity", "4"),
        ("event_source", "0"),
        ("event_value", "1"),
        ("event_update_status", "0"),
        ("event_update_action", ""),
        (
            "event_tags_json",
            r#"[{"tag":"env","value":"production"},{"tag":"scope","value":"capacity"}]"#,
        ),
        ("opsgenie_api", &format!("{url}/v2/alerts/")),
        ("opsgenie_token", &key),
        ("opsgenie_web", "https://zabbix-team.app.opsgenie.example/"),
        ("trigger_id", "17"),
        ("zbxurl", "https://zabbix.example/"),
        ("zbxuser", "Admin"),
    ] {
        parameters.insert(name.to_owned(), Value::String(value.to_owned()));
    }

    let (ok, output) = run_media_script(&binary, &script, &parameters).await;
    assert!(ok, "the problem's run failed:\n{output}");
    let open = alerts(&world).await;
    assert_eq!(open.len(), 1, "{open:?}");
    assert_eq!(open[0]["title"], json!("Problem: Disk space is low on db-1"));
    assert_eq!(open[0]["severity"], json!("high"));
    assert_eq!(open[0]["status"], json!("triggered"));
    assert_eq!(open[0]["environment"], json!("production"), "{:?}", open[0]);
    // The script keeps the alert id svcgate's request status gave (the alert's number) as the event's tag.
    let iid = open[0]["iid"].to_string();
    assert!(
        output.contains(&format!(r#""__zbx_ops_issuekey":"{iid}""#)),
        "the script's result lacks the alert's number {iid}:\n{output}"
    );

    parameters.insert("event_value".to_owned(), json!("0"));
    parameters.insert(
        "alert_subject".to_owned(),
        json!("Resolved: Disk space is low on db-1"),
    );
    let (ok, output) = run_media_script(&binary, &script, &parameters).await;
    assert!(ok, "the recovery's run failed:\n{output}");
    let after = alerts(&world).await;
    assert_eq!(after.len(), 1, "{after:?}");
    assert_eq!(after[0]["status"], json!("resolved"));
}

#[tokio::test]
async fn an_opsgenie_request_id_svcgate_did_not_issue_is_not_found_and_a_lookup_needs_the_key() {
    let world = AlertWorld::new().await;
    let (url, key) = world.endpoint("opsgenie").await;
    let genie = format!("GenieKey {key}");
    let answer = send(
        Method::GET,
        &format!("{url}/v2/alerts/requests/0b2f8c1e-not-issued"),
        &[("authorization", &genie)],
        None,
    )
    .await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND, "{:?}", answer.body);
    assert_eq!(
        answer.json()["message"],
        json!("Request not found. It might not be processed, yet.")
    );

    let created = send(
        Method::POST,
        &format!("{url}/v2/alerts"),
        &[("authorization", &genie)],
        Some((
            "application/json",
            serde_json::to_vec(
                &json!({"message": "CPU high on web-1", "alias": "cpu-web-1", "priority": "P1"}),
            )
            .unwrap(),
        )),
    )
    .await;
    assert_eq!(created.status, StatusCode::ACCEPTED, "{:?}", created.body);
    let request_id = created.json()["requestId"].as_str().unwrap().to_owned();
    assert_eq!(created.json()["result"], json!("Request will be processed"));
    assert!(created.json()["took"].is_number());
    let lookup = format!("{url}/v2/alerts/requests/{request_id}");

    let answer = send(
        Method::GET,
        &lookup,
        &[("authorization", "GenieKey not-the-key")],
        None,
    )
    .await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{:?}", answer.body);
    let answer = send(Method::GET, &lookup, &[("authorization", &genie)], None).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    let data = &answer.json()["data"];
    assert_eq!(data["success"], json!(true));
    assert_eq!(data["action"], json!("Create"));
    assert_eq!(data["alias"], json!("cpu-web-1"));
    assert_eq!(data["alertId"], json!(alerts(&world).await[0]["iid"].to_string()));
    // A GET anywhere but the lookup route is refused as before.
    let answer = send(
        Method::GET,
        &format!("{url}/v2/alerts"),
        &[("authorization", &genie)],
        None,
    )
    .await;
    assert_eq!(answer.status, StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn a_method_an_opsgenie_route_does_not_take_is_refused_with_the_methods_it_takes() {
    let world = AlertWorld::new().await;
    let (url, key) = world.endpoint("opsgenie").await;
    let genie = format!("GenieKey {key}");
    let request_id = "0b2f8c1e-not-issued";
    for (method, suffix, allow) in [
        (Method::GET, "/v2/alerts".to_owned(), "POST"),
        (Method::DELETE, "/v2/alerts".to_owned(), "POST"),
        (Method::DELETE, format!("/v2/alerts/requests/{request_id}"), "GET"),
        (Method::POST, format!("/v2/alerts/requests/{request_id}"), "GET"),
        (Method::GET, "/v2/alerts/cpu-web-1/message".to_owned(), "PUT"),
        (Method::POST, "/v2/alerts/cpu-web-1/message".to_owned(), "PUT"),
    ] {
        let answer = send(
            method.clone(),
            &format!("{url}{suffix}"),
            &[("authorization", &genie)],
            None,
        )
        .await;
        assert_eq!(answer.status, StatusCode::METHOD_NOT_ALLOWED, "{method} {suffix}");
        assert_eq!(answer.header("allow"), Some(allow), "{method} {suffix}");
        assert_eq!(
            answer.json()["error"],
            json!("method_not_allowed"),
            "{method} {suffix}"
        );
    }
    // A path no route of the format knows stays unknown, whatever the method.
    let answer = send(
        Method::POST,
        &format!("{url}/v2/nothing-here"),
        &[("authorization", &genie)],
        None,
    )
    .await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND, "{:?}", answer.body);
}
