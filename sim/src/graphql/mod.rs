//! `POST|GET /api/graphql`: GraphQL as the service answers it. Owns the endpoint's HTTP side (reading a single or
//! batched request from the body or the query string, authenticating as V4 does, the service's status codes and
//! error shapes), the complexity limits per kind of caller with the service's message, and the schema (`schema`)
//! and global ids (`gid`) under it. Parsing, validation and execution are async-graphql's.

pub mod connection;
pub mod gid;
pub mod schema;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use async_graphql::extensions::{Extension, ExtensionContext, ExtensionFactory, NextValidation};
use async_graphql::{EmptyMutation, EmptySubscription, ServerError, ValidationResult};
use http::{Method, StatusCode};
use serde_json::{json, Value};

use crate::auth::{header, token_owner};
use crate::dispatch::RawRequest;
use crate::error::ApiError;
use crate::handle::{lock, Shared};
use crate::params::Params;
use crate::reply::Reply;
use schema::{Query, SimSchema, Viewer};

/// The service's `MAX_QUERY_SIZE`: longer query texts are refused with 422 before parsing.
const MAX_QUERY_SIZE: usize = 10_000;

/// The endpoint's path.
pub const PATH: &str = "/api/graphql";

/// The service's complexity limit for anonymous callers (`GitlabSchema::DEFAULT_MAX_COMPLEXITY`).
pub const ANONYMOUS_MAX_COMPLEXITY: usize = 200;
/// The service's limit for signed-in callers (`AUTHENTICATED_MAX_COMPLEXITY`).
pub const AUTHENTICATED_MAX_COMPLEXITY: usize = 250;
/// The service's limit for administrators (`ADMIN_MAX_COMPLEXITY`).
pub const ADMIN_MAX_COMPLEXITY: usize = 300;

/// Builds the schema; every query is held to its caller's complexity limit (see [`limit_for`]).
pub fn build() -> SimSchema {
    async_graphql::Schema::build(Query, EmptyMutation, EmptySubscription)
        .disable_suggestions()
        .extension(ComplexityLimit)
        .finish()
}

/// The complexity limit of a caller, as the service chooses it: `overridden` (`graphql_max_complexity`) for
/// everyone when set, else 300 for an administrator, 250 for another signed-in user, 200 when anonymous.
pub fn limit_for(overridden: Option<usize>, caller: Option<u64>, is_admin: bool) -> usize {
    match (overridden, caller) {
        (Some(limit), _) => limit,
        (None, None) => ANONYMOUS_MAX_COMPLEXITY,
        (None, Some(_)) if is_admin => ADMIN_MAX_COMPLEXITY,
        (None, Some(_)) => AUTHENTICATED_MAX_COMPLEXITY,
    }
}

/// Refuses a query whose complexity (as the schema's per-field costs count it) exceeds the caller's limit (the
/// request's [`Viewer`]), with the service's message: `Query has complexity of C, which exceeds max complexity of
/// N`; and tells the viewer the score, for `queryComplexity`.
struct ComplexityLimit;

impl ExtensionFactory for ComplexityLimit {
    fn create(&self) -> Arc<dyn Extension> {
        Arc::new(ComplexityLimit)
    }
}

#[async_graphql::async_trait::async_trait]
impl Extension for ComplexityLimit {
    async fn validation(
        &self,
        ctx: &ExtensionContext<'_>,
        next: NextValidation<'_>,
    ) -> Result<ValidationResult, Vec<ServerError>> {
        let result = next.run(ctx).await?;
        let Some(viewer) = ctx.data_opt::<Viewer>() else {
            return Ok(result);
        };
        viewer.score.store(result.complexity, Ordering::Relaxed);
        if result.complexity > viewer.limit {
            return Err(vec![ServerError::new(
                format!(
                    "Query has complexity of {}, which exceeds max complexity of {}",
                    result.complexity, viewer.limit
                ),
                None,
            )]);
        }
        Ok(result)
    }
}

/// An answer with the endpoint's `{"errors": [{"message"}]}` shape.
fn refusal(status: StatusCode, message: &str) -> Reply {
    Reply::json(status, json!({"errors": [{"message": message}]}))
}

/// Answers one request to the endpoint with GraphQL on.
pub async fn serve(shared: &Arc<Shared>, schema: &SimSchema, raw: &RawRequest) -> Result<Reply, ApiError> {
    if raw.method != Method::POST && raw.method != Method::GET {
        return Err(ApiError::NoRoute);
    }
    let params = Params::parse(raw.query.as_deref(), None, b"")?;
    let (caller, limit) = {
        let store = lock(&shared.store);
        let caller = match token_owner(&store, &raw.headers, &params) {
            Ok(caller) => caller,
            Err(ApiError::Unauthorized) => return Ok(refusal(StatusCode::UNAUTHORIZED, "Invalid token")),
            Err(err) => return Ok(refusal(err.status(), &err.to_string())),
        };
        let is_admin = caller
            .and_then(|uid| store.users.get(&uid))
            .is_some_and(|user| user.is_admin);
        (caller, limit_for(shared.graphql_max_complexity, caller, is_admin))
    };
    let body = match read_body(raw, &params) {
        Ok(body) => body,
        Err(message) => return Ok(refusal(StatusCode::UNPROCESSABLE_ENTITY, &message)),
    };
    let requests = match &body {
        Value::Array(items) => items.clone(),
        single => vec![single.clone()],
    };
    let mut answers = Vec::with_capacity(requests.len());
    for request in requests {
        let request = match serde_json::from_value::<async_graphql::Request>(request) {
            Ok(request) => request,
            Err(err) => return Ok(refusal(StatusCode::UNPROCESSABLE_ENTITY, &err.to_string())),
        };
        if request.query.len() > MAX_QUERY_SIZE {
            return Ok(refusal(StatusCode::UNPROCESSABLE_ENTITY, "Query too large"));
        }
        answers.push(execute(shared, schema, caller, limit, request).await);
    }
    let answer = match body {
        Value::Array(_) => Value::Array(answers),
        _ => answers.into_iter().next().unwrap_or(Value::Null),
    };
    Ok(Reply::ok(answer))
}

