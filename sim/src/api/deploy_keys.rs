//! Deploy keys: the admin list of every key and the admin's creation of an instance key (linked to no project),
//! and a project's keys (list, show, add or reuse, enable, unlink).

use http::{Method, StatusCode};
use serde_json::Value;

use crate::context::Ctx;
use crate::entities::keys::deploy_key;
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::store::access;
use crate::store::keys::valid_public_key;

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    let keys = "/projects/{id}/deploy_keys";
    let one = "/projects/{id}/deploy_keys/{key_id}";
    vec![
        api(Method::GET, "/deploy_keys", list_all),
        api(Method::POST, "/deploy_keys", create_instance_key),
        api(Method::GET, keys, list),
        api(Method::POST, keys, create),
        api(Method::GET, one, show),
        api(Method::DELETE, one, delete),
        api(Method::POST, &format!("{one}/enable"), enable),
    ]
}

fn list_all(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.require_admin()?;
    let items: Vec<Value> = ctx
        .store
        .ssh_keys
        .values()
        .filter(|k| k.user_id.is_none())
        .map(|k| deploy_key(k, k.can_push))
        .collect();
    ctx.paginate(items)
}

fn create_instance_key(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.require_admin()?;
    let key = ctx.params.required_nonblank("key")?.trim().to_string();
    let title = ctx.params.required_nonblank("title")?;
    if ctx.store.key_by_text(&key).is_some() {
        return Err(ApiError::Validation(vec![
            ("key".into(), "has already been taken".into()),
            ("fingerprint".into(), "has already been taken".into()),
        ]));
    }
    if !valid_public_key(&key) {
        return Err(ApiError::Validation(vec![
            ("key".into(), "is invalid".into()),
            ("fingerprint".into(), "cannot be generated".into()),
        ]));
    }
    let id = ctx.store.insert_key(None, &title, &key, false);
    let k = ctx
        .store
        .ssh_keys
        .get(&id)
        .ok_or(ApiError::NotFound("Deploy Key"))?;
    Ok(Reply::created(deploy_key(k, false)))
}

fn maintained_project(ctx: &Ctx<'_>) -> Result<u64, ApiError> {
    let pid = ctx.project_id()?;
    ctx.require_level(pid, access::MAINTAINER)?;
    Ok(pid)
}

fn list(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = maintained_project(ctx)?;
    let items: Vec<Value> = ctx
        .store
        .deploy_key_links
        .iter()
        .filter(|((p, _), _)| *p == pid)
        .filter_map(|((_, k), push)| ctx.store.ssh_keys.get(k).map(|k| deploy_key(k, *push)))
        .collect();
    ctx.paginate(items)
}

fn linked_key(ctx: &Ctx<'_>, pid: u64) -> Result<(u64, bool), ApiError> {
    let id = ctx.path_u64("key_id", "Deploy Key")?;
    ctx.store
        .deploy_key_links
        .get(&(pid, id))
        .map(|push| (id, *push))
        .ok_or(ApiError::NotFound("Deploy Key"))
}

fn key_reply(ctx: &Ctx<'_>, id: u64, can_push: bool, status: StatusCode) -> Result<Reply, ApiError> {
    let k = ctx
        .store
        .ssh_keys
        .get(&id)
        .ok_or(ApiError::NotFound("Deploy Key"))?;
    Ok(Reply::json(status, deploy_key(k, can_push)))
}

fn show(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = maintained_project(ctx)?;
    let (id, push) = linked_key(ctx, pid)?;
    key_reply(ctx, id, push, StatusCode::OK)
}

/// Whether the caller may link an existing deploy key: administrators, or Maintainer+ in a project that has it.
fn accessible(ctx: &Ctx<'_>, key_id: u64) -> bool {
    ctx.is_admin()
        || ctx
            .store
            .deploy_key_projects(key_id)
            .keys()
            .any(|pid| ctx.level(*pid) >= access::MAINTAINER)
}

fn create(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = maintained_project(ctx)?;
    let key = ctx.params.required_nonblank("key")?.trim().to_string();
    let title = ctx.params.required_nonblank("title")?;
    let can_push = ctx.params.flag("can_push", false)?;
    if let Some(existing) = ctx.store.key_by_text(&key) {
        let id = existing.id;
        let is_deploy_key = existing.user_id.is_none();
        if let Some(push) = ctx.store.deploy_key_links.get(&(pid, id)) {
            return key_reply(ctx, id, *push, StatusCode::CREATED);
        }
        if is_deploy_key && accessible(ctx, id) {
            ctx.store.deploy_key_links.insert((pid, id), can_push);
            return key_reply(ctx, id, can_push, StatusCode::CREATED);
        }
        return Err(ApiError::Validation(vec![
            ("key".into(), "has already been taken".into()),
            ("fingerprint".into(), "has already been taken".into()),
        ]));
    }
    if !valid_public_key(&key) {
        return Err(ApiError::Validation(vec![
            ("key".into(), "is invalid".into()),
            ("fingerprint".into(), "cannot be generated".into()),
        ]));
    }
    let id = ctx.store.insert_key(None, &title, &key, can_push);
    ctx.store.deploy_key_links.insert((pid, id), can_push);
    key_reply(ctx, id, can_push, StatusCode::CREATED)
}

fn enable(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = maintained_project(ctx)?;
    let id = ctx.path_u64("key_id", "Deploy Key")?;
    let is_deploy_key = ctx.store.ssh_keys.get(&id).is_some_and(|k| k.user_id.is_none());
    if !is_deploy_key || !accessible(ctx, id) {
        return Err(ApiError::NotFound("Deploy Key"));
    }
    let push = *ctx.store.deploy_key_links.entry((pid, id)).or_insert(false);
    key_reply(ctx, id, push, StatusCode::CREATED)
}

fn delete(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = maintained_project(ctx)?;
    let (id, _) = linked_key(ctx, pid)?;
    ctx.store.unlink_deploy_key(pid, id);
    Ok(Reply::no_content())
}
