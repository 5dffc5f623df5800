//! A programmable origin server for passthrough tests: echoes what it received, streams on demand, sleeps, and
//! counts connections.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{combinators::BoxBody, BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;
use tokio::sync::Notify;

/// The origin's handle: its address, the connection and request counts, and the gate that releases `/gated`.
#[derive(Clone)]
pub struct Origin {
    pub address: SocketAddr,
    pub connections: Arc<AtomicUsize>,
    pub requests: Arc<AtomicUsize>,
    pub gate: Arc<Notify>,
}

type OriginBody = BoxBody<Bytes, Infallible>;

const CHUNK: usize = 256 * 1024;

fn bytes_body(total: u64) -> OriginBody {
    let chunk = Bytes::from(vec![b'x'; CHUNK]);
    let stream = futures_util::stream::unfold(total, move |left| {
        let chunk = chunk.clone();
        async move {
            if left == 0 {
                return None;
            }
            let size = left.min(CHUNK as u64);
            Some((
                Ok::<_, Infallible>(Frame::data(chunk.slice(..size as usize))),
                left - size,
            ))
        }
    });
    StreamBody::new(stream).boxed()
}

async fn answer(origin: Origin, request: Request<Incoming>) -> Response<OriginBody> {
    let path = request.uri().path().to_owned();
    let query = request.uri().query().unwrap_or("").to_owned();
    if path == "/sleep" {
        tokio::time::sleep(Duration::from_secs(3)).await;
        return Response::new(Full::new(Bytes::from_static(b"late")).boxed());
    }
    if path == "/bytes" {
        let total: u64 = query.trim_start_matches("n=").parse().unwrap_or(0);
        return Response::new(bytes_body(total));
    }
    if path == "/count" {
        let mut body = request.into_body();
        let mut total: u64 = 0;
        while let Some(frame) = body.frame().await {
            if let Ok(data) = frame.unwrap().into_data() {
                total += data.len() as u64;
            }
        }
        return Response::new(Full::new(Bytes::from(total.to_string())).boxed());
    }
    if path == "/gated" {
        let gate = Arc::clone(&origin.gate);
        let stream = futures_util::stream::unfold(0u8, move |step| {
            let gate = Arc::clone(&gate);
            async move {
                match step {
                    0 => Some((Ok::<_, Infallible>(Frame::data(Bytes::from_static(b"first;"))), 1)),
                    1 => {
                        gate.notified().await;
                        Some((Ok(Frame::data(Bytes::from_static(b"rest"))), 2))
                    }
                    _ => None,
                }
            }
        });
        return Response::new(StreamBody::new(stream).boxed());
    }
    let headers: serde_json::Map<String, serde_json::Value> = request
        .headers()
        .iter()
        .map(|(name, value)| {
            (
                name.as_str().to_owned(),
                serde_json::Value::from(value.to_str().unwrap_or("").to_owned()),
            )
        })
        .collect();
    let target = request
        .uri()
        .path_and_query()
        .map(|target| target.as_str().to_owned())
        .unwrap_or_default();
    let method = request.method().to_string();
    let body = request.into_body().collect().await.unwrap().to_bytes();
    let echo = serde_json::json!({
        "method": method,
        "target": target,
        "headers": headers,
        "body": String::from_utf8_lossy(&body),
    });
    let mut response = Response::new(Full::new(Bytes::from(echo.to_string())).boxed());
    response
        .headers_mut()
        .insert("content-type", http::HeaderValue::from_static("application/json"));
    response
        .headers_mut()
        .insert("x-origin", http::HeaderValue::from_static("yes"));
    response
}

impl Origin {
    /// Starts the origin on 127.0.0.1:0.
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin = Origin {
            address: listener.local_addr().unwrap(),
            connections: Arc::new(AtomicUsize::new(0)),
            requests: Arc::new(AtomicUsize::new(0)),
            gate: Arc::new(Notify::new()),
        };
        let serving = origin.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                serving.connections.fetch_add(1, Ordering::SeqCst);
                let origin = serving.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |request| {
                        let origin = origin.clone();
                        origin.requests.fetch_add(1, Ordering::SeqCst);
                        async move { Ok::<_, Infallible>(answer(origin, request).await) }
                    });
                    let _ = auto::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        origin
    }

    /// The origin's base URL.
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }
}
