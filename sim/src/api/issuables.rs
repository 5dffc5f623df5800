//! Extras shared by issues and merge requests: moving issues, time tracking, subscriptions (issues, merge
//! requests and labels), to-do creation, the assignment to-dos, participants, and the merge requests that close
//! or mention an issue.

use http::{Method, StatusCode};
use serde_json::Value;

use crate::context::Ctx;
use crate::entities::award::todo as render_todo;
use crate::entities::issue::{issue as render_issue, label as render_label};
use crate::entities::merge_request::merge_request as render_mr;
use crate::entities::time_stats;
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::store::{access, NoteableKind, Store};

const ISSUE: &str = "/projects/{id}/issues/{issue_iid}";
const MR: &str = "/projects/{id}/merge_requests/{merge_request_iid}";

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    let mut routes = vec![
        api(Method::POST, &format!("{ISSUE}/move"), move_issue),
        api(Method::GET, &format!("{ISSUE}/participants"), participants),
        api(Method::GET, &format!("{MR}/participants"), participants),
        api(Method::GET, &format!("{ISSUE}/closed_by"), closed_by),
        api(
            Method::GET,
            &format!("{ISSUE}/related_merge_requests"),
            related_merge_requests,
        ),
        api(Method::POST, &format!("{MR}/subscribe"), subscribe),
        api(Method::POST, &format!("{MR}/unsubscribe"), unsubscribe),
        api(
            Method::POST,
            "/projects/{id}/labels/{label_id}/subscribe",
            subscribe,
        ),
        api(
            Method::POST,
            "/projects/{id}/labels/{label_id}/unsubscribe",
            unsubscribe,
        ),
    ];
    for base in [ISSUE, MR] {
        routes.push(api(Method::POST, &format!("{base}/time_estimate"), set_estimate));
        routes.push(api(
            Method::POST,
            &format!("{base}/reset_time_estimate"),
            reset_estimate,
        ));
        routes.push(api(Method::POST, &format!("{base}/add_spent_time"), add_spent));
        routes.push(api(
            Method::POST,
            &format!("{base}/reset_spent_time"),
            reset_spent,
        ));
        routes.push(api(Method::GET, &format!("{base}/time_stats"), stats));
        routes.push(api(Method::POST, &format!("{base}/todo"), create_todo));
    }
    routes
}

/// (project, kind, global id) of the issue or merge request in the path.
pub fn issuable(ctx: &Ctx<'_>) -> Result<(u64, NoteableKind, u64), ApiError> {
    if ctx.path.iter().any(|(n, _)| n == "issue_iid") {
        let (pid, id) = super::issues::find_issue(ctx)?;
        Ok((pid, NoteableKind::Issue, id))
    } else {
        let (pid, id) = super::merge_requests::find_mr(ctx)?;
        Ok((pid, NoteableKind::MergeRequest, id))
    }
}

/// The longest title an issue or merge request may have, in characters (V4's `Issuable::TITLE_LENGTH_MAX`).
pub const TITLE_LENGTH_MAX: usize = 255;

/// Checks an issue's or merge request's title as V4's `Issuable` model does (`validates :title, presence: true,
/// length: { maximum: 255 }` after `strip_attributes :title`): blank or longer than 255 characters is a 400.
pub fn check_title(title: &str) -> Result<(), ApiError> {
    let stripped = title.trim();
    if stripped.is_empty() {
        return Err(ApiError::validation("title", "can't be blank"));
    }
    if stripped.chars().count() > TITLE_LENGTH_MAX {
        return Err(ApiError::validation(
            "title",
            &format!("is too long (maximum is {TITLE_LENGTH_MAX} characters)"),
        ));
    }
    Ok(())
}

/// Whether an issuable with milestone `milestone_id` passes the list filter `milestone`, as V4's
/// `IssuableFinder::Params`: `none`/`None` (any case) or `No Milestone` mean no milestone, `any`/`Any` (any case)
/// or `Any Milestone` mean some milestone, anything else is a milestone title.
pub fn milestone_matches(store: &Store, filter: Option<&str>, milestone_id: Option<u64>) -> bool {
    match filter {
        None => true,
        Some(f) if f.eq_ignore_ascii_case("none") || f == "No Milestone" => milestone_id.is_none(),
        Some(f) if f.eq_ignore_ascii_case("any") || f == "Any Milestone" => milestone_id.is_some(),
        Some(title) => milestone_id
            .and_then(|m| store.milestones.get(&m))
            .is_some_and(|m| m.title == title),
    }
}

