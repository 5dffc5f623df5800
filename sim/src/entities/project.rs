//! Project entities: `BasicProjectDetails` (`simple=true`, anonymous lists), the full `Project`, and
//! `ProjectWithAccess` (`permissions`) for signed-in callers.

use serde_json::{json, Map, Value};

use super::ts;
use crate::store::{access, members::level_in, NamespaceKind, Project, Store};

/// What to include in a project rendering.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProjectView {
    /// The caller (None when anonymous).
    pub viewer: Option<u64>,
    /// Include `statistics`.
    pub statistics: bool,
    /// Include `permissions`.
    pub permissions: bool,
}

/// (commit_count, repository_size) of the default branch.
pub fn stats(project: &Project) -> (usize, usize) {
    let head = project.repo.resolve(&project.default_branch);
    let commits = head.map(|c| project.repo.history(&c.id).len()).unwrap_or(0);
    let size = head.map(|c| c.tree.values().map(Vec::len).sum()).unwrap_or(0);
    (commits, size)
}

/// The `default_branch` a project shows: null while its repository has no branch, as V4's `Project#default_branch`
/// (`repository.root_ref`, nil for an empty repository, with no default branch name configured); the name the
/// first commit will use is kept aside until then.
pub fn shown_default_branch(p: &Project) -> Option<&str> {
    if p.repo.branches.is_empty() {
        None
    } else {
        Some(p.default_branch.as_str())
    }
}

/// `BasicProjectDetails`.
pub fn simple(store: &Store, p: &Project) -> Value {
    let full_path = store.project_full_path(p);
    let host = store
        .base_url
        .split("://")
        .nth(1)
        .unwrap_or(&store.base_url)
        .split(':')
        .next()
        .unwrap_or("localhost")
        .to_string();
    json!({
        "id": p.id,
        "description": p.description,
        "name": p.name,
        "name_with_namespace": format!("{} / {}", store.namespace_full_name(p.namespace_id), p.name),
        "path": p.path,
        "path_with_namespace": full_path,
        "created_at": ts(p.created_at),
        "default_branch": shown_default_branch(p),
        "tag_list": p.tag_list,
        "ssh_url_to_repo": format!("git@{host}:{full_path}.git"),
        "http_url_to_repo": format!("{}/{full_path}.git", store.base_url),
        "web_url": format!("{}/{full_path}", store.base_url),
        "avatar_url": Value::Null,
        "star_count": p.starrers.len(),
        "forks_count": store.projects.values().filter(|f| f.forked_from == Some(p.id)).count(),
        "last_activity_at": ts(p.last_activity_at),
    })
}

/// The full `Project` entity.
pub fn full(store: &Store, p: &Project, view: ProjectView) -> Value {
    let mut v = simple(store, p);
    let Value::Object(map) = &mut v else {
        return v;
    };
    let api = format!("{}/api/v4/projects/{}", store.base_url, p.id);
    let ns = store.namespaces.get(&p.namespace_id);
    map.insert(
        "namespace".into(),
        ns.map(|ns| super::namespace::basic(store, ns))
            .unwrap_or(Value::Null),
    );
    map.insert(
        "_links".into(),
        json!({
            "self": api,
            "issues": format!("{api}/issues"),
            "merge_requests": format!("{api}/merge_requests"),
            "repo_branches": format!("{api}/repository/branches"),
            "labels": format!("{api}/labels"),
            "events": format!("{api}/events"),
            "members": format!("{api}/members"),
        }),
    );
    map.insert("archived".into(), json!(p.archived));
    map.insert("empty_repo".into(), json!(p.repo.branches.is_empty()));
    map.insert("visibility".into(), json!(p.visibility.as_str()));
    if let Some(NamespaceKind::User(owner)) = ns.map(|ns| ns.kind) {
        map.insert("owner".into(), super::user::basic_by_id(store, Some(owner)));
    }
    for name in [
        "resolve_outdated_diff_discussions",
        "container_registry_enabled",
        "issues_enabled",
        "merge_requests_enabled",
        "wiki_enabled",
        "jobs_enabled",
        "snippets_enabled",
        "shared_runners_enabled",
        "lfs_enabled",
    ] {
        map.insert(name.into(), json!(p.flag(name)));
    }
    map.insert("creator_id".into(), json!(p.creator_id));
    if let Some(source) = p.forked_from.and_then(|id| store.projects.get(&id)) {
        map.insert("forked_from_project".into(), simple(store, source));
    }
    map.insert("import_status".into(), json!("none"));
    map.insert("import_error".into(), Value::Null);
    // V4 `lib/api/entities/project.rb`: `expose :open_issues_count, if: ... project.feature_available?(:issues, ...)`.
    if p.flag("issues_enabled") {
        map.insert(
            "open_issues_count".into(),
            json!(store
                .issues
                .values()
                .filter(|i| i.project_id == p.id && i.state == "opened")
                .count()),
        );
    }
    let level = view.viewer.map(|uid| store.effective_level(p, uid)).unwrap_or(0);
    if level >= access::MAINTAINER {
        map.insert("runners_token".into(), json!(p.runners_token));
    }
    map.insert("public_jobs".into(), json!(p.flag("public_jobs")));
    map.insert("ci_config_path".into(), json!(p.ci_config_path));
    let shared: Vec<Value> = store
        .group_links
        .values()
        .filter(|l| l.project_id == p.id)
        .filter_map(|l| {
            store.namespaces.get(&l.group_id).map(|g| {
                json!({
                    "group_id": g.id,
                    "group_name": g.name,
                    "group_full_path": store.namespace_full_path(g.id),
                    "group_access_level": l.group_access,
                    "expires_at": l.expires_at,
                })
            })
        })
        .collect();
    map.insert("shared_with_groups".into(), Value::Array(shared));
    for name in [
        "only_allow_merge_if_pipeline_succeeds",
        "request_access_enabled",
        "only_allow_merge_if_all_discussions_are_resolved",
        "printing_merge_request_link_enabled",
    ] {
        map.insert(name.into(), json!(p.flag(name)));
    }
    map.insert("merge_method".into(), json!(p.merge_method));
    if view.statistics {
        let (commit_count, size) = stats(p);
        map.insert(
            "statistics".into(),
            json!({
                "commit_count": commit_count,
                "storage_size": size,
                "repository_size": size,
                "lfs_objects_size": 0,
                "job_artifacts_size": 0,
            }),
        );
    }
    if view.permissions {
        if let Some(uid) = view.viewer {
            map.insert("permissions".into(), permissions(store, p, uid));
        }
    }
    v
}

fn permissions(store: &Store, p: &Project, user_id: u64) -> Value {
    let entry = |level: Option<u8>| match level {
        Some(level) => json!({"access_level": level, "notification_level": 3}),
        None => Value::Null,
    };
    let group_level = store.namespaces.get(&p.namespace_id).and_then(|ns| {
        if ns.is_group() {
            store.namespace_level(ns.id, user_id)
        } else {
            None
        }
    });
    let mut perms = Map::new();
    perms.insert("project_access".into(), entry(level_in(&p.members, user_id)));
    perms.insert("group_access".into(), entry(group_level));
    Value::Object(perms)
}
