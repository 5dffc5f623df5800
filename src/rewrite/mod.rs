//! V3 → V4 translation: match a rule, translate ids, build the V4 request, send it, build the V3 answer.
//!
//! The pipeline for one `/api/v3/…` request, in order:
//! 1. [`auth`]: a token in the query or a form or JSON body becomes a header; a route V3 authenticated answers an
//!    anonymous caller 401. [`sessions`]: a token issued by `POST /session` becomes the backend's bearer token.
//! 2. [`table`]: find the rule for the method and path; none → pass through with the prefix change.
//! 3. [`ids`]: translate global issue and merge request ids to iids (asking the backend's [`graphql`] on a miss).
//! 4. [`request`] and [`params`]: read what the rule must rewrite; [`plan`]: decide the V4 path, query and body
//!    (the same plan `svcgate translate` prints, [`explain`]).
//! 5. carry the plan out: pre-fetch when it says so; then send, gather every page, or run a named [`procedures`]
//!    entry ([`exchange`] holds the translated request and the calls).
//! 6. [`finish`]: remap the status, complete list items (in one [`graphql`] request where the backend answers
//!    it), reshape the body with [`shape`], rewrite [`pagination`].
//!
//! Beside the pipeline: [`usage`] (which legacy clients still call which V3 routes), [`clients`] (who a client
//! is, and when it is retired) and [`retirement`] (how many clients and routes are still active). May use: [`crate::util`],
//! [`crate::http`], [`crate::store`], [`crate::telemetry`], [`crate::backend`]; not [`crate::alerts`], which shares
//! its layer.

pub mod auth;
pub mod backend;
pub mod clients;
pub mod exchange;
pub mod explain;
pub mod finish;
pub mod graphql;
pub mod ids;
pub mod loader;
pub mod migration;
pub mod pagination;
pub mod param_names;
pub mod params;
pub mod plan;
pub mod procedures;
pub mod raw;
pub mod request;
pub mod retirement;
pub mod rule;
pub mod sessions;
pub mod shape;
pub mod table;
pub mod usage;

use std::sync::Arc;

use http::header::HeaderMap;
use http::{Request, Response};
use hyper::body::Incoming;
use serde_json::Value;

use self::backend::Caller;
use self::exchange::{Exchange, Outcome};
use self::finish::{Finisher, Prepared};
use self::ids::IdIndex;
use self::procedures::ProcedureEnv;
use self::request::V3Request;
use self::rule::Rule;
use self::sessions::Sessions;
use self::table::RuleTable;
use crate::backend::access::Credentials;
use crate::backend::context::RequestContext;
use crate::backend::passthrough::{forward_to, original_host};
use crate::backend::upstream::{add_forwarding_headers, strip_hop_by_hop, Upstream};
use crate::http::body::Body;
use crate::http::error::GatewayError;
use crate::rewrite::shape::ShapeMode;
use crate::store::Store;
use crate::telemetry::Metrics;

/// The V3 prefix the gateway answers.
pub const V3_PREFIX: &str = "/api/v3";

/// Whether a V3 path (after the prefix) is one of the GitHub-compatibility routes that current backends still
/// serve under `/api/v3` (section 5.9): `/repos/…`, `/orgs/:org/repos`, `/user/repos`, `/users/:user/repos`.
/// These are forwarded as they are, never rewritten to V4.
pub(crate) fn is_github_compat(path: &str) -> bool {
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    matches!(
        segments.as_slice(),
        ["repos", ..] | ["user", "repos"] | ["orgs" | "users", _, "repos"]
    )
}

