//! Writing files: `POST`, `PUT` and `DELETE /projects/:id/repository/files/:file_path`, each one commit.

use http::{Method, StatusCode};
use serde_json::{json, Map};

use crate::context::Ctx;
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::store::access;

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    let one = "/projects/{id}/repository/files/{file_path}";
    vec![
        api(Method::POST, one, create),
        api(Method::PUT, one, update),
        api(Method::DELETE, one, delete),
    ]
}

fn write(ctx: &mut Ctx<'_>, action: &str) -> Result<(String, String), ApiError> {
    let uid = ctx.user_id()?;
    let pid = ctx.project_id()?;
    ctx.require_level(pid, access::DEVELOPER)?;
    let path = ctx.path_param("file_path").to_string();
    let branch = ctx.params.required_str("branch")?;
    let message = ctx.params.required_str("commit_message")?;
    let mut a = Map::new();
    a.insert("action".into(), json!(action));
    a.insert("file_path".into(), json!(path));
    if action != "delete" {
        let content = ctx.params.required_str("content")?;
        a.insert("content".into(), json!(content));
        match ctx.params.str("encoding").as_deref() {
            None | Some("text") => {}
            Some("base64") => {
                a.insert("encoding".into(), json!("base64"));
            }
            Some(_) => return Err(ApiError::Invalid("encoding".into())),
        }
    }
    super::commits::write_commit(ctx, pid, uid, &branch, &message, &[a])?;
    Ok((path, branch))
}

fn create(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (path, branch) = write(ctx, "create")?;
    Ok(Reply::json(
        StatusCode::CREATED,
        json!({"file_path": path, "branch": branch}),
    ))
}

fn update(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (path, branch) = write(ctx, "update")?;
    Ok(Reply::ok(json!({"file_path": path, "branch": branch})))
}

fn delete(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    write(ctx, "delete").map(|_| Reply::no_content())
}
