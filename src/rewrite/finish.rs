//! Builds the V3 answer from what the backend answered: status remap, synthesised or pre-fetched bodies,
//! per-item completion, embedded resources, id learning, entity shapes and pagination headers.

use http::header::{HeaderMap, HeaderValue};
use http::{Response, StatusCode};
use serde_json::{Map, Value};

use super::exchange::{Exchange, Outcome};
use super::ids::IdIndex;
use super::item_cache::ItemCache;
use super::pagination;
use super::rule::{Embed, ItemFetch};
use super::shape::Shapes;
use crate::body::{self, Body};
use crate::config::ShapeMode;
use crate::error::GatewayError;
use crate::passthrough::stream_back;
use crate::store::IdKind;

/// What building an answer needs besides the exchange.
pub struct Finisher<'a> {
    /// The entity shapes.
    pub shapes: &'a Shapes,
    /// The id index, to learn from answers.
    pub ids: &'a IdIndex,
    /// Strict or tolerant shapes.
    pub mode: ShapeMode,
    /// Per-item fetches run at once at most.
    pub concurrency: usize,
    /// The gateway origin for `Link` headers.
    pub origin: &'a str,
    /// The V3 path for `Link` headers.
    pub v3_path: &'a str,
    /// Recent per-item completions.
    pub item_cache: &'a ItemCache,
    /// A hash of the caller's credentials (empty when anonymous).
    pub caller: &'a str,
}

/// Bodies computed before the call: a pre-fetched resource or a synthesised answer.
pub struct Prepared {
    /// The resource fetched before the call.
    pub prefetched: Option<Value>,
    /// The synthesised V3 body.
    pub answer: Option<Value>,
}

fn entity_kind(entity: &str) -> Option<IdKind> {
    match entity {
        "issue" => Some(IdKind::Issue),
        "merge_request" => Some(IdKind::MergeRequest),
        _ => None,
    }
}

