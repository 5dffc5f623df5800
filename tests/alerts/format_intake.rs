//! Deliveries in senders' native formats over real sockets: an HTTP Endpoint given a `payload_format` reads that
//! sender's body, takes the key where that sender puts it (PagerDuty's `routing_key` in the body, within
//! `alert_key_in_body_max_bytes`), accepts the path suffixes its senders append after the address's `.json`, and
//! answers with the status and body its senders count as delivered.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use http::{Method, StatusCode};
use serde_json::{json, Value};

use crate::common::alerts::{alerts, post_alert, AlertWorld};
use crate::common::{get, send};

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

#[tokio::test]
async fn pagerduty_events_carry_their_key_in_the_body_and_resolve_by_dedup_key() {
    let world = AlertWorld::new().await;
    let (url, key) = world.endpoint("pagerduty").await;
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

    // The key the sender put in its body is not kept in the stored payload.
    let detail = get(&world.api("/alerts/1"), &world.developer).await;
    assert!(
        !String::from_utf8_lossy(&detail.body).contains(&key),
        "{:?}",
        detail.body
    );

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
    let (url, _key) = world.endpoint("pagerduty").await;
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
    let (url, key) = world.endpoint("pagerduty").await;
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
    let (url, key) = world.endpoint("grafana").await;
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
    let (pagerduty, key) = world.endpoint("pagerduty").await;
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
    let (url, key) = world.endpoint("grafana").await;
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

/// Posts `body` to `url` with the given headers and content type.
async fn post_as(
    url: &str,
    headers: &[(&str, &str)],
    content_type: &str,
    body: &str,
) -> crate::common::Answer {
    send(
        Method::POST,
        url,
        headers,
        Some((content_type, body.as_bytes().to_vec())),
    )
    .await
}

#[tokio::test]
async fn sns_keeps_its_subscription_confirmation_for_a_maintainer_then_its_alarms_fire_and_resolve() {
    let world = AlertWorld::new().await;
    let created = world
        .integration(
            json!({"type": "http", "name": "CloudWatch", "payload_format": "aws_sns", "active": true}),
        )
        .await;
    let id = created["id"].as_u64().unwrap();
    let url = created["url"].as_str().unwrap().to_owned();
    let key = created["token"].as_str().unwrap().to_owned();
    let fixture = |name: &str| {
        std::fs::read_to_string(format!(
            "{}/tests/fixtures/formats/aws_sns/{name}.json",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    };
    // SNS sends JSON labelled text/plain and cannot set a header: the key is in the address.
    let plain = "text/plain; charset=UTF-8";
    let confirm = fixture("subscription-confirmation-1");
    let refused = post_as(&url, &[], plain, &confirm).await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED, "{:?}", refused.body);
    let wrong = post_as(&format!("{url}?token=nope"), &[], plain, &confirm).await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED, "{:?}", wrong.body);
    let kept = post_as(&format!("{url}?token={key}"), &[], plain, &confirm).await;
    assert_eq!(kept.status, StatusCode::OK, "{:?}", kept.body);
    assert!(alerts(&world).await.is_empty(), "a confirmation is no alert");

    let page_path = format!(
        "/-/svcgate/projects/{}/settings/operations/integrations/{id}",
        world.demo.project_id
    );
    let base = world.gateway.url();
    let cookie = crate::common::sign_in(&base, &world.maintainer).await.cookie();
    let page = |cookie: String| {
        let url = format!("{base}{page_path}");
        async move {
            let answer = send(Method::GET, &url, &[("cookie", &cookie)], None).await;
            assert_eq!(answer.status, StatusCode::OK);
            String::from_utf8_lossy(&answer.body).into_owned()
        }
    };
    let shown = page(cookie.clone()).await;
    assert!(shown.contains("id=\"pending-confirmation\""), "{shown}");
    assert!(
        shown.contains("https://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription&amp;TopicArn="),
        "{shown}"
    );
    assert!(
        shown.contains("id=\"sender-setup\"") && shown.contains("id=\"key-in-address\""),
        "{shown}"
    );

    let firing = post_as(&format!("{url}?token={key}"), &[], plain, &fixture("firing-1")).await;
    assert_eq!(firing.status, StatusCode::OK, "{:?}", firing.body);
    let open = alerts(&world).await;
    assert_eq!(open.len(), 1, "{open:?}");
    assert_eq!(open[0]["title"], json!("web-01-cpu-high"));
    assert_eq!(open[0]["status"], json!("triggered"));
    // The first notification shows the subscription confirmed: the kept address is gone.
    assert!(!page(cookie).await.contains("id=\"pending-confirmation\""));

    let resolved = post_as(&format!("{url}?token={key}"), &[], plain, &fixture("resolved-1")).await;
    assert_eq!(resolved.status, StatusCode::OK, "{:?}", resolved.body);
    assert_eq!(alerts(&world).await[0]["status"], json!("resolved"));
}

#[tokio::test]
async fn opsgenie_clients_create_with_a_geniekey_and_close_by_alias_in_the_address() {
    let world = AlertWorld::new().await;
    let (url, key) = world.endpoint("opsgenie").await;
    let genie = format!("GenieKey {key}");
    let create = include_str!("../fixtures/formats/opsgenie/firing-1.json");
    let answer = post_as(
        &format!("{url}/v2/alerts"),
        &[("authorization", &genie)],
        "application/json",
        create,
    )
    .await;
    assert_eq!(answer.status, StatusCode::ACCEPTED, "{:?}", answer.body);
    assert!(answer.json()["requestId"]
        .as_str()
        .is_some_and(|id| !id.is_empty()));
    assert_eq!(alerts(&world).await[0]["status"], json!("triggered"));
    // Another scheme word than the format's is not the key.
    let other = post_as(
        &format!("{url}/v2/alerts"),
        &[("authorization", &format!("Key {key}"))],
        "application/json",
        create,
    )
    .await;
    assert_eq!(other.status, StatusCode::UNAUTHORIZED, "{:?}", other.body);

    let alias = "6f0f3b1c2a8d4e5f9b7c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a";
    // A close by Opsgenie's own id is answered as Opsgenie answers it, and closes nothing: the id is never read as
    // an alias (here the alias itself, which an id of that name must not close).
    let by_id = post_as(
        &format!("{url}/v2/alerts/{alias}/close?identifierType=id"),
        &[("authorization", &genie)],
        "application/json",
        r#"{"source": "a script", "note": "Resolved"}"#,
    )
    .await;
    assert_eq!(by_id.status, StatusCode::ACCEPTED, "{:?}", by_id.body);
    assert_eq!(alerts(&world).await[0]["status"], json!("triggered"));
    let close = post_as(
        &format!("{url}/v2/alerts/{alias}/close?identifierType=alias"),
        &[("authorization", &genie)],
        "application/json",
        r#"{"source": "Alertmanager", "note": "Resolved"}"#,
    )
    .await;
    assert_eq!(close.status, StatusCode::ACCEPTED, "{:?}", close.body);
    let after = alerts(&world).await;
    assert_eq!(after.len(), 1, "{after:?}");
    assert_eq!(after[0]["status"], json!("resolved"));
}

#[tokio::test]
async fn alerta_clients_post_to_alert_with_their_key_schemes_and_a_cleared_severity_resolves() {
    let world = AlertWorld::new().await;
    let (url, key) = world.endpoint("alerta").await;
    let header = format!("Key {key}");
    let firing = include_str!("../fixtures/formats/alerta/firing-1.json");
    let answer = post_as(
        &format!("{url}/alert"),
        &[("authorization", &header)],
        "application/json",
        firing,
    )
    .await;
    assert_eq!(answer.status, StatusCode::CREATED, "{:?}", answer.body);
    let open = alerts(&world).await;
    assert_eq!(open.len(), 1, "{open:?}");
    assert_eq!(open[0]["status"], json!("triggered"));
    let resolved = include_str!("../fixtures/formats/alerta/resolved-1.json");
    let answer = post_as(
        &format!("{url}/alert"),
        &[("x-api-key", &key)],
        "application/json",
        resolved,
    )
    .await;
    assert_eq!(answer.status, StatusCode::CREATED, "{:?}", answer.body);
    assert_eq!(alerts(&world).await[0]["status"], json!("resolved"));
}

#[tokio::test]
async fn the_same_sender_id_on_two_integrations_groups_only_within_each() {
    let world = AlertWorld::new().await;
    let (first, first_key) = world.endpoint("pagerduty").await;
    let (second, second_key) = world.endpoint("pagerduty").await;
    for (url, key) in [(&first, &first_key), (&second, &second_key)] {
        let trigger = json!({
            "routing_key": key,
            "dedup_key": "1",
            "event_action": "trigger",
            "payload": {"summary": "Monitor 1 is down", "source": "h", "severity": "critical"}
        });
        let answer = post_without_header(url, &trigger).await;
        assert_eq!(answer.status, StatusCode::ACCEPTED, "{:?}", answer.body);
    }
    let open = alerts(&world).await;
    assert_eq!(open.len(), 2, "one alert per integration: {open:?}");
    // The second integration's resolve leaves the first's alert open.
    let resolve = json!({"routing_key": second_key, "dedup_key": "1", "event_action": "resolve"});
    assert_eq!(
        post_without_header(&second, &resolve).await.status,
        StatusCode::ACCEPTED
    );
    let statuses: Vec<Value> = alerts(&world)
        .await
        .iter()
        .map(|alert| alert["status"].clone())
        .collect();
    assert!(
        statuses.contains(&json!("triggered")) && statuses.contains(&json!("resolved")),
        "{statuses:?}"
    );
}

#[tokio::test]
async fn a_confirmation_address_outside_the_senders_own_hosts_is_refused_and_not_kept() {
    let world = AlertWorld::new().await;
    let (url, key) = world.endpoint("aws_sns").await;
    let mut confirm: Value = serde_json::from_str(include_str!(
        "../fixtures/formats/aws_sns/subscription-confirmation-1.json"
    ))
    .unwrap();
    for planted in [
        "https://evil.example/?Action=ConfirmSubscription",
        "http://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription",
        "https://sns.us-west-2.amazonaws.com.evil.example/",
        "javascript:alert(1)",
    ] {
        confirm["SubscribeURL"] = json!(planted);
        let answer = post_as(
            &format!("{url}?token={key}"),
            &[],
            "text/plain",
            &confirm.to_string(),
        )
        .await;
        assert_eq!(
            answer.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{planted}: {:?}",
            answer.body
        );
    }
    let shown = get(&world.api("/integrations"), &world.maintainer).await;
    assert!(
        !String::from_utf8_lossy(&shown.body).contains("evil"),
        "{:?}",
        shown.body
    );
}

/// A `multipart/form-data` body as Node's `form-data` package (Uptime Kuma's) writes it, one text field a part.
fn form_body(boundary: &str, fields: &[(&str, &str)]) -> String {
    let mut body = String::new();
    for (name, value) in fields {
        body.push_str(&format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
        ));
    }
    body.push_str(&format!("--{boundary}--\r\n"));
    body
}

