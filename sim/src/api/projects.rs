//! Projects: list with filters, create, show, update, delete (202), star and unstar.

use http::Method;
use serde_json::Value;

use crate::context::Ctx;
use crate::entities::project::{self, ProjectView};
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::store::projects::{NewProject, FLAGS};
use crate::store::{access, Store, Visibility};

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    vec![
        api(Method::GET, "/projects", list),
        api(Method::POST, "/projects", create),
        api(Method::GET, "/projects/{id}", show),
        api(Method::PUT, "/projects/{id}", update),
        api(Method::DELETE, "/projects/{id}", delete),
        api(Method::POST, "/projects/{id}/star", star),
        api(Method::POST, "/projects/{id}/unstar", unstar),
        api(Method::GET, "/users/{id}/projects", user_projects),
    ]
}

fn list(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let ids: Vec<u64> = ctx.store.projects.keys().copied().collect();
    list_projects(ctx, ids)
}

fn user_projects(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let raw = ctx.path_param("id").to_string();
    let ns = ctx
        .store
        .user_by_id_or_username(&raw)
        .map(|u| u.namespace_id)
        .ok_or(ApiError::NotFound("User"))?;
    let ids = ctx
        .store
        .projects
        .values()
        .filter(|p| p.namespace_id == ns)
        .map(|p| p.id)
        .collect();
    list_projects(ctx, ids)
}

fn list_projects(ctx: &mut Ctx<'_>, candidates: Vec<u64>) -> Result<Reply, ApiError> {
    let p = &ctx.params;
    let membership = p.flag("membership", false)?;
    let owned = p.flag("owned", false)?;
    let starred = p.flag("starred", false)?;
    let simple = p.flag("simple", false)? || ctx.caller.is_none();
    let statistics = p.flag("statistics", false)?;
    let archived = p.bool("archived")?;
    let with_issues = p.flag("with_issues_enabled", false)?;
    let with_mrs = p.flag("with_merge_requests_enabled", false)?;
    let min_level = p.u64("min_access_level")?;
    let search = p.str("search").map(|s| s.to_lowercase());
    let visibility = match p.str("visibility") {
        Some(v) => Some(Visibility::parse(&v).ok_or_else(|| ApiError::Invalid("visibility".into()))?),
        None => None,
    };
    let order_by = p.str("order_by").unwrap_or_else(|| "created_at".into());
    let desc = ctx.sort_desc(true)?;
    if (membership || owned || starred) && ctx.caller.is_none() {
        return Err(ApiError::Unauthorized);
    }
    let store = &*ctx.store;
    let caller = ctx.caller;
    let mut projects: Vec<_> = candidates
        .iter()
        .filter_map(|id| store.projects.get(id))
        .filter(|pr| store.can_read_project(pr, caller))
        .filter(|pr| {
            let Some(uid) = caller else {
                return true;
            };
            let (direct, inherited) = store.project_levels(pr, uid);
            let member_level = direct.max(inherited);
            (!membership || member_level.is_some())
                && (!owned || store.namespace_level(pr.namespace_id, uid) == Some(access::OWNER))
                && (!starred || pr.starrers.contains(&uid))
                && min_level.map_or(true, |min| u64::from(member_level.unwrap_or(0)) >= min)
        })
        .filter(|pr| archived.map_or(true, |a| pr.archived == a))
        .filter(|pr| visibility.map_or(true, |v| pr.visibility == v))
        .filter(|pr| !with_issues || pr.flag("issues_enabled"))
        .filter(|pr| !with_mrs || pr.flag("merge_requests_enabled"))
        .filter(|pr| {
            search.as_deref().map_or(true, |s| {
                pr.name.to_lowercase().contains(s)
                    || pr.path.to_lowercase().contains(s)
                    || pr.description.to_lowercase().contains(s)
            })
        })
        .collect();
    match order_by.as_str() {
        "id" => projects.sort_by_key(|pr| pr.id),
        "name" => projects.sort_by_key(|pr| (pr.name.to_lowercase(), pr.id)),
        "path" => projects.sort_by_key(|pr| (pr.path.to_lowercase(), pr.id)),
        "created_at" => projects.sort_by_key(|pr| (pr.created_at, pr.id)),
        "updated_at" | "last_activity_at" => projects.sort_by_key(|pr| (pr.last_activity_at, pr.id)),
        _ => return Err(ApiError::Invalid("order_by".into())),
    }
    if desc {
        projects.reverse();
    }
    let view = ProjectView {
        viewer: caller,
        statistics,
        permissions: caller.is_some(),
    };
    let items: Vec<Value> = projects
        .into_iter()
        .map(|pr| {
            if simple {
                project::simple(store, pr)
            } else {
                project::full(store, pr, view)
            }
        })
        .collect();
    ctx.paginate(items)
}

