//! svcgate under abuse, over real sockets (client → svcgate → svc-sim): what a client invents gets a clear
//! answer in the service's error shape, reaches the backend only when it should, and leaves no state behind.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{get, TestGateway};
use http::StatusCode;

async fn sim_and_gateway() -> (svc_sim::SimHandle, TestGateway, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let sim = svc_sim::spawn(listener, "root-token").await.unwrap();
    let demo = sim.seed_demo();
    let gateway = TestGateway::start(&sim.url()).await;
    (sim, gateway, demo.token)
}

#[tokio::test]
async fn a_v3_path_with_dot_segments_is_refused_and_never_forwarded() {
    let (sim, gateway, token) = sim_and_gateway().await;
    for path in [
        "/api/v3/projects/1/../../user",
        "/api/v3/projects/./1",
        "/api/v3/projects/%2e%2E/1/issues",
        "/api/v3/projects/1/issues/%2E",
    ] {
        sim.clear_requests();
        let answer = get(&format!("{}{path}", gateway.url()), &token).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{path}");
        assert!(
            answer.json()["message"].as_str().is_some(),
            "{path}: {:?}",
            answer.body
        );
        assert!(sim.requests().is_empty(), "{path} reached the backend");
    }
}

#[tokio::test]
async fn an_issue_id_beyond_64_bits_is_not_found_at_once() {
    let (sim, gateway, token) = sim_and_gateway().await;
    for id in [
        "9223372036854775808",
        "18446744073709551616",
        "99999999999999999999999",
    ] {
        sim.clear_requests();
        let answer = get(
            &format!("{}/api/v3/projects/1/issues/{id}", gateway.url()),
            &token,
        )
        .await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{id}");
        assert_eq!(answer.json()["message"], "404 Issue Not Found", "{id}");
        assert!(sim.requests().is_empty(), "{id} caused a backend call");
    }
}