#[tokio::test]
async fn uptime_kumas_form_preset_is_read_from_its_data_field_and_other_forms_are_refused() {
    let world = AlertWorld::new().await;
    let (url, key) = world.endpoint("uptime_kuma").await;
    let bearer = format!("Bearer {key}");
    let boundary = "--------------------------836592018374652910384756";
    let form = format!("multipart/form-data; boundary={boundary}");
    let down = include_str!("../fixtures/formats/uptime_kuma/firing-1.json");

    let answer = post_as(
        &url,
        &[("authorization", &bearer)],
        &form,
        &form_body(boundary, &[("data", down)]),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    let open = alerts(&world).await;
    assert_eq!(open.len(), 1, "{open:?}");
    assert_eq!(open[0]["status"], json!("triggered"));
    assert_eq!(open[0]["monitoring_tool"], json!("Uptime Kuma"));

    // A form without the field, one cut short, or one with no boundary: 400 in the intake's shape, nothing kept.
    for (content_type, body) in [
        (form.clone(), form_body(boundary, &[("payload", down)])),
        (
            form.clone(),
            form_body(boundary, &[("data", down)])[..60].to_owned(),
        ),
        (
            "multipart/form-data".to_owned(),
            form_body(boundary, &[("data", down)]),
        ),
    ] {
        let answer = post_as(&url, &[("authorization", &bearer)], &content_type, &body).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{:?}", answer.body);
        assert_eq!(answer.json()["error"], json!("invalid_form"), "{:?}", answer.body);
    }
    // A format whose senders post no forms keeps its 415.
    let (grafana, grafana_key) = world.endpoint("grafana").await;
    let answer = post_as(
        &grafana,
        &[("authorization", &format!("Bearer {grafana_key}"))],
        &form,
        &form_body(boundary, &[("data", "{}")]),
    )
    .await;
    assert_eq!(
        answer.status,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "{:?}",
        answer.body
    );
    assert_eq!(alerts(&world).await.len(), 1);
}
