//! Merge requests: list with filters, create (Developer+), show, update (close/reopen), delete (owners and
//! admins) and merge.

use http::{Method, StatusCode};
use serde_json::{json, Value};

use crate::context::Ctx;
use crate::entities::merge_request::merge_request as render_mr;
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::store::merge_requests::NewMergeRequest;
use crate::store::{access, MergeRequest, NoteableKind, Project, Store};

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    let one = "/projects/{id}/merge_requests/{merge_request_iid}";
    vec![
        api(Method::GET, "/projects/{id}/merge_requests", list),
        api(Method::POST, "/projects/{id}/merge_requests", create),
        api(Method::GET, one, show),
        api(Method::PUT, one, update),
        api(Method::DELETE, one, delete),
        api(Method::PUT, &format!("{one}/merge"), merge),
    ]
}

/// MergeRequest#validate_branches' `branch_conflict`, which V4's `handle_merge_request_errors!` answers with 422.
const SAME_BRANCH: &str = "You can't use same project/branch for source and target";

/// Resolves `:merge_request_iid` in the project named by `:id`.
pub fn find_mr(ctx: &Ctx<'_>) -> Result<(u64, u64), ApiError> {
    let pid = ctx.project_id()?;
    require_read(ctx, pid)?;
    let iid = ctx.path_u64("merge_request_iid", "Merge Request")?;
    let id = ctx
        .store
        .merge_request_by_iid(pid, iid)
        .ok_or(ApiError::NotFound("Merge Request"))?;
    Ok((pid, id))
}

/// V4's `authorize! :read_merge_request, user_project`: 403 when merge requests are disabled, and for a caller
/// below Reporter in a private project (a Guest there reads issues, not merge requests).
pub fn require_read(ctx: &Ctx<'_>, pid: u64) -> Result<(), ApiError> {
    let project = ctx.project(pid)?;
    if readable(ctx.store, ctx.caller, project) {
        Ok(())
    } else {
        Err(ApiError::Forbidden)
    }
}

/// Whether `caller` may read a project's merge requests: the project is readable to them (see
/// `Store::can_read_project`) and [`require_read`] lets them through. For callers without a `Ctx` (GraphQL).
pub fn readable(store: &Store, caller: Option<u64>, project: &Project) -> bool {
    if !store.can_read_project(project, caller) || !project.flag("merge_requests_enabled") {
        return false;
    }
    let level = caller.map_or(0, |uid| store.effective_level(project, uid));
    project.visibility != crate::store::Visibility::Private || level >= access::REPORTER
}

fn list(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = ctx.project_id()?;
    require_read(ctx, pid)?;
    let p = &ctx.params;
    let state = p.str("state").unwrap_or_else(|| "all".into());
    if !["opened", "closed", "merged", "locked", "all"].contains(&state.as_str()) {
        return Err(ApiError::Invalid("state".into()));
    }
    let iids = p.u64_list("iids")?;
    let labels = p.list("labels");
    let milestone = p.str("milestone");
    let search = p.str("search").map(|s| s.to_lowercase());
    let source_branch = p.str("source_branch");
    let target_branch = p.str("target_branch");
    let order_by = p.str("order_by").unwrap_or_else(|| "created_at".into());
    let desc = ctx.sort_desc(true)?;
    let mut found: Vec<&MergeRequest> = ctx
        .store
        .merge_requests
        .values()
        .filter(|m| m.project_id == pid)
        .filter(|m| state == "all" || m.state == state)
        .filter(|m| iids.as_ref().map_or(true, |l| l.contains(&m.iid)))
        .filter(|m| {
            labels
                .as_ref()
                .map_or(true, |l| l.iter().all(|x| m.labels.contains(x)))
        })
        .filter(|m| super::issuables::milestone_matches(ctx.store, milestone.as_deref(), m.milestone_id))
        .filter(|m| {
            search.as_deref().map_or(true, |s| {
                m.title.to_lowercase().contains(s)
                    || m.description
                        .as_deref()
                        .is_some_and(|d| d.to_lowercase().contains(s))
            })
        })
        .filter(|m| source_branch.as_ref().map_or(true, |b| &m.source_branch == b))
        .filter(|m| target_branch.as_ref().map_or(true, |b| &m.target_branch == b))
        .collect();
    match order_by.as_str() {
        "created_at" => found.sort_by_key(|m| (m.created_at, m.id)),
        "updated_at" => found.sort_by_key(|m| (m.updated_at, m.id)),
        _ => return Err(ApiError::Invalid("order_by".into())),
    }
    if desc {
        found.reverse();
    }
    let items: Vec<Value> = found.into_iter().map(|m| render_mr(ctx.store, m, None)).collect();
    ctx.paginate(items)
}

