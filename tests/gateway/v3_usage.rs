//! V3 usage insight over real sockets: counts per route and client (never the token), batches to the store,
//! bounded client rows, the admin-only report and page with CSV, and the V3 metric.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::common::usage;
use crate::common::{get, send, TestGateway};
use http::{Method, StatusCode};
use serde_json::{json, Value};

async fn v3(gateway: &TestGateway, path: &str, token: &str, agent: &str) -> StatusCode {
    let mut headers = vec![("user-agent", agent)];
    if !token.is_empty() {
        headers.push(("private-token", token));
    }
    send(
        Method::GET,
        &format!("{}/api/v3{path}", gateway.url()),
        &headers,
        None,
    )
    .await
    .status
}

fn route<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["routes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|route| route["route"] == json!(name))
        .unwrap_or_else(|| panic!("no route {name} in {report}"))
}

#[tokio::test]
async fn calls_are_counted_per_route_and_client_with_errors_and_never_a_token() {
    let (_sim, demo, gateway) = usage::world(|_| {}).await;
    for _ in 0..3 {
        assert_eq!(
            v3(&gateway, "/projects", &demo.token, "legacy-tool/1.0").await,
            StatusCode::OK
        );
    }
    assert_eq!(
        v3(
            &gateway,
            "/projects/1/issues/999999",
            &demo.token,
            "legacy-tool/1.0"
        )
        .await,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        v3(&gateway, "/user", &demo.token, "other/2").await,
        StatusCode::OK
    );
    v3(&gateway, "/projects", "", "curl/8").await;

    let refused = get(&format!("{}/-/svcgate/api/v3-usage", gateway.url()), &demo.token).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "admins only");
    let anonymous = send(
        Method::GET,
        &format!("{}/-/svcgate/api/v3-usage", gateway.url()),
        &[],
        None,
    )
    .await;
    assert_eq!(anonymous.status, StatusCode::UNAUTHORIZED);

    let report = usage::report(&gateway).await;
    let projects = route(&report, "GET /projects");
    assert_eq!(projects["calls"], json!(4));
    assert_eq!(projects["since"], json!("9.0"));
    assert_eq!(projects["unused_for_30_days"], json!(false));
    let demo_client = projects["clients"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["user"] == json!("demo"))
        .unwrap();
    assert_eq!(
        (demo_client["calls"].clone(), demo_client["user_agent"].clone()),
        (json!(3), json!("legacy-tool/1.0"))
    );
    assert!(projects["clients"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["user"] == json!("anonymous")));
    let issue = route(&report, "GET /projects/:id/issues/:issue_id");
    assert_eq!(
        (issue["calls"].clone(), issue["errors"].clone()),
        (json!(1), json!(1))
    );
    let unmatched = route(&report, "GET /user (no rule)");
    assert_eq!(unmatched["since"], json!(""));
    assert_eq!(
        report["routes"][0]["route"],
        json!("GET /projects"),
        "routes by calls"
    );

    let database = std::fs::read(gateway.data_dir.join("svcgate.db")).unwrap();
    let wal = std::fs::read(gateway.data_dir.join("svcgate.db-wal")).unwrap_or_default();
    for bytes in [&database, &wal] {
        assert!(
            !bytes
                .windows(demo.token.len())
                .any(|window| window == demo.token.as_bytes()),
            "no token stored"
        );
    }

    let metrics = String::from_utf8(
        get(&format!("{}/-/svcgate/metrics", gateway.url()), "")
            .await
            .body
            .to_vec(),
    )
    .unwrap();
    assert!(
        metrics.contains(
            "svcgate_v3_requests_total{route=\"GET /projects\",since=\"9.0\",status_class=\"2xx\"} 3"
        ),
        "{metrics}"
    );
    assert!(
        metrics.contains(
            "svcgate_v3_requests_total{route=\"(prefix change)\",since=\"\",status_class=\"2xx\"} 1"
        ),
        "{metrics}"
    );
    assert!(!metrics.contains("demo"), "no user label");
}

