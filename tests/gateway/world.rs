//! The world the two table-driven V3 suites (`rules`, `v3_specs`) build their rows on: svc-sim seeded with its demo
//! user, group and project, an svcgate in front of it, and the objects each suite creates through the backend's V4
//! API (users, projects, members, issues, notes, award emoji, triggers, variables, …), each kept under a name that
//! the suites' rows use as a `{placeholder}`. Each suite adds only the objects that are its own.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;

use crate::common;
use crate::common::TestGateway;
use http::Method;
use serde_json::{json, Value};
use svc_sim::{DemoSeed, SimHandle};

/// A seeded backend, the gateway in front of it and the named objects made so far.
pub struct World {
    /// The backend.
    pub sim: SimHandle,
    /// The gateway in front of `sim`.
    pub gateway: TestGateway,
    /// The demo user, group and project.
    pub demo: DemoSeed,
    /// The demo user's token, owner of the demo group and its project.
    pub token: String,
    /// The tokens of the users made with [`World::user`], by name (`owner` is the demo user).
    pub tokens: HashMap<&'static str, String>,
    /// Placeholder values by name: `p` (demo project), `g` (demo group), `demo` (demo user id), then each suite's.
    pub vars: HashMap<String, String>,
}

impl World {
    /// Starts svc-sim with its demo seed and a gateway in front of it, and keeps `p`, `g` and `demo`.
    pub async fn new() -> Self {
        let (sim, demo, gateway) = common::sim::with_gateway().await;
        let mut world = World {
            sim,
            gateway,
            token: demo.token.clone(),
            tokens: HashMap::from([("owner", demo.token.clone())]),
            vars: HashMap::new(),
            demo,
        };
        world.keep("p", &json!(world.demo.project_id));
        world.keep("g", &json!(world.demo.group_id));
        world.keep("demo", &json!(world.demo.user_id));
        world
    }

    /// `text` with every `{name}` replaced by the value kept under that name.
    pub fn fill(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for (name, value) in &self.vars {
            out = out.replace(&format!("{{{name}}}"), value);
        }
        out
    }

    /// The value kept under `name`.
    pub fn var(&self, name: &str) -> String {
        self.vars
            .get(name)
            .unwrap_or_else(|| panic!("nothing kept as {name}"))
            .clone()
    }

    /// Keeps `value` (a string as is, anything else as JSON text) under `name`.
    pub fn keep(&mut self, name: impl Into<String>, value: &Value) {
        let name = name.into();
        let text = match value {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        assert!(!text.is_empty() && text != "null", "{name} is {value}");
        self.vars.insert(name, text);
    }

    /// A setup call straight to the backend's V4 API (placeholders in `path` filled), which must succeed; its
    /// answer, `Null` when empty.
    pub async fn setup(&self, method: Method, path: &str, token: &str, body: Value) -> Value {
        let path = self.fill(path);
        let answer = common::send_json(
            method.clone(),
            &format!("{}/api/v4{path}", self.sim.url()),
            token,
            body,
        )
        .await;
        assert!(
            answer.status.is_success(),
            "setup {method} {path}: {} {}",
            answer.status,
            String::from_utf8_lossy(&answer.body)
        );
        serde_json::from_slice(&answer.body).unwrap_or(Value::Null)
    }

    /// A setup `POST` whose answer's `field` is kept as `name`; the answer.
    pub async fn made(&mut self, name: &str, field: &str, path: &str, token: &str, body: Value) -> Value {
        let made = self.setup(Method::POST, path, token, body).await;
        self.keep(name, &made[field]);
        made
    }

    /// A user named `username`, kept as `name` (id) with its token in [`World::tokens`]; (id, token).
    pub fn user(&mut self, name: &'static str, username: &str) -> (u64, String) {
        let (id, token) = self.sim.create_user(username, false);
        self.keep(name, &json!(id));
        self.tokens.insert(name, token.clone());
        (id, token)
    }

    /// A project made by `token` with `body`, kept as `name`.
    pub async fn project(&mut self, name: &str, token: &str, body: Value) -> Value {
        self.made(name, "id", "/projects", token, body).await
    }

    /// Makes `user` a member of `source` (`/projects/ID` or `/groups/ID`, placeholders allowed) at `level`.
    pub async fn member(&self, source: &str, user: u64, level: u64) {
        let path = format!("{source}/members");
        self.setup(
            Method::POST,
            &path,
            &self.token,
            json!({"user_id": user, "access_level": level}),
        )
        .await;
    }

    /// An issue titled `title` in `project` (placeholders allowed), by `token`, kept as `name`.
    pub async fn issue(&mut self, name: &str, project: &str, token: &str, title: &str) -> Value {
        let path = format!("/projects/{project}/issues");
        self.made(name, "id", &path, token, json!({"title": title})).await
    }

    /// A note with `body` on `on` (an issue, merge request or snippet path), by `token`, kept as `name`.
    pub async fn note(&mut self, name: &str, on: &str, token: &str, body: &str) -> Value {
        let path = format!("{on}/notes");
        self.made(name, "id", &path, token, json!({"body": body})).await
    }

    /// An award emoji `emoji` on `on` (an issue, merge request, snippet or note path) by the demo user, kept as
    /// `name`.
    pub async fn award(&mut self, name: &str, on: &str, emoji: &str) -> Value {
        let path = format!("{on}/award_emoji");
        let token = self.token.clone();
        self.made(name, "id", &path, &token, json!({"name": emoji})).await
    }

    /// A pipeline trigger described as `name` in `project`, by the demo user, its token kept as `name`.
    pub async fn trigger(&mut self, name: &str, project: &str) -> Value {
        let path = format!("/projects/{project}/triggers");
        let token = self.token.clone();
        self.made(name, "token", &path, &token, json!({"description": name}))
            .await
    }

    /// A CI variable `key` = `value` in `project`, by the demo user, its key kept as `name`.
    pub async fn variable(&mut self, name: &str, project: &str, key: &str, value: &str) -> Value {
        let path = format!("/projects/{project}/variables");
        let token = self.token.clone();
        self.made(name, "key", &path, &token, json!({"key": key, "value": value}))
            .await
    }
}
