//! Branches: list (sorted by name), get, create from a ref, delete (204; not the default or a protected one).

use http::{Method, StatusCode};
use serde_json::Value;

use crate::context::Ctx;
use crate::entities::repo::branch as render_branch;
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::store::access;
use crate::store::repo::valid_branch_name;

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    vec![
        api(Method::GET, "/projects/{id}/repository/branches", list),
        api(Method::POST, "/projects/{id}/repository/branches", create),
        api(Method::GET, "/projects/{id}/repository/branches/{branch}", show),
        api(
            Method::DELETE,
            "/projects/{id}/repository/branches/{branch}",
            delete,
        ),
    ]
}

/// Whether the caller may push to `branch` (protected branches need Maintainer unless developers may push).
pub fn can_push(ctx: &Ctx<'_>, pid: u64, branch: &str) -> bool {
    let level = ctx.level(pid);
    let needed = ctx
        .store
        .projects
        .get(&pid)
        .and_then(|p| p.repo.protection(branch))
        .map_or(access::DEVELOPER, |p| p.push_access_level);
    needed != 0 && level >= needed.max(access::DEVELOPER)
}

fn render(ctx: &Ctx<'_>, pid: u64, name: &str) -> Result<Value, ApiError> {
    let p = ctx.project(pid)?;
    let b = p.repo.branches.get(name).ok_or(ApiError::NotFound("Branch"))?;
    Ok(render_branch(
        &p.repo,
        name,
        b,
        &p.default_branch,
        can_push(ctx, pid, name),
    ))
}

fn list(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    // V4's branches API runs `authorize! :download_code, user_project` first: a guest of a private project is 403.
    let pid = super::repository::readable_project(ctx)?;
    let search = ctx.params.str("search").map(|s| s.to_lowercase());
    let names: Vec<String> = ctx
        .project(pid)?
        .repo
        .branches
        .keys()
        .filter(|n| search.as_deref().map_or(true, |s| n.to_lowercase().contains(s)))
        .cloned()
        .collect();
    let items = names
        .iter()
        .map(|n| render(ctx, pid, n))
        .collect::<Result<Vec<_>, _>>()?;
    ctx.paginate(items)
}

fn show(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = super::repository::readable_project(ctx)?;
    let name = ctx.path_param("branch").to_string();
    Ok(Reply::ok(render(ctx, pid, &name)?))
}

fn create(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = ctx.project_id()?;
    ctx.require_level(pid, access::DEVELOPER)?;
    let name = ctx.params.required_str("branch")?;
    let reference = ctx.params.required_str("ref")?;
    if !valid_branch_name(&name) {
        return Err(ApiError::BadRequest("Branch name is invalid".into()));
    }
    if ctx.project(pid)?.repo.branches.is_empty() {
        create_default_branch(ctx, pid)?;
    }
    let repo = &ctx.project(pid)?.repo;
    if repo.branches.contains_key(&name) {
        return Err(ApiError::BadRequest("Branch already exists".into()));
    }
    let sha = repo
        .resolve(&reference)
        .map(|c| c.id.clone())
        .ok_or_else(|| ApiError::BadRequest("Invalid reference name".into()))?;
    let uid = ctx.user_id()?;
    let now = ctx.store.now();
    if let Some(p) = ctx.store.projects.get_mut(&pid) {
        p.repo.set_branch(&name, &sha, false);
        p.last_activity_at = now;
    }
    // `Branches::CreateService` writes the ref through the repository's hooks: a "pushed new" event.
    ctx.store.record_push(pid, uid, &name, None, Some(sha));
    Ok(Reply::created(render(ctx, pid, &name)?))
}

/// As the service does when a branch is created in an empty repository: first commits an empty README.md
/// ("Add README.md") as the caller to the default branch, so that the new branch has something to start from.
fn create_default_branch(ctx: &mut Ctx<'_>, pid: u64) -> Result<(), ApiError> {
    let uid = ctx.user_id()?;
    let (name, email) = ctx
        .store
        .users
        .get(&uid)
        .map(|u| (u.name.clone(), u.email.clone()))
        .unwrap_or_default();
    let now = ctx.store.now();
    let p = ctx
        .store
        .projects
        .get_mut(&pid)
        .ok_or(ApiError::NotFound("Project"))?;
    let mut tree = crate::store::repo::Tree::new();
    tree.insert("README.md".into(), Vec::new());
    let sha = p.repo.commit(None, tree, "Add README.md", &name, &email, now);
    let branch = p.default_branch.clone();
    p.repo.set_branch(&branch, &sha, true);
    ctx.store.record_push(pid, uid, &branch, None, Some(sha));
    Ok(())
}

fn delete(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = ctx.project_id()?;
    ctx.require_level(pid, access::DEVELOPER)?;
    let name = ctx.path_param("branch").to_string();
    let p = ctx.project(pid)?;
    if !p.repo.branches.contains_key(&name) {
        return Err(ApiError::NotFound("Branch"));
    }
    if name == p.default_branch {
        return Err(ApiError::Status(
            StatusCode::METHOD_NOT_ALLOWED,
            "The default branch of a project cannot be deleted.".into(),
        ));
    }
    if p.repo.protection(&name).is_some() && ctx.level(pid) < access::MAINTAINER {
        return Err(ApiError::Status(
            StatusCode::METHOD_NOT_ALLOWED,
            "Protected branch cant be removed".into(),
        ));
    }
    let uid = ctx.user_id()?;
    let head = ctx
        .store
        .projects
        .get_mut(&pid)
        .and_then(|p| p.repo.branches.remove(&name))
        .map(|b| b.commit);
    // Deleting a branch is a push of its removal (`GitPushService`): a "deleted" event.
    ctx.store.record_push(pid, uid, &name, head, None);
    Ok(Reply::no_content())
}
