//! End-to-end tests of list filters and parameters taken as V4 takes them: the milestone wildcards, Grape's boolean
//! words and the issuable title limit.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use http::{Method, StatusCode};
use serde_json::{json, Value};

mod common;
use common::*;

async fn ok(sim: &svc_sim::SimHandle, method: Method, path: &str, body: Option<Value>) -> Value {
    let r = call(sim, method.clone(), path, Some(ROOT), body).await;
    assert!(r.status.is_success(), "{method} {path}: {} {}", r.status, r.body);
    r.body
}

fn iids(list: &Value) -> Vec<u64> {
    let mut found: Vec<u64> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["iid"].as_u64().unwrap())
        .collect();
    found.sort_unstable();
    found
}

/// V4: `app/finders/issuable_finder/params.rb` (`filter_by_no_milestone?` takes `none` in any case and
/// `Milestone::None.title`, "No Milestone"; `filter_by_any_milestone?` takes `any` and "Any Milestone").
#[tokio::test]
async fn issue_and_merge_request_lists_take_no_milestone_and_any_milestone() {
    let sim = start().await;
    let pid = project_id(&sim, ROOT, "ms", None).await;
    let m = ok(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{pid}/milestones"),
        Some(json!({"title": "v1"})),
    )
    .await;
    let mid = m["id"].as_u64().unwrap();
    let issues = format!("/api/v4/projects/{pid}/issues");
    ok(
        &sim,
        Method::POST,
        &issues,
        Some(json!({"title": "with", "milestone_id": mid})),
    )
    .await;
    ok(&sim, Method::POST, &issues, Some(json!({"title": "without"}))).await;
    for (filter, want) in [
        ("No+Milestone", vec![2]),
        ("none", vec![2]),
        ("NONE", vec![2]),
        ("Any+Milestone", vec![1]),
        ("any", vec![1]),
        ("v1", vec![1]),
    ] {
        let list = ok(&sim, Method::GET, &format!("{issues}?milestone={filter}"), None).await;
        assert_eq!(iids(&list), want, "issues with milestone={filter}");
    }

    let branch = format!("/api/v4/projects/{pid}/repository/branches");
    let mrs = format!("/api/v4/projects/{pid}/merge_requests");
    for (n, with) in [(1, true), (2, false)] {
        ok(
            &sim,
            Method::POST,
            &branch,
            Some(json!({"branch": format!("b{n}"), "ref": "main"})),
        )
        .await;
        let mut body =
            json!({"title": format!("mr{n}"), "source_branch": format!("b{n}"), "target_branch": "main"});
        if with {
            body["milestone_id"] = json!(mid);
        }
        ok(&sim, Method::POST, &mrs, Some(body)).await;
    }
    for (filter, want) in [
        ("No+Milestone", vec![2]),
        ("Any+Milestone", vec![1]),
        ("v1", vec![1]),
    ] {
        let list = ok(&sim, Method::GET, &format!("{mrs}?milestone={filter}"), None).await;
        assert_eq!(iids(&list), want, "merge requests with milestone={filter}");
    }
}

