//! The `ProjectService` entity, for configured services and for never-configured ones (inactive, no id).

use serde_json::{json, Map, Value};

use super::{opt_ts, ts};
use crate::store::services::SERVICE_EVENTS;
use crate::store::Service;

/// The `ProjectService` entity of `slug`; `show_secrets` keeps password properties (administrators).
pub fn service(slug: &str, title: &str, s: Option<&Service>, show_secrets: bool) -> Value {
    let mut map = Map::new();
    map.insert("id".into(), json!(s.map(|s| s.id)));
    map.insert("title".into(), json!(title));
    map.insert("slug".into(), json!(slug));
    map.insert("created_at".into(), s.map_or(Value::Null, |s| ts(s.created_at)));
    map.insert("updated_at".into(), opt_ts(s.map(|s| s.updated_at)));
    map.insert("active".into(), json!(s.is_some_and(|s| s.active)));
    for name in SERVICE_EVENTS {
        map.insert((*name).into(), json!(s.map_or(true, |s| s.event(name))));
    }
    let properties: Map<String, Value> = s
        .map(|s| {
            s.properties
                .iter()
                .filter(|(k, _)| show_secrets || !k.contains("password"))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default();
    map.insert("properties".into(), Value::Object(properties));
    Value::Object(map)
}
