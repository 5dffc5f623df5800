//! Project labels (list with optional counts, create, update and delete by name) and milestones (list by state
//! or iid, create, show, update, and their issues and merge requests).

use http::Method;
use serde_json::Value;

use crate::context::Ctx;
use crate::entities::issue::{issue as render_issue, label, milestone};
use crate::entities::merge_request::merge_request as render_mr;
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::store::access;

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    vec![
        api(Method::GET, "/projects/{id}/labels", list_labels),
        api(Method::POST, "/projects/{id}/labels", create_label),
        api(Method::PUT, "/projects/{id}/labels", update_label),
        api(Method::DELETE, "/projects/{id}/labels", delete_label),
        api(Method::GET, "/projects/{id}/labels/{label_id}", show_label),
        api(Method::PUT, "/projects/{id}/labels/{label_id}", update_label),
        api(Method::DELETE, "/projects/{id}/labels/{label_id}", delete_label),
        api(Method::GET, "/projects/{id}/milestones", list_milestones),
        api(Method::POST, "/projects/{id}/milestones", create_milestone),
        api(
            Method::GET,
            "/projects/{id}/milestones/{milestone_id}",
            show_milestone,
        ),
        api(
            Method::PUT,
            "/projects/{id}/milestones/{milestone_id}",
            update_milestone,
        ),
        api(
            Method::GET,
            "/projects/{id}/milestones/{milestone_id}/issues",
            milestone_issues,
        ),
        api(
            Method::GET,
            "/projects/{id}/milestones/{milestone_id}/merge_requests",
            milestone_merge_requests,
        ),
    ]
}

fn list_labels(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.user_id()?; // V4 runs `before { authenticate! }` for the whole module.
    let pid = ctx.project_id()?;
    let with_counts = ctx.params.flag("with_counts", false)?;
    let mut labels: Vec<_> = ctx
        .store
        .labels
        .values()
        .filter(|l| l.project_id == pid)
        .collect();
    labels.sort_by_key(|l| l.name.to_lowercase());
    let items: Vec<Value> = labels
        .into_iter()
        .map(|l| label(ctx.store, l, ctx.caller, with_counts))
        .collect();
    ctx.paginate(items)
}

/// The label a request names: `:label_id` in the path (an id or a name), else the `name` parameter; returns its
/// id and name.
fn find_label(ctx: &Ctx<'_>, pid: u64) -> Result<(u64, String), ApiError> {
    let by_path = ctx.path.iter().any(|(n, _)| n == "label_id");
    let wanted = if by_path {
        ctx.path_param("label_id").to_string()
    } else {
        ctx.params.required_nonblank("name")?
    };
    ctx.store
        .labels
        .values()
        .filter(|l| l.project_id == pid)
        .find(|l| l.name == wanted || (by_path && l.id.to_string() == wanted))
        .map(|l| (l.id, l.name.clone()))
        .ok_or(ApiError::NotFound("Label"))
}

fn show_label(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.user_id()?; // V4 runs `before { authenticate! }` for the whole module.
    let pid = ctx.project_id()?;
    let (id, _) = find_label(ctx, pid)?;
    let l = ctx.store.labels.get(&id).ok_or(ApiError::NotFound("Label"))?;
    Ok(Reply::ok(label(ctx.store, l, ctx.caller, false)))
}

/// Whether a colour is `#rrggbb`.
fn valid_color(color: &str) -> bool {
    color.len() == 7 && color.starts_with('#') && color.chars().skip(1).all(|c| c.is_ascii_hexdigit())
}

