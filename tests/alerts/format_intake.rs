//! Deliveries in senders' native formats over real sockets: an HTTP Endpoint given a `payload_format` reads that
//! sender's body, takes the key where that sender puts it (PagerDuty's `routing_key` in the body, within
//! `alert_key_in_body_max_bytes`), accepts the path suffixes its senders append after the address's `.json`, and
//! answers with the status and body its senders count as delivered.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use http::{Method, StatusCode};
use serde_json::{json, Value};

use crate::common::alerts::{post_alert, AlertWorld};
use crate::common::{get, send};

/// An HTTP Endpoint reading `format`: its receiving address and key.
async fn endpoint(world: &AlertWorld, format: &str) -> (String, String) {
    let created = world
        .integration(json!({"type": "http", "name": format, "payload_format": format, "active": true}))
        .await;
    (
        created["url"].as_str().unwrap().to_owned(),
        created["token"].as_str().unwrap().to_owned(),
    )
}

/// Posts `body` to `url` as JSON with no `Authorization`.
async fn post_without_header(url: &str, body: &Value) -> crate::common::Answer {
    send(
        Method::POST,
        url,
        &[],
        Some(("application/json", serde_json::to_vec(body).unwrap())),
    )
    .await
}

/// Every alert of the demo project, newest first.
async fn alerts(world: &AlertWorld) -> Vec<Value> {
    let listed = get(&world.api("/alerts?status=all"), &world.developer)
        .await
        .json();
    listed.as_array().cloned().unwrap_or_default()
}

#[tokio::test]
async fn pagerduty_events_carry_their_key_in_the_body_and_resolve_by_dedup_key() {
    let world = AlertWorld::new().await;
    let (url, key) = endpoint(&world, "pagerduty").await;
    let trigger = json!({
        "routing_key": key,
        "dedup_key": "disk-full-db-1",
        "event_action": "trigger",
        "payload": {"summary": "Disk full on db-1", "source": "db-1", "severity": "error"}
    });
    let answer = post_without_header(&format!("{url}/v2/enqueue"), &trigger).await;
    assert_eq!(answer.status, StatusCode::ACCEPTED, "{:?}", answer.body);
    assert_eq!(answer.json()["status"], json!("success"));
    assert_eq!(answer.json()["dedup_key"], json!("disk-full-db-1"));
    let open = alerts(&world).await;
    assert_eq!(open.len(), 1, "{open:?}");
    assert_eq!(open[0]["title"], json!("Disk full on db-1"));
    assert_eq!(open[0]["severity"], json!("high"));
    assert_eq!(open[0]["status"], json!("triggered"));

    let resolve = json!({"routing_key": key, "dedup_key": "disk-full-db-1", "event_action": "resolve"});
    let answer = post_without_header(&url, &resolve).await;
    assert_eq!(answer.status, StatusCode::ACCEPTED, "{:?}", answer.body);
    let after = alerts(&world).await;
    assert_eq!(after.len(), 1, "{after:?}");
    assert_eq!(after[0]["status"], json!("resolved"));
}

#[tokio::test]
async fn a_wrong_or_missing_key_in_the_body_is_refused_and_stores_nothing() {
    let world = AlertWorld::new().await;
    let (url, _key) = endpoint(&world, "pagerduty").await;
    for routing_key in [json!("not-the-key"), Value::Null] {
        let body = json!({
            "routing_key": routing_key,
            "event_action": "trigger",
            "payload": {"summary": "s", "source": "h", "severity": "info"}
        });
        let answer = post_without_header(&url, &body).await;
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{:?}", answer.body);
        assert_eq!(answer.json()["error"], json!("unauthorized"));
    }
    assert!(alerts(&world).await.is_empty());
}

#[tokio::test]
async fn a_body_read_before_its_key_is_held_to_the_smaller_limit_and_a_header_key_lifts_it() {
    let world = AlertWorld::with(|raw| raw.alert_key_in_body_max_bytes = Some(1024)).await;
    let (url, key) = endpoint(&world, "pagerduty").await;
    let body = json!({
        "routing_key": key,
        "event_action": "trigger",
        "payload": {"summary": "big", "source": "h", "severity": "info", "custom_details": {"x": "y".repeat(4096)}}
    });
    let answer = post_without_header(&url, &body).await;
    assert_eq!(answer.status, StatusCode::PAYLOAD_TOO_LARGE, "{:?}", answer.body);
    assert!(answer.json()["message"]
        .as_str()
        .unwrap()
        .contains("alert_key_in_body_max_bytes"));
    // The same body with the key in `Authorization` is read up to alert_max_body_bytes.
    let answer = post_alert(&url, &key, &body).await;
    assert_eq!(answer.status, StatusCode::ACCEPTED, "{:?}", answer.body);
    assert_eq!(alerts(&world).await.len(), 1);
}

#[tokio::test]
async fn grafana_alerts_fire_and_resolve_with_a_bearer_key() {
    let world = AlertWorld::new().await;
    let (url, key) = endpoint(&world, "grafana").await;
    let firing: Value =
        serde_json::from_str(include_str!("../fixtures/formats/grafana/firing-1.json")).unwrap();
    let answer = post_alert(&url, &key, &firing).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    let open = alerts(&world).await;
    assert!(!open.is_empty());
    assert!(
        open.iter().all(|alert| alert["status"] == json!("triggered")),
        "{open:?}"
    );
    let resolved: Value =
        serde_json::from_str(include_str!("../fixtures/formats/grafana/resolved-1.json")).unwrap();
    let answer = post_alert(&url, &key, &resolved).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    let after = alerts(&world).await;
    assert!(
        after.iter().any(|alert| alert["status"] == json!("resolved")),
        "{after:?}"
    );
}

#[tokio::test]
async fn a_suffix_the_format_does_not_take_is_not_an_address() {
    let world = AlertWorld::new().await;
    let (pagerduty, key) = endpoint(&world, "pagerduty").await;
    let trigger = json!({"routing_key": key, "event_action": "trigger", "payload": {"summary": "s", "source": "h", "severity": "info"}});
    let answer = post_alert(&format!("{pagerduty}/v2/alerts"), &key, &trigger).await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND, "{:?}", answer.body);
    // A generic integration takes its address exactly.
    let generic = world
        .integration(json!({"type": "http", "name": "plain", "active": true}))
        .await;
    let (url, key) = (
        generic["url"].as_str().unwrap().to_owned(),
        generic["token"].as_str().unwrap().to_owned(),
    );
    let answer = post_alert(&format!("{url}/alert"), &key, &json!({"title": "t"})).await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND, "{:?}", answer.body);
    let answer = post_alert(&url, &key, &json!({"title": "t"})).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
}

#[tokio::test]
async fn a_body_that_does_not_fit_its_format_gets_422_with_what_was_expected() {
    let world = AlertWorld::new().await;
    let (url, key) = endpoint(&world, "grafana").await;
    let answer = post_alert(&url, &key, &json!({"title": "a generic payload"})).await;
    assert_eq!(
        answer.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{:?}",
        answer.body
    );
    assert!(
        answer.json()["message"]
            .as_str()
            .unwrap()
            .contains("not a grafana body"),
        "{:?}",
        answer.body
    );
    assert!(alerts(&world).await.is_empty());
}
