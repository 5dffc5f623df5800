//! The `Note` entity.

use serde_json::{json, Value};

use super::ts;
use crate::store::{Note, NoteableKind, Store};

/// `{id, type, body, attachment, author, created_at, updated_at, system, noteable_id, noteable_type,
/// noteable_iid, resolvable}`.
pub fn note(store: &Store, n: &Note) -> Value {
    let resolvable = n.in_discussion && n.noteable_kind == NoteableKind::MergeRequest;
    let mut v = json!({
        "id": n.id,
        "type": if n.in_discussion { json!("DiscussionNote") } else { Value::Null },
        "body": n.body,
        "attachment": Value::Null,
        "author": super::user::basic_by_id(store, Some(n.author_id)),
        "created_at": ts(n.created_at),
        "updated_at": ts(n.updated_at),
        "system": n.system,
        "noteable_id": n.noteable_id,
        "noteable_type": n.noteable_kind.as_str(),
        "noteable_iid": if n.noteable_kind == NoteableKind::Snippet { Value::Null } else { json!(n.noteable_iid) },
        "resolvable": resolvable,
    });
    if let (true, Value::Object(map)) = (resolvable, &mut v) {
        map.insert("resolved".into(), json!(n.resolved));
        map.insert(
            "resolved_by".into(),
            super::user::basic_by_id(store, n.resolved_by),
        );
    }
    v
}

/// A discussion: its id, whether it is a lone note outside any thread, and its notes oldest first.
pub fn discussion(store: &Store, id: &str, notes: &[&Note]) -> Value {
    json!({
        "id": id,
        "individual_note": notes.iter().all(|n| !n.in_discussion),
        "notes": notes.iter().map(|n| note(store, n)).collect::<Vec<_>>(),
    })
}
