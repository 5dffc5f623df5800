//! `ProjectSnippet` and `PersonalSnippet` entities.

use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};
use serde_json::{json, Value};

use super::ts;
use crate::store::{Snippet, Store};

/// A snippet; project snippets carry `project_id`, personal ones `raw_url` too; `files` lists every file with its
/// raw address.
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
    let files: Vec<Value> = s
        .files
        .iter()
        .map(|f| {
            json!({
                "path": f.path,
                "raw_url": format!(
                    "{}/files/main/{}/raw",
                    api.trim_end_matches("/raw"),
                    utf8_percent_encode(&f.path, NON_ALPHANUMERIC)
                ),
            })
        })
        .collect();
    json!({
        "id": s.id,
        "title": s.title,
        "file_name": s.file_name(),
        "files": files,
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