/// V4: `lib/api/issues.rb` declares `confidential` as `type: Boolean`; Grape's `PrimitiveCoercer` coerces it with
/// dry-types `Params::Bool`, whose `TRUE_VALUES`/`FALSE_VALUES` are exact words (`y`, `Yes`, `on`, `N`...).
#[tokio::test]
async fn boolean_parameters_take_grapes_words_exactly() {
    let sim = start().await;
    let pid = project_id(&sim, ROOT, "bools", None).await;
    let issues = format!("/api/v4/projects/{pid}/issues");
    let r = send(
        &sim,
        Method::POST,
        &issues,
        Some(ROOT),
        Some("application/x-www-form-urlencoded"),
        b"title=secret&confidential=y".to_vec(),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert_eq!(r.body["confidential"], true);
    ok(
        &sim,
        Method::POST,
        &issues,
        Some(json!({"title": "open", "confidential": "N"})),
    )
    .await;
    for (word, want) in [
        ("y", vec![1]),
        ("Yes", vec![1]),
        ("on", vec![1]),
        ("n", vec![2]),
        ("OFF", vec![2]),
    ] {
        let list = ok(&sim, Method::GET, &format!("{issues}?confidential={word}"), None).await;
        assert_eq!(iids(&list), want, "confidential={word}");
    }
    for word in ["tRUE", "yES", "2", "maybe"] {
        let r = call(
            &sim,
            Method::GET,
            &format!("{issues}?confidential={word}"),
            Some(ROOT),
            None,
        )
        .await;
        assert_eq!(
            r.status,
            StatusCode::BAD_REQUEST,
            "confidential={word}: {}",
            r.body
        );
        assert_eq!(r.body, json!({"error": "confidential is invalid"}));
    }
}

/// V4: `app/models/concerns/issuable.rb` (`validates :title, presence: true, length: { maximum: TITLE_LENGTH_MAX }`,
/// `TITLE_LENGTH_MAX = 255`, after `strip_attributes :title`), answered as a 400 validation message.
#[tokio::test]
async fn issue_and_merge_request_titles_over_255_characters_are_refused() {
    let sim = start().await;
    let pid = project_id(&sim, ROOT, "titles", None).await;
    let too_long = "é".repeat(256);
    let just_right = format!("  {}  ", "é".repeat(255));
    let message = json!({"message": {"title": ["is too long (maximum is 255 characters)"]}});
    let issues = format!("/api/v4/projects/{pid}/issues");
    let r = call(
        &sim,
        Method::POST,
        &issues,
        Some(ROOT),
        Some(json!({"title": too_long})),
    )
    .await;
    assert_eq!((r.status, r.body), (StatusCode::BAD_REQUEST, message.clone()));
    ok(&sim, Method::POST, &issues, Some(json!({"title": just_right}))).await;
    let r = call(
        &sim,
        Method::PUT,
        &format!("{issues}/1"),
        Some(ROOT),
        Some(json!({"title": too_long})),
    )
    .await;
    assert_eq!((r.status, r.body), (StatusCode::BAD_REQUEST, message.clone()));

    let branch = format!("/api/v4/projects/{pid}/repository/branches");
    ok(
        &sim,
        Method::POST,
        &branch,
        Some(json!({"branch": "feature", "ref": "main"})),
    )
    .await;
    let mrs = format!("/api/v4/projects/{pid}/merge_requests");
    let mr = json!({"title": too_long, "source_branch": "feature", "target_branch": "main"});
    let r = call(&sim, Method::POST, &mrs, Some(ROOT), Some(mr)).await;
    assert_eq!((r.status, r.body), (StatusCode::BAD_REQUEST, message.clone()));
    let mr = json!({"title": "fine", "source_branch": "feature", "target_branch": "main"});
    ok(&sim, Method::POST, &mrs, Some(mr)).await;
    let r = call(
        &sim,
        Method::PUT,
        &format!("{mrs}/1"),
        Some(ROOT),
        Some(json!({"title": too_long})),
    )
    .await;
    assert_eq!((r.status, r.body), (StatusCode::BAD_REQUEST, message));
}

/// V4: `lib/api/commits.rb` (`optional :stats, type: Boolean, default: true` on `GET
/// :id/repository/commits/:sha`, presented with `include_stats: params[:stats]`) and `lib/api/entities/commit_detail.rb`
/// (`expose :stats, using: Entities::CommitStats, if: :include_stats`).
#[tokio::test]
async fn a_commit_answers_without_stats_when_stats_is_false() {
    let sim = start().await;
    let pid = project_id(&sim, ROOT, "stats", None).await;
    let commit = format!("/api/v4/projects/{pid}/repository/commits/main");
    let with = ok(&sim, Method::GET, &commit, None).await;
    assert!(with["stats"]["total"].as_u64().is_some(), "{with}");
    let explicit = ok(&sim, Method::GET, &format!("{commit}?stats=true"), None).await;
    assert!(explicit.get("stats").is_some());
    let without = ok(&sim, Method::GET, &format!("{commit}?stats=false"), None).await;
    assert!(without.get("stats").is_none(), "{without}");
    assert_eq!(without["id"], with["id"]);
    assert_eq!(without["project_id"], json!(pid));
    let created = ok(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{pid}/repository/commits"),
        Some(json!({"branch": "main", "commit_message": "add", "stats": false,
            "actions": [{"action": "create", "file_path": "a.txt", "content": "a"}]})),
    )
    .await;
    assert!(created.get("stats").is_none(), "{created}");
}

/// V4: `lib/api/groups.rb`, `GET :id/projects` (`optional :archived, type: Boolean` with no default and
/// `optional :visibility, type: String, values: Gitlab::VisibilityLevel.string_values`).
#[tokio::test]
async fn group_project_lists_filter_by_visibility_and_archived() {
    let sim = start().await;
    let g = ok(
        &sim,
        Method::POST,
        "/api/v4/groups",
        Some(json!({"name": "G", "path": "g"})),
    )
    .await;
    let gid = g["id"].as_u64().unwrap();
    let mut ids = Vec::new();
    for (name, visibility) in [("pub", "public"), ("priv", "private"), ("old", "private")] {
        let p = ok(
            &sim,
            Method::POST,
            "/api/v4/projects",
            Some(json!({"name": name, "namespace_id": gid, "visibility": visibility})),
        )
        .await;
        ids.push(p["id"].as_u64().unwrap());
    }
    ok(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{}/archive", ids[2]),
        None,
    )
    .await;
    let list = format!("/api/v4/groups/{gid}/projects");
    let names = |v: &Value| {
        let mut n: Vec<String> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap().to_string())
            .collect();
        n.sort();
        n
    };
    for (query, want) in [
        ("", vec!["old", "priv", "pub"]),
        ("?visibility=private", vec!["old", "priv"]),
        ("?visibility=public", vec!["pub"]),
        ("?archived=true", vec!["old"]),
        ("?archived=false", vec!["priv", "pub"]),
        ("?archived=false&visibility=private", vec!["priv"]),
    ] {
        let got = ok(&sim, Method::GET, &format!("{list}{query}"), None).await;
        assert_eq!(names(&got), want, "group projects{query}");
    }
    let r = call(
        &sim,
        Method::GET,
        &format!("{list}?visibility=secret"),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(r.body, json!({"error": "visibility does not have a valid value"}));
}

/// V4: `lib/api/entities/project.rb` (`expose :open_issues_count, if: lambda { |project, options|
/// project.feature_available?(:issues, options[:current_user]) }`).
#[tokio::test]
async fn a_project_without_issues_has_no_open_issues_count() {
    let sim = start().await;
    let pid = project_id(&sim, ROOT, "quiet", None).await;
    let path = format!("/api/v4/projects/{pid}");
    let p = ok(&sim, Method::GET, &path, None).await;
    assert_eq!(p["open_issues_count"], 0);
    let p = ok(&sim, Method::PUT, &path, Some(json!({"issues_enabled": false}))).await;
    assert!(p.get("open_issues_count").is_none(), "{p}");
    let p = ok(&sim, Method::GET, &path, None).await;
    assert!(p.get("open_issues_count").is_none(), "{p}");
    let list = ok(&sim, Method::GET, "/api/v4/projects", None).await;
    let listed = list
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == json!(pid))
        .unwrap();
    assert!(listed.get("open_issues_count").is_none(), "{listed}");
}

