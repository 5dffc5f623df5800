//! Merge request extras: commits, changes, closed issues, diff versions, cancelling "merge when pipeline
//! succeeds", and rebasing the source branch onto the target.

use http::Method;
use serde_json::{json, Value};

use crate::context::Ctx;
use crate::entities::issue::issue as render_issue;
use crate::entities::merge_request::{merge_request as render_mr, source_sha};
use crate::entities::repo::{commit, diff};
use crate::entities::ts;
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::store::diff::tree_diff;
use crate::store::repo::Commit;
use crate::store::{access, MergeRequest, Store};

const MR: &str = "/projects/{id}/merge_requests/{merge_request_iid}";

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    vec![
        api(Method::GET, &format!("{MR}/commits"), commits),
        api(Method::GET, &format!("{MR}/changes"), changes),
        api(Method::GET, &format!("{MR}/closes_issues"), closes_issues),
        api(Method::GET, &format!("{MR}/versions"), versions),
        api(Method::GET, &format!("{MR}/versions/{{version_id}}"), version),
        api(
            Method::POST,
            &format!("{MR}/cancel_merge_when_pipeline_succeeds"),
            cancel_mwps,
        ),
        api(Method::PUT, &format!("{MR}/rebase"), rebase),
    ]
}

/// (head, merge base, target head) of a merge request.
struct Refs {
    head: Option<String>,
    base: Option<String>,
    start: Option<String>,
}

fn refs(store: &Store, m: &MergeRequest) -> Refs {
    let Some(p) = store.projects.get(&m.project_id) else {
        return Refs {
            head: None,
            base: None,
            start: None,
        };
    };
    let head = source_sha(store, m);
    let start = p.repo.resolve(&m.target_branch).map(|c| c.id.clone());
    let base = match (&head, &start) {
        (Some(h), Some(s)) => p.repo.merge_base(h, s),
        _ => None,
    };
    Refs { head, base, start }
}

fn mr_commits<'a>(store: &'a Store, m: &MergeRequest, r: &Refs) -> Vec<&'a Commit> {
    match (store.projects.get(&m.project_id), &r.head) {
        (Some(p), Some(head)) => p.repo.commits_between(r.base.as_deref(), head),
        _ => Vec::new(),
    }
}

fn mr_diffs(store: &Store, m: &MergeRequest, r: &Refs) -> Vec<Value> {
    let Some(p) = store.projects.get(&m.project_id) else {
        return Vec::new();
    };
    let tree = |sha: &Option<String>| {
        sha.as_deref()
            .and_then(|s| p.repo.commits.get(s))
            .map(|c| c.tree.clone())
            .unwrap_or_default()
    };
    tree_diff(&tree(&r.base), &tree(&r.head))
        .iter()
        .map(diff)
        .collect()
}

fn load(ctx: &Ctx<'_>) -> Result<MergeRequest, ApiError> {
    let (_, id) = super::merge_requests::find_mr(ctx)?;
    ctx.store
        .merge_requests
        .get(&id)
        .cloned()
        .ok_or(ApiError::NotFound("Merge Request"))
}

fn commits(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let m = load(ctx)?;
    let r = refs(ctx.store, &m);
    let items: Vec<Value> = mr_commits(ctx.store, &m, &r).into_iter().map(commit).collect();
    ctx.paginate(items)
}

fn changes(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let m = load(ctx)?;
    let r = refs(ctx.store, &m);
    let mut v = render_mr(ctx.store, &m, Some(ctx.caller));
    if let Value::Object(map) = &mut v {
        map.insert("changes".into(), Value::Array(mr_diffs(ctx.store, &m, &r)));
    }
    Ok(Reply::ok(v))
}

/// Issue iids named as `Closes #N` (also close/closed/fix/fixes/fixed/resolve/resolves/resolved) in a text.
pub fn closing_references(text: &str) -> Vec<u64> {
    const VERBS: &[&str] = &[
        "close",
        "closes",
        "closed",
        "closing",
        "fix",
        "fixes",
        "fixed",
        "fixing",
        "resolve",
        "resolves",
        "resolved",
        "resolving",
    ];
    let lower = text.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty())
        .collect();
    let mut out = Vec::new();
    let mut closing = false;
    for word in words {
        let bare = word.trim_end_matches(':');
        if VERBS.contains(&bare) {
            closing = true;
            continue;
        }
        if closing {
            if let Some(n) = word
                .strip_prefix('#')
                .map(|n| n.trim_end_matches(|c: char| !c.is_ascii_digit()))
                .and_then(|n| n.parse::<u64>().ok())
            {
                if !out.contains(&n) {
                    out.push(n);
                }
                continue;
            }
            closing = word == "and" || word == "issue" || word == "issues";
        }
    }
    out
}

fn closes_issues(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let m = load(ctx)?;
    let r = refs(ctx.store, &m);
    let mut text = m.description.clone().unwrap_or_default();
    for c in mr_commits(ctx.store, &m, &r) {
        text.push('\n');
        text.push_str(&c.message);
    }
    let items: Vec<Value> = closing_references(&text)
        .into_iter()
        .filter_map(|iid| ctx.store.issue_by_iid(m.project_id, iid))
        .filter_map(|id| ctx.store.issues.get(&id))
        .filter(|i| super::issues::can_see(ctx, i))
        .map(|i| render_issue(ctx.store, i, None))
        .collect();
    ctx.paginate(items)
}