fn show(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = ctx.project_id()?;
    let statistics = ctx.params.flag("statistics", false)? && ctx.level(id) >= access::REPORTER;
    render(ctx, id, statistics).map(Reply::ok)
}

/// The full project entity as the caller sees it.
pub fn render(ctx: &Ctx<'_>, id: u64, statistics: bool) -> Result<Value, ApiError> {
    let p = ctx.project(id)?;
    Ok(project::full(
        ctx.store,
        p,
        ProjectView {
            viewer: ctx.caller,
            statistics,
            permissions: ctx.caller.is_some(),
        },
    ))
}

/// Turns a name into a path the way the service does (`My Project` → `my-project`).
fn parameterize(name: &str) -> String {
    let mut out = String::new();
    for c in name.trim().chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

fn valid_path(path: &str) -> bool {
    super::users::valid_username(path)
}

fn create(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    create_for(ctx, uid, None)
}

/// Creates a project for `uid`, in `namespace` when given (else `namespace_id` or the user's namespace).
pub fn create_for(ctx: &mut Ctx<'_>, uid: u64, namespace: Option<u64>) -> Result<Reply, ApiError> {
    let name = ctx.params.str("name").filter(|s| !s.trim().is_empty());
    let path = ctx.params.str("path").filter(|s| !s.trim().is_empty());
    let (name, path) = match (name, path) {
        (Some(n), Some(p)) => (n, p),
        (Some(n), None) => {
            let p = parameterize(&n);
            (n, p)
        }
        (None, Some(p)) => (p.clone(), p),
        (None, None) => return Err(ApiError::Missing("name".into())),
    };
    let visibility = match ctx.params.str("visibility") {
        None => Visibility::Private,
        Some(v) => Visibility::parse(&v).ok_or_else(|| ApiError::Invalid("visibility".into()))?,
    };
    let namespace_id = match (namespace, ctx.params.str("namespace_id")) {
        (Some(ns), _) => ns,
        (None, None) => ctx
            .store
            .users
            .get(&uid)
            .map(|u| u.namespace_id)
            .ok_or(ApiError::Unauthorized)?,
        (None, Some(raw)) => {
            let id = match raw.parse::<u64>() {
                Ok(id) => ctx.store.namespaces.contains_key(&id).then_some(id),
                Err(_) => ctx.store.namespace_by_full_path(&raw),
            }
            .ok_or(ApiError::NotFound("Namespace"))?;
            let allowed =
                ctx.is_admin() || ctx.store.namespace_level(id, uid).unwrap_or(0) >= access::MAINTAINER;
            if !allowed {
                return Err(ApiError::NotFound("Namespace"));
            }
            id
        }
    };
    if !valid_path(&path) {
        return Err(ApiError::validation(
            "path",
            "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.git' or end in '.atom'",
        ));
    }
    let full = format!("{}/{path}", ctx.store.namespace_full_path(namespace_id));
    let mut errors = Vec::new();
    if ctx
        .store
        .projects
        .values()
        .any(|p| p.namespace_id == namespace_id && p.name.eq_ignore_ascii_case(&name))
    {
        errors.push(("name".to_string(), "has already been taken".to_string()));
    }
    if ctx.store.project_by_full_path(&full).is_some() {
        errors.push(("path".to_string(), "has already been taken".to_string()));
    }
    if !errors.is_empty() {
        return Err(ApiError::Validation(errors));
    }
    let flags = read_flags(ctx)?;
    let default_branch = ctx
        .params
        .str("default_branch")
        .filter(|b| crate::store::repo::valid_branch_name(b))
        .unwrap_or_else(|| "main".into());
    let id = ctx.store.insert_project(NewProject {
        name,
        path,
        namespace_id,
        creator_id: uid,
        description: ctx.params.str("description").unwrap_or_default(),
        visibility,
        default_branch,
        initialize_with_readme: ctx.params.bool("initialize_with_readme")?.unwrap_or(false),
    });
    apply_settings(ctx, id, flags)?;
    render(ctx, id, false).map(Reply::created)
}

fn read_flags(ctx: &Ctx<'_>) -> Result<Vec<(&'static str, bool)>, ApiError> {
    let mut out = Vec::new();
    for (name, _) in FLAGS {
        if let Some(v) = ctx.params.bool(name)? {
            out.push((*name, v));
        }
    }
    for (legacy, name) in [
        ("builds_enabled", "jobs_enabled"),
        ("public_builds", "public_jobs"),
        (
            "only_allow_merge_if_build_succeeds",
            "only_allow_merge_if_pipeline_succeeds",
        ),
    ] {
        if let Some(v) = ctx.params.bool(legacy)? {
            out.push((name, v));
        }
    }
    Ok(out)
}

fn apply_settings(ctx: &mut Ctx<'_>, id: u64, flags: Vec<(&'static str, bool)>) -> Result<(), ApiError> {
    let tag_list = ctx.params.list("tag_list");
    let ci_config_path = ctx.params.str("ci_config_path");
    let merge_method = match ctx.params.str("merge_method") {
        Some(m) if ["merge", "rebase_merge", "ff"].contains(&m.as_str()) => Some(m),
        Some(_) => return Err(ApiError::Invalid("merge_method".into())),
        None => None,
    };
    let Some(p) = ctx.store.projects.get_mut(&id) else {
        return Err(ApiError::NotFound("Project"));
    };
    for (name, v) in flags {
        p.flags.insert(name, v);
    }
    if let Some(tags) = tag_list {
        p.tag_list = tags;
    }
    if let Some(path) = ci_config_path {
        p.ci_config_path = Some(path);
    }
    if let Some(m) = merge_method {
        p.merge_method = m;
    }
    Ok(())
}

