//! The plan of one V3 request: what the gateway sends to V4 for it, decided without I/O.
//!
//! [`plan`] takes the matched rule, its path parameters (global ids already turned into iids) and the V3
//! request's parameters, and decides everything that needs no backend call: parameters dropped and added,
//! parameters moved into the path, the V4 path and query, the resource fetched first and a synthesised answer.
//! The live gateway (`Rewriter::apply`) carries a plan out; `svcgate translate` ([`super::explain`]) prints it.
//! Both build it here, so what `translate` prints is what the gateway sends.

use serde_json::Value;

use super::request::{V3Body, V3Request};
use super::rule::{Rule, Segment};
use crate::util::url_parts::{decode, encode_pairs, encode_segment, with_query};

/// Why a request cannot be planned: the client's fault, answered 400.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// A parameter the V4 path needs is missing or empty.
    #[error("\"{0}\" is missing")]
    Missing(String),
}

/// A resource read before the call, because V3 answered with it (a deletion's answer, say).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prefetch {
    /// The V4 path (`/api/v4/…`) to read.
    pub path: String,
    /// When set, the path is a list and the item whose `id` is this path parameter's value is the resource.
    pub find: Option<String>,
}

/// What the gateway does with one V3 request once its rule matched.
pub struct Plan<'r> {
    /// The rule.
    pub rule: &'r Rule,
    /// Path parameters as received (percent-encoded), plus the iids and the parameters moved into the path.
    pub params: Vec<(String, String)>,
    /// The V3 request's parameters as they go to V4: converted, with dropped and added ones applied.
    pub request: V3Request,
    /// The V4 path (`/api/v4/…`), without query.
    pub v4_path: String,
    /// The V4 query pairs.
    pub query: Vec<(String, String)>,
    /// The resource read before the call.
    pub prefetch: Option<Prefetch>,
    /// The synthesised V3 answer, for rules whose V4 answer has nothing V3 gave.
    pub answer: Option<Value>,
    /// The V4 path (`/api/v4/…`) read after a successful call and answered instead of the call's answer.
    pub refetch: Option<String>,
}

/// Plans one request: `params` are the rule's path parameters with the iids of its `ids` already added.
pub fn plan(
    rule: &Rule,
    mut params: Vec<(String, String)>,
    mut request: V3Request,
) -> Result<Plan<'_>, PlanError> {
    request.drop_if(&rule.drop_if);
    request.add_body(&rule.add_body);
    for name in &rule.path_from_request {
        let value = request
            .take_param(name)
            .filter(|value| !value.is_empty())
            .ok_or_else(|| PlanError::Missing(name.clone()))?;
        params.push((name.clone(), encode_segment(&value)));
    }
    let answer = rule
        .answer
        .as_ref()
        .map(|template| fill_answer(template, &params, &request));
    let v4_path = v4_path(rule, &params);
    let query = v4_query(rule, &request.query, &params);
    let prefetch = rule.prefetch.then(|| Prefetch {
        path: match &rule.prefetch_path {
            Some(template) => fill_path(template, &params),
            None => v4_path.clone(),
        },
        find: rule.prefetch_find.clone(),
    });
    let refetch = rule.refetch.as_ref().map(|template| fill_path(template, &params));
    Ok(Plan {
        rule,
        params,
        request,
        v4_path,
        query,
        prefetch,
        answer,
        refetch,
    })
}

/// One V4 call of a plan, as text: what `svcgate translate` prints, and what the backend receives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The method.
    pub method: http::Method,
    /// Path and query (`/api/v4/…?…`), percent-encoded as sent.
    pub target: String,
    /// The body as sent, with its content type (empty when the client gave none).
    pub body: Option<(String, String)>,
}

