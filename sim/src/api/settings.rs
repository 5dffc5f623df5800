//! Administration: application settings (`GET`/`PUT /application/settings`) and broadcast messages (read by
//! anyone, written by administrators).

use http::{Method, StatusCode};
use serde_json::{json, Value};

use crate::context::Ctx;
use crate::entities::admin::{broadcast_message, settings as render_settings};
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::store::settings::{defaults, SettingKind};
use crate::store::{BroadcastMessage, Visibility};
use crate::time::Millis;

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    let one = "/broadcast_messages/{message_id}";
    vec![
        api(Method::GET, "/application/settings", show_settings),
        api(Method::PUT, "/application/settings", update_settings),
        api(Method::GET, "/broadcast_messages", list_messages),
        api(Method::POST, "/broadcast_messages", create_message),
        api(Method::GET, one, show_message),
        api(Method::PUT, one, update_message),
        api(Method::DELETE, one, delete_message),
    ]
}

fn show_settings(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.require_admin()?;
    Ok(Reply::ok(render_settings(&ctx.store.settings)))
}

fn invalid_value(name: &str) -> ApiError {
    ApiError::Param(format!("{name} does not have a valid value"))
}

/// Reads one setting from the parameters according to its kind.
fn read_setting(ctx: &Ctx<'_>, name: &str, kind: SettingKind) -> Result<Value, ApiError> {
    let p = &ctx.params;
    let visibility = |s: &str| Visibility::parse(s).map(|v| json!(v.as_str()));
    Ok(match kind {
        SettingKind::Bool => json!(p.bool(name)?.ok_or_else(|| invalid_value(name))?),
        SettingKind::Int => json!(p.u64(name)?.ok_or_else(|| invalid_value(name))?),
        SettingKind::Str => json!(p.str(name)),
        SettingKind::StrList => json!(p.list(name).unwrap_or_default()),
        SettingKind::Visibility => match p.str(name) {
            Some(s) => visibility(&s).ok_or_else(|| invalid_value(name))?,
            None => return Err(invalid_value(name)),
        },
        SettingKind::VisibilityList => {
            let items = p.list(name).unwrap_or_default();
            let parsed: Option<Vec<Value>> = items.iter().map(|s| visibility(s)).collect();
            Value::Array(parsed.ok_or_else(|| invalid_value(name))?)
        }
        SettingKind::BranchProtection => match p.u64(name) {
            Ok(Some(n)) if n <= 2 => json!(n),
            _ => return Err(invalid_value(name)),
        },
    })
}

fn update_settings(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.require_admin()?;
    for (flag, needs) in [
        ("plantuml_enabled", "plantuml_url"),
        ("koding_enabled", "koding_url"),
        ("domain_blacklist_enabled", "domain_blacklist"),
    ] {
        // V4 `lib/api/settings.rb`: `given <flag>: ->(val) { val } do requires <needs> end` is Grape parameter
        // validation, so the answer is `{"error": "<needs> is missing"}`.
        if ctx.params.bool(flag)? == Some(true) && !ctx.params.has(needs) {
            return Err(ApiError::Missing(needs.to_string()));
        }
    }
    let mut changes = Vec::new();
    for (name, kind, _) in defaults() {
        if ctx.params.has(name) {
            changes.push((name.to_string(), read_setting(ctx, name, kind)?));
        }
    }
    let now = ctx.store.now();
    let s = &mut ctx.store.settings;
    s.values.extend(changes);
    s.updated_at = now;
    Ok(Reply::ok(render_settings(&ctx.store.settings)))
}

fn list_messages(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let now = crate::time::now_millis();
    let items: Vec<Value> = ctx
        .store
        .broadcast_messages
        .values()
        .map(|m| broadcast_message(m, now))
        .collect();
    ctx.paginate(items)
}

fn time_param(ctx: &Ctx<'_>, name: &str) -> Result<Option<Millis>, ApiError> {
    match ctx.params.str(name) {
        None => Ok(None),
        Some(s) => crate::time::parse(&s)
            .map(Some)
            .ok_or_else(|| ApiError::Invalid(name.to_string())),
    }
}

fn message_reply(ctx: &Ctx<'_>, id: u64, status: StatusCode) -> Result<Reply, ApiError> {
    let m = ctx
        .store
        .broadcast_messages
        .get(&id)
        .ok_or(ApiError::NotFoundPlain)?;
    Ok(Reply::json(
        status,
        broadcast_message(m, crate::time::now_millis()),
    ))
}

fn create_message(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.require_admin()?;
    let message = ctx.params.required_nonblank("message")?;
    let now = crate::time::now_millis();
    let starts_at = time_param(ctx, "starts_at")?.unwrap_or(now);
    let ends_at = time_param(ctx, "ends_at")?.unwrap_or(now + 3_600_000);
    if ends_at < starts_at {
        return Err(ApiError::validation("ends_at", "can't be before starts_at"));
    }
    let id = ctx.store.next_id("broadcast_message");
    let color = ctx.params.str("color");
    let font = ctx.params.str("font");
    ctx.store.broadcast_messages.insert(
        id,
        BroadcastMessage {
            id,
            message,
            starts_at,
            ends_at,
            color,
            font,
        },
    );
    message_reply(ctx, id, StatusCode::CREATED)
}

fn find_message(ctx: &Ctx<'_>) -> Result<u64, ApiError> {
    let id = ctx
        .path_param("message_id")
        .parse::<u64>()
        .map_err(|_| ApiError::NotFoundPlain)?;
    ctx.store
        .broadcast_messages
        .contains_key(&id)
        .then_some(id)
        .ok_or(ApiError::NotFoundPlain)
}

fn show_message(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = find_message(ctx)?;
    message_reply(ctx, id, StatusCode::OK)
}

fn update_message(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.require_admin()?;
    let id = find_message(ctx)?;
    let message = ctx.params.str("message");
    if matches!(&message, Some(m) if m.trim().is_empty()) {
        return Err(ApiError::validation("message", "can't be blank"));
    }
    let starts_at = time_param(ctx, "starts_at")?;
    let ends_at = time_param(ctx, "ends_at")?;
    let color = ctx.params.str("color");
    let font = ctx.params.str("font");
    let Some(m) = ctx.store.broadcast_messages.get_mut(&id) else {
        return Err(ApiError::NotFoundPlain);
    };
    let new_start = starts_at.unwrap_or(m.starts_at);
    let new_end = ends_at.unwrap_or(m.ends_at);
    if new_end < new_start {
        return Err(ApiError::validation("ends_at", "can't be before starts_at"));
    }
    if let Some(v) = message {
        m.message = v;
    }
    m.starts_at = new_start;
    m.ends_at = new_end;
    if color.is_some() {
        m.color = color;
    }
    if font.is_some() {
        m.font = font;
    }
    message_reply(ctx, id, StatusCode::OK)
}

fn delete_message(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.require_admin()?;
    let id = find_message(ctx)?;
    ctx.store.broadcast_messages.remove(&id);
    Ok(Reply::no_content())
}
