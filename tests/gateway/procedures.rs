//! The named procedures over real sockets (client → svcgate → svc-sim), each with the V4 calls it makes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::common::{get, send, send_json, TestGateway};
use http::{Method, StatusCode};
use serde_json::{json, Value};
use svc_sim::{DemoSeed, SimHandle};

struct World {
    sim: SimHandle,
    demo: DemoSeed,
    gateway: TestGateway,
}

impl World {
    async fn new() -> Self {
        let (sim, demo, gateway) = common::sim::with_gateway().await;
        World { sim, demo, gateway }
    }

    fn v3(&self, path: &str) -> String {
        format!("{}/api/v3{path}", self.gateway.url())
    }

    fn v4(&self, path: &str) -> String {
        format!("{}/api/v4{path}", self.sim.url())
    }

    fn project(&self) -> String {
        format!("/projects/{}", self.demo.project_id)
    }

    async fn issue(&self, title: &str, labels: &str) -> Value {
        let answer = send_json(
            Method::POST,
            &self.v4(&format!("{}/issues", self.project())),
            &self.demo.token,
            json!({"title": title, "labels": labels}),
        )
        .await;
        assert_eq!(answer.status, StatusCode::CREATED, "{:?}", answer.body);
        answer.json()
    }

    fn received(&self) -> Vec<String> {
        self.sim
            .requests()
            .iter()
            .map(|request| match &request.query {
                Some(query) if !query.is_empty() => {
                    format!("{} {}?{}", request.method, request.path, query)
                }
                _ => format!("{} {}", request.method, request.path),
            })
            .collect()
    }
}

#[tokio::test]
async fn several_labels_match_any_of_them_merged_sorted_and_paginated_here() {
    let world = World::new().await;
    let a = world.issue("only a", "alpha").await;
    let b = world.issue("only b", "beta").await;
    let both = world.issue("both", "alpha,beta").await;
    world.issue("neither", "gamma").await;
    world.sim.clear_requests();

    let answer = get(
        &world.v3(&format!(
            "{}/issues?labels=alpha,beta&per_page=2&sort=desc",
            world.project()
        )),
        &world.demo.token,
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    let lists: Vec<String> = world
        .received()
        .into_iter()
        .filter(|line| line.contains("/issues?"))
        .collect();
    assert_eq!(lists.len(), 2, "one V4 query per label: {lists:?}");
    assert!(
        lists.iter().any(|line| line.contains("labels=alpha"))
            && lists.iter().any(|line| line.contains("labels=beta"))
    );
    let ids: Vec<u64> = answer
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|issue| issue["id"].as_u64().unwrap())
        .collect();
    assert_eq!(
        ids,
        [both["id"].as_u64().unwrap(), b["id"].as_u64().unwrap()],
        "newest first, no duplicate"
    );
    assert_eq!(answer.header("x-total"), Some("3"));
    assert_eq!(answer.header("x-total-pages"), Some("2"));
    assert_eq!(answer.header("x-next-page"), Some("2"));
    let link = answer.header("link").unwrap();
    assert!(
        link.contains(&format!(
            "{}/api/v3{}/issues?",
            world.gateway.url(),
            world.project()
        )),
        "{link}"
    );

    let second = get(
        &world.v3(&format!(
            "{}/issues?labels=alpha,beta&per_page=2&page=2&sort=desc",
            world.project()
        )),
        &world.demo.token,
    )
    .await
    .json();
    assert_eq!(second[0]["id"], a["id"]);
    assert_eq!(
        second[0]["subscribed"],
        json!(true),
        "`subscribed` restored per item"
    );
}

#[tokio::test]
async fn a_single_label_is_one_plain_v4_query() {
    let world = World::new().await;
    world.issue("a", "alpha").await;
    world.sim.clear_requests();
    let answer = get(
        &world.v3(&format!("{}/issues?labels=alpha", world.project())),
        &world.demo.token,
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK);
    let lists: Vec<String> = world
        .received()
        .into_iter()
        .filter(|line| line.contains("/issues?"))
        .collect();
    assert_eq!(
        lists,
        [format!("GET /api/v4{}/issues?labels=alpha", world.project())]
    );
}

