//! Project extras: forks, archiving, sharing with groups, uploads, users, events, languages, creating a
//! project for another user, and transferring a project to a group.

use std::collections::BTreeMap;

use http::Method;
use serde_json::{json, Value};

use crate::context::Ctx;
use crate::entities::event::event as render_event;
use crate::entities::project::{self, ProjectView};
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::sha::{base64_decode, sha1_hex};
use crate::store::projects::NewProject;
use crate::store::{access, Event, GroupLink};

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    vec![
        api(Method::POST, "/projects/{id}/fork", fork),
        api(Method::DELETE, "/projects/{id}/fork", unlink_fork),
        api(Method::POST, "/projects/{id}/fork/{forked_from_id}", link_fork),
        api(Method::GET, "/projects/{id}/forks", forks),
        api(Method::POST, "/projects/{id}/archive", archive),
        api(Method::POST, "/projects/{id}/unarchive", unarchive),
        api(Method::POST, "/projects/{id}/share", share),
        api(Method::DELETE, "/projects/{id}/share/{group_id}", unshare),
        api(Method::POST, "/projects/{id}/uploads", upload),
        api(Method::GET, "/projects/{id}/users", users),
        api(Method::GET, "/projects/{id}/events", project_events),
        api(Method::GET, "/users/{id}/events", user_events),
        api(Method::GET, "/projects/{id}/languages", languages),
        api(Method::POST, "/projects/user/{user_id}", create_for_user),
        api(Method::POST, "/groups/{id}/projects/{project_id}", transfer),
        api(Method::PUT, "/projects/{id}/transfer", transfer_to_namespace),
        api(Method::GET, "/projects/{id}/groups", project_groups),
    ]
}

fn fork(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let source = ctx.project_id()?;
    let raw = ctx
        .params
        .str("namespace")
        .or_else(|| ctx.params.str("namespace_id"))
        .or_else(|| ctx.params.str("namespace_path"));
    let ns = match raw {
        None => ctx
            .store
            .users
            .get(&uid)
            .map(|u| u.namespace_id)
            .ok_or(ApiError::Unauthorized)?,
        Some(raw) => {
            let id = match raw.parse::<u64>() {
                Ok(id) => ctx.store.namespaces.contains_key(&id).then_some(id),
                Err(_) => ctx.store.namespace_by_full_path(&raw),
            }
            .ok_or(ApiError::NotFound("Target Namespace"))?;
            if !ctx.is_admin() && ctx.store.namespace_level(id, uid).unwrap_or(0) < access::MAINTAINER {
                return Err(ApiError::NotFound("Target Namespace"));
            }
            id
        }
    };
    let src = ctx.project(source)?.clone();
    let mut clash = Vec::new();
    if ctx
        .store
        .projects
        .values()
        .any(|p| p.namespace_id == ns && p.name.eq_ignore_ascii_case(&src.name))
    {
        clash.push(("name".to_string(), "has already been taken".to_string()));
    }
    if ctx
        .store
        .projects
        .values()
        .any(|p| p.namespace_id == ns && p.path.eq_ignore_ascii_case(&src.path))
    {
        clash.push(("path".to_string(), "has already been taken".to_string()));
    }
    if !clash.is_empty() {
        return Err(ApiError::ValidationConflict(clash));
    }
    let id = ctx.store.insert_project(NewProject {
        name: src.name.clone(),
        path: src.path.clone(),
        namespace_id: ns,
        creator_id: uid,
        description: src.description.clone(),
        visibility: src.visibility,
        default_branch: src.default_branch.clone(),
        initialize_with_readme: false,
    });
    if let Some(p) = ctx.store.projects.get_mut(&id) {
        p.repo = src.repo.clone();
        p.forked_from = Some(source);
        p.flags = src.flags.clone();
        p.tag_list = src.tag_list.clone();
    }
    super::projects::render(ctx, id, false).map(Reply::created)
}

fn link_fork(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.require_admin()?;
    let id = ctx.project_id()?;
    let from = ctx.path_u64("forked_from_id", "Project")?;
    if !ctx.store.projects.contains_key(&from) {
        return Err(ApiError::NotFound("Project"));
    }
    if ctx.project(id)?.forked_from.is_some() {
        return Err(ApiError::Conflict("Project already forked".into()));
    }
    if let Some(p) = ctx.store.projects.get_mut(&id) {
        p.forked_from = Some(from);
    }
    super::projects::render(ctx, id, false).map(Reply::created)
}

fn unlink_fork(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = ctx.project_id()?;
    ctx.require_level(id, access::OWNER)?;
    let was = ctx
        .store
        .projects
        .get_mut(&id)
        .and_then(|p| p.forked_from.take())
        .is_some();
    Ok(if was {
        Reply::no_content()
    } else {
        Reply::not_modified()
    })
}

