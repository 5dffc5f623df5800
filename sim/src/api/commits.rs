//! Commits and files: list (newest first, `ref_name`, `since`, `until`, `path`), get, create with `actions[]`,
//! and the files API (`GET …/files/:file_path`, `…/raw`).

use http::Method;
use serde_json::{json, Map, Value};

use crate::context::Ctx;
use crate::entities::repo::{commit, commit_detail};
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::sha::{base64_encode, sha1_hex};
use crate::store::access;
use crate::store::repo::{apply_actions, valid_branch_name, ActionError};

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    vec![
        api(Method::GET, "/projects/{id}/repository/commits", list),
        api(Method::POST, "/projects/{id}/repository/commits", create),
        api(Method::GET, "/projects/{id}/repository/commits/{sha}", show),
        api(Method::GET, "/projects/{id}/repository/files/{file_path}", file),
        api(
            Method::GET,
            "/projects/{id}/repository/files/{file_path}/raw",
            file_raw,
        ),
        api(
            Method::GET,
            "/projects/{id}/repository/files/{file_path}/blame",
            file_blame,
        ),
    ]
}

fn require_read_code(ctx: &Ctx<'_>, pid: u64) -> Result<(), ApiError> {
    let p = ctx.project(pid)?;
    if p.visibility == crate::store::Visibility::Private && ctx.level(pid) < access::REPORTER {
        return Err(ApiError::Forbidden);
    }
    Ok(())
}

fn time_param(ctx: &Ctx<'_>, name: &str) -> Result<Option<i64>, ApiError> {
    match ctx.params.str(name) {
        None => Ok(None),
        Some(s) => crate::time::parse(&s)
            .map(Some)
            .ok_or_else(|| ApiError::Invalid(name.to_string())),
    }
}

fn list(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = ctx.project_id()?;
    require_read_code(ctx, pid)?;
    let since = time_param(ctx, "since")?;
    let until = time_param(ctx, "until")?;
    let path = ctx.params.str("path");
    let p = ctx.project(pid)?;
    let reference = ctx
        .params
        .str("ref_name")
        .unwrap_or_else(|| p.default_branch.clone());
    // `all=true`: the commits of every branch, newest first.
    let all = ctx.params.flag("all", false)?;
    let commits: Vec<&crate::store::repo::Commit> = if all {
        let mut seen = std::collections::BTreeSet::new();
        let mut found: Vec<_> = p
            .repo
            .branches
            .values()
            .flat_map(|b| p.repo.history(&b.commit))
            .filter(|c| seen.insert(c.id.clone()))
            .collect();
        found.sort_by(|a, b| b.date.cmp(&a.date).then_with(|| b.id.cmp(&a.id)));
        found
    } else {
        let head = p.repo.resolve(&reference).ok_or(ApiError::NotFound("Commit"))?;
        p.repo.history(&head.id)
    };
    let items: Vec<Value> = commits
        .into_iter()
        .filter(|c| since.map_or(true, |t| c.date >= t))
        .filter(|c| until.map_or(true, |t| c.date <= t))
        .filter(|c| path.as_deref().map_or(true, |path| p.repo.touches(c, path)))
        .map(commit)
        .collect();
    ctx.paginate(items)
}

fn show(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = ctx.project_id()?;
    require_read_code(ctx, pid)?;
    let include_stats = ctx.params.flag("stats", true)?;
    let p = ctx.project(pid)?;
    let c = p
        .repo
        .resolve(ctx.path_param("sha"))
        .ok_or(ApiError::NotFound("Commit"))?;
    Ok(Reply::ok(commit_detail(&p.repo, c, pid, include_stats)))
}

fn create(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let pid = ctx.project_id()?;
    ctx.require_level(pid, access::DEVELOPER)?;
    let branch = ctx.params.required_str("branch")?;
    let message = ctx.params.required_str("commit_message")?;
    let actions = ctx
        .params
        .objects("actions")
        .ok_or_else(|| ApiError::Missing("actions".into()))?;
    if actions.is_empty() {
        return Err(ApiError::Missing("actions".into()));
    }
    let include_stats = ctx.params.flag("stats", true)?;
    let sha = write_commit(ctx, pid, uid, &branch, &message, &actions)?;
    let p = ctx.project(pid)?;
    let c = p.repo.commits.get(&sha).ok_or(ApiError::NotFound("Commit"))?;
    Ok(Reply::created(commit_detail(&p.repo, c, pid, include_stats)))
}

