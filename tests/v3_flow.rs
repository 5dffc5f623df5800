//! An end-to-end V3 flow through svcgate → svc-sim, as a legacy client runs it: create a project with
//! `visibility_level`, create an issue, read it by its global id, add a note, delete the issue.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{get, send, send_json, TestGateway};
use http::{Method, StatusCode};
use serde_json::json;

#[tokio::test]
async fn a_legacy_client_creates_a_project_and_works_an_issue_through_v3() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let sim = svc_sim::spawn(listener, "root-token").await.unwrap();
    let (_, token) = sim.create_user("legacy", false);
    let gateway = TestGateway::start(&sim.url()).await;
    let v3 = |path: &str| format!("{}/api/v3{path}", gateway.url());

    let project = send_json(
        Method::POST,
        &v3("/projects"),
        &token,
        json!({"name": "legacy-tool", "visibility_level": 20, "issues_enabled": true}),
    )
    .await;
    assert_eq!(project.status, StatusCode::CREATED, "{:?}", project.body);
    let project = project.json();
    assert_eq!(project["visibility_level"], json!(20));
    assert_eq!(project["public"], json!(true));
    let project_id = project["id"].as_u64().unwrap();

    let listed = get(&v3("/projects"), &token).await.json();
    assert!(listed
        .as_array()
        .unwrap()
        .iter()
        .any(|item| item["id"] == json!(project_id)));

    let issue = send_json(
        Method::POST,
        &v3(&format!("/projects/{project_id}/issues")),
        &token,
        json!({"title": "Broken pipeline", "description": "since Tuesday"}),
    )
    .await;
    assert_eq!(issue.status, StatusCode::CREATED, "{:?}", issue.body);
    let issue = issue.json();
    let issue_id = issue["id"].as_u64().unwrap();
    assert_ne!(
        issue_id,
        issue["iid"].as_u64().unwrap(),
        "global id and iid differ on the simulator"
    );

    let read = get(&v3(&format!("/projects/{project_id}/issues/{issue_id}")), &token).await;
    assert_eq!(read.status, StatusCode::OK);
    assert_eq!(read.json()["title"], json!("Broken pipeline"));
    assert_eq!(read.json()["id"], json!(issue_id));

    let note = send_json(
        Method::POST,
        &v3(&format!("/projects/{project_id}/issues/{issue_id}/notes")),
        &token,
        json!({"body": "looking into it"}),
    )
    .await;
    assert_eq!(note.status, StatusCode::CREATED, "{:?}", note.body);
    assert_eq!(note.json()["noteable_id"], json!(issue_id));
    assert_eq!(note.json()["downvote?"], json!(false));

    let notes = get(
        &v3(&format!("/projects/{project_id}/issues/{issue_id}/notes")),
        &token,
    )
    .await
    .json();
    assert_eq!(notes[0]["body"], json!("looking into it"));

    let deleted = send(
        Method::DELETE,
        &v3(&format!("/projects/{project_id}/issues/{issue_id}")),
        &[("private-token", &token)],
        None,
    )
    .await;
    assert_eq!(deleted.status, StatusCode::OK, "{:?}", deleted.body);
    assert_eq!(deleted.json()["id"], json!(issue_id));

    let gone = get(&v3(&format!("/projects/{project_id}/issues/{issue_id}")), &token).await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
    gateway.stop().await;
}
