//! End-to-end V3 flows through svcgate → svc-sim, as legacy tools run them: each test is one story, and checks
//! the values a V3 client reads back at every step. The first is the shortest: create a project with
//! `visibility_level`, create an issue, read it by its global id, add a note, delete the issue.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::common::{get, send, send_json, Answer, TestGateway};
use http::{Method, StatusCode};
use serde_json::{json, Value};
use svc_sim::{DemoSeed, SimHandle};

const ADMIN: &str = "root-token";

struct Client {
    sim: SimHandle,
    demo: DemoSeed,
    gateway: TestGateway,
}

impl Client {
    async fn new() -> Self {
        let (sim, demo, gateway) = common::sim::with_gateway().await;
        Client { sim, demo, gateway }
    }

    async fn call(&self, token: &str, method: Method, path: &str, body: Option<Value>) -> Answer {
        let url = format!("{}/api/v3{path}", self.gateway.url());
        let body = body.map(|body| ("application/json", serde_json::to_vec(&body).unwrap()));
        send(method, &url, &[("private-token", token)], body).await
    }

    /// Calls as the demo user and expects `status`.
    async fn ok(&self, method: Method, path: &str, body: Option<Value>, status: u16) -> Value {
        self.ok_as(&self.demo.token.clone(), method, path, body, status)
            .await
    }

    async fn ok_as(
        &self,
        token: &str,
        method: Method,
        path: &str,
        body: Option<Value>,
        status: u16,
    ) -> Value {
        let answer = self.call(token, method.clone(), path, body).await;
        assert_eq!(
            answer.status.as_u16(),
            status,
            "{method} {path}: {}",
            String::from_utf8_lossy(&answer.body)
        );
        if answer.body.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&answer.body)
                .unwrap_or(Value::String(String::from_utf8_lossy(&answer.body).into()))
        }
    }

    fn p(&self) -> String {
        format!("/projects/{}", self.demo.project_id)
    }
}

