//! Helpers shared by the simulator's end-to-end tests: start a simulator on 127.0.0.1:0 and call it with a hyper
//! client.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use bytes::Bytes;
use http::{HeaderMap, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;
use svc_sim::SimHandle;

/// The simulator's root token.
pub const ROOT: &str = "root-token";

/// A response: status, headers, body parsed as JSON (`Null` when it is not) and the raw bytes.
pub struct Resp {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Value,
    pub raw: Vec<u8>,
}

/// Starts a simulator on a free loopback port.
pub async fn start() -> SimHandle {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    svc_sim::spawn(listener, ROOT).await.unwrap()
}

/// Sends `body` with an optional token and content type.
pub async fn send(
    sim: &SimHandle,
    method: Method,
    path: &str,
    token: Option<&str>,
    content_type: Option<&str>,
    body: Vec<u8>,
) -> Resp {
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let mut req = Request::builder()
        .method(method)
        .uri(format!("{}{path}", sim.url()));
    if let Some(t) = token {
        req = req.header("PRIVATE-TOKEN", t);
    }
    if let Some(ct) = content_type {
        req = req.header("content-type", ct);
    }
    let resp = client
        .request(req.body(Full::new(Bytes::from(body))).unwrap())
        .await
        .unwrap();
    let status = resp.status();
    let headers = resp.headers().clone();
    let raw = resp.into_body().collect().await.unwrap().to_bytes().to_vec();
    let body = serde_json::from_slice(&raw).unwrap_or(Value::Null);
    Resp {
        status,
        headers,
        body,
        raw,
    }
}

/// Sends an optional JSON body with an optional token.
pub async fn call(
    sim: &SimHandle,
    method: Method,
    path: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> Resp {
    match body {
        Some(b) => {
            send(
                sim,
                method,
                path,
                token,
                Some("application/json"),
                serde_json::to_vec(&b).unwrap(),
            )
            .await
        }
        None => send(sim, method, path, token, None, Vec::new()).await,
    }
}

/// One step of a sequence checked by status alone: `"METHOD /path"`, token, JSON body, the status expected.
pub type Step<'a> = (String, Option<&'a str>, Option<Value>, u16);

/// Sends `steps` in order and checks that each answers its status; a failure names the step (its place in the
/// table, request and token) and the answer's body.
pub async fn expect_statuses(sim: &SimHandle, steps: Vec<Step<'_>>) {
    for (index, (request, token, body, status)) in steps.into_iter().enumerate() {
        let (method, path) = request.split_once(' ').expect("a step is \"METHOD /path\"");
        let method = Method::from_bytes(method.as_bytes()).expect("a step's method");
        let r = call(sim, method, path, token, body).await;
        assert_eq!(
            r.status.as_u16(),
            status,
            "step {index}: {request} with token {token:?}: {}",
            r.body
        );
    }
}

/// A response header as a string (empty when absent).
pub fn header(r: &Resp, name: &str) -> String {
    r.headers
        .get(name)
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default()
}

/// Calls the simulator and asserts a 2xx answer; returns its JSON body.
pub async fn ok(
    sim: &svc_sim::SimHandle,
    method: Method,
    path: &str,
    token: &str,
    body: Option<Value>,
) -> Value {
    let r = call(sim, method.clone(), path, Some(token), body).await;
    assert!(r.status.is_success(), "{method} {path}: {} {}", r.status, r.body);
    r.body
}