/// Parses `3h30m`, `1w 2d`, `-1h` (w = 5d, d = 8h, mo = 4w); a bare number means hours. Returns seconds.
pub fn parse_duration(text: &str) -> Option<i64> {
    let text = text.trim();
    let (sign, body) = match text.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, text),
    };
    if body.is_empty() {
        return None;
    }
    if let Ok(hours) = body.parse::<i64>() {
        return hours.checked_mul(3600).map(|s| s * sign);
    }
    let mut total: i64 = 0;
    let mut chars = body.chars().filter(|c| !c.is_whitespace()).peekable();
    while chars.peek().is_some() {
        let mut digits = String::new();
        while let Some(c) = chars.peek().filter(|c| c.is_ascii_digit()) {
            digits.push(*c);
            chars.next();
        }
        let mut unit = String::new();
        while let Some(c) = chars.peek().filter(|c| c.is_ascii_alphabetic()) {
            unit.push(*c);
            chars.next();
        }
        let n: i64 = digits.parse().ok()?;
        let size = match unit.as_str() {
            "mo" => 4 * 5 * 8 * 3600,
            "w" => 5 * 8 * 3600,
            "d" => 8 * 3600,
            "h" => 3600,
            "m" => 60,
            "s" => 1,
            _ => return None,
        };
        total = total.checked_add(n.checked_mul(size)?)?;
    }
    Some(total * sign)
}

fn times(store: &Store, kind: NoteableKind, id: u64) -> (u64, u64) {
    match kind {
        NoteableKind::Issue => store
            .issues
            .get(&id)
            .map(|i| (i.time_estimate, i.total_time_spent)),
        _ => store
            .merge_requests
            .get(&id)
            .map(|m| (m.time_estimate, m.total_time_spent)),
    }
    .unwrap_or((0, 0))
}

fn set_times(store: &mut Store, kind: NoteableKind, id: u64, estimate: u64, spent: u64) {
    let now = store.now();
    match kind {
        NoteableKind::Issue => {
            if let Some(i) = store.issues.get_mut(&id) {
                i.time_estimate = estimate;
                i.total_time_spent = spent;
                i.updated_at = now;
            }
        }
        _ => {
            if let Some(m) = store.merge_requests.get_mut(&id) {
                m.time_estimate = estimate;
                m.total_time_spent = spent;
                m.updated_at = now;
            }
        }
    }
}

fn writable(ctx: &Ctx<'_>) -> Result<(NoteableKind, u64), ApiError> {
    ctx.user_id()?;
    let (pid, kind, id) = issuable(ctx)?;
    let min = if kind == NoteableKind::Issue {
        access::REPORTER
    } else {
        access::DEVELOPER
    };
    ctx.require_level(pid, min)?;
    Ok((kind, id))
}

fn duration(ctx: &Ctx<'_>) -> Result<i64, ApiError> {
    let raw = ctx.params.required_str("duration")?;
    parse_duration(&raw).ok_or_else(|| ApiError::Invalid("duration".into()))
}

fn stats_reply(ctx: &Ctx<'_>, kind: NoteableKind, id: u64, status: StatusCode) -> Reply {
    let (estimate, spent) = times(ctx.store, kind, id);
    Reply::json(status, time_stats(estimate, spent))
}

fn set_estimate(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (kind, id) = writable(ctx)?;
    let seconds = duration(ctx)?;
    let estimate = u64::try_from(seconds).map_err(|_| ApiError::Invalid("duration".into()))?;
    let (_, spent) = times(ctx.store, kind, id);
    set_times(ctx.store, kind, id, estimate, spent);
    Ok(stats_reply(ctx, kind, id, StatusCode::OK))
}

fn reset_estimate(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (kind, id) = writable(ctx)?;
    let (_, spent) = times(ctx.store, kind, id);
    set_times(ctx.store, kind, id, 0, spent);
    Ok(stats_reply(ctx, kind, id, StatusCode::OK))
}

fn add_spent(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (kind, id) = writable(ctx)?;
    let seconds = duration(ctx)?;
    let (estimate, spent) = times(ctx.store, kind, id);
    let total = i64::try_from(spent).unwrap_or(i64::MAX).saturating_add(seconds);
    let total = u64::try_from(total)
        .map_err(|_| ApiError::validation("time_spent", "Time to subtract exceeds the total time spent"))?;
    set_times(ctx.store, kind, id, estimate, total);
    Ok(stats_reply(ctx, kind, id, StatusCode::CREATED))
}

fn reset_spent(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (kind, id) = writable(ctx)?;
    let (estimate, _) = times(ctx.store, kind, id);
    set_times(ctx.store, kind, id, estimate, 0);
    Ok(stats_reply(ctx, kind, id, StatusCode::OK))
}

fn stats(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (_, kind, id) = issuable(ctx)?;
    Ok(stats_reply(ctx, kind, id, StatusCode::OK))
}

