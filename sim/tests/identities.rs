//! End-to-end tests of users' external sign-in identities, which V3 clients set through `POST` and `PUT /users`
//! (`extern_uid` with `provider`) and read in the user entity's `identities`.
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
