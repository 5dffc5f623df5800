//! Groups and namespaces: `GET/POST /groups`, `GET/PUT/DELETE /groups/:id` (with `projects` and `shared_projects`),
//! `GET /groups/:id/projects` (shared ones too unless `with_shared=false`),
//! `GET /groups/:id/subgroups` and `…/descendant_groups`, sharing a group with another (`POST /groups/:id/share`,
//! `DELETE /groups/:id/share/:group_id`),
//! `GET /namespaces`, `GET /namespaces/:id` (an id or a path) and `GET /namespaces/:namespace/exists`.

use http::Method;
use serde_json::{json, Value};

use crate::context::Ctx;
use crate::entities::{namespace, project};
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::store::{access, Member, NamespaceKind, Visibility};

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    vec![
        api(Method::GET, "/groups", list),
        api(Method::POST, "/groups", create),
        api(Method::GET, "/groups/{id}", show),
        api(Method::PUT, "/groups/{id}", update),
        api(Method::DELETE, "/groups/{id}", delete),
        api(Method::GET, "/groups/{id}/projects", projects),
        api(Method::GET, "/groups/{id}/subgroups", subgroups),
        api(Method::GET, "/groups/{id}/descendant_groups", descendant_groups),
        api(Method::POST, "/groups/{id}/share", share),
        api(Method::DELETE, "/groups/{id}/share/{group_id}", unshare),
        api(Method::GET, "/namespaces", namespaces),
        api(Method::GET, "/namespaces/{id}", namespace_show),
        api(Method::GET, "/namespaces/{id}/exists", namespace_exists),
    ]
}

fn list(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let search = ctx.params.str("search").map(|s| s.to_lowercase());
    let skip = ctx.params.u64_list("skip_groups")?.unwrap_or_default();
    let owned = ctx.params.flag("owned", false)?;
    let all_available = ctx.params.flag("all_available", false)?;
    let statistics = ctx.params.flag("statistics", false)? && ctx.is_admin();
    let admin = ctx.is_admin();
    let order_by = ctx.params.str("order_by").unwrap_or_else(|| "name".into());
    let desc = ctx.sort_desc(false)?;
    let mut groups: Vec<_> = ctx
        .store
        .namespaces
        .values()
        .filter(|ns| ns.is_group() && ctx.can_read_group(ns.id) && !skip.contains(&ns.id))
        .filter(|ns| {
            let member = ctx.caller.and_then(|uid| ctx.store.namespace_level(ns.id, uid));
            if owned {
                member == Some(access::OWNER)
            } else {
                admin || all_available || ctx.caller.is_none() || member.is_some()
            }
        })
        .filter(|ns| {
            search.as_deref().map_or(true, |s| {
                ns.name.to_lowercase().contains(s) || ns.path.to_lowercase().contains(s)
            })
        })
        .collect();
    match order_by.as_str() {
        "name" => groups.sort_by_key(|ns| ns.name.to_lowercase()),
        "path" => groups.sort_by_key(|ns| ns.path.to_lowercase()),
        "id" => groups.sort_by_key(|ns| ns.id),
        _ => return Err(ApiError::Invalid("order_by".into())),
    }
    if desc {
        groups.reverse();
    }
    let items = groups
        .into_iter()
        .map(|ns| namespace::group(ctx.store, ns, statistics))
        .collect();
    ctx.paginate(items)
}

