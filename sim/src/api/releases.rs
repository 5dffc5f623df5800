//! Releases: a tag with release notes is a release. List, create (making the tag from `ref` when it is missing),
//! show, update and delete (the tag stays), and a release's asset links.

use http::{Method, StatusCode};
use serde_json::{json, Value};

use crate::context::Ctx;
use crate::entities::ts;
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::store::access;
use crate::store::commit_meta::{ReleaseLink, Tag};
use crate::store::repo::valid_branch_name;

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    let base = "/projects/{id}/releases";
    let one = "/projects/{id}/releases/{tag_name}";
    let links = "/projects/{id}/releases/{tag_name}/assets/links";
    let link = "/projects/{id}/releases/{tag_name}/assets/links/{link_id}";
    vec![
        api(Method::GET, base, list),
        api(Method::POST, base, create),
        api(Method::GET, one, show),
        api(Method::PUT, one, update),
        api(Method::DELETE, one, delete),
        api(Method::GET, links, list_links),
        api(Method::POST, links, create_link),
        api(Method::GET, link, show_link),
        api(Method::PUT, link, update_link),
        api(Method::DELETE, link, delete_link),
    ]
}

fn render_link(ctx: &Ctx<'_>, pid: u64, tag: &str, l: &ReleaseLink) -> Value {
    let web = ctx
        .store
        .projects
        .get(&pid)
        .map(|p| format!("{}/{}", ctx.store.base_url, ctx.store.project_full_path(p)))
        .unwrap_or_default();
    json!({
        "id": l.id,
        "name": l.name,
        "url": l.url,
        "direct_asset_url": format!("{web}/-/releases/{tag}/downloads/{}", l.name),
        "link_type": l.link_type,
    })
}

fn render(ctx: &Ctx<'_>, pid: u64, name: &str, t: &Tag) -> Value {
    let Some(p) = ctx.store.projects.get(&pid) else {
        return Value::Null;
    };
    let web = format!("{}/{}", ctx.store.base_url, ctx.store.project_full_path(p));
    let commit = p
        .repo
        .commits
        .get(&t.commit)
        .map(crate::entities::repo::commit)
        .unwrap_or(Value::Null);
    let created = t.release_created_at.unwrap_or(t.created_at);
    let sources: Vec<Value> = ["zip", "tar.gz", "tar.bz2", "tar"]
        .iter()
        .map(|f| json!({"format": f, "url": format!("{web}/-/archive/{name}/{}-{name}.{f}", p.path)}))
        .collect();
    let links: Vec<Value> = t
        .release_links
        .iter()
        .map(|l| render_link(ctx, pid, name, l))
        .collect();
    json!({
        "name": t.release_name.clone().unwrap_or_else(|| name.to_string()),
        "tag_name": name,
        "description": t.release,
        "created_at": ts(created),
        "released_at": ts(created),
        "upcoming_release": false,
        "author": crate::entities::user::basic_by_id(ctx.store, t.release_author),
        "commit": commit,
        "commit_path": format!("/{}/-/commit/{}", ctx.store.project_full_path(p), t.commit),
        "tag_path": format!("/{}/-/tags/{name}", ctx.store.project_full_path(p)),
        "assets": {"count": sources.len() + links.len(), "sources": sources, "links": links},
        "_links": {"self": format!("{web}/-/releases/{name}")},
    })
}

/// The project (readable) and the release `:tag_name` in it.
fn find(ctx: &Ctx<'_>) -> Result<(u64, String), ApiError> {
    let pid = super::repository::readable_project(ctx)?;
    let name = ctx.path_param("tag_name").to_string();
    let has = ctx
        .project(pid)?
        .repo
        .tags
        .get(&name)
        .is_some_and(|t| t.release.is_some());
    if has {
        Ok((pid, name))
    } else {
        Err(ApiError::NotFoundPlain)
    }
}

fn rendered(ctx: &Ctx<'_>, pid: u64, name: &str) -> Result<Value, ApiError> {
    let t = ctx
        .project(pid)?
        .repo
        .tags
        .get(name)
        .ok_or(ApiError::NotFoundPlain)?;
    Ok(render(ctx, pid, name, t))
}

fn list(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = super::repository::readable_project(ctx)?;
    let mut found: Vec<(&String, &Tag)> = ctx
        .project(pid)?
        .repo
        .tags
        .iter()
        .filter(|(_, t)| t.release.is_some())
        .collect();
    found.sort_by_key(|(n, t)| {
        (
            std::cmp::Reverse(t.release_created_at.unwrap_or(t.created_at)),
            (*n).clone(),
        )
    });
    let items: Vec<Value> = found.into_iter().map(|(n, t)| render(ctx, pid, n, t)).collect();
    ctx.paginate(items)
}

fn create(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let pid = ctx.project_id()?;
    ctx.require_level(pid, access::DEVELOPER)?;
    let name = ctx.params.required_nonblank("tag_name")?;
    let release_name = ctx.params.str("name").filter(|n| !n.is_empty());
    let description = ctx.params.str("description").unwrap_or_default();
    let repo = &ctx.project(pid)?.repo;
    let existing = repo.tags.get(&name).map(|t| t.release.is_some());
    if existing == Some(true) {
        return Err(ApiError::Conflict("Release already exists".into()));
    }
    let target = match existing {
        Some(_) => None,
        None => {
            let reference = ctx
                .params
                .str("ref")
                .ok_or_else(|| ApiError::BadRequest("Ref is not specified".into()))?;
            if !valid_branch_name(&name) {
                return Err(ApiError::BadRequest("Tag name invalid".into()));
            }
            let sha = repo
                .resolve(&reference)
                .map(|c| c.id.clone())
                .ok_or_else(|| ApiError::BadRequest("Target ref is invalid".into()))?;
            Some(sha)
        }
    };
    let now = ctx.store.now();
    let Some(p) = ctx.store.projects.get_mut(&pid) else {
        return Err(ApiError::NotFound("Project"));
    };
    if let Some(sha) = target {
        p.repo.tags.insert(
            name.clone(),
            Tag {
                commit: sha,
                message: None,
                release: None,
                created_at: now,
                release_name: None,
                release_author: None,
                release_created_at: None,
                release_links: Vec::new(),
            },
        );
    }
    if let Some(t) = p.repo.tags.get_mut(&name) {
        t.release = Some(description);
        t.release_name = release_name;
        t.release_author = Some(uid);
        t.release_created_at = Some(now);
    }
    Ok(Reply::created(rendered(ctx, pid, &name)?))
}

