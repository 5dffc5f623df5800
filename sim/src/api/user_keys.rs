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
