//! `POST /oauth/token` with the password grant: exchanges a username (or e-mail) and password for a bearer
//! token that the API accepts in `Authorization: Bearer`.

use http::{Method, StatusCode};
use serde_json::json;

use crate::context::Ctx;
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::Route;
use crate::store::TokenKind;

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    vec![Route {
        method: Method::POST,
        path: "/oauth/token".into(),
        handler: token,
    }]
}

fn token(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let grant = ctx.params.str("grant_type").unwrap_or_default();
    if grant != "password" {
        return Ok(Reply::json(
            StatusCode::BAD_REQUEST,
            json!({"error": "unsupported_grant_type", "error_description": "The authorization grant type is not supported by the authorization server."}),
        ));
    }
    let login = ctx.params.str("username").unwrap_or_default();
    let password = ctx.params.str("password").unwrap_or_default();
    let user = ctx.store.users.values().find(|u| {
        (u.username.eq_ignore_ascii_case(&login) || u.email.eq_ignore_ascii_case(&login))
            && u.state == "active"
            && u.password.as_deref() == Some(password.as_str())
    });
    let Some(uid) = user.map(|u| u.id) else {
        return Ok(Reply::json(
            StatusCode::UNAUTHORIZED,
            json!({"error": "invalid_grant", "error_description": "The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client."}),
        ));
    };
    let created = ctx.store.now();
    let secret = format!(
        "svcoat-{}",
        &crate::sha::sha1_hex(format!("oauth:{uid}:{created}").as_bytes())[..24]
    );
    let token = ctx
        .store
        .insert_token(uid, "oauth", vec!["api".into()], TokenKind::OAuth, Some(secret))
        .token
        .clone();
    Ok(Reply::ok(json!({
        "access_token": token,
        "token_type": "bearer",
        "refresh_token": format!("refresh-{token}"),
        "scope": "api",
        "created_at": created / 1000,
    })))
}
