//! Support for alert tests: a gateway in front of svc-sim with users of every role (svcgate registered there as
//! an OAuth application, so the pages sign in through it), and alert senders.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use http::{Method, StatusCode};
use serde_json::{json, Value};
use svc_sim::{DemoSeed, SimHandle};

use super::{send, send_json, Answer, TestGateway};

/// The simulator's admin token in alert tests.
pub const ADMIN: &str = "root-token";
/// svcgate's OAuth application in the simulator of alert tests (people sign in to the pages through it).
pub const OAUTH_CLIENT_ID: &str = "svcgate-alert-tests";
/// Its secret.
pub const OAUTH_CLIENT_SECRET: &str = "svcgate-alert-tests-secret";

/// A gateway, its simulator, the demo project, and a token for each role on it.
pub struct AlertWorld {
    pub sim: SimHandle,
    pub demo: DemoSeed,
    pub gateway: TestGateway,
    pub reporter: String,
    pub developer: String,
    pub maintainer: String,
}

impl AlertWorld {
    /// A world whose gateway configuration `tweak` may change.
    pub async fn with(tweak: impl FnOnce(&mut svcgate::config::RawConfig)) -> Self {
        let (sim, demo) = super::sim::with_demo().await;
        let gateway = TestGateway::start_with(&sim.url(), |raw| {
            raw.oauth_client_id = Some(OAUTH_CLIENT_ID.to_owned());
            raw.oauth_client_secret = Some(OAUTH_CLIENT_SECRET.to_owned());
            tweak(raw);
        })
        .await;
        sim.register_oauth_application(svc_sim::OAuthApplication {
            name: "svcgate".to_owned(),
            client_id: OAUTH_CLIENT_ID.to_owned(),
            secret: OAUTH_CLIENT_SECRET.to_owned(),
            redirect_uri: format!("{}/-/svcgate/oauth/callback", gateway.url()),
            scopes: vec!["read_api".to_owned()],
        });
        let Members {
            reporter,
            developer,
            maintainer,
        } = Members::add(&sim, &demo).await;
        AlertWorld {
            sim,
            demo,
            gateway,
            reporter,
            developer,
            maintainer,
        }
    }

    /// A world with the default configuration.
    pub async fn new() -> Self {
        Self::with(|_| {}).await
    }

    /// The management API address of the demo project.
    pub fn api(&self, rest: &str) -> String {
        format!(
            "{}/-/svcgate/api/projects/{}{rest}",
            self.gateway.url(),
            self.demo.project_id
        )
    }

    /// An active HTTP Endpoint reading the sender's `format`: its receiving address (ending in `.json`) and key.
    pub async fn endpoint(&self, format: &str) -> (String, String) {
        let created = self
            .integration(json!({"type": "http", "name": format, "payload_format": format, "active": true}))
            .await;
        (
            created["url"].as_str().unwrap().to_owned(),
            created["token"].as_str().unwrap().to_owned(),
        )
    }

    /// Creates an integration as the Maintainer and answers it (with `url` and `token`).
    pub async fn integration(&self, body: Value) -> Value {
        let answer = send_json(Method::POST, &self.api("/integrations"), &self.maintainer, body).await;
        assert_eq!(answer.status, StatusCode::CREATED, "{:?}", answer.body);
        answer.json()
    }
}

/// A token for each role on the demo project: a Reporter, a Developer and a Maintainer.
pub struct Members {
    pub reporter: String,
    pub developer: String,
    pub maintainer: String,
}

impl Members {
    /// Makes a user of each role on the simulator and adds them to the demo project.
    pub async fn add(sim: &SimHandle, demo: &DemoSeed) -> Self {
        let mut tokens = Vec::new();
        for (name, level) in [("reporter", 20), ("developer", 30), ("maintainer", 40)] {
            let (id, token) = sim.create_user(name, false);
            let added = send_json(
                Method::POST,
                &format!("{}/api/v4/projects/{}/members", sim.url(), demo.project_id),
                &demo.token,
                json!({"user_id": id, "access_level": level}),
            )
            .await;
            assert_eq!(added.status, StatusCode::CREATED, "{:?}", added.body);
            tokens.push(token);
        }
        Members {
            maintainer: tokens.pop().unwrap(),
            developer: tokens.pop().unwrap(),
            reporter: tokens.pop().unwrap(),
        }
    }
}

/// Every alert of the demo project (all statuses), newest first, as the Developer sees them.
pub async fn alerts(world: &AlertWorld) -> Vec<Value> {
    let listed = super::get(&world.api("/alerts?status=all"), &world.developer)
        .await
        .json();
    listed.as_array().cloned().unwrap_or_default()
}

/// Posts a JSON alert payload to `url` with `key`.
pub async fn post_alert(url: &str, key: &str, payload: &Value) -> Answer {
    send(
        Method::POST,
        url,
        &[("authorization", &format!("Bearer {key}"))],
        Some(("application/json", serde_json::to_vec(payload).unwrap())),
    )
    .await
}
