//! Serving: the accept loop, one task per connection (HTTP/1.1, or HTTP/2 with prior knowledge), reading each
//! request body under a size limit, recording it, dispatching it, and graceful shutdown.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{HeaderName, HeaderValue, CONTENT_TYPE};
use http::{Request, Response};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use crate::dispatch::{dispatch, RawRequest};
use crate::error::ApiError;
use crate::handle::{Shared, SimHandle};
use crate::reply::{Reply, ReplyBody};
use crate::SimOptions;

/// The request counts, `{"requests": N, "graphql": M}`: not counted itself, not delayed.
const STATS_PATH: &str = "/-/sim/stats";

/// Request bodies above this size are refused with 413; the simulator buffers whole bodies.
const MAX_BODY: usize = 64 * 1024 * 1024;

/// Starts the simulator on `listener`; `root_token` authenticates as the root administrator (user 1). The other
/// options keep their defaults (see [`SimOptions`]).
pub async fn spawn(listener: TcpListener, root_token: &str) -> std::io::Result<SimHandle> {
    spawn_with(
        listener,
        SimOptions {
            root_token: root_token.to_string(),
            ..SimOptions::default()
        },
    )
    .await
}

/// Starts the simulator on `listener` with `options`.
pub async fn spawn_with(listener: TcpListener, options: SimOptions) -> std::io::Result<SimHandle> {
    let addr = listener.local_addr()?;
    let base_url = options
        .external_url
        .clone()
        .unwrap_or_else(|| format!("http://{addr}"));
    let shared = Arc::new(Shared::new(&base_url, &options));
    if options.bench_seed {
        crate::bench::seed_bench(&mut crate::handle::lock(&shared.store));
    }
    let (tx, rx) = watch::channel(false);
    tokio::spawn(accept_loop(listener, shared.clone(), rx));
    tracing::info!(%addr, "svc-sim listening");
    Ok(SimHandle::new(addr, shared, tx))
}

/// Resolves when shutdown is requested; never when every handle is dropped without asking.
async fn stopped(rx: &mut watch::Receiver<bool>) {
    if rx.wait_for(|stop| *stop).await.is_err() {
        std::future::pending::<()>().await;
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>, mut rx: watch::Receiver<bool>) {
    loop {
        tokio::select! {
            () = stopped(&mut rx) => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    tokio::spawn(serve_connection(stream, shared.clone(), rx.clone()));
                }
                Err(err) => {
                    tracing::warn!(%err, "accept failed");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
        }
    }
    tracing::info!("svc-sim stopped accepting");
}

async fn serve_connection(stream: TcpStream, shared: Arc<Shared>, mut rx: watch::Receiver<bool>) {
    let service = service_fn(move |req| {
        let shared = shared.clone();
        async move { Ok::<_, Infallible>(handle(&shared, req).await) }
    });
    let builder = auto::Builder::new(TokioExecutor::new());
    let conn = builder.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(conn);
    let mut draining = false;
    loop {
        tokio::select! {
            result = conn.as_mut() => {
                if let Err(err) = result {
                    tracing::debug!(%err, "connection ended with an error");
                }
                break;
            }
            () = stopped(&mut rx), if !draining => {
                draining = true;
                conn.as_mut().graceful_shutdown();
            }
        }
    }
}

async fn handle(shared: &Arc<Shared>, req: Request<Incoming>) -> Response<Full<Bytes>> {
    let (parts, body) = req.into_parts();
    let body = match Limited::new(body, MAX_BODY).collect().await {
        Ok(collected) => collected.to_bytes().to_vec(),
        Err(err) if err.is::<http_body_util::LengthLimitError>() => return respond(Err(ApiError::TooLarge)),
        Err(_) => {
            return respond(Err(ApiError::BadRequest(
                "400 (Bad request) unreadable body".into(),
            )))
        }
    };
    let raw = RawRequest {
        method: parts.method.clone(),
        path: parts.uri.path().to_string(),
        query: parts.uri.query().map(str::to_string),
        headers: parts
            .headers
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_ascii_lowercase(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body,
    };
    if raw.path == STATS_PATH && raw.method == http::Method::GET {
        return respond(Ok(Reply::ok(
            serde_json::to_value(shared.stats()).unwrap_or_default(),
        )));
    }
    shared.record(&raw);
    if !shared.delay.is_zero() && raw.path.starts_with("/api/") {
        // Before the store lock, so that concurrent requests wait side by side, as on a slow backend.
        tokio::time::sleep(shared.delay).await;
    }
    let authority = parts.uri.authority().map(|a| a.to_string());
    let result = if raw.path == crate::graphql::PATH {
        match &shared.graphql {
            Some(schema) => crate::graphql::serve(shared, schema, &raw).await,
            None => Err(ApiError::NoRoute),
        }
    } else {
        dispatch(&shared.store, &shared.router, &raw, authority.as_deref())
    };
    let status = match &result {
        Ok(reply) => reply.status,
        Err(err) => err.status(),
    };
    tracing::debug!(method = %raw.method, path = %raw.path, status = status.as_u16(), "request");
    respond(result)
}

fn respond(result: Result<Reply, ApiError>) -> Response<Full<Bytes>> {
    let reply = result.unwrap_or_else(|err| Reply::json(err.status(), err.body()));
    let (content_type, bytes) = match reply.body {
        ReplyBody::Empty => (None, Vec::new()),
        ReplyBody::Json(value) => (
            Some("application/json"),
            serde_json::to_vec(&value).unwrap_or_default(),
        ),
        ReplyBody::Bytes(ct, data) => (Some(ct), data),
    };
    let mut response = Response::new(Full::new(Bytes::from(bytes)));
    *response.status_mut() = reply.status;
    let headers = response.headers_mut();
    if let Some(ct) = content_type {
        headers.insert(CONTENT_TYPE, HeaderValue::from_static(ct));
    }
    for (name, value) in reply.headers {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(&value),
        ) {
            headers.insert(name, value);
        }
    }
    response
}
