//! Protected branches: rules on a branch name or a `*` pattern saying who may push and merge (list, protect,
//! show, change, unprotect). A branch protected through `PUT …/branches/:branch/protect` is listed too.

use http::Method;
use serde_json::{json, Value};

use crate::context::Ctx;
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::store::access;
use crate::store::repo::{ProtectedRule, Repository};

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    let base = "/projects/{id}/protected_branches";
    let one = "/projects/{id}/protected_branches/{name}";
    vec![
        api(Method::GET, base, list),
        api(Method::POST, base, protect),
        api(Method::GET, one, show),
        api(Method::PATCH, one, update),
        api(Method::DELETE, one, unprotect),
    ]
}

fn describe(level: u8) -> &'static str {
    match level {
        0 => "No one",
        30 => "Developers + Maintainers",
        40 => "Maintainers",
        50 => "Owners",
        _ => "Admins",
    }
}

fn levels(id: u64, level: u8) -> Value {
    json!([{
        "id": id,
        "access_level": level,
        "access_level_description": describe(level),
        "user_id": Value::Null,
        "group_id": Value::Null,
    }])
}

fn render(name: &str, r: &ProtectedRule) -> Value {
    json!({
        "id": r.id,
        "name": name,
        "push_access_levels": levels(r.id * 2, r.push_access_level),
        "merge_access_levels": levels(r.id * 2 + 1, r.merge_access_level),
        "unprotect_access_levels": [],
        "allow_force_push": r.allow_force_push,
        "code_owner_approval_required": false,
    })
}

/// Every rule of a repository: its own, then branches protected by their flag that no rule names.
fn rules(repo: &Repository) -> Vec<(String, ProtectedRule)> {
    let mut out: Vec<(String, ProtectedRule)> = repo
        .protected_rules
        .iter()
        .map(|(n, r)| (n.clone(), r.clone()))
        .collect();
    for (name, b) in &repo.branches {
        if b.protected && !repo.protected_rules.contains_key(name) {
            out.push((
                name.clone(),
                ProtectedRule {
                    id: 0,
                    push_access_level: if b.developers_can_push { 30 } else { 40 },
                    merge_access_level: if b.developers_can_merge { 30 } else { 40 },
                    allow_force_push: false,
                },
            ));
        }
    }
    out
}

fn list(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = ctx.project_id()?;
    ctx.require_level(pid, access::MAINTAINER)?;
    let items: Vec<Value> = rules(&ctx.project(pid)?.repo)
        .iter()
        .map(|(n, r)| render(n, r))
        .collect();
    ctx.paginate(items)
}

fn find(ctx: &Ctx<'_>) -> Result<(u64, String, ProtectedRule), ApiError> {
    let pid = ctx.project_id()?;
    ctx.require_level(pid, access::MAINTAINER)?;
    let name = ctx.path_param("name").to_string();
    let rule = rules(&ctx.project(pid)?.repo)
        .into_iter()
        .find(|(n, _)| *n == name)
        .map(|(_, r)| r)
        .ok_or(ApiError::NotFound("Protected Branch"))?;
    Ok((pid, name, rule))
}

fn level_param(ctx: &Ctx<'_>, name: &str) -> Result<Option<u8>, ApiError> {
    match ctx.params.u64(name)? {
        None => Ok(None),
        Some(l) => u8::try_from(l)
            .ok()
            .filter(|l| [0, 30, 40, 60].contains(l))
            .map(Some)
            .ok_or_else(|| ApiError::Param(format!("{name} does not have a valid value"))),
    }
}

fn protect(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = ctx.project_id()?;
    ctx.require_level(pid, access::MAINTAINER)?;
    let name = ctx.params.required_nonblank("name")?;
    let push = level_param(ctx, "push_access_level")?.unwrap_or(access::MAINTAINER);
    let merge = level_param(ctx, "merge_access_level")?.unwrap_or(access::MAINTAINER);
    let allow_force_push = ctx.params.flag("allow_force_push", false)?;
    if rules(&ctx.project(pid)?.repo).iter().any(|(n, _)| *n == name) {
        return Err(ApiError::Conflict(format!(
            "Protected branch '{name}' already exists"
        )));
    }
    let rule = ProtectedRule {
        id: ctx.store.next_id("protected_branch"),
        push_access_level: push,
        merge_access_level: merge,
        allow_force_push,
    };
    let body = render(&name, &rule);
    if let Some(p) = ctx.store.projects.get_mut(&pid) {
        p.repo.protected_rules.insert(name, rule);
    }
    Ok(Reply::created(body))
}

fn show(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (_, name, rule) = find(ctx)?;
    Ok(Reply::ok(render(&name, &rule)))
}

fn update(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (pid, name, mut rule) = find(ctx)?;
    if let Some(v) = ctx.params.bool("allow_force_push")? {
        rule.allow_force_push = v;
    }
    if let Some(l) = level_param(ctx, "push_access_level")? {
        rule.push_access_level = l;
    }
    if let Some(l) = level_param(ctx, "merge_access_level")? {
        rule.merge_access_level = l;
    }
    if rule.id == 0 {
        rule.id = ctx.store.next_id("protected_branch");
    }
    let body = render(&name, &rule);
    if let Some(p) = ctx.store.projects.get_mut(&pid) {
        if let Some(b) = p.repo.branches.get_mut(&name) {
            b.protected = false;
        }
        p.repo.protected_rules.insert(name, rule);
    }
    Ok(Reply::ok(body))
}

fn unprotect(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (pid, name, _) = find(ctx)?;
    if let Some(p) = ctx.store.projects.get_mut(&pid) {
        p.repo.protected_rules.remove(&name);
        if let Some(b) = p.repo.branches.get_mut(&name) {
            b.protected = false;
            b.developers_can_push = false;
            b.developers_can_merge = false;
        }
    }
    Ok(Reply::no_content())
}
