//! `payload_format` in the management API over real sockets: Generic and HTTP Endpoint integrations take one of
//! the formats svcgate knows on creation and update (`generic` unless told otherwise), an unknown name is refused
//! with the known ones, kinds without a choice refuse it (Prometheus shows the `alertmanager` it always reads),
//! and the choice is kept in the SQLite file across a restart.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::common::alerts::AlertWorld;
use crate::common::{get, send_json, TestGateway};
use http::{Method, StatusCode};
use serde_json::{json, Value};

/// The `message` of a refusal.
fn message(answer: &common::Answer) -> String {
    answer.json()["message"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn an_http_endpoint_takes_a_payload_format_when_created_and_changes_it_when_updated() {
    let world = AlertWorld::new().await;
    let created = world
        .integration(json!({"type": "http", "name": "Grafana", "payload_format": "grafana"}))
        .await;
    assert_eq!(created["payload_format"], json!("grafana"));
    let id = created["id"].as_u64().unwrap();
    let shown = get(&world.api(&format!("/integrations/{id}")), &world.maintainer)
        .await
        .json();
    assert_eq!(shown["payload_format"], json!("grafana"));

    let updated = send_json(
        Method::PUT,
        &world.api(&format!("/integrations/{id}")),
        &world.maintainer,
        json!({"payload_format": " datadog "}),
    )
    .await;
    assert_eq!(updated.status, StatusCode::OK, "{:?}", updated.body);
    assert_eq!(updated.json()["payload_format"], json!("datadog"));
    // A change of something else leaves the format as it is.
    let renamed = send_json(
        Method::PUT,
        &world.api(&format!("/integrations/{id}")),
        &world.maintainer,
        json!({"name": "Datadog", "payload_format": null}),
    )
    .await
    .json();
    assert_eq!(renamed["payload_format"], json!("datadog"));
    let listed = get(&world.api("/integrations"), &world.maintainer).await.json();
    assert_eq!(listed[0]["payload_format"], json!("datadog"));

    let generic = world
        .integration(json!({"type": "generic", "payload_format": "uptime_kuma"}))
        .await;
    assert_eq!(generic["payload_format"], json!("uptime_kuma"));
}

#[tokio::test]
async fn a_new_integration_reads_generic_payloads_unless_told_otherwise() {
    let world = AlertWorld::new().await;
    let http = world.integration(json!({"type": "http", "name": "Plain"})).await;
    let generic = world.integration(json!({"type": "generic"})).await;
    let prometheus = world.integration(json!({"type": "prometheus"})).await;
    assert_eq!(http["payload_format"], json!("generic"));
    assert_eq!(generic["payload_format"], json!("generic"));
    assert_eq!(
        prometheus["payload_format"],
        json!("alertmanager"),
        "a Prometheus integration shows the envelope it always reads"
    );
    send_json(
        Method::PUT,
        &world.api(&format!("/integrations/{}", generic["id"])),
        &world.maintainer,
        json!({"active": false}),
    )
    .await;
    let opsgenie = world
        .integration(json!({"type": "opsgenie", "api_url": "https://app.opsgenie.example/alerts"}))
        .await;
    assert_eq!(
        opsgenie["payload_format"],
        Value::Null,
        "an Opsgenie link receives nothing"
    );
}

#[tokio::test]
async fn an_unknown_payload_format_is_refused_with_the_names_of_the_known_ones() {
    let world = AlertWorld::new().await;
    let refused = send_json(
        Method::POST,
        &world.api("/integrations"),
        &world.maintainer,
        json!({"type": "http", "name": "Nagios", "payload_format": "nagios"}),
    )
    .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    let text = message(&refused);
    assert!(
        text.contains("\"payload_format\"") && text.contains("grafana") && text.contains("aws_sns"),
        "{text}"
    );
    let listed = get(&world.api("/integrations"), &world.maintainer).await.json();
    assert_eq!(listed, json!([]), "nothing was created");

    let made = world
        .integration(json!({"type": "http", "name": "Sentry", "payload_format": "sentry"}))
        .await;
    let address = world.api(&format!("/integrations/{}", made["id"]));
    for (body, what) in [
        (json!({"payload_format": "Sentry"}), "names are exact"),
        (json!({"payload_format": ""}), "an empty name"),
        (json!({"payload_format": 7}), "not a string"),
    ] {
        let answer = send_json(Method::PUT, &address, &world.maintainer, body).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{what}");
        assert!(message(&answer).contains("\"payload_format\""), "{what}");
    }
    let kept = get(&address, &world.maintainer).await.json();
    assert_eq!(kept["payload_format"], json!("sentry"));
}

#[tokio::test]
async fn prometheus_and_opsgenie_integrations_refuse_a_payload_format() {
    let world = AlertWorld::new().await;
    let refused = send_json(
        Method::POST,
        &world.api("/integrations"),
        &world.maintainer,
        json!({"type": "prometheus", "payload_format": "grafana"}),
    )
    .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    let text = message(&refused);
    assert!(
        text.contains("only for Generic or HTTP Endpoint integrations") && text.contains("alertmanager"),
        "{text}"
    );

    // What the API shows may be sent back as it is.
    let prometheus = world
        .integration(json!({"type": "prometheus", "payload_format": "alertmanager"}))
        .await;
    let address = world.api(&format!("/integrations/{}", prometheus["id"]));
    let round_trip = send_json(Method::PUT, &address, &world.maintainer, prometheus.clone()).await;
    assert_eq!(round_trip.status, StatusCode::OK, "{:?}", round_trip.body);
    let changed = send_json(
        Method::PUT,
        &address,
        &world.maintainer,
        json!({"payload_format": "generic"}),
    )
    .await;
    assert_eq!(changed.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        get(&address, &world.maintainer).await.json()["payload_format"],
        json!("alertmanager")
    );

    let opsgenie = send_json(
        Method::POST,
        &world.api("/integrations"),
        &world.maintainer,
        json!({"type": "opsgenie", "api_url": "https://app.opsgenie.example/alerts", "payload_format": "opsgenie"}),
    )
    .await;
    assert_eq!(opsgenie.status, StatusCode::BAD_REQUEST);
    assert!(
        message(&opsgenie).contains("only for Generic or HTTP Endpoint integrations"),
        "an Opsgenie link is not the opsgenie payload format: {}",
        message(&opsgenie)
    );
}

#[tokio::test]
async fn the_chosen_payload_format_is_kept_across_a_restart() {
    let (sim, demo) = common::sim::with_demo().await;
    let data = tempfile::tempdir().unwrap();
    let api = |gateway: &TestGateway, rest: &str| {
        format!(
            "{}/-/svcgate/api/projects/{}{rest}",
            gateway.url(),
            demo.project_id
        )
    };
    let first = TestGateway::start_in(&sim.url(), data.path(), |_| {}).await;
    let made = send_json(
        Method::POST,
        &api(&first, "/integrations"),
        &demo.token,
        json!({"type": "http", "name": "Azure", "payload_format": "azure_monitor"}),
    )
    .await;
    assert_eq!(made.status, StatusCode::CREATED, "{:?}", made.body);
    let id = made.json()["id"].as_u64().unwrap();
    first.stop().await;

    let restarted = TestGateway::start_in(&sim.url(), data.path(), |_| {}).await;
    let shown = get(&api(&restarted, &format!("/integrations/{id}")), &demo.token).await;
    assert_eq!(shown.status, StatusCode::OK);
    assert_eq!(shown.json()["payload_format"], json!("azure_monitor"));
    restarted.stop().await;
}
