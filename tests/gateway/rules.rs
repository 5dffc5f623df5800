//! One case per rule of the table, over real sockets (client → svcgate → svc-sim), in two parts.
//!
//! The cases in detail assert the exact V4 request(s) the backend received and the V3 response (status, exact
//! field set, values).
//!
//! The table runs every rule at least once: each case is a V3 request, the V4 requests the backend must have
//! received for it (in order; other calls such as id lookups or per-item fetches may come between), and the V3
//! status. Placeholders in braces (`{p}`, `{issue}`, `{issue_iid}`, …) are the objects [`table_world`] creates.
//! After the table has run, the gateway's own metrics must show every rule of the table used at least once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::common::sim::ADMIN;
use crate::common::{get, send, send_json, TestGateway};
use crate::world::World as TableWorld;
use http::{Method, StatusCode};
use serde_json::{json, Value};
use svc_sim::SimHandle;

/// Fields the last V3 release's code (10.8, `lib/api/v3/entities.rb`) exposes beyond the 9.2 fixture bodies: the
/// code wins: `Project` exposes `resolve_outdated_diff_discussions`.
const ADDED_AFTER_FIXTURES: &[(&str, &[&str])] = &[("project", &["resolve_outdated_diff_discussions"])];

/// The V3 field names of a fixture body (tests/fixtures/v3-responses, real bodies of a 9.2 server), with the
/// fields 10.8's V3 code added, sorted.
fn fixture_keys(name: &str) -> Vec<String> {
    let path = format!(
        "{}/tests/fixtures/v3-responses/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{path}: {error}"));
    let value: Value = serde_json::from_str(&text).unwrap();
    let mut keys: Vec<String> = value.as_object().unwrap().keys().cloned().collect();
    for (fixture, added) in ADDED_AFTER_FIXTURES {
        if *fixture == name {
            keys.extend(added.iter().map(|key| (*key).to_owned()));
        }
    }
    keys.sort();
    keys.dedup();
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
        let (sim, demo, gateway) = common::sim::with_gateway().await;
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
            "POST /api/graphql".to_owned(),
        ],
        "the list, then every item's `subscribed` in one GraphQL request"
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
    let (sim, demo) = common::sim::with_demo().await;
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

// The table: every rule at least once, with the V4 requests of its row and its V3 status.

/// One case: V3 request line, body (JSON if it starts with `{`, else form-encoded), V4 request lines, V3 status.
type Case = (&'static str, Option<&'static str>, &'static [&'static str], u16);

/// The table's placeholders filled from `world`; a placeholder left unfilled is a mistake in the table.
fn filled(world: &TableWorld, text: &str) -> String {
    let out = world.fill(text);
    assert!(
        !out.contains('{') || out.starts_with('{'),
        "unfilled placeholder in {out}"
    );
    out
}

/// The shared world with every object the table's rows name.
async fn table_world() -> TableWorld {
    let mut world = TableWorld::new().await;
    let t = world.token.clone();
    let p = world.var("p");
    let g = world.var("g");
    let demo_user = world.var("demo");
    // The demo project named by its namespaced path, as V3 clients may (`demo-group%2Fdemo-project`).
    let pp = world.demo.project_path.replace('/', "%2F");
    world.keep("pp", &json!(pp));

    world.project("q", &t, json!({"name": "other"})).await;
    world.project("doomed", &t, json!({"name": "doomed"})).await;

    for (name, title) in [("issue", "first"), ("issue2", "to delete"), ("issue3", "to move")] {
        let issue = world.issue(name, &p, &t, title).await;
        world.keep(format!("{name}_iid"), &issue["iid"]);
    }
    let iid = world.var("issue_iid");
    for name in ["note", "note2"] {
        world
            .note(name, &format!("/projects/{p}/issues/{iid}"), &t, name)
            .await;
    }
    for branch in ["feature", "feature2"] {
        world
            .setup(
                Method::POST,
                &format!("/projects/{p}/repository/branches"),
                &t,
                json!({"branch": branch, "ref": "main"}),
            )
            .await;
        world
            .setup(
                Method::POST,
                &format!("/projects/{p}/repository/commits"),
                &t,
                json!({"branch": branch, "commit_message": "work", "actions": [{"action": "create", "file_path": format!("{branch}.txt"), "content": "x"}]}),
            )
            .await;
    }
    for (name, iid_name, branch) in [("mr", "mr_iid", "feature"), ("mr2", "mr2_iid", "feature2")] {
        let mr = world
            .made(
                name,
                "id",
                &format!("/projects/{p}/merge_requests"),
                &t,
                json!({"title": name, "source_branch": branch, "target_branch": "main", "description": "Closes #1"}),
            )
            .await;
        world.keep(iid_name, &mr["iid"]);
    }
    let mr_iid = world.var("mr_iid");
    world
        .note(
            "mr_note",
            &format!("/projects/{p}/merge_requests/{mr_iid}"),
            &t,
            "mr note",
        )
        .await;
    for name in ["snippet", "snippet2"] {
        world
            .made(
                name,
                "id",
                &format!("/projects/{p}/snippets"),
                &t,
                json!({"title": name, "file_name": "a.txt", "code": "hello", "visibility": "private"}),
            )
            .await;
    }
    let snippet = world.var("snippet");
    world
        .note(
            "snippet_note",
            &format!("/projects/{p}/snippets/{snippet}"),
            &t,
            "snippet note",
        )
        .await;
    world
        .made(
            "personal",
            "id",
            "/snippets",
            &t,
            json!({"title": "mine", "file_name": "m.txt", "content": "x", "visibility": "private"}),
        )
        .await;
    let note = world.var("note");
    let awardables = [
        ("award_issue", format!("/projects/{p}/issues/{iid}")),
        (
            "award_issue_note",
            format!("/projects/{p}/issues/{iid}/notes/{note}"),
        ),
        ("award_mr", format!("/projects/{p}/merge_requests/{mr_iid}")),
        (
            "award_mr_note",
            format!(
                "/projects/{p}/merge_requests/{mr_iid}/notes/{}",
                world.var("mr_note")
            ),
        ),
        ("award_snippet", format!("/projects/{p}/snippets/{snippet}")),
        (
            "award_snippet_note",
            format!(
                "/projects/{p}/snippets/{snippet}/notes/{}",
                world.var("snippet_note")
            ),
        ),
    ];
    for (name, path) in awardables {
        world.award(name, &path, "thumbsup").await;
    }
    world
        .made(
            "label",
            "id",
            &format!("/projects/{p}/labels"),
            &t,
            json!({"name": "triage", "color": "#FF0000"}),
        )
        .await;
    world
        .setup(
            Method::POST,
            &format!("/projects/{p}/labels"),
            &t,
            json!({"name": "doomed-label", "color": "#00FF00"}),
        )
        .await;
    world
        .made(
            "milestone",
            "id",
            &format!("/projects/{p}/milestones"),
            &t,
            json!({"title": "v1"}),
        )
        .await;
    let pipelines = world
        .setup(Method::GET, &format!("/projects/{p}/pipelines"), &t, json!({}))
        .await;
    world.keep("pipeline", &pipelines[0]["id"]);
    let jobs = world
        .setup(Method::GET, &format!("/projects/{p}/jobs"), &t, json!({}))
        .await;
    let job_named = |name: &str| {
        jobs.as_array()
            .unwrap()
            .iter()
            .find(|job| job["name"] == json!(name))
            .map(|job| job["id"].clone())
            .unwrap_or_else(|| panic!("a {name} job in {jobs}"))
    };
    let (build, manual) = (job_named("build"), job_named("deploy"));
    world.keep("job", &build);
    world.keep("manual_job", &manual);
    let todo_target = world.var("issue2_iid");
    world
        .setup(
            Method::POST,
            &format!("/projects/{p}/issues/{todo_target}/todo"),
            &t,
            json!({}),
        )
        .await;
    let todos = world.setup(Method::GET, "/todos", &t, json!({})).await;
    world.keep("todo", &todos[0]["id"]);
    let commits = world
        .setup(
            Method::GET,
            &format!("/projects/{p}/repository/commits"),
            &t,
            json!({}),
        )
        .await;
    world.keep("sha", &commits[0]["id"]);
    for name in ["trigger", "trigger2"] {
        world.trigger(name, &p).await;
    }
    world.variable("variable", &p, "DOOMED", "x").await;
    for name in ["env", "env2"] {
        world
            .made(
                name,
                "id",
                &format!("/projects/{p}/environments"),
                &t,
                json!({"name": name}),
            )
            .await;
    }
    let deployments = world
        .setup(Method::GET, &format!("/projects/{p}/deployments"), &t, json!({}))
        .await;
    world.keep("deployment", &deployments[0]["id"]);
    for tag in ["v1.0", "old/tag"] {
        world
            .setup(
                Method::POST,
                &format!("/projects/{p}/repository/tags"),
                &t,
                json!({"tag_name": tag, "ref": "main"}),
            )
            .await;
    }
    let key = |n: u8| {
        format!(
            "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC{}{n} v3@example.com",
            "x".repeat(40)
        )
    };
    for (name, n) in [("key", 1u8), ("key2", 2), ("key3", 3), ("key4", 4)] {
        world
            .made(
                name,
                "id",
                &format!("/projects/{p}/deploy_keys"),
                &t,
                json!({"title": name, "key": key(n)}),
            )
            .await;
    }
    for name in ["hook", "hook2"] {
        world
            .made(
                name,
                "id",
                &format!("/projects/{p}/hooks"),
                &t,
                json!({"url": "https://hooks.example/in", "job_events": true}),
            )
            .await;
    }
    for (name, url) in [
        ("system_hook", "https://hooks.example/system"),
        ("system_hook2", "https://hooks.example/doomed"),
    ] {
        world.made(name, "id", "/hooks", ADMIN, json!({"url": url})).await;
    }
    world
        .made(
            "email",
            "id",
            &format!("/users/{demo_user}/emails"),
            ADMIN,
            json!({"email": "second@example.com"}),
        )
        .await;
    world
        .made(
            "email2",
            "id",
            "/user/emails",
            &t,
            json!({"email": "third@example.com"}),
        )
        .await;
    world.user("goner", "goner");
    let (_, asker_token) = world.user("asker", "asker");
    for source in [format!("/projects/{p}"), format!("/groups/{g}")] {
        world
            .setup(
                Method::POST,
                &format!("{source}/access_requests"),
                &asker_token,
                json!({}),
            )
            .await;
    }
    for name in ["user_key", "user_key2"] {
        world
            .made(
                name,
                "id",
                "/user/keys",
                &t,
                json!({"title": name, "key": key(if name == "user_key" { 5 } else { 6 })}),
            )
            .await;
    }
    let runners = world.setup(Method::GET, "/runners/all", ADMIN, json!({})).await;
    let specific = runners
        .as_array()
        .unwrap()
        .iter()
        .find(|runner| runner["is_shared"] == json!(false))
        .expect("a specific runner");
    world.keep("runner", &specific["id"]);
    let shared = runners
        .as_array()
        .unwrap()
        .iter()
        .find(|runner| runner["is_shared"] == json!(true))
        .unwrap();
    world.keep("shared_runner", &shared["id"]);
    world
        .made(
            "message",
            "id",
            "/broadcast_messages",
            ADMIN,
            json!({"message": "maintenance"}),
        )
        .await;
    let boards = world
        .setup(Method::GET, &format!("/projects/{p}/boards"), &t, json!({}))
        .await;
    world.keep("board", &boards[0]["id"]);
    let board_label = world
        .setup(
            Method::POST,
            &format!("/projects/{p}/labels"),
            &t,
            json!({"name": "on-board", "color": "#00ff00"}),
        )
        .await;
    world
        .made(
            "board_list",
            "id",
            &format!("/projects/{p}/boards/{}/lists", boards[0]["id"]),
            &t,
            json!({"label_id": board_label["id"]}),
        )
        .await;
    world.user("user", "member");
    let (leaver, _) = world.user("leaver", "leaver");
    world.member(&format!("/groups/{g}"), leaver, 30).await;
    world
}

