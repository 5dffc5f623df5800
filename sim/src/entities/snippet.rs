//! `ProjectSnippet` and `PersonalSnippet` entities.

use serde_json::{json, Value};

use super::ts;
use crate::store::{Snippet, Store};

/// A snippet; project snippets carry `project_id`, personal ones `raw_url` too.
pub fn snippet(store: &Store, s: &Snippet) -> Value {
    let (web, api) = match s.project_id.and_then(|pid| store.projects.get(&pid)) {
        Some(p) => (
            format!(
                "{}/{}/snippets/{}",
                store.base_url,
                store.project_full_path(p),
                s.id
            ),
            format!(
                "{}/api/v4/projects/{}/snippets/{}/raw",
                store.base_url, p.id, s.id
            ),
        ),
        None => (
            format!("{}/snippets/{}", store.base_url, s.id),
            format!("{}/api/v4/snippets/{}/raw", store.base_url, s.id),
        ),
    };
    json!({
        "id": s.id,
        "title": s.title,
        "file_name": s.file_name,
        "description": s.description,
        "visibility": s.visibility.as_str(),
        "author": super::user::basic_by_id(store, Some(s.author_id)),
        "updated_at": ts(s.updated_at),
        "created_at": ts(s.created_at),
        "project_id": s.project_id,
        "web_url": web,
        "raw_url": api,
    })
}