/// V4's `at_least_one_of_ce` on `PUT /projects/:id`.
const UPDATE_AT_LEAST_ONE_OF: &[&str] = &[
    "jobs_enabled",
    "resolve_outdated_diff_discussions",
    "ci_config_path",
    "container_registry_enabled",
    "default_branch",
    "description",
    "issues_enabled",
    "lfs_enabled",
    "merge_requests_enabled",
    "name",
    "only_allow_merge_if_all_discussions_are_resolved",
    "only_allow_merge_if_pipeline_succeeds",
    "path",
    "printing_merge_request_link_enabled",
    "public_builds",
    "request_access_enabled",
    "shared_runners_enabled",
    "snippets_enabled",
    "tag_list",
    "visibility",
    "wiki_enabled",
    "avatar",
    // Not in 10.8 CE's list but accepted here (CE has it from 11.0 on), so that sending only it is not a 400.
    "merge_method",
];

fn update(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.user_id()?;
    ctx.params.at_least_one_of(UPDATE_AT_LEAST_ONE_OF)?;
    let id = ctx.project_id()?;
    ctx.require_level(id, access::MAINTAINER)?;
    let visibility = match ctx.params.str("visibility") {
        None => None,
        Some(v) => Some(Visibility::parse(&v).ok_or_else(|| ApiError::Invalid("visibility".into()))?),
    };
    // V4: `authorize! :change_visibility_level, user_project if attrs[:visibility].present?`, which only the
    // owner (and an admin) has: a Maintainer sending `visibility` at all, even the current one, is a 403.
    if visibility.is_some() && ctx.level(id) < access::OWNER {
        return Err(ApiError::Forbidden);
    }
    let name = ctx.params.str("name").filter(|s| !s.trim().is_empty());
    // V4 (10.8): `authorize! :rename_project, user_project if attrs[:name].present?`, and
    // `app/policies/project_policy.rb` gives `rename_project` to the owner (and an admin) only: a Maintainer may
    // change the `path` but sending a `name` is a 403.
    if name.is_some() && ctx.level(id) < access::OWNER {
        return Err(ApiError::Forbidden);
    }
    let path = ctx.params.str("path").filter(|s| !s.trim().is_empty());
    if let Some(name) = &name {
        // Project's `validates :name, uniqueness: { scope: :namespace_id }`, as on create.
        let ns = ctx.project(id)?.namespace_id;
        let taken = ctx
            .store
            .projects
            .values()
            .any(|p| p.id != id && p.namespace_id == ns && p.name.eq_ignore_ascii_case(name));
        if taken {
            return Err(ApiError::validation("name", "has already been taken"));
        }
    }
    if let Some(path) = &path {
        if !valid_path(path) {
            return Err(ApiError::validation("path", "is invalid"));
        }
        let ns = ctx.project(id)?.namespace_id;
        let full = format!("{}/{path}", ctx.store.namespace_full_path(ns));
        if ctx
            .store
            .project_by_full_path(&full)
            .is_some_and(|other| other != id)
        {
            return Err(ApiError::validation("path", "has already been taken"));
        }
    }
    // V4 `Projects::UpdateService#changing_default_branch?`: only a value other than the current one is checked, so
    // a client that sends back the project it read is accepted.
    let current = project::shown_default_branch(ctx.project(id)?).map(str::to_string);
    let default_branch = ctx
        .params
        .str("default_branch")
        .filter(|b| Some(b) != current.as_ref());
    if let Some(branch) = &default_branch {
        if !ctx.project(id)?.repo.branches.contains_key(branch) {
            return Err(ApiError::validation("default_branch", "does not exist"));
        }
    }
    let archived = ctx.params.bool("archived")?;
    let description = ctx.params.str("description");
    let flags = read_flags(ctx)?;
    apply_settings(ctx, id, flags)?;
    let now = ctx.store.now();
    if let Some(p) = ctx.store.projects.get_mut(&id) {
        if let Some(v) = name {
            p.name = v;
        }
        if let Some(v) = path {
            p.path = v;
        }
        if let Some(v) = description {
            p.description = v;
        }
        if let Some(v) = visibility {
            p.visibility = v;
        }
        if let Some(v) = default_branch {
            p.default_branch = v;
        }
        if let Some(v) = archived {
            p.archived = v;
        }
        p.last_activity_at = now;
    }
    render(ctx, id, false).map(Reply::ok)
}