fn create_todo(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let (_, kind, id) = issuable(ctx)?;
    let exists = ctx
        .store
        .todos
        .values()
        .any(|t| t.user_id == uid && t.target_kind == kind && t.target_id == id && t.state == "pending");
    if exists {
        return Ok(Reply::not_modified());
    }
    let todo = ctx
        .store
        .insert_todo(uid, uid, 4, kind, id)
        .ok_or(ApiError::NotFoundPlain)?;
    let t = ctx.store.todos.get(&todo).ok_or(ApiError::NotFound("Todo"))?;
    Ok(Reply::created(render_todo(ctx.store, t)))
}

/// Creates `assigned` to-dos for users newly assigned to an issue or merge request.
pub fn assignment_todos(store: &mut Store, author: u64, kind: NoteableKind, id: u64, before: &[u64]) {
    let now: Vec<u64> = match kind {
        NoteableKind::Issue => store
            .issues
            .get(&id)
            .map(|i| i.assignee_ids.clone())
            .unwrap_or_default(),
        _ => store
            .merge_requests
            .get(&id)
            .and_then(|m| m.assignee_id)
            .into_iter()
            .collect(),
    };
    for user in now.into_iter().filter(|u| !before.contains(u)) {
        store.insert_todo(user, author, 1, kind, id);
    }
}

/// What a subscription route names.
enum Subscribable {
    MergeRequest(u64),
    Label(u64),
}

fn subscribable(ctx: &Ctx<'_>) -> Result<Subscribable, ApiError> {
    if ctx.path.iter().any(|(n, _)| n == "label_id") {
        let pid = ctx.project_id()?;
        let raw = ctx.path_param("label_id");
        let id = ctx
            .store
            .labels
            .values()
            .find(|l| l.project_id == pid && (l.id.to_string() == raw || l.name == raw))
            .map(|l| l.id)
            .ok_or(ApiError::NotFound("Label"))?;
        Ok(Subscribable::Label(id))
    } else {
        let (_, id) = super::merge_requests::find_mr(ctx)?;
        Ok(Subscribable::MergeRequest(id))
    }
}

fn toggle(ctx: &mut Ctx<'_>, on: bool) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let target = subscribable(ctx)?;
    let changed = match target {
        Subscribable::MergeRequest(id) => ctx.store.merge_requests.get_mut(&id).is_some_and(|m| {
            if on {
                m.subscribers.insert(uid)
            } else {
                m.subscribers.remove(&uid)
            }
        }),
        Subscribable::Label(id) => ctx.store.labels.get_mut(&id).is_some_and(|l| {
            if on {
                l.subscribers.insert(uid)
            } else {
                l.subscribers.remove(&uid)
            }
        }),
    };
    if !changed {
        return Ok(Reply::not_modified());
    }
    let body = match target {
        Subscribable::MergeRequest(id) => ctx
            .store
            .merge_requests
            .get(&id)
            .map(|m| render_mr(ctx.store, m, Some(ctx.caller))),
        Subscribable::Label(id) => ctx
            .store
            .labels
            .get(&id)
            .map(|l| render_label(ctx.store, l, Some(uid), false)),
    };
    Ok(Reply::created(body.unwrap_or(Value::Null)))
}

fn subscribe(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    toggle(ctx, true)
}

fn unsubscribe(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    toggle(ctx, false)
}

/// The author, the assignees and everyone who wrote a note, once each, in that order.
fn participants(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (_, kind, id) = issuable(ctx)?;
    let mut ids: Vec<u64> = match kind {
        NoteableKind::Issue => ctx
            .store
            .issues
            .get(&id)
            .map(|i| {
                std::iter::once(i.author_id)
                    .chain(i.assignee_ids.iter().copied())
                    .collect()
            })
            .unwrap_or_default(),
        _ => ctx
            .store
            .merge_requests
            .get(&id)
            .map(|m| std::iter::once(m.author_id).chain(m.assignee_id).collect())
            .unwrap_or_default(),
    };
    let mut notes: Vec<_> = ctx
        .store
        .notes
        .values()
        .filter(|n| n.noteable_kind == kind && n.noteable_id == id)
        .collect();
    notes.sort_by_key(|n| n.id);
    ids.extend(notes.into_iter().map(|n| n.author_id));
    let mut seen = std::collections::BTreeSet::new();
    ids.retain(|id| seen.insert(*id));
    let items: Vec<Value> = ids
        .into_iter()
        .filter_map(|id| ctx.store.users.get(&id))
        .map(|u| crate::entities::user::basic(ctx.store, u))
        .collect();
    ctx.paginate(items)
}

/// The project's merge requests whose description closes the issue ("Closes #N"), optionally only open ones.
fn closing_mrs(ctx: &Ctx<'_>, open_only: bool) -> Result<Vec<Value>, ApiError> {
    let (pid, id) = super::issues::find_issue(ctx)?;
    let iid = ctx.store.issues.get(&id).map(|i| i.iid).unwrap_or_default();
    let mut found: Vec<_> = ctx
        .store
        .merge_requests
        .values()
        .filter(|m| m.project_id == pid && (!open_only || m.state == "opened"))
        .filter(|m| {
            super::mr_extras::closing_references(m.description.as_deref().unwrap_or("")).contains(&iid)
        })
        .collect();
    found.sort_by_key(|m| m.id);
    Ok(found.into_iter().map(|m| render_mr(ctx.store, m, None)).collect())
}

