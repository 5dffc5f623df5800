//! Issues: project, group and global lists with filters, create, show, update (close/reopen), delete (owners
//! and admins), subscribe and unsubscribe.

use http::Method;
use serde_json::Value;

use crate::context::Ctx;
use crate::entities::issue::issue as render_issue;
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::store::{access, Issue, NoteableKind, Store};

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    vec![
        api(Method::GET, "/issues", list_global),
        api(Method::GET, "/groups/{id}/issues", list_group),
        api(Method::GET, "/projects/{id}/issues", list_project),
        api(Method::POST, "/projects/{id}/issues", create),
        api(Method::GET, "/projects/{id}/issues/{issue_iid}", show),
        api(Method::PUT, "/projects/{id}/issues/{issue_iid}", update),
        api(Method::DELETE, "/projects/{id}/issues/{issue_iid}", delete),
        api(
            Method::POST,
            "/projects/{id}/issues/{issue_iid}/subscribe",
            subscribe,
        ),
        api(
            Method::POST,
            "/projects/{id}/issues/{issue_iid}/unsubscribe",
            unsubscribe,
        ),
    ]
}

/// Whether the caller may see an issue (confidential ones need Reporter+, authorship or assignment).
pub fn can_see(ctx: &Ctx<'_>, issue: &Issue) -> bool {
    visible(ctx.store, ctx.caller, issue)
}

/// Whether `caller` (None for anonymous) may see an issue: the rule of [`can_see`], for callers without a `Ctx`
/// (GraphQL).
pub fn visible(store: &Store, caller: Option<u64>, issue: &Issue) -> bool {
    let Some(project) = store.projects.get(&issue.project_id) else {
        return false;
    };
    if !store.can_read_project(project, caller) {
        return false;
    }
    if !issue.confidential {
        return true;
    }
    caller.is_some_and(|uid| {
        issue.author_id == uid
            || issue.assignee_ids.contains(&uid)
            || store.effective_level(project, uid) >= access::REPORTER
    })
}

/// Resolves `:issue_iid` in the project named by `:id`, checking visibility.
pub fn find_issue(ctx: &Ctx<'_>) -> Result<(u64, u64), ApiError> {
    let pid = ctx.project_id()?;
    let iid = ctx.path_u64("issue_iid", "Issue")?;
    let id = ctx
        .store
        .issue_by_iid(pid, iid)
        .filter(|id| ctx.store.issues.get(id).is_some_and(|i| can_see(ctx, i)))
        .ok_or(ApiError::NotFound("Issue"))?;
    Ok((pid, id))
}

fn list_project(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = ctx.project_id()?;
    list(ctx, |i| i.project_id == pid, false)
}

fn list_group(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let gid = ctx.group_id()?;
    let projects: Vec<u64> = ctx
        .store
        .projects
        .values()
        .filter(|p| {
            ctx.store
                .namespace_chain(p.namespace_id)
                .iter()
                .any(|ns| ns.id == gid)
        })
        .map(|p| p.id)
        .collect();
    list(ctx, move |i| projects.contains(&i.project_id), false)
}

fn list_global(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.user_id()?;
    list(ctx, |_| true, true)
}

