//! Web hooks: project hooks (Maintainer+; list, create, show, update, delete) and system hooks (administrators;
//! list, create, show, test, delete).

use http::{Method, StatusCode};
use serde_json::{json, Value};

use crate::context::Ctx;
use crate::entities::hook::{project_hook, system_hook};
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::store::access;
use crate::store::hooks::{valid_hook_url, PROJECT_HOOK_EVENTS, SYSTEM_HOOK_EVENTS};

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    let hooks = "/projects/{id}/hooks";
    let one = "/projects/{id}/hooks/{hook_id}";
    vec![
        api(Method::GET, hooks, list_project),
        api(Method::POST, hooks, create_project),
        api(Method::GET, one, show_project),
        api(Method::PUT, one, update_project),
        api(Method::DELETE, one, delete_project),
        api(Method::GET, "/hooks", list_system),
        api(Method::POST, "/hooks", create_system),
        api(Method::GET, "/hooks/{hook_id}", show_system),
        api(Method::POST, "/hooks/{hook_id}", test_system),
        api(Method::DELETE, "/hooks/{hook_id}", delete_system),
    ]
}

fn maintained_project(ctx: &Ctx<'_>) -> Result<u64, ApiError> {
    let pid = ctx.project_id()?;
    ctx.require_level(pid, access::MAINTAINER)?;
    Ok(pid)
}

/// Applies `url`, `token`, the event flags and `enable_ssl_verification` from the parameters.
fn apply(ctx: &mut Ctx<'_>, id: u64, events: &[(&str, bool)], invalid_url: ApiError) -> Result<(), ApiError> {
    let url = ctx.params.str("url");
    if let Some(u) = &url {
        if !valid_hook_url(u) {
            return Err(invalid_url);
        }
    }
    let token = ctx.params.str("token");
    let ssl = ctx.params.bool("enable_ssl_verification")?;
    let mut flags = Vec::new();
    for (name, _) in events {
        if let Some(v) = ctx.params.bool(name)? {
            flags.push((name.to_string(), v));
        }
    }
    if let Some(h) = ctx.store.hooks.get_mut(&id) {
        if let Some(u) = url {
            h.url = u;
        }
        if token.is_some() {
            h.token = token;
        }
        if let Some(v) = ssl {
            h.enable_ssl_verification = v;
        }
        h.events.extend(flags);
    }
    Ok(())
}

fn invalid_project_url() -> ApiError {
    ApiError::Status(StatusCode::UNPROCESSABLE_ENTITY, "Invalid url given".into())
}

fn list_project(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = maintained_project(ctx)?;
    let items: Vec<Value> = ctx
        .store
        .hooks
        .values()
        .filter(|h| h.project_id == Some(pid))
        .map(project_hook)
        .collect();
    ctx.paginate(items)
}

fn find_project_hook(ctx: &Ctx<'_>) -> Result<u64, ApiError> {
    let pid = maintained_project(ctx)?;
    let id = ctx.path_u64("hook_id", "Hook")?;
    ctx.store
        .hooks
        .get(&id)
        .filter(|h| h.project_id == Some(pid))
        .map(|h| h.id)
        .ok_or(ApiError::NotFound("Hook"))
}

fn hook_reply(
    ctx: &Ctx<'_>,
    id: u64,
    status: StatusCode,
    render: fn(&crate::store::Hook) -> Value,
) -> Result<Reply, ApiError> {
    let h = ctx.store.hooks.get(&id).ok_or(ApiError::NotFound("Hook"))?;
    Ok(Reply::json(status, render(h)))
}

fn create_project(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = maintained_project(ctx)?;
    let url = ctx.params.required_nonblank("url")?;
    if !valid_hook_url(&url) {
        return Err(invalid_project_url());
    }
    let id = ctx.store.insert_hook(Some(pid), &url);
    if let Err(err) = apply(ctx, id, PROJECT_HOOK_EVENTS, invalid_project_url()) {
        ctx.store.hooks.remove(&id);
        return Err(err);
    }
    hook_reply(ctx, id, StatusCode::CREATED, project_hook)
}

fn show_project(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = find_project_hook(ctx)?;
    hook_reply(ctx, id, StatusCode::OK, project_hook)
}

fn update_project(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    // V4 `project_hook_properties` (shared by POST and PUT) `requires :url`: Grape's parameter validation answers
    // 400 `url is missing` after the project's authorization and before the hook is looked up.
    maintained_project(ctx)?;
    ctx.params.required_str("url")?;
    let id = find_project_hook(ctx)?;
    let before = ctx.store.hooks.get(&id).cloned();
    if let Err(err) = apply(ctx, id, PROJECT_HOOK_EVENTS, invalid_project_url()) {
        if let Some(h) = before {
            ctx.store.hooks.insert(id, h);
        }
        return Err(err);
    }
    hook_reply(ctx, id, StatusCode::OK, project_hook)
}

fn delete_project(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = find_project_hook(ctx)?;
    ctx.store.hooks.remove(&id);
    Ok(Reply::no_content())
}

fn list_system(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.require_admin()?;
    let items: Vec<Value> = ctx
        .store
        .hooks
        .values()
        .filter(|h| h.project_id.is_none())
        .map(system_hook)
        .collect();
    ctx.paginate(items)
}

fn find_system_hook(ctx: &Ctx<'_>) -> Result<u64, ApiError> {
    ctx.require_admin()?;
    let id = ctx.path_u64("hook_id", "System hook")?;
    ctx.store
        .hooks
        .get(&id)
        .filter(|h| h.project_id.is_none())
        .map(|h| h.id)
        .ok_or(ApiError::NotFound("System hook"))
}

fn invalid_system_url() -> ApiError {
    ApiError::validation("url", "is invalid")
}

fn create_system(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.require_admin()?;
    let url = ctx.params.required_nonblank("url")?;
    if !valid_hook_url(&url) {
        return Err(invalid_system_url());
    }
    let id = ctx.store.insert_hook(None, &url);
    if let Err(err) = apply(ctx, id, SYSTEM_HOOK_EVENTS, invalid_system_url()) {
        ctx.store.hooks.remove(&id);
        return Err(err);
    }
    hook_reply(ctx, id, StatusCode::CREATED, system_hook)
}

fn show_system(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = find_system_hook(ctx)?;
    hook_reply(ctx, id, StatusCode::OK, system_hook)
}

fn test_system(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    find_system_hook(ctx)?;
    let now = ctx.store.now();
    Ok(Reply::created(json!({
        "project_id": 1,
        "owner_email": "example@example.com",
        "owner_name": "Someone",
        "name": "Ruby",
        "path": "ruby",
        "event_name": "project_create",
        "created_at": crate::time::format(now),
        "updated_at": crate::time::format(now),
        "path_with_namespace": "someone/ruby",
        "project_visibility": "private",
    })))
}

fn delete_system(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = find_system_hook(ctx)?;
    ctx.store.hooks.remove(&id);
    Ok(Reply::no_content())
}