fn create(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let name = ctx.params.required_nonblank("name")?;
    let path = ctx.params.required_nonblank("path")?;
    let visibility = parse_visibility(ctx, Visibility::Private)?;
    let parent_id = ctx.params.u64("parent_id")?;
    let can_create = ctx.store.users.get(&uid).is_some_and(|u| u.can_create_group);
    if !can_create && !ctx.is_admin() {
        return Err(ApiError::Forbidden);
    }
    if let Some(parent) = parent_id {
        if !ctx.store.namespaces.get(&parent).is_some_and(|ns| ns.is_group()) {
            return Err(ApiError::NotFound("Group"));
        }
        if ctx.group_level(parent) < access::OWNER {
            return Err(ApiError::Forbidden);
        }
    }
    if !super::users::valid_username(&path) {
        return Err(ApiError::validation(
            "path",
            "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-' or end in '.', '.git' or '.atom'.",
        ));
    }
    let full = match parent_id {
        Some(p) => format!("{}/{path}", ctx.store.namespace_full_path(p)),
        None => path.clone(),
    };
    if ctx.store.namespace_by_full_path(&full).is_some() {
        return Err(ApiError::validation("path", "has already been taken"));
    }
    let id = ctx
        .store
        .insert_namespace(&name, &path, NamespaceKind::Group, parent_id, visibility);
    let description = ctx.params.str("description").unwrap_or_default();
    let lfs = ctx.params.flag("lfs_enabled", true)?;
    let request_access = ctx.params.flag("request_access_enabled", false)?;
    if let Some(ns) = ctx.store.namespaces.get_mut(&id) {
        ns.description = description;
        ns.lfs_enabled = lfs;
        ns.request_access_enabled = request_access;
        ns.members.push(Member {
            user_id: uid,
            access_level: access::OWNER,
            expires_at: None,
        });
    }
    let ns = ctx.store.namespaces.get(&id).ok_or(ApiError::NotFound("Group"))?;
    Ok(Reply::created(namespace::group(ctx.store, ns, false)))
}

fn parse_visibility(ctx: &Ctx<'_>, default: Visibility) -> Result<Visibility, ApiError> {
    match ctx.params.str("visibility") {
        None => Ok(default),
        Some(v) => Visibility::parse(&v).ok_or_else(|| ApiError::Invalid("visibility".into())),
    }
}

/// `GroupDetail` of a group as the caller sees it.
pub fn show_detail(ctx: &Ctx<'_>, id: u64) -> Result<Value, ApiError> {
    let ns = ctx.store.namespaces.get(&id).ok_or(ApiError::NotFound("Group"))?;
    let mut v = namespace::group(ctx.store, ns, false);
    let view = project::ProjectView {
        viewer: ctx.caller,
        ..Default::default()
    };
    let projects: Vec<Value> = ctx
        .store
        .projects
        .values()
        .filter(|p| p.namespace_id == id && ctx.store.can_read_project(p, ctx.caller))
        .map(|p| project::full(ctx.store, p, view))
        .collect();
    // V4 `lib/api/entities/group_detail.rb`: `shared_projects` are the projects shared with the group
    // (`GroupProjectsFinder` `only_shared`, `POST /projects/:id/share`) that the caller can see, as
    // `Entities::Project` like `projects`.
    let shared_projects: Vec<Value> = ctx
        .store
        .projects
        .values()
        .filter(|p| {
            ctx.store
                .group_links
                .values()
                .any(|l| l.group_id == id && l.project_id == p.id)
        })
        .filter(|p| ctx.store.can_read_project(p, ctx.caller))
        .map(|p| project::full(ctx.store, p, view))
        .collect();
    if let Value::Object(map) = &mut v {
        map.insert("projects".into(), Value::Array(projects));
        map.insert("shared_projects".into(), Value::Array(shared_projects));
        let shared: Vec<Value> = ctx
            .store
            .group_shares
            .iter()
            .filter(|((shared, _), _)| *shared == id)
            .filter_map(|((_, with), share)| {
                ctx.store.namespaces.get(with).map(|g| {
                    json!({
                        "group_id": g.id,
                        "group_name": g.name,
                        "group_full_path": ctx.store.namespace_full_path(g.id),
                        "group_access_level": share.group_access,
                        "expires_at": share.expires_at,
                    })
                })
            })
            .collect();
        map.insert("shared_with_groups".into(), Value::Array(shared));
    }
    Ok(v)
}

fn show(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = ctx.group_id()?;
    Ok(Reply::ok(show_detail(ctx, id)?))
}