fn single(ctx: &Ctx<'_>, id: u64) -> Result<Value, ApiError> {
    let m = ctx
        .store
        .merge_requests
        .get(&id)
        .ok_or(ApiError::NotFound("Merge Request"))?;
    Ok(render_mr(ctx.store, m, Some(ctx.caller)))
}

fn create(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let pid = ctx.project_id()?;
    if !ctx.project(pid)?.flag("merge_requests_enabled") {
        return Err(ApiError::Forbidden);
    }
    ctx.require_level(pid, access::DEVELOPER)?;
    let title = ctx.params.required_str("title")?;
    let source = ctx.params.required_str("source_branch")?;
    let target = ctx.params.required_str("target_branch")?;
    super::issuables::check_title(&title)?;
    if source == target {
        return Err(ApiError::Unprocessable(SAME_BRANCH.into()));
    }
    let repo = &ctx.project(pid)?.repo;
    let mut errors = Vec::new();
    if !repo.branches.contains_key(&source) {
        errors.push(("source_branch".to_string(), "is invalid".to_string()));
    }
    if !repo.branches.contains_key(&target) {
        errors.push(("target_branch".to_string(), "is invalid".to_string()));
    }
    if !errors.is_empty() {
        return Err(ApiError::Validation(errors));
    }
    if let Some(existing) = ctx.store.merge_requests.values().find(|m| {
        m.project_id == pid && m.state == "opened" && m.source_branch == source && m.target_branch == target
    }) {
        // V4's `handle_merge_request_errors!` answers `conflict!(errors[:validate_branches])`: the model's error
        // list, so the message is an array.
        return Ok(Reply::json(
            StatusCode::CONFLICT,
            json!({"message": [format!(
                "Another open merge request already exists for this source branch: !{}",
                existing.iid
            )]}),
        ));
    }
    let fields = MrFields::read(ctx, pid)?;
    let id = ctx
        .store
        .insert_merge_request(NewMergeRequest {
            project_id: pid,
            author_id: uid,
            title,
            source_branch: source,
            target_branch: target,
        })
        .ok_or(ApiError::NotFound("Project"))?;
    let description = ctx.params.str("description");
    if let Some(m) = ctx.store.merge_requests.get_mut(&id) {
        m.description = description;
    }
    fields.apply(ctx, id);
    super::issuables::assignment_todos(ctx.store, uid, NoteableKind::MergeRequest, id, &[]);
    ctx.store.start_merge_request_pipeline(id, uid);
    Ok(Reply::created(single(ctx, id)?))
}

/// Optional fields shared by create and update.
struct MrFields {
    assignee: Option<Option<u64>>,
    milestone: Option<Option<u64>>,
    labels: Option<Vec<String>>,
    remove_source_branch: Option<bool>,
    squash: Option<bool>,
    discussion_locked: Option<bool>,
    allow_maintainer_to_push: Option<bool>,
}

