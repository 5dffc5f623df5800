//! Route table: (method, path template) → handler, matched with `matchit` against the raw (still
//! percent-encoded) path so that `group%2Fproject` stays one segment.

use std::collections::BTreeMap;

use http::Method;

use crate::context::{decode, Ctx};
use crate::error::ApiError;
use crate::reply::Reply;

/// A request handler.
pub type Handler = fn(&mut Ctx<'_>) -> Result<Reply, ApiError>;

/// One route.
pub struct Route {
    /// HTTP method.
    pub method: Method,
    /// Template such as `/api/v4/projects/{id}`.
    pub path: String,
    /// The handler.
    pub handler: Handler,
}

/// Shorthand for a route under `/api/v4`.
pub fn api(method: Method, path: &str, handler: Handler) -> Route {
    Route {
        method,
        path: format!("/api/v4{path}"),
        handler,
    }
}

/// A compiled route table.
pub struct Router {
    inner: matchit::Router<Vec<(Method, Handler)>>,
}

impl Router {
    /// Compiles routes; a template that cannot be inserted is logged and skipped.
    pub fn new(routes: Vec<Route>) -> Router {
        let mut by_path: BTreeMap<String, Vec<(Method, Handler)>> = BTreeMap::new();
        for route in routes {
            by_path
                .entry(route.path)
                .or_default()
                .push((route.method, route.handler));
        }
        let mut inner = matchit::Router::new();
        for (path, handlers) in by_path {
            if let Err(err) = inner.insert(path.clone(), handlers) {
                tracing::error!(%path, %err, "route rejected");
            }
        }
        Router { inner }
    }

    /// Finds the handler and decoded path parameters for a raw path. A path with no route for this method is
    /// `404 Not Found` whether or not another method has one: V4's `route :any, '*path'` catch-all (lib/api/api.rb)
    /// answers it, so a real server never says 405 here.
    pub fn find(&self, method: &Method, path: &str) -> Result<(Handler, Vec<(String, String)>), ApiError> {
        let trimmed = if path.len() > 1 {
            path.trim_end_matches('/')
        } else {
            path
        };
        let matched = self.inner.at(trimmed).map_err(|_| ApiError::NoRoute)?;
        let wanted = if method == Method::HEAD {
            Method::GET
        } else {
            method.clone()
        };
        let handler = matched
            .value
            .iter()
            .find(|(m, _)| *m == wanted)
            .map(|(_, h)| *h)
            .ok_or(ApiError::NoRoute)?;
        let params = matched
            .params
            .iter()
            .map(|(k, v)| (k.to_string(), decode(v)))
            .collect();
        Ok((handler, params))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_route_compiles_and_matches_encoded_paths() {
        let mut paths: Vec<String> = crate::api::all().into_iter().map(|r| r.path).collect();
        paths.sort();
        paths.dedup();
        let mut inner = matchit::Router::new();
        for path in &paths {
            assert!(inner.insert(path.clone(), ()).is_ok(), "route {path} rejected");
        }
        let router = Router::new(crate::api::all());
        let found = router.find(
            &Method::GET,
            "/api/v4/projects/a%2Fb/repository/branches/feature%2Fx",
        );
        let params = found.map(|(_, p)| p).unwrap_or_default();
        assert_eq!(
            params,
            vec![
                ("id".to_string(), "a/b".to_string()),
                ("branch".to_string(), "feature/x".to_string())
            ]
        );
        assert!(matches!(
            router.find(&Method::PATCH, "/api/v4/projects"),
            Err(ApiError::NoRoute)
        ));
    }
}
