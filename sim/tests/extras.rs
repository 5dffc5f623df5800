//! End-to-end tests of the extra resources: issue and merge request extras, to-dos, repository, projects, CI,
//! keys, hooks, snippets and administration.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use http::{Method, StatusCode};
use serde_json::{json, Value};

mod common;
use common::*;

#[tokio::test]
async fn unknown_routes_use_the_message_shape() {
    let sim = start().await;
    let r = call(&sim, Method::GET, "/api/v4/nowhere", Some(ROOT), None).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(r.body, json!({"message": "404 Not Found"}));
    // V4's catch-all (`route :any, '*path'` in lib/api/api.rb) answers a known path's missing method too.
    let r = call(&sim, Method::PATCH, "/api/v4/projects", Some(ROOT), None).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(r.body, json!({"message": "404 Not Found"}));
}

#[tokio::test]
async fn issue_extras_time_awards_subscriptions_and_todos() {
    let sim = start().await;
    let demo = sim.seed_demo();
    let (bob, bob_token) = sim.create_user("bob", false);
    let pid = demo.project_id;
    let t = Some(demo.token.as_str());
    let base = format!("/api/v4/projects/{pid}/issues/1");

    // Time tracking.
    let r = call(
        &sim,
        Method::POST,
        &format!("{base}/time_estimate"),
        t,
        Some(json!({"duration": "3h30m"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.body["time_estimate"], 12600);
    assert_eq!(r.body["human_time_estimate"], "3h 30m");
    let r = call(
        &sim,
        Method::POST,
        &format!("{base}/add_spent_time"),
        t,
        Some(json!({"duration": "1h"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["total_time_spent"], 3600);
    let r = call(
        &sim,
        Method::POST,
        &format!("{base}/time_estimate"),
        t,
        Some(json!({"duration": "soon"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let r = call(&sim, Method::POST, &format!("{base}/reset_spent_time"), t, None).await;
    assert_eq!(r.body["total_time_spent"], 0);
    let r = call(&sim, Method::GET, &format!("{base}/time_stats"), t, None).await;
    assert_eq!(r.body["time_estimate"], 12600);
    assert_eq!(r.body["human_total_time_spent"], Value::Null);

    // Award emoji on the issue and on its note.
    let r = call(
        &sim,
        Method::POST,
        &format!("{base}/award_emoji"),
        t,
        Some(json!({"name": "thumbsup"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["awardable_type"], "Issue");
    let award = r.body["id"].as_u64().unwrap();
    let r = call(
        &sim,
        Method::POST,
        &format!("{base}/award_emoji"),
        t,
        Some(json!({"name": "thumbsup"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let r = call(&sim, Method::GET, &format!("{base}/award_emoji"), t, None).await;
    assert_eq!(r.body.as_array().unwrap().len(), 1);
    assert_eq!(header(&r, "x-total"), "1");
    expect_statuses(
        &sim,
        vec![
            (
                format!("DELETE {base}/award_emoji/{award}"),
                Some(&bob_token),
                None,
                401,
            ),
            (format!("DELETE {base}/award_emoji/{award}"), t, None, 204),
        ],
    )
    .await;
    let r = call(&sim, Method::GET, &format!("{base}/award_emoji/{award}"), t, None).await;
    assert_eq!(r.body, json!({"message": "404 Award Emoji Not Found"}));
    let notes = call(&sim, Method::GET, &format!("{base}/notes"), t, None).await;
    let note = notes.body[0]["id"].as_u64().unwrap();
    let r = call(
        &sim,
        Method::POST,
        &format!("{base}/notes/{note}/award_emoji"),
        t,
        Some(json!({"name": "tada"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["awardable_type"], "Note");
    assert_eq!(r.body["awardable_id"], note);

    // Subscriptions: the author is subscribed already.
    let r = call(&sim, Method::POST, &format!("{base}/subscribe"), t, None).await;
    assert_eq!(r.status, StatusCode::NOT_MODIFIED);
    let r = call(&sim, Method::POST, &format!("{base}/unsubscribe"), t, None).await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["subscribed"], false);
    let r = call(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{pid}/labels/bug/subscribe"),
        t,
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["subscribed"], true);
    let r = call(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{pid}/labels/bug/subscribe"),
        t,
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::NOT_MODIFIED);

    // To-dos: explicit, and from an assignment.
    let r = call(&sim, Method::POST, &format!("{base}/todo"), t, None).await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["action_name"], "marked");
    assert_eq!(r.body["target_type"], "Issue");
    assert_eq!(r.body["target"]["iid"], 1);
    expect_statuses(
        &sim,
        vec![
            (format!("POST {base}/todo"), t, None, 304),
            (
                format!("PUT {base}"),
                t,
                Some(json!({"assignee_ids": [bob]})),
                200,
            ),
        ],
    )
    .await;
    let r = call(&sim, Method::GET, "/api/v4/todos", Some(&bob_token), None).await;
    assert_eq!(r.body.as_array().unwrap().len(), 1);
    assert_eq!(r.body[0]["action_name"], "assigned");
    assert_eq!(r.body[0]["author"]["username"], "demo");
    let todo = r.body[0]["id"].as_u64().unwrap();
    expect_statuses(
        &sim,
        vec![
            (
                "GET /api/v4/todos?action=bogus".into(),
                Some(&bob_token),
                None,
                400,
            ),
            (format!("POST /api/v4/todos/{todo}/mark_as_done"), t, None, 404),
        ],
    )
    .await;
    let r = call(
        &sim,
        Method::POST,
        &format!("/api/v4/todos/{todo}/mark_as_done"),
        Some(&bob_token),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["state"], "done");
    let r = call(
        &sim,
        Method::GET,
        "/api/v4/todos?state=done",
        Some(&bob_token),
        None,
    )
    .await;
    assert_eq!(r.body.as_array().unwrap().len(), 1);
    let r = call(&sim, Method::POST, "/api/v4/todos/mark_as_done", t, None).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    let r = call(&sim, Method::GET, "/api/v4/todos", t, None).await;
    assert_eq!(r.body, json!([]));

    // Lists: iids[] and group issues.
    let r = call(
        &sim,
        Method::GET,
        &format!("/api/v4/projects/{pid}/issues?iids[]=2"),
        t,
        None,
    )
    .await;
    assert_eq!(r.body.as_array().unwrap().len(), 1);
    assert_eq!(r.body[0]["iid"], 2);
    let r = call(
        &sim,
        Method::GET,
        &format!("/api/v4/groups/{}/issues", demo.group_id),
        t,
        None,
    )
    .await;
    assert_eq!(r.body.as_array().unwrap().len(), 2);

    // Move.
    let r = call(
        &sim,
        Method::POST,
        &format!("{base}/move"),
        t,
        Some(json!({"to_project_id": pid})),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let other = call(
        &sim,
        Method::POST,
        "/api/v4/projects",
        t,
        Some(json!({"name": "other"})),
    )
    .await;
    let other_id = other.body["id"].as_u64().unwrap();
    let r = call(
        &sim,
        Method::POST,
        &format!("{base}/move"),
        t,
        Some(json!({"to_project_id": other_id})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["project_id"], other_id);
    assert_eq!(r.body["iid"], 1);
    assert_eq!(r.body["labels"], json!(["bug"]));
    let r = call(&sim, Method::GET, &base, t, None).await;
    assert_eq!(r.body["state"], "closed");
}

#[tokio::test]
async fn merge_request_extras() {
    let sim = start().await;
    let demo = sim.seed_demo();
    let pid = demo.project_id;
    let t = Some(demo.token.as_str());
    let r = call(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{pid}/repository/commits"),
        t,
        Some(json!({"branch": "feature", "start_branch": "main", "commit_message": "Fix the crash\n\nFixes #2",
            "actions": [{"action": "update", "file_path": "src/main.rs", "content": "fn main() {\n    println!(\"hi\");\n}\n"}]})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    let head = r.body["id"].as_str().unwrap().to_string();
    let r = call(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{pid}/merge_requests"),
        t,
        Some(json!({"title": "Fix", "source_branch": "feature", "target_branch": "main", "description": "Closes #1"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    let base = format!("/api/v4/projects/{pid}/merge_requests/1");

    let r = call(&sim, Method::GET, &format!("{base}/commits"), t, None).await;
    assert_eq!(r.body.as_array().unwrap().len(), 1);
    assert_eq!(r.body[0]["id"], head.as_str());
    let r = call(&sim, Method::GET, &format!("{base}/changes"), t, None).await;
    assert_eq!(r.body["iid"], 1);
    assert_eq!(r.body["changes"][0]["new_path"], "src/main.rs");
    assert!(r.body["changes"][0]["diff"]
        .as_str()
        .unwrap()
        .contains("+    println!(\"hi\");"));
    let r = call(&sim, Method::GET, &format!("{base}/closes_issues"), t, None).await;
    let iids: Vec<u64> = r
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["iid"].as_u64().unwrap())
        .collect();
    assert_eq!(iids, vec![1, 2]);
    let r = call(&sim, Method::GET, &format!("{base}/versions"), t, None).await;
    assert_eq!(r.body[0]["head_commit_sha"], head.as_str());
    assert_eq!(r.body[0]["state"], "collected");
    let version = r.body[0]["id"].as_u64().unwrap();
    let r = call(&sim, Method::GET, &format!("{base}/versions/{version}"), t, None).await;
    assert_eq!(r.body["commits"].as_array().unwrap().len(), 1);
    assert_eq!(r.body["diffs"].as_array().unwrap().len(), 1);
    expect_statuses(
        &sim,
        vec![
            (format!("GET {base}/versions/1"), t, None, 404),
            (
                format!("PUT {base}"),
                t,
                Some(json!({"state_event": "merge"})),
                400,
            ),
        ],
    )
    .await;
    let r = call(
        &sim,
        Method::POST,
        &format!("{base}/cancel_merge_when_pipeline_succeeds"),
        t,
        None,
    )
    .await;
    // No automatic merge was set: the auto-merge service's error, under 201 as the service answers it.
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(
        r.body,
        json!({"status": "error", "message": "Can't cancel the automatic merge", "http_status": 406})
    );
    let r = call(&sim, Method::POST, &format!("{base}/subscribe"), t, None).await;
    assert_eq!(r.status, StatusCode::NOT_MODIFIED);
    let r = call(&sim, Method::POST, &format!("{base}/todo"), t, None).await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["target_type"], "MergeRequest");
    let r = call(
        &sim,
        Method::POST,
        &format!("{base}/time_estimate"),
        t,
        Some(json!({"duration": "1d"})),
    )
    .await;
    assert_eq!(r.body["human_time_estimate"], "1d");

    let r = call(&sim, Method::PUT, &base, t, Some(json!({"state_event": "close"}))).await;
    assert_eq!(r.body["state"], "closed");
    let r = call(&sim, Method::PUT, &format!("{base}/merge"), t, None).await;
    assert_eq!(r.status, StatusCode::METHOD_NOT_ALLOWED);
    let r = call(
        &sim,
        Method::PUT,
        &base,
        t,
        Some(json!({"state_event": "reopen"})),
    )
    .await;
    assert_eq!(r.body["state"], "opened");
    let r = call(
        &sim,
        Method::PUT,
        &format!("{base}/merge"),
        t,
        Some(json!({"sha": "0000000"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    let r = call(
        &sim,
        Method::PUT,
        &format!("{base}/merge"),
        t,
        Some(json!({"sha": head})),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.body["state"], "merged");
}

#[tokio::test]
async fn repository_tags_tree_blobs_files_and_commits() {
    let sim = start().await;
    let demo = sim.seed_demo();
    let pid = demo.project_id;
    let t = Some(demo.token.as_str());
    let repo = format!("/api/v4/projects/{pid}/repository");

    // Tags and releases.
    let r = call(
        &sim,
        Method::POST,
        &format!("{repo}/tags"),
        t,
        Some(json!({"tag_name": "v1.0", "ref": "main", "message": "First"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["name"], "v1.0");
    assert_eq!(r.body["release"], Value::Null);
    let r = call(
        &sim,
        Method::POST,
        &format!("{repo}/tags"),
        t,
        Some(json!({"tag_name": "v1.0", "ref": "main"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    call(
        &sim,
        Method::POST,
        &format!("{repo}/tags"),
        t,
        Some(json!({"tag_name": "release/0.9", "ref": "main"})),
    )
    .await;
    let r = call(
        &sim,
        Method::GET,
        &format!("{repo}/tags?order_by=name&sort=asc"),
        t,
        None,
    )
    .await;
    let names: Vec<&str> = r
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["release/0.9", "v1.0"]);
    let r = call(
        &sim,
        Method::POST,
        &format!("{repo}/tags/v1.0/release"),
        t,
        Some(json!({"description": "Notes"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body, json!({"tag_name": "v1.0", "description": "Notes"}));
    expect_statuses(
        &sim,
        vec![
            (
                format!("POST {repo}/tags/v1.0/release"),
                t,
                Some(json!({"description": "Again"})),
                409,
            ),
            (
                format!("PUT {repo}/tags/v1.0/release"),
                t,
                Some(json!({"description": "Better"})),
                200,
            ),
            (format!("GET {repo}/tags/release%2F0.9"), t, None, 200),
            (format!("DELETE {repo}/tags/release%2F0.9"), t, None, 204),
        ],
    )
    .await;
    let r = call(&sim, Method::GET, &format!("{repo}/tags/release%2F0.9"), t, None).await;
    assert_eq!(r.body, json!({"message": "404 Tag Not Found"}));

    // Tree and blobs.
    let r = call(&sim, Method::GET, &format!("{repo}/tree"), t, None).await;
    let names: Vec<&str> = r
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["docs", "src", "Cargo.toml", "README.md"]);
    assert_eq!(r.body[0]["type"], "tree");
    let r = call(
        &sim,
        Method::GET,
        &format!("{repo}/tree?recursive=true&per_page=2"),
        t,
        None,
    )
    .await;
    assert_eq!(header(&r, "x-total"), "6");
    let r = call(
        &sim,
        Method::GET,
        &format!("{repo}/tree?path=src&ref=main"),
        t,
        None,
    )
    .await;
    assert_eq!(r.body[0]["path"], "src/main.rs");
    let blob_sha = r.body[0]["id"].as_str().unwrap().to_string();
    let r = call(&sim, Method::GET, &format!("{repo}/tree?path=nope"), t, None).await;
    assert_eq!(r.body, json!({"message": "404 Tree Not Found"}));
    let r = call(&sim, Method::GET, &format!("{repo}/blobs/{blob_sha}"), t, None).await;
    assert_eq!(r.body["encoding"], "base64");
    assert_eq!(r.body["sha"], blob_sha.as_str());
    let r = call(
        &sim,
        Method::GET,
        &format!("{repo}/blobs/{blob_sha}/raw"),
        t,
        None,
    )
    .await;
    assert!(String::from_utf8_lossy(&r.raw).contains("fn main"));
    let r = call(
        &sim,
        Method::GET,
        &format!("{repo}/blobs/0123456789abcdef/raw"),
        t,
        None,
    )
    .await;
    assert_eq!(r.body, json!({"message": "404 Blob Not Found"}));

    // Archive.
    let r = call(
        &sim,
        Method::GET,
        &format!("{repo}/archive.tar.gz?sha=main"),
        t,
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(&r.raw[..2], &[0x1f, 0x8b]);
    let cd = header(&r, "content-disposition");
    assert!(cd.starts_with("attachment; filename=\"demo-project-main-") && cd.ends_with(".tar.gz\""));
    let again = call(&sim, Method::GET, &format!("{repo}/archive?sha=main"), t, None).await;
    assert_eq!(again.raw, r.raw);

    // Files API.
    let files = format!("{repo}/files/docs%2Fnew.md");
    let r = call(
        &sim,
        Method::POST,
        &files,
        t,
        Some(json!({"branch": "main", "content": "new\n", "commit_message": "Add"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body, json!({"file_path": "docs/new.md", "branch": "main"}));
    let again = json!({"branch": "main", "content": "x", "commit_message": "Add"});
    let edit =
        json!({"branch": "main", "content": "bmV3ZXIK", "encoding": "base64", "commit_message": "Edit"});
    expect_statuses(
        &sim,
        vec![
            (format!("POST {files}"), t, Some(again), 400),
            (format!("PUT {files}"), t, Some(edit), 200),
        ],
    )
    .await;
    let r = call(&sim, Method::GET, &format!("{files}/raw?ref=main"), t, None).await;
    assert_eq!(r.raw, b"newer\n");
    expect_statuses(
        &sim,
        vec![
            (
                format!("PUT {repo}/files/missing.md"),
                t,
                Some(json!({"branch": "main", "content": "x", "commit_message": "Edit"})),
                400,
            ),
            (
                format!("DELETE {files}"),
                t,
                Some(json!({"branch": "main", "commit_message": "Remove"})),
                204,
            ),
        ],
    )
    .await;

    // Commit diff, comments, statuses, cherry-pick, compare, contributors.
    let r = call(&sim, Method::GET, &format!("{repo}/commits/main/diff"), t, None).await;
    assert_eq!(r.body[0]["deleted_file"], true);
    assert_eq!(r.body[0]["old_path"], "docs/new.md");
    let head = call(&sim, Method::GET, &format!("{repo}/commits/main"), t, None)
        .await
        .body["id"]
        .as_str()
        .unwrap()
        .to_string();
    let r = call(
        &sim,
        Method::POST,
        &format!("{repo}/commits/{head}/comments"),
        t,
        Some(json!({"note": "nice"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["author"]["username"], "demo");
    let r = call(
        &sim,
        Method::GET,
        &format!("{repo}/commits/{head}/comments"),
        t,
        None,
    )
    .await;
    assert_eq!(r.body[0]["note"], "nice");
    let r = call(
        &sim,
        Method::POST,
        &format!("{repo}/commits/{head}/comments"),
        t,
        Some(json!({})),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let r = call(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{pid}/statuses/{head}"),
        t,
        Some(json!({"state": "success", "name": "lint"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["ref"], "main");
    let r = call(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{pid}/statuses/{head}"),
        t,
        Some(json!({"state": "great"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let r = call(
        &sim,
        Method::GET,
        &format!("{repo}/commits/{head}/statuses"),
        t,
        None,
    )
    .await;
    assert_eq!(r.body[0]["status"], "success");
    call(
        &sim,
        Method::POST,
        &format!("{repo}/branches"),
        t,
        Some(json!({"branch": "old", "ref": "main~"})),
    )
    .await;
    let first = call(
        &sim,
        Method::GET,
        &format!("{repo}/commits?ref_name=main"),
        t,
        None,
    )
    .await;
    let root = first.body.as_array().unwrap().last().unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    call(
        &sim,
        Method::POST,
        &format!("{repo}/branches"),
        t,
        Some(json!({"branch": "old", "ref": root})),
    )
    .await;
    let r = call(
        &sim,
        Method::POST,
        &format!("{repo}/commits/{head}/cherry_pick"),
        t,
        Some(json!({"branch": "old"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let skeleton = first
        .body
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["title"] == "Add the application skeleton")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let r = call(
        &sim,
        Method::POST,
        &format!("{repo}/commits/{skeleton}/cherry_pick"),
        t,
        Some(json!({"branch": "old"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["title"], "Add the application skeleton");
    let r = call(
        &sim,
        Method::POST,
        &format!("{repo}/commits/{skeleton}/cherry_pick"),
        t,
        Some(json!({"branch": "nope"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let r = call(
        &sim,
        Method::GET,
        &format!("{repo}/compare?from={root}&to=main"),
        t,
        None,
    )
    .await;
    assert_eq!(r.body["compare_same_ref"], false);
    assert_eq!(r.body["commit"]["id"], head.as_str());
    assert!(r.body["commits"].as_array().unwrap().len() >= 3);
    assert!(!r.body["diffs"].as_array().unwrap().is_empty());
    let r = call(
        &sim,
        Method::GET,
        &format!("{repo}/compare?from=main&to=main"),
        t,
        None,
    )
    .await;
    assert_eq!(r.body["compare_same_ref"], true);
    assert_eq!(r.body["commit"], Value::Null);
    let r = call(&sim, Method::GET, &format!("{repo}/contributors"), t, None).await;
    assert_eq!(r.body[0]["email"], "demo@example.com");
    assert!(r.body[0]["commits"].as_u64().unwrap() >= 5);

    // Protection and merged branches.
    let r = call(
        &sim,
        Method::PUT,
        &format!("{repo}/branches/old/protect?developers_can_push=true"),
        t,
        None,
    )
    .await;
    assert_eq!(r.body["protected"], true);
    assert_eq!(r.body["developers_can_push"], true);
    let r = call(
        &sim,
        Method::PUT,
        &format!("{repo}/branches/old/unprotect"),
        t,
        None,
    )
    .await;
    assert_eq!(r.body["protected"], false);
    let r = call(
        &sim,
        Method::PUT,
        &format!("{repo}/branches/zzz/protect"),
        t,
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    call(
        &sim,
        Method::POST,
        &format!("{repo}/branches"),
        t,
        Some(json!({"branch": "merged", "ref": root})),
    )
    .await;
    let r = call(&sim, Method::DELETE, &format!("{repo}/merged_branches"), t, None).await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
    assert_eq!(r.body, json!({"message": "202 Accepted"}));
    expect_statuses(
        &sim,
        vec![
            (format!("GET {repo}/branches/merged"), t, None, 404),
            (format!("GET {repo}/branches/old"), t, None, 200),
        ],
    )
    .await;
}

#[tokio::test]
async fn project_extras_forks_share_uploads_events() {
    let sim = start().await;
    let demo = sim.seed_demo();
    let (bob, bob_token) = sim.create_user("bob", false);
    let pid = demo.project_id;
    let t = Some(demo.token.as_str());
    let p = format!("/api/v4/projects/{pid}");

    // Fork into bob's namespace, clash, list, unlink, relink.
    let r = call(&sim, Method::POST, &format!("{p}/fork"), Some(&bob_token), None).await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["forked_from_project"]["id"], pid);
    assert_eq!(r.body["path_with_namespace"], "bob/demo-project");
    let fork = r.body["id"].as_u64().unwrap();
    let r = call(
        &sim,
        Method::POST,
        &format!("{p}/fork"),
        Some(&bob_token),
        Some(json!({"namespace": "bob"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    assert_eq!(r.body["message"]["name"], json!(["has already been taken"]));
    let r = call(&sim, Method::GET, &format!("{p}/forks"), t, None).await;
    assert_eq!(r.body[0]["id"], fork);
    let r = call(
        &sim,
        Method::GET,
        &format!("/api/v4/projects/{fork}/repository/commits"),
        Some(&bob_token),
        None,
    )
    .await;
    assert_eq!(r.body.as_array().unwrap().len(), 3);
    expect_statuses(
        &sim,
        vec![
            (
                format!("DELETE /api/v4/projects/{fork}/fork"),
                Some(&bob_token),
                None,
                204,
            ),
            (
                format!("DELETE /api/v4/projects/{fork}/fork"),
                Some(&bob_token),
                None,
                304,
            ),
            (
                format!("POST /api/v4/projects/{fork}/fork/{pid}"),
                Some(&bob_token),
                None,
                403,
            ),
            (
                format!("POST /api/v4/projects/{fork}/fork/{pid}"),
                Some(ROOT),
                None,
                201,
            ),
        ],
    )
    .await;
    let r = call(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{fork}/fork/{pid}"),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    assert_eq!(r.body, json!({"message": "Project already forked"}));

    // Archive.
    let r = call(&sim, Method::POST, &format!("{p}/archive"), t, None).await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["archived"], true);
    let r = call(&sim, Method::POST, &format!("{p}/unarchive"), t, None).await;
    assert_eq!(r.body["archived"], false);
    let r = call(
        &sim,
        Method::POST,
        &format!("{p}/archive"),
        Some(&bob_token),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);

    // Share with a group bob belongs to, which gives bob access.
    let g = call(
        &sim,
        Method::POST,
        "/api/v4/groups",
        Some(&bob_token),
        Some(json!({"name": "Bobs", "path": "bobs", "visibility": "public"})),
    )
    .await;
    let gid = g.body["id"].as_u64().unwrap();
    let r = call(
        &sim,
        Method::POST,
        &format!("{p}/share"),
        t,
        Some(json!({"group_id": gid, "group_access": 30})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["group_access"], 30);
    expect_statuses(
        &sim,
        vec![
            (
                format!("POST {p}/share"),
                t,
                Some(json!({"group_id": gid, "group_access": 30})),
                409,
            ),
            (
                format!("POST {p}/share"),
                t,
                Some(json!({"group_id": gid, "group_access": 31})),
                400,
            ),
        ],
    )
    .await;
    let r = call(&sim, Method::GET, &p, t, None).await;
    assert_eq!(r.body["shared_with_groups"][0]["group_id"], gid);
    let r = call(&sim, Method::GET, &format!("{p}/users"), t, None).await;
    let names: Vec<&str> = r
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["username"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"bob") && names.contains(&"demo"));
    expect_statuses(
        &sim,
        vec![
            (format!("DELETE {p}/share/{gid}"), t, None, 204),
            (format!("DELETE {p}/share/{gid}"), t, None, 404),
        ],
    )
    .await;

    // Uploads (multipart).
    let body = b"--BOUND\r\nContent-Disposition: form-data; name=\"file\"; filename=\"shot.png\"\r\nContent-Type: image/png\r\n\r\n\x89PNG data\r\n--BOUND--\r\n".to_vec();
    let r = send(
        &sim,
        Method::POST,
        &format!("{p}/uploads"),
        t,
        Some("multipart/form-data; boundary=BOUND"),
        body,
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["alt"], "shot");
    assert!(r.body["url"].as_str().unwrap().starts_with("/uploads/"));
    assert!(r.body["url"].as_str().unwrap().ends_with("/shot.png"));
    assert!(r.body["markdown"]
        .as_str()
        .unwrap()
        .starts_with("![shot](/uploads/"));
    let r = call(&sim, Method::POST, &format!("{p}/uploads"), t, Some(json!({}))).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);

    // Events.
    let r = call(&sim, Method::GET, &format!("{p}/events"), t, None).await;
    let actions: Vec<&str> = r
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action_name"].as_str().unwrap())
        .collect();
    assert!(actions.contains(&"opened") && actions.contains(&"commented on"));
    let note = r
        .body
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["action_name"] == "commented on")
        .unwrap();
    assert_eq!(note["note"]["body"], "I can reproduce this on main.");
    assert_eq!(note["author_username"], "demo");
    call(
        &sim,
        Method::POST,
        &format!("{p}/repository/files/x.txt"),
        t,
        Some(json!({"branch": "main", "content": "x", "commit_message": "x"})),
    )
    .await;
    let r = call(
        &sim,
        Method::GET,
        &format!("/api/v4/users/{}/events?action=pushed", demo.user_id),
        t,
        None,
    )
    .await;
    assert_eq!(r.body[0]["push_data"]["ref"], "main");
    assert_eq!(r.body[0]["push_data"]["commit_count"], 1);
    assert_eq!(r.body[0]["push_data"]["commit_title"], "x");
    let r = call(&sim, Method::GET, "/api/v4/users/nobody/events", t, None).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let r = call(&sim, Method::GET, &format!("{p}/languages"), t, None).await;
    assert!(r.body["Rust"].is_number());

    // Admin: create for a user, transfer to a group.
    let r = call(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/user/{bob}"),
        Some(ROOT),
        Some(json!({"name": "Given"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["path_with_namespace"], "bob/given");
    let given = r.body["id"].as_u64().unwrap();
    let r = call(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/user/{bob}"),
        Some(&bob_token),
        Some(json!({"name": "Nope"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let r = call(
        &sim,
        Method::POST,
        &format!("/api/v4/groups/{gid}/projects/{given}"),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["projects"][0]["path_with_namespace"], "bobs/given");
    let r = call(
        &sim,
        Method::GET,
        "/api/v4/groups?owned=true",
        Some(&bob_token),
        None,
    )
    .await;
    assert_eq!(r.body[0]["path"], "bobs");
}

#[tokio::test]
async fn ci_pipelines_jobs_triggers_variables_environments() {
    let sim = start().await;
    let demo = sim.seed_demo();
    let pid = demo.project_id;
    let t = Some(demo.token.as_str());
    let p = format!("/api/v4/projects/{pid}");

    // The seeded pipeline and its manual job.
    let r = call(&sim, Method::GET, &format!("{p}/pipelines"), t, None).await;
    assert_eq!(r.body.as_array().unwrap().len(), 1);
    assert_eq!(r.body[0]["status"], "success");
    assert!(r.body[0].get("before_sha").is_none());
    let r = call(&sim, Method::GET, &format!("{p}/jobs?scope[]=manual"), t, None).await;
    assert_eq!(r.body.as_array().unwrap().len(), 1);
    let deploy = r.body[0]["id"].as_u64().unwrap();
    let r = call(&sim, Method::POST, &format!("{p}/jobs/{deploy}/play"), t, None).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.body["status"], "pending");
    let r = call(&sim, Method::POST, &format!("{p}/jobs/{deploy}/play"), t, None).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        r.body,
        json!({"message": "400 (Bad request) \"Unplayable Job\" not given"})
    );
    let r = call(&sim, Method::GET, &format!("{p}/jobs?scope[]=bogus"), t, None).await;
    assert_eq!(r.body, json!({"error": "scope does not have a valid value"}));

    // A new pipeline gets build and test jobs.
    let r = call(
        &sim,
        Method::POST,
        &format!("{p}/pipeline"),
        t,
        Some(json!({"ref": "main"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["status"], "running");
    assert_eq!(r.body["ref"], "main");
    assert_eq!(r.body["user"]["username"], "demo");
    let pipeline = r.body["id"].as_u64().unwrap();
    let r = call(
        &sim,
        Method::POST,
        &format!("{p}/pipeline"),
        t,
        Some(json!({"ref": "nope"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let r = call(
        &sim,
        Method::GET,
        &format!("{p}/pipelines/{pipeline}/jobs"),
        t,
        None,
    )
    .await;
    let stages: Vec<&str> = r
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["stage"].as_str().unwrap())
        .collect();
    assert_eq!(stages, vec!["test", "build"]);
    let build = r.body[1]["id"].as_u64().unwrap();
    let test = r.body[0]["id"].as_u64().unwrap();
    assert_eq!(r.body[1]["artifacts_file"]["filename"], "artifacts.zip");
    assert_eq!(r.body[1]["pipeline"]["id"], pipeline);
    let r = call(&sim, Method::GET, &format!("{p}/jobs/{build}/trace"), t, None).await;
    assert!(String::from_utf8_lossy(&r.raw).contains("Job succeeded"));
    assert!(header(&r, "content-type").starts_with("text/plain"));
    expect_statuses(
        &sim,
        vec![
            (format!("GET {p}/jobs/{build}/artifacts"), t, None, 200),
            (format!("GET {p}/jobs/{test}/artifacts"), t, None, 404),
            (
                format!("GET {p}/jobs/artifacts/main/download?job=build"),
                t,
                None,
                200,
            ),
            (format!("POST {p}/jobs/{build}/artifacts/keep"), t, None, 200),
        ],
    )
    .await;
    let r = call(
        &sim,
        Method::POST,
        &format!("{p}/pipelines/{pipeline}/cancel"),
        t,
        None,
    )
    .await;
    // V4's pipeline cancel sets `status 200` (lib/api/pipelines.rb).
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.body["status"], "canceled");
    let r = call(
        &sim,
        Method::GET,
        &format!("{p}/pipelines?scope=finished&status=canceled"),
        t,
        None,
    )
    .await;
    assert_eq!(r.body[0]["id"], pipeline);
    let r = call(
        &sim,
        Method::POST,
        &format!("{p}/pipelines/{pipeline}/retry"),
        t,
        None,
    )
    .await;
    assert_eq!(r.body["status"], "running");
    let r = call(&sim, Method::POST, &format!("{p}/jobs/{build}/retry"), t, None).await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["status"], "pending");
    let r = call(&sim, Method::POST, &format!("{p}/jobs/{build}/erase"), t, None).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    // V4 finds the pipeline with `pipelines.find`, whose `RecordNotFound` is the generic `404 Not found`.
    let r = call(&sim, Method::GET, &format!("{p}/pipelines/999"), t, None).await;
    assert_eq!(r.body, json!({"message": "404 Not found"}));

    // Triggers.
    let r = call(&sim, Method::POST, &format!("{p}/triggers"), t, Some(json!({}))).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let r = call(
        &sim,
        Method::POST,
        &format!("{p}/triggers"),
        t,
        Some(json!({"description": "ci"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["owner"]["username"], "demo");
    let trigger = r.body["id"].as_u64().unwrap();
    let token = r.body["token"].as_str().unwrap().to_string();
    let r = send(
        &sim,
        Method::POST,
        &format!("{p}/trigger/pipeline"),
        None,
        Some("application/x-www-form-urlencoded"),
        format!("ref=main&token={token}&variables[DEPLOY]=yes").into_bytes(),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["ref"], "main");
    assert_eq!(r.body["source"], "trigger");
    let triggered = r.body["id"].as_u64().unwrap();
    let r = call(
        &sim,
        Method::GET,
        &format!("{p}/pipelines/{triggered}/variables"),
        t,
        None,
    )
    .await;
    assert_eq!(r.body, json!([{"key": "DEPLOY", "value": "yes"}]));
    expect_statuses(
        &sim,
        vec![
            (
                format!("POST {p}/ref/main/trigger/pipeline?token=wrong"),
                None,
                None,
                404,
            ),
            (
                format!("POST {p}/ref/main/trigger/pipeline"),
                None,
                Some(json!({"token": token, "variables": {"A": "1"}})),
                201,
            ),
        ],
    )
    .await;
    let r = call(&sim, Method::GET, &format!("{p}/triggers/{trigger}"), t, None).await;
    assert!(r.body["last_used"].is_string());
    let r = call(
        &sim,
        Method::PUT,
        &format!("{p}/triggers/{trigger}"),
        t,
        Some(json!({"description": "renamed"})),
    )
    .await;
    assert_eq!(r.body["description"], "renamed");
    let r = call(
        &sim,
        Method::POST,
        &format!("{p}/triggers/{trigger}/take_ownership"),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(r.body["owner"]["username"], "root");
    let r = call(&sim, Method::DELETE, &format!("{p}/triggers/{trigger}"), t, None).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    let r = call(&sim, Method::GET, &format!("{p}/triggers"), t, None).await;
    assert_eq!(r.body, json!([]));

    // Variables.
    let r = call(
        &sim,
        Method::POST,
        &format!("{p}/variables"),
        t,
        Some(json!({"key": "TOKEN", "value": "s3cret", "protected": true})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(
        r.body,
        json!({"variable_type": "env_var", "key": "TOKEN", "value": "s3cret", "protected": true, "masked": false,
            "hidden": false, "raw": false, "environment_scope": "*", "description": null})
    );
    let r = call(
        &sim,
        Method::POST,
        &format!("{p}/variables"),
        t,
        Some(json!({"key": "TOKEN", "value": "x"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let r = call(
        &sim,
        Method::PUT,
        &format!("{p}/variables/TOKEN"),
        t,
        Some(json!({"value": "new"})),
    )
    .await;
    assert_eq!(r.body["value"], "new");
    let r = call(&sim, Method::DELETE, &format!("{p}/variables/TOKEN"), t, None).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    let r = call(&sim, Method::GET, &format!("{p}/variables/TOKEN"), t, None).await;
    assert_eq!(r.body, json!({"message": "404 Variable Not Found"}));

    // Environments and deployments.
    let r = call(
        &sim,
        Method::POST,
        &format!("{p}/environments"),
        t,
        Some(json!({"name": "review/app", "slug": "x"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let r = call(
        &sim,
        Method::POST,
        &format!("{p}/environments"),
        t,
        Some(json!({"name": "review/app", "external_url": "https://r.example.com"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["slug"], "review-app");
    assert_eq!(
        r.body["project"]["path_with_namespace"],
        "demo-group/demo-project"
    );
    let env = r.body["id"].as_u64().unwrap();
    let r = call(
        &sim,
        Method::PUT,
        &format!("{p}/environments/{env}"),
        t,
        Some(json!({"external_url": "https://s.example.com"})),
    )
    .await;
    assert_eq!(r.body["external_url"], "https://s.example.com");
    let r = call(
        &sim,
        Method::POST,
        &format!("{p}/environments/{env}/stop"),
        t,
        None,
    )
    .await;
    assert_eq!(r.body["state"], "stopped");
    let r = call(&sim, Method::DELETE, &format!("{p}/environments/{env}"), t, None).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    let r = call(&sim, Method::GET, &format!("{p}/environments"), t, None).await;
    assert_eq!(r.body[0]["name"], "production");
    let r = call(&sim, Method::GET, &format!("{p}/deployments"), t, None).await;
    assert_eq!(r.body[0]["environment"]["name"], "production");
    assert_eq!(r.body[0]["deployable"]["name"], "deploy");
    let dep = r.body[0]["id"].as_u64().unwrap();
    let r = call(&sim, Method::GET, &format!("{p}/deployments/{dep}"), t, None).await;
    assert_eq!(r.body["iid"], 1);
    let r = call(&sim, Method::GET, &format!("{p}/deployments/99"), t, None).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
}