#[tokio::test]
async fn a_legacy_client_creates_a_project_and_works_an_issue_through_v3() {
    let sim = common::sim::start().await;
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

#[tokio::test]
async fn projects_create_update_star_fork_archive_share_and_delete() {
    let c = Client::new().await;
    let made = c
        .ok(
            Method::POST,
            "/projects",
            Some(json!({"name": "tool", "visibility_level": 10, "builds_enabled": false})),
            201,
        )
        .await;
    assert_eq!(
        (made["visibility_level"].clone(), made["builds_enabled"].clone()),
        (json!(10), json!(false))
    );
    let id = made["id"].as_u64().unwrap();
    let edited = c
        .ok(
            Method::PUT,
            &format!("/projects/{id}"),
            Some(json!({"public": true, "description": "d"})),
            200,
        )
        .await;
    assert_eq!(
        (edited["public"].clone(), edited["description"].clone()),
        (json!(true), json!("d"))
    );
    let starred = c
        .ok(Method::POST, &format!("/projects/{id}/star"), None, 201)
        .await;
    assert_eq!(starred["star_count"], json!(1));
    let listed = c.ok(Method::GET, "/projects/starred", None, 200).await;
    assert!(listed.as_array().unwrap().iter().any(|p| p["id"] == json!(id)));
    assert!(
        listed[0].get("permissions").is_none(),
        "starred lists carry plain V3 projects"
    );
    let unstarred = c
        .ok(Method::DELETE, &format!("/projects/{id}/star"), None, 200)
        .await;
    assert_eq!(unstarred["star_count"], json!(0));
    let fork = c
        .ok(
            Method::POST,
            &format!("/projects/fork/{id}"),
            Some(json!({"namespace": "demo-group"})),
            201,
        )
        .await;
    assert_eq!(fork["forked_from_project"]["id"], json!(id));
    let archived = c
        .ok(Method::POST, &format!("/projects/{id}/archive"), None, 201)
        .await;
    assert_eq!(archived["archived"], json!(true));
    c.ok(Method::POST, &format!("/projects/{id}/unarchive"), None, 201)
        .await;
    let link = c
        .ok(
            Method::POST,
            &format!("/projects/{id}/share"),
            Some(json!({"group_id": c.demo.group_id, "group_access": 30})),
            201,
        )
        .await;
    assert_eq!(link["group_access"], json!(30));
    let shown = c.ok(Method::GET, &format!("/projects/{id}"), None, 200).await;
    assert_eq!(shown["shared_with_groups"][0]["group_id"], json!(c.demo.group_id));
    c.ok(
        Method::DELETE,
        &format!("/projects/{id}/share/{}", c.demo.group_id),
        None,
        204,
    )
    .await;
    let deleted = c.ok(Method::DELETE, &format!("/projects/{id}"), None, 200).await;
    assert_eq!(deleted, json!(true));
}

#[tokio::test]
async fn files_commits_tree_blobs_and_archives() {
    let c = Client::new().await;
    let p = c.p();
    let created = c
        .ok(
            Method::POST,
            &format!("{p}/repository/files"),
            Some(json!({"file_path": "lib/deep/thing.rb", "branch_name": "main", "content": "puts 1", "commit_message": "add"})),
            201,
        )
        .await;
    assert_eq!(
        created,
        json!({"file_path": "lib/deep/thing.rb", "branch": "main", "branch_name": "main"})
    );
    let read = c
        .ok(
            Method::GET,
            &format!("{p}/repository/files?file_path=lib/deep/thing.rb&ref=main"),
            None,
            200,
        )
        .await;
    assert_eq!(read["content"], json!("cHV0cyAx"), "base64 of the content");
    c.ok(
        Method::PUT,
        &format!("{p}/repository/files"),
        Some(json!({"file_path": "lib/deep/thing.rb", "branch_name": "main", "content": "puts 2", "commit_message": "edit"})),
        200,
    )
    .await;
    let commit = c
        .ok(
            Method::POST,
            &format!("{p}/repository/commits"),
            Some(json!({"branch_name": "main", "commit_message": "more", "actions": [{"action": "create", "file_path": "lib/deep/other.rb", "content": "puts 3"}]})),
            201,
        )
        .await;
    let sha = commit["id"].as_str().unwrap().to_owned();
    let tree = c
        .ok(
            Method::GET,
            &format!("{p}/repository/tree?ref_name=main&path=lib/deep"),
            None,
            200,
        )
        .await;
    let names: Vec<&str> = tree
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    let raw = c
        .call(
            &c.demo.token,
            Method::GET,
            &format!("{p}/repository/blobs/{sha}?filepath=lib/deep/thing.rb"),
            None,
        )
        .await;
    assert_eq!((raw.status, &raw.body[..]), (StatusCode::OK, &b"puts 2"[..]));
    let raw = c
        .call(
            &c.demo.token,
            Method::GET,
            &format!("{p}/repository/commits/{sha}/blob?filepath=lib/deep/other.rb"),
            None,
        )
        .await;
    assert_eq!(&raw.body[..], b"puts 3");
    let blob_id = read["blob_id"].as_str().unwrap().to_owned();
    let raw = c
        .call(
            &c.demo.token,
            Method::GET,
            &format!("{p}/repository/raw_blobs/{blob_id}"),
            None,
        )
        .await;
    assert_eq!(&raw.body[..], b"puts 1");
    let missing = c
        .call(
            &c.demo.token,
            Method::GET,
            &format!("{p}/repository/blobs/{sha}"),
            None,
        )
        .await;
    assert_eq!(
        missing.status,
        StatusCode::BAD_REQUEST,
        "filepath is required in V3"
    );
    let archive = c
        .call(
            &c.demo.token,
            Method::GET,
            &format!("{p}/repository/archive"),
            None,
        )
        .await;
    assert_eq!(archive.status, StatusCode::OK);
    assert!(!archive.body.is_empty());
    let diff = c
        .ok(
            Method::GET,
            &format!("{p}/repository/commits/{sha}/diff"),
            None,
            200,
        )
        .await;
    assert_eq!(diff[0]["new_path"], json!("lib/deep/other.rb"));
    assert_eq!(diff[0]["too_large"], json!(false));
    let deleted = c
        .ok(
            Method::DELETE,
            &format!("{p}/repository/files?file_path=lib/deep/thing.rb&branch_name=main&commit_message=rm"),
            None,
            200,
        )
        .await;
    assert_eq!(deleted["file_path"], json!("lib/deep/thing.rb"));
    let gone = c
        .call(
            &c.demo.token,
            Method::GET,
            &format!("{p}/repository/files?file_path=lib/deep/thing.rb&ref=main"),
            None,
        )
        .await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn branches_and_tags_with_slashes_and_releases() {
    let c = Client::new().await;
    let p = c.p();
    let branch = c
        .ok(
            Method::POST,
            &format!("{p}/repository/branches"),
            Some(json!({"branch_name": "feature/x", "ref": "main"})),
            201,
        )
        .await;
    assert_eq!(branch["name"], json!("feature/x"));
    let all = c
        .ok(Method::GET, &format!("{p}/repository/branches"), None, 200)
        .await;
    assert!(all
        .as_array()
        .unwrap()
        .iter()
        .any(|b| b["name"] == json!("feature/x")));
    let deleted = c
        .ok(
            Method::DELETE,
            &format!("{p}/repository/branches/feature/x"),
            None,
            200,
        )
        .await;
    assert_eq!(deleted, json!({"branch_name": "feature/x"}));
    for name in ["v1.0", "v2.0", "release/3"] {
        c.ok(
            Method::POST,
            &format!("{p}/repository/tags"),
            Some(json!({"tag_name": name, "ref": "main"})),
            201,
        )
        .await;
    }
    let tags = c
        .ok(Method::GET, &format!("{p}/repository/tags"), None, 200)
        .await;
    let names: Vec<&str> = tags
        .as_array()
        .unwrap()
        .iter()
        .map(|tag| tag["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["v2.0", "v1.0", "release/3"], "by name, descending");
    let release = c
        .ok(
            Method::POST,
            &format!("{p}/repository/tags/v1.0/release"),
            Some(json!({"description": "first"})),
            201,
        )
        .await;
    assert_eq!(release["description"], json!("first"));
    let deleted = c
        .ok(
            Method::DELETE,
            &format!("{p}/repository/tags/release/3"),
            None,
            200,
        )
        .await;
    assert_eq!(deleted, json!({"tag_name": "release/3"}));
}

#[tokio::test]
async fn issues_with_or_labels_iid_move_time_tracking_subscription_and_todo() {
    let c = Client::new().await;
    let p = c.p();
    let bug = c
        .ok(
            Method::POST,
            &format!("{p}/issues"),
            Some(json!({"title": "bug", "labels": "bug"})),
            201,
        )
        .await;
    let ux = c
        .ok(
            Method::POST,
            &format!("{p}/issues"),
            Some(json!({"title": "ux", "labels": "ux"})),
            201,
        )
        .await;
    let either = c
        .ok(
            Method::GET,
            &format!("{p}/issues?labels=bug,ux&state=opened"),
            None,
            200,
        )
        .await;
    let ids: Vec<&Value> = either
        .as_array()
        .unwrap()
        .iter()
        .map(|issue| &issue["id"])
        .collect();
    assert!(
        ids.contains(&&bug["id"]) && ids.contains(&&ux["id"]),
        "labels match any of them in V3"
    );
    let by_iid = c
        .ok(Method::GET, &format!("{p}/issues?iid={}", ux["iid"]), None, 200)
        .await;
    assert_eq!(by_iid.as_array().unwrap().len(), 1);
    assert_eq!(by_iid[0]["id"], ux["id"]);
    let id = bug["id"].as_u64().unwrap();
    let estimate = c
        .ok(
            Method::POST,
            &format!("{p}/issues/{id}/time_estimate"),
            Some(json!({"duration": "3h"})),
            200,
        )
        .await;
    assert_eq!(estimate["time_estimate"], json!(10800));
    let spent = c
        .ok(
            Method::POST,
            &format!("{p}/issues/{id}/add_spent_time"),
            Some(json!({"duration": "1h"})),
            201,
        )
        .await;
    assert_eq!(spent["total_time_spent"], json!(3600));
    let stats = c
        .ok(Method::GET, &format!("{p}/issues/{id}/time_stats"), None, 200)
        .await;
    assert_eq!(stats["time_estimate"], json!(10800));
    c.ok(
        Method::DELETE,
        &format!("{p}/issues/{id}/subscription"),
        None,
        200,
    )
    .await;
    let unsubscribed = c.ok(Method::GET, &format!("{p}/issues/{id}"), None, 200).await;
    assert_eq!(unsubscribed["subscribed"], json!(false));
    c.ok(Method::POST, &format!("{p}/issues/{id}/subscription"), None, 201)
        .await;
    let todo = c
        .ok(Method::POST, &format!("{p}/issues/{id}/todo"), None, 201)
        .await;
    assert_eq!(todo["target"]["id"], json!(id));
    let other = c
        .ok(Method::POST, "/projects", Some(json!({"name": "elsewhere"})), 201)
        .await;
    let moved = c
        .ok(
            Method::POST,
            &format!("{p}/issues/{}/move", ux["id"]),
            Some(json!({"to_project_id": other["id"]})),
            201,
        )
        .await;
    assert_eq!(moved["project_id"], other["id"]);
    let moved_back = c
        .ok(
            Method::GET,
            &format!("/projects/{}/issues/{}", other["id"], moved["id"]),
            None,
            200,
        )
        .await;
    assert_eq!(moved_back["title"], json!("ux"));
}

#[tokio::test]
async fn notes_and_award_emoji_on_issues() {
    let c = Client::new().await;
    let p = c.p();
    let issue = c
        .ok(
            Method::POST,
            &format!("{p}/issues"),
            Some(json!({"title": "discuss"})),
            201,
        )
        .await;
    let id = issue["id"].as_u64().unwrap();
    let note = c
        .ok(
            Method::POST,
            &format!("{p}/issues/{id}/notes"),
            Some(json!({"body": "first"})),
            201,
        )
        .await;
    let note_id = note["id"].as_u64().unwrap();
    c.ok(
        Method::POST,
        &format!("{p}/issues/{id}/notes"),
        Some(json!({"body": "second"})),
        201,
    )
    .await;
    let notes = c
        .ok(Method::GET, &format!("{p}/issues/{id}/notes"), None, 200)
        .await;
    assert_eq!(notes[0]["body"], json!("first"), "oldest first");
    // Not a vote: V3 refused a thumbsup on one's own issue (v3 award_emoji.rb, `can_award_awardable?`).
    let award = c
        .ok(
            Method::POST,
            &format!("{p}/issues/{id}/award_emoji"),
            Some(json!({"name": "smile"})),
            201,
        )
        .await;
    assert_eq!(award["awardable_id"], json!(id));
    let note_award = c
        .ok(
            Method::POST,
            &format!("{p}/issues/{id}/notes/{note_id}/award_emoji"),
            Some(json!({"name": "tada"})),
            201,
        )
        .await;
    let removed = c
        .ok(
            Method::DELETE,
            &format!("{p}/issues/{id}/notes/{note_id}/award_emoji/{}", note_award["id"]),
            None,
            200,
        )
        .await;
    assert_eq!(removed["name"], json!("tada"));
    let removed = c
        .ok(
            Method::DELETE,
            &format!("{p}/issues/{id}/award_emoji/{}", award["id"]),
            None,
            200,
        )
        .await;
    assert_eq!(removed["name"], json!("smile"));
    let deleted = c
        .ok(
            Method::DELETE,
            &format!("{p}/issues/{id}/notes/{note_id}"),
            None,
            200,
        )
        .await;
    assert_eq!(deleted["body"], json!("first"));
    let left = c
        .ok(Method::GET, &format!("{p}/issues/{id}/notes"), None, 200)
        .await;
    assert_eq!(left.as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn merge_requests_update_comment_close_issues_versions_and_merge() {
    let c = Client::new().await;
    let p = c.p();
    let issue = c
        .ok(
            Method::POST,
            &format!("{p}/issues"),
            Some(json!({"title": "fix me"})),
            201,
        )
        .await;
    c.ok(
        Method::POST,
        &format!("{p}/repository/branches"),
        Some(json!({"branch_name": "fix", "ref": "main"})),
        201,
    )
    .await;
    c.ok(
        Method::POST,
        &format!("{p}/repository/commits"),
        Some(json!({"branch_name": "fix", "commit_message": "fix", "actions": [{"action": "create", "file_path": "fix.txt", "content": "ok"}]})),
        201,
    )
    .await;
    let mr = c
        .ok(
            Method::POST,
            &format!("{p}/merge_requests"),
            Some(json!({"title": "Fix", "source_branch": "fix", "target_branch": "main", "description": format!("Closes #{}", issue["iid"])})),
            201,
        )
        .await;
    let id = mr["id"].as_u64().unwrap();
    let updated = c
        .ok(
            Method::PUT,
            &format!("{p}/merge_request/{id}"),
            Some(json!({"title": "Fix it"})),
            200,
        )
        .await;
    assert_eq!(updated["title"], json!("Fix it"));
    let comment = c
        .ok(
            Method::POST,
            &format!("{p}/merge_requests/{id}/comments"),
            Some(json!({"note": "LGTM"})),
            201,
        )
        .await;
    assert_eq!(comment["note"], json!("LGTM"));
    assert_eq!(comment["author"]["username"], json!("demo"));
    let comments = c
        .ok(
            Method::GET,
            &format!("{p}/merge_requests/{id}/comments"),
            None,
            200,
        )
        .await;
    // V3 `lib/api/v3/merge_requests.rb` lists `merge_request.notes.fresh`, oldest first and system notes
    // included: the title change's note (`SystemNoteService.change_title`) comes before the comment.
    assert_eq!(
        comments,
        json!([
            {"note": "changed title from **Fix** to **Fix{+ it+}**", "author": comment["author"].clone()},
            {"note": "LGTM", "author": comment["author"].clone()},
        ])
    );
    let closes = c
        .ok(
            Method::GET,
            &format!("{p}/merge_requests/{id}/closes_issues"),
            None,
            200,
        )
        .await;
    assert_eq!(closes[0]["id"], issue["id"]);
    assert!(closes[0].get("subscribed").is_some());
    let versions = c
        .ok(
            Method::GET,
            &format!("{p}/merge_requests/{id}/versions"),
            None,
            200,
        )
        .await;
    assert!(!versions.as_array().unwrap().is_empty());
    let commits = c
        .ok(
            Method::GET,
            &format!("{p}/merge_requests/{id}/commits"),
            None,
            200,
        )
        .await;
    assert_eq!(commits[0]["title"], json!("fix"));
    let merged = c
        .ok(
            Method::PUT,
            &format!("{p}/merge_requests/{id}/merge"),
            Some(json!({"merge_when_build_succeeds": false})),
            200,
        )
        .await;
    assert_eq!(merged["state"], json!("merged"));
    let closed = c
        .ok(Method::GET, &format!("{p}/issues/{}", issue["id"]), None, 200)
        .await;
    assert_eq!(closed["state"], json!("closed"), "merging closed the issue");
}

#[tokio::test]
async fn groups_and_members() {
    let c = Client::new().await;
    let group = c
        .ok(
            Method::POST,
            "/groups",
            Some(json!({"name": "Ops", "path": "ops", "visibility_level": 10})),
            201,
        )
        .await;
    assert_eq!(group["visibility_level"], json!(10));
    let gid = group["id"].as_u64().unwrap();
    let (user, _) = c.sim.create_user("oncall", false);
    let member = c
        .ok(
            Method::POST,
            &format!("/groups/{gid}/members"),
            Some(json!({"user_id": user, "access_level": 30})),
            201,
        )
        .await;
    assert_eq!(member["access_level"], json!(30));
    let conflict = c
        .call(
            &c.demo.token,
            Method::POST,
            &format!("/groups/{gid}/members"),
            Some(json!({"user_id": user, "access_level": 30})),
        )
        .await;
    assert_eq!(
        conflict.status,
        StatusCode::CONFLICT,
        "groups answered 409 in V3 too"
    );
    c.ok(
        Method::PUT,
        &format!("/groups/{gid}/members/{user}"),
        Some(json!({"access_level": 40})),
        200,
    )
    .await;
    let members = c
        .ok(Method::GET, &format!("/groups/{gid}/members"), None, 200)
        .await;
    assert!(members
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["id"] == json!(user) && m["access_level"] == json!(40)));
    let project = c
        .ok(
            Method::POST,
            "/projects",
            Some(json!({"name": "runbooks", "namespace_id": gid})),
            201,
        )
        .await;
    let projects = c
        .ok(Method::GET, &format!("/groups/{gid}/projects"), None, 200)
        .await;
    assert_eq!(projects[0]["id"], project["id"]);
    let detail = c.ok(Method::GET, &format!("/groups/{gid}"), None, 200).await;
    assert_eq!(
        detail["projects"][0]["visibility_level"],
        json!(0),
        "nested projects in the V3 shape"
    );
    let removed = c
        .ok(
            Method::DELETE,
            &format!("/groups/{gid}/members/{user}"),
            None,
            200,
        )
        .await;
    assert_eq!(removed["id"], json!(user));
    let deleted = c.ok(Method::DELETE, &format!("/groups/{gid}"), None, 200).await;
    assert_eq!(deleted["path"], json!("ops"));
    let owned = c.ok(Method::GET, "/groups/owned", None, 200).await;
    assert!(!owned.as_array().unwrap().iter().any(|g| g["id"] == json!(gid)));
}

#[tokio::test]
async fn pipelines_builds_variables_and_environments() {
    let c = Client::new().await;
    let p = c.p();
    let builds = c
        .ok(Method::GET, &format!("{p}/builds?scope=success"), None, 200)
        .await;
    let build = builds
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == json!("build"))
        .expect("a succeeded build");
    assert_eq!(build["status"], json!("success"));
    assert!(build.get("artifacts_file").is_some());
    let trace = c
        .call(
            &c.demo.token,
            Method::GET,
            &format!("{p}/builds/{}/trace", build["id"]),
            None,
        )
        .await;
    assert_eq!(trace.status, StatusCode::OK);
    let bad = c
        .call(
            &c.demo.token,
            Method::GET,
            &format!("{p}/builds?scope=sleeping"),
            None,
        )
        .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    let retried = c
        .ok(
            Method::POST,
            &format!("{p}/builds/{}/retry", build["id"]),
            None,
            201,
        )
        .await;
    assert_ne!(retried["id"], build["id"]);
    let variable = c
        .ok_as(
            ADMIN,
            Method::POST,
            &format!("{p}/variables"),
            Some(json!({"key": "TOKEN", "value": "s3cret"})),
            201,
        )
        .await;
    assert_eq!(variable["key"], json!("TOKEN"));
    let deleted = c
        .ok(Method::DELETE, &format!("{p}/variables/TOKEN"), None, 200)
        .await;
    assert_eq!(
        deleted,
        json!({"key": "TOKEN", "value": "s3cret", "protected": false})
    );
    let env = c
        .ok(
            Method::POST,
            &format!("{p}/environments"),
            Some(json!({"name": "review"})),
            201,
        )
        .await;
    assert_eq!(env["project"]["visibility_level"], json!(20));
    let refused = c
        .call(
            &c.demo.token,
            Method::POST,
            &format!("{p}/environments"),
            Some(json!({"name": "x", "slug": "x"})),
        )
        .await;
    assert_eq!(
        refused.status,
        StatusCode::BAD_REQUEST,
        "slug is generated and cannot be given"
    );
    let deleted = c
        .ok(
            Method::DELETE,
            &format!("{p}/environments/{}", env["id"]),
            None,
            200,
        )
        .await;
    assert_eq!(deleted["name"], json!("review"));
}

fn ssh_key(n: u8) -> String {
    format!(
        "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC{}{n} flow@example.com",
        "k".repeat(40)
    )
}

#[tokio::test]
async fn users_block_keys_and_emails() {
    let c = Client::new().await;
    let user = c
        .ok_as(
            ADMIN,
            Method::POST,
            "/users",
            Some(json!({"email": "ops@example.com", "username": "ops", "name": "Ops", "password": "12345678", "confirm": false})),
            201,
        )
        .await;
    let id = user["id"].as_u64().unwrap();
    assert_eq!(
        c.ok_as(ADMIN, Method::PUT, &format!("/users/{id}/block"), None, 200)
            .await,
        json!(true)
    );
    let shown = c
        .ok_as(ADMIN, Method::GET, &format!("/users/{id}"), None, 200)
        .await;
    assert_eq!(shown["state"], json!("blocked"));
    assert_eq!(
        c.ok_as(ADMIN, Method::PUT, &format!("/users/{id}/unblock"), None, 200)
            .await,
        json!(true)
    );
    let key = c
        .ok_as(
            ADMIN,
            Method::POST,
            &format!("/users/{id}/keys"),
            Some(json!({"title": "laptop", "key": ssh_key(1)})),
            201,
        )
        .await;
    let keys = c
        .ok_as(ADMIN, Method::GET, &format!("/users/{id}/keys"), None, 200)
        .await;
    assert_eq!(keys[0]["title"], json!("laptop"));
    let removed = c
        .ok_as(
            ADMIN,
            Method::DELETE,
            &format!("/users/{id}/keys/{}", key["id"]),
            None,
            200,
        )
        .await;
    assert_eq!(removed["title"], json!("laptop"), "V3 answered the deleted key");
    let mine = c
        .ok(
            Method::POST,
            "/user/keys",
            Some(json!({"title": "mine", "key": ssh_key(2)})),
            201,
        )
        .await;
    let listed = c.ok(Method::GET, "/user/keys", None, 200).await;
    assert!(listed.as_array().unwrap().iter().any(|k| k["id"] == mine["id"]));
    let removed = c
        .ok(Method::DELETE, &format!("/user/keys/{}", mine["id"]), None, 200)
        .await;
    assert_eq!(removed["title"], json!("mine"));
    c.ok(
        Method::POST,
        "/user/emails",
        Some(json!({"email": "second@example.com"})),
        201,
    )
    .await;
    let emails = c.ok(Method::GET, "/user/emails", None, 200).await;
    assert!(emails
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["email"] == json!("second@example.com")));
    let theirs = c
        .ok_as(
            ADMIN,
            Method::GET,
            &format!("/users/{}/emails", c.demo.user_id),
            None,
            200,
        )
        .await;
    assert_eq!(theirs, emails);
}

#[tokio::test]
async fn deploy_keys_through_the_keys_alias_enable_and_disable() {
    let c = Client::new().await;
    let p = c.p();
    let other = c
        .ok(Method::POST, "/projects", Some(json!({"name": "consumer"})), 201)
        .await;
    let key = c
        .ok(
            Method::POST,
            &format!("{p}/keys"),
            Some(json!({"title": "deploy", "key": ssh_key(3), "can_push": false})),
            201,
        )
        .await;
    let listed = c.ok(Method::GET, &format!("{p}/keys"), None, 200).await;
    assert_eq!(listed[0]["title"], json!("deploy"));
    let enabled = c
        .ok(
            Method::POST,
            &format!("/projects/{}/deploy_keys/{}/enable", other["id"], key["id"]),
            None,
            201,
        )
        .await;
    assert_eq!(enabled["id"], key["id"]);
    let disabled = c
        .ok(
            Method::DELETE,
            &format!("/projects/{}/keys/{}/disable", other["id"], key["id"]),
            None,
            200,
        )
        .await;
    assert_eq!(disabled["title"], json!("deploy"));
    let left = c
        .ok(
            Method::GET,
            &format!("/projects/{}/deploy_keys", other["id"]),
            None,
            200,
        )
        .await;
    assert!(left.as_array().unwrap().is_empty());
    let deleted = c
        .ok(
            Method::DELETE,
            &format!("{p}/deploy_keys/{}", key["id"]),
            None,
            200,
        )
        .await;
    assert_eq!(deleted["id"], key["id"]);
}

#[tokio::test]
async fn hooks_services_and_snippets() {
    let c = Client::new().await;
    let p = c.p();
    let hook = c
        .ok(
            Method::POST,
            &format!("{p}/hooks"),
            Some(json!({"url": "https://ci.example/hook", "build_events": true})),
            201,
        )
        .await;
    assert_eq!(hook["build_events"], json!(true));
    assert!(hook.get("job_events").is_none());
    let edited = c
        .ok(
            Method::PUT,
            &format!("{p}/hooks/{}", hook["id"]),
            Some(json!({"url": "https://ci.example/hook", "build_events": false})),
            200,
        )
        .await;
    assert_eq!(edited["build_events"], json!(false));
    let bad = c
        .call(
            &c.demo.token,
            Method::POST,
            &format!("{p}/hooks"),
            Some(json!({"url": "not a url"})),
        )
        .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
    let removed = c
        .ok(Method::DELETE, &format!("{p}/hooks/{}", hook["id"]), None, 200)
        .await;
    assert_eq!(removed["url"], json!("https://ci.example/hook"));
    c.ok(
        Method::PUT,
        &format!("{p}/services/pipelines-email"),
        Some(json!({"recipients": "team@example.com", "build_events": true})),
        200,
    )
    .await;
    let service = c
        .ok(Method::GET, &format!("{p}/services/pipelines-email"), None, 200)
        .await;
    assert_eq!(
        (service["active"].clone(), service["build_events"].clone()),
        (json!(true), json!(true))
    );
    assert_eq!(
        c.ok(
            Method::DELETE,
            &format!("{p}/services/pipelines-email"),
            None,
            200
        )
        .await,
        json!(true)
    );
    let snippet = c
        .ok(
            Method::POST,
            &format!("{p}/snippets"),
            Some(json!({"title": "s", "file_name": "s.sh", "code": "echo hi", "visibility_level": 10})),
            201,
        )
        .await;
    assert_eq!(snippet["expires_at"], Value::Null);
    assert!(snippet.get("project_id").is_none() && snippet.get("description").is_none());
    let raw = c
        .call(
            &c.demo.token,
            Method::GET,
            &format!("{p}/snippets/{}/raw", snippet["id"]),
            None,
        )
        .await;
    assert_eq!(&raw.body[..], b"echo hi");
    let personal = c
        .ok(
            Method::POST,
            "/snippets",
            Some(json!({"title": "p", "file_name": "p.txt", "content": "x", "visibility_level": 0})),
            201,
        )
        .await;
    assert_eq!(personal["visibility"], json!("private"));
    c.ok(
        Method::DELETE,
        &format!("/snippets/{}", personal["id"]),
        None,
        204,
    )
    .await;
    let deleted = c
        .ok(
            Method::DELETE,
            &format!("{p}/snippets/{}", snippet["id"]),
            None,
            200,
        )
        .await;
    assert_eq!(deleted["title"], json!("s"));
}

#[tokio::test]
async fn templates_settings_broadcast_messages_labels_milestones_and_todos() {
    let c = Client::new().await;
    let p = c.p();
    let licenses = c.ok(Method::GET, "/licenses", None, 200).await;
    assert!(!licenses.as_array().unwrap().is_empty());
    let mit = c.ok(Method::GET, "/licenses/mit", None, 200).await;
    assert_eq!(mit["key"], json!("mit"));
    let ignores = c.ok(Method::GET, "/gitignores", None, 200).await;
    assert!(!ignores.as_array().unwrap().is_empty());
    let settings = c
        .ok_as(
            ADMIN,
            Method::PUT,
            "/application/settings",
            Some(json!({"default_project_visibility": 10, "restricted_visibility_levels": [20]})),
            200,
        )
        .await;
    assert_eq!(settings["default_project_visibility"], json!(10));
    assert_eq!(settings["restricted_visibility_levels"], json!([20]));
    assert!(settings.get("password_authentication_enabled_for_web").is_none());
    assert!(settings.get("signin_enabled").is_some());
    let message = c
        .ok_as(
            ADMIN,
            Method::POST,
            "/broadcast_messages",
            Some(json!({"message": "upgrade tonight"})),
            201,
        )
        .await;
    let deleted = c
        .ok_as(
            ADMIN,
            Method::DELETE,
            &format!("/broadcast_messages/{}", message["id"]),
            None,
            200,
        )
        .await;
    assert_eq!(deleted["message"], json!("upgrade tonight"));
    c.ok(
        Method::POST,
        &format!("{p}/labels"),
        Some(json!({"name": "p1", "color": "#FF0000"})),
        201,
    )
    .await;
    let labels = c.ok(Method::GET, &format!("{p}/labels"), None, 200).await;
    let p1 = labels
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == json!("p1"))
        .unwrap();
    assert_eq!(p1["open_issues_count"], json!(0));
    let milestone = c
        .ok(
            Method::POST,
            &format!("{p}/milestones"),
            Some(json!({"title": "1.0"})),
            201,
        )
        .await;
    let by_iid = c
        .ok(
            Method::GET,
            &format!("{p}/milestones?iid[]={}&state=all", milestone["iid"]),
            None,
            200,
        )
        .await;
    assert_eq!(by_iid[0]["id"], milestone["id"]);
    let issue = c
        .ok(
            Method::POST,
            &format!("{p}/issues"),
            Some(json!({"title": "in 1.0", "milestone_id": milestone["id"], "labels": "p1"})),
            201,
        )
        .await;
    let in_milestone = c
        .ok(
            Method::GET,
            &format!("{p}/milestones/{}/issues", milestone["id"]),
            None,
            200,
        )
        .await;
    assert_eq!(in_milestone[0]["id"], issue["id"]);
    assert!(in_milestone[0].get("subscribed").is_some());
    let todo = c
        .ok(
            Method::POST,
            &format!("{p}/issues/{}/todo", issue["id"]),
            None,
            201,
        )
        .await;
    let done = c
        .ok(Method::DELETE, &format!("/todos/{}", todo["id"]), None, 200)
        .await;
    assert_eq!(done["state"], json!("done"));
    let removed = c
        .ok(Method::DELETE, &format!("{p}/labels?name=p1"), None, 200)
        .await;
    assert_eq!(removed["name"], json!("p1"));
}
