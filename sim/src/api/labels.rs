//! Project labels and milestones: list, create, and (labels) delete by name.

use http::Method;
use serde_json::Value;

use crate::context::Ctx;
use crate::entities::issue::{label, milestone};
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::store::access;

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    vec![
        api(Method::GET, "/projects/{id}/labels", list_labels),
        api(Method::POST, "/projects/{id}/labels", create_label),
        api(Method::DELETE, "/projects/{id}/labels", delete_label),
        api(Method::GET, "/projects/{id}/milestones", list_milestones),
        api(Method::POST, "/projects/{id}/milestones", create_milestone),
        api(
            Method::GET,
            "/projects/{id}/milestones/{milestone_id}",
            show_milestone,
        ),
    ]
}

fn list_labels(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = ctx.project_id()?;
    let mut labels: Vec<_> = ctx
        .store
        .labels
        .values()
        .filter(|l| l.project_id == pid)
        .collect();
    labels.sort_by_key(|l| l.name.to_lowercase());
    let items: Vec<Value> = labels.into_iter().map(|l| label(ctx.store, l)).collect();
    ctx.paginate(items)
}

fn create_label(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = ctx.project_id()?;
    ctx.require_level(pid, access::DEVELOPER)?;
    let name = ctx.params.required_nonblank("name")?;
    let color = ctx.params.required_nonblank("color")?;
    let valid_color = color.len() == 7
        && color.starts_with('#')
        && color.chars().skip(1).all(|c| c.is_ascii_hexdigit());
    if !valid_color {
        return Err(ApiError::validation("color", "must be a valid color code"));
    }
    if ctx
        .store
        .labels
        .values()
        .any(|l| l.project_id == pid && l.name == name)
    {
        return Err(ApiError::Conflict("Label already exists".into()));
    }
    let description = ctx.params.str("description");
    let priority = ctx.params.u64("priority")?;
    let id = ctx.store.insert_label(pid, &name, Some(color), description);
    if let Some(l) = ctx.store.labels.get_mut(&id) {
        l.priority = priority;
    }
    let l = ctx
        .store
        .labels
        .get(&id)
        .ok_or(ApiError::NotFound("Label"))?;
    Ok(Reply::created(label(ctx.store, l)))
}

fn delete_label(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = ctx.project_id()?;
    ctx.require_level(pid, access::DEVELOPER)?;
    let name = ctx.params.required_nonblank("name")?;
    let id = ctx
        .store
        .labels
        .values()
        .find(|l| l.project_id == pid && l.name == name)
        .map(|l| l.id)
        .ok_or(ApiError::NotFound("Label"))?;
    ctx.store.labels.remove(&id);
    Ok(Reply::no_content())
}

fn list_milestones(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = ctx.project_id()?;
    let state = ctx.params.str("state");
    let iids = ctx.params.u64_list("iids")?;
    let mut found: Vec<_> = ctx
        .store
        .milestones
        .values()
        .filter(|m| m.project_id == pid)
        .filter(|m| state.as_ref().map_or(true, |s| &m.state == s))
        .filter(|m| iids.as_ref().map_or(true, |l| l.contains(&m.iid)))
        .collect();
    found.sort_by_key(|m| std::cmp::Reverse(m.id));
    let items: Vec<Value> = found.into_iter().map(|m| milestone(ctx.store, m)).collect();
    ctx.paginate(items)
}

fn create_milestone(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = ctx.project_id()?;
    ctx.require_level(pid, access::REPORTER)?;
    let title = ctx.params.required_nonblank("title")?;
    if ctx
        .store
        .milestones
        .values()
        .any(|m| m.project_id == pid && m.title == title)
    {
        return Err(ApiError::validation("title", "has already been taken"));
    }
    let description = ctx.params.str("description");
    let due_date = ctx.params.str("due_date");
    let start_date = ctx.params.str("start_date");
    let id = ctx.store.insert_milestone(pid, &title);
    if let Some(m) = ctx.store.milestones.get_mut(&id) {
        m.description = description;
        m.due_date = due_date;
        m.start_date = start_date;
    }
    let m = ctx
        .store
        .milestones
        .get(&id)
        .ok_or(ApiError::NotFound("Milestone"))?;
    Ok(Reply::created(milestone(ctx.store, m)))
}

fn show_milestone(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = ctx.project_id()?;
    let id = ctx.path_u64("milestone_id", "Milestone")?;
    let m = ctx
        .store
        .milestones
        .get(&id)
        .filter(|m| m.project_id == pid)
        .ok_or(ApiError::NotFound("Milestone"))?;
    Ok(Reply::ok(milestone(ctx.store, m)))
}
