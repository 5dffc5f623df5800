//! What a real V4 server does that clients depend on, seen through svcgate (client → svcgate → svc-sim): empty
//! repositories until the first commit, projects of owned groups among owned projects, merge requests'
//! detailed status, labels read by name, multi-file snippets.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::common::{get, send_json, TestGateway};
use http::{Method, StatusCode};
use serde_json::{json, Value};

struct World {
    _sim: svc_sim::SimHandle,
    gateway: TestGateway,
    demo: svc_sim::DemoSeed,
}

async fn world() -> World {
    let (sim, demo, gateway) = common::sim::with_gateway().await;
    World {
        _sim: sim,
        gateway,
        demo,
    }
}

impl World {
    fn v3(&self, path: &str) -> String {
        format!("{}/api/v3{path}", self.gateway.url())
    }

    fn v4(&self, path: &str) -> String {
        format!("{}/api/v4{path}", self.gateway.url())
    }
}

#[tokio::test]
async fn a_new_repository_is_empty_until_its_first_commit_makes_the_default_branch() {
    let world = world().await;
    let token = &world.demo.token;
    let made = send_json(
        Method::POST,
        &world.v3("/projects"),
        token,
        json!({"name": "blank"}),
    )
    .await;
    assert_eq!(made.status, StatusCode::CREATED, "{:?}", made.body);
    let id = made.json()["id"].as_u64().unwrap();
    let branches = get(&world.v3(&format!("/projects/{id}/repository/branches")), token).await;
    assert_eq!(branches.json(), json!([]));
    // The first commit, through the V3 files API, makes its branch and makes it the default one.
    let file = send_json(
        Method::POST,
        &world.v3(&format!("/projects/{id}/repository/files")),
        token,
        json!({"file_path": "README.md", "branch_name": "trunk", "content": "# hi", "commit_message": "first"}),
    )
    .await;
    assert_eq!(file.status, StatusCode::CREATED, "{:?}", file.body);
    let project = get(&world.v3(&format!("/projects/{id}")), token).await.json();
    assert_eq!(project["default_branch"], json!("trunk"));
    let branches = get(&world.v3(&format!("/projects/{id}/repository/branches")), token)
        .await
        .json();
    let names: Vec<&str> = branches
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["trunk"]);
    // Asked for, a README makes the repository start with one commit on the default branch.
    let readme = send_json(
        Method::POST,
        &world.v4("/projects"),
        token,
        json!({"name": "with-readme", "initialize_with_readme": true}),
    )
    .await
    .json();
    let branches = get(
        &world.v4(&format!("/projects/{}/repository/branches", readme["id"])),
        token,
    )
    .await
    .json();
    assert_eq!(branches.as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn owned_projects_include_those_of_groups_the_caller_owns() {
    let world = world().await;
    let owned = get(&world.v3("/projects/owned"), &world.demo.token).await;
    assert_eq!(owned.status, StatusCode::OK);
    let paths: Vec<String> = owned
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|project| project["path_with_namespace"].as_str().unwrap().to_owned())
        .collect();
    assert!(paths.contains(&world.demo.project_path), "{paths:?}");
}

#[tokio::test]
async fn merge_requests_labels_and_snippets_answer_as_a_v4_server_does() {
    let world = world().await;
    let token = &world.demo.token;
    let p = world.demo.project_id;
    let branch = send_json(
        Method::POST,
        &world.v4(&format!("/projects/{p}/repository/branches")),
        token,
        json!({"branch": "topic", "ref": "main"}),
    )
    .await;
    assert!(branch.status.is_success(), "{:?}", branch.body);
    let mr = send_json(
        Method::POST,
        &world.v4(&format!("/projects/{p}/merge_requests")),
        token,
        json!({"title": "t", "source_branch": "topic", "target_branch": "main"}),
    )
    .await
    .json();
    assert!(mr["detailed_merge_status"].is_string(), "{mr}");
    let label = send_json(
        Method::POST,
        &world.v4(&format!("/projects/{p}/labels")),
        token,
        json!({"name": "needs review", "color": "#ff0000"}),
    )
    .await;
    assert_eq!(label.status, StatusCode::CREATED, "{:?}", label.body);
    let by_name = get(&world.v4(&format!("/projects/{p}/labels/needs%20review")), token).await;
    assert_eq!(by_name.status, StatusCode::OK, "{:?}", by_name.body);
    assert_eq!(by_name.json()["name"], json!("needs review"));
    let snippet = send_json(
        Method::POST,
        &world.v4("/snippets"),
        token,
        json!({"title": "two files", "visibility": "private", "files": [
            {"file_path": "a.rb", "content": "puts 1"},
            {"file_path": "b.rb", "content": "puts 2"}
        ]}),
    )
    .await;
    assert_eq!(snippet.status, StatusCode::CREATED, "{:?}", snippet.body);
    let files: Vec<Value> = snippet.json()["files"].as_array().unwrap().clone();
    assert_eq!(files.len(), 2);
}
