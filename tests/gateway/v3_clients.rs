//! The V3 migration report over real sockets: clients as a user and a product (versions grouped), each route
//! with its V4 request; the admin-only API (list, one client, Markdown), the admin pages, and `svcgate v3 report`
//! reading the store once the gateway stopped.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::common::usage;
use crate::common::{get, send, TestGateway};
use http::{Method, StatusCode};
use serde_json::{json, Value};
use svcgate::rewrite::clients::client_id;

async fn v3(gateway: &TestGateway, path: &str, token: &str, agent: &str) -> StatusCode {
    send(
        Method::GET,
        &format!("{}/api/v3{path}", gateway.url()),
        &[("user-agent", agent), ("private-token", token)],
        None,
    )
    .await
    .status
}

fn route<'a>(client: &'a Value, name: &str) -> &'a Value {
    client["routes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|route| route["route"] == json!(name))
        .unwrap_or_else(|| panic!("no route {name} in {client}"))
}

/// Two versions of one product and a second product, for the demo user.
async fn calls(gateway: &TestGateway, demo: &svc_sim::DemoSeed) {
    let token = demo.token.as_str();
    let commits = format!("/projects/{}/repository/commits?page=0", demo.project_id);
    assert_eq!(
        v3(gateway, "/projects", token, "legacy-tool/1.0").await,
        StatusCode::OK
    );
    assert_eq!(
        v3(gateway, "/projects", token, "legacy-tool/1.1").await,
        StatusCode::OK
    );
    assert_eq!(
        v3(gateway, &commits, token, "legacy-tool/1.1").await,
        StatusCode::OK
    );
    assert_eq!(
        v3(gateway, "/user", token, "legacy-tool/1.1").await,
        StatusCode::OK
    );
    v3(gateway, "/nope/invented", token, "legacy-tool/1.1").await;
    assert_eq!(
        v3(gateway, "/projects", token, "other-tool/2").await,
        StatusCode::OK
    );
}

#[tokio::test]
async fn each_client_reports_its_routes_with_their_v4_requests_for_admins_only() {
    let (_sim, demo, gateway) = usage::world(|_| {}).await;
    calls(&gateway, &demo).await;
    let base = format!("{}/-/svcgate/api/v3-clients", gateway.url());

    assert_eq!(
        send(Method::GET, &base, &[], None).await.status,
        StatusCode::UNAUTHORIZED
    );
    let refused = get(&base, &demo.token).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "admins only");
    assert!(refused.json()["message"].as_str().unwrap().starts_with("403"));

    let list = get(&base, "root-token").await.json();
    let clients = list["clients"].as_array().unwrap();
    assert_eq!(clients.len(), 2, "{list}");
    assert_eq!(
        list["folded"],
        json!({}),
        "no call was folded into others: {list}"
    );

    let post = send(Method::POST, &base, &[("private-token", "root-token")], None).await;
    assert_eq!(post.status, StatusCode::METHOD_NOT_ALLOWED, "only GET and HEAD");
    assert_eq!(post.header("allow"), Some("GET, HEAD"));
    assert_eq!(post.json()["message"], json!("405 Method Not Allowed"));
    let id = client_id("demo", "legacy-tool");
    let legacy = clients.iter().find(|client| client["id"] == json!(id)).unwrap();
    assert_eq!(legacy["versions"], json!(["1.0", "1.1"]));
    assert_eq!(legacy["calls"], json!(5));
    assert_eq!(legacy["routes"], json!(4));
    assert_eq!(legacy["retired"], json!(false));

    let one = get(&format!("{base}/{id}"), "root-token").await;
    assert_eq!(one.status, StatusCode::OK);
    let one = one.json();
    assert_eq!(one["user"], json!("demo"));
    let projects = route(&one, "GET /projects");
    assert_eq!(projects["calls"], json!(2));
    assert_eq!(projects["advice"]["v4_method"], json!("GET"));
    assert_eq!(projects["advice"]["v4_path"], json!("/api/v4/projects"));
    let commits = route(&one, "GET /projects/:id/repository/commits");
    assert!(
        commits["advice"]["answer"]["pagination"][0]
            .as_str()
            .unwrap()
            .contains("add one to page"),
        "{commits}"
    );
    let user = route(&one, "GET /user (no rule)");
    assert_eq!(user["advice"]["change"], json!("prefix_only"));
    let failed = route(&one, "(no rule)");
    assert_eq!(failed["advice"]["change"], json!("failed_unknown_paths"));
    let text = one.to_string();
    assert!(!text.contains(&demo.token), "no token in the report");

    let markdown = get(&format!("{base}/{id}.md"), "root-token").await;
    assert_eq!(markdown.status, StatusCode::OK);
    assert_eq!(
        markdown.header("content-type"),
        Some("text/markdown; charset=utf-8")
    );
    let markdown = String::from_utf8(markdown.body.to_vec()).unwrap();
    assert!(
        markdown.starts_with("## V3 migration: demo — legacy-tool (versions 1.0, 1.1)"),
        "{markdown}"
    );
    assert!(markdown.contains("| `GET /projects` | 2 | 0 |"), "{markdown}");

    let unknown = get(&format!("{base}/0000000000000000"), "root-token").await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    assert_eq!(unknown.json(), json!({"message": "404 Client Not Found"}));
    assert_eq!(
        get(&format!("{base}/{id}"), &demo.token).await.status,
        StatusCode::FORBIDDEN
    );
}

