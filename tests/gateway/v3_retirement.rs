//! Knowing when V3 can go, over real sockets: the usage API's and page's summary of active and retired clients,
//! `svcgate_v3_active_clients`, and `svcgate_v3_retired_clients_returned_total` when a client retired in rows
//! stored before the gateway started calls again.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::common::usage;
use crate::common::{get, send, TestGateway};
use http::{Method, StatusCode};
use serde_json::{json, Value};
use svcgate::store::{SqliteStore, Store, UsageDelta};

async fn v3(gateway: &TestGateway, path: &str, token: &str, agent: &str) {
    let answer = send(
        Method::GET,
        &format!("{}/api/v3{path}", gateway.url()),
        &[("user-agent", agent), ("private-token", token)],
        None,
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{path}");
}

/// The usage API's summary (the report flushes the counts first).
async fn summary(gateway: &TestGateway) -> Value {
    usage::report(gateway).await["summary"].clone()
}

async fn metrics(gateway: &TestGateway) -> String {
    let answer = get(&format!("{}/-/svcgate/metrics", gateway.url()), "").await;
    String::from_utf8(answer.body.to_vec()).unwrap()
}

/// A stored row of `client`'s calls to `route` with `user_agent`, the last `days_ago` days before now.
fn old_row(route: &str, client: &str, user_agent: &str, days_ago: i64) -> UsageDelta {
    let at = (time::OffsetDateTime::now_utc() - time::Duration::days(days_ago))
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    UsageDelta {
        route: route.to_owned(),
        since: "9.0".to_owned(),
        client: client.to_owned(),
        user_agent: user_agent.to_owned(),
        calls: 12,
        errors: 0,
        first_seen: at.clone(),
        last_seen: at,
    }
}

#[tokio::test]
async fn v3_calls_show_as_one_active_client_in_the_summary_the_page_and_the_metric() {
    let (_sim, demo, gateway) = usage::world(|_| {}).await;
    // One user and one program, in two versions: one client.
    v3(&gateway, "/projects", &demo.token, "legacy-tool/1.0").await;
    v3(&gateway, "/projects", &demo.token, "legacy-tool/1.1").await;
    v3(&gateway, "/user", &demo.token, "legacy-tool/1.1").await;

    let summary = summary(&gateway).await;
    assert_eq!(
        (
            summary["clients_active"].clone(),
            summary["clients_retired"].clone(),
            summary["routes_active"].clone(),
            summary["routes_unused"].clone(),
            summary["period_days"].clone(),
        ),
        (json!(1), json!(0), json!(2), json!(0), json!(30)),
        "{summary}"
    );
    let client = &summary["clients"][0];
    assert_eq!(
        (
            client["user"].clone(),
            client["product"].clone(),
            client["retired"].clone()
        ),
        (json!("demo"), json!("legacy-tool"), json!(false))
    );

    let text = metrics(&gateway).await;
    assert!(text.contains("\nsvcgate_v3_active_clients 1\n"), "{text}");
    assert!(
        text.contains("\nsvcgate_v3_retired_clients_returned_total 0\n"),
        "{text}"
    );
    assert!(text.contains("\nsvcgate_store_gauges_up 1\n"), "{text}");

    let admin = common::sign_in(&gateway.url(), "root-token").await.cookie();
    let page = send(
        Method::GET,
        &format!("{}/-/svcgate/admin/v3-usage", gateway.url()),
        &[("cookie", &admin)],
        None,
    )
    .await;
    let html = String::from_utf8_lossy(&page.body).into_owned();
    for shown in [
        "class=\"active-clients\">1 client<",
        "class=\"active-routes\">2 routes<",
        "still active in the last\n30 days;",
        "class=\"retired-clients\">0 clients<",
    ] {
        assert!(html.contains(shown), "{shown} in {html}");
    }
}

#[tokio::test]
async fn a_retired_client_that_calls_again_is_counted_once_and_active_again() {
    let (sim, demo) = common::sim::with_demo().await;
    let data = tempfile::tempdir().unwrap();
    // Calls from an earlier run, older than the 30 days of v3_client_retired_after.
    {
        let store = SqliteStore::open(data.path()).unwrap();
        store
            .usage_add(
                vec![
                    old_row("GET /projects", "demo", "old-script/2.0", 45),
                    old_row("GET /user (no rule)", "demo", "old-script/2.0", 40),
                    old_row("GET /projects/:id/issues", "someone", "gone-tool/1", 60),
                ],
                50,
            )
            .await
            .unwrap();
    }
    let gateway = TestGateway::start_in(&sim.url(), data.path(), |raw| {
        raw.usage_flush_interval = Some("1h".to_owned());
    })
    .await;
    let before = metrics(&gateway).await;
    assert!(before.contains("\nsvcgate_v3_active_clients 0\n"), "{before}");
    let summary_before = summary(&gateway).await;
    assert_eq!(
        (
            summary_before["clients_active"].clone(),
            summary_before["clients_retired"].clone(),
            summary_before["routes_unused"].clone(),
        ),
        (json!(0), json!(2), json!(3)),
        "{summary_before}"
    );

    // The retired script comes back, upgraded: the same client.
    v3(&gateway, "/projects", &demo.token, "old-script/2.1").await;
    v3(&gateway, "/projects", &demo.token, "old-script/2.1").await;
    let summary_after = summary(&gateway).await;
    assert_eq!(
        (
            summary_after["clients_active"].clone(),
            summary_after["clients_retired"].clone(),
            summary_after["routes_active"].clone(),
        ),
        (json!(1), json!(1), json!(1)),
        "{summary_after}"
    );
    // Its next calls are an active client's: still one return.
    v3(&gateway, "/projects", &demo.token, "old-script/2.1").await;
    summary(&gateway).await;
    let after = metrics(&gateway).await;
    assert!(
        after.contains("\nsvcgate_v3_retired_clients_returned_total 1\n"),
        "{after}"
    );
    assert!(after.contains("\nsvcgate_v3_active_clients 1\n"), "{after}");
    gateway.stop().await;
}
