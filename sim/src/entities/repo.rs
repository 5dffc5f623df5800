//! Repository entities: `Commit`, `CommitDetail`, `Diff` and `Branch`.

use serde_json::{json, Value};

use super::ts;
use crate::store::diff::FileDiff;
use crate::store::repo::{Branch, Commit, Repository};

/// The `Commit` entity.
pub fn commit(c: &Commit) -> Value {
    json!({
        "id": c.id,
        "short_id": c.short_id(),
        "title": c.title(),
        "created_at": ts(c.date),
        "parent_ids": c.parent_ids,
        "message": c.message,
        "author_name": c.author_name,
        "author_email": c.author_email,
        "authored_date": ts(c.date),
        "committer_name": c.author_name,
        "committer_email": c.author_email,
        "committed_date": ts(c.date),
    })
}

/// `CommitDetail`: the commit plus `stats` (only when `include_stats`, V4's `expose :stats, if: :include_stats`),
/// `status`, `last_pipeline` and `project_id`.
pub fn commit_detail(repo: &Repository, c: &Commit, project_id: u64, include_stats: bool) -> Value {
    let mut v = commit(c);
    let (additions, deletions) = repo.stats(c);
    if let Value::Object(map) = &mut v {
        if include_stats {
            map.insert(
                "stats".into(),
                json!({"additions": additions, "deletions": deletions, "total": additions + deletions}),
            );
        }
        map.insert("status".into(), Value::Null);
        map.insert("last_pipeline".into(), Value::Null);
        map.insert("project_id".into(), json!(project_id));
    }
    v
}

/// The `Diff` entity.
pub fn diff(d: &FileDiff) -> Value {
    json!({
        "old_path": d.old_path,
        "new_path": d.new_path,
        "a_mode": if d.new_file { "0" } else { "100644" },
        "b_mode": if d.deleted_file { "0" } else { "100644" },
        "new_file": d.new_file,
        "renamed_file": d.renamed_file,
        "deleted_file": d.deleted_file,
        "diff": d.diff,
    })
}

/// The `Branch` entity as seen by a caller with `can_push`.
pub fn branch(repo: &Repository, name: &str, b: &Branch, default_branch: &str, can_push: bool) -> Value {
    let merged = name != default_branch
        && repo
            .branches
            .get(default_branch)
            .is_some_and(|d| repo.is_ancestor(&b.commit, &d.commit));
    let protection = repo.protection(name);
    json!({
        "name": name,
        "commit": repo.commits.get(&b.commit).map(commit).unwrap_or(Value::Null),
        "merged": merged,
        "protected": protection.is_some(),
        "developers_can_push": protection.is_some_and(|p| p.push_access_level == 30),
        "developers_can_merge": protection.is_some_and(|p| p.merge_access_level == 30),
        "can_push": can_push,
        "default": name == default_branch,
    })
}
