//! The one test harness of every integration suite (`tests/*/main.rs` and the binaries of their own). Each thing a
//! test starts has one way to start it here, and no test file copies it:
//!
//! - svcgate in this process, on a real socket in front of any backend: [`TestGateway`];
//! - `svcgate serve --dev` in this process: [`dev::DevGateway`];
//! - svcgate as a process: [`process::command`] for the binary, [`replicas::Replica`] for `serve` waited on
//!   until it listens, [`process::signal`] to stop it as an orchestrator does;
//! - svc-sim in this process: [`sim`]; with the alert API's users and an integration: [`alerts::AlertWorld`];
//!   with a gateway that counts V3 usage until a report asks, and that report: [`usage`];
//! - the programmable origin for passthrough: [`origin::Origin`];
//! - PostgreSQL, a throwaway cluster: [`postgres::Postgres`];
//! - Prometheus and Alertmanager: [`prometheus`], [`alertmanager`] (both through [`go_server`]);
//! - Uptime Kuma, set up through its Python client: [`uptime_kuma`];
//! - a headless Chromium over WebDriver: [`browser`];
//! - a small HTTP client ([`send`], [`get`], [`send_json`], [`sign_in`]) and a deadline ([`within`]).
//!
//! Servers a single test fakes for itself (a stalling backend, a WebSocket echo, git's CGI, proxies that hold or
//! fail calls) stay in that test.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod alertmanager;
pub mod alerts;
pub mod browser;
pub mod dev;
pub mod go_server;
pub mod oauth;
pub mod origin;
pub mod postgres;
pub mod process;
pub mod prometheus;
pub mod replicas;
pub mod sim;
pub mod uptime_kuma;
pub mod usage;

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use svcgate::config::{Config, RawConfig};
use tokio::sync::oneshot;

/// A gateway running on 127.0.0.1 for one test.
pub struct TestGateway {
    pub address: SocketAddr,
    pub data_dir: PathBuf,
    stop: Option<oneshot::Sender<()>>,
    done: Option<tokio::task::JoinHandle<()>>,
    _temporary: Option<tempfile::TempDir>,
}

impl TestGateway {
    /// Starts a gateway in front of `backend` with its own store directory.
    pub async fn start(backend: &str) -> Self {
        Self::start_with(backend, |_| {}).await
    }

    /// Starts a gateway in front of `backend`, with `tweak` applied to the file-level configuration.
    pub async fn start_with(backend: &str, tweak: impl FnOnce(&mut RawConfig)) -> Self {
        let temporary = tempfile::tempdir().unwrap();
        let data_dir = temporary.path().to_path_buf();
        let mut gateway = Self::start_in(backend, &data_dir, tweak).await;
        gateway._temporary = Some(temporary);
        gateway
    }

    /// Starts a gateway keeping its store in `data_dir` (to test restarts).
    pub async fn start_in(
        backend: &str,
        data_dir: &std::path::Path,
        tweak: impl FnOnce(&mut RawConfig),
    ) -> Self {
        let mut raw = RawConfig {
            listen: Some("127.0.0.1:0".to_owned()),
            backend: Some(backend.to_owned()),
            data_dir: Some(data_dir.to_path_buf()),
            shutdown_grace: Some("5s".to_owned()),
            ..RawConfig::default()
        };
        tweak(&mut raw);
        let config = Config::from_raw(raw).unwrap();
        let running = svcgate::app::prepare(&config).await.unwrap();
        let address = running.address;
        let (stop, stopped) = oneshot::channel::<()>();
        let done = tokio::spawn(async move {
            running
                .serve_until(&config, async {
                    let _ = stopped.await;
                })
                .await
                .unwrap();
        });
        TestGateway {
            address,
            data_dir: data_dir.to_path_buf(),
            stop: Some(stop),
            done: Some(done),
            _temporary: None,
        }
    }

    /// The gateway's base URL.
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Asks the gateway to stop (as SIGTERM would) without waiting for it; [`TestGateway::stop`] waits.
    pub fn begin_stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }

    /// Asks the gateway to stop and waits until it has drained.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(done) = self.done.take() {
            done.await.unwrap();
        }
    }
}

/// A response read whole.
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Answer {
    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|error| panic!("not JSON ({error}): {}", String::from_utf8_lossy(&self.body)))
    }

    /// A header as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|value| value.to_str().ok())
    }
}

impl Answer {
    /// The `name=value` part of the `Set-Cookie` header.
    pub fn cookie(&self) -> String {
        let set = self.header("set-cookie").expect("a Set-Cookie header");
        set.split(';').next().unwrap_or(set).to_owned()
    }

    /// The CSRF token of the page's forms.
    pub fn csrf(&self) -> String {
        let html = String::from_utf8_lossy(&self.body);
        let start = html.find("name=\"csrf\" value=\"").expect("a CSRF field") + 19;
        html[start..start + 32].to_owned()
    }
}

/// Signs in to the pages of the gateway at `base` with `token`: fetches the form (its CSRF cookie and token) and
/// posts it. The answer is the sign-in's own (a 303 that sets the session cookie when the token is good).
pub async fn sign_in(base: &str, token: &str) -> Answer {
    let form = send(Method::GET, &format!("{base}/-/svcgate/sign_in"), &[], None).await;
    send(
        Method::POST,
        &format!("{base}/-/svcgate/sign_in"),
        &[("cookie", &form.cookie())],
        Some((
            "application/x-www-form-urlencoded",
            format!("csrf={}&token={token}", form.csrf()).into_bytes(),
        )),
    )
    .await
}

/// Sends one request with optional headers and body and reads the answer whole.
pub async fn send(
    method: Method,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<(&str, Vec<u8>)>,
) -> Answer {
    let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new()).build_http();
    let mut request = Request::builder().method(method).uri(url);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let payload = match body {
        Some((content_type, bytes)) => {
            request = request.header("content-type", content_type);
            Bytes::from(bytes)
        }
        None => Bytes::new(),
    };
    let response = client
        .request(request.body(Full::new(payload)).unwrap())
        .await
        .unwrap();
    let (parts, body) = response.into_parts();
    let body = body.collect().await.unwrap().to_bytes();
    Answer {
        status: parts.status,
        headers: parts.headers,
        body,
    }
}

/// `GET` with a token.
pub async fn get(url: &str, token: &str) -> Answer {
    send(Method::GET, url, &[("private-token", token)], None).await
}

/// Sends a JSON body with a token.
pub async fn send_json(method: Method, url: &str, token: &str, body: serde_json::Value) -> Answer {
    send(
        method,
        url,
        &[("private-token", token)],
        Some(("application/json", serde_json::to_vec(&body).unwrap())),
    )
    .await
}

/// Runs a future with a deadline, failing the test with `what` if it is missed.
pub async fn within<T>(seconds: u64, what: &str, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(seconds), future)
        .await
        .unwrap_or_else(|_| panic!("timed out: {what}"))
}