/// Settings of the translator.
#[derive(Debug, Clone)]
pub struct RewriteSettings {
    /// Directory of rule files replacing the built-in table (`rules_dir`).
    pub rules_dir: Option<std::path::PathBuf>,
    /// The server's brand word in route and field names (`identifier_word`, `svc` in `svc_ci_ymls`).
    pub identifier_word: String,
    /// Strict or tolerant V3 shapes.
    pub shapes: ShapeMode,
    /// Largest body read into memory for reshaping.
    pub max_body: usize,
    /// Largest whole collection gathered from pages.
    pub max_collected: usize,
    /// Per-item fetches run at once at most.
    pub item_fetch_concurrency: usize,
    /// How long a backend's refusal of GraphQL is remembered (`graphql_retry_after`).
    pub graphql_retry_after: std::time::Duration,
    /// Entries of the in-memory id ↔ iid cache.
    pub id_cache_entries: usize,
    /// Pages an unknown id's lookup may read.
    pub id_lookup_max_pages: u32,
    /// The gateway's public base URL for `Link` headers, else taken from the request.
    pub public_url: Option<String>,
    /// The most backend calls one client request may cause.
    pub max_backend_calls: u32,
    /// Time a V3 request body read whole may take to arrive.
    pub body_read_timeout: std::time::Duration,
}

/// The V3 translator shared by all requests.
pub struct Rewriter {
    table: RuleTable,
    ids: IdIndex,
    sessions: Sessions,
    graphql: Arc<graphql::GraphqlState>,
    upstream: Arc<Upstream>,
    /// The backend side's body budget, with the client body read timeout, for V3 request bodies.
    client_bodies: crate::http::budget::BodyBudget,
    settings: RewriteSettings,
}

/// Whether a path has a `.` or `..` segment, plain or percent-encoded (`%2e%2E`): the backend or a proxy in front
/// of it could resolve one to another route than the rule matched, so such a V3 path is refused, never forwarded.
pub(crate) fn has_dot_segment(path: &str) -> bool {
    path.split('/').any(|segment| {
        let decoded = percent_encoding::percent_decode_str(segment).decode_utf8_lossy();
        decoded == "." || decoded == ".."
    })
}

/// Folds empty path segments (`/issues//1` → `/issues/1`), which V3 clients produce and V3 accepted.
pub(crate) fn fold_empty_segments(path: &str) -> String {
    let mut folded = String::with_capacity(path.len());
    for segment in path.split('/').filter(|segment| !segment.is_empty()) {
        folded.push('/');
        folded.push_str(segment);
    }
    if folded.is_empty() {
        folded.push('/');
    }
    folded
}

impl Rewriter {
    /// A translator over `table`, keeping what it learns in `store`.
    pub fn new(
        table: RuleTable,
        store: Arc<dyn Store>,
        metrics: Arc<Metrics>,
        upstream: Arc<Upstream>,
        settings: RewriteSettings,
        secret: Arc<crate::util::secret::SecretBox>,
    ) -> Self {
        let graphql = Arc::new(graphql::GraphqlState::new(
            &settings.identifier_word,
            settings.graphql_retry_after,
            Arc::clone(&metrics),
        ));
        Rewriter {
            table,
            ids: IdIndex::new(
                Arc::clone(&store),
                metrics,
                Arc::clone(&graphql),
                settings.id_cache_entries,
                settings.id_lookup_max_pages,
            ),
            sessions: Sessions::new(store, secret),
            graphql,
            client_bodies: upstream
                .body_budget()
                .with_read_timeout(settings.body_read_timeout),
            upstream,
            settings,
        }
    }

    /// The rule table.
    pub fn table(&self) -> &RuleTable {
        &self.table
    }