fn show(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (pid, name) = find(ctx)?;
    Ok(Reply::ok(rendered(ctx, pid, &name)?))
}

fn update(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (pid, name) = find(ctx)?;
    ctx.require_level(pid, access::DEVELOPER)?;
    let release_name = ctx.params.str("name");
    let description = ctx.params.str("description");
    if let Some(t) = ctx
        .store
        .projects
        .get_mut(&pid)
        .and_then(|p| p.repo.tags.get_mut(&name))
    {
        if let Some(n) = release_name {
            t.release_name = Some(n);
        }
        if let Some(d) = description {
            t.release = Some(d);
        }
    }
    Ok(Reply::ok(rendered(ctx, pid, &name)?))
}

/// Deletes the release (its notes and links); the tag stays. Answers the deleted release.
fn delete(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (pid, name) = find(ctx)?;
    ctx.require_level(pid, access::MAINTAINER)?;
    let body = rendered(ctx, pid, &name)?;
    if let Some(t) = ctx
        .store
        .projects
        .get_mut(&pid)
        .and_then(|p| p.repo.tags.get_mut(&name))
    {
        t.release = None;
        t.release_name = None;
        t.release_author = None;
        t.release_created_at = None;
        t.release_links.clear();
    }
    Ok(Reply::ok(body))
}

fn links_of<'c>(ctx: &'c Ctx<'_>, pid: u64, name: &str) -> Result<&'c [ReleaseLink], ApiError> {
    ctx.project(pid)?
        .repo
        .tags
        .get(name)
        .map(|t| t.release_links.as_slice())
        .ok_or(ApiError::NotFoundPlain)
}

fn list_links(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (pid, name) = find(ctx)?;
    let items: Vec<Value> = links_of(ctx, pid, &name)?
        .iter()
        .map(|l| render_link(ctx, pid, &name, l))
        .collect();
    ctx.paginate(items)
}

fn create_link(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (pid, name) = find(ctx)?;
    ctx.require_level(pid, access::DEVELOPER)?;
    let link_name = ctx.params.required_nonblank("name")?;
    let url = ctx.params.required_nonblank("url")?;
    let link_type = ctx.params.str("link_type").unwrap_or_else(|| "other".into());
    if links_of(ctx, pid, &name)?
        .iter()
        .any(|l| l.name == link_name || l.url == url)
    {
        return Err(ApiError::BadRequest("Link already exists".into()));
    }
    let id = ctx.store.next_id("release_link");
    let link = ReleaseLink {
        id,
        name: link_name,
        url,
        link_type,
    };
    let body = render_link(ctx, pid, &name, &link);
    if let Some(t) = ctx
        .store
        .projects
        .get_mut(&pid)
        .and_then(|p| p.repo.tags.get_mut(&name))
    {
        t.release_links.push(link);
    }
    Ok(Reply::json(StatusCode::CREATED, body))
}

fn find_link(ctx: &Ctx<'_>) -> Result<(u64, String, ReleaseLink), ApiError> {
    let (pid, name) = find(ctx)?;
    let id = ctx.path_u64("link_id", "Link")?;
    let link = links_of(ctx, pid, &name)?
        .iter()
        .find(|l| l.id == id)
        .cloned()
        .ok_or(ApiError::NotFoundPlain)?;
    Ok((pid, name, link))
}

fn show_link(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (pid, name, link) = find_link(ctx)?;
    Ok(Reply::ok(render_link(ctx, pid, &name, &link)))
}

fn update_link(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (pid, name, mut link) = find_link(ctx)?;
    ctx.require_level(pid, access::DEVELOPER)?;
    if let Some(n) = ctx.params.str("name").filter(|n| !n.is_empty()) {
        link.name = n;
    }
    if let Some(u) = ctx.params.str("url").filter(|u| !u.is_empty()) {
        link.url = u;
    }
    if let Some(t) = ctx.params.str("link_type") {
        link.link_type = t;
    }
    let body = render_link(ctx, pid, &name, &link);
    if let Some(t) = ctx
        .store
        .projects
        .get_mut(&pid)
        .and_then(|p| p.repo.tags.get_mut(&name))
    {
        if let Some(slot) = t.release_links.iter_mut().find(|l| l.id == link.id) {
            *slot = link;
        }
    }
    Ok(Reply::ok(body))
}

fn delete_link(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (pid, name, link) = find_link(ctx)?;
    ctx.require_level(pid, access::DEVELOPER)?;
    let body = render_link(ctx, pid, &name, &link);
    if let Some(t) = ctx
        .store
        .projects
        .get_mut(&pid)
        .and_then(|p| p.repo.tags.get_mut(&name))
    {
        t.release_links.retain(|l| l.id != link.id);
    }
    Ok(Reply::ok(body))
}
