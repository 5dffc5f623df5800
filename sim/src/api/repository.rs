//! Repository browsing: tree, blobs, archive, compare, contributors, removing merged branches, and branch
//! protection.

use std::collections::BTreeMap;

use http::{Method, StatusCode};
use serde_json::{json, Value};

use crate::context::Ctx;
use crate::entities::repo::{branch as render_branch, commit, diff};
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::sha::{base64_encode, sha1_hex};
use crate::store::access;
use crate::store::diff::tree_diff;

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    let r = "/projects/{id}/repository";
    vec![
        api(Method::GET, &format!("{r}/tree"), tree),
        api(Method::GET, &format!("{r}/blobs/{{sha}}"), blob),
        api(Method::GET, &format!("{r}/blobs/{{sha}}/raw"), blob_raw),
        api(Method::GET, &format!("{r}/archive"), archive),
        api(Method::GET, &format!("{r}/archive.{{format}}"), archive),
        api(Method::GET, &format!("{r}/compare"), compare),
        api(Method::GET, &format!("{r}/merge_base"), merge_base),
        api(Method::GET, "/projects/{id}/snapshot", snapshot),
        api(Method::GET, &format!("{r}/contributors"), contributors),
        api(Method::DELETE, &format!("{r}/merged_branches"), merged_branches),
        api(Method::PUT, &format!("{r}/branches/{{branch}}/protect"), protect),
        api(
            Method::PUT,
            &format!("{r}/branches/{{branch}}/unprotect"),
            unprotect,
        ),
    ]
}

/// The project of the request, checking that the caller may read its code.
pub fn readable_project(ctx: &Ctx<'_>) -> Result<u64, ApiError> {
    let pid = ctx.project_id()?;
    let p = ctx.project(pid)?;
    if p.visibility == crate::store::Visibility::Private && ctx.level(pid) < access::REPORTER {
        return Err(ApiError::Forbidden);
    }
    Ok(pid)
}

fn tree(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = readable_project(ctx)?;
    let recursive = ctx.params.flag("recursive", false)?;
    let path = ctx
        .params
        .str("path")
        .unwrap_or_default()
        .trim_matches('/')
        .to_string();
    let p = ctx.project(pid)?;
    let reference = ctx
        .params
        .str("ref")
        .or_else(|| ctx.params.str("ref_name"))
        .unwrap_or_else(|| p.default_branch.clone());
    let c = p.repo.resolve(&reference).ok_or(ApiError::NotFound("Tree"))?;
    let prefix = if path.is_empty() {
        String::new()
    } else {
        format!("{path}/")
    };
    // name → (is_tree, full path, id)
    let mut entries: BTreeMap<String, (bool, String, String)> = BTreeMap::new();
    for (file, content) in c.tree.iter() {
        let Some(rest) = file.strip_prefix(&prefix) else {
            continue;
        };
        let parts: Vec<&str> = rest.split('/').collect();
        let depth = if recursive { parts.len() } else { 1 };
        for i in 0..depth.min(parts.len()) {
            let full = format!("{prefix}{}", parts[..=i].join("/"));
            let is_tree = i + 1 < parts.len();
            let id = if is_tree {
                sha1_hex(format!("tree {full} {}", c.id).as_bytes())
            } else {
                sha1_hex(content)
            };
            entries.entry(full.clone()).or_insert((is_tree, full, id));
        }
    }
    if entries.is_empty() && !path.is_empty() {
        return Err(ApiError::NotFound("Tree"));
    }
    let mut items: Vec<&(bool, String, String)> = entries.values().collect();
    items.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let items: Vec<Value> = items
        .into_iter()
        .map(|(is_tree, full, id)| {
            json!({
                "id": id,
                "name": full.rsplit('/').next().unwrap_or(full),
                "type": if *is_tree { "tree" } else { "blob" },
                "path": full,
                "mode": if *is_tree { "040000" } else { "100644" },
            })
        })
        .collect();
    ctx.paginate(items)
}

fn find_blob(ctx: &Ctx<'_>) -> Result<Vec<u8>, ApiError> {
    let pid = readable_project(ctx)?;
    let sha = ctx.path_param("sha").to_ascii_lowercase();
    ctx.project(pid)?
        .repo
        .commits
        .values()
        .flat_map(|c| c.tree.values())
        .find(|content| sha.len() >= 7 && sha1_hex(content).starts_with(&sha))
        .cloned()
        .ok_or(ApiError::NotFound("Blob"))
}