    /// Answers one `/api/v3/…` request.
    pub async fn handle(
        &self,
        request: Request<Incoming>,
        context: &mut RequestContext,
    ) -> Result<Response<Body>, GatewayError> {
        let (mut parts, incoming) = request.into_parts();
        if auth::lift_from_query(&mut parts)? {
            context.caller = Credentials::from_headers(&parts.headers);
        }
        let query = parts.uri.query().map(str::to_owned);
        if let Some(rest) = self
            .sessions
            .translate(&mut parts.headers, query.as_deref())
            .await
        {
            auth::set_query(&mut parts.uri, &rest)?;
        }
        // As the client sent it (before `scope[0]` becomes `scope[]`), for the V3 route's `values` check.
        let sent_query = parts.uri.query().map(str::to_owned);
        if let Some(query) = parts.uri.query().and_then(request::unindex_query) {
            auth::set_query(&mut parts.uri, &query)?;
        }
        let path = parts.uri.path();
        let v3_path = fold_empty_segments(path.strip_prefix(V3_PREFIX).unwrap_or(path));
        if has_dot_segment(&v3_path) {
            return Err(GatewayError::BadRequest(
                "a path segment may not be . or .. (plain or percent-encoded)".to_owned(),
            ));
        }
        if is_github_compat(&v3_path) {
            context.route = "github-compat".to_owned();
            let request = Request::from_parts(parts, crate::http::body::stream(incoming));
            return forward_to(&self.upstream, request, context, None).await;
        }
        let matched = self.table.find(&parts.method, &v3_path);
        let needs_auth = self.table.auth().requires_authentication(&parts.method, &v3_path);
        // The body is opened for a token only where it decides something: a route V3 authenticated, or one whose
        // rule reads the body anyway; it is read once and passed on.
        let mut preread = None;
        let mut unopened = false;
        let mut body = crate::http::body::stream(incoming);
        if !auth::has_credentials(&parts.headers)
            && (needs_auth || matched.as_ref().is_some_and(|matched| matched.rule.reads_body()))
        {
            match auth::body_kind(&parts.headers, self.settings.max_body) {
                auth::BodyKind::Absent => {}
                auth::BodyKind::Unopened => unopened = true,
                auth::BodyKind::Readable(declared) => {
                    let (bytes, held) = self
                        .client_bodies
                        .read(
                            std::mem::replace(&mut body, crate::http::body::empty()),
                            Some(declared),
                            self.settings.max_body,
                        )
                        .await
                        .map_err(request::body_error)?;
                    context.hold(held);
                    let (bytes, lifted) = auth::lift_from_body(&mut parts, bytes);
                    if lifted {
                        context.caller = Credentials::from_headers(&parts.headers);
                    }
                    body = crate::http::body::full(bytes.clone());
                    preread = Some(bytes);
                }
            }
        }
        let request = Request::from_parts(parts, body);
        if needs_auth && !unopened && !auth::has_credentials(request.headers()) {
            // Counted under its rule's route, as the call would have been.
            match &matched {
                Some(matched) => {
                    context.route = format!("{} {}", matched.rule.v3.method, matched.rule.v3.template);
                    context.since = matched.rule.since.clone();
                }
                None => {
                    context.route = crate::rewrite::usage::route_of_path(request.method().as_str(), &v3_path)
                }
            }
            // V3's `authenticate!` answered before the route ran, whatever the project's visibility.
            return Err(GatewayError::Relay {
                status: http::StatusCode::UNAUTHORIZED,
                body: bytes::Bytes::from_static(br#"{"message":"401 Unauthorized"}"#),
            });
        }
        let Some(matched) = matched else {
            context.route = crate::rewrite::usage::route_of_path(request.method().as_str(), &v3_path);
            let target = match request.uri().query() {
                Some(query) => format!("/api/v4{v3_path}?{query}"),
                None => format!("/api/v4{v3_path}"),
            };
            return forward_to(&self.upstream, request, context, Some(&target)).await;
        };
        let rule = matched.rule;
        context.route = format!("{} {}", rule.v3.method, rule.v3.template);
        context.since = rule.since.clone();
        let sent = Sent {
            query: sent_query.as_deref(),
            body: preread,
        };
        self.apply(rule, matched.params, &v3_path, request, sent, context)
            .await
    }

    fn origin(&self, parts: &http::request::Parts, context: &RequestContext) -> String {
        if let Some(url) = &self.settings.public_url {
            return url.clone();
        }
        let host = original_host(parts);
        let host = host
            .as_ref()
            .and_then(|host| host.to_str().ok())
            .unwrap_or("localhost");
        format!("{}://{host}", context.client.proto)
    }

    async fn apply(
        &self,
        rule: &Rule,
        mut params: Vec<(String, String)>,
        v3_path: &str,
        request: Request<Body>,
        sent: Sent<'_>,
        context: &RequestContext,
    ) -> Result<Response<Body>, GatewayError> {
        let (parts, incoming) = request.into_parts();
        check_values(rule, sent.query)?;
        let origin = self.origin(&parts, context);
        let mut caller = Caller {
            upstream: &self.upstream,
            headers: backend_headers(&parts, context),
            context,
            max_body: self.settings.max_body,
            max_calls: self.settings.max_backend_calls,
        };

        let project = params
            .iter()
            .find(|(name, _)| name == "id")
            .map(|(_, value)| value.clone())
            .unwrap_or_default();
        // V3 validated its parameters before it looked anything up: a missing required one is 400 even where the
        // global id names nothing.
        let v3 = V3Request::read(
            &parts.headers,
            parts.uri.query(),
            incoming,
            sent.body,
            rule,
            &self.client_bodies,
            self.settings.max_body,
            context,
        )
        .await?;
        // V3 read `sudo` from the merged parameters before the header (`params[SUDO_PARAM] || env[SUDO_HEADER]`,
        // lib/api/helpers.rb): as a header it reaches every call svcgate makes, the lookups and a procedure's
        // reads included, not only the one that carries the query or body.
        if let Some(sudo) = v3.present_param("sudo") {
            if let Ok(value) = http::HeaderValue::from_str(sudo.trim()) {
                caller.headers.insert("sudo", value);
            }
        }
        if let Some(missing) = rule.requires.iter().find(|name| v3.sent(name) == Some(false)) {
            let body = serde_json::json!({ "error": format!("{missing} is missing") });
            return Err(exchange::relay_error(
                http::StatusCode::BAD_REQUEST,
                bytes::Bytes::from(serde_json::to_vec(&body).unwrap_or_default()),
            ));
        }
        for (param, kind) in &rule.ids {
            let raw = params
                .iter()
                .find(|(name, _)| name == param)
                .map(|(_, value)| value.clone())
                .unwrap_or_default();
            let record = self.ids.resolve(*kind, &raw, &project, &caller).await?;
            params.push((Rule::iid_param(param), record.iid.to_string()));
        }
        let plan =
            plan::plan(rule, params, v3).map_err(|error| GatewayError::BadRequest(error.to_string()))?;
        let exchange = Exchange {
            rule,
            caller,
            v4_path: plan.v4_path,
            query: plan.query,
            params: plan.params,
            v3_names: param_names::v3_names(rule, &plan.request.renamed),
            max_collected: self.settings.max_collected,
        };
        let v3 = plan.request;
        let answer = plan.answer;
        let refetch = plan.refetch;

        let prefetched = match &plan.prefetch {
            Some(prefetch) => {
                let fetched = exchange
                    .caller
                    .get_json(&prefetch.path)
                    .await
                    .map_err(|error| finish::unseen_error(rule, error))?
                    .body;
                match &prefetch.find {
                    Some(param) => {
                        let wanted = exchange.param(param).unwrap_or_default();
                        let found = fetched.as_array().and_then(|items| {
                            items
                                .iter()
                                .find(|item| item.get("id").map(|id| id.to_string()) == Some(wanted.clone()))
                        });
                        match found {
                            Some(item) => Some(item.clone()),
                            None => return Err(GatewayError::NotFound("Key")),
                        }
                    }
                    None => Some(fetched),
                }
            }
            None => None,
        };
        let outcome = match rule.procedure {
            Some(procedure) => {
                let env = ProcedureEnv {
                    sessions: &self.sessions,
                };
                procedures::run(procedure, &exchange, v3, &env)
                    .await
                    .map_err(|error| finish::unseen_error(rule, error))?
            }
            None if rule.collect_all_pages => Outcome::Json {
                status: http::StatusCode::OK,
                headers: HeaderMap::new(),
                body: Value::Array(exchange.collect_pages(&exchange.v4_path, &exchange.query).await?),
            },
            None => exchange.send(v3).await?,
        };
        let outcome = match refetch {
            Some(path) => exchange
                .refetch(outcome, &path)
                .await
                .map_err(|error| finish::unseen_error(rule, error))?,
            None => outcome,
        };
        let finisher = Finisher {
            shapes: self.table.shapes(),
            ids: &self.ids,
            mode: self.settings.shapes,
            concurrency: self.settings.item_fetch_concurrency,
            origin: &origin,
            v3_path,
            graphql: &self.graphql,
            anonymous: !auth::has_credentials(&exchange.caller.headers),
        };
        finisher
            .finish(&exchange, outcome, Prepared { prefetched, answer })
            .await
    }
}

/// What the client sent that the rule's handling needs as sent: the query before indexed arrays were renamed, and
/// the body when svcgate read it already to find a token.
struct Sent<'a> {
    query: Option<&'a str>,
    body: Option<bytes::Bytes>,
}

