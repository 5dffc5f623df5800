//! V3 → V4 translation: match a rule, translate ids, build the V4 request, send it, reshape the answer.
//!
//! The pipeline for one `/api/v3/…` request, in order (each step a function below or a module of its own):
//! 1. [`table`]: find the rule for the method and path; none → pass through with the prefix change.
//! 2. [`ids`]: translate global issue and merge request ids to iids.
//! 3. [`request`] and [`params`]: build the V4 path, query and body.
//! 4. send, or gather every page, or run a named [`procedures`] entry; pre-fetch first when the rule says so.
//! 5. remap the status, reshape the body with [`shape`], rewrite [`pagination`] headers.

pub mod backend;
pub mod ids;
pub mod loader;
pub mod pagination;
pub mod params;
pub mod procedures;
pub mod request;
pub mod rule;
pub mod shape;
pub mod table;

use std::sync::Arc;

use http::header::{HeaderMap, HeaderValue};
use http::{Request, Response, StatusCode};
use hyper::body::Incoming;
use serde_json::Value;

use self::backend::{header_number, Caller};
use self::ids::IdIndex;
use self::params::encode_pairs;
use self::request::V3Request;
use self::rule::{Rule, Segment};
use self::table::RuleTable;
use crate::body::{self, Body};
use crate::config::ShapeMode;
use crate::context::RequestContext;
use crate::error::GatewayError;
use crate::passthrough::{forward_to, original_host, stream_back};
use crate::store::IdKind;
use crate::upstream::{add_forwarding_headers, strip_hop_by_hop, Upstream};

/// The V3 prefix the gateway answers.
pub const V3_PREFIX: &str = "/api/v3";

/// GitHub-compatibility routes still served under `/api/v3` by current backends (section 5.9): forwarded as they
/// are, never rewritten to V4.
const GITHUB_COMPAT_PREFIXES: [&str; 4] = ["/orgs/", "/user/repos", "/repos/", "/users/"];

fn is_github_compat(path: &str) -> bool {
    GITHUB_COMPAT_PREFIXES
        .iter()
        .any(|prefix| path.starts_with(prefix))
        && (path.starts_with("/repos/") || path.ends_with("/repos") || path == "/user/repos")
}

/// Settings of the translator.
#[derive(Debug, Clone)]
pub struct RewriteSettings {
    /// Strict or tolerant V3 shapes.
    pub shapes: ShapeMode,
    /// Largest body read into memory for reshaping.
    pub max_body: usize,
    /// Largest whole collection gathered from pages.
    pub max_collected: usize,
    /// The gateway's public base URL for `Link` headers, else taken from the request.
    pub public_url: Option<String>,
}

/// The V3 translator shared by all requests.
pub struct Rewriter {
    table: RuleTable,
    ids: IdIndex,
    upstream: Arc<Upstream>,
    settings: RewriteSettings,
}

fn entity_kind(entity: Option<&str>) -> Option<IdKind> {
    match entity? {
        "issue" => Some(IdKind::Issue),
        "merge_request" => Some(IdKind::MergeRequest),
        _ => None,
    }
}

/// Builds the V4 path from the rule's template and the (translated) parameters, percent-encoding kept.
fn v4_path(rule: &Rule, params: &[(String, String)]) -> String {
    let value = |name: &str| {
        params
            .iter()
            .find(|(key, _)| key == name)
            .map_or("", |(_, value)| value.as_str())
            .to_owned()
    };
    let mut path = String::from("/api/v4");
    for segment in &rule.v4.segments {
        path.push('/');
        match segment {
            Segment::Literal(text) => path.push_str(text),
            Segment::Param(name) => path.push_str(&value(name)),
            // V3 allowed raw slashes here; V4 wants the segment URL-encoded (section 5.7).
            Segment::Rest(name) => path.push_str(&value(name).replace('/', "%2F")),
        }
    }
    path
}