fn blob(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let content = find_blob(ctx)?;
    Ok(Reply::ok(json!({
        "size": content.len(),
        "encoding": "base64",
        "content": base64_encode(&content),
        "sha": sha1_hex(&content),
    })))
}

fn blob_raw(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    Ok(Reply::bytes("text/plain; charset=utf-8", find_blob(ctx)?))
}

fn archive(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = readable_project(ctx)?;
    let format = ctx
        .params
        .str("format")
        .or_else(|| Some(ctx.path_param("format").to_string()).filter(|f| !f.is_empty()))
        .unwrap_or_else(|| "tar.gz".into());
    let p = ctx.project(pid)?;
    let reference = ctx.params.str("sha").unwrap_or_else(|| p.default_branch.clone());
    // V4 sends the archive inside `begin … rescue not_found!('File') end`: an unknown `sha` is `404 File Not Found`.
    let c = p.repo.resolve(&reference).ok_or(ApiError::NotFound("File"))?;
    let ref_label = reference.replace('/', "-");
    let base = format!("{}-{ref_label}-{}", p.path, c.id);
    let tar = crate::archive::tar(&c.tree, &base);
    let (data, ext, content_type) = match format.as_str() {
        "tar" => (tar, "tar", "application/x-tar"),
        "tar.gz" | "tgz" | "gz" => (crate::archive::gzip(&tar), "tar.gz", "application/gzip"),
        "zip" => (crate::archive::zip(&c.tree, &base), "zip", "application/zip"),
        "tar.bz2" | "tbz" | "tbz2" | "tb2" | "bz2" => (tar, format.as_str(), "application/octet-stream"),
        _ => return Err(ApiError::NotFound("Archive")),
    };
    let mut reply = Reply::bytes(content_type, data);
    reply.headers.push((
        "content-disposition".into(),
        format!("attachment; filename=\"{base}.{ext}\""),
    ));
    Ok(reply)
}

/// The common ancestor of two or more refs.
fn merge_base(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = readable_project(ctx)?;
    let refs = ctx.params.list("refs").unwrap_or_default();
    if refs.len() < 2 {
        return Err(ApiError::BadRequest("Provide at least 2 refs".into()));
    }
    let repo = &ctx.project(pid)?.repo;
    // V4 `lib/api/repositories.rb` `merge_base`: every unknown ref is named in one 400,
    // `render_api_error!("Could not find #{ref_noun}: #{unknown_refs.join(', ')}", 400)`.
    let unknown: Vec<&str> = refs
        .iter()
        .filter(|r| repo.resolve(r).is_none())
        .map(String::as_str)
        .collect();
    if !unknown.is_empty() {
        let noun = if unknown.len() == 1 { "ref" } else { "refs" };
        return Err(ApiError::BadRequest(format!(
            "Could not find {noun}: {}",
            unknown.join(", ")
        )));
    }
    let mut base: Option<String> = None;
    for (i, r) in refs.iter().enumerate() {
        let c = repo.resolve(r).ok_or(ApiError::NotFound("Merge Base"))?;
        base = match base {
            None if i == 0 => Some(c.id.clone()),
            Some(b) => repo.merge_base(&b, &c.id),
            None => None,
        };
    }
    let c = base
        .and_then(|b| repo.commits.get(&b))
        .ok_or(ApiError::NotFound("Merge Base"))?;
    Ok(Reply::ok(crate::entities::repo::commit(c)))
}

/// An administrator's snapshot of the repository: here a tar of the default branch.
fn snapshot(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.require_admin()?;
    let pid = ctx.project_id()?;
    let p = ctx.project(pid)?;
    let tree = p
        .repo
        .resolve(&p.default_branch)
        .map(|c| (*c.tree).clone())
        .unwrap_or_default();
    let mut reply = Reply::bytes("application/x-tar", crate::archive::tar(&tree, &p.path));
    reply.headers.push((
        "content-disposition".into(),
        format!("attachment; filename=\"{}.tar\"", p.path),
    ));
    Ok(reply)
}

