//! Helpers shared by the simulator's end-to-end tests: start a simulator on 127.0.0.1:0, call it with a hyper
//! client, and make the projects, groups and members a test starts from (what differed between tests, such as the
//! owner or the visibility, is a parameter).
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

/// Starts a simulator with `options` on a free loopback port.
pub async fn start_with(options: svc_sim::SimOptions) -> SimHandle {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    svc_sim::spawn_with(listener, options).await.unwrap()
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

/// Creates a project named `name` as the user of `token`, with a README on `main`, at `visibility` (the
/// simulator's default when `None`); returns it.
pub async fn project(sim: &svc_sim::SimHandle, token: &str, name: &str, visibility: Option<&str>) -> Value {
    let mut body = serde_json::json!({"name": name, "initialize_with_readme": true});
    if let Some(visibility) = visibility {
        body["visibility"] = Value::from(visibility);
    }
    ok(sim, Method::POST, "/api/v4/projects", token, Some(body)).await
}

/// Creates a project as [`project`] does and returns its id.
pub async fn project_id(sim: &svc_sim::SimHandle, token: &str, name: &str, visibility: Option<&str>) -> u64 {
    project(sim, token, name, visibility).await["id"]
        .as_u64()
        .unwrap()
}

/// Creates a group whose name and path are `path` as root, at `visibility`; returns its id.
pub async fn group(sim: &svc_sim::SimHandle, path: &str, visibility: &str) -> u64 {
    let body = serde_json::json!({"name": path, "path": path, "visibility": visibility});
    let g = ok(sim, Method::POST, "/api/v4/groups", ROOT, Some(body)).await;
    g["id"].as_u64().unwrap()
}

/// As root, adds `user` at `level` to the project or group (`source` is `projects` or `groups`) `id`.
pub async fn add_member(sim: &svc_sim::SimHandle, source: &str, id: u64, user: u64, level: u64) {
    ok(
        sim,
        Method::POST,
        &format!("/api/v4/{source}/{id}/members"),
        ROOT,
        Some(serde_json::json!({"user_id": user, "access_level": level})),
    )
    .await;
}