/// Grape's `values:` check of the V3 route, on the query as the client sent it: a value outside those V3 accepted
/// is answered 400 `{"error":"<name> does not have a valid value"}` before the backend is asked. V3's `coerce_with`
/// (lib/api/v3/builds.rb `params :optional_scope`) took a string or Rack's indexed hash (`scope[0]=x`); an array
/// (`scope[]=x`) became `['unknown']`, so it is refused whatever its values.
fn check_values(rule: &Rule, query: Option<&str>) -> Result<(), GatewayError> {
    if rule.values.is_empty() {
        return Ok(());
    }
    let pairs = crate::util::url_parts::parse_pairs(query.unwrap_or("").as_bytes());
    for (name, allowed) in &rule.values {
        let invalid = pairs.iter().any(|(key, value)| {
            let Some(rest) = key.strip_prefix(name.as_str()) else {
                return false;
            };
            let indexed = rest
                .strip_prefix('[')
                .and_then(|rest| rest.strip_suffix(']'))
                .is_some_and(|index| !index.is_empty() && index.bytes().all(|byte| byte.is_ascii_digit()));
            if rest.is_empty() || indexed {
                !allowed.iter().any(|allowed| allowed == value)
            } else {
                rest == "[]"
            }
        });
        if invalid {
            let body = serde_json::json!({ "error": format!("{name} does not have a valid value") });
            return Err(GatewayError::Relay {
                status: http::StatusCode::BAD_REQUEST,
                body: bytes::Bytes::from(serde_json::to_vec(&body).unwrap_or_default()),
            });
        }
    }
    Ok(())
}

