//! Award emoji on issues, merge requests and snippets, and on their notes: list, show, award, remove.

use http::{Method, StatusCode};
use serde_json::Value;

use crate::context::Ctx;
use crate::entities::award::award as render;
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::store::{AwardableKind, NoteableKind};

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    let mut routes = Vec::new();
    for item in [
        "/projects/{id}/issues/{issue_iid}",
        "/projects/{id}/merge_requests/{merge_request_iid}",
        "/projects/{id}/snippets/{snippet_id}",
    ] {
        for base in [
            format!("{item}/award_emoji"),
            format!("{item}/notes/{{note_id}}/award_emoji"),
        ] {
            routes.push(api(Method::GET, &base, list));
            routes.push(api(Method::POST, &base, create));
            let one = format!("{base}/{{award_id}}");
            routes.push(api(Method::GET, &one, show));
            routes.push(api(Method::DELETE, &one, delete));
        }
    }
    routes
}

fn awardable(ctx: &Ctx<'_>) -> Result<(AwardableKind, u64), ApiError> {
    if ctx.path.iter().any(|(n, _)| n == "note_id") {
        let (_, note) = super::notes::find_note(ctx)?;
        return Ok((AwardableKind::Note, note.id));
    }
    let (_, kind, id) = super::notes::noteable(ctx)?;
    let kind = match kind {
        NoteableKind::Issue => AwardableKind::Issue,
        NoteableKind::MergeRequest => AwardableKind::MergeRequest,
        NoteableKind::Snippet => AwardableKind::Snippet,
    };
    Ok((kind, id))
}

fn list(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (kind, id) = awardable(ctx)?;
    let items: Vec<Value> = ctx
        .store
        .awards
        .values()
        .filter(|a| a.kind == kind && a.awardable_id == id)
        .map(|a| render(ctx.store, a))
        .collect();
    ctx.paginate(items)
}

fn find(ctx: &Ctx<'_>) -> Result<u64, ApiError> {
    let (kind, id) = awardable(ctx)?;
    let award = ctx.path_u64("award_id", "Award Emoji")?;
    ctx.store
        .awards
        .get(&award)
        .filter(|a| a.kind == kind && a.awardable_id == id)
        .map(|a| a.id)
        .ok_or(ApiError::NotFound("Award Emoji"))
}

fn show(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = find(ctx)?;
    let a = ctx
        .store
        .awards
        .get(&id)
        .ok_or(ApiError::NotFound("Award Emoji"))?;
    Ok(Reply::ok(render(ctx.store, a)))
}

fn create(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let (kind, id) = awardable(ctx)?;
    let name = ctx.params.required_nonblank("name")?;
    let valid = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_+-".contains(c));
    if !valid {
        return Err(ApiError::Status(
            StatusCode::NOT_FOUND,
            "404 Award Emoji Name is not a valid emoji name Not Found".into(),
        ));
    }
    let name = normalize_name(&name).to_string();
    let duplicate = ctx
        .store
        .awards
        .values()
        .any(|a| a.kind == kind && a.awardable_id == id && a.user_id == uid && a.name == name);
    if duplicate {
        return Err(ApiError::Status(
            StatusCode::NOT_FOUND,
            "404 Award Emoji Name has already been taken Not Found".into(),
        ));
    }
    let award = ctx.store.insert_award(kind, id, uid, &name);
    let a = ctx
        .store
        .awards
        .get(&award)
        .ok_or(ApiError::NotFound("Award Emoji"))?;
    Ok(Reply::created(render(ctx.store, a)))
}

/// The canonical name of an emoji alias, as V4's `AwardEmojis::BaseService#normalize_name`
/// (`Gitlab::Emoji.normalize_emoji_name`) before it stores an award; only the vote aliases are known here.
fn normalize_name(name: &str) -> &str {
    match name {
        "+1" => "thumbsup",
        "-1" => "thumbsdown",
        other => other,
    }
}

fn delete(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let id = find(ctx)?;
    let owner = ctx.store.awards.get(&id).map(|a| a.user_id);
    if owner != Some(uid) && !ctx.is_admin() {
        return Err(ApiError::Unauthorized);
    }
    ctx.store.awards.remove(&id);
    Ok(Reply::no_content())
}
