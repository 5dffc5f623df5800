//! User entities: `UserBasic` (inside other entities), `User`, and the admin/self view with `is_admin`, plus
//! access tokens.

use serde_json::{json, Value};

use super::ts;
use crate::store::{Store, Token, TokenKind, User};

/// `{id, name, username, state, avatar_url, web_url}`.
pub fn basic(store: &Store, user: &User) -> Value {
    json!({
        "id": user.id,
        "name": user.name,
        "username": user.username,
        "state": user.state,
        "avatar_url": Value::Null,
        "web_url": format!("{}/{}", store.base_url, user.username),
    })
}

/// The basic shape by id, null when the user is unknown.
pub fn basic_by_id(store: &Store, id: Option<u64>) -> Value {
    id.and_then(|id| store.users.get(&id))
        .map(|u| basic(store, u))
        .unwrap_or(Value::Null)
}

/// The `User` entity; `private_view` adds e-mail and account details (self or admin), `admin_view` adds
/// `is_admin`.
pub fn full(store: &Store, user: &User, private_view: bool, admin_view: bool) -> Value {
    let mut v = basic(store, user);
    if let Value::Object(map) = &mut v {
        let text = |field: &str, empty: Value| {
            user.profile
                .get(field)
                .map(|s| Value::String(s.clone()))
                .unwrap_or(empty)
        };
        let extra = json!({
            "created_at": ts(user.created_at),
            "bio": text("bio", Value::Null),
            "location": text("location", Value::Null),
            "skype": text("skype", json!("")),
            "linkedin": text("linkedin", json!("")),
            "twitter": text("twitter", json!("")),
            "website_url": text("website_url", json!("")),
            "organization": text("organization", Value::Null),
        });
        if let Value::Object(extra) = extra {
            map.extend(extra);
        }
        if private_view {
            let private = json!({
                "last_sign_in_at": Value::Null,
                "confirmed_at": ts(user.created_at),
                "last_activity_on": Value::Null,
                "email": user.email,
                "theme_id": 1,
                "color_scheme_id": 1,
                "projects_limit": user.projects_limit,
                "current_sign_in_at": Value::Null,
                "identities": user
                    .identities
                    .iter()
                    .map(|(provider, extern_uid)| json!({"provider": provider, "extern_uid": extern_uid}))
                    .collect::<Vec<_>>(),
                "can_create_group": user.can_create_group,
                "can_create_project": true,
                "two_factor_enabled": false,
                "external": user.external,
            });
            if let Value::Object(private) = private {
                map.extend(private);
            }
        }
        if admin_view {
            map.insert("is_admin".into(), json!(user.is_admin));
        }
    }
    v
}

/// A personal access or impersonation token; `with_secret` includes `token` (only at creation).
pub fn token(token: &Token, with_secret: bool) -> Value {
    let mut v = json!({
        "id": token.id,
        "name": token.name,
        "revoked": token.revoked,
        "created_at": ts(token.created_at),
        "scopes": token.scopes,
        "user_id": token.user_id,
        "active": !token.revoked,
        "expires_at": token.expires_at,
    });
    if let Value::Object(map) = &mut v {
        if token.kind == TokenKind::Impersonation {
            map.insert("impersonation".into(), json!(true));
        }
        if with_secret {
            map.insert("token".into(), json!(token.token));
        }
    }
    v
}