fn update(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = ctx.group_id()?;
    ctx.user_id()?;
    if ctx.group_level(id) < access::OWNER {
        return Err(ApiError::Forbidden);
    }
    let visibility = match ctx.params.str("visibility") {
        Some(v) => Some(Visibility::parse(&v).ok_or_else(|| ApiError::Invalid("visibility".into()))?),
        None => None,
    };
    let lfs = ctx.params.bool("lfs_enabled")?;
    let request_access = ctx.params.bool("request_access_enabled")?;
    let name = ctx.params.str("name");
    let path = ctx.params.str("path");
    let description = ctx.params.str("description");
    if let Some(ns) = ctx.store.namespaces.get_mut(&id) {
        if let Some(v) = name {
            ns.name = v;
        }
        if let Some(v) = path {
            ns.path = v;
        }
        if let Some(v) = description {
            ns.description = v;
        }
        if let Some(v) = visibility {
            ns.visibility = v;
        }
        if let Some(v) = lfs {
            ns.lfs_enabled = v;
        }
        if let Some(v) = request_access {
            ns.request_access_enabled = v;
        }
    }
    Ok(Reply::ok(show_detail(ctx, id)?))
}

fn delete(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = ctx.group_id()?;
    ctx.user_id()?;
    if ctx.group_level(id) < access::OWNER {
        return Err(ApiError::Forbidden);
    }
    let doomed: Vec<u64> = ctx
        .store
        .namespaces
        .keys()
        .copied()
        .filter(|ns| ctx.store.namespace_chain(*ns).iter().any(|a| a.id == id))
        .collect();
    for ns in &doomed {
        ctx.store.namespaces.remove(ns);
    }
    ctx.store
        .group_shares
        .retain(|(shared, with), _| !doomed.contains(shared) && !doomed.contains(with));
    ctx.store.group_links.retain(|_, l| !doomed.contains(&l.group_id));
    ctx.store.variables.retain(|(owner, _), _| match owner {
        crate::store::VariableOwner::Group(g) => !doomed.contains(g),
        _ => true,
    });
    let projects: Vec<u64> = ctx
        .store
        .projects
        .values()
        .filter(|p| doomed.contains(&p.namespace_id))
        .map(|p| p.id)
        .collect();
    for pid in projects {
        super::projects::remove_project(ctx.store, pid);
    }
    Ok(Reply::accepted())
}

/// The visible groups below `:id`: its children, or (`all`) every descendant.
fn below(ctx: &mut Ctx<'_>, all: bool) -> Result<Reply, ApiError> {
    let id = ctx.group_id()?;
    if !ctx.can_read_group(id) {
        return Err(ApiError::NotFound("Group"));
    }
    let mut found: Vec<_> = ctx
        .store
        .namespaces
        .values()
        .filter(|ns| ns.is_group() && ns.id != id && ctx.can_read_group(ns.id))
        .filter(|ns| {
            if all {
                ctx.store.namespace_chain(ns.id).iter().any(|a| a.id == id)
            } else {
                ns.parent_id == Some(id)
            }
        })
        .collect();
    found.sort_by_key(|ns| ns.name.to_lowercase());
    let items = found
        .into_iter()
        .map(|ns| namespace::group(ctx.store, ns, false))
        .collect();
    ctx.paginate(items)
}

fn subgroups(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    below(ctx, false)
}

fn descendant_groups(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    below(ctx, true)
}

/// Shares the group with another group (Owners); answers the shared group's details.
fn share(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = ctx.group_id()?;
    ctx.user_id()?;
    if ctx.group_level(id) < access::OWNER {
        return Err(ApiError::Forbidden);
    }
    let with = ctx.params.required_u64("group_id")?;
    let level = ctx.params.required_u64("group_access")?;
    let level = u8::try_from(level)
        .ok()
        .filter(|l| [10, 20, 30, 40, 50].contains(l))
        .ok_or_else(|| ApiError::Param("group_access does not have a valid value".into()))?;
    if !ctx.store.namespaces.get(&with).is_some_and(|ns| ns.is_group()) || !ctx.can_read_group(with) {
        return Err(ApiError::NotFound("Group"));
    }
    if with == id || ctx.store.group_shares.contains_key(&(id, with)) {
        return Err(ApiError::Conflict("Shared group has already been taken".into()));
    }
    let expires_at = ctx.params.str("expires_at");
    ctx.store.group_shares.insert(
        (id, with),
        crate::store::GroupShare {
            group_access: level,
            expires_at,
        },
    );
    Ok(Reply::created(show_detail(ctx, id)?))
}

