//! Commit extras: diff, comments, cherry-pick, revert, the refs and merge requests that contain a commit, its
//! (absent) signature, and external statuses.

use http::Method;
use serde_json::Value;

use crate::context::Ctx;
use crate::entities::commit_meta::{comment, status as render_status};
use crate::entities::repo::{commit, diff};
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::store::access;
use crate::store::diff::tree_diff;
use crate::store::{CommitComment, CommitStatus};

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    let c = "/projects/{id}/repository/commits/{sha}";
    vec![
        api(Method::GET, &format!("{c}/diff"), commit_diff),
        api(Method::GET, &format!("{c}/comments"), list_comments),
        api(Method::POST, &format!("{c}/comments"), create_comment),
        api(Method::POST, &format!("{c}/cherry_pick"), cherry_pick),
        api(Method::POST, &format!("{c}/revert"), revert),
        api(Method::GET, &format!("{c}/refs"), refs),
        api(Method::GET, &format!("{c}/merge_requests"), merge_requests),
        api(Method::GET, &format!("{c}/signature"), signature),
        api(Method::GET, &format!("{c}/statuses"), list_statuses),
        api(Method::POST, "/projects/{id}/statuses/{sha}", create_status),
    ]
}

/// (project, full commit id) of `:sha`.
fn find(ctx: &Ctx<'_>) -> Result<(u64, String), ApiError> {
    let pid = super::repository::readable_project(ctx)?;
    let id = ctx
        .project(pid)?
        .repo
        .resolve(ctx.path_param("sha"))
        .map(|c| c.id.clone())
        .ok_or(ApiError::NotFound("Commit"))?;
    Ok((pid, id))
}

fn parent_diffs(ctx: &Ctx<'_>, pid: u64, sha: &str) -> Result<Vec<crate::store::diff::FileDiff>, ApiError> {
    let repo = &ctx.project(pid)?.repo;
    let c = repo.commits.get(sha).ok_or(ApiError::NotFound("Commit"))?;
    let parent = c
        .parent_ids
        .first()
        .and_then(|p| repo.commits.get(p))
        .map(|p| p.tree.clone())
        .unwrap_or_default();
    Ok(tree_diff(&parent, &c.tree))
}

fn commit_diff(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (pid, sha) = find(ctx)?;
    let items: Vec<Value> = parent_diffs(ctx, pid, &sha)?.iter().map(diff).collect();
    ctx.paginate(items)
}

fn list_comments(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (pid, sha) = find(ctx)?;
    let items: Vec<Value> = ctx
        .store
        .commit_comments
        .values()
        .filter(|c| c.project_id == pid && c.sha == sha)
        .map(|c| comment(ctx.store, c))
        .collect();
    ctx.paginate(items)
}

fn create_comment(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let (pid, sha) = find(ctx)?;
    let note = ctx.params.required_nonblank("note")?;
    let path = ctx.params.str("path");
    let line = ctx.params.u64("line")?;
    let line_type = match ctx.params.str("line_type") {
        None => None,
        Some(t) if t == "new" || t == "old" => Some(t),
        Some(_) => return Err(ApiError::Invalid("line_type".into())),
    };
    if let Some(path) = &path {
        let in_diff = parent_diffs(ctx, pid, &sha)?
            .iter()
            .any(|d| &d.new_path == path || &d.old_path == path);
        if !in_diff {
            return Err(ApiError::BadRequest(
                "400 (Bad request) \"path\" is not part of the commit diff".into(),
            ));
        }
    }
    let id = ctx.store.next_id("commit_comment");
    let now = ctx.store.now();
    ctx.store.commit_comments.insert(
        id,
        CommitComment {
            project_id: pid,
            sha,
            note,
            path,
            line,
            line_type,
            author_id: uid,
            created_at: now,
        },
    );
    let c = ctx
        .store
        .commit_comments
        .get(&id)
        .ok_or(ApiError::NotFound("Note"))?;
    Ok(Reply::created(comment(ctx.store, c)))
}

