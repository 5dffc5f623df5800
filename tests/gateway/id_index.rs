//! The id ↔ iid index over real sockets: learned from answers, resolved on the backend on a miss, kept in the
//! SQLite store across restarts, and an unknown id answered with V3's 404.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::common::{get, send_json, TestGateway};
use http::{Method, StatusCode};
use serde_json::json;

/// Creates `count` issues in the demo project through V4 and returns their (global id, iid) pairs.
async fn create_issues(sim: &svc_sim::SimHandle, demo: &svc_sim::DemoSeed, count: usize) -> Vec<(u64, u64)> {
    let mut made = Vec::new();
    for n in 0..count {
        let answer = send_json(
            Method::POST,
            &format!("{}/api/v4/projects/{}/issues", sim.url(), demo.project_id),
            &demo.token,
            json!({"title": format!("issue {n}")}),
        )
        .await;
        assert_eq!(answer.status, StatusCode::CREATED);
        let issue = answer.json();
        made.push((issue["id"].as_u64().unwrap(), issue["iid"].as_u64().unwrap()));
    }
    made
}

#[tokio::test]
async fn without_graphql_a_cold_miss_bisects_the_project_list_and_a_warm_hit_costs_no_lookup() {
    // With GraphQL a cold miss is one request (tests/gateway/graphql.rs); a backend without it is bisected.
    let sim = common::sim::start_with(svc_sim::SimOptions {
        graphql: false,
        ..svc_sim::SimOptions::default()
    })
    .await;
    let demo = sim.seed_demo();
    let issues = create_issues(&sim, &demo, 450).await;
    let gateway = TestGateway::start(&sim.url()).await;
    let (id, iid) = issues[330];
    let url = format!(
        "{}/api/v3/projects/{}/issues/{id}",
        gateway.url(),
        demo.project_id
    );

    sim.clear_requests();
    let cold = get(&url, &demo.token).await;
    assert_eq!(cold.status, StatusCode::OK);
    assert_eq!(cold.json()["iid"], json!(iid));
    let lookups = sim
        .requests()
        .iter()
        .filter(|request| request.path.ends_with("/issues") && request.method == "GET")
        .count();
    assert!((1..=4).contains(&lookups), "bisection read {lookups} pages of 5");

    sim.clear_requests();
    let warm = get(&url, &demo.token).await;
    assert_eq!(warm.status, StatusCode::OK);
    let paths: Vec<String> = sim
        .requests()
        .iter()
        .map(|request| request.path.clone())
        .collect();
    assert_eq!(
        paths,
        [format!("/api/v4/projects/{}/issues/{iid}", demo.project_id)]
    );
    gateway.stop().await;
}

#[tokio::test]
async fn learned_ids_survive_a_gateway_restart() {
    let (sim, demo) = common::sim::with_demo().await;
    let issues = create_issues(&sim, &demo, 3).await;
    let data = tempfile::tempdir().unwrap();
    let (id, iid) = issues[2];
    let url = |gateway: &TestGateway| {
        format!(
            "{}/api/v3/projects/{}/issues/{id}",
            gateway.url(),
            demo.project_id
        )
    };

    let first = TestGateway::start_in(&sim.url(), data.path(), |_| {}).await;
    assert_eq!(get(&url(&first), &demo.token).await.status, StatusCode::OK);
    first.stop().await;

    let second = TestGateway::start_in(&sim.url(), data.path(), |_| {}).await;
    sim.clear_requests();
    let answer = get(&url(&second), &demo.token).await;
    assert_eq!(answer.status, StatusCode::OK);
    let paths: Vec<String> = sim
        .requests()
        .iter()
        .map(|request| request.path.clone())
        .collect();
    assert_eq!(
        paths,
        [format!("/api/v4/projects/{}/issues/{iid}", demo.project_id)],
        "no backend lookup after restart"
    );
    second.stop().await;
}

/// V3 looked issues up with `IssuesFinder#find` (`lib/api/v3/helpers.rb`); `lib/api/api.rb` answered its
/// `RecordNotFound` 404 `404 Not found`.
#[tokio::test]
async fn an_unknown_global_id_is_v3s_404() {
    let (sim, demo) = common::sim::with_demo().await;
    let gateway = TestGateway::start(&sim.url()).await;
    for id in ["999999", "not-a-number"] {
        let answer = get(
            &format!(
                "{}/api/v3/projects/{}/issues/{id}",
                gateway.url(),
                demo.project_id
            ),
            &demo.token,
        )
        .await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{id}");
        assert_eq!(answer.json(), json!({"message": "404 Not found"}));
    }
    gateway.stop().await;
}

#[tokio::test]
async fn an_issue_of_another_project_is_not_found_under_this_one() {
    let (sim, demo) = common::sim::with_demo().await;
    let issues = create_issues(&sim, &demo, 1).await;
    let gateway = TestGateway::start(&sim.url()).await;
    let (id, _) = issues[0];
    let ok = get(
        &format!(
            "{}/api/v3/projects/{}/issues/{id}",
            gateway.url(),
            demo.project_id
        ),
        &demo.token,
    )
    .await;
    assert_eq!(ok.status, StatusCode::OK);
    let other = demo.project_id + 1000;
    let answer = get(
        &format!("{}/api/v3/projects/{other}/issues/{id}", gateway.url()),
        &demo.token,
    )
    .await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
    gateway.stop().await;
}
