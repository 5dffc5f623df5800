//! End-to-end tests of administrators' routes that V3 clients reach unchanged (no svcgate rule rewrites them):
//! users' external sign-in identities, which V3 clients set through `POST` and `PUT /users` (`extern_uid` with
//! `provider`) and read in the user entity's `identities`, and the background-job metrics under `/sidekiq`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use http::{Method, StatusCode};
use serde_json::json;

mod common;
use common::*;

/// V4 lib/api/users.rb: `optional :extern_uid`, `optional :provider` with `all_or_none_of :extern_uid, :provider`
/// on create and update, the identity updated or added by `Users::UpdateService#assign_identity`, and
/// `delete ":id/identities/:provider"` (404 `Identity`, then `destroy_conditionally!`); Entities::Identity is
/// `{provider, extern_uid}`. spec/requests/api/users_spec.rb: "creates user with correct identity", "updates user
/// with a new identity", "updates user with existing identity", "deletes existing identity", "returns 404 error
/// if identity not found". python-gitlab's test_users.py::test_user_identities takes the same path.
#[tokio::test]
async fn identities_are_set_on_create_and_update_listed_filtered_and_deleted() {
    let sim = start().await;
    let root = Some(ROOT);
    let r = call(
        &sim,
        Method::POST,
        "/api/v4/users",
        root,
        Some(
            json!({"email": "ann@example.com", "username": "ann", "name": "Ann", "password": "secret-pass",
                    "provider": "ldapmain", "extern_uid": "uid=ann,ou=people"}),
        ),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert_eq!(
        r.body["identities"],
        json!([{"provider": "ldapmain", "extern_uid": "uid=ann,ou=people"}])
    );
    let id = r.body["id"].as_u64().unwrap();

    // One without the other is refused, on create and on update.
    let r = call(
        &sim,
        Method::POST,
        "/api/v4/users",
        root,
        Some(
            json!({"email": "bo@example.com", "username": "bo", "name": "Bo", "password": "secret-pass",
                    "provider": "ldapmain"}),
        ),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        r.body["error"],
        "extern_uid, provider provide all or none of parameters"
    );
    let path = format!("/api/v4/users/{id}");
    let r = call(&sim, Method::PUT, &path, root, Some(json!({"extern_uid": "1"}))).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);

    // A new provider adds an identity; a known one has its uid replaced.
    let r = call(
        &sim,
        Method::PUT,
        &path,
        root,
        Some(json!({"provider": "github", "extern_uid": "42"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = call(
        &sim,
        Method::PUT,
        &path,
        root,
        Some(json!({"provider": "github", "extern_uid": "43"})),
    )
    .await;
    assert_eq!(
        r.body["identities"],
        json!([{"provider": "ldapmain", "extern_uid": "uid=ann,ou=people"},
               {"provider": "github", "extern_uid": "43"}])
    );

    // An administrator finds the user by identity; anyone else may not ask.
    let r = call(
        &sim,
        Method::GET,
        "/api/v4/users?provider=github&extern_uid=43",
        root,
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.body.as_array().unwrap().len(), 1);
    assert_eq!(r.body[0]["username"], "ann");
    let r = call(
        &sim,
        Method::GET,
        "/api/v4/users?provider=github&extern_uid=42",
        root,
        None,
    )
    .await;
    assert_eq!(r.body, json!([]));
    let (_, bob_token) = sim.create_user("bob", false);
    let r = call(
        &sim,
        Method::GET,
        "/api/v4/users?provider=github&extern_uid=43",
        Some(&bob_token),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let r = call(
        &sim,
        Method::GET,
        "/api/v4/users?provider=github&extern_uid=43",
        None,
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);

    // Deleting an identity: administrators only, 404 for an unknown provider or user.
    let del = format!("/api/v4/users/{id}/identities/github");
    let r = call(&sim, Method::DELETE, &del, Some(&bob_token), None).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let r = call(&sim, Method::DELETE, &del, root, None).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    let r = call(&sim, Method::DELETE, &del, root, None).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(r.body["message"], "404 Identity Not Found");
    let r = call(
        &sim,
        Method::DELETE,
        "/api/v4/users/999/identities/github",
        root,
        None,
    )
    .await;
    assert_eq!(r.body["message"], "404 User Not Found");
    let r = call(&sim, Method::GET, &path, root, None).await;
    assert_eq!(
        r.body["identities"],
        json!([{"provider": "ldapmain", "extern_uid": "uid=ann,ou=people"}])
    );
}

/// V4 lib/api/sidekiq_metrics.rb (doc/api/sidekiq_metrics.md: "only available on GitLab 8.9 and above", so a V3
/// route too): `before { authenticated_as_admin! }`; `queue_metrics` is `{queues: {name: {backlog, latency}}}`,
/// `process_metrics` `{processes: [{hostname, pid, tag, started_at, queues, labels, concurrency, busy}]}`,
/// `job_stats` `{jobs: {processed, failed, enqueued, dead}}` and `compound_metrics` the three together.
/// spec/requests/api/sidekiq_metrics_spec.rb: "defines the `queue_metrics` endpoint", "defines the
/// `process_metrics` endpoint", "defines the `job_stats` endpoint", "defines the `compound_metrics` endpoint".
#[tokio::test]
async fn sidekiq_metrics_describe_an_idle_server_to_administrators_only() {
    let sim = start().await;
    let root = Some(ROOT);
    let r = call(&sim, Method::GET, "/api/v4/sidekiq/queue_metrics", root, None).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.body["queues"]["default"], json!({"backlog": 0, "latency": 0}));
    let r = call(&sim, Method::GET, "/api/v4/sidekiq/process_metrics", root, None).await;
    assert_eq!(r.status, StatusCode::OK);
    let process = &r.body["processes"][0];
    assert_eq!(process["hostname"], "127.0.0.1");
    assert_eq!(process["busy"], 0);
    assert!(process["pid"].is_u64() && process["started_at"].is_string());
    assert!(process["queues"].as_array().unwrap().contains(&json!("default")));
    let r = call(&sim, Method::GET, "/api/v4/sidekiq/job_stats", root, None).await;
    assert_eq!(
        r.body,
        json!({"jobs": {"processed": 0, "failed": 0, "enqueued": 0, "dead": 0}})
    );
    let r = call(&sim, Method::GET, "/api/v4/sidekiq/compound_metrics", root, None).await;
    assert_eq!(r.status, StatusCode::OK);
    let mut keys: Vec<&String> = r.body.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(keys, ["jobs", "processes", "queues"]);

    let (_, bob_token) = sim.create_user("bob", false);
    for what in [
        "queue_metrics",
        "process_metrics",
        "job_stats",
        "compound_metrics",
    ] {
        let path = format!("/api/v4/sidekiq/{what}");
        let r = call(&sim, Method::GET, &path, Some(&bob_token), None).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{what}");
        let r = call(&sim, Method::GET, &path, None, None).await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{what}");
    }
}
