//! The merge request entity: list items are `MergeRequestBasic`; single responses add `subscribed` and the
//! merge/close details.

use serde_json::{json, Value};

use super::{opt_ts, time_stats, ts};
use crate::store::{MergeRequest, NoteableKind, Store};

/// The current head of the source branch (or the frozen head once merged or closed).
pub fn source_sha(store: &Store, m: &MergeRequest) -> Option<String> {
    m.frozen_sha.clone().or_else(|| {
        store
            .projects
            .get(&m.source_project_id)
            .and_then(|p| p.repo.branches.get(&m.source_branch))
            .map(|b| b.commit.clone())
    })
}

/// The V4 merge request; `single_for` is the caller on a single response.
pub fn merge_request(store: &Store, m: &MergeRequest, single_for: Option<Option<u64>>) -> Value {
    let web = store
        .projects
        .get(&m.project_id)
        .map(|p| {
            format!(
                "{}/{}/merge_requests/{}",
                store.base_url,
                store.project_full_path(p),
                m.iid
            )
        })
        .unwrap_or_default();
    let wip = is_draft(&m.title);
    let (merge_status, detailed_merge_status) = merge_statuses(store, m, wip);
    let (up, down) = store.votes(crate::store::AwardableKind::MergeRequest, m.id);
    let mut v = json!({
        "id": m.id,
        "iid": m.iid,
        "project_id": m.project_id,
        "title": m.title,
        "description": m.description,
        "state": m.state,
        "created_at": ts(m.created_at),
        "updated_at": ts(m.updated_at),
        "target_branch": m.target_branch,
        "source_branch": m.source_branch,
        "upvotes": up,
        "downvotes": down,
        "author": super::user::basic_by_id(store, Some(m.author_id)),
        "assignee": super::user::basic_by_id(store, m.assignee_id),
        "source_project_id": m.source_project_id,
        "target_project_id": m.project_id,
        "labels": m.labels,
        "work_in_progress": wip,
        "milestone": super::issue::milestone_by_id(store, m.milestone_id),
        "merge_when_pipeline_succeeds": m.merge_when_pipeline_succeeds,
        "merge_status": merge_status,
        "detailed_merge_status": detailed_merge_status,
        "sha": source_sha(store, m),
        "merge_commit_sha": m.merge_commit_sha,
        "user_notes_count": store.user_notes_count(NoteableKind::MergeRequest, m.id),
        "discussion_locked": m.discussion_locked,
        "should_remove_source_branch": m.should_remove_source_branch,
        "force_remove_source_branch": m.force_remove_source_branch,
        "allow_maintainer_to_push": m.allow_maintainer_to_push,
        "web_url": web,
        "time_stats": time_stats(m.time_estimate, m.total_time_spent),
        "squash": m.squash,
    });
    if let (Some(viewer), Value::Object(map)) = (single_for, &mut v) {
        let changes = changes_count(store, m);
        let details = json!({
            "subscribed": viewer.is_some_and(|uid| m.subscribers.contains(&uid)),
            "changes_count": changes.to_string(),
            "merged_by": super::user::basic_by_id(store, m.merged_by),
            "merged_at": opt_ts(m.merged_at),
            "closed_by": super::user::basic_by_id(store, m.closed_by),
            "closed_at": opt_ts(m.closed_at),
            "latest_build_started_at": Value::Null,
            "latest_build_finished_at": Value::Null,
            "first_deployed_to_production_at": Value::Null,
            "pipeline": store
                .merge_request_head_pipeline(m)
                .map_or(Value::Null, |p| super::ci::pipeline_basic(store, p)),
            "head_pipeline": store
                .merge_request_head_pipeline(m)
                .map_or(Value::Null, |p| super::ci::pipeline(store, p)),
        });
        if let Value::Object(details) = details {
            map.extend(details);
        }
    }
    v
}

/// `merge_status` and `detailed_merge_status`, kept consistent: the simulator checks mergeability at once, so
/// neither is ever `checking`/`unchecked`; a closed or merged request is `not_open`, one whose source or target
/// branch is gone `broken_status` (`cannot_be_merged`), a draft `draft_status`, and the rest `mergeable`.
pub fn merge_statuses(store: &Store, m: &MergeRequest, draft: bool) -> (&'static str, &'static str) {
    if m.state != "opened" {
        return ("can_be_merged", "not_open");
    }
    let has_branch = |project_id: u64, branch: &str| {
        store
            .projects
            .get(&project_id)
            .is_some_and(|p| p.repo.branches.contains_key(branch))
    };
    if !has_branch(m.source_project_id, &m.source_branch) || !has_branch(m.project_id, &m.target_branch) {
        return ("cannot_be_merged", "broken_status");
    }
    if draft {
        return ("can_be_merged", "draft_status");
    }
    ("can_be_merged", "mergeable")
}

fn changes_count(store: &Store, m: &MergeRequest) -> usize {
    let Some(project) = store.projects.get(&m.project_id) else {
        return 0;
    };
    let source = source_sha(store, m).and_then(|s| project.repo.resolve(&s).cloned());
    let target = project.repo.resolve(&m.target_branch);
    match (source, target) {
        (Some(s), Some(t)) => s
            .tree
            .keys()
            .chain(t.tree.keys())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .filter(|path| s.tree.get(*path) != t.tree.get(*path))
            .count(),
        _ => 0,
    }
}

/// Whether a merge request's title marks it a draft (work in progress): `WIP:`, `[WIP]`, `Draft:`, …
pub fn is_draft(title: &str) -> bool {
    let lower = title.to_ascii_lowercase();
    ["wip:", "[wip]", "wip ", "draft:", "[draft]"]
        .iter()
        .any(|p| lower.starts_with(p))
}
