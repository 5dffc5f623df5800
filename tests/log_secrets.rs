//! No secret reaches the log at any level. svcgate's own subscriber (`telemetry::subscriber`, as `serve` installs
//! it) runs at `trace` while gateways on SQLite and on PostgreSQL (its URL carrying a password) serve a page
//! sign-in with a personal token, an OAuth sign-in through the server, a page form, an integration made and an
//! alert sent, and a V3 call with `private_token` in its query. Then every secret of those flows is looked for in
//! what was written: tokens, session cookies, CSRF tokens, integration keys, sealed values read back from the
//! stores, OAuth tokens, codes and verifiers as the server saw them, and the database password. An alert payload
//! may appear at `trace` at most. Its own test binary: it installs the process's global tracing subscriber and
//! reads all it writes, which other tests' gateways in the same process would write to.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use common::alerts::post_alert;
use common::oauth::{self, Jar};
use common::postgres::Postgres;
use common::{send, send_json, sign_in, TestGateway};
use http::{Method, StatusCode};
use serde_json::{json, Value};
use svc_sim::{OAuthApplication, SimHandle};
use tracing_subscriber::util::SubscriberInitExt;

const CLIENT_ID: &str = "svcgate-log-test";
const CLIENT_SECRET: &str = "client-secret-never-logged";
const KEY: &str = "5f0c6a8e2d4b1f3a9c7e5d2b0a8f6e4c2a0b9d8c7e6f5a4b3c2d1e0f9a8b7c6d";
const DATABASE_PASSWORD: &str = "database-password-never-logged";
const PAYLOAD_MARKER: &str = "payload-marker-9f3c";

/// Everything the subscriber writes.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'w> tracing_subscriber::fmt::MakeWriter<'w> for Captured {
    type Writer = Captured;
    fn make_writer(&'w self) -> Self::Writer {
        self.clone()
    }
}

/// Signs in through the server's OAuth provider (its authorize page reached through the gateway); answers the
/// browser's cookies.
async fn oauth_sign_in(gateway: &str, username: &str) -> Jar {
    let mut jar = Jar::default();
    let authorize = oauth::start(&mut jar, gateway, None).await;
    let (_, callback) = oauth::decide(&mut jar, &authorize, username, "approve").await;
    let signed_in = jar.send(Method::GET, &callback, None).await;
    assert_eq!(signed_in.status, StatusCode::OK, "{:?}", signed_in.body);
    jar
}

/// The secrets of the requests svcgate made to the server: bearer and private tokens, OAuth codes, verifiers,
/// refresh tokens and the client secret.
fn secrets_sent_to(sim: &SimHandle) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for request in sim.requests() {
        for (name, value) in &request.headers {
            match name.as_str() {
                "authorization" => drop(found.insert(value.rsplit(' ').next().unwrap().to_owned())),
                "private-token" => drop(found.insert(value.clone())),
                _ => {}
            }
        }
        for (name, value) in form_urlencoded::parse(&request.body) {
            if ["code", "code_verifier", "refresh_token", "client_secret", "token"].contains(&name.as_ref()) {
                found.insert(value.into_owned());
            }
        }
    }
    found
}

/// Runs every flow against a gateway with `tweak`; answers the secrets it saw.
async fn flows(
    tweak: impl FnOnce(&mut svcgate::config::RawConfig),
) -> (BTreeSet<String>, TestGateway, SimHandle) {
    let (sim, demo) = common::sim::with_demo().await;
    let gateway = TestGateway::start_with(&sim.url(), |raw| {
        raw.oauth_client_id = Some(CLIENT_ID.to_owned());
        raw.oauth_client_secret = Some(CLIENT_SECRET.to_owned());
        tweak(raw);
    })
    .await;
    sim.register_oauth_application(OAuthApplication {
        name: "svcgate".to_owned(),
        client_id: CLIENT_ID.to_owned(),
        secret: CLIENT_SECRET.to_owned(),
        redirect_uri: format!("{}/-/svcgate/oauth/callback", gateway.url()),
        scopes: vec!["read_api".to_owned()],
    });
    let base = gateway.url();
    let mut secrets = BTreeSet::from([demo.token.clone(), CLIENT_SECRET.to_owned()]);

    // A page session from a personal token, and a form of the pages.
    let signed_in = sign_in(&base, &demo.token).await;
    let cookie = signed_in.cookie();
    secrets.insert(cookie.split_once('=').unwrap().1.to_owned());
    let projects = send(
        Method::GET,
        &format!("{base}/-/svcgate/projects"),
        &[("cookie", &cookie)],
        None,
    )
    .await;
    assert_eq!(projects.status, StatusCode::OK);
    secrets.insert(projects.csrf());

    // An OAuth sign-in: its cookies, and what the server was sent.
    let jar = oauth_sign_in(&base, &demo.username).await;
    for value in jar.0.values() {
        secrets.insert(value.clone());
    }

    // An integration and an alert.
    let made = send_json(
        Method::POST,
        &format!("{base}/-/svcgate/api/projects/{}/integrations", demo.project_id),
        &demo.token,
        json!({"type": "generic", "active": true}),
    )
    .await;
    assert_eq!(made.status, StatusCode::CREATED);
    let made = made.json();
    let key = made["token"].as_str().unwrap().to_owned();
    secrets.insert(key.clone());
    let alert = post_alert(
        made["url"].as_str().unwrap(),
        &key,
        &json!({"title": "disk full", "detail": PAYLOAD_MARKER}),
    )
    .await;
    assert_eq!(alert.status, StatusCode::OK);

    // A V3 call with the token in its query.
    let v3 = send(
        Method::GET,
        &format!("{base}/api/v3/projects?private_token={}", demo.token),
        &[],
        None,
    )
    .await;
    assert_eq!(v3.status, StatusCode::OK);

    secrets.extend(secrets_sent_to(&sim));
    (secrets, gateway, sim)
}

