//! End-to-end tests: start the simulator on 127.0.0.1:0 and call it with a hyper client.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use http::{Method, StatusCode};
use serde_json::json;

mod common;
use common::*;

#[tokio::test]
async fn version_auth_and_recording() {
    let sim = start().await;
    let r = call(&sim, Method::GET, "/api/v4/version", None, None).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert_eq!(r.body, json!({"message": "401 Unauthorized"}));
    let r = call(&sim, Method::GET, "/api/v4/version", Some("nope"), None).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    let r = call(&sim, Method::GET, "/api/v4/version", Some(ROOT), None).await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.body["version"].is_string() && r.body["revision"].is_string());
    let r = call(&sim, Method::GET, "/api/v4/user", Some(ROOT), None).await;
    assert_eq!(r.body["username"], "root");
    assert_eq!(r.body["is_admin"], true);

    sim.clear_requests();
    call(
        &sim,
        Method::GET,
        "/api/v4/projects/group%2Fproj?private_token=x&a=b",
        None,
        None,
    )
    .await;
    let recorded = sim.requests();
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0].path, "/api/v4/projects/group%2Fproj");
    assert_eq!(recorded[0].query.as_deref(), Some("private_token=x&a=b"));
    assert!(recorded[0].headers.iter().any(|(n, _)| n == "host"));
    let r = call(&sim, Method::GET, "/api/v4/nowhere", Some(ROOT), None).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn users_tokens_and_sudo() {
    let sim = start().await;
    let body = json!({"email": "rep@example.com", "username": "rep", "name": "Rep", "password": "secret123", "skip_confirmation": true});
    let r = call(
        &sim,
        Method::POST,
        "/api/v4/users",
        Some(ROOT),
        Some(body.clone()),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    let uid = r.body["id"].as_u64().unwrap();
    let r = call(&sim, Method::POST, "/api/v4/users", Some(ROOT), Some(body)).await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    assert_eq!(r.body["message"], "Email has already been taken");

    let r = call(
        &sim,
        Method::POST,
        &format!("/api/v4/users/{uid}/personal_access_tokens"),
        Some(ROOT),
        Some(json!({"name": "t", "scopes": ["api"]})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["active"], true);
    let token = r.body["token"].as_str().unwrap().to_string();
    let r = call(&sim, Method::GET, "/api/v4/user", Some(&token), None).await;
    assert_eq!(r.body["id"], uid);
    let r = call(&sim, Method::POST, "/api/v4/users", Some(&token), Some(json!({}))).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);

    let r = call(&sim, Method::GET, "/api/v4/user?sudo=rep", Some(ROOT), None).await;
    assert_eq!(r.body["username"], "rep");
    let r = call(&sim, Method::GET, "/api/v4/user?sudo=root", Some(&token), None).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert_eq!(r.body["message"], "403 Forbidden - Must be admin to use sudo");
    let r = call(
        &sim,
        Method::GET,
        "/api/v4/users?username=rep",
        Some(&token),
        None,
    )
    .await;
    assert_eq!(r.body.as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn projects_visibility_star_and_delete() {
    let sim = start().await;
    let demo = sim.seed_demo();
    let again = sim.seed_demo();
    assert_eq!(demo.project_id, again.project_id);
    assert_eq!(demo.token, again.token);

    let r = call(
        &sim,
        Method::GET,
        "/api/v4/projects/demo-group%2Fdemo-project",
        None,
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.body["id"], demo.project_id);
    assert_eq!(r.body["default_branch"], "main");
    assert!(r.body.get("permissions").is_none());
    let r = call(
        &sim,
        Method::GET,
        &format!("/api/v4/projects/{}?statistics=true", demo.project_id),
        Some(&demo.token),
        None,
    )
    .await;
    assert_eq!(r.body["permissions"]["group_access"]["access_level"], 50);
    assert_eq!(r.body["statistics"]["commit_count"], 3);
    assert_eq!(r.body["namespace"]["kind"], "group");

    let (_, other) = sim.create_user("outsider", false);
    let r = call(
        &sim,
        Method::POST,
        "/api/v4/projects",
        Some(&other),
        Some(json!({"name": "Secret Stuff"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["path"], "secret-stuff");
    assert_eq!(r.body["visibility"], "private");
    assert_eq!(r.body["owner"]["username"], "outsider");
    assert_eq!(r.body["permissions"]["project_access"]["access_level"], 50);
    let secret = r.body["id"].as_u64().unwrap();
    let r = call(
        &sim,
        Method::GET,
        &format!("/api/v4/projects/{secret}"),
        Some(&demo.token),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(r.body["message"], "404 Project Not Found");
    expect_statuses(
        &sim,
        vec![
            (format!("GET /api/v4/projects/{secret}"), Some(ROOT), None, 200),
            (
                "POST /api/v4/projects".into(),
                Some(&other),
                Some(json!({"name": "x", "visibility": "secret"})),
                400,
            ),
        ],
    )
    .await;

    let r = call(&sim, Method::GET, "/api/v4/projects?per_page=1", None, None).await;
    assert_eq!(header(&r, "x-total"), "1");
    let r = call(
        &sim,
        Method::GET,
        "/api/v4/projects?order_by=id&sort=asc",
        Some(ROOT),
        None,
    )
    .await;
    let ids: Vec<u64> = r
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, vec![demo.project_id, secret]);

    let star = format!("/api/v4/projects/{}/star", demo.project_id);
    let r = call(&sim, Method::POST, &star, Some(&other), None).await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["star_count"], 1);
    let r = call(&sim, Method::POST, &star, Some(&other), None).await;
    assert_eq!(r.status, StatusCode::NOT_MODIFIED);
    assert!(r.raw.is_empty());
    let r = call(
        &sim,
        Method::GET,
        "/api/v4/projects?starred=true",
        Some(&other),
        None,
    )
    .await;
    assert_eq!(r.body.as_array().unwrap().len(), 1);

    let r = call(
        &sim,
        Method::PUT,
        &format!("/api/v4/projects/{}", demo.project_id),
        Some(&other),
        Some(json!({"description": "x"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let r = call(
        &sim,
        Method::DELETE,
        &format!("/api/v4/projects/{secret}"),
        Some(&other),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
    assert_eq!(r.body, json!({"message": "202 Accepted"}));
}

#[tokio::test]
async fn members() {
    let sim = start().await;
    let demo = sim.seed_demo();
    let (dev_id, dev) = sim.create_user("dev", false);
    let base = format!("/api/v4/projects/{}/members", demo.project_id);
    let add = json!({"user_id": dev_id, "access_level": 30});
    let r = call(&sim, Method::POST, &base, Some(&dev), Some(add.clone())).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let r = call(&sim, Method::POST, &base, Some(&demo.token), Some(add.clone())).await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["access_level"], 30);
    let r = call(&sim, Method::POST, &base, Some(&demo.token), Some(add)).await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    assert_eq!(r.body, json!({"message": "Member already exists"}));
    let r = call(
        &sim,
        Method::PUT,
        &format!("{base}/{dev_id}"),
        Some(&demo.token),
        Some(json!({"access_level": 17})),
    )
    .await;
    assert_eq!(
        r.body,
        json!({"message": {"access_level": ["is not included in the list"]}})
    );
    let r = call(
        &sim,
        Method::DELETE,
        &format!("{base}/{dev_id}"),
        Some(&demo.token),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    let r = call(
        &sim,
        Method::DELETE,
        &format!("{base}/{dev_id}"),
        Some(&demo.token),
        None,
    )
    .await;
    assert_eq!(r.body, json!({"message": "404 Member Not Found"}));
    let r = call(
        &sim,
        Method::GET,
        &format!("/api/v4/groups/{}/members", demo.group_id),
        Some(&dev),
        None,
    )
    .await;
    assert_eq!(r.body[0]["username"], "demo");
}

#[tokio::test]
async fn issues_and_notes() {
    let sim = start().await;
    let demo = sim.seed_demo();
    let base = format!("/api/v4/projects/{}/issues", demo.project_id);
    let r = call(
        &sim,
        Method::POST,
        &base,
        Some(&demo.token),
        Some(json!({"description": "x"})),
    )
    .await;
    assert_eq!(r.body, json!({"error": "title is missing"}));
    let r = call(
        &sim,
        Method::POST,
        &base,
        Some(&demo.token),
        Some(json!({"title": "Third", "labels": "bug,ui"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["iid"], 3);
    assert!(r.body["id"].as_u64().unwrap() >= 1000);
    assert_eq!(r.body["subscribed"], true);
    assert_eq!(r.body["labels"], json!(["bug", "ui"]));

    let r = call(
        &sim,
        Method::GET,
        &format!("{base}?labels=bug&per_page=1"),
        Some(&demo.token),
        None,
    )
    .await;
    assert_eq!(header(&r, "x-total"), "2");
    assert_eq!(header(&r, "x-next-page"), "2");
    assert!(header(&r, "link").contains("labels=bug&page=2&per_page=1>; rel=\"next\""));
    assert!(r.body[0].get("subscribed").is_none());
    assert_eq!(r.body[0]["iid"], 3);

    let r = call(
        &sim,
        Method::PUT,
        &format!("{base}/3"),
        Some(&demo.token),
        Some(json!({"state_event": "close"})),
    )
    .await;
    assert_eq!(r.body["state"], "closed");
    assert_eq!(r.body["closed_by"]["username"], "demo");
    let r = call(
        &sim,
        Method::GET,
        &format!("{base}?state=opened&iids[]=1&iids[]=3"),
        Some(&demo.token),
        None,
    )
    .await;
    assert_eq!(r.body.as_array().unwrap().len(), 1);
    let r = call(
        &sim,
        Method::GET,
        "/api/v4/issues?scope=all&search=dark",
        Some(&demo.token),
        None,
    )
    .await;
    assert_eq!(r.body[0]["title"], "Add a dark theme");

    let notes = format!("{base}/1/notes");
    let r = call(
        &sim,
        Method::POST,
        &notes,
        Some(&demo.token),
        Some(json!({"body": ""})),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let r = call(
        &sim,
        Method::POST,
        &notes,
        Some(&demo.token),
        Some(json!({"body": "second"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["noteable_type"], "Issue");
    assert_eq!(r.body["noteable_iid"], 1);
    let note_id = r.body["id"].as_u64().unwrap();
    let r = call(&sim, Method::GET, &notes, Some(&demo.token), None).await;
    assert_eq!(r.body[0]["body"], "second");
    let r = call(
        &sim,
        Method::GET,
        &format!("{notes}?sort=asc"),
        Some(&demo.token),
        None,
    )
    .await;
    assert_eq!(r.body[0]["body"], "I can reproduce this on main.");
    let (_, outsider) = sim.create_user("outsider", false);
    expect_statuses(
        &sim,
        vec![
            (
                format!("PUT {notes}/{note_id}"),
                Some(&outsider),
                Some(json!({"body": "x"})),
                403,
            ),
            (format!("DELETE {notes}/{note_id}"), Some(&demo.token), None, 204),
            (format!("DELETE {base}/1"), Some(&outsider), None, 403),
            (format!("DELETE {base}/1"), Some(&demo.token), None, 204),
        ],
    )
    .await;
    let r = call(&sim, Method::GET, &format!("{base}/1"), Some(&demo.token), None).await;
    assert_eq!(r.body, json!({"message": "404 Issue Not Found"}));
}

#[tokio::test]
async fn repository_and_merge_requests() {
    let sim = start().await;
    let demo = sim.seed_demo();
    let p = format!("/api/v4/projects/{}", demo.project_id);
    let r = call(
        &sim,
        Method::POST,
        &format!("{p}/repository/branches"),
        Some(&demo.token),
        Some(json!({"branch": "feature/x", "ref": "main"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["name"], "feature/x");
    let r = call(
        &sim,
        Method::POST,
        &format!("{p}/repository/branches"),
        Some(&demo.token),
        Some(json!({"branch": "feature/x", "ref": "main"})),
    )
    .await;
    assert_eq!(r.body, json!({"message": "Branch already exists"}));
    let r = call(
        &sim,
        Method::POST,
        &format!("{p}/repository/branches"),
        Some(&demo.token),
        Some(json!({"branch": "y", "ref": "nope"})),
    )
    .await;
    assert_eq!(r.body, json!({"message": "Invalid reference name"}));

    let r = call(
        &sim,
        Method::POST,
        &format!("{p}/repository/commits"),
        Some(&demo.token),
        Some(json!({
            "branch": "feature/x", "commit_message": "Add notes",
            "actions": [{"action": "create", "file_path": "notes/a.txt", "content": "hello"}]
        })),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    let sha = r.body["id"].as_str().unwrap().to_string();
    assert_eq!(sha.len(), 40);
    assert_eq!(r.body["stats"]["additions"], 1);

    let r = call(
        &sim,
        Method::GET,
        &format!("{p}/repository/branches/feature%2Fx"),
        Some(&demo.token),
        None,
    )
    .await;
    assert_eq!(r.body["commit"]["id"], sha);
    let r = call(
        &sim,
        Method::GET,
        &format!("{p}/repository/files/notes%2Fa.txt/raw?ref=feature%2Fx"),
        None,
        None,
    )
    .await;
    assert_eq!(r.raw, b"hello");
    let r = call(
        &sim,
        Method::GET,
        &format!("{p}/repository/commits?ref_name=feature/x&per_page=2"),
        None,
        None,
    )
    .await;
    assert_eq!(r.body[0]["id"], sha);
    assert_eq!(header(&r, "x-total"), "4");
    let r = call(
        &sim,
        Method::GET,
        &format!("{p}/repository/commits?path=docs"),
        None,
        None,
    )
    .await;
    assert_eq!(r.body.as_array().unwrap().len(), 1);

    let mrs = format!("{p}/merge_requests");
    let r = call(
        &sim,
        Method::POST,
        &mrs,
        Some(&demo.token),
        Some(json!({"title": "Notes", "source_branch": "feature/x", "target_branch": "main"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert!(r.body["id"].as_u64().unwrap() >= 2000);
    assert_eq!(r.body["iid"], 1);
    assert_eq!(r.body["sha"], sha);
    assert_eq!(r.body["subscribed"], true);
    let r = call(
        &sim,
        Method::GET,
        &format!("{mrs}?state=opened"),
        Some(&demo.token),
        None,
    )
    .await;
    assert!(r.body[0].get("subscribed").is_none());
    let r = call(
        &sim,
        Method::PUT,
        &format!("{mrs}/1/merge"),
        Some(&demo.token),
        None,
    )
    .await;
    assert_eq!(r.body["state"], "merged");
    let r = call(
        &sim,
        Method::GET,
        &format!("{p}/repository/files/notes%2Fa.txt?ref=main"),
        None,
        None,
    )
    .await;
    assert_eq!(r.body["content"], "aGVsbG8=");

    let r = call(
        &sim,
        Method::DELETE,
        &format!("{p}/repository/branches/feature%2Fx"),
        Some(&demo.token),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    let r = call(
        &sim,
        Method::GET,
        &format!("{p}/repository/branches"),
        Some(&demo.token),
        None,
    )
    .await;
    assert_eq!(r.body.as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn shutdown_stops_accepting() {
    let sim = start().await;
    let addr = sim.addr();
    sim.shutdown();
    // The accept loop drops the listener once it sees the request; from then on connections are refused.
    let refused = tokio::time::timeout(std::time::Duration::from_secs(5), async {
        while tokio::net::TcpStream::connect(addr).await.is_ok() {
            tokio::task::yield_now().await;
        }
    })
    .await;
    assert!(refused.is_ok(), "still accepting 5 s after shutdown");
}