fn cherry_pick(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let (pid, sha) = find(ctx)?;
    ctx.require_level(pid, access::DEVELOPER)?;
    let branch = ctx.params.required_nonblank("branch")?;
    let repo = &ctx.project(pid)?.repo;
    let head = repo
        .branches
        .get(&branch)
        .and_then(|b| repo.commits.get(&b.commit))
        .cloned()
        .ok_or(ApiError::NotFound("Branch"))?;
    if !super::branches::can_push(ctx, pid, &branch) {
        return Err(ApiError::ForbiddenBecause(
            "You are not allowed to push into this branch".into(),
        ));
    }
    let picked = repo
        .commits
        .get(&sha)
        .cloned()
        .ok_or(ApiError::NotFound("Commit"))?;
    let mut tree = (*head.tree).clone();
    for d in parent_diffs(ctx, pid, &sha)? {
        if d.deleted_file || d.renamed_file {
            tree.remove(&d.old_path);
        }
        if !d.deleted_file {
            if let Some(content) = picked.tree.get(&d.new_path) {
                tree.insert(d.new_path.clone(), content.clone());
            }
        }
    }
    if tree == *head.tree {
        return Err(ApiError::BadRequest("Sorry, we cannot cherry-pick this commit automatically. This commit may already have been cherry-picked, or a more recent commit may have updated some of its content.".into()));
    }
    let now = ctx.store.now();
    let p = ctx
        .store
        .projects
        .get_mut(&pid)
        .ok_or(ApiError::NotFound("Project"))?;
    let message = format!("{}\n\n(cherry picked from commit {sha})", picked.message);
    let new = p.repo.commit(
        Some(head.id.clone()),
        tree,
        &message,
        &picked.author_name,
        &picked.author_email,
        now,
    );
    p.repo.set_branch(&branch, &new, false);
    p.last_activity_at = now;
    ctx.store
        .record_push(pid, uid, &branch, Some(head.id), Some(new.clone()));
    let c = ctx
        .project(pid)?
        .repo
        .commits
        .get(&new)
        .ok_or(ApiError::NotFound("Commit"))?;
    Ok(Reply::created(commit(c)))
}

/// Reverts a commit on `branch`: a new commit undoing the commit's changes, by the caller.
fn revert(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let (pid, sha) = find(ctx)?;
    ctx.require_level(pid, access::DEVELOPER)?;
    let branch = ctx.params.required_nonblank("branch")?;
    let repo = &ctx.project(pid)?.repo;
    let head = repo
        .branches
        .get(&branch)
        .and_then(|b| repo.commits.get(&b.commit))
        .cloned()
        .ok_or(ApiError::NotFound("Branch"))?;
    if !super::branches::can_push(ctx, pid, &branch) {
        return Err(ApiError::ForbiddenBecause(
            "You are not allowed to push into this branch".into(),
        ));
    }
    let reverted = repo
        .commits
        .get(&sha)
        .cloned()
        .ok_or(ApiError::NotFound("Commit"))?;
    let parent_tree = reverted
        .parent_ids
        .first()
        .and_then(|p| repo.commits.get(p))
        .map(|p| p.tree.clone())
        .unwrap_or_default();
    let mut tree = (*head.tree).clone();
    for d in tree_diff(&parent_tree, &reverted.tree) {
        if !d.deleted_file {
            tree.remove(&d.new_path);
        }
        if !d.new_file {
            if let Some(content) = parent_tree.get(&d.old_path) {
                tree.insert(d.old_path.clone(), content.clone());
            }
        }
    }
    if tree == *head.tree {
        return Err(ApiError::BadRequest("Sorry, we cannot revert this commit automatically. This commit may already have been reverted, or a more recent commit may have updated some of its content.".into()));
    }
    let (name, email) = ctx
        .store
        .users
        .get(&uid)
        .map(|u| (u.name.clone(), u.email.clone()))
        .unwrap_or_default();
    let message = format!("Revert \"{}\"\n\nThis reverts commit {sha}", reverted.title());
    let now = ctx.store.now();
    let p = ctx
        .store
        .projects
        .get_mut(&pid)
        .ok_or(ApiError::NotFound("Project"))?;
    let new = p
        .repo
        .commit(Some(head.id.clone()), tree, &message, &name, &email, now);
    p.repo.set_branch(&branch, &new, false);
    p.last_activity_at = now;
    ctx.store
        .record_push(pid, uid, &branch, Some(head.id), Some(new.clone()));
    let c = ctx
        .project(pid)?
        .repo
        .commits
        .get(&new)
        .ok_or(ApiError::NotFound("Commit"))?;
    Ok(Reply::created(commit(c)))
}

/// The branches and tags whose history holds the commit (`type`: `branch`, `tag` or `all`).
fn refs(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (pid, sha) = find(ctx)?;
    let kind = ctx.params.str("type").unwrap_or_else(|| "all".into());
    let repo = &ctx.project(pid)?.repo;
    let mut items = Vec::new();
    if kind == "all" || kind == "branch" {
        for (name, b) in &repo.branches {
            if repo.is_ancestor(&sha, &b.commit) {
                items.push(serde_json::json!({"type": "branch", "name": name}));
            }
        }
    }
    if kind == "all" || kind == "tag" {
        for (name, t) in &repo.tags {
            if repo.is_ancestor(&sha, &t.commit) {
                items.push(serde_json::json!({"type": "tag", "name": name}));
            }
        }
    }
    ctx.paginate(items)
}

