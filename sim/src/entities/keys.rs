//! Key entities: `SSHKey` (`{id, title, key, created_at}`), the deploy key with `can_push`, and `Email`.

use serde_json::{json, Value};

use super::ts;
use crate::store::{Email, SshKey};

/// The `SSHKey` entity.
pub fn ssh_key(k: &SshKey) -> Value {
    json!({
        "id": k.id,
        "title": k.title,
        "key": k.key,
        "created_at": ts(k.created_at),
    })
}

/// A deploy key with the `can_push` of one project link (or of the key itself).
pub fn deploy_key(k: &SshKey, can_push: bool) -> Value {
    let mut v = ssh_key(k);
    if let Value::Object(map) = &mut v {
        map.insert("can_push".into(), json!(can_push));
    }
    v
}

/// The `Email` entity.
pub fn email(e: &Email) -> Value {
    json!({"id": e.id, "email": e.email})
}
