//! Members of projects and groups: list, get, add (409 when present), edit, remove (204). Only Maintainer+
//! (Owner for groups) manage members.

use http::Method;
use serde_json::Value;

use crate::context::Ctx;
use crate::entities::member;
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::store::{access, Member, MemberSource};

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    let mut routes = Vec::new();
    for base in ["/projects/{id}/members", "/groups/{id}/members"] {
        routes.push(api(Method::GET, base, list));
        routes.push(api(Method::POST, base, add));
        routes.push(api(Method::GET, &format!("{base}/all"), list_all));
        routes.push(api(Method::GET, &format!("{base}/{{user_id}}"), show));
        routes.push(api(Method::PUT, &format!("{base}/{{user_id}}"), edit));
        routes.push(api(Method::DELETE, &format!("{base}/{{user_id}}"), remove));
    }
    routes
}

/// Whose members a request is about.
#[derive(Debug, Clone, Copy)]
enum Source {
    Project(u64),
    Group(u64),
}

fn source(ctx: &Ctx<'_>) -> Result<Source, ApiError> {
    let is_project = ctx.link.path.starts_with("/api/v4/projects/");
    if is_project {
        ctx.project_id().map(Source::Project)
    } else {
        ctx.group_id().map(Source::Group)
    }
}

fn members<'a>(ctx: &'a Ctx<'_>, src: Source) -> &'a [Member] {
    match src {
        Source::Project(id) => ctx.store.projects.get(&id).map(|p| p.members.as_slice()),
        Source::Group(id) => ctx.store.namespaces.get(&id).map(|ns| ns.members.as_slice()),
    }
    .unwrap_or(&[])
}

fn members_mut<'a>(ctx: &'a mut Ctx<'_>, src: Source) -> Option<&'a mut Vec<Member>> {
    match src {
        Source::Project(id) => ctx.store.projects.get_mut(&id).map(|p| &mut p.members),
        Source::Group(id) => ctx.store.namespaces.get_mut(&id).map(|ns| &mut ns.members),
    }
}

fn require_manager(ctx: &Ctx<'_>, src: Source) -> Result<(), ApiError> {
    ctx.user_id()?;
    let ok = match src {
        Source::Project(id) => ctx.level(id) >= access::MAINTAINER,
        Source::Group(id) => ctx.group_level(id) >= access::OWNER,
    };
    if ok {
        Ok(())
    } else {
        Err(ApiError::Forbidden)
    }
}

fn filtered(ctx: &Ctx<'_>, list: Vec<Member>) -> Vec<Value> {
    let query = ctx.params.str("query").map(|q| q.to_lowercase());
    let user_ids = ctx.params.u64_list("user_ids").ok().flatten();
    list.iter()
        .filter(|m| user_ids.as_ref().map_or(true, |ids| ids.contains(&m.user_id)))
        .filter(|m| {
            query.as_deref().map_or(true, |q| {
                ctx.store.users.get(&m.user_id).is_some_and(|u| {
                    u.username.to_lowercase().contains(q) || u.name.to_lowercase().contains(q)
                })
            })
        })
        .map(|m| member::member(ctx.store, m))
        .collect()
}

fn list(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let src = source(ctx)?;
    let items = filtered(ctx, members(ctx, src).to_vec());
    ctx.paginate(items)
}

fn list_all(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let src = source(ctx)?;
    let mut all: Vec<Member> = members(ctx, src).to_vec();
    let ns = match src {
        Source::Project(id) => ctx.project(id)?.namespace_id,
        Source::Group(id) => id,
    };
    for group in ctx.store.namespace_chain(ns) {
        for m in &group.members {
            match all.iter_mut().find(|a| a.user_id == m.user_id) {
                Some(existing) if existing.access_level < m.access_level => *existing = m.clone(),
                Some(_) => {}
                None => all.push(m.clone()),
            }
        }
    }
    let items = filtered(ctx, all);
    ctx.paginate(items)
}

fn find(ctx: &Ctx<'_>, src: Source) -> Result<Member, ApiError> {
    let uid = ctx.path_u64("user_id", "Member")?;
    members(ctx, src)
        .iter()
        .find(|m| m.user_id == uid)
        .cloned()
        .ok_or(ApiError::NotFound("Member"))
}

fn show(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let src = source(ctx)?;
    let m = find(ctx, src)?;
    Ok(Reply::ok(member::member(ctx.store, &m)))
}

fn level_param(ctx: &Ctx<'_>, src: Source) -> Result<u8, ApiError> {
    let level = ctx.params.required_u64("access_level")?;
    let allow_owner = matches!(src, Source::Group(_));
    if !access::is_valid(level, allow_owner) {
        return Err(ApiError::validation(
            "access_level",
            "is not included in the list",
        ));
    }
    u8::try_from(level).map_err(|_| ApiError::Invalid("access_level".into()))
}

fn expires_param(ctx: &Ctx<'_>) -> Result<Option<String>, ApiError> {
    match ctx.params.str("expires_at") {
        None => Ok(None),
        Some(s) if s.is_empty() => Ok(None),
        Some(s) => crate::time::parse(&s)
            .map(|ms| Some(crate::time::format_date(ms)))
            .ok_or_else(|| ApiError::Invalid("expires_at".into())),
    }
}

fn add(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let src = source(ctx)?;
    require_manager(ctx, src)?;
    let uid = ctx.params.required_u64("user_id")?;
    let level = level_param(ctx, src)?;
    let expires_at = expires_param(ctx)?;
    if !ctx.store.users.contains_key(&uid) {
        return Err(ApiError::NotFound("User"));
    }
    if members(ctx, src).iter().any(|m| m.user_id == uid) {
        return Err(ApiError::Conflict("Member already exists".into()));
    }
    let m = Member {
        user_id: uid,
        access_level: level,
        expires_at,
    };
    if let Some(list) = members_mut(ctx, src) {
        list.push(m.clone());
    }
    // V4 `Member.add_user`: a user with a pending access request is not among `source.members` (no 409); their
    // request is approved (`Members::ApproveAccessRequestService`) at the level given, so it is no longer listed.
    let pending = match src {
        Source::Project(id) => MemberSource::Project(id),
        Source::Group(id) => MemberSource::Group(id),
    };
    ctx.store.access_requests.remove(&(pending, uid));
    // `ProjectMember#post_create_hook`: the new member's "joined" event.
    if let Source::Project(pid) = src {
        ctx.store.record_project_event(pid, uid, "joined");
    }
    Ok(Reply::created(member::member(ctx.store, &m)))
}

fn edit(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let src = source(ctx)?;
    require_manager(ctx, src)?;
    let mut m = find(ctx, src)?;
    m.access_level = level_param(ctx, src)?;
    if ctx.params.has("expires_at") {
        m.expires_at = expires_param(ctx)?;
    }
    if let Some(slot) =
        members_mut(ctx, src).and_then(|list| list.iter_mut().find(|x| x.user_id == m.user_id))
    {
        *slot = m.clone();
    }
    Ok(Reply::ok(member::member(ctx.store, &m)))
}

fn remove(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let src = source(ctx)?;
    let target = ctx.path_u64("user_id", "Member")?;
    if ctx.caller != Some(target) {
        require_manager(ctx, src)?;
    }
    find(ctx, src)?;
    if let Some(list) = members_mut(ctx, src) {
        list.retain(|m| m.user_id != target);
    }
    // `ProjectMember#post_destroy_hook`: the removed member's "left" event.
    if let Source::Project(pid) = src {
        ctx.store.record_project_event(pid, target, "left");
    }
    Ok(Reply::no_content())
}