/// The project's merge requests whose source branch holds the commit.
fn merge_requests(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (pid, sha) = find(ctx)?;
    let mut found: Vec<_> = ctx
        .store
        .merge_requests
        .values()
        .filter(|m| m.project_id == pid)
        .filter(|m| {
            crate::entities::merge_request::source_sha(ctx.store, m).is_some_and(|head| {
                ctx.store
                    .projects
                    .get(&m.source_project_id)
                    .is_some_and(|p| p.repo.is_ancestor(&sha, &head))
            })
        })
        .collect();
    found.sort_by_key(|m| std::cmp::Reverse(m.id));
    let items: Vec<Value> = found
        .into_iter()
        .map(|m| crate::entities::merge_request::merge_request(ctx.store, m, None))
        .collect();
    ctx.paginate(items)
}

/// Commits in the simulator are never signed.
fn signature(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    find(ctx)?;
    Err(ApiError::NotFound("Signature"))
}

fn list_statuses(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (pid, sha) = find(ctx)?;
    let reference = ctx.params.str("ref");
    let name = ctx.params.str("name");
    let all = ctx.params.flag("all", false)?;
    let mut found: Vec<&CommitStatus> = ctx
        .store
        .commit_statuses
        .values()
        .filter(|s| s.project_id == pid && s.sha == sha)
        .filter(|s| reference.is_none() || s.ref_name == reference)
        .filter(|s| name.as_ref().map_or(true, |n| &s.name == n))
        .collect();
    if !all {
        let mut latest: Vec<&CommitStatus> = Vec::new();
        for s in found.into_iter().rev() {
            if !latest
                .iter()
                .any(|l| l.name == s.name && l.ref_name == s.ref_name)
            {
                latest.push(s);
            }
        }
        latest.reverse();
        found = latest;
    }
    let items: Vec<Value> = found.into_iter().map(|s| render_status(ctx.store, s)).collect();
    ctx.paginate(items)
}

fn create_status(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let pid = ctx.project_id()?;
    ctx.require_level(pid, access::DEVELOPER)?;
    let sha = ctx
        .project(pid)?
        .repo
        .commits
        .get(ctx.path_param("sha"))
        .map(|c| c.id.clone())
        .ok_or(ApiError::NotFound("Commit"))?;
    let state = ctx.params.required_str("state")?;
    if !["pending", "running", "success", "failed", "canceled"].contains(&state.as_str()) {
        return Err(ApiError::Param("state does not have a valid value".into()));
    }
    let name = ctx
        .params
        .str("name")
        .or_else(|| ctx.params.str("context"))
        .unwrap_or_else(|| "default".into());
    let reference = ctx.params.str("ref").or_else(|| {
        ctx.project(pid).ok().and_then(|p| {
            p.repo
                .branches
                .iter()
                .find(|(_, b)| b.commit == sha)
                .map(|(n, _)| n.clone())
        })
    });
    let coverage = match ctx.params.str("coverage") {
        Some(c) => Some(
            c.parse::<f64>()
                .map_err(|_| ApiError::Invalid("coverage".into()))?,
        ),
        None => None,
    };
    let now = ctx.store.now();
    let existing = ctx
        .store
        .commit_statuses
        .values()
        .find(|s| s.project_id == pid && s.sha == sha && s.name == name && s.ref_name == reference)
        .map(|s| s.id);
    let id = existing.unwrap_or_else(|| ctx.store.next_id("commit_status"));
    let started = matches!(state.as_str(), "running" | "success" | "failed" | "canceled");
    let finished = matches!(state.as_str(), "success" | "failed" | "canceled");
    let previous = ctx.store.commit_statuses.get(&id).cloned();
    ctx.store.commit_statuses.insert(
        id,
        CommitStatus {
            id,
            project_id: pid,
            sha,
            ref_name: reference,
            status: state,
            name,
            target_url: ctx.params.str("target_url"),
            description: ctx.params.str("description"),
            coverage,
            author_id: uid,
            created_at: previous.as_ref().map_or(now, |p| p.created_at),
            started_at: if started {
                previous.as_ref().and_then(|p| p.started_at).or(Some(now))
            } else {
                None
            },
            finished_at: finished.then_some(now),
        },
    );
    let s = ctx
        .store
        .commit_statuses
        .get(&id)
        .ok_or(ApiError::NotFound("Commit Status"))?;
    Ok(Reply::created(render_status(ctx.store, s)))
}
