//! Users' SSH keys and secondary e-mail addresses: the caller's own (`/user/keys`, `/user/emails`) and, for
//! administrators, any user's (`/users/:id/keys`, `/users/:id/emails`).

use http::Method;
use serde_json::Value;

use crate::context::Ctx;
use crate::entities::keys::{email as render_email, ssh_key};
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::store::keys::valid_public_key;
use crate::store::Email;

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    vec![
        api(Method::GET, "/keys/{key_id}", admin_key),
        api(Method::GET, "/keys", key_by_fingerprint),
        api(Method::GET, "/users/{id}/keys", list_keys),
        api(Method::POST, "/users/{id}/keys", create_key),
        api(Method::GET, "/users/{id}/keys/{key_id}", show_key),
        api(Method::DELETE, "/users/{id}/keys/{key_id}", delete_key),
        api(Method::GET, "/user/keys", list_keys),
        api(Method::POST, "/user/keys", create_key),
        api(Method::GET, "/user/keys/{key_id}", show_key),
        api(Method::DELETE, "/user/keys/{key_id}", delete_key),
        api(Method::GET, "/users/{id}/emails", list_emails),
        api(Method::POST, "/users/{id}/emails", create_email),
        api(Method::DELETE, "/users/{id}/emails/{email_id}", delete_email),
        api(Method::GET, "/user/emails", list_emails),
        api(Method::POST, "/user/emails", create_email),
        api(Method::GET, "/user/emails/{email_id}", show_email),
        api(Method::DELETE, "/user/emails/{email_id}", delete_email),
    ]
}

/// The user the route is about: `:id` for administrators, else the caller.
fn target_user(ctx: &Ctx<'_>) -> Result<u64, ApiError> {
    if ctx.path.iter().any(|(n, _)| n == "id") {
        ctx.require_admin()?;
        let id = ctx.path_u64("id", "User")?;
        if !ctx.store.users.contains_key(&id) {
            return Err(ApiError::NotFound("User"));
        }
        Ok(id)
    } else {
        ctx.user_id()
    }
}

fn list_keys(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = target_user(ctx)?;
    let items: Vec<Value> = ctx
        .store
        .ssh_keys
        .values()
        .filter(|k| k.user_id == Some(uid))
        .map(ssh_key)
        .collect();
    ctx.paginate(items)
}

fn create_key(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = target_user(ctx)?;
    let key = ctx.params.required_nonblank("key")?.trim().to_string();
    let title = ctx.params.required_nonblank("title")?;
    if !valid_public_key(&key) {
        return Err(ApiError::Validation(vec![
            ("key".into(), "is invalid".into()),
            ("fingerprint".into(), "cannot be generated".into()),
        ]));
    }
    if ctx.store.key_by_text(&key).is_some() {
        return Err(ApiError::Validation(vec![
            ("key".into(), "has already been taken".into()),
            ("fingerprint".into(), "has already been taken".into()),
        ]));
    }
    let id = ctx.store.insert_key(Some(uid), &title, &key, false);
    let k = ctx.store.ssh_keys.get(&id).ok_or(ApiError::NotFound("Key"))?;
    Ok(Reply::created(ssh_key(k)))
}

fn find_key(ctx: &Ctx<'_>) -> Result<u64, ApiError> {
    let uid = target_user(ctx)?;
    let id = ctx.path_u64("key_id", "Key")?;
    ctx.store
        .ssh_keys
        .get(&id)
        .filter(|k| k.user_id == Some(uid))
        .map(|k| k.id)
        .ok_or(ApiError::NotFound("Key"))
}

fn show_key(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = find_key(ctx)?;
    let k = ctx.store.ssh_keys.get(&id).ok_or(ApiError::NotFound("Key"))?;
    Ok(Reply::ok(ssh_key(k)))
}

fn delete_key(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = find_key(ctx)?;
    ctx.store.ssh_keys.remove(&id);
    Ok(Reply::no_content())
}

