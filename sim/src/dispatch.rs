//! Turns one buffered request into a reply, with no I/O: parse parameters, route, authenticate, run the handler
//! under the store lock. The server module wraps this with sockets; tests can call it directly.

use std::sync::Mutex;

use http::Method;

use crate::auth::{authenticate, header};
use crate::context::Ctx;
use crate::error::ApiError;
use crate::pagination::LinkBase;
use crate::params::Params;
use crate::reply::Reply;
use crate::router::Router;
use crate::store::Store;

/// A fully read request.
#[derive(Debug, Clone)]
pub struct RawRequest {
    /// Method.
    pub method: Method,
    /// Raw path.
    pub path: String,
    /// Raw query.
    pub query: Option<String>,
    /// Headers with lowercase names.
    pub headers: Vec<(String, String)>,
    /// Body bytes.
    pub body: Vec<u8>,
}

/// Answers one request.
pub fn dispatch(
    store: &Mutex<Store>,
    router: &Router,
    req: &RawRequest,
    authority: Option<&str>,
) -> Result<Reply, ApiError> {
    let (handler, path) = router.find(&req.method, &req.path)?;
    let params = Params::parse(
        req.query.as_deref(),
        header(&req.headers, "content-type"),
        &req.body,
    )?;
    // One lock for the whole request keeps every handler a plain sequential function over the store.
    let mut guard = store.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let caller = authenticate(&guard, &req.headers, &params)?;
    let origin = match header(&req.headers, "host").or(authority) {
        Some(host) => format!("http://{host}"),
        None => guard.base_url.clone(),
    };
    let mut ctx = Ctx {
        store: &mut guard,
        params,
        path,
        caller,
        link: LinkBase {
            origin,
            path: req.path.clone(),
            query: req.query.clone(),
        },
    };
    handler(&mut ctx)
}