#[tokio::test]
async fn a_bad_access_level_is_v3s_422() {
    let world = World::new().await;
    let (user_id, _) = world.sim.create_user("newcomer", false);
    for (method, path) in [
        (Method::POST, format!("{}/members", world.project())),
        (Method::POST, format!("/groups/{}/members", world.demo.group_id)),
    ] {
        let answer = send_json(
            method,
            &world.v3(&path),
            &world.demo.token,
            json!({"user_id": user_id, "access_level": 17}),
        )
        .await;
        assert_eq!(
            answer.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{path}: {:?}",
            answer.body
        );
        assert_eq!(answer.json(), json!({"message": "Access level is not known"}));
    }
}

#[tokio::test]
async fn removing_a_member_answers_the_member_and_a_non_member_is_access_revoked() {
    let world = World::new().await;
    let (user_id, _) = world.sim.create_user("leaver", false);
    let added = send_json(
        Method::POST,
        &world.v3(&format!("{}/members", world.project())),
        &world.demo.token,
        json!({"user_id": user_id, "access_level": 30}),
    )
    .await;
    assert_eq!(added.status, StatusCode::CREATED);
    let url = world.v3(&format!("{}/members/{user_id}", world.project()));
    let removed = send(
        Method::DELETE,
        &url,
        &[("private-token", &world.demo.token)],
        None,
    )
    .await;
    assert_eq!(removed.status, StatusCode::OK);
    assert_eq!(removed.json()["id"], json!(user_id));
    assert_eq!(removed.json()["access_level"], json!(30));
    let again = send(
        Method::DELETE,
        &url,
        &[("private-token", &world.demo.token)],
        None,
    )
    .await;
    assert_eq!(again.status, StatusCode::OK);
    assert_eq!(again.json(), json!({"message": "Access revoked", "id": user_id}));
}

#[tokio::test]
async fn state_event_merge_updates_then_merges() {
    let world = World::new().await;
    let branch = send_json(
        Method::POST,
        &world.v4(&format!("{}/repository/branches", world.project())),
        &world.demo.token,
        json!({"branch": "topic", "ref": "main"}),
    )
    .await;
    assert_eq!(branch.status, StatusCode::CREATED);
    let commit = send_json(
        Method::POST,
        &world.v4(&format!("{}/repository/commits", world.project())),
        &world.demo.token,
        json!({"branch": "topic", "commit_message": "work", "actions": [{"action": "create", "file_path": "work.txt", "content": "x"}]}),
    )
    .await;
    assert_eq!(commit.status, StatusCode::CREATED, "{:?}", commit.body);
    let mr = send_json(
        Method::POST,
        &world.v3(&format!("{}/merge_requests", world.project())),
        &world.demo.token,
        json!({"title": "Topic", "source_branch": "topic", "target_branch": "main"}),
    )
    .await;
    assert_eq!(mr.status, StatusCode::CREATED, "{:?}", mr.body);
    let (id, iid) = (
        mr.json()["id"].as_u64().unwrap(),
        mr.json()["iid"].as_u64().unwrap(),
    );
    world.sim.clear_requests();
    let merged = send_json(
        Method::PUT,
        &world.v3(&format!("{}/merge_requests/{id}", world.project())),
        &world.demo.token,
        json!({"title": "Topic, merged", "state_event": "merge"}),
    )
    .await;
    assert_eq!(merged.status, StatusCode::OK, "{:?}", merged.body);
    let v4 = format!("/api/v4{}/merge_requests/{iid}", world.project());
    assert_eq!(world.received(), [format!("PUT {v4}"), format!("PUT {v4}/merge")]);
    assert_eq!(merged.json()["state"], json!("merged"));
    assert_eq!(merged.json()["title"], json!("Topic, merged"));
    assert!(
        merged.json().get("merge_when_build_succeeds").is_some(),
        "V3 shape"
    );
}

