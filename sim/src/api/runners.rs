//! Runners: the caller's runners, every runner (administrators), show, update, delete and jobs of one runner, and
//! a project's runners (list, enable a specific runner, disable it).

use std::collections::BTreeSet;

use http::Method;
use serde_json::Value;

use crate::context::Ctx;
use crate::entities::ci::{job as render_job, runner as render_runner, runner_details};
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::store::{access, Runner};

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    let one = "/runners/{runner_id}";
    vec![
        api(Method::GET, "/runners", list_owned),
        api(Method::GET, "/runners/all", list_all),
        api(Method::GET, one, show),
        api(Method::PUT, one, update),
        api(Method::DELETE, one, delete),
        api(Method::GET, &format!("{one}/jobs"), jobs),
        api(Method::GET, "/projects/{id}/runners", list_project),
        api(Method::POST, "/projects/{id}/runners", enable),
        api(Method::DELETE, "/projects/{id}/runners/{runner_id}", disable),
    ]
}

/// Applies the `scope` filter; `allowed` lists the scopes the route accepts.
fn filtered(ctx: &Ctx<'_>, allowed: &[&str], keep: impl Fn(&Runner) -> bool) -> Result<Reply, ApiError> {
    let scope = ctx.params.str("scope");
    if let Some(s) = &scope {
        if !allowed.contains(&s.as_str()) {
            return Err(ApiError::BadRequest("Scope contains invalid value".into()));
        }
    }
    let items: Vec<Value> = ctx
        .store
        .runners
        .values()
        .filter(|r| keep(r))
        .filter(|r| match scope.as_deref() {
            Some("active") => r.active,
            Some("paused") => !r.active,
            Some("online") => r.active && r.contacted_at.is_some(),
            Some("specific") => !r.is_shared,
            Some("shared") => r.is_shared,
            _ => true,
        })
        .map(render_runner)
        .collect();
    ctx.paginate(items)
}

fn list_owned(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    filtered(ctx, &["active", "paused", "online"], |r| {
        ctx.store.owns_runner(r, uid)
    })
}

fn list_all(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.require_admin()?;
    filtered(ctx, &["active", "paused", "online", "specific", "shared"], |_| {
        true
    })
}

fn find_runner(ctx: &Ctx<'_>) -> Result<u64, ApiError> {
    let id = ctx.path_u64("runner_id", "Runner")?;
    ctx.store
        .runners
        .contains_key(&id)
        .then_some(id)
        .ok_or(ApiError::NotFound("Runner"))
}

/// The runner for a change: administrators may change any, owners only their specific runners.
fn manageable_runner(ctx: &Ctx<'_>) -> Result<u64, ApiError> {
    let uid = ctx.user_id()?;
    let id = find_runner(ctx)?;
    if ctx.is_admin() {
        return Ok(id);
    }
    let r = ctx.store.runners.get(&id).ok_or(ApiError::NotFound("Runner"))?;
    if r.is_shared {
        return Err(ApiError::ForbiddenBecause("Runner is shared".into()));
    }
    if !ctx.store.owns_runner(r, uid) {
        return Err(ApiError::ForbiddenBecause("No access granted".into()));
    }
    Ok(id)
}

fn details(ctx: &Ctx<'_>, id: u64) -> Result<Reply, ApiError> {
    let r = ctx.store.runners.get(&id).ok_or(ApiError::NotFound("Runner"))?;
    let show_token = ctx.is_admin() || !r.is_shared;
    Ok(Reply::ok(runner_details(ctx.store, r, ctx.caller, show_token)))
}

fn show(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let id = find_runner(ctx)?;
    let r = ctx.store.runners.get(&id).ok_or(ApiError::NotFound("Runner"))?;
    if !(ctx.is_admin() || r.is_shared || ctx.store.owns_runner(r, uid)) {
        return Err(ApiError::ForbiddenBecause("No access granted".into()));
    }
    details(ctx, id)
}

