//! End-to-end tests of behaviours where svc-sim differed from V4's request specs
//! (`spec/requests/api/*_spec.rb` in the service's repository) for the resources svcgate's rules touch: pipelines,
//! the repository, merge requests, branches, issues and projects. Each test names the spec example it follows;
//! `sim/README.md` lists every example checked, including those that already matched.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use http::{Method, StatusCode};
use serde_json::{json, Value};

mod common;
use common::*;

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
    let pid = project_id(&sim, ROOT, "pipes", Some("private")).await;
    let (dev, dev_token) = sim.create_user("pipeline-dev", false);
    add_member(&sim, "projects", pid, dev, 30).await;
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
    let pid = project_id(&sim, ROOT, "pipes404", Some("private")).await;
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
    let pid = project_id(&sim, ROOT, "pipesref", Some("private")).await;
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
    let pid = project_id(&sim, ROOT, "archive", Some("public")).await;
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

/// Creates branch `feat` with one commit on project `pid`, so that a merge request from it can be opened.
async fn feature_branch(sim: &svc_sim::SimHandle, pid: u64) {
    let base = format!("/api/v4/projects/{pid}/repository");
    ok(
        sim,
        Method::POST,
        &format!("{base}/branches"),
        ROOT,
        Some(json!({"branch": "feat", "ref": "main"})),
    )
    .await;
    ok(
        sim,
        Method::POST,
        &format!("{base}/commits"),
        ROOT,
        Some(json!({"branch": "feat", "commit_message": "add f", "actions": [
            {"action": "create", "file_path": "f.txt", "content": "x"}
        ]})),
    )
    .await;
}

/// `spec/requests/api/merge_requests_spec.rb`, `POST /projects/:id/merge_requests`, "with existing MR": "returns
/// 409 when MR already exists for source/target" expects `json_response['message']` to be
/// `["Another open merge request already exists for this source branch: !1"]`, a list: V4's
/// `handle_merge_request_errors!` answers `conflict!(errors[:validate_branches])`.
#[tokio::test]
async fn a_second_open_merge_request_for_the_same_branches_is_a_409_with_a_message_list() {
    let sim = start().await;
    let pid = project_id(&sim, ROOT, "mrdup", Some("private")).await;
    feature_branch(&sim, pid).await;
    let path = format!("/api/v4/projects/{pid}/merge_requests");
    let body = |title: &str| Some(json!({"title": title, "source_branch": "feat", "target_branch": "main"}));
    ok(&sim, Method::POST, &path, ROOT, body("first")).await;
    let r = call(&sim, Method::POST, &path, Some(ROOT), body("second")).await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    assert_eq!(
        r.body,
        json!({"message": ["Another open merge request already exists for this source branch: !1"]})
    );
}

