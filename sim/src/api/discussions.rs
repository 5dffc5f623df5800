//! Discussions (threads of notes) on issues, merge requests and project snippets: list, start, show, resolve (merge
//! requests), and a thread's notes (reply, show, edit or resolve, delete). A note made through the notes API is a
//! discussion of its own (`individual_note`).

use std::collections::BTreeMap;

use http::Method;
use serde_json::Value;

use crate::context::Ctx;
use crate::entities::note::{discussion as render_discussion, note as render_note};
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::store::{access, Note, NoteableKind};

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    let mut routes = Vec::new();
    for parent in [
        "/projects/{id}/issues/{issue_iid}",
        "/projects/{id}/merge_requests/{merge_request_iid}",
        "/projects/{id}/snippets/{snippet_id}",
    ] {
        let base = format!("{parent}/discussions");
        let one = format!("{base}/{{discussion_id}}");
        let note = format!("{one}/notes/{{note_id}}");
        routes.push(api(Method::GET, &base, list));
        routes.push(api(Method::POST, &base, create));
        routes.push(api(Method::GET, &one, show));
        routes.push(api(Method::PUT, &one, resolve));
        routes.push(api(Method::POST, &format!("{one}/notes"), reply));
        routes.push(api(Method::GET, &note, show_note));
        routes.push(api(Method::PUT, &note, update_note));
        routes.push(api(Method::DELETE, &note, delete_note));
    }
    routes
}

/// The notes of the request's noteable grouped by discussion, threads in the order they started.
fn threads<'c>(ctx: &'c Ctx<'_>) -> Result<Vec<(String, Vec<&'c Note>)>, ApiError> {
    let (_, kind, id) = super::notes::noteable(ctx)?;
    let mut by_id: BTreeMap<&str, Vec<&Note>> = BTreeMap::new();
    for n in ctx
        .store
        .notes
        .values()
        .filter(|n| n.noteable_kind == kind && n.noteable_id == id)
    {
        by_id.entry(n.discussion_id.as_str()).or_default().push(n);
    }
    let mut out: Vec<(String, Vec<&Note>)> = by_id
        .into_iter()
        .map(|(d, mut notes)| {
            notes.sort_by_key(|n| n.id);
            (d.to_string(), notes)
        })
        .collect();
    out.sort_by_key(|(_, notes)| notes.first().map(|n| n.id));
    Ok(out)
}

fn list(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let items: Vec<Value> = threads(ctx)?
        .iter()
        .map(|(d, notes)| render_discussion(ctx.store, d, notes))
        .collect();
    ctx.paginate(items)
}

fn thread(ctx: &Ctx<'_>) -> Result<Value, ApiError> {
    let wanted = ctx.path_param("discussion_id");
    threads(ctx)?
        .iter()
        .find(|(d, _)| d == wanted)
        .map(|(d, notes)| render_discussion(ctx.store, d, notes))
        .ok_or(ApiError::NotFound("Discussion"))
}

fn show(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    Ok(Reply::ok(thread(ctx)?))
}

/// Adds a note to the request's noteable as part of `discussion` (a new thread when None); returns its id.
fn add_note(ctx: &mut Ctx<'_>, discussion: Option<String>) -> Result<u64, ApiError> {
    let uid = ctx.user_id()?;
    let (_, kind, id) = super::notes::noteable(ctx)?;
    let body = ctx.params.required_nonblank("body")?;
    let note_id = ctx
        .store
        .insert_note(kind, id, uid, body, None)
        .ok_or(ApiError::NotFoundPlain)?;
    if let Some(n) = ctx.store.notes.get_mut(&note_id) {
        n.in_discussion = true;
        if let Some(d) = discussion {
            n.discussion_id = d;
        }
    }
    Ok(note_id)
}

fn create(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let note_id = add_note(ctx, None)?;
    let n = ctx.store.notes.get(&note_id).ok_or(ApiError::NotFound("Note"))?;
    Ok(Reply::created(render_discussion(
        ctx.store,
        &n.discussion_id,
        &[n],
    )))
}

fn reply(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    thread(ctx)?;
    let discussion = ctx.path_param("discussion_id").to_string();
    let note_id = add_note(ctx, Some(discussion))?;
    let n = ctx.store.notes.get(&note_id).ok_or(ApiError::NotFound("Note"))?;
    Ok(Reply::created(render_note(ctx.store, n)))
}

/// The note `:note_id` of discussion `:discussion_id`, with the project id.
fn find_note(ctx: &Ctx<'_>) -> Result<(u64, Note), ApiError> {
    let (pid, note) = super::notes::find_note(ctx)?;
    if note.discussion_id != ctx.path_param("discussion_id") {
        return Err(ApiError::NotFound("Note"));
    }
    Ok((pid, note))
}

fn show_note(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (_, note) = find_note(ctx)?;
    Ok(Reply::ok(render_note(ctx.store, &note)))
}

/// Sets `resolved` on the given notes (merge request threads only; Developers and the notes' authors).
fn set_resolved(ctx: &mut Ctx<'_>, pid: u64, notes: &[u64], resolved: bool) -> Result<(), ApiError> {
    let uid = ctx.user_id()?;
    for id in notes {
        let Some(n) = ctx.store.notes.get(id) else {
            continue;
        };
        if n.noteable_kind != NoteableKind::MergeRequest || !n.in_discussion {
            return Err(ApiError::BadRequest("Discussion is not resolvable".into()));
        }
        if n.author_id != uid && ctx.level(pid) < access::DEVELOPER {
            return Err(ApiError::Forbidden);
        }
    }
    for id in notes {
        if let Some(n) = ctx.store.notes.get_mut(id) {
            n.resolved = resolved;
            n.resolved_by = resolved.then_some(uid);
        }
    }
    Ok(())
}

fn update_note(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let (pid, note) = find_note(ctx)?;
    if let Some(resolved) = ctx.params.bool("resolved")? {
        set_resolved(ctx, pid, &[note.id], resolved)?;
    } else {
        if note.author_id != uid && !ctx.is_admin() {
            return Err(ApiError::Forbidden);
        }
        let body = ctx.params.required_nonblank("body")?;
        let now = ctx.store.now();
        if let Some(n) = ctx.store.notes.get_mut(&note.id) {
            n.body = body;
            n.updated_at = now;
        }
    }
    let n = ctx.store.notes.get(&note.id).ok_or(ApiError::NotFound("Note"))?;
    Ok(Reply::ok(render_note(ctx.store, n)))
}

/// Resolves or reopens a whole merge request thread.
fn resolve(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let resolved = ctx
        .params
        .bool("resolved")?
        .ok_or_else(|| ApiError::Missing("resolved".into()))?;
    let (pid, _, _) = super::notes::noteable(ctx)?;
    let wanted = ctx.path_param("discussion_id").to_string();
    let ids: Vec<u64> = threads(ctx)?
        .iter()
        .find(|(d, _)| *d == wanted)
        .map(|(_, notes)| notes.iter().map(|n| n.id).collect())
        .ok_or(ApiError::NotFound("Discussion"))?;
    set_resolved(ctx, pid, &ids, resolved)?;
    Ok(Reply::ok(thread(ctx)?))
}

fn delete_note(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let (pid, note) = find_note(ctx)?;
    if note.author_id != uid && ctx.level(pid) < access::MAINTAINER {
        return Err(ApiError::Forbidden);
    }
    ctx.store.notes.remove(&note.id);
    Ok(Reply::no_content())
}
