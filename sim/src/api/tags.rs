//! Tags and their releases: list (`order_by` name/updated, `sort`), show, create, delete, and
//! `POST`/`PUT …/tags/:tag_name/release`.

use http::{Method, StatusCode};
use serde_json::Value;

use crate::context::Ctx;
use crate::entities::commit_meta::{release, tag as render};
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::store::access;
use crate::store::commit_meta::Tag;
use crate::store::repo::valid_branch_name;

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    let base = "/projects/{id}/repository/tags";
    let one = "/projects/{id}/repository/tags/{tag_name}";
    vec![
        api(Method::GET, base, list),
        api(Method::POST, base, create),
        api(Method::GET, one, show),
        api(Method::DELETE, one, delete),
        api(Method::POST, &format!("{one}/release"), create_release),
        api(Method::PUT, &format!("{one}/release"), update_release),
    ]
}

fn list(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = ctx.project_id()?;
    let order_by = ctx.params.str("order_by").unwrap_or_else(|| "updated".into());
    let desc = ctx.sort_desc(true)?;
    let repo = &ctx.project(pid)?.repo;
    let mut tags: Vec<(&String, &Tag)> = repo.tags.iter().collect();
    match order_by.as_str() {
        "name" => tags.sort_by(|a, b| a.0.cmp(b.0)),
        "updated" => tags.sort_by_key(|(name, t)| {
            let date = repo.commits.get(&t.commit).map(|c| c.date).unwrap_or(0);
            (date, t.created_at, (*name).clone())
        }),
        _ => return Err(ApiError::Invalid("order_by".into())),
    }
    if desc {
        tags.reverse();
    }
    let items: Vec<Value> = tags.into_iter().map(|(n, t)| render(repo, n, t)).collect();
    ctx.paginate(items)
}

fn find(ctx: &Ctx<'_>) -> Result<(u64, String), ApiError> {
    let pid = ctx.project_id()?;
    let name = ctx.path_param("tag_name").to_string();
    if ctx.project(pid)?.repo.tags.contains_key(&name) {
        Ok((pid, name))
    } else {
        Err(ApiError::NotFound("Tag"))
    }
}

fn rendered(ctx: &Ctx<'_>, pid: u64, name: &str) -> Result<Value, ApiError> {
    let repo = &ctx.project(pid)?.repo;
    let t = repo.tags.get(name).ok_or(ApiError::NotFound("Tag"))?;
    Ok(render(repo, name, t))
}

fn show(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (pid, name) = find(ctx)?;
    Ok(Reply::ok(rendered(ctx, pid, &name)?))
}

fn create(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = ctx.project_id()?;
    ctx.require_level(pid, access::DEVELOPER)?;
    let name = ctx.params.required_nonblank("tag_name")?;
    let reference = ctx.params.required_nonblank("ref")?;
    if !valid_branch_name(&name) {
        return Err(ApiError::BadRequest("Tag name invalid".into()));
    }
    let repo = &ctx.project(pid)?.repo;
    if repo.tags.contains_key(&name) {
        return Err(ApiError::BadRequest(format!("Tag {name} already exists")));
    }
    let sha = repo
        .resolve(&reference)
        .map(|c| c.id.clone())
        .ok_or_else(|| ApiError::BadRequest("Target ref is invalid".into()))?;
    let message = ctx.params.str("message").filter(|m| !m.is_empty());
    let release = ctx.params.str("release_description");
    let now = ctx.store.now();
    if let Some(p) = ctx.store.projects.get_mut(&pid) {
        p.repo.tags.insert(
            name.clone(),
            Tag {
                commit: sha,
                message,
                release,
                created_at: now,
                release_name: None,
                release_author: None,
                release_created_at: None,
                release_links: Vec::new(),
            },
        );
        p.last_activity_at = now;
    }
    Ok(Reply::created(rendered(ctx, pid, &name)?))
}

fn delete(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (pid, name) = find(ctx)?;
    ctx.require_level(pid, access::DEVELOPER)?;
    if let Some(p) = ctx.store.projects.get_mut(&pid) {
        p.repo.tags.remove(&name);
    }
    Ok(Reply::no_content())
}

fn set_release(ctx: &mut Ctx<'_>, creating: bool) -> Result<Reply, ApiError> {
    let pid = ctx.project_id()?;
    ctx.require_level(pid, access::DEVELOPER)?;
    let name = ctx.path_param("tag_name").to_string();
    let description = ctx.params.required_str("description")?;
    let existing = ctx
        .project(pid)?
        .repo
        .tags
        .get(&name)
        .ok_or(ApiError::NotFound("Tag"))?
        .release
        .is_some();
    match (creating, existing) {
        (true, true) => return Err(ApiError::Conflict("Release already exists".into())),
        (false, false) => return Err(ApiError::NotFound("Release")),
        _ => {}
    }
    if let Some(t) = ctx
        .store
        .projects
        .get_mut(&pid)
        .and_then(|p| p.repo.tags.get_mut(&name))
    {
        t.release = Some(description.clone());
    }
    let status = if creating {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok(Reply::json(status, release(&name, &description)))
}

fn create_release(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    set_release(ctx, true)
}

fn update_release(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    set_release(ctx, false)
}
