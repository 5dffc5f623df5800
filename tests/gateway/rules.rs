//! One case per rule of the table, over real sockets (client → svcgate → svc-sim): each asserts the exact V4
//! request(s) the backend received and the V3 response (status, exact field set, values).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::common::{send, send_json, TestGateway};
use http::{Method, StatusCode};
use serde_json::{json, Value};
use svc_sim::SimHandle;

/// The V3 field names of a fixture body (tests/fixtures/v3-responses, real bodies of the last V3 release), sorted.
fn fixture_keys(name: &str) -> Vec<String> {
    let path = format!(
        "{}/tests/fixtures/v3-responses/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{path}: {error}"));
    let value: Value = serde_json::from_str(&text).unwrap();
    let mut keys: Vec<String> = value.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    keys
}

fn keys(value: &Value) -> Vec<String> {
    let mut keys: Vec<String> = value.as_object().expect("an object").keys().cloned().collect();
    keys.sort();
    keys
}

/// Asserts a body has exactly the fixture's V3 fields, plus `extra` (fields the fixture's resource lacked, such
/// as `owner` of a project in a user namespace), and none of the V4-only ones.
fn assert_v3_fields(value: &Value, fixture: &str, extra: &[&str]) {
    assert_v3_fields_without(value, fixture, extra, &[]);
}

/// As [`assert_v3_fields`], with `absent` fixture fields that this entity does not carry (the fixture project is a
/// `ProjectWithAccess`; a plain V3 `Project` has no `permissions`).
fn assert_v3_fields_without(value: &Value, fixture: &str, extra: &[&str], absent: &[&str]) {
    let mut expected = fixture_keys(fixture);
    expected.retain(|name| !absent.contains(&name.as_str()));
    expected.extend(extra.iter().map(|name| (*name).to_owned()));
    expected.sort();
    assert_eq!(keys(value), expected, "fields of {value}");
}

/// The requests the simulator received since the last clear, as `METHOD path[?query]`.
fn received(sim: &SimHandle) -> Vec<String> {
    sim.requests()
        .iter()
        .map(|request| match &request.query {
            Some(query) if !query.is_empty() => {
                format!("{} {}?{}", request.method, request.path, query)
            }
            _ => format!("{} {}", request.method, request.path),
        })
        .collect()
}

fn last_body(sim: &SimHandle) -> Vec<u8> {
    sim.requests()
        .last()
        .map(|request| request.body.clone())
        .unwrap_or_default()
}

struct World {
    sim: SimHandle,
    gateway: TestGateway,
    token: String,
    project: u64,
    issue_id: u64,
    issue_iid: u64,
}

impl World {
    async fn new() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let sim = svc_sim::spawn(listener, "root-token").await.unwrap();
        let demo = sim.seed_demo();
        let gateway = TestGateway::start(&sim.url()).await;
        let issues = common::get(
            &format!(
                "{}/api/v4/projects/{}/issues?sort=asc",
                sim.url(),
                demo.project_id
            ),
            &demo.token,
        )
        .await
        .json();
        let first = &issues[0];
        World {
            token: demo.token.clone(),
            project: demo.project_id,
            issue_id: first["id"].as_u64().unwrap(),
            issue_iid: first["iid"].as_u64().unwrap(),
            sim,
            gateway,
        }
    }

    fn v3(&self, path: &str) -> String {
        format!("{}/api/v3{path}", self.gateway.url())
    }

    fn v4(&self, path: &str) -> String {
        format!("{}/api/v4{path}", self.sim.url())
    }

    async fn warm_issue_index(&self) {
        let answer = common::get(
            &self.v3(&format!("/projects/{}/issues/{}", self.project, self.issue_id)),
            &self.token,
        )
        .await;
        assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
        self.sim.clear_requests();
    }
}

