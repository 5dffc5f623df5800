//! Template entities: `License`, and `{name}` / `{name, content}` for the other template kinds.

use serde_json::{json, Value};

use crate::store::templates::License;

/// The `License` entity; `content` has its placeholders filled in.
pub fn license(l: &License, content: &str) -> Value {
    json!({
        "key": l.key,
        "name": l.name,
        "nickname": l.nickname,
        "featured": l.featured,
        "html_url": l.html_url,
        "source_url": l.source_url,
        "description": l.description,
        "conditions": l.conditions,
        "permissions": l.permissions,
        "limitations": l.limitations,
        "content": content,
    })
}

/// A `TemplatesList` item.
pub fn list_item(name: &str) -> Value {
    json!({ "name": name })
}

/// A `Template`.
pub fn template(name: &str, content: &str) -> Value {
    json!({ "name": name, "content": content })
}
