//! The gateway's own routes under `/-/svcgate/`: liveness, readiness and metrics.
//!
//! It is handed the things it reports on ([`Probes`]) rather than the whole gateway, so that it depends on the
//! store, the process's [`Health`] and the metrics, not on the server that dispatches to it.
//!
//! Readiness is what a load balancer reads to decide whether to send this replica requests, so it depends only on
//! what this replica can fix by being taken out: the store answering, and the process not shutting down. The
//! backend is shared by every replica, so its failure would take them all out at once and stop alert intake,
//! which does not need it; its state is reported in the answer and as `svcgate_backend_up`, from a probe that
//! readiness and metrics requests start in the background at most every [`BACKEND_PROBE_INTERVAL`] and never wait
//! for (so a balancer's probe timeout never depends on the backend, and an idle gateway sends it nothing).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use http::{Method, Response, StatusCode};
use serde_json::json;

use crate::alerts::normalized::Severity;
use crate::backend::upstream::Upstream;
use crate::http::body::{self, json_response, Body};
use crate::http::error::GatewayError;
use crate::rewrite::usage::UsageRecorder;
use crate::store::Store;
use crate::telemetry::Metrics;

/// The prefix of every route the gateway answers itself.
pub const PREFIX: &str = "/-/svcgate/";

/// Whether a path is one of the gateway's own operational routes (health, readiness, metrics).
pub fn is_internal(path: &str) -> bool {
    matches!(path.strip_prefix(PREFIX), Some("health" | "ready" | "metrics"))
}

/// What the operational routes report on: the store and the process's health for readiness, the metrics to expose.
#[derive(Clone, Copy)]
pub struct Probes<'a> {
    /// The store, pinged for readiness.
    pub store: &'a dyn Store,
    /// Whether the process is draining, and the backend's last probe.
    pub health: &'a Arc<Health>,
    /// The backend client, for the backend probe.
    pub upstream: &'a Arc<Upstream>,
    /// The metrics served at `metrics`.
    pub metrics: &'a Arc<Metrics>,
    /// The V3 usage counts, whose active clients are read from the store at each scrape.
    pub usage: &'a UsageRecorder,
    /// Longest a scrape waits for the counts it reads from the store (`metrics_store_timeout`).
    pub store_timeout: Duration,
    /// Longest readiness waits for the store (`ready_timeout`).
    pub ready_timeout: Duration,
}

/// How long one backend probe waits for an answer.
const BACKEND_PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// The most of the probe's answer body that is read (`/api/v4/version` answers a few dozen bytes).
const PROBE_BODY_BYTES: usize = 64 << 10;

/// How often, at most, the backend is probed.
pub const BACKEND_PROBE_INTERVAL: Duration = Duration::from_secs(5);

/// The process's own state as readiness reports it: shared by the server (which starts draining on SIGTERM), the
/// backend probe and the readiness route.
#[derive(Debug, Default)]
pub struct Health {
    draining: AtomicBool,
    backend: Mutex<BackendState>,
}

/// The backend probe's last finding, and whether one is under way.
#[derive(Debug, Default)]
struct BackendState {
    /// `ok` or `failing: …`; empty before the first probe.
    text: String,
    probed_at: Option<Instant>,
    probing: bool,
}

impl Health {
    /// A fresh state: not draining, the backend not probed yet.
    pub fn new() -> Arc<Self> {
        Arc::new(Health::default())
    }

    /// Marks the process as shutting down: readiness answers 503 from now on.
    pub fn start_draining(&self) {
        self.draining.store(true, Ordering::SeqCst);
    }

