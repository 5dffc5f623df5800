//! `GET /version`.

use http::Method;
use serde_json::json;

use crate::context::Ctx;
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};

/// The version the simulator reports.
pub const VERSION: &str = "10.8.7";

/// The revision the simulator reports.
pub const REVISION: &str = "5f9c7a1e";

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    vec![api(Method::GET, "/version", version)]
}

fn version(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.user_id()?;
    Ok(Reply::ok(json!({"version": VERSION, "revision": REVISION})))
}