fn list_emails(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = target_user(ctx)?;
    let items: Vec<Value> = ctx
        .store
        .emails
        .values()
        .filter(|e| e.user_id == uid)
        .map(render_email)
        .collect();
    ctx.paginate(items)
}

fn create_email(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = target_user(ctx)?;
    let address = ctx.params.required_nonblank("email")?.trim().to_string();
    let valid = address
        .split_once('@')
        .is_some_and(|(local, domain)| !local.is_empty() && !domain.is_empty())
        && !address.contains(char::is_whitespace);
    if !valid {
        return Err(ApiError::validation("email", "is invalid"));
    }
    if ctx.store.email_taken(&address) {
        return Err(ApiError::validation("email", "has already been taken"));
    }
    let id = ctx.store.next_id("email");
    let e = Email {
        id,
        user_id: uid,
        email: address,
    };
    let body = render_email(&e);
    ctx.store.emails.insert(id, e);
    Ok(Reply::created(body))
}

fn find_email(ctx: &Ctx<'_>) -> Result<u64, ApiError> {
    let uid = target_user(ctx)?;
    let id = ctx.path_u64("email_id", "Email")?;
    ctx.store
        .emails
        .get(&id)
        .filter(|e| e.user_id == uid)
        .map(|e| e.id)
        .ok_or(ApiError::NotFound("Email"))
}

fn show_email(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = find_email(ctx)?;
    let e = ctx.store.emails.get(&id).ok_or(ApiError::NotFound("Email"))?;
    Ok(Reply::ok(render_email(e)))
}

fn delete_email(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = find_email(ctx)?;
    ctx.store.emails.remove(&id);
    Ok(Reply::no_content())
}

/// `SHA256:<base64 without padding>` of an OpenSSH public key's blob.
fn fingerprint(key: &str) -> Option<String> {
    let blob = crate::sha::base64_decode(key.split_whitespace().nth(1)?)?;
    let encoded = crate::sha::base64_encode(&crate::sha::sha256(&blob));
    Some(format!("SHA256:{}", encoded.trim_end_matches('=')))
}

/// A key as administrators look it up: its owner, or for a deploy key the projects it is enabled in.
fn admin_key_view(ctx: &Ctx<'_>, id: u64) -> Result<Value, ApiError> {
    let k = ctx.store.ssh_keys.get(&id).ok_or(ApiError::NotFound("Key"))?;
    let mut v = ssh_key(k);
    if let Value::Object(map) = &mut v {
        map.insert(
            "fingerprint_sha256".into(),
            serde_json::json!(fingerprint(&k.key)),
        );
        map.insert(
            "user".into(),
            crate::entities::user::basic_by_id(ctx.store, k.user_id),
        );
        if k.user_id.is_none() {
            let links: Vec<Value> = ctx
                .store
                .deploy_key_links
                .iter()
                .filter(|((_, key), _)| *key == id)
                .map(|((project, key), can_push)| {
                    serde_json::json!({"deploy_key_id": key, "project_id": project, "can_push": can_push})
                })
                .collect();
            map.insert("deploy_keys_projects".into(), Value::Array(links));
        }
    }
    Ok(v)
}

fn admin_key(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.require_admin()?;
    let id = ctx.path_u64("key_id", "Key")?;
    Ok(Reply::ok(admin_key_view(ctx, id)?))
}

/// `GET /keys?fingerprint=SHA256:…` (administrators).
fn key_by_fingerprint(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.require_admin()?;
    let wanted = ctx.params.required_str("fingerprint")?;
    let id = ctx
        .store
        .ssh_keys
        .values()
        .find(|k| fingerprint(&k.key).as_deref() == Some(wanted.as_str()))
        .map(|k| k.id)
        .ok_or(ApiError::NotFound("Key"))?;
    Ok(Reply::ok(admin_key_view(ctx, id)?))
}
