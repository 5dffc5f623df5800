//! JSON renderings of the stored entities in the service's V4 shapes. Rendering is pure: each function reads the
//! store and returns a `serde_json::Value`.

pub mod admin;
pub mod award;
pub mod board;
pub mod ci;
pub mod commit_meta;
pub mod event;
pub mod hook;
pub mod issue;
pub mod keys;
pub mod member;
pub mod merge_request;
pub mod namespace;
pub mod note;
pub mod notification;
pub mod project;
pub mod repo;
pub mod service;
pub mod snippet;
pub mod template;
pub mod user;

use serde_json::Value;

use crate::time::{format, Millis};

/// A timestamp as JSON.
pub fn ts(ms: Millis) -> Value {
    Value::String(format(ms))
}

/// An optional timestamp as JSON (null when absent).
pub fn opt_ts(ms: Option<Millis>) -> Value {
    ms.map(ts).unwrap_or(Value::Null)
}

/// `{time_estimate, total_time_spent, human_time_estimate, human_total_time_spent}`.
pub fn time_stats(estimate: u64, spent: u64) -> Value {
    serde_json::json!({
        "time_estimate": estimate,
        "total_time_spent": spent,
        "human_time_estimate": human_duration(estimate),
        "human_total_time_spent": human_duration(spent),
    })
}

/// `1h 30m` style durations (null for zero).
pub fn human_duration(seconds: u64) -> Value {
    if seconds == 0 {
        return Value::Null;
    }
    let units = [
        ("w", 5 * 8 * 3600),
        ("d", 8 * 3600),
        ("h", 3600),
        ("m", 60),
        ("s", 1),
    ];
    let mut rest = seconds;
    let mut parts = Vec::new();
    for (name, size) in units {
        if rest >= size {
            parts.push(format!("{}{name}", rest / size));
            rest %= size;
        }
    }
    Value::String(parts.join(" "))
}