fn list(ctx: &mut Ctx<'_>, scope_filter: impl Fn(&Issue) -> bool, global: bool) -> Result<Reply, ApiError> {
    let p = &ctx.params;
    let state = p.str("state").unwrap_or_else(|| "all".into());
    if !["opened", "closed", "all"].contains(&state.as_str()) {
        return Err(ApiError::Invalid("state".into()));
    }
    let labels = p.list("labels");
    let milestone = p.str("milestone");
    let iids = p.u64_list("iids")?;
    let search = p.str("search").map(|s| s.to_lowercase());
    let author_id = p.u64("author_id")?;
    let assignee_id = p.u64("assignee_id")?;
    let confidential = p.bool("confidential")?;
    let created_after = time_param(ctx, "created_after")?;
    let created_before = time_param(ctx, "created_before")?;
    let updated_after = time_param(ctx, "updated_after")?;
    let updated_before = time_param(ctx, "updated_before")?;
    let default_scope = if global { "created_by_me" } else { "all" };
    let scope = p
        .str("scope")
        .unwrap_or_else(|| default_scope.into())
        .replace('-', "_");
    let order_by = p.str("order_by").unwrap_or_else(|| "created_at".into());
    let desc = ctx.sort_desc(true)?;
    let caller = ctx.caller;
    let mut found: Vec<&Issue> = ctx
        .store
        .issues
        .values()
        .filter(|i| scope_filter(i) && can_see(ctx, i))
        .filter(|i| state == "all" || i.state == state)
        .filter(|i| match labels.as_deref() {
            None => true,
            Some([only]) if only == "None" => i.labels.is_empty(),
            Some([only]) if only == "Any" => !i.labels.is_empty(),
            Some(wanted) => wanted.iter().all(|l| i.labels.contains(l)),
        })
        .filter(|i| super::issuables::milestone_matches(ctx.store, milestone.as_deref(), i.milestone_id))
        .filter(|i| iids.as_ref().map_or(true, |list| list.contains(&i.iid)))
        .filter(|i| {
            search.as_deref().map_or(true, |s| {
                i.title.to_lowercase().contains(s)
                    || i.description
                        .as_deref()
                        .is_some_and(|d| d.to_lowercase().contains(s))
            })
        })
        .filter(|i| author_id.map_or(true, |a| i.author_id == a))
        .filter(|i| assignee_id.map_or(true, |a| i.assignee_ids.contains(&a)))
        .filter(|i| confidential.map_or(true, |c| i.confidential == c))
        .filter(|i| created_after.map_or(true, |t| i.created_at >= t))
        .filter(|i| created_before.map_or(true, |t| i.created_at <= t))
        .filter(|i| updated_after.map_or(true, |t| i.updated_at >= t))
        .filter(|i| updated_before.map_or(true, |t| i.updated_at <= t))
        .filter(|i| match scope.as_str() {
            "created_by_me" => caller == Some(i.author_id),
            "assigned_to_me" => caller.is_some_and(|uid| i.assignee_ids.contains(&uid)),
            _ => true,
        })
        .collect();
    if !["created_by_me", "assigned_to_me", "all"].contains(&scope.as_str()) {
        return Err(ApiError::Invalid("scope".into()));
    }
    match order_by.as_str() {
        "created_at" => found.sort_by_key(|i| (i.created_at, i.id)),
        "updated_at" => found.sort_by_key(|i| (i.updated_at, i.id)),
        _ => return Err(ApiError::Invalid("order_by".into())),
    }
    if desc {
        found.reverse();
    }
    let items: Vec<Value> = found
        .into_iter()
        .map(|i| render_issue(ctx.store, i, None))
        .collect();
    ctx.paginate(items)
}

fn time_param(ctx: &Ctx<'_>, name: &str) -> Result<Option<i64>, ApiError> {
    match ctx.params.str(name) {
        None => Ok(None),
        Some(s) => crate::time::parse(&s)
            .map(Some)
            .ok_or_else(|| ApiError::Invalid(name.to_string())),
    }
}

fn require_issues_enabled(ctx: &Ctx<'_>, pid: u64) -> Result<(), ApiError> {
    if ctx.project(pid)?.flag("issues_enabled") {
        Ok(())
    } else {
        Err(ApiError::Forbidden)
    }
}

fn single(ctx: &Ctx<'_>, id: u64) -> Result<Value, ApiError> {
    let issue = ctx.store.issues.get(&id).ok_or(ApiError::NotFound("Issue"))?;
    Ok(render_issue(ctx.store, issue, Some(ctx.caller)))
}

fn create(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let pid = ctx.project_id()?;
    require_issues_enabled(ctx, pid)?;
    let level = ctx.level(pid);
    let public_ish = ctx.project(pid)?.visibility != crate::store::Visibility::Private;
    if level < access::GUEST && !public_ish {
        return Err(ApiError::Forbidden);
    }
    let mr_iid = ctx.params.u64("merge_request_to_resolve_discussions_of")?;
    let mr = match mr_iid {
        Some(iid) => Some(
            ctx.store
                .merge_request_by_iid(pid, iid)
                .and_then(|id| ctx.store.merge_requests.get(&id))
                .map(|m| (m.title.clone(), m.iid))
                .ok_or(ApiError::NotFound("Merge Request"))?,
        ),
        None => None,
    };
    let title = match (ctx.params.str("title"), &mr) {
        (Some(t), _) => t,
        (None, Some((mr_title, _))) => format!("Follow-up from \"{mr_title}\""),
        (None, None) => return Err(ApiError::Missing("title".into())),
    };
    super::issuables::check_title(&title)?;
    let created_at = match time_param(ctx, "created_at")? {
        Some(t) if level >= access::OWNER => Some(t),
        _ => None,
    };
    let fields = IssueFields::read(ctx, pid)?;
    let id = ctx
        .store
        .insert_issue(pid, uid, title, created_at)
        .ok_or(ApiError::NotFound("Project"))?;
    let description = match (ctx.params.str("description"), &mr) {
        (Some(d), _) => Some(d),
        (None, Some((_, iid))) => Some(format!(
            "The following discussions from !{iid} should be addressed:"
        )),
        (None, None) => None,
    };
    if let Some(issue) = ctx.store.issues.get_mut(&id) {
        issue.description = description;
    }
    fields.apply(ctx, id);
    super::issuables::assignment_todos(ctx.store, uid, NoteableKind::Issue, id, &[]);
    Ok(Reply::created(single(ctx, id)?))
}