fn cases() -> Vec<Case> {
    vec![
        // Projects (2.1)
        ("GET /projects", None, &["GET /projects?membership=true"], 200),
        ("GET /projects/visible", None, &["GET /projects"], 200),
        ("GET /projects/owned", None, &["GET /projects?owned=true"], 200),
        ("GET /projects/starred", None, &["GET /projects?starred=true"], 200),
        ("GET /projects/all", None, &["GET /user"], 403),
        ("GET /projects/search/demo", None, &["GET /projects?search=demo"], 200),
        ("POST /projects", Some(r#"{"name": "made", "visibility_level": 10}"#), &["POST /projects"], 201),
        ("GET /projects/{p}", None, &["GET /projects/{p}"], 200),
        ("GET /projects/{p}/events", None, &["GET /projects/{p}/events"], 200),
        ("PUT /projects/{p}", Some("description=edited&public=true"), &["PUT /projects/{p}"], 200),
        ("POST /projects/fork/{q}", Some(r#"{"namespace": "demo-group"}"#), &["POST /projects/{q}/fork"], 201),
        ("POST /projects/{q}/archive", None, &["POST /projects/{q}/archive"], 201),
        ("POST /projects/{q}/unarchive", None, &["POST /projects/{q}/unarchive"], 201),
        ("POST /projects/{p}/star", None, &["POST /projects/{p}/star"], 201),
        ("DELETE /projects/{p}/star", None, &["POST /projects/{p}/unstar"], 200),
        ("POST /projects/{p}/share", Some(r#"{"group_id": {g}, "group_access": 30}"#), &["POST /projects/{p}/share"], 201),
        ("DELETE /projects/{p}/share/{g}", None, &["DELETE /projects/{p}/share/{g}"], 204),
        ("GET /projects/{p}/users", None, &["GET /projects/{p}/users"], 200),
        // A project named by its namespaced path goes to V4 as it came, percent-encoding kept.
        ("GET /projects/{pp}", None, &["GET /projects/{pp}"], 200),
        ("GET /projects/{pp}/issues/{issue}", None, &["GET /projects/{pp}/issues/{issue_iid}"], 200),
        ("PUT /projects/{pp}/issues/{issue}", Some("labels=x&description=named"), &["PUT /projects/{pp}/issues/{issue_iid}"], 200),
        ("GET /projects/{pp}/repository/branches", None, &["GET /projects/{pp}/repository/branches?per_page=100&page=1"], 200),
        // Issues (2.2)
        ("GET /issues?labels=a,b", None, &["GET /issues", "GET /issues"], 200),
        ("GET /groups/{g}/issues", None, &["GET /groups/{g}/issues"], 200),
        ("GET /projects/{p}/issues?iid={issue_iid}", None, &["GET /projects/{p}/issues?iids%5B%5D={issue_iid}"], 200),
        ("POST /projects/{p}/issues", Some(r#"{"title": "new"}"#), &["POST /projects/{p}/issues"], 201),
        ("GET /projects/{p}/issues/{issue}", None, &["GET /projects/{p}/issues/{issue_iid}"], 200),
        ("PUT /projects/{p}/issues/{issue}", Some(r#"{"description": "d"}"#), &["PUT /projects/{p}/issues/{issue_iid}"], 200),
        ("POST /projects/{p}/issues/{issue3}/move", Some(r#"{"to_project_id": {q}}"#), &["POST /projects/{p}/issues/{issue3_iid}/move"], 201),
        ("POST /projects/{p}/issues/{issue}/todo", None, &["POST /projects/{p}/issues/{issue_iid}/todo"], 201),
        ("POST /projects/{p}/merge_requests/{mr}/todo", None, &["POST /projects/{p}/merge_requests/{mr_iid}/todo"], 201),
        // Time tracking (2.6)
        ("POST /projects/{p}/issues/{issue}/time_estimate", Some("duration=3h"), &["POST /projects/{p}/issues/{issue_iid}/time_estimate"], 200),
        ("POST /projects/{p}/issues/{issue}/reset_time_estimate", None, &["POST /projects/{p}/issues/{issue_iid}/reset_time_estimate"], 200),
        ("POST /projects/{p}/issues/{issue}/add_spent_time", Some("duration=1h"), &["POST /projects/{p}/issues/{issue_iid}/add_spent_time"], 201),
        ("POST /projects/{p}/issues/{issue}/reset_spent_time", None, &["POST /projects/{p}/issues/{issue_iid}/reset_spent_time"], 200),
        ("GET /projects/{p}/issues/{issue}/time_stats", None, &["GET /projects/{p}/issues/{issue_iid}/time_stats"], 200),
        ("POST /projects/{p}/merge_requests/{mr}/time_estimate", Some("duration=3h"), &["POST /projects/{p}/merge_requests/{mr_iid}/time_estimate"], 200),
        ("POST /projects/{p}/merge_requests/{mr}/reset_time_estimate", None, &["POST /projects/{p}/merge_requests/{mr_iid}/reset_time_estimate"], 200),
        ("POST /projects/{p}/merge_requests/{mr}/add_spent_time", Some("duration=1h"), &["POST /projects/{p}/merge_requests/{mr_iid}/add_spent_time"], 201),
        ("POST /projects/{p}/merge_requests/{mr}/reset_spent_time", None, &["POST /projects/{p}/merge_requests/{mr_iid}/reset_spent_time"], 200),
        ("GET /projects/{p}/merge_requests/{mr}/time_stats", None, &["GET /projects/{p}/merge_requests/{mr_iid}/time_stats"], 200),
        // Merge requests (2.3), both the plural and the removed singular form
        ("GET /projects/{p}/merge_requests?iid[]={mr_iid}", None, &["GET /projects/{p}/merge_requests?iids%5B%5D={mr_iid}", "POST !/api/graphql"], 200),
        ("POST /projects/{p}/merge_requests", Some(r#"{"title": "x", "source_branch": "feature", "target_branch": "main"}"#), &["POST /projects/{p}/merge_requests"], 409),
        ("GET /projects/{p}/merge_requests/{mr}", None, &["GET /projects/{p}/merge_requests/{mr_iid}"], 200),
        ("GET /projects/{p}/merge_request/{mr}", None, &["GET /projects/{p}/merge_requests/{mr_iid}"], 200),
        ("PUT /projects/{p}/merge_requests/{mr}", Some(r#"{"description": "Closes #1"}"#), &["PUT /projects/{p}/merge_requests/{mr_iid}"], 200),
        ("PUT /projects/{p}/merge_request/{mr}", Some(r#"{"description": "Closes #1"}"#), &["PUT /projects/{p}/merge_requests/{mr_iid}"], 200),
        ("GET /projects/{p}/merge_requests/{mr}/commits", None, &["GET /projects/{p}/merge_requests/{mr_iid}/commits?per_page=100&page=1"], 200),
        ("GET /projects/{p}/merge_request/{mr}/commits", None, &["GET /projects/{p}/merge_requests/{mr_iid}/commits?per_page=100&page=1"], 200),
        ("GET /projects/{p}/merge_requests/{mr}/changes", None, &["GET /projects/{p}/merge_requests/{mr_iid}/changes"], 200),
        ("GET /projects/{p}/merge_request/{mr}/changes", None, &["GET /projects/{p}/merge_requests/{mr_iid}/changes"], 200),
        ("GET /projects/{p}/merge_requests/{mr}/comments", None, &["GET /projects/{p}/merge_requests/{mr_iid}/notes?order_by=created_at&sort=asc"], 200),
        ("GET /projects/{p}/merge_request/{mr}/comments", None, &["GET /projects/{p}/merge_requests/{mr_iid}/notes?order_by=created_at&sort=asc"], 200),
        ("POST /projects/{p}/merge_requests/{mr}/comments", Some("note=hi"), &["POST /projects/{p}/merge_requests/{mr_iid}/notes"], 201),
        ("POST /projects/{p}/merge_request/{mr}/comments", Some("note=hi"), &["POST /projects/{p}/merge_requests/{mr_iid}/notes"], 201),
        ("GET /projects/{p}/merge_requests/{mr}/closes_issues", None, &["GET /projects/{p}/merge_requests/{mr_iid}/closes_issues"], 200),
        ("GET /projects/{p}/merge_request/{mr}/closes_issues", None, &["GET /projects/{p}/merge_requests/{mr_iid}/closes_issues"], 200),
        ("GET /projects/{p}/merge_requests/{mr}/versions", None, &["GET /projects/{p}/merge_requests/{mr_iid}/versions?per_page=100&page=1"], 200),
        ("GET /projects/{p}/merge_requests/{mr}/versions/{mr}", None, &["GET /projects/{p}/merge_requests/{mr_iid}/versions/{mr}"], 200),
        ("POST /projects/{p}/merge_requests/{mr}/cancel_merge_when_build_succeeds", None, &["POST /projects/{p}/merge_requests/{mr_iid}/cancel_merge_when_pipeline_succeeds", "GET /projects/{p}/merge_requests/{mr_iid}"], 201),
        ("POST /projects/{p}/merge_request/{mr}/cancel_merge_when_build_succeeds", None, &["POST /projects/{p}/merge_requests/{mr_iid}/cancel_merge_when_pipeline_succeeds", "GET /projects/{p}/merge_requests/{mr_iid}"], 201),
        ("PUT /projects/{p}/merge_request/{mr}/merge", Some("sha=0000000"), &["PUT /projects/{p}/merge_requests/{mr_iid}/merge"], 409),
        ("PUT /projects/{p}/merge_requests/{mr}/merge", Some("merge_when_build_succeeds=false"), &["PUT /projects/{p}/merge_requests/{mr_iid}/merge"], 200),
        // Notes (2.4)
        ("GET /projects/{p}/issues/{issue}/notes", None, &["GET /projects/{p}/issues/{issue_iid}/notes?order_by=created_at&sort=asc"], 200),
        ("GET /projects/{p}/issues/{issue}/notes/{note}", None, &["GET /projects/{p}/issues/{issue_iid}/notes/{note}"], 200),
        ("POST /projects/{p}/issues/{issue}/notes", Some("body="), &["POST /projects/{p}/issues/{issue_iid}/notes"], 404),
        ("PUT /projects/{p}/issues/{issue}/notes/{note}", Some("body=edited"), &["PUT /projects/{p}/issues/{issue_iid}/notes/{note}"], 200),
        ("GET /projects/{p}/merge_requests/{mr}/notes", None, &["GET /projects/{p}/merge_requests/{mr_iid}/notes?order_by=created_at&sort=asc"], 200),
        ("GET /projects/{p}/merge_requests/{mr}/notes/{mr_note}", None, &["GET /projects/{p}/merge_requests/{mr_iid}/notes/{mr_note}"], 200),
        ("POST /projects/{p}/merge_requests/{mr}/notes", Some("body=more"), &["POST /projects/{p}/merge_requests/{mr_iid}/notes"], 201),
        ("PUT /projects/{p}/merge_requests/{mr}/notes/{mr_note}", Some("body=edited"), &["PUT /projects/{p}/merge_requests/{mr_iid}/notes/{mr_note}"], 200),
        ("GET /projects/{p}/snippets/{snippet}/notes", None, &["GET /projects/{p}/snippets/{snippet}/notes?order_by=created_at&sort=asc"], 200),
        ("GET /projects/{p}/snippets/{snippet}/notes/{snippet_note}", None, &["GET /projects/{p}/snippets/{snippet}/notes/{snippet_note}"], 200),
        ("POST /projects/{p}/snippets/{snippet}/notes", Some("body=more"), &["POST /projects/{p}/snippets/{snippet}/notes"], 201),
        ("PUT /projects/{p}/snippets/{snippet}/notes/{snippet_note}", Some("body=edited"), &["PUT /projects/{p}/snippets/{snippet}/notes/{snippet_note}"], 200),
        // Award emoji (2.5)
        ("GET /projects/{p}/issues/{issue}/award_emoji", None, &["GET /projects/{p}/issues/{issue_iid}/award_emoji"], 200),
        ("GET /projects/{p}/issues/{issue}/award_emoji/{award_issue}", None, &["GET /projects/{p}/issues/{issue_iid}/award_emoji/{award_issue}"], 200),
        ("POST /projects/{p}/issues/{issue}/award_emoji", Some("name=tada"), &["POST /projects/{p}/issues/{issue_iid}/award_emoji"], 201),
        ("GET /projects/{p}/issues/{issue}/notes/{note}/award_emoji", None, &["GET /projects/{p}/issues/{issue_iid}/notes/{note}/award_emoji"], 200),
        ("GET /projects/{p}/issues/{issue}/notes/{note}/award_emoji/{award_issue_note}", None, &["GET /projects/{p}/issues/{issue_iid}/notes/{note}/award_emoji/{award_issue_note}"], 200),
        ("POST /projects/{p}/issues/{issue}/notes/{note}/award_emoji", Some("name=tada"), &["POST /projects/{p}/issues/{issue_iid}/notes/{note}/award_emoji"], 201),
        ("GET /projects/{p}/merge_requests/{mr}/award_emoji", None, &["GET /projects/{p}/merge_requests/{mr_iid}/award_emoji"], 200),
        ("GET /projects/{p}/merge_requests/{mr}/award_emoji/{award_mr}", None, &["GET /projects/{p}/merge_requests/{mr_iid}/award_emoji/{award_mr}"], 200),
        ("POST /projects/{p}/merge_requests/{mr}/award_emoji", Some("name=tada"), &["POST /projects/{p}/merge_requests/{mr_iid}/award_emoji"], 201),
        ("GET /projects/{p}/merge_requests/{mr}/notes/{mr_note}/award_emoji", None, &["GET /projects/{p}/merge_requests/{mr_iid}/notes/{mr_note}/award_emoji"], 200),
        ("GET /projects/{p}/merge_requests/{mr}/notes/{mr_note}/award_emoji/{award_mr_note}", None, &["GET /projects/{p}/merge_requests/{mr_iid}/notes/{mr_note}/award_emoji/{award_mr_note}"], 200),
        ("POST /projects/{p}/merge_requests/{mr}/notes/{mr_note}/award_emoji", Some("name=tada"), &["POST /projects/{p}/merge_requests/{mr_iid}/notes/{mr_note}/award_emoji"], 201),
        ("GET /projects/{p}/snippets/{snippet}/award_emoji", None, &["GET /projects/{p}/snippets/{snippet}/award_emoji"], 200),
        ("GET /projects/{p}/snippets/{snippet}/award_emoji/{award_snippet}", None, &["GET /projects/{p}/snippets/{snippet}/award_emoji/{award_snippet}"], 200),
        ("POST /projects/{p}/snippets/{snippet}/award_emoji", Some("name=tada"), &["POST /projects/{p}/snippets/{snippet}/award_emoji"], 201),
        ("GET /projects/{p}/snippets/{snippet}/notes/{snippet_note}/award_emoji", None, &["GET /projects/{p}/snippets/{snippet}/notes/{snippet_note}/award_emoji"], 200),
        ("GET /projects/{p}/snippets/{snippet}/notes/{snippet_note}/award_emoji/{award_snippet_note}", None, &["GET /projects/{p}/snippets/{snippet}/notes/{snippet_note}/award_emoji/{award_snippet_note}"], 200),
        ("POST /projects/{p}/snippets/{snippet}/notes/{snippet_note}/award_emoji", Some("name=tada"), &["POST /projects/{p}/snippets/{snippet}/notes/{snippet_note}/award_emoji"], 201),
        // Subscriptions (2.7)
        ("POST /projects/{p}/issues/{issue}/subscription", None, &["POST /projects/{p}/issues/{issue_iid}/subscribe"], 304),
        ("DELETE /projects/{p}/issues/{issue}/subscription", None, &["POST /projects/{p}/issues/{issue_iid}/unsubscribe"], 200),
        ("POST /projects/{p}/merge_requests/{mr}/subscription", None, &["POST /projects/{p}/merge_requests/{mr_iid}/subscribe"], 304),
        ("DELETE /projects/{p}/merge_requests/{mr}/subscription", None, &["POST /projects/{p}/merge_requests/{mr_iid}/unsubscribe"], 200),
        ("POST /projects/{p}/merge_request/{mr}/subscription", None, &["POST /projects/{p}/merge_requests/{mr_iid}/subscribe"], 201),
        ("DELETE /projects/{p}/merge_request/{mr}/subscription", None, &["POST /projects/{p}/merge_requests/{mr_iid}/unsubscribe"], 200),
        ("POST /projects/{p}/labels/{label}/subscription", None, &["POST /projects/{p}/labels/{label}/subscribe"], 201),
        ("DELETE /projects/{p}/labels/{label}/subscription", None, &["POST /projects/{p}/labels/{label}/unsubscribe"], 200),
        // Repository (2.9)
        ("GET /projects/{p}/repository/branches", None, &["GET /projects/{p}/repository/branches?per_page=100&page=1"], 200),
        ("POST /projects/{p}/repository/branches", Some("branch_name=made&ref=main"), &["POST /projects/{p}/repository/branches"], 201),
        ("DELETE /projects/{p}/repository/branches/made", None, &["DELETE /projects/{p}/repository/branches/made"], 200),
        ("DELETE /projects/{p}/repository/merged_branches", None, &["DELETE /projects/{p}/repository/merged_branches"], 200),
        ("GET /projects/{p}/repository/tags", None, &["GET /projects/{p}/repository/tags?order_by=name&sort=desc&per_page=100&page=1"], 200),
        ("DELETE /projects/{p}/repository/tags/old/tag", None, &["DELETE /projects/{p}/repository/tags/old%2Ftag"], 200),
        ("GET /projects/{p}/repository/commits?page=0", None, &["GET /projects/{p}/repository/commits?page=1"], 200),
        ("POST /projects/{p}/repository/commits", Some(r#"{"branch_name": "main", "commit_message": "v3", "actions": [{"action": "create", "file_path": "v3.txt", "content": "x"}]}"#), &["POST /projects/{p}/repository/commits"], 201),
        ("GET /projects/{p}/repository/commits/{sha}", None, &["GET /projects/{p}/repository/commits/{sha}"], 200),
        ("GET /projects/{p}/repository/commits/{sha}/diff", None, &["GET /projects/{p}/repository/commits/{sha}/diff?per_page=100&page=1"], 200),
        ("POST /projects/{p}/repository/commits/{sha}/comments", Some("note=nice"), &["POST /projects/{p}/repository/commits/{sha}/comments"], 201),
        ("GET /projects/{p}/repository/commits/{sha}/comments", None, &["GET /projects/{p}/repository/commits/{sha}/comments"], 200),
        ("POST /projects/{p}/repository/commits/{sha}/cherry_pick", Some("branch=feature2"), &["POST /projects/{p}/repository/commits/{sha}/cherry_pick"], 400),
        ("GET /projects/{p}/repository/commits/{sha}/builds", None, &["GET /projects/{p}/repository/commits/{sha}", "GET /projects/{p}/pipelines"], 200),
        ("POST /projects/{p}/repository/files", Some(r#"{"file_path": "docs/new file.md", "branch_name": "main", "content": "x", "commit_message": "add"}"#), &["POST /projects/{p}/repository/files/docs%2Fnew%20file.md"], 201),
        ("GET /projects/{p}/repository/files?file_path=docs/new%20file.md&ref=main", None, &["GET /projects/{p}/repository/files/docs%2Fnew%20file.md?ref=main"], 200),
        ("PUT /projects/{p}/repository/files", Some("file_path=docs/new%20file.md&branch_name=main&content=y&commit_message=edit"), &["PUT /projects/{p}/repository/files/docs%2Fnew%20file.md"], 200),
        ("DELETE /projects/{p}/repository/files?file_path=docs/new%20file.md&branch_name=main&commit_message=rm", None, &["DELETE /projects/{p}/repository/files/docs%2Fnew%20file.md"], 200),
        ("GET /projects/{p}/repository/tree?ref_name=main", None, &["GET /projects/{p}/repository/tree?ref=main&per_page=100&page=1"], 200),
        ("GET /projects/{p}/repository/blobs/main?filepath=README.md", None, &["GET /projects/{p}/repository/files/README.md/raw?ref=main"], 200),
        ("GET /projects/{p}/repository/commits/main/blob?filepath=README.md", None, &["GET /projects/{p}/repository/files/README.md/raw?ref=main"], 200),
        ("GET /projects/{p}/repository/raw_blobs/0000000000000000000000000000000000000000", None, &["GET /projects/{p}/repository/blobs/0000000000000000000000000000000000000000/raw"], 404),
        ("GET /projects/{p}/repository/archive", None, &["GET /projects/{p}/repository/archive"], 200),
        ("GET /projects/{p}/repository/compare?from=main&to=feature2", None, &["GET /projects/{p}/repository/compare?from=main&to=feature2"], 200),
        ("GET /projects/{p}/repository/contributors", None, &["GET /projects/{p}/repository/contributors?per_page=100&page=1"], 200),
        // Builds → jobs (2.10), pipelines (2.11), triggers (2.12)
        ("GET /projects/{p}/builds?scope=success", None, &["GET /projects/{p}/jobs?scope%5B%5D=success"], 200),
        ("GET /projects/{p}/builds/{job}", None, &["GET /projects/{p}/jobs/{job}"], 200),
        ("GET /projects/{p}/builds/{job}/artifacts", None, &["GET /projects/{p}/jobs/{job}/artifacts"], 200),
        ("GET /projects/{p}/builds/artifacts/main/download?job=build", None, &["GET /projects/{p}/jobs/artifacts/main/download?job=build"], 200),
        ("GET /projects/{p}/builds/{job}/trace", None, &["GET /projects/{p}/jobs/{job}/trace"], 200),
        ("POST /projects/{p}/builds/{job}/artifacts/keep", None, &["POST /projects/{p}/jobs/{job}/artifacts/keep"], 200),
        ("POST /projects/{p}/builds/{manual_job}/play", None, &["POST /projects/{p}/jobs/{manual_job}/play"], 200),
        ("POST /projects/{p}/builds/{job}/erase", None, &["POST /projects/{p}/jobs/{job}/erase"], 201),
        ("POST /projects/{p}/builds/{job}/cancel", None, &["POST /projects/{p}/jobs/{job}/cancel"], 201),
        ("POST /projects/{p}/builds/{job}/retry", None, &["POST /projects/{p}/jobs/{job}/retry"], 201),
        ("GET /projects/{p}/pipelines", None, &["GET /projects/{p}/pipelines", "GET /projects/{p}/pipelines/{pipeline}"], 200),
        ("POST /projects/{p}/trigger/builds", Some("ref=main&token={trigger}&variables[A]=1"), &["POST /projects/{p}/trigger/pipeline"], 201),
        ("POST /projects/{p}/ref/main/trigger/builds", Some(r#"{"token": "{trigger}"}"#), &["POST /projects/{p}/ref/main/trigger/pipeline"], 201),
        ("GET /projects/{p}/triggers", None, &["GET /projects/{p}/triggers"], 200),
        // Variables (2.26): V4's routes, the V3 entity.
        ("GET /projects/{p}/variables", None, &["GET /projects/{p}/variables"], 200),
        ("POST /projects/{p}/variables", Some(r#"{"key": "KEPT", "value": "v"}"#), &["POST /projects/{p}/variables"], 201),
        ("GET /projects/{p}/variables/KEPT", None, &["GET /projects/{p}/variables/KEPT"], 200),
        ("PUT /projects/{p}/variables/KEPT", Some(r#"{"value": "w"}"#), &["PUT /projects/{p}/variables/KEPT"], 200),
        ("POST /projects/{p}/triggers", None, &["POST /projects/{p}/triggers"], 201),
        ("GET /projects/{p}/triggers/{trigger}", None, &["GET /projects/{p}/triggers?per_page=100&page=1"], 200),
        ("DELETE /projects/{p}/triggers/{trigger2}", None, &["GET /projects/{p}/triggers?per_page=100&page=1"], 200),
        // Environments and deployments (2.13)
        ("GET /projects/{p}/environments", None, &["GET /projects/{p}/environments", "GET /projects/{p}"], 200),
        ("POST /projects/{p}/environments", Some("name=review"), &["POST /projects/{p}/environments", "GET /projects/{p}"], 201),
        ("PUT /projects/{p}/environments/{env}", Some("external_url=https://x.example"), &["PUT /projects/{p}/environments/{env}", "GET /projects/{p}"], 200),
        ("DELETE /projects/{p}/environments/{env2}", None, &["GET /projects/{p}/environments/{env2}", "DELETE /projects/{p}/environments/{env2}"], 200),
        ("GET /projects/{p}/deployments", None, &["GET /projects/{p}/deployments"], 200),
        ("GET /projects/{p}/deployments/{deployment}", None, &["GET /projects/{p}/deployments/{deployment}"], 200),
        // Labels (2.14), milestones (2.15)
        ("GET /projects/{p}/labels", None, &["GET /projects/{p}/labels?with_counts=true&per_page=100&page=1"], 200),
        ("DELETE /projects/{p}/labels?name=doomed-label", None, &["DELETE /projects/{p}/labels?name=doomed-label"], 200),
        ("GET /projects/{p}/milestones?state=all", None, &["GET /projects/{p}/milestones"], 200),
        ("GET /projects/{p}/milestones/{milestone}/issues", None, &["GET /projects/{p}/milestones/{milestone}/issues"], 200),
        // Members (2.16)
        ("GET /projects/{p}/members", None, &["GET /projects/{p}/members"], 200),
                ("POST /projects/{p}/members", Some("user_id={user}&access_level=20"), &["POST /projects/{p}/members"], 201),
        ("GET /projects/{p}/members/{user}", None, &["GET /projects/{p}/members/{user}"], 200),
        ("PUT /projects/{p}/members/{user}", Some("access_level=30"), &["PUT /projects/{p}/members/{user}"], 200),
        ("DELETE /projects/{p}/members/{user}", None, &["GET /projects/{p}/members/{user}", "DELETE /projects/{p}/members/{user}"], 200),
        ("GET /groups/{g}/members", None, &["GET /groups/{g}/members"], 200),
        ("GET /groups/{g}/members/{demo}", None, &["GET /groups/{g}/members/{demo}"], 200),
        ("POST /groups/{g}/members", Some("user_id={user}&access_level=20"), &["POST /groups/{g}/members"], 201),
        ("PUT /groups/{g}/members/{user}", Some("access_level=30"), &["PUT /groups/{g}/members/{user}"], 200),
        ("DELETE /groups/{g}/members/{leaver}", None, &["GET /groups/{g}/members/{leaver}", "DELETE /groups/{g}/members/{leaver}"], 200),
        // Groups (2.17)
        ("GET /groups", None, &["GET /groups"], 200),
        ("GET /groups/owned", None, &["GET /groups?owned=true"], 200),
        ("POST /groups", Some(r#"{"name": "made", "path": "made", "visibility_level": 20}"#), &["POST /groups"], 201),
        ("PUT /groups/{g}", Some("description=edited"), &["PUT /groups/{g}"], 200),
        ("GET /groups/{g}", None, &["GET /groups/{g}"], 200),
        ("GET /groups/{g}/projects", None, &["GET /groups/{g}/projects?archived=false"], 200),
        ("POST /groups/{g}/projects/{q}", None, &["POST /groups/{g}/projects/{q}"], 403),
        // Snippets (2.18)
        ("GET /projects/{p}/snippets", None, &["GET /projects/{p}/snippets"], 200),
        ("GET /projects/{p}/snippets/{snippet}", None, &["GET /projects/{p}/snippets/{snippet}"], 200),
        ("POST /projects/{p}/snippets", Some(r#"{"title": "t", "file_name": "f.rb", "code": "x", "visibility_level": 0}"#), &["POST /projects/{p}/snippets"], 201),
        ("PUT /projects/{p}/snippets/{snippet}", Some(r#"{"title": "retitled"}"#), &["PUT /projects/{p}/snippets/{snippet}"], 200),
        ("GET /projects/{p}/snippets/{snippet}/raw", None, &["GET /projects/{p}/snippets/{snippet}/raw"], 200),
        ("GET /snippets", None, &["GET /snippets"], 200),
        ("GET /snippets/public", None, &["GET /snippets/public"], 200),
        ("GET /snippets/{personal}", None, &["GET /snippets/{personal}"], 200),
        ("POST /snippets", Some(r#"{"title": "t", "file_name": "f.rb", "content": "x", "visibility_level": 10}"#), &["POST /snippets"], 201),
        ("PUT /snippets/{personal}", Some(r#"{"visibility_level": 0}"#), &["PUT /snippets/{personal}"], 200),
        ("GET /snippets/{personal}/raw", None, &["GET /snippets/{personal}/raw"], 200),
        // To-dos (2.8)
        ("DELETE /todos/{todo}", None, &["POST /todos/{todo}/mark_as_done"], 200),
        ("DELETE /todos", None, &["GET /todos?state=pending&per_page=1", "POST /todos/mark_as_done"], 200),
        // More projects (2.1)
        ("POST /projects/user/{user}", Some(r#"{"name": "for-member", "builds_enabled": false}"#), &["POST /projects/user/{user}"], 201),
        ("POST /projects/{q}/fork/{p}", None, &["POST /projects/{q}/fork/{p}"], 201),
        ("POST /projects/{p}/uploads", Some("MULTIPART"), &["POST /projects/{p}/uploads"], 201),
        // Users (2.24)
        ("POST /users", Some(r#"{"email": "v3@example.com", "username": "v3user", "name": "V3", "password": "secret123", "confirm": false}"#), &["POST /users"], 201),
        ("GET /users/{demo}/events", None, &["GET /users/{demo}/events"], 200),
        // Templates (2.29)
        // Deploy keys (2.19): the `keys` alias and the removed `disable`
        ("GET /projects/{p}/keys", None, &["GET /projects/{p}/deploy_keys?per_page=100&page=1"], 200),
        ("GET /projects/{p}/deploy_keys", None, &["GET /projects/{p}/deploy_keys?per_page=100&page=1"], 200),
        ("GET /projects/{p}/keys/{key}", None, &["GET /projects/{p}/deploy_keys/{key}"], 200),
        ("GET /projects/{p}/deploy_keys/{key}", None, &["GET /projects/{p}/deploy_keys/{key}"], 200),
        ("POST /projects/{q}/keys/{key}/enable", None, &["POST /projects/{q}/deploy_keys/{key}/enable"], 201),
        ("POST /projects/{q}/deploy_keys/{key2}/enable", None, &["POST /projects/{q}/deploy_keys/{key2}/enable"], 201),
        ("POST /projects/{p}/keys", Some(r#"{"title": "alias", "key": "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQCyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy7 a@b"}"#), &["POST /projects/{p}/deploy_keys"], 201),
        ("POST /projects/{p}/deploy_keys", Some(r#"{"title": "plain", "key": "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQCzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz8 a@b"}"#), &["POST /projects/{p}/deploy_keys"], 201),
        ("GET /deploy_keys", None, &["GET /deploy_keys?per_page=100&page=1"], 200),
        // Project hooks (2.20), system hooks (2.21)
        ("GET /projects/{p}/hooks", None, &["GET /projects/{p}/hooks"], 200),
        ("GET /projects/{p}/hooks/{hook}", None, &["GET /projects/{p}/hooks/{hook}"], 200),
        ("POST /projects/{p}/hooks", Some(r#"{"url": "https://hooks.example/v3", "build_events": true}"#), &["POST /projects/{p}/hooks"], 201),
        // V3 and V4 `project_hook_properties` both `requires :url` on PUT (V3 spec "returns 400 error if url is not
        // given").
        ("PUT /projects/{p}/hooks/{hook}", Some("url=https://hooks.example/v3&build_events=false"), &["PUT /projects/{p}/hooks/{hook}"], 200),
        ("PUT /projects/{p}/hooks/{hook}", Some("build_events=false"), &["PUT /projects/{p}/hooks/{hook}"], 400),
        ("GET /hooks", None, &["GET /hooks?per_page=100&page=1"], 200),
        ("GET /hooks/{system_hook}", None, &["POST /hooks/{system_hook}"], 200),
        // Services (2.22)
        ("GET /projects/{p}/services/asana", None, &["GET /projects/{p}/services/asana"], 200),
        ("PUT /projects/{p}/services/pipelines-email", Some("recipients=a@example.com&build_events=true"), &["PUT /projects/{p}/services/pipelines-email"], 200),
        ("DELETE /projects/{p}/services/pipelines-email", None, &["DELETE /projects/{p}/services/pipelines-email"], 200),
        ("POST /projects/{p}/services/mattermost_slash_commands/trigger", Some("token=wrong"), &["POST /projects/{p}/services/mattermost_slash_commands/trigger"], 401),
        ("POST /projects/{p}/services/slack_slash_commands/trigger", Some("token=wrong"), &["POST /projects/{p}/services/slack_slash_commands/trigger"], 401),
        // Application settings (2.23)
        ("GET /application/settings", None, &["GET /application/settings"], 200),
        ("PUT /application/settings", Some(r#"{"default_project_visibility": 10, "restricted_visibility_levels": [20], "signin_enabled": true}"#), &["PUT /application/settings"], 200),
        // Users (2.24)
        ("GET /users/{demo}/keys", None, &["GET /users/{demo}/keys"], 200),
        ("GET /users/{demo}/emails", None, &["GET /users/{demo}/emails?per_page=100&page=1"], 200),
        ("PUT /users/{leaver}/block", None, &["POST /users/{leaver}/block"], 200),
        ("PUT /users/{leaver}/unblock", None, &["POST /users/{leaver}/unblock"], 200),
        ("GET /user/keys", None, &["GET /user/keys?per_page=100&page=1"], 200),
        ("GET /user/emails", None, &["GET /user/emails?per_page=100&page=1"], 200),
        // Boards (2.28)
        ("GET /projects/{p}/boards", None, &["GET /projects/{p}/boards?per_page=100&page=1"], 200),
        ("GET /projects/{p}/boards/{board}/lists", None, &["GET /projects/{p}/boards/{board}/lists?per_page=100&page=1"], 200),
        // Templates (2.29): unprefixed in V3
        ("GET /licenses?popular=true", None, &["GET /templates/licenses?popular=true"], 200),
        ("GET /licenses/mit", None, &["GET /templates/licenses/mit"], 200),
        ("GET /templates/licenses", None, &["GET /templates/licenses"], 200),
        ("GET /templates/licenses/mit", None, &["GET /templates/licenses/mit"], 200),
        ("GET /gitignores", None, &["GET /templates/gitignores"], 200),
        ("GET /gitignores/Rust", None, &["GET /templates/gitignores/Rust"], 200),
        ("GET /templates/gitignores", None, &["GET /templates/gitignores"], 200),
        ("GET /templates/gitignores/Rust", None, &["GET /templates/gitignores/Rust"], 200),
        ("GET /svc_ci_ymls", None, &["GET /templates/svc_ci_ymls"], 200),
        ("GET /svc_ci_ymls/Ruby", None, &["GET /templates/svc_ci_ymls/Ruby"], 200),
        ("GET /templates/svc_ci_ymls", None, &["GET /templates/svc_ci_ymls"], 200),
        ("GET /templates/svc_ci_ymls/Ruby", None, &["GET /templates/svc_ci_ymls/Ruby"], 200),
        ("GET /dockerfiles", None, &["GET /templates/dockerfiles"], 200),
        ("GET /dockerfiles/Binary", None, &["GET /templates/dockerfiles/Binary"], 200),
        ("GET /templates/dockerfiles", None, &["GET /templates/dockerfiles"], 200),
        ("GET /templates/dockerfiles/Binary", None, &["GET /templates/dockerfiles/Binary"], 200),
        // Password login (5.2)
        ("POST /session", Some("login=demo&password=demo-password"), &["POST !/oauth/token", "GET /user"], 201),
        // Deletions last: they remove what the cases above use.
        ("DELETE /projects/{p}/issues/{issue}/notes/{note2}", None, &["GET /projects/{p}/issues/{issue_iid}/notes/{note2}", "DELETE /projects/{p}/issues/{issue_iid}/notes/{note2}"], 200),
        ("DELETE /projects/{p}/merge_requests/{mr}/notes/{mr_note}", None, &["GET /projects/{p}/merge_requests/{mr_iid}/notes/{mr_note}", "DELETE /projects/{p}/merge_requests/{mr_iid}/notes/{mr_note}"], 200),
        ("DELETE /projects/{p}/issues/{issue}/award_emoji/{award_issue}", None, &["GET /projects/{p}/issues/{issue_iid}/award_emoji/{award_issue}", "DELETE /projects/{p}/issues/{issue_iid}/award_emoji/{award_issue}"], 200),
        ("DELETE /projects/{p}/issues/{issue}/notes/{note}/award_emoji/{award_issue_note}", None, &["DELETE /projects/{p}/issues/{issue_iid}/notes/{note}/award_emoji/{award_issue_note}"], 200),
        ("DELETE /projects/{p}/merge_requests/{mr}/award_emoji/{award_mr}", None, &["DELETE /projects/{p}/merge_requests/{mr_iid}/award_emoji/{award_mr}"], 200),
        ("DELETE /projects/{p}/merge_requests/{mr}/notes/{mr_note}/award_emoji/{award_mr_note}", None, &["GET /projects/{p}/merge_requests/{mr_iid}/notes/{mr_note}/award_emoji/{award_mr_note}"], 404),
        ("DELETE /projects/{p}/snippets/{snippet}/award_emoji/{award_snippet}", None, &["DELETE /projects/{p}/snippets/{snippet}/award_emoji/{award_snippet}"], 200),
        ("DELETE /projects/{p}/snippets/{snippet}/notes/{snippet_note}/award_emoji/{award_snippet_note}", None, &["DELETE /projects/{p}/snippets/{snippet}/notes/{snippet_note}/award_emoji/{award_snippet_note}"], 200),
        ("DELETE /projects/{p}/snippets/{snippet}/notes/{snippet_note}", None, &["DELETE /projects/{p}/snippets/{snippet}/notes/{snippet_note}"], 200),
        ("DELETE /projects/{p}/snippets/{snippet2}", None, &["GET /projects/{p}/snippets/{snippet2}", "DELETE /projects/{p}/snippets/{snippet2}"], 200),
        ("DELETE /snippets/{personal}", None, &["DELETE /snippets/{personal}"], 204),
        ("DELETE /projects/{p}/variables/{variable}", None, &["GET /projects/{p}/variables/{variable}", "DELETE /projects/{p}/variables/{variable}"], 200),
        ("DELETE /projects/{p}/issues/{issue2}", None, &["GET /projects/{p}/issues/{issue2_iid}", "DELETE /projects/{p}/issues/{issue2_iid}"], 200),
        ("DELETE /projects/{p}/merge_requests/{mr2}", None, &["GET /projects/{p}/merge_requests/{mr2_iid}", "DELETE /projects/{p}/merge_requests/{mr2_iid}"], 200),
        ("DELETE /projects/{q}/fork", None, &["GET /projects/{q}", "DELETE /projects/{q}/fork"], 200),
        ("DELETE /projects/{p}/keys/{key3}", None, &["GET /projects/{p}/deploy_keys/{key3}", "DELETE /projects/{p}/deploy_keys/{key3}"], 200),
        ("DELETE /projects/{p}/deploy_keys/{key4}", None, &["GET /projects/{p}/deploy_keys/{key4}", "DELETE /projects/{p}/deploy_keys/{key4}"], 200),
        ("DELETE /projects/{q}/keys/{key}/disable", None, &["GET /projects/{q}/deploy_keys/{key}", "DELETE /projects/{q}/deploy_keys/{key}"], 200),
        ("DELETE /projects/{q}/deploy_keys/{key2}/disable", None, &["GET /projects/{q}/deploy_keys/{key2}", "DELETE /projects/{q}/deploy_keys/{key2}"], 200),
        ("DELETE /projects/{p}/hooks/{hook2}", None, &["GET /projects/{p}/hooks/{hook2}", "DELETE /projects/{p}/hooks/{hook2}"], 200),
        ("DELETE /users/{demo}/keys/{user_key}", None, &["GET /users/{demo}/keys", "DELETE /users/{demo}/keys/{user_key}"], 200),
        ("DELETE /user/keys/{user_key2}", None, &["GET /user/keys/{user_key2}", "DELETE /user/keys/{user_key2}"], 200),
        ("DELETE /projects/{p}/runners/{runner}", None, &["GET /runners/{runner}", "DELETE /projects/{p}/runners/{runner}"], 403),
        ("DELETE /runners/{runner}", None, &["GET /runners/{runner}", "DELETE /runners/{runner}"], 200),
        ("DELETE /hooks/{system_hook2}", None, &["GET /hooks", "DELETE /hooks/{system_hook2}"], 200),
        ("DELETE /projects/{p}/boards/{board}/lists/{board_list}", None, &["GET /projects/{p}/boards/{board}/lists/{board_list}", "DELETE /projects/{p}/boards/{board}/lists/{board_list}"], 200),
        ("DELETE /users/{demo}/emails/{email}", None, &["DELETE /users/{demo}/emails/{email}"], 200),
        ("DELETE /user/emails/{email2}", None, &["DELETE /user/emails/{email2}"], 200),
        ("DELETE /users/{goner}", None, &["GET /users/{goner}", "DELETE /users/{goner}"], 200),
        ("DELETE /projects/{p}/access_requests/{asker}", None, &["GET /projects/{p}/access_requests", "DELETE /projects/{p}/access_requests/{asker}"], 200),
        ("DELETE /groups/{g}/access_requests/{asker}", None, &["GET /groups/{g}/access_requests", "DELETE /groups/{g}/access_requests/{asker}"], 200),
        ("DELETE /broadcast_messages/{message}", None, &["GET /broadcast_messages/{message}", "DELETE /broadcast_messages/{message}"], 200),
        ("DELETE /projects/{doomed}", None, &["DELETE /projects/{doomed}"], 200),
        ("DELETE /groups/{g}", None, &["GET /groups/{g}", "DELETE /groups/{g}"], 200),
    ]
}

/// The calls `svcgate translate` plans for a request line (`METHOD /path`) and body, with its global ids
/// resolved on the world's backend as `translate --backend --token` resolves them.
async fn plan_of(
    world: &TableWorld,
    line: &str,
    body: Option<&(&str, Vec<u8>)>,
    token: &str,
) -> Vec<svcgate::rewrite::plan::Call> {
    use svcgate::rewrite::explain::{explain, ids_needed, BodyInput};
    let (method, path) = line.split_once(' ').unwrap();
    let request_line = format!("{method} /api/v3{path}");
    let table = svcgate::rewrite::table::RuleTable::builtin().unwrap();
    let needed = ids_needed(&table, &request_line).unwrap();
    let resolved = if needed.is_empty() {
        Vec::new()
    } else {
        svcgate::app::resolve_ids(&world.sim.url(), token, &needed)
            .await
            .unwrap_or_else(|error| panic!("{line}: resolving ids: {error:#}"))
    };
    let body = body.map(|(content_type, bytes)| BodyInput {
        content_type: http::HeaderValue::from_str(content_type).unwrap(),
        bytes: bytes::Bytes::from(bytes.clone()),
    });
    explain(&table, &request_line, body, &resolved)
        .unwrap_or_else(|error| panic!("{line}: translate: {error}"))
        .calls
}

/// Whether the planned calls are among the backend's received requests, in order, each with the same method,
/// path and query, and the same body where the plan has one. When the gateway answered an error, the calls after
/// the one that failed were rightly never made.
fn plan_matches(
    planned: &[svcgate::rewrite::plan::Call],
    received: &[svc_sim::RecordedRequest],
    answered_error: bool,
) -> Result<(), String> {
    let mut remaining = received.iter();
    for (index, call) in planned.iter().enumerate() {
        let found = remaining.find(|request| {
            let target = match &request.query {
                Some(query) if !query.is_empty() => format!("{}?{query}", request.path),
                _ => request.path.clone(),
            };
            request.method == call.method.as_str() && target == call.target
        });
        let Some(request) = found else {
            if answered_error && index > 0 {
                return Ok(());
            }
            return Err(format!(
                "translate planned {} {}, which the backend did not receive (in that order)",
                call.method, call.target
            ));
        };
        if let Some((_, text)) = &call.body {
            if request.body != text.as_bytes() {
                return Err(format!(
                    "{} {}: translate planned the body {text:?}, the backend received {:?}",
                    call.method,
                    call.target,
                    String::from_utf8_lossy(&request.body)
                ));
            }
        }
    }
    Ok(())
}

/// Whether `expected` lines appear in `received` in order (other lines may come between).
fn in_order(received: &[String], expected: &[String]) -> bool {
    let mut remaining = expected.iter().peekable();
    for line in received {
        if let Some(next) = remaining.peek() {
            let matches = if next.contains('?') {
                line == *next
            } else {
                line.split('?').next() == Some(next.as_str())
            };
            if matches {
                remaining.next();
            }
        }
    }
    remaining.peek().is_none()
}

#[tokio::test]
async fn every_rule_sends_the_v4_requests_of_its_row_and_answers_the_v3_status() {
    let world = table_world().await;
    let mut failures = Vec::new();
    let mut plan_failures = Vec::new();
    for (request, body, v4, status) in cases() {
        let line = filled(&world, request);
        let (method, path) = line.split_once(' ').unwrap();
        let method: Method = method.parse().unwrap();
        let body = body.map(|body| {
            let body = filled(&world, body);
            if body == "MULTIPART" {
                (
                    "multipart/form-data; boundary=XyZ",
                    b"--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--XyZ--\r\n".to_vec(),
                )
            } else if body.starts_with('{') {
                ("application/json", body.into_bytes())
            } else {
                ("application/x-www-form-urlencoded", body.into_bytes())
            }
        });
        let admin_only = [
            "/users",
            "/projects/user/",
            "/hooks",
            "/application/",
            "/deploy_keys",
            "/runners/",
            "/broadcast_messages",
        ];
        let token = if path.starts_with("/session") {
            ""
        } else if admin_only.iter().any(|prefix| path.starts_with(prefix)) || path.contains("/fork/") {
            ADMIN
        } else {
            world.token.as_str()
        };
        // What `svcgate translate` plans for the same request, its ids resolved on the same backend first.
        let planned = plan_of(&world, &line, body.as_ref(), token).await;
        world.sim.clear_requests();
        let headers: Vec<(&str, &str)> = if token.is_empty() {
            vec![]
        } else {
            vec![("private-token", token)]
        };
        let answer = send(
            method,
            &format!("{}/api/v3{path}", world.gateway.url()),
            &headers,
            body,
        )
        .await;
        let received: Vec<String> = world
            .sim
            .requests()
            .iter()
            .map(|request| match &request.query {
                Some(query) if !query.is_empty() => format!("{} {}?{}", request.method, request.path, query),
                _ => format!("{} {}", request.method, request.path),
            })
            .collect();
        let expected: Vec<String> = v4
            .iter()
            .map(|line| {
                let (method, path) = line.split_once(' ').unwrap();
                match path.strip_prefix('!') {
                    Some(absolute) => format!("{method} {}", filled(&world, absolute)),
                    None => format!("{method} /api/v4{}", filled(&world, path)),
                }
            })
            .collect();
        if let Err(difference) = plan_matches(&planned, &world.sim.requests(), answer.status.as_u16() >= 400)
        {
            plan_failures.push(format!("{line}\n    {difference}"));
        }
        if !in_order(&received, &expected) || answer.status.as_u16() != status {
            failures.push(format!(
                "{line}\n    expected {status} and V4 {expected:?}\n    got {} {}\n    V4 received {received:?}",
                answer.status,
                String::from_utf8_lossy(&answer.body).chars().take(300).collect::<String>()
            ));
        }
    }
    let metrics = get(&format!("{}/-/svcgate/metrics", world.gateway.url()), "").await;
    let text = String::from_utf8(metrics.body.to_vec()).unwrap();
    let table = svcgate::rewrite::table::RuleTable::builtin().unwrap();
    let unused: Vec<String> = table
        .rules()
        .iter()
        .map(|rule| format!("{} {}", rule.v3.method, rule.v3.template))
        .filter(|name| !text.contains(&format!("rule=\"{name}\"")))
        .collect();
    assert!(
        failures.is_empty() && unused.is_empty() && plan_failures.is_empty(),
        "{} failing cases:\n{}\n\n{} rules without a case:\n{}\n\n{} cases where translate's plan differs from what the gateway sent:\n{}",
        failures.len(),
        failures.join("\n"),
        unused.len(),
        unused.join("\n"),
        plan_failures.len(),
        plan_failures.join("\n")
    );
}
