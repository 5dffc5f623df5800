//! Board entities: `Board` (with its project and label lists) and `List`.

use serde_json::{json, Value};

use crate::store::{Board, BoardList, Store};

/// The `List` entity: `{id, label, position}`.
pub fn list(store: &Store, l: &BoardList) -> Value {
    let label = store
        .labels
        .get(&l.label_id)
        .map(|lb| json!({"name": lb.name, "color": lb.color, "description": lb.description}))
        .unwrap_or(Value::Null);
    json!({"id": l.id, "label": label, "position": l.position})
}

/// The `Board` entity.
pub fn board(store: &Store, b: &Board) -> Value {
    let project = store
        .projects
        .get(&b.project_id)
        .map(|p| {
            json!({
                "id": p.id,
                "name": p.name,
                "name_with_namespace": format!("{} / {}", store.namespace_full_name(p.namespace_id), p.name),
                "path": p.path,
                "path_with_namespace": store.project_full_path(p),
                "http_url_to_repo": format!("{}/{}.git", store.base_url, store.project_full_path(p)),
                "web_url": format!("{}/{}", store.base_url, store.project_full_path(p)),
            })
        })
        .unwrap_or(Value::Null);
    let lists: Vec<Value> = store
        .board_lists(b.id)
        .into_iter()
        .map(|l| list(store, l))
        .collect();
    json!({
        "id": b.id,
        "name": b.name,
        "project": project,
        "milestone": Value::Null,
        "lists": lists,
    })
}