#[tokio::test]
async fn get_projects_asks_for_membership_and_answers_v3_projects_with_access() {
    let world = World::new().await;
    world.sim.clear_requests();
    let answer = common::get(&world.v3("/projects"), &world.token).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(received(&world.sim), ["GET /api/v4/projects?membership=true"]);
    let projects = answer.json();
    let project = projects
        .as_array()
        .unwrap()
        .iter()
        .find(|project| project["id"] == world.project)
        .expect("the demo project");
    assert_v3_fields(project, "project", &["runners_token"]);
    assert_eq!(project["visibility_level"], json!(20));
    assert_eq!(project["public"], json!(true));
    assert!(project["permissions"].is_object());
}

#[tokio::test]
async fn post_projects_converts_visibility_level_and_build_names() {
    let world = World::new().await;
    world.sim.clear_requests();
    let answer = send_json(
        Method::POST,
        &world.v3("/projects"),
        &world.token,
        json!({"name": "from-v3", "visibility_level": 10, "builds_enabled": false, "public": true}),
    )
    .await;
    assert_eq!(answer.status, StatusCode::CREATED, "{:?}", answer.body);
    assert_eq!(received(&world.sim), ["POST /api/v4/projects"]);
    let sent: Value = serde_json::from_slice(&last_body(&world.sim)).unwrap();
    assert_eq!(
        sent,
        json!({"name": "from-v3", "visibility": "internal", "jobs_enabled": false})
    );
    let project = answer.json();
    assert_v3_fields_without(&project, "project", &["owner", "runners_token"], &["permissions"]);
    assert_eq!(project["visibility_level"], json!(10));
    assert_eq!(project["public"], json!(false));
    assert_eq!(project["builds_enabled"], json!(false));
}

#[tokio::test]
async fn post_projects_form_body_maps_public_to_visibility() {
    let world = World::new().await;
    world.sim.clear_requests();
    let answer = send(
        Method::POST,
        &world.v3("/projects"),
        &[("private-token", &world.token)],
        Some((
            "application/x-www-form-urlencoded",
            b"name=form-made&public=true&only_allow_merge_if_build_succeeds=true".to_vec(),
        )),
    )
    .await;
    assert_eq!(answer.status, StatusCode::CREATED, "{:?}", answer.body);
    assert_eq!(
        String::from_utf8(last_body(&world.sim)).unwrap(),
        "name=form-made&visibility=public&only_allow_merge_if_pipeline_succeeds=true"
    );
    let project = answer.json();
    assert_eq!(project["public"], json!(true));
    assert_eq!(project["visibility_level"], json!(20));
    assert_eq!(project["only_allow_merge_if_build_succeeds"], json!(true));
}