/// The sealed values a store keeps: integration keys, page sessions' tokens.
async fn sealed_in_sqlite(data_dir: &std::path::Path) -> BTreeSet<String> {
    let connection = rusqlite::Connection::open(data_dir.join("svcgate.db")).unwrap();
    let mut sealed = BTreeSet::new();
    for query in [
        "SELECT sealed_token FROM page_sessions",
        "SELECT sealed_refresh_token FROM page_sessions WHERE sealed_refresh_token IS NOT NULL",
        "SELECT access_token FROM sessions",
    ] {
        let mut statement = connection.prepare(query).unwrap();
        let values = statement.query_map([], |row| row.get::<_, String>(0)).unwrap();
        sealed.extend(values.map(Result::unwrap));
    }
    sealed
}

async fn sealed_in_postgres(url: &str) -> BTreeSet<String> {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.unwrap();
    let task = tokio::spawn(connection);
    let mut sealed = BTreeSet::new();
    for query in [
        "SELECT sealed_token FROM page_sessions",
        "SELECT sealed_refresh_token FROM page_sessions WHERE sealed_refresh_token IS NOT NULL",
    ] {
        for row in client.query(query, &[]).await.unwrap() {
            sealed.insert(row.get::<_, String>(0));
        }
    }
    drop(client);
    drop(task.await);
    sealed
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_secret_reaches_the_log_at_trace_on_either_store() {
    let captured = Captured::default();
    svcgate::telemetry::subscriber(
        svcgate::telemetry::LogFormat::Json,
        // The simulator's own lines are the test's, not svcgate's.
        "trace,svc_sim=off",
        captured.clone(),
        false,
    )
    .try_init()
    .unwrap();

    let (mut secrets, sqlite, _sim) = flows(|_| {}).await;
    secrets.extend(sealed_in_sqlite(&sqlite.data_dir).await);

    let cluster = tokio::task::spawn_blocking(Postgres::start).await.unwrap();
    let plain = cluster.database("svcgate").await;
    let with_password = plain.replacen("svcgate@", &format!("svcgate:{DATABASE_PASSWORD}@"), 1);
    let (postgres_secrets, _postgres, _sim) = flows(|raw| {
        raw.database_url = Some(with_password);
        raw.secret_key = Some(KEY.to_owned());
    })
    .await;
    secrets.extend(postgres_secrets);
    secrets.extend(sealed_in_postgres(&plain).await);
    secrets.insert(DATABASE_PASSWORD.to_owned());

    let log = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    let lines: Vec<Value> = log
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert!(
        lines.len() > 100,
        "the log at trace is nearly empty: {} lines",
        lines.len()
    );
    let secrets: Vec<&String> = secrets.iter().filter(|secret| secret.len() >= 8).collect();
    assert!(
        secrets.len() >= 10,
        "too few secrets found to look for: {secrets:?}"
    );
    for secret in secrets {
        for line in log.lines() {
            assert!(
                !line.contains(secret.as_str()),
                "a secret ({secret}) in the log: {line}"
            );
        }
    }
    for line in &lines {
        if line.to_string().contains(PAYLOAD_MARKER) {
            assert_eq!(line["level"], "TRACE", "an alert payload above trace: {line}");
        }
    }
}
