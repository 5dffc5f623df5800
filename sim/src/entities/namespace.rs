//! Namespace and group entities.

use serde_json::{json, Value};

use crate::store::{Namespace, NamespaceKind, Store};

/// `NamespaceBasic`: `{id, name, path, kind, full_path, parent_id}`.
pub fn basic(store: &Store, ns: &Namespace) -> Value {
    json!({
        "id": ns.id,
        "name": ns.name,
        "path": ns.path,
        "kind": match ns.kind { NamespaceKind::User(_) => "user", NamespaceKind::Group => "group" },
        "full_path": store.namespace_full_path(ns.id),
        "parent_id": ns.parent_id,
    })
}

/// The `Group` entity.
pub fn group(store: &Store, ns: &Namespace, statistics: bool) -> Value {
    let full_path = store.namespace_full_path(ns.id);
    let mut v = json!({
        "id": ns.id,
        "name": ns.name,
        "path": ns.path,
        "description": ns.description,
        "visibility": ns.visibility.as_str(),
        "lfs_enabled": ns.lfs_enabled,
        "avatar_url": Value::Null,
        "web_url": format!("{}/groups/{}", store.base_url, full_path),
        "request_access_enabled": ns.request_access_enabled,
        "full_name": store.namespace_full_name(ns.id),
        "full_path": full_path,
        "parent_id": ns.parent_id,
    });
    if statistics {
        let repo: usize = store
            .projects
            .values()
            .filter(|p| p.namespace_id == ns.id)
            .map(|p| super::project::stats(p).1)
            .sum();
        if let Value::Object(map) = &mut v {
            map.insert(
                "statistics".into(),
                json!({
                    "storage_size": repo,
                    "repository_size": repo,
                    "lfs_objects_size": 0,
                    "job_artifacts_size": 0,
                }),
            );
        }
    }
    v
}
