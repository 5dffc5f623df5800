//! Instance-wide reads: the caller's events (`GET /events`), rendering markdown (`POST /markdown`), the
//! administrators' counts (`GET /application/statistics`) and users' last activity (`GET /user/activities`).

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
