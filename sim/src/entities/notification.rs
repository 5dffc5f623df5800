//! The `NotificationSetting` and `GlobalNotificationSetting` entities.

use serde_json::{json, Map, Value};

use crate::store::notifications::EVENTS;
use crate::store::NotificationSetting;

/// `{level, events?}` plus `notification_email` for the global setting; `events` appears for `custom`.
pub fn notification_setting(s: &NotificationSetting, global_email: Option<&str>) -> Value {
    let mut map = Map::new();
    map.insert("level".into(), json!(s.level));
    if let Some(email) = global_email {
        map.insert("notification_email".into(), json!(email));
    }
    if s.level == "custom" {
        let events: Map<String, Value> = EVENTS
            .iter()
            .map(|e| {
                (
                    (*e).to_string(),
                    json!(s.events.get(*e).copied().unwrap_or(false)),
                )
            })
            .collect();
        map.insert("events".into(), Value::Object(events));
    }
    Value::Object(map)
}
