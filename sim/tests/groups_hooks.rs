//! End-to-end tests of data and error texts as a real V4 server keeps and writes them: a group's
//! `shared_projects`, transferring a project to a namespace or a group by id or path, a project hook's PUT that
//! requires `url`, and the `error`/`message` texts of trigger variables, environment slugs, pipeline refs and merge
//! bases. Each test names the V4 code or spec it follows.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use http::{Method, StatusCode};
use serde_json::{json, Value};

mod common;
use common::*;

fn ids(list: &Value) -> Vec<u64> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_u64().unwrap())
        .collect()
}

/// V4 `lib/api/entities/group_detail.rb`: besides `projects`, `GET /groups/:id` exposes `shared_projects`, the
/// projects shared with the group (`GroupProjectsFinder` with `only_shared: true` for the current user) rendered
/// `using: Entities::Project` like `projects`; sharing is `POST /projects/:id/share` (`lib/api/projects.rb`).
#[tokio::test]
async fn group_details_list_the_projects_shared_with_the_group() {
    let sim = start().await;
    let gid = group(&sim, "team", "public").await;
    let own = ok(
        &sim,
        Method::POST,
        "/api/v4/projects",
        ROOT,
        Some(json!({"name": "inside", "namespace_id": gid, "visibility": "public"})),
    )
    .await;
    let shared = project(&sim, ROOT, "lent", Some("private")).await;
    let spid = shared["id"].as_u64().unwrap();
    let (member, member_token) = sim.create_user("member", false);
    let (_, outsider_token) = sim.create_user("outsider", false);
    add_member(&sim, "groups", gid, member, 30).await;

    let detail = ok(&sim, Method::GET, &format!("/api/v4/groups/{gid}"), ROOT, None).await;
    assert_eq!(detail["shared_projects"], json!([]));

    ok(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{spid}/share"),
        ROOT,
        Some(json!({"group_id": gid, "group_access": 30})),
    )
    .await;
    let detail = ok(&sim, Method::GET, &format!("/api/v4/groups/{gid}"), ROOT, None).await;
    assert_eq!(ids(&detail["projects"]), [own["id"].as_u64().unwrap()]);
    assert_eq!(ids(&detail["shared_projects"]), [spid]);
    let entry = &detail["shared_projects"][0];
    assert_eq!(entry["path_with_namespace"], "root/lent");
    assert_eq!(entry["namespace"]["path"], "root");
    assert_eq!(entry["shared_with_groups"][0]["group_id"], json!(gid));
    // The same `Entities::Project` shape as `projects` (and `owner`, as the project is in a user's namespace).
    let entry_keys = entry.as_object().unwrap();
    for key in detail["projects"][0].as_object().unwrap().keys() {
        assert!(entry_keys.contains_key(key), "{key}");
    }
    assert_eq!(entry["owner"]["username"], "root");

    // A member reaches the private project through the share; an outsider sees the group but not the project.
    let seen = ok(
        &sim,
        Method::GET,
        &format!("/api/v4/groups/{gid}"),
        &member_token,
        None,
    )
    .await;
    assert_eq!(ids(&seen["shared_projects"]), [spid]);
    let seen = ok(
        &sim,
        Method::GET,
        &format!("/api/v4/groups/{gid}"),
        &outsider_token,
        None,
    )
    .await;
    assert_eq!(seen["shared_projects"], json!([]));

    let r = call(
        &sim,
        Method::DELETE,
        &format!("/api/v4/projects/{spid}/share/{gid}"),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    let detail = ok(&sim, Method::GET, &format!("/api/v4/groups/{gid}"), ROOT, None).await;
    assert_eq!(detail["shared_projects"], json!([]));
}

/// V4 `lib/api/projects.rb` `PUT :id/transfer`: `requires :namespace, type: String` ("The ID or path of the new
/// namespace"), `find_namespace!` (all digits: an id, else a full path; `404 Namespace Not Found` unless the caller
/// may `read_namespace`, which `app/policies/group_policy.rb` gives any member), then
/// `Projects::TransferService#execute` (`app/services/projects/transfer_service.rb`), whose refusals
/// (`allowed_transfer?`: another namespace where the caller may `create_projects`, Maintainer+; no project with the
/// same path there) answer `render_api_error!("Failed to transfer project #{user_project.errors.messages}", 400)`.
#[tokio::test]
async fn transferring_to_a_namespace_takes_an_id_or_a_path_and_answers_v4_refusals() {
    let sim = start().await;
    let (alice, alice_token) = sim.create_user("alice", false);
    let maintained = group(&sim, "maintained", "private").await;
    let developed = group(&sim, "developed", "private").await;
    let foreign = group(&sim, "foreign", "private").await;
    add_member(&sim, "groups", maintained, alice, 40).await;
    add_member(&sim, "groups", developed, alice, 30).await;
    let p = project(&sim, &alice_token, "mover", Some("private")).await;
    let path = format!("/api/v4/projects/{}/transfer", p["id"]);
    let refused = |reason: &str| json!({"message": format!("Failed to transfer project {{:new_namespace=>[\"{reason}\"]}}")});

    let r = call(&sim, Method::PUT, &path, Some(&alice_token), Some(json!({}))).await;
    assert_eq!(
        (r.status, r.body),
        (StatusCode::BAD_REQUEST, json!({"error": "namespace is missing"}))
    );
    for missing in [json!("nowhere"), json!(foreign), json!(999_999), json!("foreign")] {
        let r = call(
            &sim,
            Method::PUT,
            &path,
            Some(&alice_token),
            Some(json!({"namespace": missing})),
        )
        .await;
        assert_eq!(
            (r.status, r.body),
            (
                StatusCode::NOT_FOUND,
                json!({"message": "404 Namespace Not Found"})
            ),
            "{missing}"
        );
    }
    // A Developer may read the group but not create projects in it.
    let r = call(
        &sim,
        Method::PUT,
        &path,
        Some(&alice_token),
        Some(json!({"namespace": "developed"})),
    )
    .await;
    assert_eq!(
        (r.status, r.body),
        (
            StatusCode::BAD_REQUEST,
            refused("Transfer failed, please contact an admin.")
        )
    );
    // The namespace the project is already in.
    let r = call(
        &sim,
        Method::PUT,
        &path,
        Some(&alice_token),
        Some(json!({"namespace": "alice"})),
    )
    .await;
    assert_eq!(
        (r.status, r.body),
        (
            StatusCode::BAD_REQUEST,
            refused("Transfer failed, please contact an admin.")
        )
    );

    // A full path (any case), then an id given as a string of digits.
    let moved = ok(
        &sim,
        Method::PUT,
        &path,
        &alice_token,
        Some(json!({"namespace": "Maintained"})),
    )
    .await;
    assert_eq!(moved["path_with_namespace"], "maintained/mover");
    let back = ok(
        &sim,
        Method::PUT,
        &path,
        &alice_token,
        Some(json!({"namespace": p["namespace"]["id"].to_string()})),
    )
    .await;
    assert_eq!(back["path_with_namespace"], "alice/mover");

    // Same path in the target namespace.
    ok(
        &sim,
        Method::POST,
        "/api/v4/projects",
        ROOT,
        Some(json!({"name": "mover", "namespace_id": maintained})),
    )
    .await;
    let r = call(
        &sim,
        Method::PUT,
        &path,
        Some(&alice_token),
        Some(json!({"namespace": maintained})),
    )
    .await;
    assert_eq!(
        (r.status, r.body),
        (
            StatusCode::BAD_REQUEST,
            refused("Project with same path in target namespace already exists")
        )
    );
}

/// V4 `lib/api/groups.rb` "Transfer a project to the group namespace. Available only for admin.":
/// `requires :project_id, type: String, desc: 'The ID or path of the project'`, `authenticated_as_admin!`, then
/// `find_group!` and `find_project!`; a refusal of `Projects::TransferService` is
/// `render_api_error!("Failed to transfer project #{project.errors.messages}", 400)`.
/// `spec/requests/api/groups_spec.rb` "POST /groups/:id/projects/:project_id": "when authenticated as user" →
/// 403, "transfers project to group" 201 with an id, "when using project path in URL" "with a valid project
/// path" (`CGI.escape(project.full_path)`) 201 and "with a non-existent project path" (`nogroup%2Fnoproject`)
/// 404, "when using a group path in URL" 201.
#[tokio::test]
async fn posting_a_project_to_a_group_takes_its_id_or_url_encoded_path() {
    let sim = start().await;
    let gid = group(&sim, "target", "private").await;
    let (_, bob_token) = sim.create_user("bob", false);
    let p = project(&sim, &bob_token, "given", Some("private")).await;
    let pid = p["id"].as_u64().unwrap();

    let r = call(
        &sim,
        Method::POST,
        &format!("/api/v4/groups/{gid}/projects/{pid}"),
        Some(&bob_token),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let r = call(
        &sim,
        Method::POST,
        &format!("/api/v4/groups/{gid}/projects/nogroup%2Fnoproject"),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(
        (r.status, r.body),
        (StatusCode::NOT_FOUND, json!({"message": "404 Project Not Found"}))
    );

    let r = call(
        &sim,
        Method::POST,
        "/api/v4/groups/target/projects/bob%2Fgiven",
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert_eq!(r.body["id"], json!(gid));
    assert_eq!(ids(&r.body["projects"]), [pid]);
    let moved = ok(&sim, Method::GET, &format!("/api/v4/projects/{pid}"), ROOT, None).await;
    assert_eq!(moved["path_with_namespace"], "target/given");

    // Into the group it is already in: `allowed_transfer?` is false.
    let r = call(
        &sim,
        Method::POST,
        &format!("/api/v4/groups/{gid}/projects/target%2Fgiven"),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(
        (r.status, r.body),
        (
            StatusCode::BAD_REQUEST,
            json!({"message": "Failed to transfer project {:new_namespace=>[\"Transfer failed, please contact an admin.\"]}"})
        )
    );

    // Back to another group where a project has the same path.
    let other = group(&sim, "other", "private").await;
    ok(
        &sim,
        Method::POST,
        "/api/v4/projects",
        ROOT,
        Some(json!({"name": "given", "namespace_id": other})),
    )
    .await;
    let r = call(
        &sim,
        Method::POST,
        &format!("/api/v4/groups/{other}/projects/{pid}"),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(
        (r.status, r.body),
        (
            StatusCode::BAD_REQUEST,
            json!({"message": "Failed to transfer project {:new_namespace=>[\"Project with same path in target namespace already exists\"]}"})
        )
    );
}

/// V4 `lib/api/project_hooks.rb`: `params :project_hook_properties` (used by POST and PUT) `requires :url`, so a
/// PUT without it is Grape's 400 `url is missing`, checked after `authorize_admin_project` (a `before`) and before
/// the hook is found. V3 `lib/api/v3/project_hooks.rb` required it too (`spec/requests/api/v3/project_hooks_spec.rb`
/// "returns 400 error if url is not given"); with it, "updates an existing project hook".
#[tokio::test]
async fn a_project_hook_put_without_url_is_refused() {
    let sim = start().await;
    let p = project(&sim, ROOT, "hooked", Some("private")).await;
    let pid = p["id"].as_u64().unwrap();
    let (dev, dev_token) = sim.create_user("dev", false);
    ok(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{pid}/members"),
        ROOT,
        Some(json!({"user_id": dev, "access_level": 30})),
    )
    .await;
    let hook = ok(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{pid}/hooks"),
        ROOT,
        Some(json!({"url": "https://hooks.example/in", "push_events": true})),
    )
    .await;
    let path = format!("/api/v4/projects/{pid}/hooks/{}", hook["id"]);
    let missing = (StatusCode::BAD_REQUEST, json!({"error": "url is missing"}));

    let r = call(
        &sim,
        Method::PUT,
        &path,
        Some(ROOT),
        Some(json!({"push_events": false})),
    )
    .await;
    assert_eq!((r.status, r.body), missing);
    let r = call(
        &sim,
        Method::PUT,
        &format!("/api/v4/projects/{pid}/hooks/999"),
        Some(ROOT),
        Some(json!({"push_events": false})),
    )
    .await;
    assert_eq!((r.status, r.body), missing);
    let r = call(&sim, Method::PUT, &path, Some(&dev_token), Some(json!({}))).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let unchanged = ok(&sim, Method::GET, &path, ROOT, None).await;
    assert_eq!(unchanged["push_events"], json!(true));

    let edited = ok(
        &sim,
        Method::PUT,
        &path,
        ROOT,
        Some(json!({"url": "https://hooks.example/out", "push_events": false})),
    )
    .await;
    assert_eq!(edited["url"], "https://hooks.example/out");
    assert_eq!(edited["push_events"], json!(false));
    let r = call(
        &sim,
        Method::PUT,
        &path,
        Some(ROOT),
        Some(json!({"url": "ftp://example.com"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
}

/// V4 `lib/api/triggers.rb` `POST :id/(ref/:ref/)trigger/pipeline`: `optional :variables, type: Hash` (Grape: a
/// non-hash is `{"error": "variables is invalid"}`), then
/// `render_api_error!('variables needs to be a map of key-valued strings', 400)` unless every value is a string,
/// before the project is found; an unknown ref is the pipeline's errors, `{"message": {"base": [...]}}`.
/// `spec/requests/api/triggers_spec.rb`: "validates variables to be a hash", "validates variables needs to be a
/// map of key-valued strings", "returns bad request with no pipeline created if there's no commit for that ref".
#[tokio::test]
async fn trigger_variables_and_refs_are_refused_with_v4_texts() {
    let sim = start().await;
    let p = project(&sim, ROOT, "triggered", Some("private")).await;
    let pid = p["id"].as_u64().unwrap();
    let branch = p["default_branch"].as_str().unwrap().to_string();
    let trigger = ok(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{pid}/triggers"),
        ROOT,
        Some(json!({"description": "ci"})),
    )
    .await;
    let token = trigger["token"].as_str().unwrap().to_string();
    let path = format!("/api/v4/projects/{pid}/trigger/pipeline");
    let not_strings = json!({"message": "variables needs to be a map of key-valued strings"});
    let cases = [
        (
            json!({"token": token, "ref": branch, "variables": "value"}),
            json!({"error": "variables is invalid"}),
        ),
        (
            json!({"token": token, "ref": branch, "variables": {"key": ["1", "2"]}}),
            not_strings.clone(),
        ),
        (
            json!({"token": token, "ref": branch, "variables": {"COUNT": 1}}),
            not_strings.clone(),
        ),
        (
            json!({"token": token, "ref": "other-branch"}),
            json!({"message": {"base": ["Reference not found"]}}),
        ),
    ];
    for (body, expected) in cases {
        let r = call(&sim, Method::POST, &path, None, Some(body.clone())).await;
        assert_eq!((r.status, r.body), (StatusCode::BAD_REQUEST, expected), "{body}");
    }
    // The variables are checked before the project is looked up.
    let r = call(
        &sim,
        Method::POST,
        "/api/v4/projects/999999/trigger/pipeline",
        None,
        Some(json!({"token": token, "ref": branch, "variables": {"COUNT": 1}})),
    )
    .await;
    assert_eq!((r.status, r.body), (StatusCode::BAD_REQUEST, not_strings));
    let r = call(
        &sim,
        Method::POST,
        &path,
        None,
        Some(json!({"token": token, "ref": branch, "variables": {"COUNT": "1"}})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
}

/// V4 `lib/api/environments.rb`: `optional :slug, absence: { message: "is automatically generated and cannot be
/// changed" }` on POST and PUT is a parameter validation, so the answer is `{"error": "slug is automatically
/// generated and cannot be changed"}`, given before the environment is looked up.
#[tokio::test]
async fn an_environment_slug_is_refused_as_a_parameter_error() {
    let sim = start().await;
    let p = project(&sim, ROOT, "deployed", Some("private")).await;
    let pid = p["id"].as_u64().unwrap();
    let refused = (
        StatusCode::BAD_REQUEST,
        json!({"error": "slug is automatically generated and cannot be changed"}),
    );
    let r = call(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{pid}/environments"),
        Some(ROOT),
        Some(json!({"name": "review", "slug": "mine"})),
    )
    .await;
    assert_eq!((r.status, r.body), refused.clone());
    let env = ok(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{pid}/environments"),
        ROOT,
        Some(json!({"name": "review"})),
    )
    .await;
    for id in [env["id"].as_u64().unwrap(), 999_999] {
        let r = call(
            &sim,
            Method::PUT,
            &format!("/api/v4/projects/{pid}/environments/{id}"),
            Some(ROOT),
            Some(json!({"slug": "mine"})),
        )
        .await;
        assert_eq!((r.status, r.body), refused.clone(), "{id}");
    }
}

/// V4 `lib/api/pipelines.rb` `POST :id/pipeline` answers `render_validation_error!(new_pipeline)`
/// (`spec/requests/api/pipelines_spec.rb` "fails when using an invalid ref": `json_response['message']['base']`
/// is `Reference not found`); V4 `lib/api/repositories.rb` `merge_base` names every unknown ref in one 400,
/// `"Could not find #{ref_noun}: #{merge_base.unknown_refs.join(', ')}"`.
#[tokio::test]
async fn an_unknown_ref_is_named_as_v4_names_it() {
    let sim = start().await;
    let p = project(&sim, ROOT, "refs", Some("private")).await;
    let pid = p["id"].as_u64().unwrap();
    let branch = p["default_branch"].as_str().unwrap().to_string();
    let r = call(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{pid}/pipeline"),
        Some(ROOT),
        Some(json!({"ref": "invalid_ref"})),
    )
    .await;
    assert_eq!(
        (r.status, r.body),
        (
            StatusCode::BAD_REQUEST,
            json!({"message": {"base": ["Reference not found"]}})
        )
    );
    let base = format!("/api/v4/projects/{pid}/repository/merge_base");
    let r = call(
        &sim,
        Method::GET,
        &format!("{base}?refs[]={branch}&refs[]=nope"),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(
        (r.status, r.body),
        (
            StatusCode::BAD_REQUEST,
            json!({"message": "Could not find ref: nope"})
        )
    );
    let r = call(
        &sim,
        Method::GET,
        &format!("{base}?refs[]=nope&refs[]={branch}&refs[]=gone"),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(
        (r.status, r.body),
        (
            StatusCode::BAD_REQUEST,
            json!({"message": "Could not find refs: nope, gone"})
        )
    );
}

/// V4 `lib/api/entities/issue_basic.rb` and `merge_request_basic.rb` expose `upvotes` and `downvotes` as the
/// issuable's `upvotes`/`downvotes` (`app/models/concerns/awardable.rb`), the counts of its `thumbsup` and
/// `thumbsdown` awards (`AwardEmoji::UPVOTE_NAME`, `DOWNVOTE_NAME`; `+1` is stored as `thumbsup`).
#[tokio::test]
async fn issue_and_merge_request_votes_count_thumbs_awards() {
    let sim = start().await;
    let p = project(&sim, ROOT, "voted", Some("public")).await;
    let pid = p["id"].as_u64().unwrap();
    let branch = p["default_branch"].as_str().unwrap().to_string();
    let (_, voter) = sim.create_user("voter", false);
    let issue = ok(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{pid}/issues"),
        ROOT,
        Some(json!({"title": "popular"})),
    )
    .await;
    let issue_path = format!("/api/v4/projects/{pid}/issues/{}", issue["iid"]);
    assert_eq!(
        (issue["upvotes"].clone(), issue["downvotes"].clone()),
        (json!(0), json!(0))
    );
    for (token, name) in [
        (ROOT, "thumbsup"),
        (voter.as_str(), "+1"),
        (ROOT, "thumbsdown"),
        (ROOT, "tada"),
    ] {
        ok(
            &sim,
            Method::POST,
            &format!("{issue_path}/award_emoji"),
            token,
            Some(json!({"name": name})),
        )
        .await;
    }
    let shown = ok(&sim, Method::GET, &issue_path, ROOT, None).await;
    assert_eq!(
        (shown["upvotes"].clone(), shown["downvotes"].clone()),
        (json!(2), json!(1))
    );
    let listed = ok(
        &sim,
        Method::GET,
        &format!("/api/v4/projects/{pid}/issues"),
        ROOT,
        None,
    )
    .await;
    assert_eq!(
        (listed[0]["upvotes"].clone(), listed[0]["downvotes"].clone()),
        (json!(2), json!(1))
    );

    ok(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{pid}/repository/branches"),
        ROOT,
        Some(json!({"branch": "feature", "ref": branch})),
    )
    .await;
    let mr = ok(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{pid}/merge_requests"),
        ROOT,
        Some(json!({"title": "change", "source_branch": "feature", "target_branch": branch})),
    )
    .await;
    let mr_path = format!("/api/v4/projects/{pid}/merge_requests/{}", mr["iid"]);
    ok(
        &sim,
        Method::POST,
        &format!("{mr_path}/award_emoji"),
        &voter,
        Some(json!({"name": "thumbsdown"})),
    )
    .await;
    let shown = ok(&sim, Method::GET, &mr_path, ROOT, None).await;
    assert_eq!(
        (shown["upvotes"].clone(), shown["downvotes"].clone()),
        (json!(0), json!(1))
    );
}

/// V4 (10.8) `lib/api/projects.rb` `PUT :id`: `authorize_admin_project` (Maintainer+), then
/// `authorize! :rename_project, user_project if attrs[:name].present?`; `app/policies/project_policy.rb` of that
/// release enables `rename_project` under `owner_access` only (owner, group owner, admin). So a Maintainer may
/// change the `path` (and other settings) but not the `name`.
#[tokio::test]
async fn only_an_owner_renames_a_project_while_a_maintainer_may_change_its_path() {
    let sim = start().await;
    let (owner, owner_token) = sim.create_user("owner", false);
    let (maintainer, maintainer_token) = sim.create_user("keeper", false);
    let gid = group(&sim, "crew", "private").await;
    add_member(&sim, "groups", gid, owner, 50).await;
    add_member(&sim, "groups", gid, maintainer, 40).await;
    let p = ok(
        &sim,
        Method::POST,
        "/api/v4/projects",
        ROOT,
        Some(json!({"name": "ship", "namespace_id": gid})),
    )
    .await;
    let path = format!("/api/v4/projects/{}", p["id"]);

    let r = call(
        &sim,
        Method::PUT,
        &path,
        Some(&maintainer_token),
        Some(json!({"name": "renamed"})),
    )
    .await;
    assert_eq!(
        (r.status, r.body),
        (StatusCode::FORBIDDEN, json!({"message": "403 Forbidden"}))
    );
    let moved = ok(
        &sim,
        Method::PUT,
        &path,
        &maintainer_token,
        Some(json!({"path": "vessel", "description": "kept"})),
    )
    .await;
    assert_eq!(
        (moved["name"].clone(), moved["path_with_namespace"].clone()),
        (json!("ship"), json!("crew/vessel"))
    );
    let renamed = ok(
        &sim,
        Method::PUT,
        &path,
        &owner_token,
        Some(json!({"name": "renamed"})),
    )
    .await;
    assert_eq!(renamed["name"], "renamed");
    let renamed = ok(&sim, Method::PUT, &path, ROOT, Some(json!({"name": "again"}))).await;
    assert_eq!(renamed["name"], "again");
}

/// V4 `lib/api/groups.rb` `GET :id/projects`: `optional :with_shared, type: Boolean, default: true` and
/// `GroupProjectsFinder` with `only_owned: !params[:with_shared]`, so the projects shared with the group are listed
/// with its own unless `with_shared=false` (10.8's finder listed both always).
#[tokio::test]
async fn a_group_project_list_includes_shared_projects_unless_with_shared_is_false() {
    let sim = start().await;
    let gid = group(&sim, "squad", "private").await;
    let own = ok(
        &sim,
        Method::POST,
        "/api/v4/projects",
        ROOT,
        Some(json!({"name": "home", "namespace_id": gid})),
    )
    .await;
    let lent = project(&sim, ROOT, "guest-project", Some("private")).await;
    ok(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{}/share", lent["id"]),
        ROOT,
        Some(json!({"group_id": gid, "group_access": 20})),
    )
    .await;
    let mut all = ids(&ok(
        &sim,
        Method::GET,
        &format!("/api/v4/groups/{gid}/projects"),
        ROOT,
        None,
    )
    .await);
    all.sort_unstable();
    assert_eq!(all, [own["id"].as_u64().unwrap(), lent["id"].as_u64().unwrap()]);
    let owned = ok(
        &sim,
        Method::GET,
        &format!("/api/v4/groups/{gid}/projects?with_shared=false"),
        ROOT,
        None,
    )
    .await;
    assert_eq!(ids(&owned), [own["id"].as_u64().unwrap()]);
}