fn version_json(ctx: &Ctx<'_>, m: &MergeRequest, full: bool) -> Value {
    let r = refs(ctx.store, m);
    let diffs = mr_diffs(ctx.store, m, &r);
    let mut v = json!({
        "id": m.id,
        "head_commit_sha": r.head,
        "base_commit_sha": r.base,
        "start_commit_sha": r.start,
        "created_at": ts(m.created_at),
        "merge_request_id": m.id,
        "state": "collected",
        "real_size": diffs.len().to_string(),
    });
    if let (true, Value::Object(map)) = (full, &mut v) {
        let commits: Vec<Value> = mr_commits(ctx.store, m, &r).into_iter().map(commit).collect();
        map.insert("commits".into(), Value::Array(commits));
        map.insert("diffs".into(), Value::Array(diffs));
    }
    v
}

fn versions(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let m = load(ctx)?;
    let items = vec![version_json(ctx, &m, false)];
    ctx.paginate(items)
}

fn version(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let m = load(ctx)?;
    let wanted = ctx.path_u64("version_id", "MergeRequestDiff")?;
    if wanted != m.id {
        return Err(ApiError::NotFound("MergeRequestDiff"));
    }
    Ok(Reply::ok(version_json(ctx, &m, true)))
}

fn cancel_mwps(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let (pid, id) = super::merge_requests::find_mr(ctx)?;
    let author = ctx.store.merge_requests.get(&id).map(|m| m.author_id);
    if ctx.level(pid) < access::DEVELOPER && author != Some(uid) {
        return Err(ApiError::Unauthorized);
    }
    let Some(m) = ctx.store.merge_requests.get_mut(&id) else {
        return Err(ApiError::NotFound("Merge Request"));
    };
    // The service answers its auto-merge service's result as it is, under 201: a success status, or the error
    // (with the HTTP status it would have meant) when no automatic merge was set.
    if !m.merge_when_pipeline_succeeds {
        return Ok(Reply::created(json!({
            "status": "error",
            "message": "Can't cancel the automatic merge",
            "http_status": 406,
        })));
    }
    m.merge_when_pipeline_succeeds = false;
    Ok(Reply::created(json!({"status": "success"})))
}

/// Replays the source branch's own commits on top of the target branch (the service does this in the
/// background and answers 202 at once; here it is done before the answer).
fn rebase(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (pid, id) = super::merge_requests::find_mr(ctx)?;
    ctx.require_level(pid, access::DEVELOPER)?;
    let m = ctx
        .store
        .merge_requests
        .get(&id)
        .cloned()
        .ok_or(ApiError::NotFound("Merge Request"))?;
    if m.state != "opened" || m.source_project_id != pid {
        return Err(ApiError::Forbidden);
    }
    let now = ctx.store.now();
    let Some(p) = ctx.store.projects.get_mut(&pid) else {
        return Err(ApiError::NotFound("Project"));
    };
    let (Some(source), Some(target)) = (
        p.repo.branches.get(&m.source_branch).map(|b| b.commit.clone()),
        p.repo.branches.get(&m.target_branch).map(|b| b.commit.clone()),
    ) else {
        return Err(ApiError::Forbidden);
    };
    if !p.repo.is_ancestor(&target, &source) {
        let base = p.repo.merge_base(&source, &target);
        let own: Vec<Commit> = p
            .repo
            .commits_between(base.as_deref(), &source)
            .into_iter()
            .rev()
            .cloned()
            .collect();
        let mut head = target;
        for c in own {
            let parent_tree = c
                .parent_ids
                .first()
                .and_then(|id| p.repo.commits.get(id))
                .map(|pc| pc.tree.clone())
                .unwrap_or_default();
            let mut tree = p
                .repo
                .commits
                .get(&head)
                .map(|h| (*h.tree).clone())
                .unwrap_or_default();
            for d in tree_diff(&parent_tree, &c.tree) {
                if d.deleted_file || d.renamed_file {
                    tree.remove(&d.old_path);
                }
                if let Some(content) = c.tree.get(&d.new_path).filter(|_| !d.deleted_file) {
                    tree.insert(d.new_path.clone(), content.clone());
                }
            }
            head = p
                .repo
                .commit(Some(head), tree, &c.message, &c.author_name, &c.author_email, now);
        }
        p.repo.set_branch(&m.source_branch, &head, false);
    }
    Ok(Reply::json(
        http::StatusCode::ACCEPTED,
        json!({"rebase_in_progress": true}),
    ))
}

#[cfg(test)]
mod tests {
    use super::closing_references;

    #[test]
    fn finds_closing_references() {
        assert_eq!(
            closing_references("Closes #1 and #3, fixes: #7. See #9"),
            vec![1, 3, 7]
        );
        assert_eq!(closing_references("mentions #4 only"), Vec::<u64>::new());
    }
}