/// Applies `actions` on top of `start_branch` (default: `branch`), commits as the caller (or `author_name`/
/// `author_email`), moves `branch` and records a push event; returns the new commit id.
pub fn write_commit(
    ctx: &mut Ctx<'_>,
    pid: u64,
    uid: u64,
    branch: &str,
    message: &str,
    actions: &[Map<String, Value>],
) -> Result<String, ApiError> {
    if !valid_branch_name(branch) {
        return Err(ApiError::BadRequest("Branch name is invalid".into()));
    }
    let p = ctx.project(pid)?;
    let exists = p.repo.branches.contains_key(branch);
    let before = p.repo.branches.get(branch).map(|b| b.commit.clone());
    let start = ctx
        .params
        .str("start_branch")
        .unwrap_or_else(|| branch.to_string());
    // The first commit of an empty repository has no parent; it creates its branch, which becomes the default.
    let empty = p.repo.branches.is_empty();
    let parent = match p.repo.resolve(&start) {
        Some(c) => Some(c.clone()),
        None if empty => None,
        None if exists => return Err(ApiError::BadRequest("Invalid reference name".into())),
        None => {
            return Err(ApiError::BadRequest(
                "You can only create or edit files when you are on a branch".into(),
            ))
        }
    };
    if exists && !super::branches::can_push(ctx, pid, branch) {
        return Err(ApiError::ForbiddenBecause(
            "You are not allowed to push into this branch".into(),
        ));
    }
    let base = parent.as_ref().map(|c| c.tree.clone()).unwrap_or_default();
    let tree = apply_actions(&base, actions).map_err(|e| match e {
        ActionError::Invalid(msg) => ApiError::BadRequest(msg),
        other => ApiError::BadRequest(other.to_string()),
    })?;
    let (default_name, default_email) = ctx
        .store
        .users
        .get(&uid)
        .map(|u| (u.name.clone(), u.email.clone()))
        .unwrap_or_default();
    let name = ctx.params.str("author_name").unwrap_or(default_name);
    let email = ctx.params.str("author_email").unwrap_or(default_email);
    let now = ctx.store.now();
    let p = ctx
        .store
        .projects
        .get_mut(&pid)
        .ok_or(ApiError::NotFound("Project"))?;
    let sha = p
        .repo
        .commit(parent.map(|c| c.id), tree, message, &name, &email, now);
    p.repo.set_branch(branch, &sha, empty);
    if empty {
        p.default_branch = branch.to_string();
    }
    p.last_activity_at = now;
    ctx.store.record_push(pid, uid, branch, before, Some(sha.clone()));
    Ok(sha)
}

/// The file `:file_path` at `ref` (required unless `ref_optional`, then the default branch): its path, the commit
/// read, its content and the last commit that changed it.
fn file_at(ctx: &Ctx<'_>, ref_optional: bool) -> Result<(String, String, Vec<u8>, String), ApiError> {
    let pid = ctx.project_id()?;
    require_read_code(ctx, pid)?;
    let p = ctx.project(pid)?;
    let reference = match ctx.params.str("ref") {
        Some(r) => r,
        None if ref_optional => p.default_branch.clone(),
        None => return Err(ApiError::Missing("ref".into())),
    };
    let path = ctx.path_param("file_path").to_string();
    let c = p.repo.resolve(&reference).ok_or(ApiError::NotFound("Commit"))?;
    let content = c.tree.get(&path).cloned().ok_or(ApiError::NotFound("File"))?;
    let last = p
        .repo
        .history(&c.id)
        .into_iter()
        .find(|h| p.repo.touches(h, &path))
        .map(|h| h.id.clone())
        .unwrap_or_else(|| c.id.clone());
    Ok((path, c.id.clone(), content, last))
}

/// The `X-<Word>-*` headers the service sends with a file (its blob id, commit ids, name, path, ref and size).
fn file_headers(ctx: &Ctx<'_>, reply: &mut Reply, path: &str, commit_id: &str, content: &[u8], last: &str) {
    let mut word = ctx.store.identifier_word.clone();
    if let Some(first) = word.get_mut(..1) {
        first.make_ascii_uppercase();
    }
    let reference = ctx.params.str("ref").unwrap_or_default();
    let fields = [
        ("Blob-Id", sha1_hex(content)),
        ("Commit-Id", commit_id.to_string()),
        ("Content-Sha256", String::new()),
        ("Encoding", "base64".to_string()),
        ("File-Name", path.rsplit('/').next().unwrap_or(path).to_string()),
        ("File-Path", path.to_string()),
        ("Last-Commit-Id", last.to_string()),
        ("Ref", reference),
        ("Size", content.len().to_string()),
    ];
    for (name, value) in fields {
        if !value.is_empty() {
            reply.headers.push((format!("X-{word}-{name}").into(), value));
        }
    }
}

fn file(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (path, commit_id, content, last) = file_at(ctx, false)?;
    let reference = ctx.params.str("ref").unwrap_or_default();
    let mut reply = Reply::ok(json!({
        "file_name": path.rsplit('/').next().unwrap_or(&path),
        "file_path": path,
        "size": content.len(),
        "encoding": "base64",
        "content": base64_encode(&content),
        "ref": reference,
        "blob_id": sha1_hex(&content),
        "commit_id": commit_id,
        "last_commit_id": last,
    }));
    file_headers(ctx, &mut reply, &path, &commit_id, &content, &last);
    Ok(reply)
}

fn file_raw(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (path, commit_id, content, last) = file_at(ctx, true)?;
    let mut reply = Reply::bytes("text/plain; charset=utf-8", content.clone());
    file_headers(ctx, &mut reply, &path, &commit_id, &content, &last);
    Ok(reply)
}

/// Blame: the file's lines as one range attributed to the last commit that changed the file.
fn file_blame(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (_, _, content, last) = file_at(ctx, false)?;
    let pid = ctx.project_id()?;
    let p = ctx.project(pid)?;
    let c = p.repo.commits.get(&last).ok_or(ApiError::NotFound("Commit"))?;
    let text = String::from_utf8_lossy(&content);
    let lines: Vec<&str> = text.lines().collect();
    Ok(Reply::ok(json!([{
        "commit": {
            "id": c.id,
            "parent_ids": c.parent_ids,
            "message": c.message,
            "authored_date": crate::entities::ts(c.date),
            "author_name": c.author_name,
            "author_email": c.author_email,
            "committed_date": crate::entities::ts(c.date),
            "committer_name": c.author_name,
            "committer_email": c.author_email,
        },
        "lines": lines,
    }])))
}