/// Optional fields shared by create and update.
struct IssueFields {
    assignees: Option<Vec<u64>>,
    milestone: Option<Option<u64>>,
    labels: Option<Vec<String>>,
    due_date: Option<Option<String>>,
    confidential: Option<bool>,
    discussion_locked: Option<bool>,
}

impl IssueFields {
    fn read(ctx: &Ctx<'_>, pid: u64) -> Result<Self, ApiError> {
        let p = &ctx.params;
        // Grape coerces an empty Integer to nil, so `assignee_id=""` is as if it were not sent.
        let blank_assignee = p.str("assignee_id").is_some_and(|s| s.is_empty());
        let assignees = if p.has("assignee_ids") {
            Some(p.u64_list("assignee_ids")?.unwrap_or_default())
        } else if p.has("assignee_id") && !blank_assignee {
            Some(p.u64("assignee_id")?.into_iter().filter(|id| *id != 0).collect())
        } else {
            None
        };
        // CE's `IssuableBaseService#filter_assignee` keeps only the first of several assignees
        // (`allows_multiple_assignees?` is false without the licensed feature).
        let assignees = assignees.map(|ids: Vec<u64>| {
            ids.into_iter()
                .filter(|id| ctx.store.users.contains_key(id))
                .take(1)
                .collect()
        });
        let milestone = if p.has("milestone_id") {
            Some(
                p.u64("milestone_id")?
                    .filter(|m| ctx.store.milestones.get(m).is_some_and(|m| m.project_id == pid)),
            )
        } else {
            None
        };
        let due_date = if p.has("due_date") {
            match p.str("due_date").filter(|s| !s.is_empty()) {
                None => Some(None),
                Some(s) => Some(Some(
                    crate::time::parse(&s)
                        .map(crate::time::format_date)
                        .ok_or_else(|| ApiError::Invalid("due_date".into()))?,
                )),
            }
        } else {
            None
        };
        let labels = p.list("labels").or_else(|| p.has("labels").then(Vec::new));
        // `IssuableBaseService#filter_params`: without `admin_issue` (Reporter+) the milestone, labels, assignees
        // and due date sent are dropped, so a guest or non-member neither sets them nor creates labels.
        if ctx.level(pid) < access::REPORTER {
            return Ok(IssueFields {
                assignees: None,
                milestone: None,
                labels: None,
                due_date: None,
                confidential: p.bool("confidential")?,
                discussion_locked: p.bool("discussion_locked")?,
            });
        }
        Ok(IssueFields {
            assignees,
            milestone,
            labels,
            due_date,
            confidential: p.bool("confidential")?,
            discussion_locked: p.bool("discussion_locked")?,
        })
    }

    fn apply(self, ctx: &mut Ctx<'_>, id: u64) {
        let Some(pid) = ctx.store.issues.get(&id).map(|i| i.project_id) else {
            return;
        };
        if let Some(labels) = &self.labels {
            ctx.store.ensure_labels(pid, labels);
        }
        let Some(issue) = ctx.store.issues.get_mut(&id) else {
            return;
        };
        if let Some(v) = self.assignees {
            issue.assignee_ids = v;
        }
        if let Some(v) = self.milestone {
            issue.milestone_id = v;
        }
        if let Some(v) = self.labels {
            issue.labels = v;
        }
        if let Some(v) = self.due_date {
            issue.due_date = v;
        }
        if let Some(v) = self.confidential {
            issue.confidential = v;
        }
        if let Some(v) = self.discussion_locked {
            issue.discussion_locked = Some(v);
        }
    }
}

fn show(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (_, id) = find_issue(ctx)?;
    Ok(Reply::ok(single(ctx, id)?))
}

