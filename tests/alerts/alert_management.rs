//! The alert management API over real sockets: every role rule of the contract's table with a Reporter, a
//! Developer, a Maintainer and an admin of svc-sim; integrations (tiers, exclusivity, key reset, encryption at
//! rest); alert lists, status changes and incident settings.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::alerts::{post_alert, AlertWorld, ADMIN};
use crate::common::{get, send, send_json};
use http::{Method, StatusCode};
use serde_json::{json, Value};

#[tokio::test]
async fn every_route_enforces_its_role() {
    let world = AlertWorld::new().await;
    let made = world
        .integration(json!({"type": "http", "name": "Disk", "active": true}))
        .await;
    let id = made["id"].as_u64().unwrap();
    post_alert(
        made["url"].as_str().unwrap(),
        made["token"].as_str().unwrap(),
        &json!({"title": "one"}),
    )
    .await;
    // (method, route, body, minimum role) per the contract's table.
    let routes: Vec<(Method, String, Value, &str)> = vec![
        (Method::GET, "/integrations".into(), Value::Null, "maintainer"),
        (
            Method::GET,
            format!("/integrations/{id}"),
            Value::Null,
            "maintainer",
        ),
        (
            Method::PUT,
            format!("/integrations/{id}"),
            json!({"name": "Disk alerts"}),
            "maintainer",
        ),
        (
            Method::POST,
            format!("/integrations/{id}/test"),
            json!({"title": "test"}),
            "developer",
        ),
        (Method::GET, "/alerts".into(), Value::Null, "developer"),
        (Method::GET, "/alerts/1".into(), Value::Null, "developer"),
        (
            Method::PUT,
            "/alerts/1".into(),
            json!({"status": "acknowledged"}),
            "developer",
        ),
        (Method::GET, "/alert_settings".into(), Value::Null, "maintainer"),
        (
            Method::PUT,
            "/alert_settings".into(),
            json!({"auto_close_incident": true}),
            "maintainer",
        ),
        (
            Method::POST,
            format!("/integrations/{id}/reset_token"),
            Value::Null,
            "maintainer",
        ),
    ];
    let order = ["reporter", "developer", "maintainer", "admin"];
    for (method, route, body, minimum) in routes {
        for caller in order {
            let token = match caller {
                "reporter" => world.reporter.as_str(),
                "developer" => world.developer.as_str(),
                "maintainer" => world.maintainer.as_str(),
                _ => ADMIN,
            };
            let answer = send_json(method.clone(), &world.api(&route), token, body.clone()).await;
            let allowed = order.iter().position(|c| *c == caller) >= order.iter().position(|c| *c == minimum);
            if allowed {
                assert!(
                    answer.status.is_success(),
                    "{caller} {method} {route}: {} {:?}",
                    answer.status,
                    answer.body
                );
            } else {
                assert_eq!(answer.status, StatusCode::FORBIDDEN, "{caller} {method} {route}");
            }
        }
    }
    let anonymous = send(Method::GET, &world.api("/alerts"), &[], None).await;
    assert_eq!(anonymous.status, StatusCode::UNAUTHORIZED);
    let stranger = world.sim.create_user("stranger", false).1;
    let private = send_json(
        Method::POST,
        &format!("{}/api/v4/projects", world.sim.url()),
        &world.demo.token,
        json!({"name": "secret"}),
    )
    .await
    .json();
    let hidden = get(
        &format!(
            "{}/-/svcgate/api/projects/{}/alerts",
            world.gateway.url(),
            private["id"]
        ),
        &stranger,
    )
    .await;
    assert_eq!(hidden.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn integrations_reveal_their_address_and_key_when_active_and_keys_can_be_reset() {
    let world = AlertWorld::new().await;
    let inactive = world
        .integration(json!({"type": "http", "name": "Checkout latency"}))
        .await;
    assert!(
        inactive.get("token").is_none() && inactive.get("url").is_none(),
        "nothing revealed while inactive"
    );
    let id = inactive["id"].as_u64().unwrap();
    let active = send_json(
        Method::PUT,
        &world.api(&format!("/integrations/{id}")),
        &world.maintainer,
        json!({"active": true}),
    )
    .await
    .json();
    let url = active["url"].as_str().unwrap().to_owned();
    assert!(
        url.contains("/demo-group/demo-project/alerts/notify/checkout-latency/"),
        "{url}"
    );
    let old_key = active["token"].as_str().unwrap().to_owned();
    assert_eq!(old_key.len(), 32);
    assert_eq!(
        post_alert(&url, &old_key, &json!({})).await.status,
        StatusCode::OK
    );

    let reset = send(
        Method::POST,
        &world.api(&format!("/integrations/{id}/reset_token")),
        &[("private-token", &world.maintainer)],
        None,
    )
    .await
    .json();
    let new_key = reset["token"].as_str().unwrap().to_owned();
    assert_ne!(new_key, old_key);
    assert_eq!(
        post_alert(&url, &old_key, &json!({})).await.status,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        post_alert(&url, &new_key, &json!({})).await.status,
        StatusCode::OK
    );

    let listed = get(&world.api("/integrations"), &world.maintainer).await.json();
    assert_eq!(listed[0]["name"], json!("Checkout latency"));
    assert_eq!(listed[0]["type_name"], json!("HTTP Endpoint"));
    assert_eq!(listed[0]["status"], json!("enabled"));
    assert!(
        listed[0].get("token").is_none(),
        "the list shows name, type and status only"
    );

    send_json(
        Method::PUT,
        &world.api(&format!("/integrations/{id}")),
        &world.maintainer,
        json!({"active": false}),
    )
    .await;
    assert_eq!(
        post_alert(&url, &new_key, &json!({})).await.status,
        StatusCode::NOT_FOUND
    );
    let deleted = send(
        Method::DELETE,
        &world.api(&format!("/integrations/{id}")),
        &[("private-token", &world.maintainer)],
        None,
    )
    .await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT);
    assert_eq!(
        get(&world.api(&format!("/integrations/{id}")), &world.maintainer)
            .await
            .status,
        StatusCode::NOT_FOUND
    );

    // Tokens are encrypted at rest: the database holds no token in the clear.
    let database = std::fs::read(world.gateway.data_dir.join("svcgate.db")).unwrap();
    let wal = std::fs::read(world.gateway.data_dir.join("svcgate.db-wal")).unwrap_or_default();
    for key in [&old_key, &new_key] {
        assert!(!database.windows(32).any(|window| window == key.as_bytes()));
        assert!(!wal.windows(32).any(|window| window == key.as_bytes()));
    }
}

#[tokio::test]
async fn opsgenie_excludes_every_other_active_integration() {
    let world = AlertWorld::new().await;
    let generic = world
        .integration(json!({"type": "generic", "active": true}))
        .await;
    let refused = send_json(
        Method::POST,
        &world.api("/integrations"),
        &world.maintainer,
        json!({"type": "opsgenie", "active": true, "api_url": "https://app.opsgenie.example/alerts"}),
    )
    .await;
    assert_eq!(refused.status, StatusCode::CONFLICT);
    assert!(
        refused.json()["message"].as_str().unwrap().contains("Generic"),
        "names what to disable"
    );
    send_json(
        Method::PUT,
        &world.api(&format!("/integrations/{}", generic["id"])),
        &world.maintainer,
        json!({"active": false}),
    )
    .await;
    let opsgenie = world
        .integration(
            json!({"type": "opsgenie", "active": true, "api_url": "https://app.opsgenie.example/alerts"}),
        )
        .await;
    assert!(opsgenie.get("url").is_none(), "Opsgenie receives nothing");
    let blocked = send_json(
        Method::PUT,
        &world.api(&format!("/integrations/{}", generic["id"])),
        &world.maintainer,
        json!({"active": true}),
    )
    .await;
    assert_eq!(blocked.status, StatusCode::CONFLICT);
    assert!(blocked.json()["message"].as_str().unwrap().contains("Opsgenie"));
    let second = send_json(
        Method::POST,
        &world.api("/integrations"),
        &world.maintainer,
        json!({"type": "generic"}),
    )
    .await;
    assert_eq!(
        second.status,
        StatusCode::CONFLICT,
        "one Generic integration per project"
    );
}

#[tokio::test]
async fn the_free_edition_refuses_opsgenie_and_a_second_http_endpoint() {
    let world = AlertWorld::with(|raw| raw.edition = Some("free".to_owned())).await;
    world.integration(json!({"type": "http", "name": "first"})).await;
    for body in [
        json!({"type": "http", "name": "second"}),
        json!({"type": "opsgenie", "api_url": "https://x.example"}),
    ] {
        let answer = send_json(Method::POST, &world.api("/integrations"), &world.maintainer, body).await;
        assert_eq!(answer.status, StatusCode::FORBIDDEN);
        assert!(answer.json()["message"].as_str().unwrap().contains("Premium"));
    }
}

#[tokio::test]
async fn a_test_alert_is_processed_like_a_real_one_and_bad_json_is_explained() {
    let world = AlertWorld::new().await;
    let made = world
        .integration(
            json!({"type": "http", "name": "With sample", "payload_example": "{\"title\": \"sample\"}"}),
        )
        .await;
    let id = made["id"].clone();
    let bad_sample = send_json(
        Method::POST,
        &world.api("/integrations"),
        &world.maintainer,
        json!({"type": "http", "name": "Bad", "payload_example": "{not json"}),
    )
    .await;
    assert_eq!(bad_sample.status, StatusCode::BAD_REQUEST);
    // Switched off, it refuses test alerts as it refuses its senders, and says why.
    let inactive = send(
        Method::POST,
        &world.api(&format!("/integrations/{id}/test")),
        &[("private-token", &world.developer)],
        None,
    )
    .await;
    assert_eq!(inactive.status, StatusCode::CONFLICT, "{:?}", inactive.body);
    assert!(inactive.json()["message"]
        .as_str()
        .unwrap()
        .contains("\"With sample\" is inactive"));
    let activated = send_json(
        Method::PUT,
        &world.api(&format!("/integrations/{id}")),
        &world.maintainer,
        json!({"active": true}),
    )
    .await;
    assert_eq!(activated.status, StatusCode::OK, "{:?}", activated.body);
    let sample = send(
        Method::POST,
        &world.api(&format!("/integrations/{id}/test")),
        &[("private-token", &world.developer)],
        None,
    )
    .await;
    assert_eq!(sample.status, StatusCode::OK, "{:?}", sample.body);
    assert_eq!(sample.json()["alerts"][0]["title"], json!("sample"));
    let given = send_json(
        Method::POST,
        &world.api(&format!("/integrations/{id}/test")),
        &world.developer,
        json!("{\"title\": \"typed\"}"),
    )
    .await;
    assert_eq!(given.status, StatusCode::OK);
    let broken = send_json(
        Method::POST,
        &world.api(&format!("/integrations/{id}/test")),
        &world.developer,
        json!("{\"title\": "),
    )
    .await;
    assert_eq!(broken.status, StatusCode::BAD_REQUEST);
    assert!(broken.json()["message"].as_str().unwrap().contains("line 1"));
    let listed = get(&world.api("/alerts?search=TYPED"), &world.developer)
        .await
        .json();
    assert_eq!(listed[0]["title"], json!("typed"), "search is case-insensitive");
}

#[tokio::test]
async fn alert_lists_filter_sort_paginate_and_count_by_status() {
    let world = AlertWorld::new().await;
    let made = world
        .integration(json!({"type": "generic", "active": true}))
        .await;
    let (url, key) = (made["url"].as_str().unwrap(), made["token"].as_str().unwrap());
    for (title, severity, environment) in [
        ("a", "low", "prod"),
        ("b", "critical", "prod"),
        ("c", "info", "staging"),
        ("d", "high", ""),
    ] {
        post_alert(url, key, &json!({"title": title, "severity": severity, "svc_environment_name": environment, "service": format!("svc-{title}")})).await;
    }
    send_json(
        Method::PUT,
        &world.api("/alerts/3"),
        &world.developer,
        json!({"status": "resolved"}),
    )
    .await;
    send_json(
        Method::PUT,
        &world.api("/alerts/1"),
        &world.developer,
        json!({"status": "acknowledged"}),
    )
    .await;
    let open = get(
        &world.api("/alerts?status=open&sort=severity_desc"),
        &world.developer,
    )
    .await;
    let listed = open.json();
    let titles: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|alert| alert["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["b", "d", "a"], "most severe first");
    assert_eq!(open.header("x-count-open"), Some("3"));
    assert_eq!(open.header("x-count-resolved"), Some("1"));
    assert_eq!(open.header("x-count-acknowledged"), Some("1"));
    assert_eq!(open.header("x-count-all"), Some("4"));
    let page = get(
        &world.api("/alerts?per_page=2&page=2&sort=started_at_asc"),
        &world.developer,
    )
    .await;
    assert_eq!(page.header("x-total"), Some("4"));
    assert_eq!(page.header("x-total-pages"), Some("2"));
    assert_eq!(page.json()[0]["title"], json!("c"));
    let prod = get(&world.api("/alerts?environment=prod"), &world.developer)
        .await
        .json();
    assert_eq!(prod.as_array().unwrap().len(), 2);
    let service = get(&world.api("/alerts?search=svc-d"), &world.developer)
        .await
        .json();
    assert_eq!(service[0]["title"], json!("d"));
    let bad = get(&world.api("/alerts?status=sleeping"), &world.developer).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    let resolved = get(&world.api("/alerts/3"), &world.developer).await.json();
    assert!(resolved["ended_at"].is_string(), "resolving sets ended_at");
    let reopened = send_json(
        Method::PUT,
        &world.api("/alerts/3"),
        &world.developer,
        json!({"status": "triggered"}),
    )
    .await
    .json();
    assert_eq!(reopened["ended_at"], Value::Null, "any other status clears it");
    let environments = get(&world.api("/environments"), &world.developer).await.json();
    assert_eq!(environments[0]["environment"], json!("prod"));
    assert_eq!(environments[0]["open_alerts"][0]["title"], json!("b"));
}

#[tokio::test]
async fn a_management_body_holding_serde_jsons_raw_value_key_is_read_as_spelled() {
    let world = AlertWorld::new().await;
    // serde_json's own reader would take "1" for the whole body and then refuse the comma after it.
    let body =
        json!({"$serde_json::private::RawValue": "1", "type": "generic", "name": "Spelled", "active": true});
    let made = world.integration(body).await;
    assert_eq!(made["name"], json!("Spelled"));
}

#[tokio::test]
async fn a_deleted_integrations_id_is_never_given_again_and_its_alerts_still_name_it() {
    let world = AlertWorld::new().await;
    let first = world
        .integration(json!({"type": "generic", "name": "Nightly checks", "active": true}))
        .await;
    let first_id = first["id"].as_u64().unwrap();
    post_alert(
        first["url"].as_str().unwrap(),
        first["token"].as_str().unwrap(),
        &json!({"title": "disk full"}),
    )
    .await;
    let deleted = send_json(
        Method::DELETE,
        &world.api(&format!("/integrations/{first_id}")),
        &world.maintainer,
        Value::Null,
    )
    .await;
    assert!(deleted.status.is_success(), "{:?}", deleted.body);
    let second = world
        .integration(json!({"type": "generic", "name": "Replacement", "active": true}))
        .await;
    let second_id = second["id"].as_u64().unwrap();
    assert_ne!(
        second_id, first_id,
        "the deleted integration's id was given again"
    );
    // The old address is no one's: a bookmark of it finds nothing.
    let bookmark = get(
        &world.api(&format!("/integrations/{first_id}")),
        &world.maintainer,
    )
    .await;
    assert_eq!(bookmark.status, StatusCode::NOT_FOUND);
    let alert = get(&world.api("/alerts/1"), &world.developer).await.json();
    assert_eq!(alert["integration_id"], first_id);
    assert_eq!(
        alert["integration"],
        json!({"id": first_id, "name": "Nightly checks", "type": "generic", "deleted": true})
    );
}