fn closed_by(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let items = closing_mrs(ctx, true)?;
    ctx.paginate(items)
}

fn related_merge_requests(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let items = closing_mrs(ctx, false)?;
    ctx.paginate(items)
}

fn move_issue(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let (pid, id) = super::issues::find_issue(ctx)?;
    let target = ctx.params.required_u64("to_project_id")?;
    // V4 looks the target up with `find_project`, which does not check that the caller can read it: only a
    // project that does not exist is a 404. Issues::MoveService then checks permissions before the same-project
    // case, and both are 400s.
    if !ctx.store.projects.contains_key(&target) {
        return Err(ApiError::NotFound("Project"));
    }
    if ctx.level(pid) < access::REPORTER || ctx.level(target) < access::REPORTER {
        return Err(ApiError::BadRequest(
            "Cannot move issue due to insufficient permissions!".into(),
        ));
    }
    if target == pid {
        return Err(ApiError::BadRequest(
            "Cannot move issue to project it originates from!".into(),
        ));
    }
    let old = ctx
        .store
        .issues
        .get(&id)
        .cloned()
        .ok_or(ApiError::NotFound("Issue"))?;
    let new_id = ctx
        .store
        .insert_issue(target, old.author_id, old.title.clone(), None)
        .ok_or(ApiError::NotFound("Project"))?;
    // `Issues::CreateService` runs as the mover: the new issue's "opened" event is theirs.
    for e in ctx.store.events.values_mut() {
        if e.target_id == Some(new_id) && e.target_type.as_deref() == Some("Issue") {
            e.author_id = uid;
        }
    }
    ctx.store.ensure_labels(target, &old.labels);
    let now = ctx.store.now();
    let new_ref = ctx.store.issue_reference(new_id, pid);
    let old_ref = ctx.store.issue_reference(id, target);
    if let Some(i) = ctx.store.issues.get_mut(&new_id) {
        i.description = old.description.clone();
        i.labels = old.labels.clone();
        i.assignee_ids = old.assignee_ids.clone();
        i.due_date = old.due_date.clone();
        i.confidential = old.confidential;
        i.time_estimate = old.time_estimate;
        i.total_time_spent = old.total_time_spent;
        i.subscribers = old.subscribers.clone();
    }
    if let Some(i) = ctx.store.issues.get_mut(&id) {
        i.state = "closed".into();
        i.closed_at = Some(now);
        i.closed_by = Some(uid);
        i.updated_at = now;
    }
    // V4 `Issues::MoveService`: the new issue gets copies of the old one's notes (`rewrite_notes`: same author,
    // times and `system`, no events) and a "moved from" note; the old issue a "moved to" note, and it is closed (an
    // event, no "closed" note). References are as `Issue#to_reference(from)` writes them.
    let mut copied: Vec<crate::store::Note> = ctx
        .store
        .notes
        .values()
        .filter(|n| n.noteable_kind == NoteableKind::Issue && n.noteable_id == id)
        .cloned()
        .collect();
    copied.sort_by_key(|n| n.id);
    for n in copied {
        if let Some(nid) = ctx
            .store
            .insert_system_note(NoteableKind::Issue, new_id, n.author_id, n.body)
        {
            if let Some(c) = ctx.store.notes.get_mut(&nid) {
                c.system = n.system;
                c.created_at = n.created_at;
                c.updated_at = n.updated_at;
            }
        }
    }
    ctx.store
        .insert_system_note(NoteableKind::Issue, new_id, uid, format!("moved from {old_ref}"));
    ctx.store
        .insert_system_note(NoteableKind::Issue, id, uid, format!("moved to {new_ref}"));
    ctx.store
        .record_issuable_event(NoteableKind::Issue, id, uid, "closed");
    let issue = ctx.store.issues.get(&new_id).ok_or(ApiError::NotFound("Issue"))?;
    Ok(Reply::created(render_issue(ctx.store, issue, Some(ctx.caller))))
}

#[cfg(test)]
mod tests {
    use super::parse_duration;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("3h30m"), Some(3 * 3600 + 1800));
        assert_eq!(parse_duration("1w 2d"), Some(40 * 3600 + 16 * 3600));
        assert_eq!(parse_duration("-1h"), Some(-3600));
        assert_eq!(parse_duration("2"), Some(7200));
        assert_eq!(parse_duration("3x"), None);
        assert_eq!(parse_duration(""), None);
    }
}
