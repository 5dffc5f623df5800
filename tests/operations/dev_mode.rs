//! `svcgate serve --dev` as a newcomer tries it: incidents work out of the box, the simulator's OAuth page chooses
//! the demo user, V3 answers name the gateway's address (not the simulator's), and `/favicon.ico` is answered by
//! svcgate. In front of a real server, `/favicon.ico` passes through to it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use std::time::{Duration, Instant};

use crate::common::alerts::{post_alert, AlertWorld};
use crate::common::dev::DevGateway;
use crate::common::{get, send, send_json};
use http::{Method, StatusCode};
use serde_json::json;

/// A `serve --dev` gateway in this process: its base URL, the demo user's token and project, and the demo alert
/// integration's address and key.
struct Dev {
    base: String,
    token: String,
    project_id: u64,
    alerts: (String, String),
    gateway: DevGateway,
}

impl Dev {
    async fn start() -> Self {
        let gateway = DevGateway::start().await;
        let base = gateway.base.clone();
        let (path, key) = gateway.demo_alerts.clone();
        Dev {
            alerts: (format!("{base}{path}"), key),
            base,
            token: gateway.demo.token.clone(),
            project_id: gateway.demo.project_id,
            gateway,
        }
    }

    fn api(&self, rest: &str) -> String {
        format!("{}/-/svcgate/api/projects/{}{rest}", self.base, self.project_id)
    }

    async fn stop(self) {
        self.gateway.stop().await;
    }
}

#[tokio::test]
async fn under_dev_an_alert_opens_an_incident_once_incidents_are_switched_on() {
    let dev = Dev::start().await;
    let settings = send_json(
        Method::PUT,
        &dev.api("/alert_settings"),
        &dev.token,
        json!({"create_incident": true}),
    )
    .await;
    assert_eq!(settings.status, StatusCode::OK, "{:?}", settings.body);
    let (url, key) = &dev.alerts;
    let answer = post_alert(
        url,
        key,
        &json!({"title": "Disk full", "severity": "high", "fingerprint": "disk"}),
    )
    .await;
    assert!(answer.status.is_success(), "{:?}", answer.body);
    let iid = answer.json()[0]["iid"].as_u64().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let detail = loop {
        let detail = get(&dev.api(&format!("/alerts/{iid}")), &dev.token).await.json();
        if detail["incident_iid"].as_u64().unwrap_or(0) > 0 {
            break detail;
        }
        assert!(
            Instant::now() < deadline,
            "no incident was opened within 20 s: {detail}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    // The settings page no longer warns that no incident can be created.
    let signed = common::sign_in(&dev.base, &dev.token).await;
    let page = send(
        Method::GET,
        &format!(
            "{}/-/svcgate/projects/{}/settings/operations",
            dev.base, dev.project_id
        ),
        &[("cookie", &signed.cookie())],
        None,
    )
    .await;
    let html = String::from_utf8_lossy(&page.body);
    assert!(!html.contains("no-service-token"), "{html}");
    assert!(detail["incident_iid"].as_u64().is_some());
    dev.stop().await;
}

#[tokio::test]
async fn under_dev_the_servers_sign_in_page_chooses_the_demo_user() {
    let dev = Dev::start().await;
    let started = send(
        Method::GET,
        &format!("{}/-/svcgate/oauth/start", dev.base),
        &[],
        None,
    )
    .await;
    assert_eq!(started.status, StatusCode::SEE_OTHER);
    let authorize = started.header("location").unwrap().to_owned();
    let page = send(Method::GET, &authorize, &[], None).await;
    assert_eq!(page.status, StatusCode::OK);
    let html = String::from_utf8_lossy(&page.body);
    assert!(
        html.contains(r#"<option value="demo" selected>demo</option>"#),
        "the demo user is not chosen at first: {html}"
    );
    assert!(
        html.contains(r#"<option value="root">root</option>"#),
        "the other users stay offered: {html}"
    );
    dev.stop().await;
}

#[tokio::test]
async fn under_dev_v3_answers_name_the_gateways_address() {
    let dev = Dev::start().await;
    let answer = get(&format!("{}/api/v3/projects", dev.base), &dev.token).await;
    assert_eq!(answer.status, StatusCode::OK);
    let projects = answer.json();
    let project = &projects.as_array().unwrap()[0];
    for field in ["web_url", "http_url_to_repo"] {
        let value = project[field].as_str().unwrap_or_default();
        assert!(
            value.starts_with(&format!("{}/", dev.base)),
            "{field} is `{value}`, not at the gateway's address {}",
            dev.base
        );
    }
    let user = get(&format!("{}/api/v3/user", dev.base), &dev.token).await.json();
    let web_url = user["web_url"].as_str().unwrap_or_default();
    assert!(
        web_url.starts_with(&dev.base),
        "the user's web_url is `{web_url}`"
    );
    dev.stop().await;
}

#[tokio::test]
async fn under_dev_svcgate_answers_the_favicon_itself() {
    let dev = Dev::start().await;
    let icon = send(Method::GET, &format!("{}/favicon.ico", dev.base), &[], None).await;
    assert_eq!(icon.status, StatusCode::OK);
    assert_eq!(icon.header("content-type"), Some("image/svg+xml"));
    assert!(String::from_utf8_lossy(&icon.body).starts_with("<svg"));
    let pages_icon = send(
        Method::GET,
        &format!("{}/-/svcgate/assets/icon.svg", dev.base),
        &[],
        None,
    )
    .await;
    assert_eq!(pages_icon.body, icon.body);
    dev.stop().await;
}

#[tokio::test]
async fn in_front_of_a_server_the_favicon_is_the_servers_and_the_pages_link_their_own() {
    let world = AlertWorld::new().await;
    world.sim.clear_requests();
    let icon = send(
        Method::GET,
        &format!("{}/favicon.ico", world.gateway.url()),
        &[],
        None,
    )
    .await;
    assert_eq!(icon.status, StatusCode::NOT_FOUND, "the simulator has none");
    assert!(
        world
            .sim
            .requests()
            .iter()
            .any(|request| request.path == "/favicon.ico"),
        "/favicon.ico was not passed through to the server"
    );
    let sign_in = send(
        Method::GET,
        &format!("{}/-/svcgate/sign_in", world.gateway.url()),
        &[],
        None,
    )
    .await;
    let html = String::from_utf8_lossy(&sign_in.body);
    assert!(
        html.contains(r#"<link rel="icon" href="/-/svcgate/assets/icon.svg" type="image/svg+xml">"#),
        "{html}"
    );
}