#[tokio::test]
async fn deleting_a_label_by_name_answers_the_label() {
    let world = World::new().await;
    let created = send_json(
        Method::POST,
        &world.v4(&format!("{}/labels", world.project())),
        &world.demo.token,
        json!({"name": "doomed", "color": "#FF0000"}),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let url = world.v3(&format!("{}/labels?name=doomed", world.project()));
    let deleted = send(
        Method::DELETE,
        &url,
        &[("private-token", &world.demo.token)],
        None,
    )
    .await;
    assert_eq!(deleted.status, StatusCode::OK, "{:?}", deleted.body);
    assert_eq!(deleted.json()["name"], json!("doomed"));
    let again = send(
        Method::DELETE,
        &url,
        &[("private-token", &world.demo.token)],
        None,
    )
    .await;
    assert_eq!(again.status, StatusCode::NOT_FOUND);
    assert_eq!(again.json(), json!({"message": "404 Label Not Found"}));
}

#[tokio::test]
async fn projects_all_is_for_admins_only() {
    let world = World::new().await;
    let refused = get(&world.v3("/projects/all"), &world.demo.token).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    let allowed = get(&world.v3("/projects/all"), "root-token").await;
    assert_eq!(allowed.status, StatusCode::OK);
    assert!(allowed
        .json()
        .as_array()
        .unwrap()
        .iter()
        .any(|project| project["id"] == json!(world.demo.project_id)));
}

#[tokio::test]
async fn password_login_issues_a_token_that_later_v3_calls_can_use() {
    let world = World::new().await;
    let wrong = send(
        Method::POST,
        &world.v3("/session"),
        &[],
        Some((
            "application/json",
            br#"{"login": "demo", "password": "not-the-password"}"#.to_vec(),
        )),
    )
    .await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
    assert_eq!(wrong.json(), json!({"message": "401 Unauthorized"}));

    let login = send(
        Method::POST,
        &world.v3("/session"),
        &[],
        Some((
            "application/x-www-form-urlencoded",
            b"login=demo&password=demo-password".to_vec(),
        )),
    )
    .await;
    assert_eq!(login.status, StatusCode::CREATED, "{:?}", login.body);
    let user = login.json();
    assert_eq!(user["username"], json!("demo"));
    let token = user["private_token"].as_str().unwrap().to_owned();
    assert!(token.starts_with("svcg3_"));

    world.sim.clear_requests();
    let projects = get(&world.v3("/projects"), &token).await;
    assert_eq!(projects.status, StatusCode::OK, "{:?}", projects.body);
    let sent = &world.sim.requests()[0];
    assert!(sent
        .headers
        .iter()
        .any(|(name, value)| name == "authorization" && value.starts_with("Bearer ")));
    assert!(
        !sent.headers.iter().any(|(name, _)| name == "private-token"),
        "the issued token never reaches the backend"
    );

    let by_query = send(
        Method::GET,
        &world.v3(&format!("/user?private_token={token}")),
        &[],
        None,
    )
    .await;
    assert_eq!(by_query.status, StatusCode::OK);
    assert_eq!(by_query.json()["username"], json!("demo"));
    assert!(!world
        .sim
        .requests()
        .last()
        .unwrap()
        .query
        .clone()
        .unwrap_or_default()
        .contains("svcg3_"));

    world.gateway.stop().await;

    // The session survives a restart: only its hash and the backend token are stored.
    let data = tempfile::tempdir().unwrap();
    let first = TestGateway::start_in(&world.sim.url(), data.path(), |_| {}).await;
    let login = send(
        Method::POST,
        &format!("{}/api/v3/session", first.url()),
        &[],
        Some((
            "application/json",
            br#"{"email": "demo@example.com", "password": "demo-password"}"#.to_vec(),
        )),
    )
    .await;
    assert_eq!(login.status, StatusCode::CREATED, "{:?}", login.body);
    let token = login.json()["private_token"].as_str().unwrap().to_owned();
    first.stop().await;
    let restarted = TestGateway::start_in(&world.sim.url(), data.path(), |_| {}).await;
    let after = get(&format!("{}/api/v3/user", restarted.url()), &token).await;
    assert_eq!(after.status, StatusCode::OK);
    restarted.stop().await;

    // The backend's access token is stored sealed: what the store holds is no token the backend accepts.
    let connection = rusqlite::Connection::open(data.path().join("svcgate.db")).unwrap();
    let stored: String = connection
        .query_row("SELECT access_token FROM sessions", [], |row| row.get(0))
        .unwrap();
    assert!(stored.contains(':'), "nonce:ciphertext, not a token: {stored}");
    let bearer = send(
        Method::GET,
        &format!("{}/api/v4/user", world.sim.url()),
        &[("authorization", &format!("Bearer {stored}"))],
        None,
    )
    .await;
    assert_eq!(bearer.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn delete_todos_answers_how_many_were_marked_and_honours_filters() {
    let world = World::new().await;
    let a = world.issue("todo a", "").await;
    let b = world.issue("todo b", "").await;
    for issue in [&a, &b] {
        let todo = send(
            Method::POST,
            &world.v4(&format!("{}/issues/{}/todo", world.project(), issue["iid"])),
            &[("private-token", &world.demo.token)],
            None,
        )
        .await;
        assert_eq!(todo.status, StatusCode::CREATED);
    }
    let filtered = send(
        Method::DELETE,
        &world.v3(&format!(
            "/todos?project_id={}&type=Issue&action_id=4",
            world.demo.project_id
        )),
        &[("private-token", &world.demo.token)],
        None,
    )
    .await;
    assert_eq!(filtered.status, StatusCode::OK, "{:?}", filtered.body);
    assert_eq!(
        filtered.json(),
        json!(2),
        "both marked to-dos of the project, one by one"
    );
    let marks = world
        .received()
        .iter()
        .filter(|line| line.ends_with("/mark_as_done"))
        .count();
    assert_eq!(marks, 2);

    let again = send(
        Method::DELETE,
        &world.v3("/todos"),
        &[("private-token", &world.demo.token)],
        None,
    )
    .await;
    assert_eq!(again.status, StatusCode::OK);
    assert_eq!(again.json(), json!(0), "nothing pending any more");
}

#[tokio::test]
async fn commit_builds_lists_the_jobs_of_the_commits_pipelines_newest_first() {
    let world = World::new().await;
    let pipelines = get(
        &world.v4(&format!("{}/pipelines", world.project())),
        &world.demo.token,
    )
    .await
    .json();
    let sha = pipelines[0]["sha"].as_str().unwrap().to_owned();
    let created = send_json(
        Method::POST,
        &world.v4(&format!("{}/pipeline", world.project())),
        &world.demo.token,
        json!({"ref": "main"}),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    world.sim.clear_requests();
    let answer = get(
        &world.v3(&format!(
            "{}/repository/commits/{sha}/builds?per_page=50",
            world.project()
        )),
        &world.demo.token,
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    let jobs = answer.json();
    let ids: Vec<u64> = jobs
        .as_array()
        .unwrap()
        .iter()
        .map(|job| job["id"].as_u64().unwrap())
        .collect();
    let mut sorted = ids.clone();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(ids, sorted, "newest first");
    assert!(
        ids.len() >= 4,
        "the jobs of both pipelines of the commit: {ids:?}"
    );
    assert!(jobs[0].get("duration").is_none(), "V3 build shape");
    assert_eq!(
        answer.header("x-total").map(str::to_owned),
        Some(ids.len().to_string())
    );
    let unknown = get(
        &world.v3(&format!(
            "{}/repository/commits/{}/builds",
            world.project(),
            "f".repeat(40)
        )),
        &world.demo.token,
    )
    .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn trigger_builds_answers_a_v3_trigger_request_and_triggers_are_addressed_by_token() {
    let world = World::new().await;
    let created = send(
        Method::POST,
        &world.v3(&format!("{}/triggers", world.project())),
        &[("private-token", &world.demo.token)],
        None,
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let trigger = created.json();
    assert!(
        trigger.get("id").is_none() && trigger.get("description").is_none(),
        "V3 trigger shape: {trigger}"
    );
    let token = trigger["token"].as_str().unwrap().to_owned();

    let fired = send(
        Method::POST,
        &world.v3(&format!("{}/trigger/builds", world.project())),
        &[],
        Some((
            "application/x-www-form-urlencoded",
            format!("ref=main&token={token}&variables[DEPLOY]=yes").into_bytes(),
        )),
    )
    .await;
    assert_eq!(fired.status, StatusCode::CREATED, "{:?}", fired.body);
    let request = fired.json();
    assert_eq!(request["variables"], json!({"DEPLOY": "yes"}));
    let pipeline = get(
        &world.v4(&format!("{}/pipelines/{}", world.project(), request["id"])),
        &world.demo.token,
    )
    .await;
    assert_eq!(
        pipeline.status,
        StatusCode::OK,
        "the trigger request id is the pipeline's"
    );

    let read = get(
        &world.v3(&format!("{}/triggers/{token}", world.project())),
        &world.demo.token,
    )
    .await;
    assert_eq!(read.status, StatusCode::OK);
    assert_eq!(read.json()["token"], json!(token));
    let deleted = send(
        Method::DELETE,
        &world.v3(&format!("{}/triggers/{token}", world.project())),
        &[("private-token", &world.demo.token)],
        None,
    )
    .await;
    assert_eq!(deleted.status, StatusCode::OK);
    assert_eq!(deleted.json()["token"], json!(token));
    let gone = get(
        &world.v3(&format!("{}/triggers/{token}", world.project())),
        &world.demo.token,
    )
    .await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn pipeline_lists_carry_full_pipelines_and_environments_the_full_v3_project() {
    let world = World::new().await;
    world.sim.clear_requests();
    let pipelines = get(
        &world.v3(&format!("{}/pipelines", world.project())),
        &world.demo.token,
    )
    .await;
    assert_eq!(pipelines.status, StatusCode::OK);
    let first = &pipelines.json()[0];
    for field in [
        "before_sha",
        "user",
        "created_at",
        "duration",
        "coverage",
        "yaml_errors",
    ] {
        assert!(first.get(field).is_some(), "full pipeline lacks {field}: {first}");
    }
    let environments = get(
        &world.v3(&format!("{}/environments", world.project())),
        &world.demo.token,
    )
    .await;
    assert_eq!(environments.status, StatusCode::OK);
    let project = &environments.json()[0]["project"];
    assert_eq!(project["id"], json!(world.demo.project_id));
    assert_eq!(
        project["visibility_level"],
        json!(20),
        "the V3 project, not V4's basic one"
    );
    assert!(project.get("builds_enabled").is_some());
}

#[tokio::test]
async fn subscribed_in_lists_costs_one_graphql_request_and_the_callers_own_change_shows_at_once() {
    let world = World::new().await;
    world.issue("watched", "").await;
    let list = world.v3(&format!("{}/issues", world.project()));
    get(&list, &world.demo.token).await;
    world.sim.clear_requests();
    let again = get(&list, &world.demo.token).await;
    assert_eq!(again.status, StatusCode::OK);
    assert_eq!(
        world.received().len(),
        2,
        "a repeated list of one project costs the list and one GraphQL request, however many items"
    );
    let first = again.json()[0].clone();
    assert_eq!(first["subscribed"], json!(true));
    let unsubscribed = send(
        Method::DELETE,
        &world.v3(&format!(
            "{}/issues/{}/subscription",
            world.project(),
            first["id"]
        )),
        &[("private-token", &world.demo.token)],
        None,
    )
    .await;
    assert_eq!(unsubscribed.status, StatusCode::OK);
    let after = get(&list, &world.demo.token).await.json();
    let same = after
        .as_array()
        .unwrap()
        .iter()
        .find(|issue| issue["id"] == first["id"])
        .unwrap();
    assert_eq!(
        same["subscribed"],
        json!(false),
        "the caller's own change shows at once"
    );
}
