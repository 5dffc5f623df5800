//! Users: `GET /user`, `GET /users`, `GET /users/:id`, and for administrators `POST /users`, `PUT` and
//! `DELETE /users/:id`, blocking and unblocking, external identities (`extern_uid`/`provider` on create and
//! update, `DELETE /users/:id/identities/:provider`), and the admin-issued personal access and impersonation
//! tokens.

use http::Method;
use serde_json::Value;

use crate::context::Ctx;
use crate::entities::user;
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::store::users::{NewUser, PROFILE_FIELDS, SCOPES};
use crate::store::{NamespaceKind, TokenKind};

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    vec![
        api(Method::GET, "/user", current),
        api(Method::GET, "/users", list),
        api(Method::POST, "/users", create),
        api(Method::GET, "/users/{id}", show),
        api(Method::PUT, "/users/{id}", update),
        api(Method::DELETE, "/users/{id}", delete),
        api(Method::POST, "/users/{id}/block", block),
        api(
            Method::DELETE,
            "/users/{id}/identities/{provider}",
            delete_identity,
        ),
        api(Method::GET, "/users/{id}/memberships", memberships),
        api(Method::POST, "/users/{id}/unblock", unblock),
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
        api(
            Method::GET,
            "/users/{id}/impersonation_tokens/{token_id}",
            show_impersonation_token,
        ),
        api(
            Method::DELETE,
            "/users/{id}/impersonation_tokens/{token_id}",
            revoke_impersonation_token,
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
    let identity = identity_params(ctx)?;
    if identity.is_some() {
        // V4: `authenticated_as_admin! if params[:extern_uid].present? && params[:provider].present?`.
        ctx.require_admin()?;
    }
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
        .filter(|u| {
            identity.as_ref().map_or(true, |(provider, uid)| {
                u.identities
                    .iter()
                    .any(|(p, have)| p == provider && have.eq_ignore_ascii_case(uid))
            })
        })
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
    let reset =
        ctx.params.flag("reset_password", false)? || ctx.params.flag("force_random_password", false)?;
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
    let identity = identity_params(ctx)?;
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
    if let (Some(limit), Some(u)) = (ctx.params.u64("projects_limit")?, ctx.store.users.get_mut(&id)) {
        u.projects_limit = limit;
    }
    if let (Some(flag), Some(u)) = (ctx.params.bool("can_create_group")?, ctx.store.users.get_mut(&id)) {
        u.can_create_group = flag;
    }
    if let (Some(identity), Some(u)) = (identity, ctx.store.users.get_mut(&id)) {
        u.identities.push(identity);
    }
    let u = ctx.store.users.get(&id).ok_or(ApiError::NotFound("User"))?;
    Ok(Reply::created(user::full(ctx.store, u, true, true)))
}

/// `extern_uid` and `provider`, which V4 takes together or not at all (`all_or_none_of :extern_uid, :provider`
/// in lib/api/users.rb): `(provider, extern_uid)`.
fn identity_params(ctx: &Ctx<'_>) -> Result<Option<(String, String)>, ApiError> {
    match (ctx.params.str("provider"), ctx.params.str("extern_uid")) {
        (Some(provider), Some(uid)) => Ok(Some((provider, uid))),
        (None, None) => Ok(None),
        _ => Err(ApiError::Param(
            "extern_uid, provider provide all or none of parameters".into(),
        )),
    }
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
    let token = ctx.store.insert_token(uid, &name, scopes, kind, None).clone();
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
    let state = ctx.params.str("state").unwrap_or_else(|| "all".into());
    let items = ctx
        .store
        .tokens
        .values()
        .filter(|t| t.user_id == uid && t.kind == TokenKind::Impersonation)
        .filter(|t| match state.as_str() {
            "active" => !t.revoked,
            "inactive" => t.revoked,
            _ => true,
        })
        .map(|t| user::token(t, false))
        .collect();
    ctx.paginate(items)
}

/// The impersonation token `:token_id` of user `:id` (admins only).
fn find_impersonation_token(ctx: &Ctx<'_>) -> Result<u64, ApiError> {
    ctx.require_admin()?;
    let uid = ctx.path_u64("id", "User")?;
    let id = ctx.path_u64("token_id", "Impersonation Token")?;
    ctx.store
        .tokens
        .get(&id)
        .filter(|t| t.user_id == uid && t.kind == TokenKind::Impersonation)
        .map(|t| t.id)
        .ok_or(ApiError::NotFound("Impersonation Token"))
}

fn show_impersonation_token(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = find_impersonation_token(ctx)?;
    let t = ctx.store.tokens.get(&id).ok_or(ApiError::NotFoundPlain)?;
    Ok(Reply::ok(user::token(t, false)))
}

/// Revokes an impersonation token (it stays listed as inactive).
fn revoke_impersonation_token(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = find_impersonation_token(ctx)?;
    if let Some(t) = ctx.store.tokens.get_mut(&id) {
        t.revoked = true;
    }
    Ok(Reply::no_content())
}

fn admin_target(ctx: &Ctx<'_>) -> Result<u64, ApiError> {
    ctx.require_admin()?;
    let id = ctx.path_u64("id", "User")?;
    if ctx.store.users.contains_key(&id) {
        Ok(id)
    } else {
        Err(ApiError::NotFound("User"))
    }
}

fn update(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = admin_target(ctx)?;
    let p = &ctx.params;
    let email = p.str("email").map(|s| s.trim().to_string());
    let username = p.str("username").map(|s| s.trim().to_string());
    let name = p.str("name");
    let password = p.str("password");
    let projects_limit = p.u64("projects_limit")?;
    let is_admin = p.bool("admin")?;
    let can_create_group = p.bool("can_create_group")?;
    let external = p.bool("external")?;
    let identity = identity_params(ctx)?;
    let p = &ctx.params;
    let profile: Vec<(String, String)> = PROFILE_FIELDS
        .iter()
        .filter_map(|f| p.str(f).map(|v| ((*f).to_string(), v)))
        .collect();
    if let Some(e) = &email {
        if !e.contains('@') {
            return Err(ApiError::validation("email", "is invalid"));
        }
        let taken = ctx
            .store
            .users
            .values()
            .any(|u| u.id != id && u.email.eq_ignore_ascii_case(e))
            || ctx
                .store
                .emails
                .values()
                .any(|m| m.user_id != id && m.email.eq_ignore_ascii_case(e));
        if taken {
            return Err(ApiError::Conflict("Email has already been taken".into()));
        }
    }
    if let Some(u) = &username {
        if !valid_username(u) {
            return Err(ApiError::validation(
                "username",
                "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-' or end in '.', '.git' or '.atom'.",
            ));
        }
        let own_namespace = ctx.store.users.get(&id).map(|u| u.namespace_id);
        let taken = ctx.store.user_by_username(u).is_some_and(|other| other.id != id)
            || ctx
                .store
                .namespace_by_full_path(u)
                .is_some_and(|ns| Some(ns) != own_namespace);
        if taken {
            return Err(ApiError::Conflict("Username has already been taken".into()));
        }
    }
    if let Some(pw) = &password {
        if pw.len() < 8 {
            return Err(ApiError::validation(
                "password",
                "is too short (minimum is 8 characters)",
            ));
        }
    }
    if matches!(&name, Some(n) if n.trim().is_empty()) {
        return Err(ApiError::validation("name", "can't be blank"));
    }
    let Some(user) = ctx.store.users.get_mut(&id) else {
        return Err(ApiError::NotFound("User"));
    };
    if let Some(v) = email {
        user.email = v;
    }
    if let Some(v) = name {
        user.name = v;
    }
    if let Some(v) = password {
        user.password = Some(v);
    }
    if let Some(v) = projects_limit {
        user.projects_limit = v;
    }
    if let Some(v) = is_admin {
        user.is_admin = v;
    }
    if let Some(v) = can_create_group {
        user.can_create_group = v;
    }
    if let Some(v) = external {
        user.external = v;
    }
    user.profile.extend(profile);
    if let Some((provider, uid)) = identity {
        // V4 updates the identity of that provider, or adds one (Users::UpdateService#assign_identity).
        match user.identities.iter_mut().find(|(p, _)| *p == provider) {
            Some(known) => known.1 = uid,
            None => user.identities.push((provider, uid)),
        }
    }
    let namespace_id = user.namespace_id;
    if let Some(v) = username {
        user.username = v.clone();
        if let Some(ns) = ctx.store.namespaces.get_mut(&namespace_id) {
            ns.path = v.clone();
            ns.name = v;
        }
    }
    let u = ctx.store.users.get(&id).ok_or(ApiError::NotFound("User"))?;
    Ok(Reply::ok(user::full(ctx.store, u, true, true)))
}

fn delete(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = admin_target(ctx)?;
    let namespace_id = ctx.store.users.get(&id).map(|u| u.namespace_id);
    let owned: Vec<u64> = ctx
        .store
        .projects
        .values()
        .filter(|p| Some(p.namespace_id) == namespace_id)
        .map(|p| p.id)
        .collect();
    for pid in owned {
        super::projects::remove_project(ctx.store, pid);
    }
    if let Some(ns) = namespace_id {
        if ctx
            .store
            .namespaces
            .get(&ns)
            .is_some_and(|n| n.kind == NamespaceKind::User(id))
        {
            ctx.store.namespaces.remove(&ns);
        }
    }
    for ns in ctx.store.namespaces.values_mut() {
        ns.members.retain(|m| m.user_id != id);
    }
    for p in ctx.store.projects.values_mut() {
        p.members.retain(|m| m.user_id != id);
        p.starrers.remove(&id);
    }
    ctx.store.tokens.retain(|_, t| t.user_id != id);
    ctx.store.ssh_keys.retain(|_, k| k.user_id != Some(id));
    ctx.store.emails.retain(|_, e| e.user_id != id);
    ctx.store.todos.retain(|_, t| t.user_id != id);
    ctx.store.notification_settings.retain(|(uid, _), _| *uid != id);
    ctx.store.users.remove(&id);
    Ok(Reply::no_content())
}

/// `DELETE /users/:id/identities/:provider`: removes the user's identity at that provider; administrators only.
fn delete_identity(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = admin_target(ctx)?;
    let provider = ctx.path_param("provider").to_string();
    let Some(u) = ctx.store.users.get_mut(&id) else {
        return Err(ApiError::NotFound("User"));
    };
    let before = u.identities.len();
    u.identities.retain(|(p, _)| *p != provider);
    if u.identities.len() == before {
        return Err(ApiError::NotFound("Identity"));
    }
    Ok(Reply::no_content())
}

/// Blocks or unblocks: `true` when the state changed; blocking a blocked user answers `null` and unblocking an
/// active one `false`, as the service does.
fn set_state(ctx: &mut Ctx<'_>, state: &str) -> Result<Reply, ApiError> {
    let id = admin_target(ctx)?;
    let Some(u) = ctx.store.users.get_mut(&id) else {
        return Err(ApiError::NotFound("User"));
    };
    if u.state == state {
        return Ok(Reply::created(if state == "blocked" {
            Value::Null
        } else {
            Value::Bool(false)
        }));
    }
    u.state = state.to_string();
    Ok(Reply::created(Value::Bool(true)))
}

fn block(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    set_state(ctx, "blocked")
}

fn unblock(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    set_state(ctx, "active")
}

/// A user's direct memberships of groups (`Namespace`) and projects (`Project`); administrators only.
fn memberships(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = admin_target(ctx)?;
    let kind = ctx.params.str("type");
    if kind
        .as_deref()
        .is_some_and(|k| k != "Project" && k != "Namespace")
    {
        return Err(ApiError::Param("type does not have a valid value".into()));
    }
    let mut items = Vec::new();
    if kind.as_deref() != Some("Project") {
        for ns in ctx.store.namespaces.values().filter(|ns| ns.is_group()) {
            if let Some(m) = ns.members.iter().find(|m| m.user_id == uid) {
                items.push(serde_json::json!({
                    "source_id": ns.id,
                    "source_name": ns.name,
                    "source_type": "Namespace",
                    "access_level": m.access_level,
                }));
            }
        }
    }
    if kind.as_deref() != Some("Namespace") {
        for p in ctx.store.projects.values() {
            if let Some(m) = p.members.iter().find(|m| m.user_id == uid) {
                items.push(serde_json::json!({
                    "source_id": p.id,
                    "source_name": p.name,
                    "source_type": "Project",
                    "access_level": m.access_level,
                }));
            }
        }
    }
    ctx.paginate(items)
}
