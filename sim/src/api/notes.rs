//! Notes on issues, merge requests and project snippets: list (default newest first), get, create, update (author), delete.

use http::Method;
use serde_json::Value;

use crate::context::Ctx;
use crate::entities::note::note as render_note;
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::store::{access, Note, NoteableKind};

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    let mut routes = Vec::new();
    for base in [
        "/projects/{id}/issues/{issue_iid}/notes",
        "/projects/{id}/merge_requests/{merge_request_iid}/notes",
        "/projects/{id}/snippets/{snippet_id}/notes",
    ] {
        routes.push(api(Method::GET, base, list));
        routes.push(api(Method::POST, base, create));
        let one = format!("{base}/{{note_id}}");
        routes.push(api(Method::GET, &one, show));
        routes.push(api(Method::PUT, &one, update));
        routes.push(api(Method::DELETE, &one, delete));
    }
    routes
}

/// (project id, noteable kind, noteable global id) of the request's issue, merge request or snippet.
pub fn noteable(ctx: &Ctx<'_>) -> Result<(u64, NoteableKind, u64), ApiError> {
    if ctx.path.iter().any(|(n, _)| n == "snippet_id") {
        let (pid, id) = super::snippets::find_snippet(ctx)?;
        return Ok((pid.unwrap_or(0), NoteableKind::Snippet, id));
    }
    if ctx.path.iter().any(|(n, _)| n == "issue_iid") {
        let (pid, id) = super::issues::find_issue(ctx)?;
        Ok((pid, NoteableKind::Issue, id))
    } else {
        let (pid, id) = super::merge_requests::find_mr(ctx)?;
        Ok((pid, NoteableKind::MergeRequest, id))
    }
}

/// The note named by `:note_id` on the request's noteable, with its project id.
pub fn find_note(ctx: &Ctx<'_>) -> Result<(u64, Note), ApiError> {
    let (pid, kind, id) = noteable(ctx)?;
    let note_id = ctx.path_u64("note_id", "Note")?;
    ctx.store
        .notes
        .get(&note_id)
        .filter(|n| n.noteable_kind == kind && n.noteable_id == id)
        .cloned()
        .map(|n| (pid, n))
        .ok_or(ApiError::NotFound("Note"))
}

fn list(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (_, kind, id) = noteable(ctx)?;
    let order_by = ctx.params.str("order_by").unwrap_or_else(|| "created_at".into());
    let desc = ctx.sort_desc(true)?;
    let mut notes: Vec<&Note> = ctx
        .store
        .notes
        .values()
        .filter(|n| n.noteable_kind == kind && n.noteable_id == id)
        .collect();
    match order_by.as_str() {
        "created_at" => notes.sort_by_key(|n| (n.created_at, n.id)),
        "updated_at" => notes.sort_by_key(|n| (n.updated_at, n.id)),
        _ => return Err(ApiError::Invalid("order_by".into())),
    }
    if desc {
        notes.reverse();
    }
    let items: Vec<Value> = notes.into_iter().map(|n| render_note(ctx.store, n)).collect();
    ctx.paginate(items)
}

fn show(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (_, note) = find_note(ctx)?;
    Ok(Reply::ok(render_note(ctx.store, &note)))
}

fn locked(ctx: &Ctx<'_>, kind: NoteableKind, id: u64) -> bool {
    match kind {
        NoteableKind::Issue => ctx.store.issues.get(&id).and_then(|i| i.discussion_locked),
        NoteableKind::MergeRequest => ctx
            .store
            .merge_requests
            .get(&id)
            .and_then(|m| m.discussion_locked),
        NoteableKind::Snippet => None,
    }
    .unwrap_or(false)
}

fn create(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let (pid, kind, id) = noteable(ctx)?;
    let body = ctx.params.required_nonblank("body")?;
    if locked(ctx, kind, id) && ctx.level(pid) < access::REPORTER {
        return Err(ApiError::Forbidden);
    }
    let created_at = match ctx.params.str("created_at") {
        Some(s) if ctx.level(pid) >= access::OWNER => {
            Some(crate::time::parse(&s).ok_or_else(|| ApiError::Invalid("created_at".into()))?)
        }
        _ => None,
    };
    let note_id = ctx
        .store
        .insert_note(kind, id, uid, body, created_at)
        .ok_or(ApiError::NotFoundPlain)?;
    let note = ctx.store.notes.get(&note_id).ok_or(ApiError::NotFound("Note"))?;
    Ok(Reply::created(render_note(ctx.store, note)))
}

fn update(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let (_, note) = find_note(ctx)?;
    if note.author_id != uid && !ctx.is_admin() {
        return Err(ApiError::Forbidden);
    }
    let body = ctx.params.required_nonblank("body")?;
    let now = ctx.store.now();
    if let Some(n) = ctx.store.notes.get_mut(&note.id) {
        n.body = body;
        n.updated_at = now;
    }
    let note = ctx.store.notes.get(&note.id).ok_or(ApiError::NotFound("Note"))?;
    Ok(Reply::ok(render_note(ctx.store, note)))
}

fn delete(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let (pid, note) = find_note(ctx)?;
    if note.author_id != uid && ctx.level(pid) < access::MAINTAINER {
        return Err(ApiError::Forbidden);
    }
    ctx.store.notes.remove(&note.id);
    Ok(Reply::no_content())
}
