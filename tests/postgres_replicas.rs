//! Two svcgate replicas on one PostgreSQL, in front of one svc-sim, each on its own port: what one replica does,
//! the other honours. (Every store operation is also checked against both stores in `store_contract.rs`.)
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::alerts::{post_alert, AlertWorld};
use common::postgres::Postgres;
use common::{send_json, TestGateway};
use http::{Method, StatusCode};
use serde_json::json;

const KEY: &str = "5f0c6a8e2d4b1f3a9c7e5d2b0a8f6e4c2a0b9d8c7e6f5a4b3c2d1e0f9a8b7c6d";

/// A world whose gateway keeps its state in `url`, and a second replica of it on the same database.
async fn replicas(cluster: &Postgres) -> (AlertWorld, TestGateway) {
    let url = cluster.database("svcgate").await;
    let shared = |raw: &mut svcgate::config::RawConfig| {
        raw.database_url = Some(url.clone());
        raw.secret_key = Some(KEY.to_owned());
    };
    let world = AlertWorld::with(shared).await;
    let second = TestGateway::start_with(&world.sim.url(), shared).await;
    (world, second)
}

/// The receiving address `integration` has on `gateway` (the path is the same on every replica).
fn address_on(gateway: &TestGateway, integration: &serde_json::Value) -> String {
    let url: http::Uri = integration["url"].as_str().unwrap().parse().unwrap();
    format!("{}{}", gateway.url(), url.path())
}

/// Polls `check` until it holds, for at most `limit`; answers how long it took.
async fn until(limit: Duration, what: &str, mut check: impl AsyncFnMut() -> bool) -> Duration {
    let started = Instant::now();
    loop {
        if check().await {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < limit,
            "{what} did not happen within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_integration_changed_on_one_replica_is_honoured_by_the_other_within_a_second() {
    let cluster = tokio::task::spawn_blocking(Postgres::start).await.unwrap();
    let (world, second) = replicas(&cluster).await;
    let payload = json!({"title": "disk full", "fingerprint": "disk"});

    // Created on the first replica: the second accepts its key.
    let created = world
        .integration(json!({"type": "generic", "active": true}))
        .await;
    let id = created["id"].as_u64().unwrap();
    let on_second = address_on(&second, &created);
    let key = created["token"].as_str().unwrap().to_owned();
    until(
        Duration::from_secs(1),
        "the second replica accepting a new key",
        async || post_alert(&on_second, &key, &payload).await.status == StatusCode::OK,
    )
    .await;

    // Re-keyed on the first: the second refuses the old key and accepts the new one.
    let reset = send_json(
        Method::POST,
        &world.api(&format!("/integrations/{id}/reset_token")),
        &world.maintainer,
        json!(null),
    )
    .await;
    assert_eq!(reset.status, StatusCode::OK);
    let new_key = reset.json()["token"].as_str().unwrap().to_owned();
    until(
        Duration::from_secs(1),
        "the second replica refusing a rotated key",
        async || post_alert(&on_second, &key, &payload).await.status == StatusCode::UNAUTHORIZED,
    )
    .await;
    assert_eq!(
        post_alert(&on_second, &new_key, &payload).await.status,
        StatusCode::OK
    );

    // Deactivated on the first: the second no longer receives at that address.
    let off = send_json(
        Method::PUT,
        &world.api(&format!("/integrations/{id}")),
        &world.maintainer,
        json!({"active": false}),
    )
    .await;
    assert_eq!(off.status, StatusCode::OK);
    until(
        Duration::from_secs(1),
        "the second replica refusing a deactivated integration",
        async || post_alert(&on_second, &new_key, &payload).await.status == StatusCode::NOT_FOUND,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn alerts_sent_to_both_replicas_at_once_group_into_one_open_alert() {
    let cluster = tokio::task::spawn_blocking(Postgres::start).await.unwrap();
    let (world, second) = replicas(&cluster).await;
    let created = world
        .integration(json!({"type": "generic", "active": true}))
        .await;
    let key = created["token"].as_str().unwrap().to_owned();
    let on_first = address_on(&world.gateway, &created);
    let on_second = address_on(&second, &created);
    until(
        Duration::from_secs(1),
        "the second replica knowing the integration",
        async || post_alert(&on_second, "wrong", &json!({})).await.status == StatusCode::UNAUTHORIZED,
    )
    .await;

    let payload = json!({"title": "API latency", "fingerprint": "latency-p99"});
    let sends = (0..400).map(|n| {
        let address = if n % 2 == 0 { &on_first } else { &on_second };
        post_alert(address, &key, &payload)
    });
    let answers = futures_util::future::join_all(sends).await;
    for answer in &answers {
        assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    }

    let listed = common::get(
        &format!(
            "{}/-/svcgate/api/projects/{}/alerts?status=open",
            second.url(),
            world.demo.project_id
        ),
        &world.developer,
    )
    .await;
    assert_eq!(listed.status, StatusCode::OK);
    let alerts = listed.json();
    assert_eq!(alerts.as_array().unwrap().len(), 1, "{alerts}");
    assert_eq!(alerts[0]["events"], 400);
    assert_eq!(alerts[0]["iid"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn signing_in_on_one_replica_works_on_the_other_and_signing_out_ends_it_on_both() {
    let cluster = tokio::task::spawn_blocking(Postgres::start).await.unwrap();
    let (world, second) = replicas(&cluster).await;
    let signed_in = common::sign_in(&world.gateway.url(), &world.maintainer).await;
    assert_eq!(signed_in.status, StatusCode::SEE_OTHER);
    let session = signed_in.cookie();

    let page = |base: String| {
        let session = session.clone();
        async move {
            common::send(
                Method::GET,
                &format!("{base}/-/svcgate/projects"),
                &[("cookie", &session)],
                None,
            )
            .await
        }
    };
    let on_second = page(second.url()).await;
    assert_eq!(
        on_second.status,
        StatusCode::OK,
        "the second replica knows the session"
    );
    assert!(String::from_utf8_lossy(&on_second.body).contains("maintainer"));

    // Signed out through the second replica (its form's CSRF token is the session's own).
    let csrf = on_second.csrf();
    let out = common::send(
        Method::POST,
        &format!("{}/-/svcgate/sign_out", second.url()),
        &[("cookie", &session)],
        Some((
            "application/x-www-form-urlencoded",
            format!("csrf={csrf}").into_bytes(),
        )),
    )
    .await;
    assert_eq!(out.status, StatusCode::SEE_OTHER);
    let on_first = page(world.gateway.url()).await;
    assert_eq!(on_first.status, StatusCode::SEE_OTHER, "signed out everywhere");
    assert_eq!(on_first.header("location"), Some("/-/svcgate/sign_in"));
}
