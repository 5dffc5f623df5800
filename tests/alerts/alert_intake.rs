//! The receiving endpoint over real sockets: every check of the contract in its order, with its answer, and the
//! lifecycle (create, group, resolve, never reopen).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use std::time::Duration;

use crate::common::alerts::{post_alert, AlertWorld};
use crate::common::send;
use http::{Method, StatusCode};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

async fn generic(world: &AlertWorld) -> (String, String) {
    let made = world
        .integration(json!({"type": "generic", "active": true}))
        .await;
    (
        made["url"].as_str().unwrap().to_owned(),
        made["token"].as_str().unwrap().to_owned(),
    )
}

#[tokio::test]
async fn each_check_answers_in_order_with_its_own_status() {
    let world = AlertWorld::with(|raw| raw.alert_max_body_bytes = Some(2048)).await;
    let (url, key) = generic(&world).await;
    let auth = format!("Bearer {key}");

    let get = send(Method::GET, &url, &[("authorization", &auth)], None).await;
    assert_eq!(get.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(get.header("allow"), Some("POST"));
    assert_eq!(get.json()["error"], json!("method_not_allowed"));

    let unknown_project = url.replace("demo-group/demo-project", "nobody/nothing");
    let unknown_endpoint = url.replace("/alerts/notify.json", "/alerts/notify/x/0123456789abcdef.json");
    let mut not_found = Vec::new();
    for address in [&unknown_project, &unknown_endpoint] {
        let answer = post_alert(address, &key, &json!({})).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{address}");
        not_found.push(answer.body);
    }
    assert_eq!(
        not_found[0], not_found[1],
        "one uniform answer: it must not reveal whether a project exists"
    );

    let wrong = post_alert(&url, "not-the-key", &json!({})).await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
    assert_eq!(wrong.header("www-authenticate"), Some("Bearer"));
    assert_eq!(wrong.json()["error"], json!("unauthorized"));

    let text = send(
        Method::POST,
        &url,
        &[("authorization", &auth)],
        Some(("text/plain", b"{}".to_vec())),
    )
    .await;
    assert_eq!(text.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);

    let big = json!({"title": "x".repeat(4000)});
    let too_large = post_alert(&url, &key, &big).await;
    assert_eq!(too_large.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(too_large.json()["error"], json!("payload_too_large"));

    let broken = send(
        Method::POST,
        &url,
        &[("authorization", &auth)],
        Some((
            "application/json; charset=utf-8",
            b"{\n  \"title\": oops\n}".to_vec(),
        )),
    )
    .await;
    assert_eq!(broken.status, StatusCode::BAD_REQUEST);
    let message = broken.json()["message"].as_str().unwrap().to_owned();
    assert!(message.contains("line 2"), "the parser's position: {message}");
    assert_eq!(broken.json()["error"], json!("invalid_json"));

    let deep = format!("{}1{}", "[".repeat(70), "]".repeat(70));
    let too_deep = send(
        Method::POST,
        &url,
        &[("authorization", &auth)],
        Some(("application/json", deep.into_bytes())),
    )
    .await;
    assert_eq!(too_deep.status, StatusCode::BAD_REQUEST);

    let array = post_alert(&url, &key, &json!([{"title": "in an array"}])).await;
    assert_eq!(array.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(array.json()["error"], json!("invalid_payload"));

    let accepted = post_alert(&url, &key, &json!({"title": "Disk full", "severity": "urgent"})).await;
    assert_eq!(accepted.status, StatusCode::OK);
    let entry = &accepted.json()[0];
    assert_eq!(entry["iid"], json!(1));
    assert_eq!(entry["title"], json!("Disk full"));
    assert_eq!(entry["outcome"], json!("created"));
    assert_eq!(entry["status"], json!("triggered"));
    assert!(
        entry["warnings"][0].as_str().unwrap().contains("urgent"),
        "{entry}"
    );
}

#[tokio::test]
async fn the_key_is_checked_before_any_body_byte_is_read() {
    let world = AlertWorld::new().await;
    let (url, _) = generic(&world).await;
    let path = url.split_once("//").unwrap().1.split_once('/').unwrap().1;
    let mut stream = tokio::net::TcpStream::connect(world.gateway.address)
        .await
        .unwrap();
    let head = format!(
        "POST /{path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut buffer = vec![0u8; 512];
    let read = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buffer))
        .await
        .unwrap()
        .unwrap();
    let answer = String::from_utf8_lossy(&buffer[..read]);
    assert!(
        answer.starts_with("HTTP/1.1 401"),
        "answered without waiting for the body: {answer}"
    );
}

#[tokio::test]
async fn an_oversized_stream_is_refused_as_it_passes_the_limit() {
    let world = AlertWorld::with(|raw| raw.alert_max_body_bytes = Some(1000)).await;
    let (url, key) = generic(&world).await;
    let path = url.split_once("//").unwrap().1.split_once('/').unwrap().1;
    let mut stream = tokio::net::TcpStream::connect(world.gateway.address)
        .await
        .unwrap();
    let head = format!(
        "POST /{path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let chunk = format!("{:x}\r\n{}\r\n", 600, "a".repeat(600));
    stream.write_all(chunk.as_bytes()).await.unwrap();
    stream.write_all(chunk.as_bytes()).await.unwrap();
    let mut buffer = vec![0u8; 512];
    let read = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buffer))
        .await
        .unwrap()
        .unwrap();
    assert!(String::from_utf8_lossy(&buffer[..read]).starts_with("HTTP/1.1 413"));
}

#[tokio::test]
async fn alerts_are_created_grouped_resolved_and_never_reopened() {
    let world = AlertWorld::new().await;
    let (url, key) = generic(&world).await;
    let firing = json!({"title": "CPU hot", "service": "api", "hosts": ["web1"], "start_time": "2026-01-01T00:00:00Z"});
    let first = post_alert(&url, &key, &firing).await.json();
    assert_eq!(first[0]["outcome"], json!("created"));
    let mut again = firing.clone();
    again["hosts"] = json!(["web2"]);
    again["start_time"] = json!("2026-01-01T00:05:00Z");
    let second = post_alert(&url, &key, &again).await.json();
    assert_eq!(
        second[0]["outcome"],
        json!("grouped"),
        "hosts and start_time are left out of grouping"
    );
    assert_eq!(second[0]["events"], json!(2));
    assert_eq!(second[0]["iid"], first[0]["iid"]);

    let mut resolving = firing.clone();
    resolving["end_time"] = json!("2026-01-01T01:00:00Z");
    let resolved = post_alert(&url, &key, &resolving).await.json();
    assert_eq!(resolved[0]["outcome"], json!("resolved"));
    assert_eq!(resolved[0]["status"], json!("resolved"));

    let nothing = post_alert(&url, &key, &resolving).await;
    assert_eq!(nothing.status, StatusCode::OK, "senders deliver at least once");
    assert_eq!(nothing.json()[0]["outcome"], json!("no_open_alert"));

    let fresh = post_alert(&url, &key, &firing).await.json();
    assert_eq!(
        fresh[0]["outcome"],
        json!("created"),
        "a resolved alert is never reopened"
    );
    assert_eq!(fresh[0]["iid"], json!(2));

    let detail = common::get(&world.api("/alerts/1"), &world.developer)
        .await
        .json();
    assert_eq!(detail["status"], json!("resolved"));
    assert_eq!(detail["ended_at"], json!("2026-01-01T01:00:00.000Z"));
    assert_eq!(detail["events"], json!(2));
    assert_eq!(
        detail["payload"]["service"],
        json!("api"),
        "the raw payload is kept"
    );
}

#[tokio::test]
async fn http_basic_with_the_key_as_password_is_accepted() {
    let world = AlertWorld::new().await;
    let (url, key) = generic(&world).await;
    use base64::Engine;
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("alertmanager:{key}"));
    let answer = send(
        Method::POST,
        &url,
        &[("authorization", &format!("Basic {basic}"))],
        Some(("application/json", br#"{"title": "via basic"}"#.to_vec())),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK);
}

#[tokio::test]
async fn without_a_fingerprint_the_free_edition_does_not_group() {
    let world = AlertWorld::with(|raw| raw.edition = Some("free".to_owned())).await;
    let (url, key) = generic(&world).await;
    let payload = json!({"title": "same"});
    let a = post_alert(&url, &key, &payload).await.json();
    let b = post_alert(&url, &key, &payload).await.json();
    assert_eq!(
        (a[0]["outcome"].clone(), b[0]["outcome"].clone()),
        (json!("created"), json!("created"))
    );
    let with_key = json!({"title": "keyed", "fingerprint": "disk-db1"});
    post_alert(&url, &key, &with_key).await;
    let grouped = post_alert(&url, &key, &with_key).await.json();
    assert_eq!(
        grouped[0]["outcome"],
        json!("grouped"),
        "an explicit fingerprint groups on every tier"
    );
}

#[tokio::test]
async fn the_same_alert_from_many_connections_at_once_is_one_alert_with_the_right_counter() {
    let world = AlertWorld::new().await;
    let (url, key) = generic(&world).await;
    let senders: Vec<_> = (0..50)
        .map(|_| {
            let (url, key) = (url.clone(), key.clone());
            tokio::spawn(async move {
                post_alert(&url, &key, &json!({"title": "storm", "fingerprint": "f1"})).await
            })
        })
        .collect();
    for sender in senders {
        assert_eq!(sender.await.unwrap().status, StatusCode::OK);
    }
    let alerts = common::get(&world.api("/alerts?status=all"), &world.developer)
        .await
        .json();
    let storm: Vec<&Value> = alerts
        .as_array()
        .unwrap()
        .iter()
        .filter(|alert| alert["title"] == json!("storm"))
        .collect();
    assert_eq!(storm.len(), 1, "one open alert per fingerprint");
    assert_eq!(storm[0]["events"], json!(50));
}

#[tokio::test]
async fn prometheus_envelopes_have_every_alert_processed_and_answer_201() {
    let world = AlertWorld::new().await;
    let made = world
        .integration(json!({"type": "prometheus", "active": true}))
        .await;
    let (url, key) = (
        made["url"].as_str().unwrap().to_owned(),
        made["token"].as_str().unwrap().to_owned(),
    );
    assert!(url.ends_with("/prometheus/alerts/notify.json"));
    let envelope = json!({
        "version": "4", "groupKey": "{}:{alertname=\"DiskFull\"}", "status": "firing", "receiver": "svcgate",
        "groupLabels": {"alertname": "DiskFull"}, "commonLabels": {}, "commonAnnotations": {}, "externalURL": "http://am",
        "alerts": [
            {"status": "firing", "labels": {"alertname": "DiskFull", "instance": "db1", "severity": "page"},
             "annotations": {"summary": "Disk full on db1"}, "startsAt": "2026-01-01T00:00:00Z",
             "endsAt": "0001-01-01T00:00:00Z", "fingerprint": "aaa111"},
            {"status": "firing", "labels": {"alertname": "DiskFull", "instance": "db2"},
             "annotations": {}, "startsAt": "2026-01-01T00:00:00Z", "endsAt": "0001-01-01T00:00:00Z", "fingerprint": "bbb222"}
        ]
    });
    let answer = post_alert(&url, &key, &envelope).await;
    assert_eq!(answer.status, StatusCode::CREATED);
    let entries = answer.json();
    assert_eq!(entries.as_array().unwrap().len(), 2);
    assert_eq!(entries[0]["title"], json!("Disk full on db1"));
    assert_eq!(entries[1]["title"], json!("DiskFull"));
    let first = common::get(
        &world.api(&format!("/alerts/{}", entries[0]["iid"])),
        &world.developer,
    )
    .await
    .json();
    assert_eq!(first["severity"], json!("high"), "`page` is an alias of high");
    assert_eq!(first["monitoring_tool"], json!("Prometheus"));
    assert_eq!(first["hosts"], json!(["db1"]));
    let mut resolved = envelope.clone();
    resolved["alerts"][0]["status"] = json!("resolved");
    resolved["alerts"][0]["endsAt"] = json!("2026-01-01T00:30:00Z");
    let answer = post_alert(&url, &key, &resolved).await.json();
    assert_eq!(answer[0]["outcome"], json!("resolved"));
    assert_eq!(answer[1]["outcome"], json!("grouped"));
    let not_envelope = post_alert(&url, &key, &json!({"title": "generic"})).await;
    assert_eq!(not_envelope.status, StatusCode::UNPROCESSABLE_ENTITY);
}

#[tokio::test]
async fn over_the_rate_limit_senders_are_told_when_to_retry() {
    let world = AlertWorld::with(|raw| {
        raw.alert_rate_limit = Some(1);
        raw.alert_rate_burst = Some(2);
    })
    .await;
    let (url, key) = generic(&world).await;
    let prometheus = world
        .integration(json!({"type": "prometheus", "active": true}))
        .await;
    for _ in 0..2 {
        assert_eq!(
            post_alert(&url, &key, &json!({"title": "t"})).await.status,
            StatusCode::OK
        );
    }
    let limited = post_alert(&url, &key, &json!({"title": "t"})).await;
    assert_eq!(limited.status, StatusCode::TOO_MANY_REQUESTS);
    assert!(limited.header("retry-after").is_some());
    let envelope = json!({"version": "4", "status": "firing", "alerts": [{"status": "firing", "labels": {"a": "1"}}, {"status": "firing", "labels": {"a": "2"}}, {"status": "firing", "labels": {"a": "3"}}]});
    let am = post_alert(
        prometheus["url"].as_str().unwrap(),
        prometheus["token"].as_str().unwrap(),
        &envelope,
    )
    .await;
    assert_eq!(
        am.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "Alertmanager retries only 5xx"
    );
    assert!(am.header("retry-after").is_some());
}

#[tokio::test]
async fn an_http_endpoint_reads_fields_through_its_custom_mapping() {
    let world = AlertWorld::new().await;
    let made = world
        .integration(json!({
            "type": "http", "name": "Mapped", "active": true,
            "payload_example": "{\"alert\": {\"name\": \"x\", \"level\": \"low\"}}",
            "payload_attribute_mapping": {
                "title": {"path": ["alert", "name"], "type": "string"},
                "severity": {"path": ["alert", "level"], "type": "string"},
                "hosts": {"path": ["targets"], "type": "array"}
            }
        }))
        .await;
    let (url, key) = (made["url"].as_str().unwrap(), made["token"].as_str().unwrap());
    let answer = post_alert(
        url,
        key,
        &json!({"alert": {"name": "Queue stuck", "level": "medium"}, "targets": ["q1", "q2"]}),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK);
    let iid = answer.json()[0]["iid"].clone();
    let alert = common::get(&world.api(&format!("/alerts/{iid}")), &world.developer)
        .await
        .json();
    assert_eq!(alert["title"], json!("Queue stuck"));
    assert_eq!(alert["severity"], json!("medium"));
    assert_eq!(alert["hosts"], json!(["q1", "q2"]));
    let fallback = post_alert(url, key, &json!({"title": "plain key"})).await.json();
    assert_eq!(
        fallback[0]["title"],
        json!("plain key"),
        "an absent mapped value falls back to the default key"
    );
    let bad = common::send_json(
        Method::POST,
        &world.api("/integrations"),
        &world.maintainer,
        json!({"type": "http", "name": "Bad mapping", "payload_attribute_mapping": {"colour": {"path": ["x"], "type": "string"}}}),
    )
    .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn a_payload_holding_serde_jsons_raw_value_key_is_read_and_shown_as_spelled() {
    let world = AlertWorld::new().await;
    let (url, key) = generic(&world).await;
    // serde_json's own reader takes an object whose first key is this token for the document in its string.
    let token = "$serde_json::private::RawValue";
    let payload = json!({token: "{\"title\": \"not this\"}", "title": "Disk full", "fingerprint": "f"});
    let answer = post_alert(&url, &key, &payload).await;
    assert_eq!(answer.status, StatusCode::OK);
    let entries = answer.json();
    assert_eq!(entries[0]["title"], json!("Disk full"));
    let detail = common::get(
        &world.api(&format!("/alerts/{}", entries[0]["iid"])),
        &world.developer,
    )
    .await;
    // Read back without the token's meaning too: the answer holds the payload as an object.
    let detail = svcgate::util::plain_value::from_slice(&detail.body).unwrap();
    assert_eq!(
        detail["payload"], payload,
        "the stored payload is shown as it was sent"
    );
}