/// `spec/requests/api/branches_spec.rb`, `GET /projects/:id/repository/branches` and `…/branches/:branch`: "when
/// authenticated as a guest" behaves like a '403 response': V4's branches API runs
/// `authorize! :download_code, user_project`, which a guest of a private project lacks.
#[tokio::test]
async fn a_guest_of_a_private_project_cannot_read_its_branches() {
    let sim = start().await;
    let pid = project_id(&sim, ROOT, "branches", Some("private")).await;
    let (guest, guest_token) = sim.create_user("guest", false);
    let (reporter, reporter_token) = sim.create_user("reporter", false);
    add_member(&sim, "projects", pid, guest, 10).await;
    add_member(&sim, "projects", pid, reporter, 20).await;
    let base = format!("/api/v4/projects/{pid}/repository/branches");
    for path in [base.clone(), format!("{base}/main")] {
        let r = call(&sim, Method::GET, &path, Some(&guest_token), None).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{path}: {}", r.body);
        assert_eq!(r.body, json!({"message": "403 Forbidden"}));
        let r = call(&sim, Method::GET, &path, Some(&reporter_token), None).await;
        assert_eq!(r.status, StatusCode::OK, "{path}: {}", r.body);
    }
    // A guest of a public project reads them, as anyone may.
    let public = project_id(&sim, ROOT, "public-branches", Some("public")).await;
    add_member(&sim, "projects", public, guest, 10).await;
    let r = call(
        &sim,
        Method::GET,
        &format!("/api/v4/projects/{public}/repository/branches/main"),
        Some(&guest_token),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
}

/// `spec/requests/api/issues/post_projects_issues_spec.rb`, `POST /projects/:id/issues`, "the user can only read the
/// issue": "cannot create new labels". `IssuableBaseService#filter_params` drops the milestone, labels, assignees
/// and due date of a caller without `admin_issue` (Reporter+), so a non-member of a public project (or a guest)
/// opens the issue with none of them and creates no label.
#[tokio::test]
async fn an_issue_opened_by_a_non_reporter_drops_its_labels_assignees_and_due_date() {
    let sim = start().await;
    let pid = project_id(&sim, ROOT, "readonly", Some("public")).await;
    let (_, outsider) = sim.create_user("outsider", false);
    let (reporter, reporter_token) = sim.create_user("reporter", false);
    add_member(&sim, "projects", pid, reporter, 20).await;
    let path = format!("/api/v4/projects/{pid}/issues");
    let fields = json!({
        "title": "new issue", "labels": "label, label2", "assignee_ids": [reporter], "due_date": "2030-01-02"
    });
    let issue = ok(&sim, Method::POST, &path, &outsider, Some(fields.clone())).await;
    assert_eq!(issue["labels"], json!([]));
    assert_eq!(issue["assignees"], json!([]));
    assert_eq!(issue["due_date"], Value::Null);
    let labels = ok(
        &sim,
        Method::GET,
        &format!("/api/v4/projects/{pid}/labels"),
        ROOT,
        None,
    )
    .await;
    assert_eq!(labels, json!([]));
    // A reporter sets them all.
    let issue = ok(&sim, Method::POST, &path, &reporter_token, Some(fields)).await;
    assert_eq!(issue["labels"], json!(["label", "label2"]));
    assert_eq!(issue["assignees"][0]["id"], reporter);
    assert_eq!(issue["due_date"], "2030-01-02");
}

/// `spec/requests/api/issues/post_projects_issues_spec.rb`, `POST /projects/:id/issues`: "support for deprecated
/// assignee_id" → "creates a new project issue when assignee_id is empty" (Grape coerces an empty Integer to nil),
/// and "single assignee restrictions" → "creates a new project issue with no more than one assignee" (CE's
/// `filter_assignee` keeps the first). `spec/requests/api/merge_requests_spec.rb`: "creates a new merge request
/// when assignee_id is empty".
#[tokio::test]
async fn an_empty_assignee_id_is_no_assignee_and_an_issue_keeps_one_assignee() {
    let sim = start().await;
    let pid = project_id(&sim, ROOT, "assignees", Some("private")).await;
    let (a, _) = sim.create_user("first", false);
    let (b, _) = sim.create_user("second", false);
    add_member(&sim, "projects", pid, a, 30).await;
    add_member(&sim, "projects", pid, b, 30).await;
    let issues = format!("/api/v4/projects/{pid}/issues");
    let issue = ok(
        &sim,
        Method::POST,
        &issues,
        ROOT,
        Some(json!({"title": "new issue", "assignee_id": ""})),
    )
    .await;
    assert_eq!(issue["assignee"], Value::Null);
    assert_eq!(issue["assignees"], json!([]));
    let issue = ok(
        &sim,
        Method::POST,
        &issues,
        ROOT,
        Some(json!({"title": "new issue", "assignee_ids": [a, b]})),
    )
    .await;
    assert_eq!(issue["assignees"].as_array().unwrap().len(), 1);
    assert_eq!(issue["assignee"]["id"], a);
    feature_branch(&sim, pid).await;
    let mr = ok(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{pid}/merge_requests"),
        ROOT,
        Some(json!({"title": "mr", "source_branch": "feat", "target_branch": "main", "assignee_id": ""})),
    )
    .await;
    assert_eq!(mr["assignee"], Value::Null);
}

/// `spec/requests/api/projects_spec.rb`, `PUT /projects/:id`: "returns 400 when nothing sent" expects
/// `json_response['error']` to match `'at least one parameter must be provided'` (Grape's `at_least_one_of`).
/// `lib/api/issues.rb` and `lib/api/merge_requests.rb` declare `at_least_one_of` on their PUTs as well.
#[tokio::test]
async fn a_put_with_no_parameters_is_400_at_least_one_parameter() {
    let sim = start().await;
    let pid = project_id(&sim, ROOT, "nothing", Some("private")).await;
    feature_branch(&sim, pid).await;
    let base = format!("/api/v4/projects/{pid}");
    ok(
        &sim,
        Method::POST,
        &format!("{base}/issues"),
        ROOT,
        Some(json!({"title": "i"})),
    )
    .await;
    ok(
        &sim,
        Method::POST,
        &format!("{base}/merge_requests"),
        ROOT,
        Some(json!({"title": "m", "source_branch": "feat", "target_branch": "main"})),
    )
    .await;
    for path in [
        base.clone(),
        format!("{base}/issues/1"),
        format!("{base}/merge_requests/1"),
    ] {
        for body in [None, Some(json!({}))] {
            let r = call(&sim, Method::PUT, &path, Some(ROOT), body).await;
            assert_eq!(r.status, StatusCode::BAD_REQUEST, "{path}: {}", r.body);
            let error = r.body["error"].as_str().unwrap();
            assert!(
                error.ends_with("are missing, at least one parameter must be provided"),
                "{error}"
            );
        }
    }
    let r = call(
        &sim,
        Method::PUT,
        &base,
        Some(ROOT),
        Some(json!({"description": "d"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    let r = call(
        &sim,
        Method::PUT,
        &format!("{base}/issues/1"),
        Some(ROOT),
        Some(json!({"state_event": "close"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    // Without a token it is still 401 first.
    let r = call(&sim, Method::PUT, &base, None, None).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
}