fn unshare(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    // `requires :group_id, type: Integer`: after authentication, a non-integer is a 400 before the group is
    // looked at.
    ctx.user_id()?;
    let with = ctx.path_integer("group_id")?;
    let id = ctx.group_id()?;
    if ctx.group_level(id) < access::OWNER {
        return Err(ApiError::Forbidden);
    }
    if ctx.store.group_shares.remove(&(id, with)).is_none() {
        return Err(ApiError::NotFound("Group Link"));
    }
    Ok(Reply::no_content())
}

fn projects(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = ctx.group_id()?;
    let simple = ctx.params.flag("simple", false)?;
    // V4 `lib/api/groups.rb`: `archived` (no default: both when absent) and `visibility` (Grape `values:`).
    let archived = ctx.params.bool("archived")?;
    let visibility = match ctx.params.str("visibility") {
        Some(v) => Some(
            Visibility::parse(&v)
                .ok_or_else(|| ApiError::Param("visibility does not have a valid value".into()))?,
        ),
        None => None,
    };
    // V4 `lib/api/groups.rb` `optional :with_shared, type: Boolean, default: true`: `GroupProjectsFinder` lists the
    // projects shared with the group too unless it is false (10.8 listed them always).
    let with_shared = ctx.params.flag("with_shared", true)?;
    let view = project::ProjectView {
        viewer: ctx.caller,
        ..Default::default()
    };
    let mut items: Vec<_> = ctx
        .store
        .projects
        .values()
        .filter(|p| {
            p.namespace_id == id
                || (with_shared
                    && ctx
                        .store
                        .group_links
                        .values()
                        .any(|l| l.group_id == id && l.project_id == p.id))
        })
        .filter(|p| ctx.store.can_read_project(p, ctx.caller))
        .filter(|p| archived.map_or(true, |a| p.archived == a))
        .filter(|p| visibility.map_or(true, |v| p.visibility == v))
        .collect();
    items.sort_by_key(|p| std::cmp::Reverse((p.created_at, p.id)));
    let items = items
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

fn visible_namespaces(ctx: &Ctx<'_>) -> Result<Vec<u64>, ApiError> {
    let uid = ctx.user_id()?;
    let admin = ctx.is_admin();
    Ok(ctx
        .store
        .namespaces
        .values()
        .filter(|ns| match ns.kind {
            NamespaceKind::User(owner) => admin || owner == uid,
            NamespaceKind::Group => admin || ctx.store.namespace_level(ns.id, uid).is_some(),
        })
        .map(|ns| ns.id)
        .collect())
}

fn namespaces(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let search = ctx.params.str("search").map(|s| s.to_lowercase());
    let items = visible_namespaces(ctx)?
        .into_iter()
        .filter_map(|id| ctx.store.namespaces.get(&id))
        .filter(|ns| {
            search.as_deref().map_or(true, |s| {
                ns.name.to_lowercase().contains(s) || ns.path.to_lowercase().contains(s)
            })
        })
        .map(|ns| namespace::basic(ctx.store, ns))
        .collect();
    ctx.paginate(items)
}

fn namespace_show(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let raw = ctx.path_param("id").to_string();
    let id = match raw.parse::<u64>() {
        Ok(id) => Some(id),
        Err(_) => ctx.store.namespace_by_full_path(&raw),
    };
    let visible = visible_namespaces(ctx)?;
    let ns = id
        .filter(|id| visible.contains(id))
        .and_then(|id| ctx.store.namespaces.get(&id))
        .ok_or(ApiError::NotFound("Namespace"))?;
    Ok(Reply::ok(namespace::basic(ctx.store, ns)))
}

/// Whether a namespace path is taken at the top level (or under `parent_id`), with a free suggestion if it is.
fn namespace_exists(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.user_id()?;
    let path = ctx.path_param("id").to_string();
    let parent = ctx.params.u64("parent_id")?;
    let taken = |candidate: &str| {
        ctx.store
            .namespaces
            .values()
            .any(|ns| ns.parent_id == parent && ns.path.eq_ignore_ascii_case(candidate))
    };
    let exists = taken(&path);
    let suggests: Vec<String> = if exists {
        (1..)
            .map(|n| format!("{path}{n}"))
            .find(|c| !taken(c))
            .into_iter()
            .collect()
    } else {
        Vec::new()
    };
    Ok(Reply::ok(
        serde_json::json!({"exists": exists, "suggests": suggests}),
    ))
}
