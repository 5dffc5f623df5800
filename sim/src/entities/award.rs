//! `AwardEmoji` and `Todo` entities.

use serde_json::{json, Value};

use super::ts;
use crate::store::awards::todo_action_name;
use crate::store::{AwardEmoji, NoteableKind, Store, Todo};

/// `{id, name, user, created_at, updated_at, awardable_id, awardable_type}`.
pub fn award(store: &Store, a: &AwardEmoji) -> Value {
    json!({
        "id": a.id,
        "name": a.name,
        "user": super::user::basic_by_id(store, Some(a.user_id)),
        "created_at": ts(a.created_at),
        "updated_at": ts(a.updated_at),
        "awardable_id": a.awardable_id,
        "awardable_type": a.kind.as_str(),
    })
}

/// The `Todo` entity; `target` is the issue or merge request entity.
pub fn todo(store: &Store, t: &Todo) -> Value {
    let project = store.projects.get(&t.project_id);
    let (target, path) = match t.target_kind {
        NoteableKind::Issue => (
            store
                .issues
                .get(&t.target_id)
                .map(|i| (super::issue::issue(store, i, None), format!("issues/{}", i.iid))),
            "issues",
        ),
        _ => (
            store.merge_requests.get(&t.target_id).map(|m| {
                (
                    super::merge_request::merge_request(store, m, None),
                    format!("merge_requests/{}", m.iid),
                )
            }),
            "merge_requests",
        ),
    };
    let (target, sub) = target.unwrap_or((Value::Null, path.to_string()));
    let target_url = project
        .map(|p| format!("{}/{}/{sub}", store.base_url, store.project_full_path(p)))
        .unwrap_or_default();
    json!({
        "id": t.id,
        "project": project.map(|p| super::project::simple(store, p)).unwrap_or(Value::Null),
        "author": super::user::basic_by_id(store, Some(t.author_id)),
        "action_name": todo_action_name(t.action),
        "target_type": t.target_kind.as_str(),
        "target": target,
        "target_url": target_url,
        "body": t.body,
        "state": t.state,
        "created_at": ts(t.created_at),
    })
}
