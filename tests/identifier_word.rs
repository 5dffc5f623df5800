//! A server whose identifier word is not `svc`: the same binary serves it once `identifier_word` says so, in
//! route names (V3 `/acme_ci_ymls`) and alert field names (`acme_environment_name`), over real sockets
//! (client → svcgate → svc-sim). Its own test binary: the alert field names are set once per process.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{get, TestGateway};
use http::StatusCode;
use serde_json::json;

#[tokio::test]
async fn the_identifier_word_names_template_routes_and_the_environment_field() {
    let sim = common::sim::start_with(svc_sim::SimOptions {
        identifier_word: "acme".to_owned(),
        ..svc_sim::SimOptions::default()
    })
    .await;
    let demo = sim.seed_demo();
    let gateway =
        TestGateway::start_with(&sim.url(), |raw| raw.identifier_word = Some("acme".to_owned())).await;

    sim.clear_requests();
    let list = get(&format!("{}/api/v3/acme_ci_ymls", gateway.url()), &demo.token).await;
    assert_eq!(list.status, StatusCode::OK, "{:?}", list.body);
    assert!(!list.json().as_array().unwrap().is_empty());
    let paths: Vec<String> = sim
        .requests()
        .iter()
        .map(|request| request.path.clone())
        .collect();
    assert_eq!(paths, ["/api/v4/templates/acme_ci_ymls"]);
    // The default word's route is no rule here: it passes through with the prefix change, and the backend
    // does not know it.
    let other = get(&format!("{}/api/v3/svc_ci_ymls", gateway.url()), &demo.token).await;
    assert_eq!(other.status, StatusCode::NOT_FOUND);

    // Alerts name their environment with the word too.
    let created = common::send_json(
        http::Method::POST,
        &format!(
            "{}/-/svcgate/api/projects/{}/integrations",
            gateway.url(),
            demo.project_id
        ),
        &demo.token,
        json!({"type": "generic", "active": true}),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let made = created.json();
    let answer = common::alerts::post_alert(
        made["url"].as_str().unwrap(),
        made["token"].as_str().unwrap(),
        &json!({"title": "disk", "acme_environment_name": "production"}),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    assert_eq!(answer.json()[0]["warnings"], json!([]));
    let alerts = get(
        &format!(
            "{}/-/svcgate/api/projects/{}/alerts",
            gateway.url(),
            demo.project_id
        ),
        &demo.token,
    )
    .await
    .json();
    assert_eq!(alerts[0]["environment"], json!("production"), "{alerts}");
}
