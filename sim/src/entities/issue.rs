//! Issue, milestone and label entities. `subscribed` appears only on single-issue responses.

use serde_json::{json, Value};

use super::{opt_ts, time_stats, ts};
use crate::store::{Issue, Label, Milestone, NoteableKind, Store};

/// The V4 `Issue`; `single_for` is the caller on a single-issue response (adds `subscribed`).
pub fn issue(store: &Store, i: &Issue, single_for: Option<Option<u64>>) -> Value {
    let web = store
        .projects
        .get(&i.project_id)
        .map(|p| {
            format!(
                "{}/{}/issues/{}",
                store.base_url,
                store.project_full_path(p),
                i.iid
            )
        })
        .unwrap_or_default();
    let api = format!("{}/api/v4/projects/{}", store.base_url, i.project_id);
    let assignees: Vec<Value> = i
        .assignee_ids
        .iter()
        .map(|id| super::user::basic_by_id(store, Some(*id)))
        .collect();
    let (up, down) = store.votes(crate::store::AwardableKind::Issue, i.id);
    let mut v = json!({
        "id": i.id,
        "iid": i.iid,
        "project_id": i.project_id,
        "title": i.title,
        "description": i.description,
        "state": i.state,
        "created_at": ts(i.created_at),
        "updated_at": ts(i.updated_at),
        "closed_at": opt_ts(i.closed_at),
        "closed_by": super::user::basic_by_id(store, i.closed_by),
        "labels": i.labels,
        "milestone": milestone_by_id(store, i.milestone_id),
        "assignees": assignees,
        "author": super::user::basic_by_id(store, Some(i.author_id)),
        "assignee": super::user::basic_by_id(store, i.assignee_ids.first().copied()),
        "user_notes_count": store.user_notes_count(NoteableKind::Issue, i.id),
        "upvotes": up,
        "downvotes": down,
        "due_date": i.due_date,
        "confidential": i.confidential,
        "discussion_locked": i.discussion_locked,
        "web_url": web,
        "time_stats": time_stats(i.time_estimate, i.total_time_spent),
        "_links": {
            "self": format!("{api}/issues/{}", i.iid),
            "notes": format!("{api}/issues/{}/notes", i.iid),
            "award_emoji": format!("{api}/issues/{}/award_emoji", i.iid),
            "project": api,
        },
    });
    if let (Some(viewer), Value::Object(map)) = (single_for, &mut v) {
        let subscribed = viewer.is_some_and(|uid| i.subscribers.contains(&uid));
        map.insert("subscribed".into(), json!(subscribed));
    }
    v
}

/// The `Milestone` entity.
pub fn milestone(store: &Store, m: &Milestone) -> Value {
    let web = store
        .projects
        .get(&m.project_id)
        .map(|p| {
            format!(
                "{}/{}/milestones/{}",
                store.base_url,
                store.project_full_path(p),
                m.iid
            )
        })
        .unwrap_or_default();
    json!({
        "id": m.id,
        "iid": m.iid,
        "project_id": m.project_id,
        "title": m.title,
        "description": m.description,
        "state": m.state,
        "created_at": ts(m.created_at),
        "updated_at": ts(m.updated_at),
        "due_date": m.due_date,
        "start_date": m.start_date,
        "web_url": web,
    })
}

/// A milestone by id, null when absent.
pub fn milestone_by_id(store: &Store, id: Option<u64>) -> Value {
    id.and_then(|id| store.milestones.get(&id))
        .map(|m| milestone(store, m))
        .unwrap_or(Value::Null)
}

/// The `Label` entity: `subscribed` for `viewer`, and the issue and merge request counts when `with_counts`.
pub fn label(store: &Store, l: &Label, viewer: Option<u64>, with_counts: bool) -> Value {
    let mut v = json!({
        "id": l.id,
        "name": l.name,
        "color": l.color,
        "description": l.description,
        "priority": l.priority,
        "subscribed": viewer.is_some_and(|uid| l.subscribers.contains(&uid)),
    });
    if let (true, Value::Object(map)) = (with_counts, &mut v) {
        let count_issues = |state: &str| {
            store
                .issues
                .values()
                .filter(|i| i.project_id == l.project_id && i.state == state && i.labels.contains(&l.name))
                .count()
        };
        let open_mrs = store
            .merge_requests
            .values()
            .filter(|m| m.project_id == l.project_id && m.state == "opened" && m.labels.contains(&l.name))
            .count();
        map.insert("open_issues_count".into(), json!(count_issues("opened")));
        map.insert("closed_issues_count".into(), json!(count_issues("closed")));
        map.insert("open_merge_requests_count".into(), json!(open_mrs));
    }
    v
}