    /// Whether the process is shutting down.
    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }

    /// The backend's state as the last probe found it: `ok`, `failing: …`, or `not probed yet`.
    pub fn backend(&self) -> String {
        let state = self.state();
        if state.text.is_empty() {
            "not probed yet".to_owned()
        } else {
            state.text.clone()
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, BackendState> {
        self.backend.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts a backend probe in the background unless one is under way or the last one is recent (within
    /// [`BACKEND_PROBE_INTERVAL`]); never waits for it. Any answer at all (even 401) within a short timeout
    /// counts as up; the finding goes to [`Health::backend`] and the `svcgate_backend_up` gauge.
    pub fn refresh_backend(self: &Arc<Self>, upstream: &Arc<Upstream>, metrics: &Arc<Metrics>) {
        {
            let mut state = self.state();
            let recent = state
                .probed_at
                .is_some_and(|at| at.elapsed() < BACKEND_PROBE_INTERVAL);
            if state.probing || recent {
                return;
            }
            state.probing = true;
        }
        let (health, upstream, metrics) = (Arc::clone(self), Arc::clone(upstream), Arc::clone(metrics));
        tokio::spawn(async move {
            let (text, up) = match backend_reachable(&upstream).await {
                Ok(()) => ("ok".to_owned(), 1),
                Err(message) => (format!("failing: {message}"), 0),
            };
            metrics.backend_up.set(up);
            let mut state = health.state();
            if state.text != text {
                tracing::info!(backend = %text, "backend state changed");
            }
            *state = BackendState {
                text,
                probed_at: Some(Instant::now()),
                probing: false,
            };
        });
    }
}

/// Answers a request under [`PREFIX`].
pub async fn handle(probes: Probes<'_>, method: &Method, path: &str) -> Response<Body> {
    let route = path.strip_prefix(PREFIX).unwrap_or("");
    match (method, route) {
        (&Method::GET | &Method::HEAD, "health") => json_response(StatusCode::OK, &json!({ "status": "ok" })),
        (&Method::GET | &Method::HEAD, "ready") => {
            probes.health.refresh_backend(probes.upstream, probes.metrics);
            ready(probes).await
        }
        (&Method::GET, "metrics") => {
            probes.health.refresh_backend(probes.upstream, probes.metrics);
            probes
                .metrics
                .refresh_from_store(
                    probes.store,
                    probes.store_timeout,
                    Severity::ALL.map(Severity::as_str),
                    probes.usage.active_clients(),
                )
                .await;
            let mut response = Response::new(body::full(probes.metrics.encode()));
            response.headers_mut().insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
            );
            response
        }
        (_, "health" | "ready" | "metrics") => GatewayError::MethodNotAllowed("GET, HEAD").into_response(),
        _ => GatewayError::NoRoute.into_response(),
    }
}

/// Ready when the store can take an ordinary alert now (asked afresh at each check, within `ready_timeout`) and
/// the process is not draining. The backend's last probe is reported beside, without deciding the status.
async fn ready(probes: Probes<'_>) -> Response<Body> {
    let store = match tokio::time::timeout(probes.ready_timeout, probes.store.ping()).await {
        Ok(Ok(())) => "ok".to_owned(),
        Ok(Err(error)) => format!("failing: {error}"),
        Err(_) => format!(
            "failing: no answer within {:?} (ready_timeout)",
            probes.ready_timeout
        ),
    };
    let draining = probes.health.is_draining();
    let status = if store == "ok" && !draining {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    json_response(
        status,
        &json!({ "store": store, "draining": draining, "backend": probes.health.backend() }),
    )
}

async fn backend_reachable(upstream: &Upstream) -> Result<(), String> {
    let uri = upstream
        .uri("/api/v4/version")
        .map_err(|error| error.to_string())?;
    let mut request = http::Request::new(body::empty());
    *request.uri_mut() = uri;
    let deadline = tokio::time::Instant::now() + BACKEND_PROBE_TIMEOUT;
    let answer = match tokio::time::timeout_at(deadline, upstream.send(request)).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(error)) => return Err(error.to_string()),
        Err(_) => return Err(format!("no answer within {BACKEND_PROBE_TIMEOUT:?}")),
    };
    // The head alone says the backend is up. Its small body is read to the end as well, within what is left of the
    // probe's time (a failure or a timeout there changes nothing), so that the connection goes back to the pool: a
    // body dropped unread closes it, and every probe would then cost the backend a new connection (with a TLS
    // backend, a handshake).
    drop(tokio::time::timeout_at(deadline, upstream.read_body(answer.into_body(), PROBE_BODY_BYTES)).await);
    Ok(())
}
