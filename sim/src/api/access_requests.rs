//! Access requests of projects and groups: a signed-in user who is not a member asks for access; Maintainers
//! (Owners for groups) list, approve (the requester becomes a Developer member, or the level asked) or deny
//! (204) them; requesters may withdraw their own.

use http::Method;
use serde_json::Value;

use crate::context::Ctx;
use crate::entities::{member, user};
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::store::{access, Member, MemberSource};

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    let mut routes = Vec::new();
    for base in ["/projects/{id}/access_requests", "/groups/{id}/access_requests"] {
        routes.push(api(Method::GET, base, list));
        routes.push(api(Method::POST, base, request));
        routes.push(api(Method::PUT, &format!("{base}/{{user_id}}/approve"), approve));
        routes.push(api(Method::DELETE, &format!("{base}/{{user_id}}"), deny));
    }
    routes
}

fn source(ctx: &Ctx<'_>) -> Result<MemberSource, ApiError> {
    if ctx.link.path.starts_with("/api/v4/projects/") {
        ctx.project_id().map(MemberSource::Project)
    } else {
        ctx.group_id().map(MemberSource::Group)
    }
}

fn members_mut<'a>(ctx: &'a mut Ctx<'_>, src: MemberSource) -> Option<&'a mut Vec<Member>> {
    match src {
        MemberSource::Project(id) => ctx.store.projects.get_mut(&id).map(|p| &mut p.members),
        MemberSource::Group(id) => ctx.store.namespaces.get_mut(&id).map(|ns| &mut ns.members),
    }
}

fn is_member(ctx: &Ctx<'_>, src: MemberSource, user_id: u64) -> bool {
    let members = match src {
        MemberSource::Project(id) => ctx.store.projects.get(&id).map(|p| p.members.as_slice()),
        MemberSource::Group(id) => ctx.store.namespaces.get(&id).map(|ns| ns.members.as_slice()),
    };
    members.unwrap_or(&[]).iter().any(|m| m.user_id == user_id)
}

fn require_manager(ctx: &Ctx<'_>, src: MemberSource) -> Result<(), ApiError> {
    ctx.user_id()?;
    let allowed = match src {
        MemberSource::Project(id) => ctx.level(id) >= access::MAINTAINER,
        MemberSource::Group(id) => ctx.group_level(id) >= access::OWNER,
    };
    if allowed {
        Ok(())
    } else {
        Err(ApiError::Forbidden)
    }
}

/// The access request entity: the requester, with when they asked.
fn entity(ctx: &Ctx<'_>, user_id: u64, requested_at: crate::time::Millis) -> Value {
    let mut value = user::basic_by_id(ctx.store, Some(user_id));
    if let Value::Object(map) = &mut value {
        map.insert(
            "requested_at".into(),
            Value::from(crate::time::format(requested_at)),
        );
    }
    value
}

fn list(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let src = source(ctx)?;
    require_manager(ctx, src)?;
    let items: Vec<Value> = ctx
        .store
        .access_requests
        .iter()
        .filter(|((owner, _), _)| *owner == src)
        .map(|((_, user_id), at)| (*user_id, *at))
        .collect::<Vec<_>>()
        .into_iter()
        .map(|(user_id, at)| entity(ctx, user_id, at))
        .collect();
    ctx.paginate(items)
}

fn request(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let src = source(ctx)?;
    if is_member(ctx, src, uid) {
        return Err(ApiError::Status(
            http::StatusCode::BAD_REQUEST,
            "400 Bad request - You already have access".into(),
        ));
    }
    let now = ctx.store.now();
    let at = *ctx.store.access_requests.entry((src, uid)).or_insert(now);
    Ok(Reply::created(entity(ctx, uid, at)))
}

fn pending(ctx: &Ctx<'_>, src: MemberSource) -> Result<u64, ApiError> {
    let user_id = ctx.path_u64("user_id", "Access Request")?;
    if ctx.store.access_requests.contains_key(&(src, user_id)) {
        Ok(user_id)
    } else {
        Err(ApiError::NotFound("Access Request"))
    }
}

fn approve(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let src = source(ctx)?;
    require_manager(ctx, src)?;
    let user_id = pending(ctx, src)?;
    let level = ctx
        .params
        .u64("access_level")?
        .unwrap_or(u64::from(access::DEVELOPER));
    let allow_owner = matches!(src, MemberSource::Group(_));
    let level = u8::try_from(level)
        .ok()
        .filter(|level| access::is_valid(u64::from(*level), allow_owner))
        .ok_or_else(|| ApiError::validation("access_level", "is not included in the list"))?;
    ctx.store.access_requests.remove(&(src, user_id));
    let added = Member {
        user_id,
        access_level: level,
        expires_at: None,
    };
    if let Some(list) = members_mut(ctx, src) {
        list.push(added.clone());
    }
    // V4 `Member#accept_request` runs `post_create_hook`: a project member's "joined" event.
    if let MemberSource::Project(pid) = src {
        ctx.store.record_project_event(pid, user_id, "joined");
    }
    Ok(Reply::created(member::member(ctx.store, &added)))
}

fn deny(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let src = source(ctx)?;
    let user_id = pending(ctx, src)?;
    // A requester may withdraw their own request; anyone else must manage the members.
    if ctx.caller != Some(user_id) {
        require_manager(ctx, src)?;
    }
    ctx.store.access_requests.remove(&(src, user_id));
    Ok(Reply::no_content())
}