/// Removes a project and everything that belongs to it.
pub fn remove_project(store: &mut Store, id: u64) {
    store.projects.remove(&id);
    store.issues.retain(|_, i| i.project_id != id);
    store.merge_requests.retain(|_, m| m.project_id != id);
    store.notes.retain(|_, n| n.project_id != id);
    store.labels.retain(|_, l| l.project_id != id);
    store.milestones.retain(|_, m| m.project_id != id);
    store.group_links.retain(|_, l| l.project_id != id);
    store.events.retain(|_, e| e.project_id != id);
    store.todos.retain(|_, t| t.project_id != id);
    store.snippets.retain(|_, s| s.project_id != Some(id));
    store.pipelines.retain(|_, p| p.project_id != id);
    store.jobs.retain(|_, j| j.project_id != id);
    store.triggers.retain(|_, t| t.project_id != id);
    store
        .variables
        .retain(|(owner, _), _| *owner != crate::store::VariableOwner::Project(id));
    store.environments.retain(|_, e| e.project_id != id);
    store.deployments.retain(|_, d| d.project_id != id);
    store.commit_comments.retain(|_, c| c.project_id != id);
    store.commit_statuses.retain(|_, c| c.project_id != id);
    store.hooks.retain(|_, h| h.project_id != Some(id));
    store.services.retain(|_, s| s.project_id != id);
    let keys: Vec<u64> = store
        .deploy_key_links
        .keys()
        .filter(|(p, _)| *p == id)
        .map(|(_, k)| *k)
        .collect();
    for key in keys {
        store.unlink_deploy_key(id, key);
    }
    let boards: Vec<u64> = store
        .boards
        .values()
        .filter(|b| b.project_id == id)
        .map(|b| b.id)
        .collect();
    store.board_lists.retain(|_, l| !boards.contains(&l.board_id));
    store.boards.retain(|_, b| b.project_id != id);
    for r in store.runners.values_mut() {
        r.project_ids.remove(&id);
    }
    store
        .notification_settings
        .retain(|(_, source), _| *source != crate::store::NotificationSource::Project(id));
    for p in store.projects.values_mut() {
        if p.forked_from == Some(id) {
            p.forked_from = None;
        }
    }
}

fn delete(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = ctx.project_id()?;
    ctx.require_level(id, access::OWNER)?;
    remove_project(ctx.store, id);
    Ok(Reply::accepted())
}

fn star(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let id = ctx.project_id()?;
    let added = ctx
        .store
        .projects
        .get_mut(&id)
        .is_some_and(|p| p.starrers.insert(uid));
    if !added {
        return Ok(Reply::not_modified());
    }
    render(ctx, id, false).map(Reply::created)
}

fn unstar(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let id = ctx.project_id()?;
    let removed = ctx
        .store
        .projects
        .get_mut(&id)
        .is_some_and(|p| p.starrers.remove(&uid));
    if !removed {
        return Ok(Reply::not_modified());
    }
    render(ctx, id, false).map(Reply::created)
}

#[cfg(test)]
mod tests {
    use super::parameterize;

    #[test]
    fn parameterizes_names() {
        assert_eq!(parameterize("My Cool Project!"), "my-cool-project");
        assert_eq!(parameterize("a_b.c"), "a_b.c");
    }
}