fn forks(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = ctx.project_id()?;
    let view = ProjectView {
        viewer: ctx.caller,
        statistics: false,
        permissions: ctx.caller.is_some(),
    };
    let simple = ctx.params.flag("simple", false)? || ctx.caller.is_none();
    let mut found: Vec<_> = ctx
        .store
        .projects
        .values()
        .filter(|p| p.forked_from == Some(id) && ctx.store.can_read_project(p, ctx.caller))
        .collect();
    found.sort_by_key(|p| std::cmp::Reverse(p.id));
    let items: Vec<Value> = found
        .into_iter()
        .map(|p| {
            if simple {
                project::simple(ctx.store, p)
            } else {
                project::full(ctx.store, p, view)
            }
        })
        .collect();
    ctx.paginate(items)
}

fn set_archived(ctx: &mut Ctx<'_>, archived: bool) -> Result<Reply, ApiError> {
    let id = ctx.project_id()?;
    ctx.require_level(id, access::MAINTAINER)?;
    if let Some(p) = ctx.store.projects.get_mut(&id) {
        p.archived = archived;
    }
    super::projects::render(ctx, id, false).map(Reply::created)
}

fn archive(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    set_archived(ctx, true)
}

fn unarchive(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    set_archived(ctx, false)
}

fn share(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = ctx.project_id()?;
    ctx.require_level(id, access::MAINTAINER)?;
    let group = ctx.params.required_u64("group_id")?;
    let level = ctx.params.required_u64("group_access")?;
    let level = u8::try_from(level)
        .ok()
        .filter(|l| [10, 20, 30, 40, 50].contains(l))
        .ok_or_else(|| ApiError::Param("group_access does not have a valid value".into()))?;
    let expires_at = ctx.params.str("expires_at");
    if let Some(e) = &expires_at {
        if crate::time::parse(e).is_none() {
            return Err(ApiError::Invalid("expires_at".into()));
        }
    }
    let visible =
        ctx.store.namespaces.get(&group).is_some_and(|ns| ns.is_group()) && ctx.can_read_group(group);
    if !visible {
        return Err(ApiError::NotFound("Group"));
    }
    if ctx
        .store
        .group_links
        .values()
        .any(|l| l.project_id == id && l.group_id == group)
    {
        return Err(ApiError::Conflict("Group already shared with this group".into()));
    }
    let link = ctx.store.next_id("group_link");
    ctx.store.group_links.insert(
        link,
        GroupLink {
            id: link,
            project_id: id,
            group_id: group,
            group_access: level,
            expires_at: expires_at.clone(),
        },
    );
    Ok(Reply::created(json!({
        "id": link,
        "project_id": id,
        "group_id": group,
        "group_access": level,
        "expires_at": expires_at,
    })))
}

fn unshare(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    // `requires :group_id, type: Integer`: after authentication, a non-integer is a 400 before the project is
    // looked at.
    ctx.user_id()?;
    let group = ctx.path_integer("group_id")?;
    let id = ctx.project_id()?;
    ctx.require_level(id, access::MAINTAINER)?;
    let link = ctx
        .store
        .group_links
        .values()
        .find(|l| l.project_id == id && l.group_id == group)
        .map(|l| l.id)
        .ok_or(ApiError::NotFound("Group Link"))?;
    ctx.store.group_links.remove(&link);
    Ok(Reply::no_content())
}

fn upload(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = ctx.project_id()?;
    ctx.user_id()?;
    let file = ctx
        .params
        .get("file")
        .and_then(Value::as_object)
        .cloned()
        .ok_or_else(|| ApiError::Missing("file".into()))?;
    let filename = file
        .get("filename")
        .and_then(Value::as_str)
        .map(|f| f.rsplit(['/', '\\']).next().unwrap_or(f).to_string())
        .filter(|f| !f.is_empty())
        .unwrap_or_else(|| "file".into());
    let data = file
        .get("content")
        .and_then(Value::as_str)
        .and_then(base64_decode)
        .unwrap_or_default();
    let secret = sha1_hex(format!("{id}:{filename}:{}", sha1_hex(&data)).as_bytes())
        .get(..32)
        .unwrap_or_default()
        .to_string();
    let url = format!("/uploads/{secret}/{filename}");
    let alt = filename
        .rsplit_once('.')
        .map(|(stem, _)| stem.to_string())
        .unwrap_or_else(|| filename.clone());
    let image = ["png", "jpg", "jpeg", "gif", "bmp", "svg", "webp", "ico", "tiff"]
        .iter()
        .any(|ext| filename.to_ascii_lowercase().ends_with(&format!(".{ext}")));
    let markdown = if image {
        format!("![{alt}]({url})")
    } else {
        format!("[{filename}]({url})")
    };
    Ok(Reply::created(json!({
        "alt": if image { alt } else { filename },
        "url": url,
        "markdown": markdown,
    })))
}

