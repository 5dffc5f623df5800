//! Notification settings of the caller: global (`/notification_settings`, with the notification e-mail) and per
//! project or group.

use http::Method;

use crate::context::Ctx;
use crate::entities::notification::notification_setting;
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::store::notifications::{EVENTS, LEVELS};
use crate::store::{NotificationSetting, NotificationSource};

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    let mut routes = Vec::new();
    for path in [
        "/notification_settings",
        "/projects/{id}/notification_settings",
        "/groups/{id}/notification_settings",
    ] {
        routes.push(api(Method::GET, path, show));
        routes.push(api(Method::PUT, path, update));
    }
    routes
}

/// The caller and what the route's setting applies to.
fn source(ctx: &Ctx<'_>) -> Result<(u64, NotificationSource), ApiError> {
    let uid = ctx.user_id()?;
    if !ctx.path.iter().any(|(n, _)| n == "id") {
        return Ok((uid, NotificationSource::Global));
    }
    if ctx.link.path.starts_with("/api/v4/groups/") {
        Ok((uid, NotificationSource::Group(ctx.group_id()?)))
    } else {
        Ok((uid, NotificationSource::Project(ctx.project_id()?)))
    }
}

fn reply(ctx: &Ctx<'_>, uid: u64, source: NotificationSource) -> Reply {
    let setting = ctx
        .store
        .notification_settings
        .get(&(uid, source))
        .cloned()
        .unwrap_or_else(|| NotificationSetting::default_for(source));
    let email = (source == NotificationSource::Global).then(|| {
        setting.notification_email.clone().unwrap_or_else(|| {
            ctx.store
                .users
                .get(&uid)
                .map(|u| u.email.clone())
                .unwrap_or_default()
        })
    });
    Reply::ok(notification_setting(&setting, email.as_deref()))
}

fn show(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (uid, source) = source(ctx)?;
    Ok(reply(ctx, uid, source))
}

fn update(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (uid, source) = source(ctx)?;
    let level = ctx.params.str("level");
    if let Some(l) = &level {
        if !LEVELS.contains(&l.as_str()) || (source == NotificationSource::Global && l == "global") {
            return Err(ApiError::validation("level", "is not included in the list"));
        }
    }
    let email = if source == NotificationSource::Global {
        ctx.params.str("notification_email")
    } else {
        None
    };
    if let Some(e) = &email {
        let own = ctx
            .store
            .users
            .get(&uid)
            .is_some_and(|u| u.email.eq_ignore_ascii_case(e))
            || ctx
                .store
                .emails
                .values()
                .any(|m| m.user_id == uid && m.email.eq_ignore_ascii_case(e));
        if !own {
            return Err(ApiError::validation(
                "notification_email",
                "is not an email you own",
            ));
        }
    }
    let mut events = Vec::new();
    for name in EVENTS {
        if let Some(v) = ctx.params.bool(name)? {
            events.push((name.to_string(), v));
        }
    }
    let setting = ctx
        .store
        .notification_settings
        .entry((uid, source))
        .or_insert_with(|| NotificationSetting::default_for(source));
    if let Some(l) = level {
        setting.level = l;
    }
    if email.is_some() {
        setting.notification_email = email;
    }
    setting.events.extend(events);
    Ok(reply(ctx, uid, source))
}
