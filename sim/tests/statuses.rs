//! End-to-end tests of the statuses a real V4 server answers where svc-sim used to answer another: who may
//! update a confidential issue, merge request branch conflicts and drafts, a guest's reading of a private
//! project's merge requests, unsharing by a non-integer id, cancelling a pipeline, unknown methods, moving an
//! issue and changing a project's visibility. Each test names the V4 code or spec it follows.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use http::{Method, StatusCode};
use serde_json::json;

mod common;
use common::*;

/// V4 `lib/api/issues.rb` (PUT `:id/issues/:issue_iid`) finds the issue with `user_project.issues.find_by!` and
/// then `authorize! :update_issue`; `spec/requests/api/issues/put_projects_issues_spec.rb`, "confidential issues":
/// "returns 403 for non project members" and "returns 403 for project members with guest role", while the author
/// and Reporters+ update it (`app/policies/issuable_policy.rb` also lets an assignee).
#[tokio::test]
async fn a_guest_or_outsider_updating_a_confidential_issue_is_forbidden_not_told_it_is_missing() {
    let sim = start().await;
    let pid = project_id(&sim, ROOT, "conf", Some("public")).await;
    let (guest, guest_token) = sim.create_user("guest", false);
    let (_, outsider_token) = sim.create_user("outsider", false);
    let (reporter, reporter_token) = sim.create_user("reporter", false);
    let (assignee, assignee_token) = sim.create_user("assignee", false);
    add_member(&sim, "projects", pid, guest, 10).await;
    add_member(&sim, "projects", pid, reporter, 20).await;
    add_member(&sim, "projects", pid, assignee, 10).await;
    let issue = ok(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{pid}/issues"),
        ROOT,
        Some(json!({"title": "secret", "confidential": true, "assignee_ids": [assignee]})),
    )
    .await;
    let path = format!("/api/v4/projects/{pid}/issues/{}", issue["iid"]);
    let title = Some(json!({"title": "updated title"}));
    for token in [guest_token.as_str(), outsider_token.as_str()] {
        let r = call(&sim, Method::PUT, &path, Some(token), title.clone()).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
        assert_eq!(r.body, json!({"message": "403 Forbidden"}));
        // Reading it is still a 404: only the update authorizes after finding.
        let r = call(&sim, Method::GET, &path, Some(token), None).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND);
    }
    let r = call(
        &sim,
        Method::PUT,
        &format!("/api/v4/projects/{pid}/issues/999"),
        Some(&guest_token),
        title.clone(),
    )
    .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    for token in [reporter_token.as_str(), assignee_token.as_str(), ROOT] {
        let r = call(&sim, Method::PUT, &path, Some(token), title.clone()).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        assert_eq!(r.body["title"], "updated title");
    }
}

