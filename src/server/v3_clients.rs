//! The migration report's API: `GET /-/svcgate/api/v3-clients` (every V3 client, summed up),
//! `…/v3-clients/:id` (one client's full report, JSON) and `…/v3-clients/:id.md` (the same as Markdown, to paste
//! into an issue). For administrators of the backend only, as the usage API is; errors in the service's shape.
//! The list carries, beside `clients`, `folded`: the calls folded into others per route (no client's).

use std::collections::BTreeMap;

use http::{HeaderMap, HeaderValue, Response, StatusCode};

use crate::alerts::api::error_response;
use crate::alerts::manage::ManageError;
use crate::backend::access::{AccessChecker, Credentials};
use crate::http::body::{self, Body};
use crate::rewrite::migration::{self, ClientReport};
use crate::rewrite::table::RuleTable;
use crate::rewrite::usage::UsageRecorder;

/// The path of the client list; one client is under it.
const API: &str = "/-/svcgate/api/v3-clients";

/// The route name of these requests in logs and metrics.
pub const ROUTE: &str = "/-/svcgate/api/v3-clients";

/// What the report is built from.
pub struct Sources<'a> {
    /// The usage counts (flushed before each report).
    pub usage: &'a UsageRecorder,
    /// The rule table the gateway runs.
    pub table: &'a RuleTable,
    /// Who the caller is and whether an admin.
    pub access: &'a AccessChecker,
}

/// The rest of the path after the list's path (`""` for the list, `/:id` or `/:id.md` for one), when it is this API.
pub fn rest_of(path: &str) -> Option<&str> {
    path.strip_prefix(API)
        .filter(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// Every client's report and the calls folded into others per route, for an admin caller.
async fn reports(
    sources: &Sources<'_>,
    headers: &HeaderMap,
) -> Result<(Vec<ClientReport>, BTreeMap<String, u64>), ManageError> {
    let credentials = Credentials::from_headers(headers).ok_or(ManageError::Unauthenticated)?;
    let (_, admin) = sources.access.user(&credentials).await?;
    if !admin {
        return Err(ManageError::AdminOnly);
    }
    let rows = sources.usage.report().await?;
    let clients = migration::report(
        &rows,
        sources.table,
        time::OffsetDateTime::now_utc(),
        sources.usage.retired_after(),
    );
    Ok((clients, migration::folded(&rows)))
}

/// Answers a request of this API; `rest` is what [`rest_of`] returned. Only GET and HEAD: other methods are 405
/// in the service's error shape, with `Allow`.
pub async fn handle(
    sources: Sources<'_>,
    method: &http::Method,
    headers: &HeaderMap,
    rest: &str,
) -> Response<Body> {
    if method != http::Method::GET && method != http::Method::HEAD {
        return crate::http::error::GatewayError::MethodNotAllowed("GET, HEAD").into_response();
    }
    let answer = async {
        let (clients, folded) = reports(&sources, headers).await?;
        let wanted = rest.trim_start_matches('/');
        if wanted.is_empty() {
            let list: Vec<_> = clients.iter().map(ClientReport::summary).collect();
            return Ok(body::json_response(
                StatusCode::OK,
                &serde_json::json!({ "clients": list, "folded": folded }),
            ));
        }
        let (id, as_markdown) = match wanted.strip_suffix(".md") {
            Some(id) => (id, true),
            None => (wanted, false),
        };
        let client = clients
            .iter()
            .find(|client| client.facts.id == id)
            .ok_or(ManageError::ClientNotFound)?;
        if as_markdown {
            let mut response = Response::new(body::full(migration::markdown(client)));
            response.headers_mut().insert(
                http::header::CONTENT_TYPE,
                HeaderValue::from_static("text/markdown; charset=utf-8"),
            );
            return Ok(response);
        }
        Ok(body::json_response(StatusCode::OK, client))
    };
    match answer.await {
        Ok(response) => response,
        Err(error) => error_response(&error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_list_and_its_items_are_this_api() {
        assert_eq!(rest_of("/-/svcgate/api/v3-clients"), Some(""));
        assert_eq!(rest_of("/-/svcgate/api/v3-clients/ab12"), Some("/ab12"));
        assert_eq!(rest_of("/-/svcgate/api/v3-clientsx"), None);
        assert_eq!(rest_of("/-/svcgate/api/v3-usage"), None);
    }
}