impl Rewriter {
    /// A translator over `table`.
    pub fn new(
        table: RuleTable,
        ids: IdIndex,
        upstream: Arc<Upstream>,
        settings: RewriteSettings,
    ) -> Self {
        Rewriter {
            table,
            ids,
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
        let path = request.uri().path();
        let v3_path = path.strip_prefix(V3_PREFIX).unwrap_or(path).to_owned();
        if is_github_compat(&v3_path) {
            context.route = "github-compat".to_owned();
            return forward_to(&self.upstream, request, context, None).await;
        }
        let Some(matched) = self.table.find(request.method(), &v3_path) else {
            context.route = "/api/v3 → /api/v4".to_owned();
            let target = match request.uri().query() {
                Some(query) => format!("/api/v4{v3_path}?{query}"),
                None => format!("/api/v4{v3_path}"),
            };
            return forward_to(&self.upstream, request, context, Some(&target)).await;
        };
        let rule = matched.rule;
        context.route = format!("{} {}", rule.v3.method, rule.v3.template);
        self.apply(rule, matched.params, &v3_path, request, context)
            .await
    }

    fn origin(&self, parts: &http::request::Parts, context: &RequestContext) -> String {
        if let Some(url) = &self.settings.public_url {
            return url.clone();
        }
        let host = original_host(parts).unwrap_or_else(|| "localhost".to_owned());
        format!("{}://{host}", context.client.proto)
    }

    async fn apply(
        &self,
        rule: &Rule,
        mut params: Vec<(String, String)>,
        v3_path: &str,
        request: Request<Incoming>,
        context: &RequestContext,
    ) -> Result<Response<Body>, GatewayError> {
        let (parts, incoming) = request.into_parts();
        let origin = self.origin(&parts, context);
        let caller = Caller {
            upstream: &self.upstream,
            headers: backend_headers(&parts, context),
            context,
            max_body: self.settings.max_body,
        };

        let project = params
            .iter()
            .find(|(name, _)| name == "id")
            .map(|(_, value)| value.clone())
            .unwrap_or_default();
        for (param, kind) in &rule.ids {
            let raw = params
                .iter()
                .find(|(name, _)| name == param)
                .map(|(_, value)| value.clone())
                .unwrap_or_default();
            let record = self.ids.resolve(*kind, &raw, &project, &caller).await?;
            params.push((Rule::iid_param(param), record.iid.to_string()));
        }

        let path = v4_path(rule, &params);
        let v3 = V3Request::read(
            &parts.headers,
            parts.uri.query(),
            incoming,
            &rule.conversions,
            rule.rewrites_params() || rule.procedure.is_some(),
            self.settings.max_body,
        )
        .await?;
        let query = v4_query(rule, &v3.query);
        let target = if query.is_empty() {
            path.clone()
        } else {
            format!("{path}?{query}")
        };

        let prefetched = if rule.prefetch {
            Some(caller.get_json(&path).await?.body)
        } else {
            None
        };

        if let Some(procedure) = rule.procedure {
            return procedures::run(procedure, &caller, v3, &path, &target).await;
        }
        if rule.collect_all_pages {
            let items = self.collect_pages(&caller, &path, &v3.query).await?;
            return Ok(self.reshaped(rule, StatusCode::OK, HeaderMap::new(), Value::Array(items)));
        }

        let response = caller
            .send(rule.v4.method.clone(), &target, v3.into_payload())
            .await?;
        let v4_status = response.status();
        let status = StatusCode::from_u16(rule.v3_status(v4_status.as_u16())).unwrap_or(v4_status);
        if !v4_status.is_success() {
            let mut answer = stream_back(response);
            *answer.status_mut() = status;
            return Ok(answer);
        }
        if let Some(body) = prefetched {
            drop(response);
            return Ok(self.reshaped(rule, status, HeaderMap::new(), body));
        }
        if rule.response.is_none() {
            let mut answer = stream_back(response);
            *answer.status_mut() = status;
            pagination::rewrite(answer.headers_mut(), &origin, v3_path, rule.page_base);
            return Ok(answer);
        }
        let answer = caller.read_json(response).await?;
        let mut headers = answer.headers;
        pagination::rewrite(&mut headers, &origin, v3_path, rule.page_base);
        Ok(self.reshaped(rule, status, headers, answer.body))
    }

    /// Learns ids from and reshapes a V4 body, and builds the V3 response.
    fn reshaped(
        &self,
        rule: &Rule,
        status: StatusCode,
        mut headers: HeaderMap,
        body: Value,
    ) -> Response<Body> {
        let body = match rule.response.as_deref() {
            Some(entity) => {
                if let Some(kind) = entity_kind(Some(entity)) {
                    self.ids.learn(kind, &body);
                }
                self.table
                    .shapes()
                    .apply(entity, body, self.settings.shapes)
            }
            None => body,
        };
        strip_hop_by_hop(&mut headers);
        headers.remove(http::header::CONTENT_LENGTH);
        headers.remove(http::header::CONTENT_ENCODING);
        headers.insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        let mut response = Response::new(body::full(serde_json::to_vec(&body).unwrap_or_default()));
        *response.status_mut() = status;
        *response.headers_mut() = headers;
        response
    }

    /// Reads every page of a V4 list (100 a page) into one array, refusing more than the cap.
    async fn collect_pages(
        &self,
        caller: &Caller<'_>,
        path: &str,
        query: &[(String, String)],
    ) -> Result<Vec<Value>, GatewayError> {
        let mut pairs: Vec<(String, String)> = query
            .iter()
            .filter(|(name, _)| name != "page" && name != "per_page")
            .cloned()
            .collect();
        pairs.push(("per_page".to_owned(), "100".to_owned()));
        let mut items = Vec::new();
        let mut page = 1;
        loop {
            pairs.retain(|(name, _)| name != "page");
            pairs.push(("page".to_owned(), page.to_string()));
            let answer = caller
                .get_json(&format!("{path}?{}", encode_pairs(&pairs)))
                .await?;
            let Value::Array(batch) = answer.body else {
                return Err(GatewayError::BadBackendAnswer(
                    "a list answered with something else".to_owned(),
                ));
            };
            let empty = batch.is_empty();
            items.extend(batch);
            if items.len() > self.settings.max_collected {
                return Err(GatewayError::CollectionTooLarge(
                    self.settings.max_collected,
                ));
            }
            match header_number(&answer.headers, "x-next-page") {
                Some(next) if next > page && !empty => page = next,
                _ => break,
            }
        }
        Ok(items)
    }
}

/// The V4 query: the converted V3 pairs, the rule's added parameters, and the page moved to V4's base.
fn v4_query(rule: &Rule, v3_query: &[(String, String)]) -> String {
    let mut pairs: Vec<(String, String)> = v3_query.to_vec();
    for (name, value) in &rule.add_query {
        if !pairs.iter().any(|(key, _)| key == name) {
            pairs.push((name.clone(), value.clone()));
        }
    }
    if rule.page_base == 0 {
        for (name, value) in pairs.iter_mut() {
            if name == "page" {
                if let Ok(page) = value.trim().parse::<u64>() {
                    *value = (page + 1).to_string();
                }
            }
        }
    }
    encode_pairs(&pairs)
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
        original_host(parts).as_deref(),
        &context.request_id,
    );
    headers
}

/// Whether `method` and `path` (a full request path) are a V3 API request.
pub fn is_v3(path: &str) -> bool {
    path == V3_PREFIX || path.starts_with("/api/v3/")
}