fn compare(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = readable_project(ctx)?;
    let from = ctx.params.required_str("from")?;
    let to = ctx.params.required_str("to")?;
    let straight = ctx.params.flag("straight", false)?;
    let repo = &ctx.project(pid)?.repo;
    let (Some(a), Some(b)) = (repo.resolve(&from), repo.resolve(&to)) else {
        return Err(ApiError::NotFound("Ref"));
    };
    let base = if straight {
        Some(a.id.clone())
    } else {
        repo.merge_base(&a.id, &b.id)
    };
    let mut commits: Vec<Value> = repo
        .commits_between(base.as_deref(), &b.id)
        .into_iter()
        .map(commit)
        .collect();
    commits.reverse();
    let base_tree = base
        .as_deref()
        .and_then(|s| repo.commits.get(s))
        .map(|c| c.tree.clone())
        .unwrap_or_default();
    let diffs: Vec<Value> = tree_diff(&base_tree, &b.tree).iter().map(diff).collect();
    let head = if commits.is_empty() {
        Value::Null
    } else {
        commit(b)
    };
    Ok(Reply::ok(json!({
        "commit": head,
        "commits": commits,
        "diffs": diffs,
        "compare_timeout": false,
        "compare_same_ref": from == to,
    })))
}

fn contributors(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = readable_project(ctx)?;
    let order_by = ctx.params.str("order_by").unwrap_or_else(|| "commits".into());
    let desc = ctx.sort_desc(false)?;
    let repo = &ctx.project(pid)?.repo;
    let head = ctx
        .project(pid)?
        .repo
        .resolve(&ctx.project(pid)?.default_branch)
        .map(|c| c.id.clone());
    // V4 `app/models/repository.rb#contributors` counts commits only: `Gitlab::Contributor` starts `additions` and
    // `deletions` at 0 and nothing adds to them.
    let mut by_email: BTreeMap<String, (String, usize)> = BTreeMap::new();
    if let Some(head) = head {
        for c in repo.history(&head) {
            let entry = by_email
                .entry(c.author_email.clone())
                .or_insert_with(|| (c.author_name.clone(), 0));
            entry.1 += 1;
        }
    }
    let mut list: Vec<(String, (String, usize))> = by_email.into_iter().collect();
    match order_by.as_str() {
        "name" => list.sort_by(|a, b| a.1 .0.cmp(&b.1 .0)),
        "email" => list.sort_by(|a, b| a.0.cmp(&b.0)),
        "commits" => list.sort_by_key(|(email, v)| (v.1, email.clone())),
        _ => return Err(ApiError::Invalid("order_by".into())),
    }
    if desc {
        list.reverse();
    }
    let items = list
        .into_iter()
        .map(|(email, (name, commits))| {
            json!({"name": name, "email": email, "commits": commits, "additions": 0, "deletions": 0})
        })
        .collect();
    ctx.paginate(items)
}

fn merged_branches(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = ctx.project_id()?;
    ctx.require_level(pid, access::DEVELOPER)?;
    let p = ctx.project(pid)?;
    let Some(head) = p.repo.branches.get(&p.default_branch).map(|b| b.commit.clone()) else {
        return Ok(Reply::accepted());
    };
    let doomed: Vec<String> = p
        .repo
        .branches
        .iter()
        .filter(|(name, b)| {
            **name != p.default_branch
                && p.repo.protection(name).is_none()
                && p.repo.is_ancestor(&b.commit, &head)
        })
        .map(|(name, _)| name.clone())
        .collect();
    if let Some(p) = ctx.store.projects.get_mut(&pid) {
        for name in doomed {
            p.repo.branches.remove(&name);
        }
    }
    Ok(Reply::accepted())
}

fn set_protection(ctx: &mut Ctx<'_>, protect: bool) -> Result<Reply, ApiError> {
    let pid = ctx.project_id()?;
    ctx.require_level(pid, access::MAINTAINER)?;
    let name = ctx.path_param("branch").to_string();
    let push = ctx.params.flag("developers_can_push", false)?;
    let merge = ctx.params.flag("developers_can_merge", false)?;
    let b = ctx
        .store
        .projects
        .get_mut(&pid)
        .and_then(|p| p.repo.branches.get_mut(&name))
        .ok_or(ApiError::NotFound("Branch"))?;
    b.protected = protect;
    b.developers_can_push = protect && push;
    b.developers_can_merge = protect && merge;
    if !protect {
        // Unprotecting a branch also drops a protected-branch rule on its exact name.
        if let Some(p) = ctx.store.projects.get_mut(&pid) {
            p.repo.protected_rules.remove(&name);
        }
    }
    let p = ctx.project(pid)?;
    let b = p.repo.branches.get(&name).ok_or(ApiError::NotFound("Branch"))?;
    let can_push = super::branches::can_push(ctx, pid, &name);
    Ok(Reply::json(
        StatusCode::OK,
        render_branch(&p.repo, &name, b, &p.default_branch, can_push),
    ))
}

fn protect(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    set_protection(ctx, true)
}

fn unprotect(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    set_protection(ctx, false)
}