fn create_label(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = ctx.project_id()?;
    ctx.require_level(pid, access::DEVELOPER)?;
    let name = ctx.params.required_nonblank("name")?;
    let color = ctx.params.required_nonblank("color")?;
    if !valid_color(&color) {
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
    let l = ctx.store.labels.get(&id).ok_or(ApiError::NotFound("Label"))?;
    Ok(Reply::created(label(ctx.store, l, ctx.caller, false)))
}

fn delete_label(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = ctx.project_id()?;
    ctx.require_level(pid, access::DEVELOPER)?;
    let (id, _) = find_label(ctx, pid)?;
    ctx.store.labels.remove(&id);
    let boards: Vec<u64> = ctx
        .store
        .board_lists
        .values()
        .filter(|l| l.label_id == id)
        .map(|l| l.board_id)
        .collect();
    ctx.store.board_lists.retain(|_, l| l.label_id != id);
    for board in boards {
        ctx.store.renumber_board_lists(board);
    }
    Ok(Reply::no_content())
}

fn list_milestones(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.user_id()?; // V4 runs `before { authenticate! }` for the whole module.
    let pid = ctx.project_id()?;
    let state = match ctx.params.str("state").as_deref() {
        None | Some("all") => None,
        Some(s @ ("active" | "closed")) => Some(s.to_string()),
        Some(_) => return Err(ApiError::Param("state does not have a valid value".into())),
    };
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
    ctx.user_id()?; // V4 runs `before { authenticate! }` for the whole module.
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

fn update_label(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = ctx.project_id()?;
    ctx.require_level(pid, access::DEVELOPER)?;
    let (id, name) = find_label(ctx, pid)?;
    let new_name = ctx.params.str("new_name");
    let color = ctx.params.str("color");
    let description = ctx
        .params
        .has("description")
        .then(|| ctx.params.str("description"));
    let priority = if ctx.params.has("priority") {
        Some(ctx.params.u64("priority")?)
    } else {
        None
    };
    if new_name.is_none() && color.is_none() && description.is_none() && priority.is_none() {
        return Err(ApiError::Param(
            "new_name, color, description, priority are missing, at least one parameter must be provided"
                .into(),
        ));
    }
    if let Some(c) = &color {
        if !valid_color(c) {
            return Err(ApiError::validation("color", "must be a valid color code"));
        }
    }
    if let Some(n) = &new_name {
        if n.trim().is_empty() {
            return Err(ApiError::validation("title", "can't be blank"));
        }
        if ctx
            .store
            .labels
            .values()
            .any(|l| l.project_id == pid && l.id != id && l.name == *n)
        {
            return Err(ApiError::validation("title", "has already been taken"));
        }
    }
    if let Some(l) = ctx.store.labels.get_mut(&id) {
        if let Some(c) = color {
            l.color = c;
        }
        if let Some(d) = description {
            l.description = d;
        }
        if let Some(p) = priority {
            l.priority = p;
        }
        if let Some(n) = &new_name {
            l.name = n.clone();
        }
    }
    if let Some(n) = new_name {
        let rename = |labels: &mut Vec<String>| {
            for l in labels.iter_mut().filter(|l| **l == name) {
                l.clone_from(&n);
            }
        };
        for i in ctx.store.issues.values_mut().filter(|i| i.project_id == pid) {
            rename(&mut i.labels);
        }
        for m in ctx
            .store
            .merge_requests
            .values_mut()
            .filter(|m| m.project_id == pid)
        {
            rename(&mut m.labels);
        }
    }
    let l = ctx.store.labels.get(&id).ok_or(ApiError::NotFound("Label"))?;
    Ok(Reply::ok(label(ctx.store, l, ctx.caller, false)))
}

fn find_milestone(ctx: &Ctx<'_>) -> Result<(u64, u64), ApiError> {
    let pid = ctx.project_id()?;
    let id = ctx.path_u64("milestone_id", "Milestone")?;
    ctx.store
        .milestones
        .get(&id)
        .filter(|m| m.project_id == pid)
        .map(|m| (pid, m.id))
        .ok_or(ApiError::NotFound("Milestone"))
}

fn update_milestone(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (pid, id) = find_milestone(ctx)?;
    ctx.require_level(pid, access::REPORTER)?;
    let title = ctx.params.str("title");
    let description = ctx
        .params
        .has("description")
        .then(|| ctx.params.str("description"));
    let mut dates = Vec::new();
    for field in ["due_date", "start_date"] {
        if ctx.params.has(field) {
            let value = ctx.params.str(field);
            if value.as_deref().is_some_and(|d| crate::time::parse(d).is_none()) {
                return Err(ApiError::Invalid(field.to_string()));
            }
            dates.push((field, value));
        }
    }
    let state = match ctx.params.str("state_event").as_deref() {
        None => None,
        Some("close") => Some("closed"),
        Some("activate") => Some("active"),
        Some(_) => return Err(ApiError::Param("state_event does not have a valid value".into())),
    };
    if let Some(t) = &title {
        if t.trim().is_empty() {
            return Err(ApiError::validation("title", "can't be blank"));
        }
        if ctx
            .store
            .milestones
            .values()
            .any(|m| m.project_id == pid && m.id != id && m.title == *t)
        {
            return Err(ApiError::validation("title", "has already been taken"));
        }
    }
    let now = ctx.store.now();
    if let Some(m) = ctx.store.milestones.get_mut(&id) {
        if let Some(t) = title {
            m.title = t;
        }
        if let Some(d) = description {
            m.description = d;
        }
        for (field, value) in dates {
            if field == "due_date" {
                m.due_date = value;
            } else {
                m.start_date = value;
            }
        }
        if let Some(s) = state {
            m.state = s.to_string();
        }
        m.updated_at = now;
    }
    let m = ctx
        .store
        .milestones
        .get(&id)
        .ok_or(ApiError::NotFound("Milestone"))?;
    Ok(Reply::ok(milestone(ctx.store, m)))
}

fn milestone_issues(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.user_id()?; // V4 runs `before { authenticate! }` for the whole module.
    let (pid, id) = find_milestone(ctx)?;
    if !ctx.project(pid)?.flag("issues_enabled") {
        return Err(ApiError::Forbidden);
    }
    let items: Vec<Value> = ctx
        .store
        .issues
        .values()
        .filter(|i| i.milestone_id == Some(id) && super::issues::can_see(ctx, i))
        .map(|i| render_issue(ctx.store, i, None))
        .collect();
    ctx.paginate(items)
}

fn milestone_merge_requests(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.user_id()?; // V4 runs `before { authenticate! }` for the whole module.
    let (pid, id) = find_milestone(ctx)?;
    if !ctx.project(pid)?.flag("merge_requests_enabled") {
        return Err(ApiError::Forbidden);
    }
    let items: Vec<Value> = ctx
        .store
        .merge_requests
        .values()
        .filter(|m| m.milestone_id == Some(id))
        .map(|m| render_mr(ctx.store, m, None))
        .collect();
    ctx.paginate(items)
}