fn users(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = ctx.project_id()?;
    let search = ctx.params.str("search").map(|s| s.to_lowercase());
    let p = ctx.project(id)?;
    let items: Vec<Value> = ctx
        .store
        .users
        .values()
        .filter(|u| !u.is_admin || p.members.iter().any(|m| m.user_id == u.id))
        .filter(|u| ctx.store.effective_level(p, u.id) > 0)
        .filter(|u| {
            search.as_deref().map_or(true, |s| {
                u.username.to_lowercase().contains(s)
                    || u.name.to_lowercase().contains(s)
                    || u.email.to_lowercase().contains(s)
            })
        })
        .map(|u| crate::entities::user::basic(ctx.store, u))
        .collect();
    ctx.paginate(items)
}

/// The events `filter` keeps that the caller may see, filtered by the request's `action`, `target_type`, `before`,
/// `after` and `sort`.
pub fn events(ctx: &Ctx<'_>, filter: impl Fn(&Event) -> bool) -> Result<Vec<Value>, ApiError> {
    let action = ctx.params.str("action");
    let target_type = ctx.params.str("target_type").map(|t| t.to_lowercase());
    let before = match ctx.params.str("before") {
        Some(s) => Some(crate::time::parse(&s).ok_or_else(|| ApiError::Invalid("before".into()))?),
        None => None,
    };
    let after = match ctx.params.str("after") {
        Some(s) => Some(crate::time::parse(&s).ok_or_else(|| ApiError::Invalid("after".into()))?),
        None => None,
    };
    let desc = ctx.sort_desc(true)?;
    let mut found: Vec<&Event> = ctx
        .store
        .events
        .values()
        .filter(|e| filter(e))
        .filter(|e| {
            ctx.store
                .projects
                .get(&e.project_id)
                .is_some_and(|p| ctx.store.can_read_project(p, ctx.caller))
        })
        .filter(|e| {
            // V4 `EventsFinder#by_action`: `where(action: Event::ACTIONS[action])`.
            action.as_deref().map_or(true, |a| e.action == a)
        })
        .filter(|e| {
            target_type.as_deref().map_or(true, |t| {
                e.target_type
                    .as_deref()
                    .is_some_and(|x| x.to_lowercase().replace('_', "") == t.replace('_', ""))
            })
        })
        .filter(|e| before.map_or(true, |b| e.created_at < b))
        .filter(|e| after.map_or(true, |a| e.created_at > a))
        .collect();
    found.sort_by_key(|e| (e.created_at, e.id));
    if desc {
        found.reverse();
    }
    Ok(found.into_iter().map(|e| render_event(ctx.store, e)).collect())
}

fn project_events(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = ctx.project_id()?;
    let items = events(ctx, |e| e.project_id == id)?;
    ctx.paginate(items)
}

fn user_events(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.user_id()?;
    let raw = ctx.path_param("id").to_string();
    let uid = ctx
        .store
        .user_by_id_or_username(&raw)
        .map(|u| u.id)
        .ok_or(ApiError::NotFound("User"))?;
    let items = events(ctx, |e| e.author_id == uid)?;
    ctx.paginate(items)
}

fn language_of(path: &str) -> Option<&'static str> {
    let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase())?;
    Some(match ext.as_str() {
        "rs" => "Rust",
        "md" => "Markdown",
        "toml" => "TOML",
        "py" => "Python",
        "rb" => "Ruby",
        "js" => "JavaScript",
        "ts" => "TypeScript",
        "go" => "Go",
        "c" | "h" => "C",
        "sh" => "Shell",
        "yml" | "yaml" => "YAML",
        _ => return None,
    })
}

fn languages(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = super::repository::readable_project(ctx)?;
    let p = ctx.project(id)?;
    let mut bytes: BTreeMap<&str, usize> = BTreeMap::new();
    if let Some(head) = p.repo.resolve(&p.default_branch) {
        for (path, content) in head.tree.iter() {
            if let Some(lang) = language_of(path) {
                *bytes.entry(lang).or_insert(0) += content.len();
            }
        }
    }
    let total: usize = bytes.values().sum();
    let mut list: Vec<(&str, usize)> = bytes.into_iter().collect();
    list.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    let mut map = serde_json::Map::new();
    for (lang, n) in list {
        let share = if total == 0 {
            0.0
        } else {
            (n as f64 * 10_000.0 / total as f64).round() / 100.0
        };
        map.insert(lang.to_string(), json!(share));
    }
    Ok(Reply::ok(Value::Object(map)))
}