impl MrFields {
    fn read(ctx: &Ctx<'_>, pid: u64) -> Result<Self, ApiError> {
        let p = &ctx.params;
        // Grape coerces an empty Integer to nil, so `assignee_id=""` is as if it were not sent.
        let blank_assignee = p.str("assignee_id").is_some_and(|s| s.is_empty());
        let assignee = if p.has("assignee_id") && !blank_assignee {
            Some(
                p.u64("assignee_id")?
                    .filter(|id| ctx.store.users.contains_key(id)),
            )
        } else if p.has("assignee_ids") {
            Some(
                p.u64_list("assignee_ids")?
                    .and_then(|l| l.first().copied())
                    .filter(|id| ctx.store.users.contains_key(id)),
            )
        } else {
            None
        };
        let milestone = if p.has("milestone_id") {
            Some(
                p.u64("milestone_id")?
                    .filter(|m| ctx.store.milestones.get(m).is_some_and(|m| m.project_id == pid)),
            )
        } else {
            None
        };
        Ok(MrFields {
            assignee,
            milestone,
            labels: p.list("labels").or_else(|| p.has("labels").then(Vec::new)),
            remove_source_branch: p.bool("remove_source_branch")?,
            squash: p.bool("squash")?,
            discussion_locked: p.bool("discussion_locked")?,
            allow_maintainer_to_push: p.bool("allow_maintainer_to_push")?,
        })
    }

    fn apply(self, ctx: &mut Ctx<'_>, id: u64) {
        let Some(pid) = ctx.store.merge_requests.get(&id).map(|m| m.project_id) else {
            return;
        };
        if let Some(labels) = &self.labels {
            ctx.store.ensure_labels(pid, labels);
        }
        let Some(m) = ctx.store.merge_requests.get_mut(&id) else {
            return;
        };
        if let Some(v) = self.assignee {
            m.assignee_id = v;
        }
        if let Some(v) = self.milestone {
            m.milestone_id = v;
        }
        if let Some(v) = self.labels {
            m.labels = v;
        }
        if let Some(v) = self.remove_source_branch {
            m.force_remove_source_branch = Some(v);
        }
        if let Some(v) = self.squash {
            m.squash = v;
        }
        if let Some(v) = self.discussion_locked {
            m.discussion_locked = Some(v);
        }
        if let Some(v) = self.allow_maintainer_to_push {
            m.allow_maintainer_to_push = v;
        }
    }
}

fn show(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (_, id) = find_mr(ctx)?;
    Ok(Reply::ok(single(ctx, id)?))
}

/// V4's `update_params_at_least_one_of` for `PUT /projects/:id/merge_requests/:merge_request_iid`.
const UPDATE_AT_LEAST_ONE_OF: &[&str] = &[
    "assignee_id",
    "description",
    "labels",
    "milestone_id",
    "remove_source_branch",
    "state_event",
    "target_branch",
    "title",
    "discussion_locked",
];

