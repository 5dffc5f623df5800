//! The gateway's own routes under `/-/svcgate/`: liveness, readiness and metrics.
//!
//! It is handed the three things it reports on ([`Probes`]) rather than the whole gateway, so that it depends on
//! the store, the backend client and the metrics, not on the server that dispatches to it.

use std::time::Duration;

use http::{Method, Response, StatusCode};
use serde_json::json;

use crate::body::{self, json_response, Body};
use crate::error::GatewayError;
use crate::store::Store;
use crate::telemetry::Metrics;
use crate::upstream::Upstream;

/// The prefix of every route the gateway answers itself.
pub const PREFIX: &str = "/-/svcgate/";

/// Whether a path is one of the gateway's own operational routes (health, readiness, metrics).
pub fn is_internal(path: &str) -> bool {
    matches!(path.strip_prefix(PREFIX), Some("health" | "ready" | "metrics"))
}

/// What the operational routes report on: the store and the backend for readiness, the metrics to expose.
#[derive(Clone, Copy)]
pub struct Probes<'a> {
    /// The store, pinged for readiness.
    pub store: &'a dyn Store,
    /// The backend client, asked for the backend's version for readiness.
    pub upstream: &'a Upstream,
    /// The metrics served at `metrics`.
    pub metrics: &'a Metrics,
}

/// How long readiness waits for the backend.
const READY_BACKEND_TIMEOUT: Duration = Duration::from_secs(2);

/// Answers a request under [`PREFIX`].
pub async fn handle(probes: Probes<'_>, method: &Method, path: &str) -> Response<Body> {
    let route = path.strip_prefix(PREFIX).unwrap_or("");
    match (method, route) {
        (&Method::GET | &Method::HEAD, "health") => json_response(StatusCode::OK, &json!({ "status": "ok" })),
        (&Method::GET | &Method::HEAD, "ready") => ready(probes).await,
        (&Method::GET, "metrics") => {
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

/// Ready when the store answers and the backend answers anything at all (even 401) within a short timeout.
async fn ready(probes: Probes<'_>) -> Response<Body> {
    let store = match probes.store.ping().await {
        Ok(()) => "ok".to_owned(),
        Err(error) => format!("failing: {error}"),
    };
    let backend = match backend_reachable(probes).await {
        Ok(()) => "ok".to_owned(),
        Err(message) => format!("failing: {message}"),
    };
    let status = if store == "ok" && backend == "ok" {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    json_response(status, &json!({ "store": store, "backend": backend }))
}

async fn backend_reachable(probes: Probes<'_>) -> Result<(), String> {
    let uri = probes
        .upstream
        .uri("/api/v4/version")
        .map_err(|error| error.to_string())?;
    let mut request = http::Request::new(body::empty());
    *request.uri_mut() = uri;
    match tokio::time::timeout(READY_BACKEND_TIMEOUT, probes.upstream.send(request)).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(error)) => Err(error.to_string()),
        Err(_) => Err(format!("no answer within {READY_BACKEND_TIMEOUT:?}")),
    }
}
