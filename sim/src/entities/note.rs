//! The `Note` entity.

use serde_json::{json, Value};

use super::ts;
use crate::store::{Note, NoteableKind, Store};

/// `{id, type, body, attachment, author, created_at, updated_at, system, noteable_id, noteable_type,
/// noteable_iid, resolvable}`.
pub fn note(store: &Store, n: &Note) -> Value {
    json!({
        "id": n.id,
        "type": Value::Null,
        "body": n.body,
        "attachment": Value::Null,
        "author": super::user::basic_by_id(store, Some(n.author_id)),
        "created_at": ts(n.created_at),
        "updated_at": ts(n.updated_at),
        "system": n.system,
        "noteable_id": n.noteable_id,
        "noteable_type": n.noteable_kind.as_str(),
        "noteable_iid": if n.noteable_kind == NoteableKind::Snippet { Value::Null } else { json!(n.noteable_iid) },
        "resolvable": false,
    })
}
