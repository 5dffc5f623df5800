//! Hook entities: `ProjectHook` and the system `Hook`. The token is never shown.

use serde_json::{json, Map, Value};

use super::ts;
use crate::store::hooks::{PROJECT_HOOK_EVENTS, SYSTEM_HOOK_EVENTS};
use crate::store::Hook;

/// The `ProjectHook` entity.
pub fn project_hook(h: &Hook) -> Value {
    let mut map = Map::new();
    map.insert("id".into(), json!(h.id));
    map.insert("url".into(), json!(h.url));
    map.insert("project_id".into(), json!(h.project_id));
    map.insert("created_at".into(), ts(h.created_at));
    for (name, _) in PROJECT_HOOK_EVENTS {
        map.insert((*name).into(), json!(h.event(name)));
    }
    map.insert("enable_ssl_verification".into(), json!(h.enable_ssl_verification));
    Value::Object(map)
}

/// The system `Hook` entity.
pub fn system_hook(h: &Hook) -> Value {
    let mut map = Map::new();
    map.insert("id".into(), json!(h.id));
    map.insert("url".into(), json!(h.url));
    map.insert("created_at".into(), ts(h.created_at));
    for (name, _) in SYSTEM_HOOK_EVENTS {
        map.insert((*name).into(), json!(h.event(name)));
    }
    map.insert("enable_ssl_verification".into(), json!(h.enable_ssl_verification));
    Value::Object(map)
}
