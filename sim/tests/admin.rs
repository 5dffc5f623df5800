//! End-to-end tests of the administration and integration resources: deploy keys, hooks, user keys and e-mails,
//! blocking, services, templates, application settings, broadcast messages, runners, boards, label and milestone
//! extras, and notification settings.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use http::{Method, StatusCode};
use serde_json::json;

mod common;
use common::*;

const KEY_A: &str = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQCyA alice@host";
const KEY_B: &str = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB7 deploy@ci";

#[tokio::test]
async fn deploy_keys_are_shared_between_projects() {
    let sim = start().await;
    let demo = sim.seed_demo();
    let pid = demo.project_id;
    let t = Some(demo.token.as_str());
    let keys = format!("/api/v4/projects/{pid}/deploy_keys");
    let r = call(
        &sim,
        Method::POST,
        &keys,
        t,
        Some(json!({"key": KEY_B, "title": "ci", "can_push": true})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["title"], "ci");
    assert_eq!(r.body["can_push"], true);
    let key_id = r.body["id"].as_u64().unwrap();
    assert!(r.body["created_at"].is_string());

    // A second project reuses the same key.
    let r = call(
        &sim,
        Method::POST,
        "/api/v4/projects",
        t,
        Some(json!({"name": "other"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    let other = r.body["id"].as_u64().unwrap();
    let r = call(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{other}/deploy_keys"),
        t,
        Some(json!({"key": KEY_B, "title": "again"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["id"], key_id);
    let r = call(&sim, Method::GET, "/api/v4/deploy_keys", Some(ROOT), None).await;
    assert_eq!(r.body.as_array().unwrap().len(), 1);
    let r = call(&sim, Method::GET, "/api/v4/deploy_keys", t, None).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);

    // Unlink, then enable again.
    let one = format!("{keys}/{key_id}");
    let r = call(&sim, Method::DELETE, &one, t, None).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    let r = call(&sim, Method::GET, &one, t, None).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(r.body, json!({"message": "404 Deploy Key Not Found"}));
    let r = call(&sim, Method::POST, &format!("{one}/enable"), t, None).await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["key"], KEY_B);
    let r = call(&sim, Method::GET, &keys, t, None).await;
    assert_eq!(r.body.as_array().unwrap().len(), 1);
    assert_eq!(header(&r, "x-total"), "1");

    let r = call(
        &sim,
        Method::POST,
        &keys,
        t,
        Some(json!({"key": "nonsense", "title": "x"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(r.body["message"]["key"], json!(["is invalid"]));
}

#[tokio::test]
async fn project_and_system_hooks() {
    let sim = start().await;
    let demo = sim.seed_demo();
    let pid = demo.project_id;
    let t = Some(demo.token.as_str());
    let hooks = format!("/api/v4/projects/{pid}/hooks");
    let r = call(
        &sim,
        Method::POST,
        &hooks,
        t,
        Some(json!({"url": "https://ci.example.com/hook", "token": "s3cret", "issues_events": true})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["push_events"], true);
    assert_eq!(r.body["issues_events"], true);
    assert_eq!(r.body["job_events"], false);
    assert_eq!(r.body["project_id"], pid);
    assert!(r.body.get("token").is_none());
    let id = r.body["id"].as_u64().unwrap();
    let one = format!("{hooks}/{id}");
    let r = call(
        &sim,
        Method::PUT,
        &one,
        t,
        Some(json!({"url": "https://ci.example.com/hook", "job_events": true, "push_events": false})),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.body["job_events"], true);
    assert_eq!(r.body["push_events"], false);
    assert_eq!(r.body["url"], "https://ci.example.com/hook");
    let r = call(&sim, Method::PUT, &one, t, Some(json!({"url": "ftp://nope"}))).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(r.body, json!({"message": "Invalid url given"}));
    let r = call(&sim, Method::GET, &hooks, t, None).await;
    assert_eq!(r.body.as_array().unwrap().len(), 1);
    let r = call(&sim, Method::DELETE, &one, t, None).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    let r = call(&sim, Method::GET, &one, t, None).await;
    assert_eq!(r.body, json!({"message": "404 Hook Not Found"}));

    // System hooks.
    let r = call(
        &sim,
        Method::POST,
        "/api/v4/hooks",
        Some(ROOT),
        Some(json!({"url": "http://hooks.local/x"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["repository_update_events"], true);
    let id = r.body["id"].as_u64().unwrap();
    let r = call(
        &sim,
        Method::GET,
        &format!("/api/v4/hooks/{id}"),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(r.body["url"], "http://hooks.local/x");
    let r = call(
        &sim,
        Method::POST,
        &format!("/api/v4/hooks/{id}"),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["event_name"], "project_create");
    expect_statuses(
        &sim,
        vec![
            ("GET /api/v4/hooks".into(), t, None, 403),
            (format!("DELETE /api/v4/hooks/{id}"), Some(ROOT), None, 204),
        ],
    )
    .await;
    let r = call(&sim, Method::GET, "/api/v4/hooks", Some(ROOT), None).await;
    assert_eq!(r.body, json!([]));
}

#[tokio::test]
async fn user_keys_emails_blocking_and_admin_edits() {
    let sim = start().await;
    let (bob, bob_token) = sim.create_user("bob", false);
    let b = Some(bob_token.as_str());
    let r = call(
        &sim,
        Method::POST,
        "/api/v4/user/keys",
        b,
        Some(json!({"key": KEY_A, "title": "laptop"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    let key_id = r.body["id"].as_u64().unwrap();
    assert_eq!(r.body["title"], "laptop");
    let r = call(
        &sim,
        Method::POST,
        "/api/v4/user/keys",
        b,
        Some(json!({"key": KEY_A, "title": "dup"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let r = call(
        &sim,
        Method::GET,
        &format!("/api/v4/users/{bob}/keys"),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(r.body.as_array().unwrap().len(), 1);
    let r = call(&sim, Method::GET, &format!("/api/v4/users/{bob}/keys"), b, None).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let r = call(&sim, Method::GET, &format!("/api/v4/user/keys/{key_id}"), b, None).await;
    assert_eq!(r.body["key"], KEY_A);
    let r = call(
        &sim,
        Method::DELETE,
        &format!("/api/v4/users/{bob}/keys/{key_id}"),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    let r = call(&sim, Method::GET, &format!("/api/v4/user/keys/{key_id}"), b, None).await;
    assert_eq!(r.body, json!({"message": "404 Key Not Found"}));

    let r = call(
        &sim,
        Method::POST,
        "/api/v4/user/emails",
        b,
        Some(json!({"email": "bob@work.example"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    let email_id = r.body["id"].as_u64().unwrap();
    let r = call(
        &sim,
        Method::POST,
        "/api/v4/user/emails",
        b,
        Some(json!({"email": "admin@example.com"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let r = call(
        &sim,
        Method::GET,
        &format!("/api/v4/users/{bob}/emails"),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(r.body, json!([{"id": email_id, "email": "bob@work.example"}]));
    let r = call(
        &sim,
        Method::DELETE,
        &format!("/api/v4/user/emails/{email_id}"),
        b,
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    let r = call(&sim, Method::GET, "/api/v4/user/emails", b, None).await;
    assert_eq!(r.body, json!([]));

    // Blocking.
    let r = call(
        &sim,
        Method::POST,
        &format!("/api/v4/users/{bob}/block"),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body, json!(true));
    let r = call(&sim, Method::GET, "/api/v4/user", b, None).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert_eq!(
        r.body,
        json!({"message": "403 Forbidden - Your account has been blocked."})
    );
    expect_statuses(
        &sim,
        vec![
            (format!("POST /api/v4/users/{bob}/unblock"), Some(ROOT), None, 201),
            ("GET /api/v4/user".into(), b, None, 200),
            (format!("POST /api/v4/users/{bob}/block"), b, None, 403),
        ],
    )
    .await;

    // Edit and delete.
    let r = call(
        &sim,
        Method::PUT,
        &format!("/api/v4/users/{bob}"),
        Some(ROOT),
        Some(json!({"name": "Robert", "bio": "Builds things", "projects_limit": 5})),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.body["name"], "Robert");
    assert_eq!(r.body["bio"], "Builds things");
    assert_eq!(r.body["projects_limit"], 5);
    expect_statuses(
        &sim,
        vec![
            (
                format!("PUT /api/v4/users/{bob}"),
                Some(ROOT),
                Some(json!({"username": "root"})),
                409,
            ),
            (format!("DELETE /api/v4/users/{bob}"), Some(ROOT), None, 204),
            (format!("GET /api/v4/users/{bob}"), Some(ROOT), None, 404),
            ("GET /api/v4/user".into(), b, None, 401),
        ],
    )
    .await;
}

#[tokio::test]
async fn services_and_slash_commands() {
    let sim = start().await;
    let demo = sim.seed_demo();
    let pid = demo.project_id;
    let t = Some(demo.token.as_str());
    let slack = format!("/api/v4/projects/{pid}/services/slack");
    let r = call(&sim, Method::GET, &slack, t, None).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.body["active"], false);
    assert_eq!(r.body["properties"], json!({}));
    assert_eq!(r.body["title"], "Slack notifications");
    let r = call(&sim, Method::PUT, &slack, t, Some(json!({"note_events": false}))).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let r = call(
        &sim,
        Method::PUT,
        &slack,
        t,
        Some(json!({"webhook": "https://hooks.slack.example/x", "note_events": false})),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.body["active"], true);
    assert_eq!(r.body["note_events"], false);
    assert_eq!(r.body["push_events"], true);
    assert_eq!(r.body["properties"]["webhook"], "https://hooks.slack.example/x");
    let r = call(&sim, Method::DELETE, &slack, t, None).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    let r = call(&sim, Method::GET, &slack, t, None).await;
    assert_eq!(r.body["active"], false);
    assert_eq!(r.body["properties"], json!({}));
    let r = call(
        &sim,
        Method::GET,
        &format!("/api/v4/projects/{pid}/services/gemnasium"),
        t,
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);

    let trigger = format!("/api/v4/projects/{pid}/services/mattermost_slash_commands/trigger");
    expect_statuses(
        &sim,
        vec![
            (
                format!("POST {trigger}"),
                None,
                Some(json!({"token": "tok"})),
                401,
            ),
            (
                format!("PUT /api/v4/projects/{pid}/services/mattermost-slash-commands"),
                t,
                Some(json!({"token": "tok"})),
                200,
            ),
            (
                format!("POST {trigger}"),
                None,
                Some(json!({"token": "wrong"})),
                401,
            ),
        ],
    )
    .await;
    let r = call(
        &sim,
        Method::POST,
        &trigger,
        None,
        Some(json!({"token": "tok", "text": "help"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.body["response_type"], "ephemeral");
    assert!(r.body["text"].as_str().unwrap().contains("issue show"));
}

#[tokio::test]
async fn templates() {
    let sim = start().await;
    let r = call(&sim, Method::GET, "/api/v4/templates/licenses", None, None).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.body.as_array().unwrap().len(), 4);
    let r = call(
        &sim,
        Method::GET,
        "/api/v4/templates/licenses?popular=true",
        None,
        None,
    )
    .await;
    assert!(r.body.as_array().unwrap().iter().all(|l| l["featured"] == true));
    assert_eq!(r.body.as_array().unwrap().len(), 2);
    let r = call(
        &sim,
        Method::GET,
        "/api/v4/templates/licenses/mit?fullname=Jane%20Doe",
        None,
        None,
    )
    .await;
    assert_eq!(r.body["key"], "mit");
    assert!(r.body["content"].as_str().unwrap().contains("Jane Doe"));
    let r = call(&sim, Method::GET, "/api/v4/templates/licenses/wtfpl", None, None).await;
    assert_eq!(r.body, json!({"message": "404 License Not Found"}));
    for kind in ["gitignores", "svc_ci_ymls", "dockerfiles"] {
        let r = call(
            &sim,
            Method::GET,
            &format!("/api/v4/templates/{kind}"),
            None,
            None,
        )
        .await;
        let list = r.body.as_array().unwrap().clone();
        assert!(list.len() >= 2);
        let name = list[0]["name"].as_str().unwrap().to_string();
        let r = call(
            &sim,
            Method::GET,
            &format!("/api/v4/templates/{kind}/{name}"),
            None,
            None,
        )
        .await;
        assert_eq!(r.body["name"], name.as_str());
        assert!(r.body["content"].is_string());
        let r = call(
            &sim,
            Method::GET,
            &format!("/api/v4/templates/{kind}/Nope"),
            None,
            None,
        )
        .await;
        assert_eq!(r.status, StatusCode::NOT_FOUND);
    }
}

#[tokio::test]
async fn application_settings_and_broadcast_messages() {
    let sim = start().await;
    let (_, bob_token) = sim.create_user("bob", false);
    let b = Some(bob_token.as_str());
    let r = call(
        &sim,
        Method::GET,
        "/api/v4/application/settings",
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.body["default_project_visibility"], "private");
    assert_eq!(r.body["restricted_visibility_levels"], json!([]));
    assert_eq!(r.body["id"], 1);
    let r = call(&sim, Method::GET, "/api/v4/application/settings", b, None).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let r = call(
        &sim,
        Method::PUT,
        "/api/v4/application/settings",
        Some(ROOT),
        Some(json!({"default_project_visibility": "internal", "restricted_visibility_levels": ["public"], "signup_enabled": false})),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.body["default_project_visibility"], "internal");
    assert_eq!(r.body["restricted_visibility_levels"], json!(["public"]));
    assert_eq!(r.body["signup_enabled"], false);
    let r = call(
        &sim,
        Method::PUT,
        "/api/v4/application/settings",
        Some(ROOT),
        Some(json!({"default_group_visibility": "secret"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);

    let r = call(
        &sim,
        Method::POST,
        "/api/v4/broadcast_messages",
        Some(ROOT),
        Some(json!({"message": "Maintenance tonight", "color": "#E75E40"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["active"], true);
    let id = r.body["id"].as_u64().unwrap();
    let one = format!("/api/v4/broadcast_messages/{id}");
    let r = call(
        &sim,
        Method::PUT,
        &one,
        Some(ROOT),
        Some(json!({"starts_at": "2000-01-01T00:00:00Z", "ends_at": "2000-01-02T00:00:00Z"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.body["active"], false);
    assert_eq!(r.body["starts_at"], "2000-01-01T00:00:00.000Z");
    let r = call(&sim, Method::GET, "/api/v4/broadcast_messages", b, None).await;
    assert_eq!(r.body.as_array().unwrap().len(), 1);
    expect_statuses(
        &sim,
        vec![
            (
                "POST /api/v4/broadcast_messages".into(),
                b,
                Some(json!({"message": "x"})),
                403,
            ),
            (
                "POST /api/v4/broadcast_messages".into(),
                Some(ROOT),
                Some(json!({})),
                400,
            ),
            (format!("DELETE {one}"), Some(ROOT), None, 204),
            (format!("GET {one}"), Some(ROOT), None, 404),
        ],
    )
    .await;
}

#[tokio::test]
async fn runners_shared_and_specific() {
    let sim = start().await;
    let demo = sim.seed_demo();
    let pid = demo.project_id;
    let t = Some(demo.token.as_str());
    let r = call(&sim, Method::GET, "/api/v4/runners/all", Some(ROOT), None).await;
    let all = r.body.as_array().unwrap().clone();
    assert_eq!(all.len(), 2);
    let shared = all.iter().find(|r| r["is_shared"] == true).unwrap()["id"]
        .as_u64()
        .unwrap();
    let specific = all.iter().find(|r| r["is_shared"] == false).unwrap()["id"]
        .as_u64()
        .unwrap();
    let r = call(&sim, Method::GET, "/api/v4/runners/all", t, None).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let r = call(&sim, Method::GET, "/api/v4/runners", t, None).await;
    assert_eq!(r.body.as_array().unwrap().len(), 1);
    assert_eq!(r.body[0]["id"], specific);
    let r = call(&sim, Method::GET, &format!("/api/v4/runners/{specific}"), t, None).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.body["projects"][0]["id"], pid);
    assert!(r.body["token"].is_string());
    let r = call(
        &sim,
        Method::GET,
        &format!("/api/v4/projects/{pid}/runners"),
        t,
        None,
    )
    .await;
    assert_eq!(r.body.as_array().unwrap().len(), 2);
    // The seeded pipeline's build job ran on the shared runner.
    let r = call(
        &sim,
        Method::GET,
        &format!("/api/v4/projects/{pid}/jobs?scope=success"),
        t,
        None,
    )
    .await;
    assert!(r
        .body
        .as_array()
        .unwrap()
        .iter()
        .any(|j| j["runner"]["id"] == shared));

    let r = call(
        &sim,
        Method::PUT,
        &format!("/api/v4/runners/{specific}"),
        t,
        Some(json!({"description": "mine", "tag_list": ["a", "b"]})),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.body["description"], "mine");
    assert_eq!(r.body["tag_list"], json!(["a", "b"]));
    let r = call(
        &sim,
        Method::DELETE,
        &format!("/api/v4/runners/{shared}"),
        t,
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert_eq!(r.body, json!({"message": "403 Forbidden - Runner is shared"}));
    let r = call(
        &sim,
        Method::DELETE,
        &format!("/api/v4/projects/{pid}/runners/{specific}"),
        t,
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert_eq!(
        r.body,
        json!({"message": "403 Forbidden - Only one project associated with the runner. Please remove the runner instead"})
    );

    // Enable it for a second project, then disabling works.
    let r = call(
        &sim,
        Method::POST,
        "/api/v4/projects",
        t,
        Some(json!({"name": "second"})),
    )
    .await;
    let other = r.body["id"].as_u64().unwrap();
    let r = call(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{other}/runners"),
        t,
        Some(json!({"runner_id": specific})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["id"], specific);
    expect_statuses(
        &sim,
        vec![
            (
                format!("POST /api/v4/projects/{other}/runners"),
                t,
                Some(json!({"runner_id": shared})),
                403,
            ),
            (
                format!("DELETE /api/v4/projects/{pid}/runners/{specific}"),
                t,
                None,
                204,
            ),
            (format!("DELETE /api/v4/runners/{specific}"), t, None, 204),
            (format!("GET /api/v4/runners/{specific}"), Some(ROOT), None, 404),
        ],
    )
    .await;
}

#[tokio::test]
async fn boards_labels_and_milestones() {
    let sim = start().await;
    let demo = sim.seed_demo();
    let pid = demo.project_id;
    let t = Some(demo.token.as_str());

    // Labels: counts only on request, rename, delete.
    let labels = format!("/api/v4/projects/{pid}/labels");
    let r = call(&sim, Method::GET, &labels, t, None).await;
    let bug = r
        .body
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == "bug")
        .unwrap()
        .clone();
    assert!(bug.get("open_issues_count").is_none());
    assert_eq!(bug["subscribed"], false);
    assert!(bug.get("priority").is_some());
    let r = call(&sim, Method::GET, &format!("{labels}?with_counts=true"), t, None).await;
    let bug = r
        .body
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == "bug")
        .unwrap()
        .clone();
    assert_eq!(bug["open_issues_count"], 1);
    assert_eq!(bug["closed_issues_count"], 0);
    assert_eq!(bug["open_merge_requests_count"], 0);
    let r = call(
        &sim,
        Method::PUT,
        &labels,
        t,
        Some(json!({"name": "bug", "new_name": "defect", "color": "#ff0000"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.body["name"], "defect");
    assert_eq!(r.body["color"], "#ff0000");
    let r = call(
        &sim,
        Method::GET,
        &format!("/api/v4/projects/{pid}/issues/1"),
        t,
        None,
    )
    .await;
    assert_eq!(r.body["labels"], json!(["defect"]));
    let r = call(&sim, Method::PUT, &labels, t, Some(json!({"name": "defect"}))).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let label_id = bug["id"].as_u64().unwrap();

    // Boards: the demo project is seeded with one; more can be created, and deleted.
    let boards_path = format!("/api/v4/projects/{pid}/boards");
    let r = call(
        &sim,
        Method::POST,
        &boards_path,
        t,
        Some(json!({"name": "Spare"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["name"], "Spare");
    let spare = r.body["id"].as_u64().unwrap();
    let r = call(&sim, Method::DELETE, &format!("{boards_path}/{spare}"), t, None).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    let r = call(&sim, Method::GET, &boards_path, t, None).await;
    assert_eq!(r.status, StatusCode::OK);
    let boards = r.body.as_array().unwrap().clone();
    assert_eq!(boards.len(), 1);
    assert_eq!(boards[0]["name"], "Development");
    let board = boards[0]["id"].as_u64().unwrap();
    let lists = format!("/api/v4/projects/{pid}/boards/{board}/lists");
    let r = call(&sim, Method::POST, &lists, t, Some(json!({"label_id": label_id}))).await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["label"]["name"], "defect");
    assert_eq!(r.body["position"], 0);
    let r = call(&sim, Method::POST, &lists, t, Some(json!({"label_id": 9999}))).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let r = call(&sim, Method::GET, &lists, t, None).await;
    assert_eq!(r.body.as_array().unwrap().len(), 1);
    expect_statuses(
        &sim,
        vec![
            (
                format!("GET /api/v4/projects/{pid}/boards/{}/lists", board + 1),
                t,
                None,
                404,
            ),
            (format!("DELETE {labels}?name=defect"), t, None, 204),
        ],
    )
    .await;
    let r = call(&sim, Method::DELETE, &format!("{labels}?name=defect"), t, None).await;
    assert_eq!(r.body, json!({"message": "404 Label Not Found"}));
    let r = call(&sim, Method::GET, &lists, t, None).await;
    assert_eq!(r.body, json!([]));

    // Milestones.
    let ms = format!("/api/v4/projects/{pid}/milestones");
    let r = call(&sim, Method::POST, &ms, t, Some(json!({"title": "v1"}))).await;
    let m1 = r.body["id"].as_u64().unwrap();
    let r = call(&sim, Method::POST, &ms, t, Some(json!({"title": "v2"}))).await;
    let m2_iid = r.body["iid"].as_u64().unwrap();
    let r = call(
        &sim,
        Method::PUT,
        &format!("/api/v4/projects/{pid}/issues/1"),
        t,
        Some(json!({"milestone_id": m1})),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    let r = call(
        &sim,
        Method::PUT,
        &format!("{ms}/{m1}"),
        t,
        Some(json!({"state_event": "close", "description": "first"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.body["state"], "closed");
    assert_eq!(r.body["description"], "first");
    let r = call(&sim, Method::GET, &format!("{ms}?state=closed"), t, None).await;
    assert_eq!(r.body.as_array().unwrap().len(), 1);
    let r = call(&sim, Method::GET, &format!("{ms}?iids[]={m2_iid}"), t, None).await;
    assert_eq!(r.body[0]["title"], "v2");
    let r = call(&sim, Method::GET, &format!("{ms}?state=all"), t, None).await;
    assert_eq!(r.body.as_array().unwrap().len(), 2);
    let r = call(&sim, Method::GET, &format!("{ms}?state=bogus"), t, None).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let r = call(&sim, Method::GET, &format!("{ms}/{m1}/issues"), t, None).await;
    assert_eq!(r.body.as_array().unwrap().len(), 1);
    assert_eq!(r.body[0]["iid"], 1);
    let r = call(&sim, Method::GET, &format!("{ms}/{m1}/merge_requests"), t, None).await;
    assert_eq!(r.body, json!([]));
    expect_statuses(
        &sim,
        vec![
            (
                format!("PUT {ms}/{m1}"),
                t,
                Some(json!({"state_event": "explode"})),
                400,
            ),
            (format!("GET {ms}/999999/issues"), t, None, 404),
        ],
    )
    .await;
}

#[tokio::test]
async fn notification_settings() {
    let sim = start().await;
    let demo = sim.seed_demo();
    let t = Some(demo.token.as_str());
    let r = call(&sim, Method::GET, "/api/v4/notification_settings", t, None).await;
    assert_eq!(
        r.body,
        json!({"level": "participating", "notification_email": "demo@example.com"})
    );
    let r = call(
        &sim,
        Method::PUT,
        "/api/v4/notification_settings",
        t,
        Some(json!({"level": "watch"})),
    )
    .await;
    assert_eq!(r.body["level"], "watch");
    let p = format!("/api/v4/projects/{}/notification_settings", demo.project_id);
    let r = call(
        &sim,
        Method::PUT,
        &p,
        t,
        Some(json!({"level": "custom", "new_issue": true})),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.body["events"]["new_issue"], true);
    assert_eq!(r.body["events"]["new_note"], false);
    expect_statuses(
        &sim,
        vec![
            (format!("PUT {p}"), t, Some(json!({"level": "loud"})), 400),
            ("GET /api/v4/notification_settings".into(), None, None, 401),
        ],
    )
    .await;
}
