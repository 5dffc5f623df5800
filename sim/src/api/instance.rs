//! Instance-wide reads: the caller's events (`GET /events`), rendering markdown (`POST /markdown`), the
//! administrators' counts (`GET /application/statistics`), users' last activity (`GET /user/activities`) and
//! users' statuses (`GET/PUT /user/status`, `GET /users/:id/status`).

use http::{Method, StatusCode};
use serde_json::{json, Value};

use crate::context::Ctx;
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    vec![
        api(Method::GET, "/events", events),
        api(Method::POST, "/markdown", markdown),
        api(Method::GET, "/application/statistics", statistics),
        api(Method::GET, "/user/activities", activities),
        api(Method::GET, "/user/status", own_status),
        api(Method::PUT, "/user/status", set_status),
        api(Method::GET, "/users/{id}/status", user_status),
    ]
}

fn events(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let items = super::project_extras::events(ctx, |e| e.author_id == uid)?;
    ctx.paginate(items)
}

/// Escapes text for HTML.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Renders paragraphs (blank-line separated) as `<p>` elements; no other markdown is interpreted.
fn markdown(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.user_id()?;
    let text = ctx.params.required_str("text")?;
    if let Some(path) = ctx.params.str("project") {
        let visible = ctx
            .store
            .project_by_full_path(&path)
            .and_then(|id| ctx.store.projects.get(&id))
            .is_some_and(|p| ctx.store.can_read_project(p, ctx.caller));
        if !visible {
            return Err(ApiError::NotFound("Project"));
        }
    }
    let html: Vec<String> = text
        .split("\n\n")
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| format!("<p dir=\"auto\">{}</p>", escape(p).replace('\n', "<br>\n")))
        .collect();
    Ok(Reply::json(StatusCode::CREATED, json!({"html": html.join("\n")})))
}

fn statistics(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.require_admin()?;
    let s = &*ctx.store;
    let groups = s
        .namespaces
        .values()
        .filter(|n| n.kind == crate::store::NamespaceKind::Group)
        .count();
    let count = |n: usize| Value::String(n.to_string());
    Ok(Reply::ok(json!({
        "forks": count(s.projects.values().filter(|p| p.forked_from.is_some()).count()),
        "issues": count(s.issues.len()),
        "merge_requests": count(s.merge_requests.len()),
        "notes": count(s.notes.len()),
        "snippets": count(s.snippets.len()),
        "ssh_keys": count(s.ssh_keys.len()),
        "milestones": count(s.milestones.len()),
        "users": count(s.users.len()),
        "groups": count(groups),
        "projects": count(s.projects.len()),
        "active_users": count(s.users.values().filter(|u| u.state == "active").count()),
    })))
}

/// Each user's last activity day: their newest event, else the day they were created.
fn activities(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.require_admin()?;
    let since = match ctx.params.str("from") {
        Some(s) => Some(crate::time::parse(&s).ok_or_else(|| ApiError::Invalid("from".into()))?),
        None => None,
    };
    let items: Vec<Value> = ctx
        .store
        .users
        .values()
        .map(|u| {
            let last = ctx
                .store
                .events
                .values()
                .filter(|e| e.author_id == u.id)
                .map(|e| e.created_at)
                .max()
                .unwrap_or(u.created_at);
            (u, last)
        })
        .filter(|(_, last)| since.map_or(true, |t| *last >= t))
        .map(|(u, last)| {
            let at = crate::time::format_date(last);
            json!({
                "username": u.username,
                "last_activity_on": at.get(..10).unwrap_or_default(),
                "last_activity_at": at.get(..10).unwrap_or_default(),
            })
        })
        .collect();
    ctx.paginate(items)
}

fn render_status(ctx: &Ctx<'_>, uid: u64) -> Value {
    let (emoji, message) = ctx.store.user_statuses.get(&uid).cloned().unwrap_or_default();
    json!({
        "emoji": emoji,
        "message": message,
        "message_html": message.as_deref().map(escape),
        "availability": "not_set",
        "clear_status_at": Value::Null,
    })
}

fn own_status(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    Ok(Reply::ok(render_status(ctx, uid)))
}

/// Sets the caller's status; a parameter left out is cleared, as on the service.
fn set_status(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let emoji = ctx.params.str("emoji").filter(|e| !e.is_empty());
    let message = ctx.params.str("message").filter(|m| !m.is_empty());
    if emoji.is_none() && message.is_none() {
        ctx.store.user_statuses.remove(&uid);
    } else {
        ctx.store.user_statuses.insert(uid, (emoji, message));
    }
    Ok(Reply::ok(render_status(ctx, uid)))
}

fn user_status(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let raw = ctx.path_param("id").to_string();
    let uid = ctx
        .store
        .user_by_id_or_username(&raw)
        .map(|u| u.id)
        .ok_or(ApiError::NotFound("User"))?;
    Ok(Reply::ok(render_status(ctx, uid)))
}