/// The headers every backend call made for this client carries: its own, less hop-by-hop and body headers, plus
/// the forwarding headers. `Accept-Encoding` is dropped so that bodies to reshape arrive as plain JSON.
fn backend_headers(parts: &http::request::Parts, context: &RequestContext) -> HeaderMap {
    let mut headers = parts.headers.clone();
    strip_hop_by_hop(&mut headers);
    for name in [
        http::header::CONTENT_LENGTH,
        http::header::CONTENT_TYPE,
        http::header::ACCEPT_ENCODING,
        http::header::HOST,
        http::header::EXPECT,
    ] {
        headers.remove(name);
    }
    add_forwarding_headers(
        &mut headers,
        &context.client,
        original_host(parts).as_ref(),
        &context.request_id,
    );
    headers
}

/// Whether a request path is a V3 API request.
pub fn is_v3(path: &str) -> bool {
    path == V3_PREFIX || path.starts_with("/api/v3/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_compatibility_routes_are_recognised() {
        for path in [
            "/repos/group/project/branches",
            "/user/repos",
            "/orgs/acme/repos",
            "/users/jo/repos",
        ] {
            assert!(is_github_compat(path), "{path}");
        }
        for path in ["/users/1/keys", "/user", "/projects/1/repository", "/orgs/acme"] {
            assert!(!is_github_compat(path), "{path}");
        }
    }

    #[test]
    fn dot_segments_are_found_plain_and_percent_encoded() {
        for path in [
            "/projects/..",
            "/projects/./1",
            "/%2e%2E/x",
            "/projects/1/%2E",
            "/a/.%2e/b",
        ] {
            assert!(has_dot_segment(path), "{path}");
        }
        for path in [
            "/projects/1",
            "/projects/a.b",
            "/projects/...",
            "/projects/.hidden",
            "/x/%2e%2e%2e",
        ] {
            assert!(!has_dot_segment(path), "{path}");
        }
    }

    #[test]
    fn empty_segments_are_folded() {
        assert_eq!(
            fold_empty_segments("/projects/1/issues//5"),
            "/projects/1/issues/5"
        );
        assert_eq!(fold_empty_segments("//x///"), "/x");
        assert_eq!(fold_empty_segments(""), "/");
    }
}
