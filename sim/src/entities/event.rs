//! The `Event` entity.

use serde_json::{json, Value};

use super::ts;
use crate::store::{Event, Store};

/// `{project_id, action_name, target_id, target_iid, target_type, author_id, target_title, created_at, author,
/// author_username}` plus `note` for note events and `push_data` for pushes.
pub fn event(store: &Store, e: &Event) -> Value {
    let mut v = json!({
        "id": e.id,
        "project_id": e.project_id,
        "action_name": e.action_name,
        "target_id": e.target_id,
        "target_iid": e.target_iid,
        "target_type": e.target_type,
        "author_id": e.author_id,
        "target_title": e.target_title,
        "created_at": ts(e.created_at),
        "author": super::user::basic_by_id(store, Some(e.author_id)),
        "author_username": store.users.get(&e.author_id).map(|u| u.username.clone()),
    });
    if let Value::Object(map) = &mut v {
        if let Some(note) = e.note_id.and_then(|id| store.notes.get(&id)) {
            map.insert("note".into(), super::note::note(store, note));
        }
        if let Some(push) = &e.push {
            map.insert(
                "push_data".into(),
                json!({
                    "commit_count": push.commit_count,
                    "action": push.action,
                    "ref_type": push.ref_type,
                    "commit_from": push.commit_from,
                    "commit_to": push.commit_to,
                    "ref": push.ref_name,
                    "commit_title": push.commit_title,
                }),
            );
        }
    }
    v
}