#[tokio::test]
async fn the_clients_pages_are_for_admins_and_linked_from_the_usage_page() {
    let (sim, demo) = common::sim::with_demo().await;
    let gateway = TestGateway::start_with(&sim.url(), |_| {}).await;
    calls(&gateway, &demo).await;
    let admin = common::sign_in(&gateway.url(), "root-token").await.cookie();
    let page = |path: &'static str, cookie: String| {
        let url = format!("{}/-/svcgate/admin/{path}", gateway.url());
        async move { send(Method::GET, &url, &[("cookie", &cookie)], None).await }
    };
    let usage = page("v3-usage", admin.clone()).await;
    assert!(String::from_utf8_lossy(&usage.body)
        .contains(r#"<a id="v3-clients" href="/-/svcgate/admin/v3-clients">"#));
    let list = page("v3-clients", admin.clone()).await;
    assert_eq!(list.status, StatusCode::OK);
    let html = String::from_utf8_lossy(&list.body).into_owned();
    let id = client_id("demo", "legacy-tool");
    assert!(
        html.contains("id=\"v3-clients\"")
            && html.contains(&format!("href=\"/-/svcgate/admin/v3-clients/{id}\"")),
        "{html}"
    );
    let url = format!("{}/-/svcgate/admin/v3-clients/{id}", gateway.url());
    let one = send(Method::GET, &url, &[("cookie", &admin)], None).await;
    assert_eq!(one.status, StatusCode::OK);
    let html = String::from_utf8_lossy(&one.body).into_owned();
    assert!(
        html.contains("GET /api/v4/projects/:id/repository/commits")
            && html.contains(&format!("href=\"/-/svcgate/admin/v3-clients/{id}.md\"")),
        "{html}"
    );
    let markdown = send(Method::GET, &format!("{url}.md"), &[("cookie", &admin)], None).await;
    assert_eq!(
        markdown.header("content-type"),
        Some("text/markdown; charset=utf-8")
    );
    let user = common::sign_in(&gateway.url(), &demo.token).await.cookie();
    assert_eq!(page("v3-clients", user).await.status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn svcgate_v3_report_reads_the_store_read_only_after_the_gateway_stopped() {
    let (sim, demo) = common::sim::with_demo().await;
    let data = tempfile::tempdir().unwrap();
    let gateway = TestGateway::start_in(&sim.url(), data.path(), |_| {}).await;
    calls(&gateway, &demo).await;
    // The usage API writes the counts gathered so far.
    usage::report(&gateway).await;
    gateway.stop().await;

    let data_dir = data.path().to_str().unwrap();
    let run = |args: &[&str]| {
        common::process::command()
            .args(["v3", "report", "--data-dir", data_dir])
            .args(args)
            .env_remove("SVCGATE_BACKEND")
            .output()
            .unwrap()
    };
    let json = run(&["--format", "json"]);
    assert!(json.status.success(), "{}", String::from_utf8_lossy(&json.stderr));
    let report: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(report["clients"].as_array().unwrap().len(), 2);

    let id = client_id("demo", "legacy-tool");
    let markdown = run(&["--client", &id]);
    assert!(markdown.status.success());
    let text = String::from_utf8(markdown.stdout).unwrap();
    assert!(text.starts_with("## V3 migration: demo — legacy-tool"), "{text}");
    assert_eq!(text.matches("## V3 migration: ").count(), 1);

    let csv = run(&["--client", "demo", "--format", "csv"]);
    let text = String::from_utf8(csv.stdout).unwrap();
    assert!(
        text.starts_with("client_id,user,product,versions,retired,route,"),
        "{text}"
    );
    assert_eq!(text.lines().count(), 1 + 4 + 1, "both of demo's clients: {text}");

    let unknown = run(&["--client", "nobody"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no V3 client \"nobody\""));

    // A store whose schema is older than this build is refused, and left unmigrated: the report only reads.
    let path = data.path().join("svcgate.db");
    let newest = |db: &rusqlite::Connection| -> i64 {
        db.query_row("SELECT max(version) FROM schema_migrations", [], |row| row.get(0))
            .unwrap()
    };
    let db = rusqlite::Connection::open(&path).unwrap();
    let known = newest(&db);
    db.execute("DELETE FROM schema_migrations WHERE version = ?1", [known])
        .unwrap();
    drop(db);
    let old = run(&["--format", "json"]);
    assert!(!old.status.success());
    let stderr = String::from_utf8_lossy(&old.stderr);
    assert!(
        stderr.contains(&format!(
            "schema is at migration {}, older than this svcgate's {known}",
            known - 1
        )),
        "{stderr}"
    );
    assert_eq!(
        newest(&rusqlite::Connection::open(&path).unwrap()),
        known - 1,
        "not migrated"
    );

    let empty = tempfile::tempdir().unwrap();
    let missing = common::process::command()
        .args(["v3", "report", "--data-dir", empty.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!missing.status.success());
    assert!(!empty.path().join("svcgate.db").exists(), "no store is created");
}
