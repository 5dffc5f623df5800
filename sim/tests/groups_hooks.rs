//! End-to-end tests of data and error texts as a real V4 server keeps and writes them: a group's
//! `shared_projects`, transferring a project to a namespace or a group by id or path, a project hook's PUT that
//! requires `url`, and the `error`/`message` texts of trigger variables, environment slugs, pipeline refs and merge
//! bases. Each test names the V4 code or spec it follows.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use http::{Method, StatusCode};
use serde_json::{json, Value};

mod common;
use common::*;

async fn ok(sim: &svc_sim::SimHandle, method: Method, path: &str, token: &str, body: Option<Value>) -> Value {
    let r = call(sim, method.clone(), path, Some(token), body).await;
    assert!(r.status.is_success(), "{method} {path}: {} {}", r.status, r.body);
    r.body
}

/// Creates a group as root and returns its id.
async fn group(sim: &svc_sim::SimHandle, path: &str, visibility: &str) -> u64 {
    let g = ok(
        sim,
        Method::POST,
        "/api/v4/groups",
        ROOT,
        Some(json!({"name": path, "path": path, "visibility": visibility})),
    )
    .await;
    g["id"].as_u64().unwrap()
}

/// Adds `user` to group `gid` at `level`.
async fn group_member(sim: &svc_sim::SimHandle, gid: u64, user: u64, level: u64) {
    ok(
        sim,
        Method::POST,
        &format!("/api/v4/groups/{gid}/members"),
        ROOT,
        Some(json!({"user_id": user, "access_level": level})),
    )
    .await;
}

/// Creates a project with a README as the token's user and returns it.
async fn project(sim: &svc_sim::SimHandle, token: &str, name: &str, visibility: &str) -> Value {
    ok(
        sim,
        Method::POST,
        "/api/v4/projects",
        token,
        Some(json!({"name": name, "visibility": visibility, "initialize_with_readme": true})),
    )
    .await
}

fn ids(list: &Value) -> Vec<u64> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_u64().unwrap())
        .collect()
}

/// V4 `lib/api/entities/group_detail.rb`: besides `projects`, `GET /groups/:id` exposes `shared_projects`, the
/// projects shared with the group (`GroupProjectsFinder` with `only_shared: true` for the current user) rendered
/// `using: Entities::Project` like `projects`; sharing is `POST /projects/:id/share` (`lib/api/projects.rb`).
#[tokio::test]
async fn group_details_list_the_projects_shared_with_the_group() {
    let sim = start().await;
    let gid = group(&sim, "team", "public").await;
    let own = ok(
        &sim,
        Method::POST,
        "/api/v4/projects",
        ROOT,
        Some(json!({"name": "inside", "namespace_id": gid, "visibility": "public"})),
    )
    .await;
    let shared = project(&sim, ROOT, "lent", "private").await;
    let spid = shared["id"].as_u64().unwrap();
    let (member, member_token) = sim.create_user("member", false);
    let (_, outsider_token) = sim.create_user("outsider", false);
    group_member(&sim, gid, member, 30).await;

    let detail = ok(&sim, Method::GET, &format!("/api/v4/groups/{gid}"), ROOT, None).await;
    assert_eq!(detail["shared_projects"], json!([]));

    ok(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{spid}/share"),
        ROOT,
        Some(json!({"group_id": gid, "group_access": 30})),
    )
    .await;
    let detail = ok(&sim, Method::GET, &format!("/api/v4/groups/{gid}"), ROOT, None).await;
    assert_eq!(ids(&detail["projects"]), [own["id"].as_u64().unwrap()]);
    assert_eq!(ids(&detail["shared_projects"]), [spid]);
    let entry = &detail["shared_projects"][0];
    assert_eq!(entry["path_with_namespace"], "root/lent");
    assert_eq!(entry["namespace"]["path"], "root");
    assert_eq!(entry["shared_with_groups"][0]["group_id"], json!(gid));
    // The same `Entities::Project` shape as `projects` (and `owner`, as the project is in a user's namespace).
    let entry_keys = entry.as_object().unwrap();
    for key in detail["projects"][0].as_object().unwrap().keys() {
        assert!(entry_keys.contains_key(key), "{key}");
    }
    assert_eq!(entry["owner"]["username"], "root");

    // A member reaches the private project through the share; an outsider sees the group but not the project.
    let seen = ok(
        &sim,
        Method::GET,
        &format!("/api/v4/groups/{gid}"),
        &member_token,
        None,
    )
    .await;
    assert_eq!(ids(&seen["shared_projects"]), [spid]);
    let seen = ok(
        &sim,
        Method::GET,
        &format!("/api/v4/groups/{gid}"),
        &outsider_token,
        None,
    )
    .await;
    assert_eq!(seen["shared_projects"], json!([]));

    let r = call(
        &sim,
        Method::DELETE,
        &format!("/api/v4/projects/{spid}/share/{gid}"),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    let detail = ok(&sim, Method::GET, &format!("/api/v4/groups/{gid}"), ROOT, None).await;
    assert_eq!(detail["shared_projects"], json!([]));
}