/// V4 `app/models/merge_request.rb` `validate_branches` adds `branch_conflict` ("You can't use same
/// project/branch for source and target") and stops; `handle_merge_request_errors!` (lib/api/merge_requests.rb)
/// answers it with `error!(errors[:branch_conflict], 422)`. `spec/requests/api/merge_requests_spec.rb`: "returns
/// 422 when source_branch equals target_branch", `json_response['message']` being that one-element list.
#[tokio::test]
async fn a_merge_request_from_a_branch_into_itself_is_a_422_branch_conflict() {
    let sim = start().await;
    let pid = project_id(&sim, ROOT, "same", Some("private")).await;
    let base = format!("/api/v4/projects/{pid}/merge_requests");
    let conflict = json!({"message": ["You can't use same project/branch for source and target"]});
    for branch in ["main", "no-such-branch"] {
        let r = call(
            &sim,
            Method::POST,
            &base,
            Some(ROOT),
            Some(json!({"title": "t", "source_branch": branch, "target_branch": branch})),
        )
        .await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
        assert_eq!(r.body, conflict);
    }
    ok(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{pid}/repository/branches"),
        ROOT,
        Some(json!({"branch": "feature", "ref": "main"})),
    )
    .await;
    let mr = ok(
        &sim,
        Method::POST,
        &base,
        ROOT,
        Some(json!({"title": "t", "source_branch": "feature", "target_branch": "main"})),
    )
    .await;
    let r = call(
        &sim,
        Method::PUT,
        &format!("{base}/{}", mr["iid"]),
        Some(ROOT),
        Some(json!({"target_branch": "feature"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert_eq!(r.body, conflict);
}

/// V4 `lib/api/merge_requests.rb` (PUT `:merge_request_iid/merge`): `not_allowed! unless
/// merge_request.mergeable_state?`, false for a work-in-progress title; `spec/requests/api/merge_requests_spec.rb`:
/// "returns 405 if merge_request is a work in progress" (`'405 Method Not Allowed'`).
#[tokio::test]
async fn a_draft_merge_request_cannot_be_merged() {
    let sim = start().await;
    let pid = project_id(&sim, ROOT, "drafts", Some("private")).await;
    let p = format!("/api/v4/projects/{pid}");
    ok(
        &sim,
        Method::POST,
        &format!("{p}/repository/files/a.txt"),
        ROOT,
        Some(json!({"branch": "feature", "start_branch": "main", "content": "a", "commit_message": "a"})),
    )
    .await;
    let mr = ok(
        &sim,
        Method::POST,
        &format!("{p}/merge_requests"),
        ROOT,
        Some(json!({"title": "WIP: a", "source_branch": "feature", "target_branch": "main"})),
    )
    .await;
    let one = format!("{p}/merge_requests/{}", mr["iid"]);
    assert_eq!(mr["work_in_progress"], true);
    for title in ["WIP: a", "Draft: a", "[Draft] a"] {
        ok(&sim, Method::PUT, &one, ROOT, Some(json!({"title": title}))).await;
        let r = call(&sim, Method::PUT, &format!("{one}/merge"), Some(ROOT), None).await;
        assert_eq!(r.status, StatusCode::METHOD_NOT_ALLOWED, "{title}: {}", r.body);
        assert_eq!(r.body, json!({"message": "405 Method Not Allowed"}));
    }
    ok(&sim, Method::PUT, &one, ROOT, Some(json!({"title": "a"}))).await;
    let merged = ok(&sim, Method::PUT, &format!("{one}/merge"), ROOT, None).await;
    assert_eq!(merged["state"], "merged");
}

/// V4 `lib/api/merge_requests.rb`: the list and every single-merge-request route `authorize! :read_merge_request`,
/// which a Guest of a private project lacks (`app/policies/project_policy.rb` grants it from Reporter, or to all
/// for public projects); `spec/requests/api/merge_requests_spec.rb`, "when merge request author has only guest
/// access" → shared example "rejects user from accessing merge request info": 403 `'403 Forbidden'`.
#[tokio::test]
async fn a_guest_of_a_private_project_cannot_read_its_merge_requests() {
    let sim = start().await;
    let private = project_id(&sim, ROOT, "hidden", Some("private")).await;
    let public = project_id(&sim, ROOT, "open", Some("public")).await;
    let (guest, guest_token) = sim.create_user("guest", false);
    let (reporter, reporter_token) = sim.create_user("reporter", false);
    for pid in [private, public] {
        add_member(&sim, "projects", pid, guest, 10).await;
        add_member(&sim, "projects", pid, reporter, 20).await;
        ok(
            &sim,
            Method::POST,
            &format!("/api/v4/projects/{pid}/repository/branches"),
            ROOT,
            Some(json!({"branch": "feature", "ref": "main"})),
        )
        .await;
        ok(
            &sim,
            Method::POST,
            &format!("/api/v4/projects/{pid}/merge_requests"),
            ROOT,
            Some(json!({"title": "t", "source_branch": "feature", "target_branch": "main"})),
        )
        .await;
    }
    let paths = |pid: u64| {
        [
            format!("/api/v4/projects/{pid}/merge_requests"),
            format!("/api/v4/projects/{pid}/merge_requests/1"),
            format!("/api/v4/projects/{pid}/merge_requests/1/notes"),
            format!("/api/v4/projects/{pid}/merge_requests/1/changes"),
        ]
    };
    for path in paths(private) {
        let r = call(&sim, Method::GET, &path, Some(&guest_token), None).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{path}: {}", r.body);
        assert_eq!(r.body, json!({"message": "403 Forbidden"}));
        let r = call(&sim, Method::GET, &path, Some(&reporter_token), None).await;
        assert_eq!(r.status, StatusCode::OK, "{path}: {}", r.body);
    }
    for path in paths(public) {
        let r = call(&sim, Method::GET, &path, Some(&guest_token), None).await;
        assert_eq!(r.status, StatusCode::OK, "{path}: {}", r.body);
    }
}

/// V4 `lib/api/projects.rb` and `lib/api/groups.rb`, DELETE `:id/share/:group_id` with `requires :group_id, type:
/// Integer`; `spec/requests/api/projects_spec.rb`: "returns a 400 when group id is not an integer" and "returns a
/// 404 error when group link does not exist"; `spec/requests/api/groups_spec.rb`: "requires the group id to be an
/// integer".
#[tokio::test]
async fn unsharing_a_non_integer_group_id_is_a_400_and_an_unknown_one_a_404() {
    let sim = start().await;
    let demo = sim.seed_demo();
    let t = Some(demo.token.as_str());
    for owner in [
        format!("/api/v4/projects/{}", demo.project_id),
        format!("/api/v4/groups/{}", demo.group_id),
    ] {
        let r = call(&sim, Method::DELETE, &format!("{owner}/share/foo"), t, None).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{owner}: {}", r.body);
        assert_eq!(r.body, json!({"error": "group_id is invalid"}));
        let r = call(&sim, Method::DELETE, &format!("{owner}/share/1234"), t, None).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{owner}: {}", r.body);
        assert_eq!(r.body, json!({"message": "404 Group Link Not Found"}));
        let r = call(&sim, Method::DELETE, &format!("{owner}/share/foo"), None, None).await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{owner}: {}", r.body);
    }
}

/// V4 `lib/api/pipelines.rb`, POST `:id/pipelines/:pipeline_id/cancel`: `pipeline.cancel_running`, then `status
/// 200`; `spec/requests/api/pipelines_spec.rb` expects 200 with the canceled pipeline. Retry keeps POST's 201.
#[tokio::test]
async fn cancelling_a_pipeline_answers_200_and_retrying_it_201() {
    let sim = start().await;
    let demo = sim.seed_demo();
    let t = demo.token.as_str();
    let p = format!("/api/v4/projects/{}", demo.project_id);
    let made = ok(
        &sim,
        Method::POST,
        &format!("{p}/pipeline"),
        t,
        Some(json!({"ref": "main"})),
    )
    .await;
    let id = made["id"].as_u64().unwrap();
    let r = call(
        &sim,
        Method::POST,
        &format!("{p}/pipelines/{id}/cancel"),
        Some(t),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["id"], id);
    let r = call(
        &sim,
        Method::POST,
        &format!("{p}/pipelines/{id}/retry"),
        Some(t),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
}

/// V4 `lib/api/api.rb` ends with `route :any, '*path'` → `error!('404 Not Found', 404)`: a method that a known
/// path lacks reaches that catch-all, so a real server answers 404, never Grape's 405.
#[tokio::test]
async fn an_unknown_method_on_a_known_path_is_a_404_from_the_catch_all() {
    let sim = start().await;
    let demo = sim.seed_demo();
    for (method, path) in [
        (Method::PATCH, "/api/v4/projects".to_string()),
        (
            Method::POST,
            format!("/api/v4/projects/{}/issues/1", demo.project_id),
        ),
        (Method::DELETE, "/api/v4/user".to_string()),
        (Method::GET, "/api/v4/nowhere".to_string()),
    ] {
        let r = call(&sim, method.clone(), &path, Some(ROOT), None).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{method} {path}");
        assert_eq!(r.body, json!({"message": "404 Not Found"}));
    }
}

/// V4 `lib/api/issues.rb`, POST `:issue_iid/move`: the target is found with `find_project` (no read check; only a
/// missing project is a 404), then `Issues::MoveService` raises "Cannot move issue due to insufficient
/// permissions!" before "Cannot move issue to project it originates from!", both answered `bad_request!`;
/// `spec/requests/api/issues/issues_spec.rb` (`POST /projects/:id/issues/:issue_iid/move`): "when the user does
/// not have the permission to move issues" → 400.
#[tokio::test]
async fn moving_an_issue_without_permission_is_a_400_even_to_a_project_the_caller_cannot_see() {
    let sim = start().await;
    let (_, bob_token) = sim.create_user("bob", false);
    let own = ok(
        &sim,
        Method::POST,
        "/api/v4/projects",
        &bob_token,
        Some(json!({"name": "mine"})),
    )
    .await["id"]
        .as_u64()
        .unwrap();
    let hidden = project_id(&sim, ROOT, "hidden", Some("private")).await;
    let issue = ok(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{own}/issues"),
        &bob_token,
        Some(json!({"title": "move me"})),
    )
    .await;
    let path = format!("/api/v4/projects/{own}/issues/{}/move", issue["iid"]);
    let cases = [
        (
            hidden,
            StatusCode::BAD_REQUEST,
            "Cannot move issue due to insufficient permissions!",
        ),
        (
            own,
            StatusCode::BAD_REQUEST,
            "Cannot move issue to project it originates from!",
        ),
        (999_999, StatusCode::NOT_FOUND, "404 Project Not Found"),
    ];
    for (to, status, message) in cases {
        let r = call(
            &sim,
            Method::POST,
            &path,
            Some(&bob_token),
            Some(json!({"to_project_id": to})),
        )
        .await;
        assert_eq!(r.status, status, "to {to}: {}", r.body);
        assert_eq!(r.body, json!({"message": message}));
    }
}

/// V4 `lib/api/projects.rb`, PUT `:id`: `authorize! :change_visibility_level, user_project if
/// attrs[:visibility].present?`, an Owner's (and admin's) right; `spec/requests/api/projects_spec.rb`, "when
/// authenticated as project maintainer": "does not update visibility_level" → 403.
#[tokio::test]
async fn a_maintainer_may_not_send_a_visibility_on_a_project_update() {
    let sim = start().await;
    let (_, owner_token) = sim.create_user("owner", false);
    let pid = ok(
        &sim,
        Method::POST,
        "/api/v4/projects",
        &owner_token,
        Some(json!({"name": "vis"})),
    )
    .await["id"]
        .as_u64()
        .unwrap();
    let (maintainer, maintainer_token) = sim.create_user("maintainer", false);
    add_member(&sim, "projects", pid, maintainer, 40).await;
    let path = format!("/api/v4/projects/{pid}");
    for visibility in ["public", "private"] {
        let r = call(
            &sim,
            Method::PUT,
            &path,
            Some(&maintainer_token),
            Some(json!({"visibility": visibility})),
        )
        .await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{visibility}: {}", r.body);
    }
    let p = ok(&sim, Method::GET, &path, ROOT, None).await;
    assert_eq!(p["visibility"], "private");
    let p = ok(
        &sim,
        Method::PUT,
        &path,
        &maintainer_token,
        Some(json!({"description": "still fine"})),
    )
    .await;
    assert_eq!(p["description"], "still fine");
    let p = ok(
        &sim,
        Method::PUT,
        &path,
        &owner_token,
        Some(json!({"visibility": "internal"})),
    )
    .await;
    assert_eq!(p["visibility"], "internal");
    let p = ok(
        &sim,
        Method::PUT,
        &path,
        ROOT,
        Some(json!({"visibility": "public"})),
    )
    .await;
    assert_eq!(p["visibility"], "public");
}

/// V4 `app/models/project.rb` `validates :name, uniqueness: { scope: :namespace_id }`, answered by
/// `render_validation_error!`; `spec/requests/api/projects_spec.rb`, PUT `/projects/:id` as owner: "does not update
/// name to existing name" → 400 with `message.name == ['has already been taken']` (and create likewise).
#[tokio::test]
async fn a_duplicate_project_name_in_a_namespace_is_a_400_on_create_and_update() {
    let sim = start().await;
    project_id(&sim, ROOT, "Taken", Some("private")).await;
    let other = project_id(&sim, ROOT, "Other", Some("private")).await;
    let taken = json!({"message": {"name": ["has already been taken"]}});
    let r = call(
        &sim,
        Method::POST,
        "/api/v4/projects",
        Some(ROOT),
        Some(json!({"name": "Taken", "path": "another-path"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    assert_eq!(r.body, taken);
    let path = format!("/api/v4/projects/{other}");
    let r = call(
        &sim,
        Method::PUT,
        &path,
        Some(ROOT),
        Some(json!({"name": "Taken"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    assert_eq!(r.body, taken);
    // Its own name, and a name taken only in another namespace, are fine.
    ok(&sim, Method::PUT, &path, ROOT, Some(json!({"name": "Other"}))).await;
    let (_, bob_token) = sim.create_user("bob", false);
    ok(
        &sim,
        Method::POST,
        "/api/v4/projects",
        &bob_token,
        Some(json!({"name": "Taken"})),
    )
    .await;
}

/// V4 `lib/api/project_snippets.rb` and `lib/api/snippets.rb`, PUT: the params block ends with
/// `minimum_update_params` (`at_least_one_of`), which Grape checks before the endpoint runs, so a PUT with no
/// parameters is a 400 `{"error": "... at least one parameter must be provided"}` whether or not the snippet exists.
#[tokio::test]
async fn a_snippet_put_with_no_parameters_is_a_400_before_the_snippet_is_looked_up() {
    let sim = start().await;
    let pid = project_id(&sim, ROOT, "snips", Some("private")).await;
    let made = ok(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{pid}/snippets"),
        ROOT,
        Some(json!({"title": "t", "file_name": "a.txt", "content": "x", "visibility": "private"})),
    )
    .await;
    let (_, bob_token) = sim.create_user("bob", false);
    let cases = [
        (format!("/api/v4/projects/{pid}/snippets/{}", made["id"]), ROOT),
        (format!("/api/v4/projects/{pid}/snippets/99999"), ROOT),
        ("/api/v4/snippets/99999".to_string(), bob_token.as_str()),
    ];
    for (path, token) in &cases {
        let r = call(&sim, Method::PUT, path, Some(token), Some(json!({}))).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{path}: {}", r.body);
        assert!(
            r.body["error"]
                .as_str()
                .unwrap()
                .ends_with("at least one parameter must be provided"),
            "{}",
            r.body
        );
    }
    let r = call(
        &sim,
        Method::PUT,
        &cases[1].0,
        Some(ROOT),
        Some(json!({"title": "x"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
}

/// V4 `lib/api/environments.rb` finds the environment with `user_project.environments.find`, whose
/// `ActiveRecord::RecordNotFound` the API rescues as the generic `404 Not found`;
/// `spec/requests/api/environments_spec.rb`, "DELETE /projects/:id/environments/:environment_id": "returns a 404
/// for non existing id" expects exactly that message.
#[tokio::test]
async fn an_unknown_environment_is_the_generic_404_not_found() {
    let sim = start().await;
    let pid = project_id(&sim, ROOT, "envs", Some("private")).await;
    for method in [Method::PUT, Method::DELETE] {
        let r = call(
            &sim,
            method.clone(),
            &format!("/api/v4/projects/{pid}/environments/12345"),
            Some(ROOT),
            Some(json!({"name": "x"})),
        )
        .await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{method}");
        assert_eq!(r.body, json!({"message": "404 Not found"}), "{method}");
    }
}

/// V4 `lib/api/settings.rb` requires `koding_url` when `koding_enabled` is true and `plantuml_url` when
/// `plantuml_enabled` is (`given ... do requires ... end`, Grape validation); `spec/requests/api/settings_spec.rb`,
/// "missing koding_url value when koding_enabled is true": "returns a blank parameter error message" reads
/// `json_response['error']`.
#[tokio::test]
async fn a_setting_enabled_without_its_url_is_a_missing_parameter_error() {
    let sim = start().await;
    for (flag, needs) in [
        ("koding_enabled", "koding_url"),
        ("plantuml_enabled", "plantuml_url"),
    ] {
        let r = call(
            &sim,
            Method::PUT,
            "/api/v4/application/settings",
            Some(ROOT),
            Some(json!({ flag: true })),
        )
        .await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{flag}");
        assert_eq!(r.body, json!({"error": format!("{needs} is missing")}), "{flag}");
    }
}

/// Rack, which V4 reads its form bodies with, makes `variables[key][]=1&variables[key][]=2` the hash
/// `{"key" => ["1", "2"]}`; V4 `lib/api/triggers.rb` then refuses a variable that is not a string with
/// `render_api_error!('variables needs to be a map of key-valued strings', 400)`
/// (`spec/requests/api/triggers_spec.rb`: "validates variables needs to be a map of key-valued strings").
#[tokio::test]
async fn a_form_variable_given_as_an_array_is_refused_as_not_a_string() {
    let sim = start().await;
    let demo = sim.seed_demo();
    let trigger = ok(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{}/triggers", demo.project_id),
        &demo.token,
        Some(json!({"description": "ci"})),
    )
    .await;
    let token = trigger["token"].as_str().unwrap();
    let r = send(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{}/trigger/pipeline", demo.project_id),
        None,
        Some("application/x-www-form-urlencoded"),
        format!("ref=main&token={token}&variables[key][]=1&variables[key][]=2").into_bytes(),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    assert_eq!(
        r.body,
        json!({"message": "variables needs to be a map of key-valued strings"})
    );
}

/// V4 `lib/api/labels.rb`, `lib/api/project_milestones.rb` and `lib/api/boards.rb` each open with
/// `before { authenticate! }`: an anonymous caller gets 401 even on a public project, for reads too.
#[tokio::test]
async fn labels_milestones_and_boards_answer_anonymous_callers_401_even_on_a_public_project() {
    let sim = start().await;
    let pid = project_id(&sim, ROOT, "anon-reads", Some("public")).await;
    ok(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{pid}/milestones"),
        ROOT,
        Some(json!({"title": "v1"})),
    )
    .await;
    for path in [
        format!("/api/v4/projects/{pid}/labels"),
        format!("/api/v4/projects/{pid}/milestones"),
        format!("/api/v4/projects/{pid}/milestones/1"),
        format!("/api/v4/projects/{pid}/boards"),
    ] {
        let anonymous = call(&sim, Method::GET, &path, None, None).await;
        assert_eq!(
            anonymous.status,
            StatusCode::UNAUTHORIZED,
            "GET {path}: {}",
            anonymous.body
        );
        assert_eq!(anonymous.body["message"], "401 Unauthorized", "GET {path}");
        let signed_in = call(&sim, Method::GET, &path, Some(ROOT), None).await;
        assert!(
            signed_in.status.is_success(),
            "GET {path} as root: {}",
            signed_in.status
        );
    }
}