/// V4's `at_least_one_of` on `PUT /projects/:id/issues/:issue_iid`.
const UPDATE_AT_LEAST_ONE_OF: &[&str] = &[
    "title",
    "description",
    "assignee_ids",
    "assignee_id",
    "milestone_id",
    "labels",
    "created_at",
    "due_date",
    "confidential",
    "state_event",
    "discussion_locked",
];

fn update(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    ctx.params.at_least_one_of(UPDATE_AT_LEAST_ONE_OF)?;
    // V4 finds the issue among the project's without the reader's filter, then authorizes `update_issue`: a
    // confidential issue the caller cannot see is a 403 here, not a 404.
    let pid = ctx.project_id()?;
    let iid = ctx.path_u64("issue_iid", "Issue")?;
    let id = ctx
        .store
        .issue_by_iid(pid, iid)
        .ok_or(ApiError::NotFound("Issue"))?;
    // IssuablePolicy: Reporter+, or the issue's author or an assignee.
    let own = ctx
        .store
        .issues
        .get(&id)
        .is_some_and(|i| i.author_id == uid || i.assignee_ids.contains(&uid));
    if ctx.level(pid) < access::REPORTER && !own {
        return Err(ApiError::Forbidden);
    }
    let title = ctx.params.str("title");
    if let Some(t) = title.as_deref() {
        super::issuables::check_title(t)?;
    }
    let state_event = ctx.params.str("state_event");
    if state_event
        .as_deref()
        .is_some_and(|e| e != "close" && e != "reopen")
    {
        return Err(ApiError::Invalid("state_event".into()));
    }
    let updated_at = match time_param(ctx, "updated_at")? {
        Some(t) if ctx.level(pid) >= access::OWNER => Some(t),
        _ => None,
    };
    let description = ctx.params.str("description");
    let fields = IssueFields::read(ctx, pid)?;
    let tracked = ctx.store.tracked(NoteableKind::Issue, id);
    let before = ctx
        .store
        .issues
        .get(&id)
        .map(|i| i.assignee_ids.clone())
        .unwrap_or_default();
    fields.apply(ctx, id);
    super::issuables::assignment_todos(ctx.store, uid, NoteableKind::Issue, id, &before);
    let now = updated_at.unwrap_or_else(|| ctx.store.now());
    if let Some(issue) = ctx.store.issues.get_mut(&id) {
        if let Some(t) = title {
            issue.title = t;
        }
        if let Some(d) = description {
            issue.description = Some(d);
        }
        let mut changed = None;
        match state_event.as_deref() {
            Some("close") if issue.state == "opened" => {
                issue.state = "closed".into();
                issue.closed_at = Some(now);
                issue.closed_by = Some(uid);
                changed = Some("closed");
            }
            Some("reopen") if issue.state == "closed" => {
                issue.state = "opened".into();
                issue.closed_at = None;
                issue.closed_by = None;
                changed = Some("reopened");
            }
            _ => {}
        }
        issue.updated_at = now;
        // V4 `Issues::CloseService` / `ReopenService`: an event and a system note ("closed", "reopened").
        if let Some(status) = changed {
            ctx.store
                .record_issuable_event(NoteableKind::Issue, id, uid, status);
            ctx.store.insert_system_note(NoteableKind::Issue, id, uid, status);
        }
    }
    if let Some(before) = tracked {
        ctx.store
            .write_change_notes(NoteableKind::Issue, id, uid, &before);
    }
    Ok(Reply::ok(single(ctx, id)?))
}

fn delete(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.user_id()?;
    let (pid, id) = find_issue(ctx)?;
    ctx.require_level(pid, access::OWNER)?;
    ctx.store.issues.remove(&id);
    ctx.store
        .notes
        .retain(|_, n| !(n.noteable_kind == NoteableKind::Issue && n.noteable_id == id));
    Ok(Reply::no_content())
}

fn subscribe(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let (_, id) = find_issue(ctx)?;
    let added = ctx
        .store
        .issues
        .get_mut(&id)
        .is_some_and(|i| i.subscribers.insert(uid));
    if !added {
        return Ok(Reply::not_modified());
    }
    Ok(Reply::created(single(ctx, id)?))
}

fn unsubscribe(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let (_, id) = find_issue(ctx)?;
    let removed = ctx
        .store
        .issues
        .get_mut(&id)
        .is_some_and(|i| i.subscribers.remove(&uid));
    if !removed {
        return Ok(Reply::not_modified());
    }
    Ok(Reply::created(single(ctx, id)?))
}