/// V4: `app/services/award_emojis/base_service.rb` (`@name = normalize_name(name)` through
/// `Gitlab::Emoji.normalize_emoji_name`, which maps the alias `+1` to `thumbsup` and `-1` to `thumbsdown`), used by
/// `lib/api/award_emoji.rb`'s POST.
#[tokio::test]
async fn award_emoji_aliases_are_stored_under_their_canonical_names() {
    let sim = start().await;
    let pid = project_id(&sim, ROOT, "awards", None).await;
    let issues = format!("/api/v4/projects/{pid}/issues");
    ok(&sim, Method::POST, &issues, Some(json!({"title": "vote"}))).await;
    let awards = format!("{issues}/1/award_emoji");
    let up = ok(&sim, Method::POST, &awards, Some(json!({"name": "+1"}))).await;
    assert_eq!(up["name"], "thumbsup");
    let down = ok(&sim, Method::POST, &awards, Some(json!({"name": "-1"}))).await;
    assert_eq!(down["name"], "thumbsdown");
    let r = call(
        &sim,
        Method::POST,
        &awards,
        Some(ROOT),
        Some(json!({"name": "thumbsup"})),
    )
    .await;
    assert_eq!(
        r.status,
        StatusCode::NOT_FOUND,
        "the alias and its name are one award: {}",
        r.body
    );
    let listed = ok(&sim, Method::GET, &awards, None).await;
    let mut names: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["thumbsdown", "thumbsup"]);
}