impl Plan<'_> {
    /// The V4 calls known before any answer: the pre-fetch, then the request itself or the first page of a
    /// whole list, then the read of the resource answered instead (made only when the request succeeded). A
    /// procedure's calls depend on the backend's answers and are not listed.
    pub fn calls(&self) -> Vec<Call> {
        let mut calls = Vec::new();
        if let Some(prefetch) = &self.prefetch {
            calls.push(Call {
                method: http::Method::GET,
                target: prefetch.path.clone(),
                body: None,
            });
        }
        if self.rule.procedure.is_some() {
            return calls;
        }
        if self.rule.collect_all_pages {
            calls.push(Call {
                method: http::Method::GET,
                target: with_query(&self.v4_path, &page_query(&self.query, 1)),
                body: None,
            });
            return calls;
        }
        let body = match &self.request.body {
            V3Body::Json(object) => Some((
                "application/json".to_owned(),
                serde_json::to_string(object).unwrap_or_default(),
            )),
            V3Body::Form(pairs) => Some((
                "application/x-www-form-urlencoded".to_owned(),
                encode_pairs(pairs),
            )),
            V3Body::Raw(content_type, bytes) => Some((
                content_type
                    .as_ref()
                    .and_then(|value| value.to_str().ok())
                    .unwrap_or_default()
                    .to_owned(),
                String::from_utf8_lossy(bytes).into_owned(),
            )),
            V3Body::Empty | V3Body::Stream(..) => None,
        };
        calls.push(Call {
            method: self.rule.v4.method.clone(),
            target: with_query(&self.v4_path, &self.query),
            body,
        });
        if let Some(path) = &self.refetch {
            calls.push(Call {
                method: http::Method::GET,
                target: path.clone(),
                body: None,
            });
        }
        calls
    }
}

/// The query of one page of a whole-list read: the list's own parameters, 100 items a page.
pub(crate) fn page_query(query: &[(String, String)], page: u64) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = query
        .iter()
        .filter(|(name, _)| name != "page" && name != "per_page")
        .cloned()
        .collect();
    pairs.push(("per_page".to_owned(), "100".to_owned()));
    pairs.push(("page".to_owned(), page.to_string()));
    pairs
}

fn param<'a>(params: &'a [(String, String)], name: &str) -> Option<&'a str> {
    params
        .iter()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.as_str())
}

/// Builds the V4 path from the rule's template and the (translated) parameters, percent-encoding kept.
pub(crate) fn v4_path(rule: &Rule, params: &[(String, String)]) -> String {
    let mut path = String::from("/api/v4");
    for segment in &rule.v4.segments {
        path.push('/');
        match segment {
            Segment::Literal(text) => path.push_str(text),
            Segment::Param(name) => path.push_str(param(params, name).unwrap_or("")),
            // V3 allowed raw slashes here; V4 wants the segment URL-encoded (section 5.7).
            Segment::Rest(name) => path.push_str(&param(params, name).unwrap_or("").replace('/', "%2F")),
        }
    }
    path
}

/// `/api/v4` + a rule path template whose `:param`s are the request's path parameters (as received).
pub(crate) fn fill_path(template: &str, params: &[(String, String)]) -> String {
    let filled: Vec<&str> = template
        .split('/')
        .map(|segment| match segment.strip_prefix(':') {
            Some(name) => param(params, name).unwrap_or(""),
            None => segment,
        })
        .collect();
    format!("/api/v4{}", filled.join("/"))
}

/// The V4 query: the converted V3 pairs less the path parameters V3 clients repeat in the query (a global id
/// there would contradict the iid in the path), the rule's added parameters (`:param` takes a path parameter),
/// and the page moved to V4's base.
pub(crate) fn v4_query(
    rule: &Rule,
    v3_query: &[(String, String)],
    params: &[(String, String)],
) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = v3_query
        .iter()
        .filter(|(name, _)| !rule.v3.params().any(|param| param == name))
        .cloned()
        .collect();
    for (name, value) in &rule.add_query {
        if pairs.iter().any(|(key, _)| key == name) {
            continue;
        }
        let value = match value.strip_prefix(':') {
            Some(name) => param(params, name).map(decode).unwrap_or_default(),
            None => value.clone(),
        };
        pairs.push((name.clone(), value));
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
    pairs
}

/// A synthesised answer: string values `:name` take the path parameter (decoded) or the request parameter.
fn fill_answer(template: &Value, params: &[(String, String)], request: &V3Request) -> Value {
    match template {
        Value::String(text) => match text.strip_prefix(':') {
            Some(name) => param(params, name)
                .map(|raw| Value::from(decode(raw)))
                .or_else(|| request.param(name).map(Value::from))
                .unwrap_or(Value::Null),
            None => template.clone(),
        },
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(key, value)| (key.clone(), fill_answer(value, params, request)))
                .collect(),
        ),
        other => other.clone(),
    }
}
