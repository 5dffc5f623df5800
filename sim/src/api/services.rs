//! Project services, also under their newer name `integrations`: list the active ones, show, configure (which
//! switches the service on) and reset, for Maintainers; and the slash-command triggers of the Mattermost and Slack
//! command services.

use http::{Method, StatusCode};
use serde_json::{json, Value};

use crate::context::Ctx;
use crate::entities::service::service as render;
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::store::access;
use crate::store::services::{title_of, SERVICE_EVENTS};

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    let mut routes = Vec::new();
    for base in ["/projects/{id}/services", "/projects/{id}/integrations"] {
        let one = format!("{base}/{{slug}}");
        routes.push(api(Method::GET, base, list));
        routes.push(api(Method::GET, &one, show));
        routes.push(api(Method::PUT, &one, update));
        routes.push(api(Method::DELETE, &one, reset));
    }
    routes.extend([
        api(
            Method::POST,
            "/projects/{id}/integrations/mattermost_slash_commands/trigger",
            trigger_mattermost,
        ),
        api(
            Method::POST,
            "/projects/{id}/integrations/slack_slash_commands/trigger",
            trigger_slack,
        ),
        api(
            Method::POST,
            "/projects/{id}/services/mattermost_slash_commands/trigger",
            trigger_mattermost,
        ),
        api(
            Method::POST,
            "/projects/{id}/services/slack_slash_commands/trigger",
            trigger_slack,
        ),
    ]);
    routes
}

/// Properties each service requires on update.
const REQUIRED: &[(&str, &[&str])] = &[
    ("asana", &["api_key"]),
    ("assembla", &["token"]),
    ("bamboo", &["bamboo_url", "build_key", "username", "password"]),
    ("bugzilla", &["new_issue_url", "issues_url", "project_url"]),
    ("buildkite", &["token", "project_url"]),
    ("campfire", &["token"]),
    (
        "custom-issue-tracker",
        &["new_issue_url", "issues_url", "project_url"],
    ),
    ("drone-ci", &["token", "drone_url"]),
    ("emails-on-push", &["recipients"]),
    ("external-wiki", &["external_wiki_url"]),
    ("irker", &["recipients"]),
    ("jira", &["url", "username", "password"]),
    ("mattermost-slash-commands", &["token"]),
    ("slack-slash-commands", &["token"]),
    ("packagist", &["username", "token"]),
    ("pipelines-email", &["recipients"]),
    ("pivotaltracker", &["token"]),
    ("pushover", &["api_key", "user_key", "priority"]),
    ("redmine", &["new_issue_url", "project_url", "issues_url"]),
    ("slack", &["webhook"]),
    ("microsoft-teams", &["webhook"]),
    ("mattermost", &["webhook"]),
    (
        "teamcity",
        &["teamcity_url", "build_type", "username", "password"],
    ),
];

/// Parameters that are never service properties.
const NOT_PROPERTIES: &[&str] = &["private_token", "access_token", "sudo", "active", "id"];

fn target(ctx: &Ctx<'_>) -> Result<(u64, String, &'static str), ApiError> {
    let slug = ctx.path_param("slug").to_string();
    let title = title_of(&slug).ok_or(ApiError::NotFound("Service"))?;
    let pid = ctx.project_id()?;
    ctx.require_level(pid, access::MAINTAINER)?;
    Ok((pid, slug, title))
}

fn reply(ctx: &Ctx<'_>, pid: u64, slug: &str, title: &str) -> Reply {
    Reply::ok(render(slug, title, ctx.store.service(pid, slug), ctx.is_admin()))
}

/// The project's active services.
fn list(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = ctx.project_id()?;
    ctx.require_level(pid, access::MAINTAINER)?;
    let mut found: Vec<_> = ctx
        .store
        .services
        .values()
        .filter(|s| s.project_id == pid && s.active)
        .collect();
    found.sort_by_key(|s| s.id);
    let items: Vec<Value> = found
        .into_iter()
        .filter_map(|s| title_of(&s.slug).map(|t| render(&s.slug, t, Some(s), ctx.is_admin())))
        .collect();
    ctx.paginate(items)
}

fn show(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (pid, slug, title) = target(ctx)?;
    Ok(reply(ctx, pid, &slug, title))
}

fn update(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (pid, slug, title) = target(ctx)?;
    let required = REQUIRED
        .iter()
        .find(|(s, _)| *s == slug)
        .map(|(_, r)| *r)
        .unwrap_or_default();
    for name in required {
        ctx.params.required_str(name)?;
    }
    let mut events = serde_json::Map::new();
    for name in SERVICE_EVENTS {
        if let Some(v) = ctx.params.bool(name)? {
            events.insert((*name).to_string(), Value::Bool(v));
        }
    }
    let properties: Vec<(String, Value)> = ctx
        .params
        .names()
        .into_iter()
        .filter(|n| !SERVICE_EVENTS.contains(&n.as_str()) && !NOT_PROPERTIES.contains(&n.as_str()))
        .filter_map(|n| ctx.params.get(&n).cloned().map(|v| (n, v)))
        .collect();
    let id = ctx.store.ensure_service(pid, &slug);
    let now = ctx.store.now();
    if let Some(s) = ctx.store.services.get_mut(&id) {
        s.active = true;
        s.events.extend(events);
        s.properties.extend(properties);
        s.updated_at = now;
    }
    Ok(reply(ctx, pid, &slug, title))
}

fn reset(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (pid, slug, _) = target(ctx)?;
    let now = ctx.store.now();
    if let Some(s) = ctx
        .store
        .services
        .values_mut()
        .find(|s| s.project_id == pid && s.slug == slug)
    {
        s.active = false;
        s.events.clear();
        s.properties.clear();
        s.updated_at = now;
    }
    Ok(Reply::no_content())
}

fn trigger(ctx: &mut Ctx<'_>, slug: &str) -> Result<Reply, ApiError> {
    let raw = ctx.path_param("id");
    let pid = match raw.parse::<u64>() {
        Ok(id) => ctx.store.projects.contains_key(&id).then_some(id),
        Err(_) => ctx.store.project_by_full_path(raw),
    }
    .ok_or(ApiError::NotFound("Project"))?;
    let token = ctx.params.required_str("token")?;
    let service = ctx.store.service(pid, slug).filter(|s| s.active);
    let expected = service
        .and_then(|s| s.properties.get("token"))
        .and_then(Value::as_str);
    if expected != Some(token.as_str()) {
        return Err(ApiError::Unauthorized);
    }
    let text = ctx.params.str("text").unwrap_or_default();
    let command = ctx.params.str("command").unwrap_or_else(|| "/svc".into());
    let message = if text.trim().is_empty() || text.trim() == "help" {
        format!(
            "Available commands:\n{command} issue new <title>\n{command} issue show <id>\n{command} issue search <query>\n{command} deploy <environment> to <environment>"
        )
    } else {
        format!("The command `{}` is not available.", text.trim())
    };
    Ok(Reply::json(
        StatusCode::OK,
        json!({"response_type": "ephemeral", "text": message}),
    ))
}

fn trigger_mattermost(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    trigger(ctx, "mattermost-slash-commands")
}

fn trigger_slack(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    trigger(ctx, "slack-slash-commands")
}