/// V4: `app/models/repository.rb#contributors` (only `contributor.commits += 1`; `lib/gitlab/contributor.rb`
/// starts `additions` and `deletions` at 0).
#[tokio::test]
async fn contributors_report_zero_additions_and_deletions() {
    let sim = start().await;
    let pid = project_id(&sim, ROOT, "contrib", None).await;
    ok(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{pid}/repository/commits"),
        Some(json!({"branch": "main", "commit_message": "more",
            "actions": [{"action": "create", "file_path": "b.txt", "content": "one\ntwo\nthree\n"}]})),
    )
    .await;
    let list = ok(
        &sim,
        Method::GET,
        &format!("/api/v4/projects/{pid}/repository/contributors"),
        None,
    )
    .await;
    let first = &list[0];
    assert_eq!(first["commits"], 2, "{list}");
    assert_eq!(
        (first["additions"].clone(), first["deletions"].clone()),
        (json!(0), json!(0))
    );
}

/// V4: `app/models/project.rb` / `app/models/concerns/has_repository.rb` (`default_branch` is `repository.root_ref`,
/// nil for an empty repository unless a default branch name is configured) and `app/services/projects/update_service.rb`
/// (`changing_default_branch?` is false when the value sent is the current one, so nothing is checked).
#[tokio::test]
async fn an_empty_project_has_a_null_default_branch_and_takes_back_what_it_showed() {
    let sim = start().await;
    let made = ok(
        &sim,
        Method::POST,
        "/api/v4/projects",
        Some(json!({"name": "blank"})),
    )
    .await;
    let pid = made["id"].as_u64().unwrap();
    assert_eq!(
        (made["default_branch"].clone(), made["empty_repo"].clone()),
        (Value::Null, json!(true))
    );
    let path = format!("/api/v4/projects/{pid}");
    let shown = ok(&sim, Method::GET, &path, None).await;
    assert_eq!(shown["default_branch"], Value::Null);
    // A client that writes back what it read (as a V3 CLI's project update does) is accepted.
    let body = json!({"description": "edited", "default_branch": shown["default_branch"]});
    let updated = ok(&sim, Method::PUT, &path, Some(body)).await;
    assert_eq!(
        (updated["description"].clone(), updated["default_branch"].clone()),
        (json!("edited"), Value::Null)
    );
    // Naming a branch that does not exist is still a change, and still refused.
    let r = call(
        &sim,
        Method::PUT,
        &path,
        Some(ROOT),
        Some(json!({"default_branch": "nope"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);

    // Once the first commit makes a branch, it is the default, and repeating it is accepted.
    ok(
        &sim,
        Method::POST,
        &format!("{path}/repository/commits"),
        Some(json!({"branch": "trunk", "commit_message": "first",
            "actions": [{"action": "create", "file_path": "a", "content": "a"}]})),
    )
    .await;
    let shown = ok(&sim, Method::GET, &path, None).await;
    assert_eq!(shown["default_branch"], "trunk");
    let updated = ok(&sim, Method::PUT, &path, Some(json!({"default_branch": "trunk"}))).await;
    assert_eq!(updated["default_branch"], "trunk");
}