/// The request(s) the body carries, or for `GET` (or an empty body) the `query`, `variables` and `operationName`
/// parameters; `Err` with the service's message when they are not JSON.
fn read_body(raw: &RawRequest, params: &Params) -> Result<Value, String> {
    let looks_json = raw
        .body
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|b| *b == b'{' || *b == b'[');
    let json_body = looks_json || header(&raw.headers, "content-type").map_or(true, |ct| ct.contains("json"));
    if raw.method == Method::POST && !raw.body.is_empty() && json_body {
        return serde_json::from_slice(&raw.body).map_err(|err| format!("Unexpected end of input: {err}"));
    }
    let form = if raw.method == Method::POST {
        Params::parse(None, header(&raw.headers, "content-type"), &raw.body).unwrap_or_default()
    } else {
        Params::default()
    };
    let get = |name: &str| params.str(name).or_else(|| form.str(name));
    let variables = match get("variables") {
        Some(text) if !text.trim().is_empty() => {
            serde_json::from_str::<Value>(&text).map_err(|_| "Variables are invalid JSON".to_string())?
        }
        _ => Value::Null,
    };
    Ok(json!({
        "query": get("query").unwrap_or_default(),
        "variables": variables,
        "operationName": get("operationName"),
    }))
}

/// Runs one GraphQL request and shapes its answer: execution errors beside `data`, parse and validation errors
/// (and bad global ids) alone, without a `data` key.
async fn execute(
    shared: &Arc<Shared>,
    schema: &SimSchema,
    caller: Option<u64>,
    limit: usize,
    mut request: async_graphql::Request,
) -> Value {
    if request.query.trim().is_empty() {
        return json!({"errors": [{"message": "No query string was present"}]});
    }
    let word = lock(&shared.store).identifier_word.clone();
    let operation_name = request.operation_name.clone();
    let variables = request.variables.clone();
    if let Ok(doc) = request.parsed_query() {
        let problems = gid::check(&word, doc, operation_name.as_deref(), &variables);
        if !problems.is_empty() {
            return json!({ "errors": problems });
        }
    }
    let request = request.data(Viewer {
        shared: shared.clone(),
        caller,
        limit,
        score: AtomicUsize::new(0),
    });
    let response = schema.execute(request).await;
    let executed = !response.errors.is_empty() && response.errors.iter().all(|e| !e.path.is_empty());
    let mut value = serde_json::to_value(&response).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut value {
        if executed {
            null_failed_fields(map);
        } else if map.get("data").is_some_and(Value::is_null) && map.contains_key("errors") {
            map.remove("data");
            if let Some(Value::Array(errors)) = map.get_mut("errors") {
                for error in errors {
                    let message = error
                        .get("message")
                        .and_then(Value::as_str)
                        .and_then(ruby_message);
                    if let Some(message) = message {
                        error["message"] = Value::String(message);
                    }
                }
            }
        }
    }
    value
}

/// The service's (graphql-ruby's) wording of the validation errors clients meet most, where async-graphql words
/// them otherwise: an unknown field or argument.
fn ruby_message(message: &str) -> Option<String> {
    let parts: Vec<&str> = message.split('"').collect();
    match parts.as_slice() {
        ["Unknown field ", field, " on type ", ty, ..] => {
            Some(format!("Field '{field}' doesn't exist on type '{ty}'"))
        }
        ["Unknown argument ", arg, " on field ", field, " of type ", ..] => {
            Some(format!("Field '{field}' doesn't accept argument '{arg}'"))
        }
        _ => None,
    }
}

/// Puts `null` where a field failed, as the GraphQL spec has it (async-graphql leaves the field out, and `data`
/// null when every root field failed): `{"data":{"issue":null},"errors":[{…"path":["issue"]}]}`.
fn null_failed_fields(answer: &mut serde_json::Map<String, Value>) {
    let paths: Vec<Vec<Value>> = answer
        .get("errors")
        .and_then(Value::as_array)
        .map(|errors| {
            errors
                .iter()
                .filter_map(|e| e.get("path").and_then(Value::as_array).cloned())
                .collect()
        })
        .unwrap_or_default();
    let data = answer.entry("data").or_insert(Value::Null);
    if data.is_null() {
        *data = Value::Object(serde_json::Map::new());
    }
    for path in paths {
        let Some((last, parents)) = path.split_last() else {
            continue;
        };
        let Some(at) = parents.iter().try_fold(&mut *data, |at, step| match (step, at) {
            (Value::String(key), Value::Object(map)) => map.get_mut(key),
            (Value::Number(n), Value::Array(items)) => n
                .as_u64()
                .and_then(|i| usize::try_from(i).ok())
                .and_then(|i| items.get_mut(i)),
            _ => None,
        }) else {
            continue;
        };
        if let (Value::String(key), Value::Object(map)) = (last, at) {
            map.entry(key.clone()).or_insert(Value::Null);
        }
    }
}