fn update(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    ctx.params.at_least_one_of(UPDATE_AT_LEAST_ONE_OF)?;
    let (pid, id) = find_mr(ctx)?;
    let author = ctx.store.merge_requests.get(&id).map(|m| m.author_id);
    if ctx.level(pid) < access::DEVELOPER && author != Some(uid) {
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
    let target = ctx.params.str("target_branch");
    if let Some(t) = &target {
        let same = ctx
            .store
            .merge_requests
            .get(&id)
            .is_some_and(|m| &m.source_branch == t);
        if same {
            return Err(ApiError::Unprocessable(SAME_BRANCH.into()));
        }
        if !ctx.project(pid)?.repo.branches.contains_key(t) {
            return Err(ApiError::validation("target_branch", "is invalid"));
        }
    }
    let description = ctx.params.str("description");
    let fields = MrFields::read(ctx, pid)?;
    let tracked = ctx.store.tracked(NoteableKind::MergeRequest, id);
    let before: Vec<u64> = ctx
        .store
        .merge_requests
        .get(&id)
        .and_then(|m| m.assignee_id)
        .into_iter()
        .collect();
    fields.apply(ctx, id);
    super::issuables::assignment_todos(ctx.store, uid, NoteableKind::MergeRequest, id, &before);
    let now = ctx.store.now();
    let head = ctx
        .store
        .merge_requests
        .get(&id)
        .and_then(|m| crate::entities::merge_request::source_sha(ctx.store, m));
    if let Some(m) = ctx.store.merge_requests.get_mut(&id) {
        if let Some(v) = title {
            m.title = v;
        }
        if let Some(v) = description {
            m.description = Some(v);
        }
        if let Some(v) = target {
            m.target_branch = v;
        }
        let mut changed = None;
        match state_event.as_deref() {
            Some("close") if m.state == "opened" => {
                m.state = "closed".into();
                m.closed_at = Some(now);
                m.closed_by = Some(uid);
                m.frozen_sha = head;
                changed = Some("closed");
            }
            Some("reopen") if m.state == "closed" => {
                m.state = "opened".into();
                m.closed_at = None;
                m.closed_by = None;
                m.frozen_sha = None;
                changed = Some("reopened");
            }
            _ => {}
        }
        m.updated_at = now;
        // V4 `MergeRequests::CloseService` / `ReopenService`: an event and a system note ("closed", "reopened").
        if let Some(status) = changed {
            ctx.store
                .record_issuable_event(NoteableKind::MergeRequest, id, uid, status);
            ctx.store
                .insert_system_note(NoteableKind::MergeRequest, id, uid, status);
        }
    }
    if let Some(before) = tracked {
        ctx.store
            .write_change_notes(NoteableKind::MergeRequest, id, uid, &before);
    }
    Ok(Reply::ok(single(ctx, id)?))
}

fn delete(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.user_id()?;
    let (pid, id) = find_mr(ctx)?;
    ctx.require_level(pid, access::OWNER)?;
    ctx.store.merge_requests.remove(&id);
    ctx.store
        .notes
        .retain(|_, n| !(n.noteable_kind == NoteableKind::MergeRequest && n.noteable_id == id));
    Ok(Reply::no_content())
}

fn merge(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let (pid, id) = find_mr(ctx)?;
    let level = ctx.level(pid);
    let m = ctx
        .store
        .merge_requests
        .get(&id)
        .cloned()
        .ok_or(ApiError::NotFound("Merge Request"))?;
    let project = ctx.project(pid)?;
    let needed = project
        .repo
        .protection(&m.target_branch)
        .map_or(access::DEVELOPER, |p| p.merge_access_level);
    if level < access::DEVELOPER || needed == 0 || level < needed {
        return Err(ApiError::Unauthorized);
    }
    // V4's merge: `not_allowed! unless merge_request.mergeable_state?`, which a closed, merged or draft (WIP)
    // merge request is not.
    if m.state != "opened" || crate::entities::merge_request::is_draft(&m.title) {
        return Err(ApiError::MethodNotAllowed);
    }
    let source = project
        .repo
        .resolve(&m.source_branch)
        .cloned()
        .ok_or_else(|| ApiError::Status(StatusCode::NOT_ACCEPTABLE, "Branch cannot be merged".into()))?;
    let target = project
        .repo
        .resolve(&m.target_branch)
        .cloned()
        .ok_or_else(|| ApiError::Status(StatusCode::NOT_ACCEPTABLE, "Branch cannot be merged".into()))?;
    if let Some(sha) = ctx.params.str("sha") {
        if sha != source.id {
            return Err(ApiError::Conflict(format!(
                "SHA does not match HEAD of source branch: {}",
                source.id
            )));
        }
    }
    if ctx.params.flag("merge_when_pipeline_succeeds", false)? {
        let active = ctx.store.pipelines.values().any(|p| {
            p.project_id == pid
                && p.sha == source.id
                && matches!(ctx.store.pipeline_status(p.id), "pending" | "running")
        });
        if active {
            if let Some(m) = ctx.store.merge_requests.get_mut(&id) {
                m.merge_when_pipeline_succeeds = true;
            }
            return Ok(Reply::ok(single(ctx, id)?));
        }
    }
    let (name, email) = ctx
        .store
        .users
        .get(&uid)
        .map(|u| (u.name.clone(), u.email.clone()))
        .unwrap_or_default();
    let now = ctx.store.now();
    let message = ctx.params.str("merge_commit_message").unwrap_or_else(|| {
        format!(
            "Merge branch '{}' into '{}'\n\n{}\n\nSee merge request !{}",
            m.source_branch, m.target_branch, m.title, m.iid
        )
    });
    // An explicit should_remove_source_branch wins over the merge request's own setting.
    let remove_source = ctx
        .params
        .bool("should_remove_source_branch")?
        .unwrap_or(m.force_remove_source_branch == Some(true));
    let Some(project) = ctx.store.projects.get_mut(&pid) else {
        return Err(ApiError::NotFound("Project"));
    };
    let mut tree = (*target.tree).clone();
    for (path, content) in source.tree.iter() {
        tree.insert(path.clone(), content.clone());
    }
    let merge_sha = project
        .repo
        .commit(Some(target.id.clone()), tree, &message, &name, &email, now);
    if let Some(commit) = project.repo.commits.get_mut(&merge_sha) {
        commit.parent_ids.push(source.id.clone());
    }
    project.repo.set_branch(&m.target_branch, &merge_sha, false);
    let removed_source = remove_source && m.source_branch != project.default_branch;
    if removed_source {
        project.repo.branches.remove(&m.source_branch);
    }
    project.last_activity_at = now;
    if let Some(m) = ctx.store.merge_requests.get_mut(&id) {
        m.state = "merged".into();
        m.merged_at = Some(now);
        m.merged_by = Some(uid);
        m.merge_commit_sha = Some(merge_sha.clone());
        m.frozen_sha = Some(source.id.clone());
        m.updated_at = now;
    }
    // V4 `MergeRequests::PostMergeService#execute`: close the referenced issues, then the merge event and the
    // "merged" system note.
    close_referenced_issues(ctx, &m, uid, now);
    ctx.store
        .record_issuable_event(NoteableKind::MergeRequest, id, uid, "merged");
    ctx.store
        .insert_system_note(NoteableKind::MergeRequest, id, uid, "merged");
    // The merge commit, and the source branch's removal, reach the repository through its hooks like any push
    // (`PostReceive` → `GitPushService`): "pushed to" the target branch, "deleted" the source branch.
    ctx.store.record_push(
        pid,
        uid,
        &m.target_branch,
        Some(target.id.clone()),
        Some(merge_sha),
    );
    if removed_source {
        ctx.store
            .record_push(pid, uid, &m.source_branch, Some(source.id), None);
    }
    Ok(Reply::ok(single(ctx, id)?))
}

/// Merging into the default branch closes the issues the description references with "Closes #N".
fn close_referenced_issues(ctx: &mut Ctx<'_>, m: &MergeRequest, uid: u64, now: crate::time::Millis) {
    let is_default = ctx
        .store
        .projects
        .get(&m.project_id)
        .is_some_and(|project| project.default_branch == m.target_branch);
    if !is_default {
        return;
    }
    let iids = super::mr_extras::closing_references(m.description.as_deref().unwrap_or(""));
    for iid in iids {
        let Some(issue_id) = ctx.store.issue_by_iid(m.project_id, iid) else {
            continue;
        };
        if let Some(issue) = ctx.store.issues.get_mut(&issue_id) {
            if issue.state == "opened" {
                issue.state = "closed".into();
                issue.closed_at = Some(now);
                issue.closed_by = Some(uid);
                issue.updated_at = now;
            } else {
                continue;
            }
        }
        // V4 `Issues::CloseService` with the merge request as `closed_via`: the event, and the system note
        // `SystemNoteService.change_status` writes, "closed via merge request !iid".
        ctx.store
            .record_issuable_event(NoteableKind::Issue, issue_id, uid, "closed");
        let body = format!("closed via merge request !{}", m.iid);
        ctx.store
            .insert_system_note(NoteableKind::Issue, issue_id, uid, body);
    }
}
