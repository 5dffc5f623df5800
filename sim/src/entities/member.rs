//! The `Member` entity.

use serde_json::{json, Value};

use crate::store::{Member, Store};

/// `{id, username, name, state, avatar_url, web_url, access_level, expires_at}`.
pub fn member(store: &Store, member: &Member) -> Value {
    let mut v = super::user::basic_by_id(store, Some(member.user_id));
    if let Value::Object(map) = &mut v {
        map.insert("access_level".into(), json!(member.access_level));
        map.insert("expires_at".into(), json!(member.expires_at));
    }
    v
}
