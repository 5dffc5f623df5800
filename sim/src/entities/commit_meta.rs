//! `CommitNote`, `CommitStatus` and `Tag` entities.

use serde_json::{json, Value};

use super::{opt_ts, ts};
use crate::store::commit_meta::Tag;
use crate::store::repo::Repository;
use crate::store::{CommitComment, CommitStatus, Store};

/// `{note, path, line, line_type, author, created_at}`.
pub fn comment(store: &Store, c: &CommitComment) -> Value {
    json!({
        "note": c.note,
        "path": c.path,
        "line": c.line,
        "line_type": c.line_type,
        "author": super::user::basic_by_id(store, Some(c.author_id)),
        "created_at": ts(c.created_at),
    })
}

/// The `CommitStatus` entity.
pub fn status(store: &Store, s: &CommitStatus) -> Value {
    json!({
        "id": s.id,
        "sha": s.sha,
        "ref": s.ref_name,
        "status": s.status,
        "name": s.name,
        "target_url": s.target_url,
        "description": s.description,
        "created_at": ts(s.created_at),
        "started_at": opt_ts(s.started_at),
        "finished_at": opt_ts(s.finished_at),
        "allow_failure": false,
        "coverage": s.coverage,
        "author": super::user::basic_by_id(store, Some(s.author_id)),
    })
}

/// A release `{tag_name, description}`.
pub fn release(name: &str, description: &str) -> Value {
    json!({"tag_name": name, "description": description})
}

/// The `Tag` entity.
pub fn tag(repo: &Repository, name: &str, t: &Tag) -> Value {
    let target = match &t.message {
        Some(m) => crate::sha::sha1_hex(format!("tag {name}\n{}\n{m}", t.commit).as_bytes()),
        None => t.commit.clone(),
    };
    json!({
        "name": name,
        "message": t.message,
        "target": target,
        "commit": repo.commits.get(&t.commit).map(super::repo::commit).unwrap_or(Value::Null),
        "release": t.release.as_deref().map(|d| release(name, d)).unwrap_or(Value::Null),
    })
}