impl Finisher<'_> {
    /// The V3 response for `outcome`.
    pub async fn finish(
        &self,
        exchange: &Exchange<'_>,
        outcome: Outcome,
        prepared: Prepared,
    ) -> Result<Response<Body>, GatewayError> {
        let rule = exchange.rule;
        let remap =
            |status: StatusCode| StatusCode::from_u16(rule.v3_status(status.as_u16())).unwrap_or(status);
        let (status, headers, body) = match outcome {
            Outcome::Stream(response) => {
                let v4_status = response.status();
                if !v4_status.is_success() || !rule.rebuilds_answer() {
                    let mut answer = stream_back(response);
                    *answer.status_mut() = remap(v4_status);
                    if v4_status.is_success() {
                        pagination::rewrite(answer.headers_mut(), self.origin, self.v3_path, rule.page_base);
                    }
                    return Ok(answer);
                }
                let answer = exchange.caller.read_json(response).await?;
                (remap(v4_status), answer.headers, answer.body)
            }
            Outcome::Json {
                status,
                headers,
                body,
            } => {
                if !status.is_success() {
                    return Ok(self.respond(remap(status), headers, body));
                }
                (remap(status), headers, body)
            }
        };
        let mut body = prepared.answer.or(prepared.prefetched).unwrap_or(body);
        if let Some(fetch) = &rule.item_fetch {
            self.fill_items(exchange, fetch, &mut body).await?;
        }
        if let Some(embed) = &rule.embed {
            self.embed(exchange, embed, &mut body).await?;
        }
        if let Some(entity) = rule.response.as_deref() {
            if let Some(kind) = entity_kind(entity) {
                self.ids.learn(kind, &body);
            }
            body = self.shapes.apply(entity, body, self.mode);
        }
        let mut headers = headers;
        pagination::rewrite(&mut headers, self.origin, self.v3_path, rule.page_base);
        Ok(self.respond(status, headers, body))
    }

    /// A JSON response with the backend's remaining headers.
    pub fn respond(&self, status: StatusCode, mut headers: HeaderMap, body: Value) -> Response<Body> {
        crate::upstream::strip_hop_by_hop(&mut headers);
        headers.remove(http::header::CONTENT_LENGTH);
        headers.remove(http::header::CONTENT_ENCODING);
        headers.remove(http::header::ETAG);
        headers.insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        let mut response = Response::new(body::full(serde_json::to_vec(&body).unwrap_or_default()));
        *response.status_mut() = status;
        *response.headers_mut() = headers;
        response
    }

    /// Completes each list item with a fetch of its own, a bounded number at a time.
    async fn fill_items(
        &self,
        exchange: &Exchange<'_>,
        fetch: &ItemFetch,
        body: &mut Value,
    ) -> Result<(), GatewayError> {
        let Value::Array(items) = body else {
            return Ok(());
        };
        // Only field completions are cached: a whole item (a pipeline) changes too often to reuse.
        let cacheable = !fetch.fields.is_empty();
        for chunk in items.chunks_mut(self.concurrency.max(1)) {
            let fetches = chunk.iter().map(|item| {
                let path = item_path(exchange, &fetch.path, item);
                async move {
                    match path {
                        Some(path) if cacheable && self.item_cache.get(self.caller, &path).is_some() => {
                            Ok(self.item_cache.get(self.caller, &path).map(Value::Object))
                        }
                        Some(path) => match exchange.caller.get_json(&path).await {
                            Ok(answer) => {
                                if cacheable {
                                    let kept: Map<String, Value> = fetch
                                        .fields
                                        .iter()
                                        .map(|field| {
                                            (
                                                field.clone(),
                                                answer.body.get(field).cloned().unwrap_or(Value::Null),
                                            )
                                        })
                                        .collect();
                                    self.item_cache.put(self.caller, &path, kept);
                                }
                                Ok(Some(answer.body))
                            }
                            // Gone between the list and the fetch: keep the listed item as it is.
                            Err(GatewayError::Relay { status, .. }) if status == StatusCode::NOT_FOUND => {
                                Ok(None)
                            }
                            Err(error) => Err(error),
                        },
                        None => Ok(None),
                    }
                }
            });
            let fetched = futures_util::future::join_all(fetches).await;
            for (item, full) in chunk.iter_mut().zip(fetched) {
                let Some(full) = full? else {
                    continue;
                };
                if fetch.fields.is_empty() {
                    *item = full;
                } else if let Value::Object(item) = item {
                    for field in &fetch.fields {
                        item.insert(field.clone(), full.get(field).cloned().unwrap_or(Value::Null));
                    }
                }
            }
        }
        Ok(())
    }

    /// Fetches one resource and puts it into every item.
    async fn embed(
        &self,
        exchange: &Exchange<'_>,
        embed: &Embed,
        body: &mut Value,
    ) -> Result<(), GatewayError> {
        let fetched = exchange
            .caller
            .get_json(&exchange.fill_path(&embed.path))
            .await?
            .body;
        let value = match &embed.entity {
            Some(entity) => self.shapes.apply(entity, fetched, self.mode),
            None => fetched,
        };
        let mut put = |item: &mut Value| {
            if let Value::Object(item) = item {
                item.insert(embed.field.clone(), value.clone());
            }
        };
        match body {
            Value::Array(items) => items.iter_mut().for_each(&mut put),
            single => put(single),
        }
        Ok(())
    }
}

/// The V4 path of one list item: `{field}` takes the item's field, `:param` the request's path parameter.
fn item_path(exchange: &Exchange<'_>, template: &str, item: &Value) -> Option<String> {
    let mut segments = Vec::new();
    for segment in template.split('/') {
        if let Some(field) = segment.strip_prefix('{').and_then(|rest| rest.strip_suffix('}')) {
            let value = item.get(field)?;
            segments.push(match value {
                Value::String(text) => super::exchange::encode_segment(text),
                other => other.to_string(),
            });
        } else if let Some(name) = segment.strip_prefix(':') {
            segments.push(exchange.raw_param(name)?.to_owned());
        } else {
            segments.push(segment.to_owned());
        }
    }
    Some(format!("/api/v4{}", segments.join("/")))
}
