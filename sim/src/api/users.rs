//! Users: `GET /user`, `GET /users`, `GET /users/:id`, `POST /users`, and the admin-issued personal access and
//! impersonation tokens.

use http::Method;
use serde_json::Value;

use crate::context::Ctx;
use crate::entities::user;
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::store::users::{NewUser, SCOPES};
use crate::store::TokenKind;

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    vec![
        api(Method::GET, "/user", current),
        api(Method::GET, "/users", list),
        api(Method::POST, "/users", create),
        api(Method::GET, "/users/{id}", show),
        api(
            Method::POST,
            "/users/{id}/personal_access_tokens",
            create_personal_token,
        ),
        api(
            Method::POST,
            "/users/{id}/impersonation_tokens",
            create_impersonation_token,
        ),
        api(
            Method::GET,
            "/users/{id}/impersonation_tokens",
            list_impersonation_tokens,
        ),
    ]
}

fn current(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let u = ctx.store.users.get(&uid).ok_or(ApiError::Unauthorized)?;
    Ok(Reply::ok(user::full(ctx.store, u, true, true)))
}

fn list(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let admin = ctx.is_admin();
    let username = ctx.params.str("username");
    let search = ctx.params.str("search").map(|s| s.to_lowercase());
    let active = ctx.params.flag("active", false)?;
    let blocked = ctx.params.flag("blocked", false)?;
    let items: Vec<Value> = ctx
        .store
        .users
        .values()
        .filter(|u| {
            username
                .as_deref()
                .map_or(true, |n| u.username.eq_ignore_ascii_case(n))
        })
        .filter(|u| {
            search.as_deref().map_or(true, |s| {
                u.username.to_lowercase().contains(s)
                    || u.name.to_lowercase().contains(s)
                    || (admin && u.email.to_lowercase().contains(s))
            })
        })
        .filter(|u| !active || u.state == "active")
        .filter(|u| !blocked || u.state == "blocked")
        .map(|u| {
            if admin {
                user::full(ctx.store, u, true, true)
            } else {
                user::basic(ctx.store, u)
            }
        })
        .collect();
    ctx.paginate(items)
}

fn show(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = ctx.path_u64("id", "User")?;
    let admin = ctx.is_admin();
    let is_self = ctx.caller == Some(id);
    let u = ctx.store.users.get(&id).ok_or(ApiError::NotFound("User"))?;
    Ok(Reply::ok(user::full(ctx.store, u, admin || is_self, admin)))
}

fn create(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.require_admin()?;
    let email = ctx.params.required_nonblank("email")?;
    let username = ctx.params.required_nonblank("username")?;
    let name = ctx.params.required_nonblank("name")?;
    let password = ctx.params.str("password");
    let reset = ctx.params.flag("reset_password", false)?
        || ctx.params.flag("force_random_password", false)?;
    if password.is_none() && !reset {
        return Err(ApiError::Missing("password".into()));
    }
    if let Some(p) = &password {
        if p.len() < 8 {
            return Err(ApiError::validation(
                "password",
                "is too short (minimum is 8 characters)",
            ));
        }
    }
    let is_admin = ctx.params.flag("admin", false)?;
    ctx.params.flag("skip_confirmation", false)?;
    if !valid_username(&username) {
        return Err(ApiError::validation(
            "username",
            "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-' or end in '.', '.git' or '.atom'.",
        ));
    }
    if !email.contains('@') {
        return Err(ApiError::validation("email", "is invalid"));
    }
    if ctx
        .store
        .users
        .values()
        .any(|u| u.email.eq_ignore_ascii_case(&email))
    {
        return Err(ApiError::Conflict("Email has already been taken".into()));
    }
    if ctx.store.user_by_username(&username).is_some()
        || ctx.store.namespace_by_full_path(&username).is_some()
    {
        return Err(ApiError::Conflict("Username has already been taken".into()));
    }
    let id = ctx.store.insert_user(NewUser {
        username,
        name,
        email,
        password,
        is_admin,
    });
    if let (Some(limit), Some(u)) = (
        ctx.params.u64("projects_limit")?,
        ctx.store.users.get_mut(&id),
    ) {
        u.projects_limit = limit;
    }
    if let (Some(flag), Some(u)) = (
        ctx.params.bool("can_create_group")?,
        ctx.store.users.get_mut(&id),
    ) {
        u.can_create_group = flag;
    }
    let u = ctx.store.users.get(&id).ok_or(ApiError::NotFound("User"))?;
    Ok(Reply::created(user::full(ctx.store, u, true, true)))
}

/// Whether a username is acceptable.
pub fn valid_username(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('-')
        && !name.ends_with('.')
        && !name.ends_with(".git")
        && !name.ends_with(".atom")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
}

fn create_personal_token(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    create_token(ctx, TokenKind::Personal)
}

fn create_impersonation_token(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    create_token(ctx, TokenKind::Impersonation)
}

fn create_token(ctx: &mut Ctx<'_>, kind: TokenKind) -> Result<Reply, ApiError> {
    ctx.require_admin()?;
    let uid = ctx.path_u64("id", "User")?;
    if !ctx.store.users.contains_key(&uid) {
        return Err(ApiError::NotFound("User"));
    }
    let name = ctx.params.required_nonblank("name")?;
    let scopes = ctx
        .params
        .list("scopes")
        .ok_or_else(|| ApiError::Missing("scopes".into()))?;
    if scopes.is_empty() || scopes.iter().any(|s| !SCOPES.contains(&s.as_str())) {
        return Err(ApiError::validation(
            "scopes",
            "can only contain available scopes",
        ));
    }
    let expires_at = ctx.params.str("expires_at");
    if let Some(date) = &expires_at {
        if crate::time::parse(date).is_none() {
            return Err(ApiError::Invalid("expires_at".into()));
        }
    }
    let token = ctx
        .store
        .insert_token(uid, &name, scopes, kind, None)
        .clone();
    let id = token.id;
    if let Some(t) = ctx.store.tokens.get_mut(&id) {
        t.expires_at = expires_at;
    }
    let token = ctx.store.tokens.get(&id).ok_or(ApiError::NotFoundPlain)?;
    Ok(Reply::created(user::token(token, true)))
}

fn list_impersonation_tokens(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.require_admin()?;
    let uid = ctx.path_u64("id", "User")?;
    if !ctx.store.users.contains_key(&uid) {
        return Err(ApiError::NotFound("User"));
    }
    let items = ctx
        .store
        .tokens
        .values()
        .filter(|t| t.user_id == uid && t.kind == TokenKind::Impersonation)
        .map(|t| user::token(t, false))
        .collect();
    ctx.paginate(items)
}