#[tokio::test]
async fn concurrent_calls_are_all_counted_and_survive_a_restart() {
    let (sim, demo) = common::sim::with_demo().await;
    let (_, other) = sim.create_user("second", false);
    let data = tempfile::tempdir().unwrap();
    let gateway = TestGateway::start_in(&sim.url(), data.path(), |raw| {
        raw.usage_flush_interval = Some("50ms".to_owned())
    })
    .await;
    let calls: Vec<_> = (0..200)
        .map(|n| {
            let url = format!("{}/api/v3/projects", gateway.url());
            let token = if n % 2 == 0 {
                demo.token.clone()
            } else {
                other.clone()
            };
            tokio::spawn(async move {
                send(
                    Method::GET,
                    &url,
                    &[("private-token", &token), ("user-agent", "storm")],
                    None,
                )
                .await
            })
        })
        .collect();
    for call in calls {
        assert_eq!(call.await.unwrap().status, StatusCode::OK);
    }
    gateway.stop().await;
    let restarted = TestGateway::start_in(&sim.url(), data.path(), |_| {}).await;
    let report = usage::report(&restarted).await;
    let projects = route(&report, "GET /projects");
    assert_eq!(projects["calls"], json!(200));
    let per_user: Vec<u64> = projects["clients"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["calls"].as_u64().unwrap())
        .collect();
    assert_eq!(per_user, [100, 100]);
    restarted.stop().await;
}

#[tokio::test]
async fn the_least_recent_clients_are_folded_into_others() {
    let (_sim, demo, gateway) = usage::world(|raw| raw.usage_max_clients_per_route = Some(2)).await;
    for agent in ["tool-a", "tool-b", "tool-c", "tool-d"] {
        v3(&gateway, "/projects", &demo.token, agent).await;
        // Each batch is its own flush, so the order of last calls is known.
        usage::report(&gateway).await;
    }
    let report = usage::report(&gateway).await;
    let projects = route(&report, "GET /projects");
    let clients = projects["clients"].as_array().unwrap();
    assert_eq!(clients.len(), 3, "two clients and others: {clients:?}");
    let others = clients.iter().find(|c| c["user"] == json!("others")).unwrap();
    assert_eq!(others["calls"], json!(2));
    assert!(
        clients.iter().any(|c| c["user_agent"] == json!("tool-d")),
        "the most recent stay"
    );
    assert_eq!(projects["calls"], json!(4), "nothing is lost by folding");
}

#[tokio::test]
async fn the_usage_page_is_for_admins_and_offers_csv() {
    let (_sim, demo, gateway) = usage::world(|_| {}).await;
    v3(&gateway, "/projects", &demo.token, "legacy, \"quoted\" agent").await;
    let sign_in = |token: String| {
        let base = gateway.url();
        async move { common::sign_in(&base, &token).await.cookie() }
    };
    let admin = sign_in("root-token".to_owned()).await;
    let page = send(
        Method::GET,
        &format!("{}/-/svcgate/admin/v3-usage?sort=route", gateway.url()),
        &[("cookie", &admin)],
        None,
    )
    .await;
    assert_eq!(page.status, StatusCode::OK);
    let html = String::from_utf8_lossy(&page.body).into_owned();
    assert!(
        html.contains("id=\"v3-usage\"") && html.contains("GET /projects"),
        "{html}"
    );
    let csv = send(
        Method::GET,
        &format!("{}/-/svcgate/admin/v3-usage.csv", gateway.url()),
        &[("cookie", &admin)],
        None,
    )
    .await;
    assert_eq!(csv.header("content-type"), Some("text/csv; charset=utf-8"));
    let text = String::from_utf8(csv.body.to_vec()).unwrap();
    assert!(
        text.starts_with("route,since,user,user_agent,calls,errors,first_seen,last_seen"),
        "{text}"
    );
    assert!(
        text.contains("GET /projects,9.0,demo,\"legacy, \"\"quoted\"\" agent\",1,0,"),
        "{text}"
    );
    let user = sign_in(demo.token.clone()).await;
    let refused = send(
        Method::GET,
        &format!("{}/-/svcgate/admin/v3-usage", gateway.url()),
        &[("cookie", &user)],
        None,
    )
    .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
}