fn create_for_user(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.require_admin()?;
    let uid = ctx.path_u64("user_id", "User")?;
    let ns = ctx
        .store
        .users
        .get(&uid)
        .map(|u| u.namespace_id)
        .ok_or(ApiError::NotFound("User"))?;
    ctx.params.required_nonblank("name")?;
    super::projects::create_for(ctx, uid, Some(ns))
}

/// V4 `Projects::TransferService#execute`: a refusal is stored as the project's `new_namespace` error, which both
/// transfer endpoints render with `render_api_error!("Failed to transfer project #{project.errors.messages}", 400)`.
fn transfer_failed(reason: &str) -> ApiError {
    ApiError::BadRequest(format!(
        "Failed to transfer project {{:new_namespace=>[\"{reason}\"]}}"
    ))
}

/// Moves project `pid` into namespace `ns` as V4's `Projects::TransferService` does: refused unless the namespace
/// is another than the project's and the caller may create projects in it (`allowed_transfer?`: Maintainer+ of a
/// group, the owner of a user namespace, or an administrator), or when a project with the same path is there.
fn transfer_project(ctx: &mut Ctx<'_>, pid: u64, ns: u64) -> Result<(), ApiError> {
    let uid = ctx.user_id()?;
    let project = ctx.project(pid)?;
    let (current, path) = (project.namespace_id, project.path.clone());
    let may_create = ctx.is_admin() || ctx.store.namespace_level(ns, uid).unwrap_or(0) >= access::MAINTAINER;
    if ns == current || !may_create {
        return Err(transfer_failed("Transfer failed, please contact an admin."));
    }
    if ctx
        .store
        .projects
        .values()
        .any(|p| p.namespace_id == ns && p.id != pid && p.path.eq_ignore_ascii_case(&path))
    {
        return Err(transfer_failed(
            "Project with same path in target namespace already exists",
        ));
    }
    if let Some(p) = ctx.store.projects.get_mut(&pid) {
        p.namespace_id = ns;
    }
    Ok(())
}

/// V4 `lib/api/groups.rb` "Transfer a project to the group namespace": administrators only, then the group (an id
/// or a path) and the project (`requires :project_id, type: String`, an id or a URL-encoded path, found with
/// `find_project!`); answers the group's details with 201.
fn transfer(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.require_admin()?;
    let group = ctx.group_id()?;
    let raw = ctx.path_param("project_id").to_string();
    let pid = match raw.parse::<u64>() {
        Ok(id) => ctx.store.projects.contains_key(&id).then_some(id),
        Err(_) => ctx.store.project_by_full_path(&raw),
    }
    .ok_or(ApiError::NotFound("Project"))?;
    transfer_project(ctx, pid, group)?;
    super::groups::show_detail(ctx, group).map(Reply::created)
}

/// V4 `lib/api/projects.rb` `PUT :id/transfer`: `authorize! :change_namespace` (the project's Owner), then
/// `find_namespace!` (an id when all digits, else a full path; `404 Namespace Not Found` unless the caller may
/// read it: a member of the group or above, the user namespace's owner, an administrator), then the transfer.
fn transfer_to_namespace(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let pid = ctx.project_id()?;
    ctx.require_level(pid, access::OWNER)?;
    let raw = ctx.params.required_str("namespace")?;
    let found = if !raw.is_empty() && raw.bytes().all(|b| b.is_ascii_digit()) {
        raw.parse::<u64>()
            .ok()
            .filter(|id| ctx.store.namespaces.contains_key(id))
    } else {
        ctx.store.namespace_by_full_path(&raw)
    };
    let ns = found
        .filter(|ns| ctx.is_admin() || ctx.store.namespace_level(*ns, uid).is_some())
        .ok_or(ApiError::NotFound("Namespace"))?;
    transfer_project(ctx, pid, ns)?;
    super::projects::render(ctx, pid, false).map(Reply::ok)
}

/// The groups above a project: its namespace and that namespace's ancestors (none for a personal project).
fn project_groups(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = ctx.project_id()?;
    let ns = ctx.project(pid)?.namespace_id;
    let items: Vec<Value> = ctx
        .store
        .namespace_chain(ns)
        .into_iter()
        .filter(|g| g.is_group())
        .map(|g| {
            serde_json::json!({
                "id": g.id,
                "name": g.name,
                "full_name": ctx.store.namespace_full_name(g.id),
                "full_path": ctx.store.namespace_full_path(g.id),
                "avatar_url": Value::Null,
                "web_url": format!("{}/groups/{}", ctx.store.base_url, ctx.store.namespace_full_path(g.id)),
            })
        })
        .collect();
    ctx.paginate(items)
}
