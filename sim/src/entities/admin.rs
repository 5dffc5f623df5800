//! Administration entities: `ApplicationSetting` and `BroadcastMessage`.

use serde_json::{json, Map, Value};

use super::ts;
use crate::store::settings::defaults;
use crate::store::{ApplicationSettings, BroadcastMessage};
use crate::time::Millis;

/// The `ApplicationSetting` entity.
pub fn settings(s: &ApplicationSettings) -> Value {
    let mut map = Map::new();
    map.insert("id".into(), json!(1));
    for (name, _, default) in defaults() {
        let value = s.values.get(name).cloned().unwrap_or(default);
        map.insert(name.into(), value);
        if name == "after_sign_up_text" {
            map.insert("created_at".into(), ts(s.created_at));
            map.insert("updated_at".into(), ts(s.updated_at));
        }
    }
    Value::Object(map)
}

/// The `BroadcastMessage` entity, `active` computed at `now`.
pub fn broadcast_message(m: &BroadcastMessage, now: Millis) -> Value {
    json!({
        "id": m.id,
        "message": m.message,
        "starts_at": ts(m.starts_at),
        "ends_at": ts(m.ends_at),
        "color": m.color,
        "font": m.font,
        "active": m.active_at(now),
    })
}