#[tokio::test]
async fn put_project_converts_parameters_and_answers_a_v3_project() {
    let world = World::new().await;
    world.sim.clear_requests();
    let answer = send_json(
        Method::PUT,
        &world.v3(&format!("/projects/{}", world.project)),
        &world.token,
        json!({"description": "edited through V3", "public": false}),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    assert_eq!(
        received(&world.sim),
        [format!("PUT /api/v4/projects/{}", world.project)]
    );
    let sent: Value = serde_json::from_slice(&last_body(&world.sim)).unwrap();
    assert_eq!(
        sent,
        json!({"description": "edited through V3", "visibility": "private"})
    );
    assert_eq!(answer.json()["description"], json!("edited through V3"));
    assert_eq!(answer.json()["visibility_level"], json!(0));
}

#[tokio::test]
async fn invalid_visibility_level_is_a_400_naming_the_parameter() {
    let world = World::new().await;
    world.sim.clear_requests();
    let answer = send_json(
        Method::POST,
        &world.v3("/projects"),
        &world.token,
        json!({"name": "x", "visibility_level": 5}),
    )
    .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert!(answer.json()["message"]
        .as_str()
        .unwrap()
        .contains("visibility_level"));
    assert!(received(&world.sim).is_empty(), "nothing reaches the backend");
}

#[tokio::test]
async fn delete_star_becomes_post_unstar_and_200() {
    let world = World::new().await;
    let star = send(
        Method::POST,
        &world.v4(&format!("/projects/{}/star", world.project)),
        &[("private-token", &world.token)],
        None,
    )
    .await;
    assert_eq!(star.status, StatusCode::CREATED);
    world.sim.clear_requests();
    let answer = send(
        Method::DELETE,
        &world.v3(&format!("/projects/{}/star", world.project)),
        &[("private-token", &world.token)],
        None,
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    assert_eq!(
        received(&world.sim),
        [format!("POST /api/v4/projects/{}/unstar", world.project)]
    );
    assert_v3_fields_without(&answer.json(), "project", &["runners_token"], &["permissions"]);
    // Not starred any more: 304 in both versions.
    let again = send(
        Method::DELETE,
        &world.v3(&format!("/projects/{}/star", world.project)),
        &[("private-token", &world.token)],
        None,
    )
    .await;
    assert_eq!(again.status, StatusCode::NOT_MODIFIED);
}

#[tokio::test]
async fn merge_request_iid_filter_is_renamed_to_iids() {
    let world = World::new().await;
    let branch = send_json(
        Method::POST,
        &world.v4(&format!("/projects/{}/repository/branches", world.project)),
        &world.token,
        json!({"branch": "feature", "ref": "main"}),
    )
    .await;
    assert_eq!(branch.status, StatusCode::CREATED, "{:?}", branch.body);
    let created = send_json(
        Method::POST,
        &world.v4(&format!("/projects/{}/merge_requests", world.project)),
        &world.token,
        json!({"title": "Feature", "source_branch": "feature", "target_branch": "main"}),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let iid = created.json()["iid"].as_u64().unwrap();
    world.sim.clear_requests();
    let answer = common::get(
        &world.v3(&format!("/projects/{}/merge_requests?iid[]={iid}", world.project)),
        &world.token,
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(
        received(&world.sim),
        [
            format!(
                "GET /api/v4/projects/{}/merge_requests?iids%5B%5D={iid}",
                world.project
            ),
            format!("GET /api/v4/projects/{}/merge_requests/{iid}", world.project),
        ],
        "the list, then each item for `subscribed`"
    );
    let list = answer.json();
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert_v3_fields(&list[0], "merge_request", &[]);
    assert_eq!(list[0]["merge_when_build_succeeds"], json!(false));
    assert_eq!(list[0]["subscribed"], json!(true), "the author is subscribed");
}

#[tokio::test]
async fn create_branch_renames_branch_name() {
    let world = World::new().await;
    world.sim.clear_requests();
    let answer = send(
        Method::POST,
        &world.v3(&format!("/projects/{}/repository/branches", world.project)),
        &[("private-token", &world.token)],
        Some((
            "application/x-www-form-urlencoded",
            b"branch_name=topic&ref=main".to_vec(),
        )),
    )
    .await;
    assert_eq!(answer.status, StatusCode::CREATED, "{:?}", answer.body);
    assert_eq!(
        String::from_utf8(last_body(&world.sim)).unwrap(),
        "branch=topic&ref=main"
    );
    assert_eq!(answer.json()["name"], json!("topic"));
}

#[tokio::test]
async fn list_branches_gathers_every_page_without_pagination_headers() {
    let world = World::new().await;
    for n in 0..105 {
        let created = send_json(
            Method::POST,
            &world.v4(&format!("/projects/{}/repository/branches", world.project)),
            &world.token,
            json!({"branch": format!("b{n:03}"), "ref": "main"}),
        )
        .await;
        assert_eq!(created.status, StatusCode::CREATED);
    }
    world.sim.clear_requests();
    let answer = common::get(
        &world.v3(&format!("/projects/{}/repository/branches", world.project)),
        &world.token,
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(
        received(&world.sim),
        [
            format!(
                "GET /api/v4/projects/{}/repository/branches?per_page=100&page=1",
                world.project
            ),
            format!(
                "GET /api/v4/projects/{}/repository/branches?per_page=100&page=2",
                world.project
            ),
        ]
    );
    assert_eq!(answer.json().as_array().unwrap().len(), 106);
    assert!(answer.header("x-total").is_none() && answer.header("link").is_none());
}

#[tokio::test]
async fn commits_pages_are_zero_based_in_v3() {
    let world = World::new().await;
    world.sim.clear_requests();
    let answer = common::get(
        &world.v3(&format!(
            "/projects/{}/repository/commits?page=0&per_page=1",
            world.project
        )),
        &world.token,
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(
        received(&world.sim),
        [format!(
            "GET /api/v4/projects/{}/repository/commits?page=1&per_page=1",
            world.project
        )]
    );
    assert_eq!(answer.header("x-page"), Some("0"));
    let link = answer.header("link").unwrap_or_default().to_owned();
    assert!(
        link.contains(&format!(
            "{}/api/v3/projects/{}/repository/commits?",
            world.gateway.url(),
            world.project
        )),
        "{link}"
    );
    assert!(link.contains("page=1&per_page=1>; rel=\"next\""), "{link}");
}

#[tokio::test]
async fn get_issue_by_global_id_asks_for_the_iid() {
    let world = World::new().await;
    world.warm_issue_index().await;
    let answer = common::get(
        &world.v3(&format!("/projects/{}/issues/{}", world.project, world.issue_id)),
        &world.token,
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(
        received(&world.sim),
        [format!(
            "GET /api/v4/projects/{}/issues/{}",
            world.project, world.issue_iid
        )]
    );
    let issue = answer.json();
    assert_v3_fields(&issue, "issue", &[]);
    assert_eq!(issue["id"], json!(world.issue_id));
    assert_eq!(issue["iid"], json!(world.issue_iid));
}

#[tokio::test]
async fn put_issue_by_global_id_updates_by_iid() {
    let world = World::new().await;
    world.warm_issue_index().await;
    let answer = send_json(
        Method::PUT,
        &world.v3(&format!("/projects/{}/issues/{}", world.project, world.issue_id)),
        &world.token,
        json!({"title": "Renamed", "state_event": "close"}),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    assert_eq!(
        received(&world.sim),
        [format!(
            "PUT /api/v4/projects/{}/issues/{}",
            world.project, world.issue_iid
        )]
    );
    assert_eq!(
        serde_json::from_slice::<Value>(&last_body(&world.sim)).unwrap(),
        json!({"title": "Renamed", "state_event": "close"})
    );
    assert_eq!(answer.json()["title"], json!("Renamed"));
    assert_eq!(answer.json()["state"], json!("closed"));
}

#[tokio::test]
async fn delete_issue_answers_200_with_the_v3_issue() {
    let world = World::new().await;
    world.warm_issue_index().await;
    let path = format!("/api/v4/projects/{}/issues/{}", world.project, world.issue_iid);
    let answer = send(
        Method::DELETE,
        &world.v3(&format!("/projects/{}/issues/{}", world.project, world.issue_id)),
        &[("private-token", &world.token)],
        None,
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    assert_eq!(
        received(&world.sim),
        [format!("GET {path}"), format!("DELETE {path}")]
    );
    assert_v3_fields(&answer.json(), "issue", &[]);
    assert_eq!(answer.json()["id"], json!(world.issue_id));
}

#[tokio::test]
async fn issue_notes_are_listed_oldest_first_in_the_v3_note_shape() {
    let world = World::new().await;
    world.warm_issue_index().await;
    let answer = common::get(
        &world.v3(&format!(
            "/projects/{}/issues/{}/notes",
            world.project, world.issue_id
        )),
        &world.token,
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(
        received(&world.sim),
        [format!(
            "GET /api/v4/projects/{}/issues/{}/notes?order_by=created_at&sort=asc",
            world.project, world.issue_iid
        )]
    );
    let notes = answer.json();
    assert!(!notes.as_array().unwrap().is_empty());
    assert_v3_fields(&notes[0], "note", &[]);
    assert_eq!(notes[0]["upvote?"], json!(false));
    assert_eq!(notes[0]["noteable_id"], json!(world.issue_id));
}

#[tokio::test]
async fn issue_note_create_read_update_delete_by_global_id() {
    let world = World::new().await;
    world.warm_issue_index().await;
    let notes = format!("/projects/{}/issues/{}/notes", world.project, world.issue_id);
    let v4_notes = format!(
        "/api/v4/projects/{}/issues/{}/notes",
        world.project, world.issue_iid
    );

    let created = send_json(
        Method::POST,
        &world.v3(&notes),
        &world.token,
        json!({"body": "hello"}),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    assert_eq!(received(&world.sim), [format!("POST {v4_notes}")]);
    assert_v3_fields(&created.json(), "note", &[]);
    let note_id = created.json()["id"].as_u64().unwrap();

    world.sim.clear_requests();
    let read = common::get(&world.v3(&format!("{notes}/{note_id}")), &world.token).await;
    assert_eq!(read.status, StatusCode::OK);
    assert_eq!(received(&world.sim), [format!("GET {v4_notes}/{note_id}")]);
    assert_eq!(read.json()["body"], json!("hello"));

    world.sim.clear_requests();
    let updated = send_json(
        Method::PUT,
        &world.v3(&format!("{notes}/{note_id}")),
        &world.token,
        json!({"body": "edited"}),
    )
    .await;
    assert_eq!(updated.status, StatusCode::OK);
    assert_eq!(received(&world.sim), [format!("PUT {v4_notes}/{note_id}")]);
    assert_eq!(updated.json()["body"], json!("edited"));

    world.sim.clear_requests();
    let deleted = send(
        Method::DELETE,
        &world.v3(&format!("{notes}/{note_id}")),
        &[("private-token", &world.token)],
        None,
    )
    .await;
    assert_eq!(deleted.status, StatusCode::OK);
    assert_eq!(
        received(&world.sim),
        [
            format!("GET {v4_notes}/{note_id}"),
            format!("DELETE {v4_notes}/{note_id}")
        ]
    );
    assert_eq!(deleted.json()["body"], json!("edited"));
    assert_v3_fields(&deleted.json(), "note", &[]);
}

#[tokio::test]
async fn an_invalid_note_is_404_as_in_v3() {
    let world = World::new().await;
    world.warm_issue_index().await;
    let answer = send_json(
        Method::POST,
        &world.v3(&format!(
            "/projects/{}/issues/{}/notes",
            world.project, world.issue_id
        )),
        &world.token,
        json!({"body": ""}),
    )
    .await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND, "{:?}", answer.body);
    assert!(answer.json().get("message").is_some());
}

#[tokio::test]
async fn adding_an_existing_member_answers_201_with_that_member() {
    let world = World::new().await;
    let (user_id, _) = world.sim.create_user("reporter", false);
    let add = |access: u32| {
        let url = world.v3(&format!("/projects/{}/members", world.project));
        let token = world.token.clone();
        async move {
            send_json(
                Method::POST,
                &url,
                &token,
                json!({"user_id": user_id, "access_level": access}),
            )
            .await
        }
    };
    world.sim.clear_requests();
    let first = add(20).await;
    assert_eq!(first.status, StatusCode::CREATED, "{:?}", first.body);
    assert_eq!(
        received(&world.sim),
        [format!("POST /api/v4/projects/{}/members", world.project)]
    );
    world.sim.clear_requests();
    let again = add(30).await;
    assert_eq!(again.status, StatusCode::CREATED, "{:?}", again.body);
    assert_eq!(
        received(&world.sim),
        [
            format!("POST /api/v4/projects/{}/members", world.project),
            format!("GET /api/v4/projects/{}/members/{user_id}", world.project),
        ]
    );
    let member = again.json();
    assert_v3_fields(&member, "member", &[]);
    assert_eq!(member["id"], json!(user_id));
    assert_eq!(
        member["access_level"],
        json!(20),
        "the existing membership, unchanged"
    );
}

#[tokio::test]
async fn a_v3_route_without_a_rule_passes_with_the_prefix_change() {
    let world = World::new().await;
    world.sim.clear_requests();
    let answer = common::get(&world.v3("/user?x=%2F"), &world.token).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(received(&world.sim), ["GET /api/v4/user?x=%2F"]);
}

#[tokio::test]
async fn path_parameters_repeated_in_the_query_and_empty_segments_are_accepted() {
    let world = World::new().await;
    world.warm_issue_index().await;
    let answer = common::get(
        &world.v3(&format!(
            "/projects/{}/issues//{}?id={}&issue_id={}",
            world.project, world.issue_id, world.project, world.issue_id
        )),
        &world.token,
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    assert_eq!(
        received(&world.sim),
        [format!(
            "GET /api/v4/projects/{}/issues/{}",
            world.project, world.issue_iid
        )]
    );
}

#[tokio::test]
async fn sudo_in_the_body_reaches_the_backend() {
    let world = World::new().await;
    let (_, _) = world.sim.create_user("impersonated", false);
    world.sim.clear_requests();
    let answer = send_json(
        Method::POST,
        &world.v3("/projects"),
        "root-token",
        json!({"name": "as-someone-else", "visibility_level": 0, "sudo": "impersonated"}),
    )
    .await;
    assert_eq!(answer.status, StatusCode::CREATED, "{:?}", answer.body);
    let sent: Value = serde_json::from_slice(&last_body(&world.sim)).unwrap();
    assert_eq!(sent["sudo"], json!("impersonated"));
    assert_eq!(answer.json()["owner"]["username"], json!("impersonated"));
}

#[tokio::test]
async fn tolerant_mode_keeps_the_v4_fields_and_adds_the_v3_ones() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let sim = svc_sim::spawn(listener, "root-token").await.unwrap();
    let demo = sim.seed_demo();
    let gateway = TestGateway::start_with(&sim.url(), |raw| {
        raw.response_shapes = Some("tolerant".to_owned())
    })
    .await;
    let answer = common::get(
        &format!("{}/api/v3/projects/{}", gateway.url(), demo.project_id),
        &demo.token,
    )
    .await;
    let project = answer.json();
    assert_eq!(project["visibility"], json!("public"), "V4 field kept");
    assert_eq!(project["visibility_level"], json!(20), "V3 field added");
    assert!(project.get("_links").is_some());
    let strict = TestGateway::start(&sim.url()).await;
    let answer = common::get(
        &format!("{}/api/v3/projects/{}", strict.url(), demo.project_id),
        &demo.token,
    )
    .await;
    assert!(
        answer.json().get("_links").is_none(),
        "strict mode removes _links"
    );
    assert!(answer.json().get("visibility").is_none());
    gateway.stop().await;
    strict.stop().await;
}

#[tokio::test]
async fn an_empty_v3_post_still_carries_the_parameters_its_rule_adds() {
    let world = World::new().await;
    let url = world.v3(&format!("/projects/{}/triggers", world.project));
    // No body at all, `Content-Length: 0`, and an empty form: each reaches V4 with the rule's `description`.
    for headers in [
        vec![("private-token", world.token.as_str())],
        vec![("private-token", world.token.as_str()), ("content-length", "0")],
        vec![
            ("private-token", world.token.as_str()),
            ("content-type", "application/x-www-form-urlencoded"),
            ("content-length", "0"),
        ],
    ] {
        world.sim.clear_requests();
        let answer = send(Method::POST, &url, &headers, None).await;
        assert_eq!(
            answer.status,
            StatusCode::CREATED,
            "{headers:?}: {:?}",
            answer.body
        );
        let body: Value = serde_json::from_slice(&last_body(&world.sim)).unwrap();
        assert_eq!(
            body["description"],
            json!("created through the V3 API"),
            "{headers:?}"
        );
    }
}

/// Asserts that an error body (`error` or `message` text) names `v3` and never the V4 name `v4` as a word.
fn assert_names_only(body: &Value, v3: &str, v4: &str) {
    let text = body["error"]
        .as_str()
        .or_else(|| body["message"].as_str())
        .unwrap_or_else(|| panic!("an error text in {body}"));
    let words: Vec<&str> = text
        .split(|character: char| !(character.is_ascii_alphanumeric() || character == '_'))
        .collect();
    assert!(words.contains(&v3), "{text:?} does not name {v3}");
    assert!(!words.contains(&v4), "{text:?} names the V4 {v4}");
}

#[tokio::test]
async fn a_v4_parameter_error_names_the_v3_parameter_the_client_sent() {
    let world = World::new().await;
    // V3 `branch_name` is V4 `branch`: V4's "branch is missing" reaches the V3 client as V3 said it.
    let answer = common::send_json(
        Method::POST,
        &world.v3(&format!("/projects/{}/repository/branches", world.project)),
        &world.token,
        json!({"ref": "main"}),
    )
    .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_names_only(&answer.json(), "branch_name", "branch");
    // V3 `note` is V4 `body` on merge request comments.
    let branch = common::send_json(
        Method::POST,
        &world.v4(&format!("/projects/{}/repository/branches", world.project)),
        &world.token,
        json!({"branch": "named", "ref": "main"}),
    )
    .await;
    assert!(branch.status.is_success(), "{:?}", branch.body);
    let mr = common::send_json(
        Method::POST,
        &world.v4(&format!("/projects/{}/merge_requests", world.project)),
        &world.token,
        json!({"title": "named", "source_branch": "named", "target_branch": "main"}),
    )
    .await;
    assert!(mr.status.is_success(), "{:?}", mr.body);
    let answer = common::send_json(
        Method::POST,
        &world.v3(&format!(
            "/projects/{}/merge_requests/{}/comments",
            world.project,
            mr.json()["id"]
        )),
        &world.token,
        json!({}),
    )
    .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_names_only(&answer.json(), "note", "body");
    // A value svcgate itself cannot convert is named as sent too.
    let answer = common::send_json(
        Method::POST,
        &world.v3("/projects"),
        &world.token,
        json!({"name": "levels", "visibility_level": 5}),
    )
    .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    let message = answer.json()["message"].as_str().unwrap_or_default().to_owned();
    assert!(message.contains("visibility_level"), "{message}");
    assert!(!message.contains("visibility "), "{message}");
}

#[tokio::test]
async fn deleting_a_user_or_a_system_hook_answers_200_with_what_was_deleted() {
    let world = World::new().await;
    let (user_id, _) = world.sim.create_user("leaving", false);
    let answer = send(
        Method::DELETE,
        &world.v3(&format!("/users/{user_id}")),
        &[("private-token", "root-token")],
        None,
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    assert_eq!(answer.json()["username"], json!("leaving"));
    let gone = common::get(&world.v4(&format!("/users/{user_id}")), "root-token").await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);

    let hook = common::send_json(
        Method::POST,
        &world.v4("/hooks"),
        "root-token",
        json!({"url": "https://hooks.example/leaving"}),
    )
    .await
    .json();
    let answer = send(
        Method::DELETE,
        &world.v3(&format!("/hooks/{}", hook["id"])),
        &[("private-token", "root-token")],
        None,
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    assert_eq!(answer.json()["url"], json!("https://hooks.example/leaving"));
    let again = send(
        Method::DELETE,
        &world.v3(&format!("/hooks/{}", hook["id"])),
        &[("private-token", "root-token")],
        None,
    )
    .await;
    assert_eq!(again.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn cancel_merge_when_build_succeeds_answers_the_v3_merge_request_read_after_the_call() {
    let world = World::new().await;
    let project = world.project;
    // A source branch whose head has the CI file: the merge request gets a running pipeline.
    let file = send_json(
        Method::POST,
        &world.v4(&format!("/projects/{project}/repository/files/.svc-ci.yml")),
        &world.token,
        json!({"branch": "auto", "start_branch": "main", "content": "test:\n  script:\n    - sleep 24h\n", "commit_message": "CI"}),
    )
    .await;
    assert_eq!(file.status, StatusCode::CREATED, "{:?}", file.body);
    let created = send_json(
        Method::POST,
        &world.v4(&format!("/projects/{project}/merge_requests")),
        &world.token,
        json!({"title": "Auto", "source_branch": "auto", "target_branch": "main"}),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let created = created.json();
    let (id, iid) = (created["id"].as_u64().unwrap(), created["iid"].as_u64().unwrap());
    assert_eq!(created["head_pipeline"]["status"], json!("running"));
    let merge = send_json(
        Method::PUT,
        &world.v4(&format!("/projects/{project}/merge_requests/{iid}/merge")),
        &world.token,
        json!({"merge_when_pipeline_succeeds": true}),
    )
    .await;
    assert_eq!(
        merge.json()["merge_when_pipeline_succeeds"],
        json!(true),
        "{:?}",
        merge.body
    );
    assert_eq!(merge.json()["state"], json!("opened"));

    for form in ["merge_requests", "merge_request"] {
        if form == "merge_request" {
            // Set again for the singular route.
            send_json(
                Method::PUT,
                &world.v4(&format!("/projects/{project}/merge_requests/{iid}/merge")),
                &world.token,
                json!({"merge_when_pipeline_succeeds": true}),
            )
            .await;
        }
        world.sim.clear_requests();
        let answer = send(
            Method::POST,
            &world.v3(&format!(
                "/projects/{project}/{form}/{id}/cancel_merge_when_build_succeeds"
            )),
            &[("private-token", &world.token)],
            None,
        )
        .await;
        assert_eq!(answer.status, StatusCode::CREATED, "{form}: {:?}", answer.body);
        let received = received(&world.sim);
        let call = format!(
            "POST /api/v4/projects/{project}/merge_requests/{iid}/cancel_merge_when_pipeline_succeeds"
        );
        let read = format!("GET /api/v4/projects/{project}/merge_requests/{iid}");
        let at = received
            .iter()
            .position(|line| *line == call)
            .expect("the V4 call");
        assert!(
            received[at + 1..].contains(&read),
            "{form}: the merge request read after the call: {received:?}"
        );
        let body = answer.json();
        assert_v3_fields(&body, "merge_request", &[]);
        assert_eq!(body["id"], json!(id));
        assert_eq!(body["iid"], json!(iid));
        assert_eq!(body["merge_when_build_succeeds"], json!(false), "{form}");
        assert_eq!(body["state"], json!("opened"));
    }

    // Without an automatic merge set, V4 answers its error object under 201; V3 answered the merge request.
    let answer = send(
        Method::POST,
        &world.v3(&format!(
            "/projects/{project}/merge_requests/{id}/cancel_merge_when_build_succeeds"
        )),
        &[("private-token", &world.token)],
        None,
    )
    .await;
    assert_eq!(answer.status, StatusCode::CREATED);
    assert_eq!(answer.json()["merge_when_build_succeeds"], json!(false));
    assert_eq!(answer.json()["id"], json!(id));
}

#[tokio::test]
async fn denying_an_access_request_answers_200_with_the_request_as_v3_servers_of_8x_did() {
    let world = World::new().await;
    let (asker, asker_token) = world.sim.create_user("asker", false);
    let requested = common::send_json(
        Method::POST,
        &world.v4(&format!("/projects/{}/access_requests", world.project)),
        &asker_token,
        json!({}),
    )
    .await;
    assert_eq!(requested.status, StatusCode::CREATED, "{:?}", requested.body);
    let url = world.v3(&format!("/projects/{}/access_requests/{asker}", world.project));
    let denied = send(Method::DELETE, &url, &[("private-token", &world.token)], None).await;
    assert_eq!(denied.status, StatusCode::OK, "{:?}", denied.body);
    assert_eq!(denied.json()["username"], json!("asker"));
    let again = send(Method::DELETE, &url, &[("private-token", &world.token)], None).await;
    assert_eq!(again.status, StatusCode::NOT_FOUND);
}