fn update(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = manageable_runner(ctx)?;
    let description = ctx.params.str("description");
    let active = ctx.params.bool("active")?;
    let tag_list = ctx.params.list("tag_list");
    let run_untagged = ctx.params.bool("run_untagged")?;
    let locked = ctx.params.bool("locked")?;
    if let Some(level) = ctx.params.str("access_level") {
        if !["not_protected", "ref_protected"].contains(&level.as_str()) {
            return Err(ApiError::Param("access_level does not have a valid value".into()));
        }
    }
    if let Some(r) = ctx.store.runners.get_mut(&id) {
        if let Some(v) = description {
            r.description = v;
        }
        if let Some(v) = active {
            r.active = v;
        }
        if let Some(v) = tag_list {
            r.tag_list = v;
        }
        if let Some(v) = run_untagged {
            r.run_untagged = v;
        }
        if let Some(v) = locked {
            r.locked = v;
        }
    }
    details(ctx, id)
}

fn delete(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = manageable_runner(ctx)?;
    ctx.store.runners.remove(&id);
    Ok(Reply::no_content())
}

fn jobs(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = manageable_runner(ctx)?;
    let status = ctx.params.str("status");
    if let Some(s) = &status {
        if !["running", "success", "failed", "canceled"].contains(&s.as_str()) {
            return Err(ApiError::Param("status does not have a valid value".into()));
        }
    }
    let items: Vec<Value> = ctx
        .store
        .jobs
        .values()
        .filter(|j| j.runner_id == Some(id))
        .filter(|j| status.as_ref().map_or(true, |s| &j.status == s))
        .map(|j| render_job(ctx.store, j))
        .collect();
    ctx.paginate(items)
}

fn maintained_project(ctx: &Ctx<'_>) -> Result<u64, ApiError> {
    let pid = ctx.project_id()?;
    ctx.require_level(pid, access::MAINTAINER)?;
    Ok(pid)
}

fn list_project(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = maintained_project(ctx)?;
    let shared = ctx.project(pid)?.flag("shared_runners_enabled");
    filtered(ctx, &["active", "paused", "online", "specific", "shared"], |r| {
        r.project_ids.contains(&pid) || (shared && r.is_shared)
    })
}

fn enable(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = maintained_project(ctx)?;
    let uid = ctx.user_id()?;
    let id = ctx.params.required_u64("runner_id")?;
    let r = ctx.store.runners.get(&id).ok_or(ApiError::NotFound("Runner"))?;
    if r.is_shared {
        return Err(ApiError::ForbiddenBecause("Runner is shared".into()));
    }
    if r.locked {
        return Err(ApiError::ForbiddenBecause("Runner is locked".into()));
    }
    if !ctx.is_admin() && !ctx.store.owns_runner(r, uid) {
        return Err(ApiError::ForbiddenBecause("No access granted".into()));
    }
    if r.project_ids.contains(&pid) {
        return Err(ApiError::Conflict(
            "Runner was already enabled for this project".into(),
        ));
    }
    if let Some(r) = ctx.store.runners.get_mut(&id) {
        r.project_ids.insert(pid);
    }
    let r = ctx.store.runners.get(&id).ok_or(ApiError::NotFound("Runner"))?;
    Ok(Reply::created(render_runner(r)))
}

fn disable(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = maintained_project(ctx)?;
    let id = ctx.path_u64("runner_id", "Runner")?;
    let projects: BTreeSet<u64> = ctx
        .store
        .runners
        .get(&id)
        .map(|r| r.project_ids.clone())
        .filter(|p| p.contains(&pid))
        .ok_or(ApiError::NotFound("Runner"))?;
    if projects.len() == 1 {
        return Err(ApiError::ForbiddenBecause(
            "Only one project associated with the runner. Please remove the runner instead".into(),
        ));
    }
    if let Some(r) = ctx.store.runners.get_mut(&id) {
        r.project_ids.remove(&pid);
    }
    Ok(Reply::no_content())
}
