//! End-to-end tests of behaviours where svc-sim differed from V4's request specs
//! (`spec/requests/api/*_spec.rb` in the service's repository) for the resources svcgate's rules touch: pipelines,
//! the repository, merge requests, branches, issues and projects. Each test names the spec example it follows;
//! `sim/README.md` lists every example checked, including those that already matched.
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

/// Creates a project with a README (default branch `main`) as root and returns its id.
async fn project(sim: &svc_sim::SimHandle, name: &str, visibility: &str) -> u64 {
    let p = ok(
        sim,
        Method::POST,
        "/api/v4/projects",
        ROOT,
        Some(json!({"name": name, "visibility": visibility, "initialize_with_readme": true})),
    )
    .await;
    p["id"].as_u64().unwrap()
}

/// Adds `user` to project `pid` at `level`.
async fn member(sim: &svc_sim::SimHandle, pid: u64, user: u64, level: u64) {
    ok(
        sim,
        Method::POST,
        &format!("/api/v4/projects/{pid}/members"),
        ROOT,
        Some(json!({"user_id": user, "access_level": level})),
    )
    .await;
}

/// The ids of a list answer, in order.
fn ids(list: &Value) -> Vec<u64> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|v| v["id"].as_u64().unwrap())
        .collect()
}

/// `spec/requests/api/pipelines_spec.rb`, `GET /projects/:id/pipelines`: "when status is invalid" → "returns
/// bad_request"; "when username is specified" / "when name is specified" → "returns matched pipelines" and, for
/// one that does not exist, "returns empty"; "when yaml_errors is invalid" → "returns bad_request"; "when
/// order_by and sort are specified" → "sorts as user_id: :desc", and "when order_by is invalid" → "returns
/// bad_request". V4 declares `status` with `values: HasStatus::AVAILABLE_STATUSES`, `order_by` with
/// `values: %w(id status ref user_id)` and `yaml_errors` as a Boolean, and `PipelinesFinder` filters by the
/// user's `username` and `name`.
#[tokio::test]
async fn pipeline_lists_validate_status_and_order_by_and_filter_by_user() {
    let sim = start().await;
    let pid = project(&sim, "pipes", "private").await;
    let (dev, dev_token) = sim.create_user("pipeline-dev", false);
    member(&sim, pid, dev, 30).await;
    let base = format!("/api/v4/projects/{pid}");
    let by_root = ok(
        &sim,
        Method::POST,
        &format!("{base}/pipeline"),
        ROOT,
        Some(json!({"ref": "main"})),
    )
    .await;
    let by_dev = ok(
        &sim,
        Method::POST,
        &format!("{base}/pipeline"),
        &dev_token,
        Some(json!({"ref": "main"})),
    )
    .await;
    let (root_id, dev_id) = (by_root["id"].as_u64().unwrap(), by_dev["id"].as_u64().unwrap());

    for query in [
        "status=invalid-status",
        "yaml_errors=invalid-yaml_errors",
        "order_by=lock_version&sort=asc",
    ] {
        let r = call(
            &sim,
            Method::GET,
            &format!("{base}/pipelines?{query}"),
            Some(ROOT),
            None,
        )
        .await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{query}: {}", r.body);
        assert!(r.body["error"].is_string(), "{query}: {}", r.body);
    }
    let r = call(
        &sim,
        Method::GET,
        &format!("{base}/pipelines?status=invalid-status"),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(r.body, json!({"error": "status does not have a valid value"}));

    let list = |q: &str| format!("{base}/pipelines?{q}");
    assert_eq!(
        ids(&ok(&sim, Method::GET, &list("username=pipeline-dev"), ROOT, None).await),
        vec![dev_id]
    );
    assert_eq!(
        ids(&ok(&sim, Method::GET, &list("name=Administrator"), ROOT, None).await),
        vec![root_id]
    );
    assert_eq!(
        ids(&ok(&sim, Method::GET, &list("username=invalid-username"), ROOT, None).await),
        Vec::<u64>::new()
    );
    assert_eq!(
        ids(&ok(&sim, Method::GET, &list("name=invalid-name"), ROOT, None).await),
        Vec::<u64>::new()
    );
    // No pipeline of the simulator has YAML errors.
    assert_eq!(
        ids(&ok(&sim, Method::GET, &list("yaml_errors=true"), ROOT, None).await),
        Vec::<u64>::new()
    );
    assert_eq!(
        ids(&ok(&sim, Method::GET, &list("yaml_errors=false"), ROOT, None).await),
        vec![dev_id, root_id]
    );
    // Root is user 1, so ordering by user_id puts the developer's first when descending, last when ascending.
    assert_eq!(
        ids(&ok(&sim, Method::GET, &list("order_by=user_id&sort=desc"), ROOT, None).await),
        vec![dev_id, root_id]
    );
    assert_eq!(
        ids(&ok(&sim, Method::GET, &list("order_by=user_id&sort=asc"), ROOT, None).await),
        vec![root_id, dev_id]
    );
    assert_eq!(
        ids(&ok(&sim, Method::GET, &list("order_by=id&sort=asc"), ROOT, None).await),
        vec![root_id, dev_id]
    );
    assert_eq!(
        ids(&ok(&sim, Method::GET, &list("status=running"), ROOT, None).await),
        vec![dev_id, root_id]
    );
}

/// `spec/requests/api/pipelines_spec.rb`, `GET /projects/:id/pipelines/:pipeline_id`: "returns 404 when it does not
/// exist" expects `json_response['message']` to be `'404 Not found'`: V4 finds the pipeline with
/// `user_project.pipelines.find`, and the API rescues `ActiveRecord::RecordNotFound` as that generic text. Retry and
/// cancel find it the same way.
#[tokio::test]
async fn an_unknown_pipeline_is_the_generic_404_not_found() {
    let sim = start().await;
    let pid = project(&sim, "pipes404", "private").await;
    let base = format!("/api/v4/projects/{pid}");
    for (method, path) in [
        (Method::GET, format!("{base}/pipelines/123456")),
        (Method::POST, format!("{base}/pipelines/123456/retry")),
        (Method::POST, format!("{base}/pipelines/123456/cancel")),
    ] {
        let r = call(&sim, method.clone(), &path, Some(ROOT), None).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{method} {path}");
        assert_eq!(r.body, json!({"message": "404 Not found"}), "{method} {path}");
    }
    // A project the caller cannot see is still `404 Project Not Found` ("unauthorized user" → "does not return
    // project pipelines").
    let (_, outsider) = sim.create_user("outsider", false);
    let r = call(
        &sim,
        Method::GET,
        &format!("{base}/pipelines/123456"),
        Some(&outsider),
        None,
    )
    .await;
    assert_eq!(r.body, json!({"message": "404 Project Not Found"}));
}

/// `spec/requests/api/pipelines_spec.rb`, `POST /projects/:id/pipeline`: "fails when using an invalid ref" expects
/// 400 with `json_response['message']['base'].first` equal to `'Reference not found'`: V4 answers the new
/// pipeline's model errors, `render_api_error!(new_pipeline.errors.messages, 400)`.
#[tokio::test]
async fn creating_a_pipeline_for_an_unknown_ref_answers_the_base_model_error() {
    let sim = start().await;
    let pid = project(&sim, "pipesref", "private").await;
    let r = call(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{pid}/pipeline"),
        Some(ROOT),
        Some(json!({"ref": "invalid_ref"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(r.body, json!({"message": {"base": ["Reference not found"]}}));
}

/// `spec/requests/api/repositories_spec.rb`, `GET /projects/:id/repository/archive(.:format)?:sha`: "when sha does
/// not exist" behaves like a '404 response' with the message `'404 File Not Found'`: V4 sends the archive inside
/// `begin … rescue not_found!('File') end`.
#[tokio::test]
async fn an_archive_of_an_unknown_sha_is_404_file_not_found() {
    let sim = start().await;
    let pid = project(&sim, "archive", "public").await;
    let r = call(
        &sim,
        Method::GET,
        &format!("/api/v4/projects/{pid}/repository/archive?sha=xxx"),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(r.body, json!({"message": "404 File Not Found"}));
}
