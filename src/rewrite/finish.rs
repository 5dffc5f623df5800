//! Builds the V3 answer from what the backend answered: status remap, synthesised or pre-fetched bodies,
//! per-item completion, embedded resources, id learning, entity shapes and pagination headers.

use std::sync::Arc;

use http::header::{HeaderMap, HeaderValue};
use http::{Response, StatusCode};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::exchange::{Exchange, Outcome};
use super::graphql::{GraphqlState, ItemKey};
use super::ids::IdIndex;
use super::pagination;
use super::param_names::rename_in_error;
use super::raw::RawObject;
use super::rule::{Embed, ItemFetch};
use super::shape::{MemberHints, Shapes};
use crate::backend::passthrough::stream_back;
use crate::http::body::{self, Body};
use crate::http::error::GatewayError;
use crate::rewrite::shape::ShapeMode;
use crate::store::{IdKind, IdRecord};

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
    /// The backend's GraphQL, for list completions in one request.
    pub graphql: &'a GraphqlState,
    /// Whether the caller sent no credential at all (no token, `Authorization` or session cookie).
    pub anonymous: bool,
}

/// The fields one completion gave an item, shared when several items get the same (none, in the raw path).
pub type Fields = Arc<Map<String, Value>>;

/// One list item to complete: the V4 path of its own fetch, and its project id and iid where the item has them.
struct ItemRef {
    path: String,
    key: Option<ItemKey>,
}

/// Bodies computed before the call: a pre-fetched resource or a synthesised answer.
pub struct Prepared {
    /// The resource fetched before the call.
    pub prefetched: Option<Value>,
    /// The synthesised V3 body.
    pub answer: Option<Value>,
}

/// A V4 parameter error (`{"error": "body is empty"}`) answered under the other status V3 gave, in V3's shape for
/// those answers: `{"message": "404 Not Found (body is empty)"}`. V3 raised such refusals itself (`not_found!`),
/// and its refusals always carried `message`; an answer that has one already is kept.
fn as_v3_message(status: StatusCode, body: Value) -> Value {
    match body.get("error").and_then(Value::as_str) {
        Some(error) if body.get("message").is_none() => {
            serde_json::json!({ "message": format!("{status} ({error})") })
        }
        _ => body,
    }
}

/// The rule's `unseen` answer when V4's answer is its 404 about the issue or merge request a known global id
/// named (the caller may not see it); `None` otherwise (a project not found is V4's answer, which V3 shared).
fn unseen_answer(rule: &super::rule::Rule, status: StatusCode, body: &Value) -> Option<(StatusCode, Value)> {
    let (v3_status, message) = rule.unseen.as_ref()?;
    let about_record = matches!(
        body.get("message").and_then(Value::as_str),
        Some("404 Issue Not Found" | "404 Merge Request Not Found")
    );
    if status != StatusCode::NOT_FOUND || rule.ids.is_empty() || !about_record {
        return None;
    }
    Some((
        StatusCode::from_u16(*v3_status).unwrap_or(status),
        serde_json::json!({ "message": message }),
    ))
}

/// A backend error relayed from a call the rule's handling made itself (a procedure's, a pre-fetch, a re-fetch),
/// answered as [`unseen_answer`] says when it is the 404 of the record a known global id named; other errors as
/// they are.
pub(crate) fn unseen_error(rule: &super::rule::Rule, error: GatewayError) -> GatewayError {
    let GatewayError::Relay { status, body } = &error else {
        return error;
    };
    if rule.unseen.is_none() || *status != StatusCode::NOT_FOUND {
        return error;
    }
    let Ok(parsed) = serde_json::from_slice::<Value>(body) else {
        return error;
    };
    match unseen_answer(rule, *status, &parsed) {
        Some((status, answer)) => GatewayError::Relay {
            status,
            body: bytes::Bytes::from(serde_json::to_vec(&answer).unwrap_or_default()),
        },
        None => error,
    }
}

/// Whether V4's answer is its 400 about a parameter V3 required (`{"error": "body is missing"}`), from a body
/// svcgate did not read to check it itself: V3 answered that 400 as it is, never under the rule's status map.
fn missing_required(rule: &super::rule::Rule, status: StatusCode, body: &Value) -> bool {
    status == StatusCode::BAD_REQUEST
        && body
            .get("error")
            .and_then(Value::as_str)
            .and_then(|error| error.strip_suffix(" is missing"))
            .is_some_and(|name| rule.requires.iter().any(|required| required == name))
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
                let json_error = v4_status.is_client_error()
                    && response
                        .headers()
                        .get(http::header::CONTENT_TYPE)
                        .and_then(|value| value.to_str().ok())
                        .is_some_and(|value| value.contains("json"));
                let remapped = remap(v4_status) != v4_status;
                // A known global id whose record the backend will not show this caller: V3's own answer.
                let unseen = rule.unseen.is_some() && v4_status == StatusCode::NOT_FOUND;
                if json_error && (remapped || unseen || !exchange.v3_names.is_empty()) {
                    let (parts, bytes) = exchange.caller.read_bytes(response).await?;
                    let body = match crate::util::plain_value::from_slice(&bytes) {
                        Ok(body) => {
                            if let Some((status, body)) = unseen_answer(rule, v4_status, &body) {
                                return Ok(self.respond(status, parts.headers, body));
                            }
                            if missing_required(rule, v4_status, &body) {
                                return Ok(self.respond(v4_status, parts.headers, body));
                            }
                            let body = rename_in_error(body, &exchange.v3_names);
                            let body = if remapped {
                                as_v3_message(remap(v4_status), body)
                            } else {
                                body
                            };
                            serde_json::to_vec(&body).unwrap_or_default()
                        }
                        Err(_) => bytes.to_vec(),
                    };
                    return Ok(self.respond_bytes(remap(v4_status), parts.headers, body));
                }
                if !v4_status.is_success() || !rule.rebuilds_answer() {
                    let mut answer = stream_back(response);
                    *answer.status_mut() = remap(v4_status);
                    if v4_status.is_success() {
                        pagination::rewrite(answer.headers_mut(), self.origin, self.v3_path, rule.page_base);
                    }
                    return Ok(answer);
                }
                if self.reads_raw(
                    rule,
                    rule.response_for(&exchange.query, self.anonymous),
                    &prepared,
                ) {
                    let (parts, bytes) = exchange.caller.read_bytes(response).await?;
                    if let Some(answer) = self
                        .finish_raw(exchange, remap(v4_status), &parts.headers, &bytes)
                        .await?
                    {
                        return Ok(answer);
                    }
                    (
                        remap(v4_status),
                        parts.headers,
                        super::backend::parse_json(&bytes)?,
                    )
                } else {
                    let answer = exchange.caller.read_json(response).await?;
                    (remap(v4_status), answer.headers, answer.body)
                }
            }
            Outcome::Json {
                status,
                headers,
                body,
            } => {
                if !status.is_success() {
                    if let Some((status, body)) = unseen_answer(rule, status, &body) {
                        return Ok(self.respond(status, headers, body));
                    }
                    if missing_required(rule, status, &body) {
                        return Ok(self.respond(status, headers, body));
                    }
                    let body = rename_in_error(body, &exchange.v3_names);
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
        if let Some(entity) = rule.response_for(&exchange.query, self.anonymous) {
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
    pub fn respond(&self, status: StatusCode, headers: HeaderMap, body: Value) -> Response<Body> {
        self.respond_bytes(status, headers, serde_json::to_vec(&body).unwrap_or_default())
    }

    /// A response of JSON text with the backend's remaining headers.
    fn respond_bytes(&self, status: StatusCode, mut headers: HeaderMap, body: Vec<u8>) -> Response<Body> {
        crate::backend::upstream::strip_hop_by_hop(&mut headers);
        headers.remove(http::header::CONTENT_LENGTH);
        headers.remove(http::header::CONTENT_ENCODING);
        headers.remove(http::header::ETAG);
        headers.insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        let mut response = Response::new(body::full(body));
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
        let refs = items
            .iter()
            .map(|item| {
                let path = item_path(exchange, &fetch.path, &|field| item.get(field).map(segment_of))?;
                let key = item
                    .get("project_id")
                    .and_then(Value::as_u64)
                    .zip(item.get("iid").and_then(iid_text));
                Some(ItemRef { path, key })
            })
            .collect();
        let fetched = self.fetch_items(exchange, fetch, refs).await?;
        for (item, fetched) in items.iter_mut().zip(fetched) {
            match (fetched, item) {
                (Some(Fetched::Whole(full)), item) => *item = full,
                (Some(Fetched::Fields(fields)), Value::Object(item)) => {
                    item.extend(fields.iter().map(|(name, value)| (name.clone(), value.clone())))
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Completes each item (`None`: no completion): the fields the fetch completes, or the whole item when it
    /// replaces the listed one. Fields come from one batched GraphQL request where the rule names a collection
    /// and the backend answers it; the other items are fetched one by one, a bounded number at a time. An item
    /// gone since the list was read yields `None`.
    async fn fetch_items(
        &self,
        exchange: &Exchange<'_>,
        fetch: &ItemFetch,
        items: Vec<Option<ItemRef>>,
    ) -> Result<Vec<Option<Fetched>>, GatewayError> {
        let whole = fetch.fields.is_empty();
        let mut batched = match (fetch.graphql, whole) {
            (Some(collection), false) => {
                let mut keys: Vec<ItemKey> = Vec::with_capacity(items.len());
                for key in items.iter().flatten().filter_map(|item| item.key.as_ref()) {
                    if !keys.contains(key) {
                        keys.push(key.clone());
                    }
                }
                self.graphql
                    .complete(
                        &exchange.caller,
                        collection,
                        &fetch.fields,
                        &keys,
                        self.concurrency,
                    )
                    .await?
            }
            _ => Default::default(),
        };
        let mut results: Vec<Option<Fetched>> = Vec::with_capacity(items.len());
        let mut unanswered = Vec::new();
        for (index, item) in items.iter().enumerate() {
            let completed = item
                .as_ref()
                .and_then(|item| item.key.as_ref())
                .and_then(|key| batched.remove(key));
            match (item, completed) {
                (_, Some(fields)) => results.push(Some(Fetched::Fields(Arc::new(fields)))),
                (Some(item), None) => {
                    results.push(None);
                    unanswered.push((index, item.path.as_str()));
                }
                (None, None) => results.push(None),
            }
        }
        for wave in unanswered.chunks(self.concurrency.max(1)) {
            let fetches = wave.iter().map(|(index, path)| async move {
                let fetched = match exchange.caller.get_json(path).await {
                    Ok(answer) if whole => Some(Fetched::Whole(answer.body)),
                    Ok(answer) => Some(Fetched::Fields(Arc::new(fetch.completion(&answer.body)))),
                    // Gone between the list and the fetch: keep the listed item as it is.
                    Err(GatewayError::Relay { status, .. }) if status == StatusCode::NOT_FOUND => None,
                    Err(error) => return Err(error),
                };
                Ok((*index, fetched))
            });
            for fetched in futures_util::future::join_all(fetches).await {
                let (index, fetched) = fetched?;
                results[index] = fetched;
            }
        }
        Ok(results)
    }

    /// Whether the answer can be reshaped from its text ([`Finisher::finish_raw`]): strict shapes, an entity to
    /// shape into, and nothing that needs the whole answer as a value (a synthesised or embedded body, items
    /// replaced whole by their own fetch).
    fn reads_raw(&self, rule: &super::rule::Rule, entity: Option<&str>, prepared: &Prepared) -> bool {
        self.mode == ShapeMode::Strict
            && prepared.answer.is_none()
            && prepared.prefetched.is_none()
            && rule.embed.is_none()
            && rule
                .item_fetch
                .as_ref()
                .as_ref()
                .map_or(true, |fetch| !fetch.fields.is_empty())
            && entity.is_some_and(|entity| self.shapes.contains(entity))
    }

    /// Reshapes a V4 object, or list of objects, from its text into the V3 answer without a value tree: the
    /// same answer as the general path (item completions, id learning, shape, `Link` headers). `None` when the
    /// answer is neither, for the general path to handle.
    async fn finish_raw(
        &self,
        exchange: &Exchange<'_>,
        status: StatusCode,
        headers: &HeaderMap,
        bytes: &[u8],
    ) -> Result<Option<Response<Body>>, GatewayError> {
        let rule = exchange.rule;
        let Some(entity) = rule.response_for(&exchange.query, self.anonymous) else {
            return Ok(None);
        };
        // UTF-8 is checked once here; parsing from `str` then skips checking each value again.
        let Ok(text) = std::str::from_utf8(bytes) else {
            return Ok(None);
        };
        let (objects, single) = match text.trim_start().as_bytes().first() {
            Some(b'[') => match serde_json::from_str::<Vec<RawObject>>(text) {
                Ok(objects) => (objects, false),
                Err(_) => return Ok(None),
            },
            Some(b'{') => match serde_json::from_str::<RawObject>(text) {
                Ok(object) => (vec![object], true),
                Err(_) => return Ok(None),
            },
            _ => return Ok(None),
        };
        // As in the general path, only the items of a list are completed.
        // Items without a completion share one empty set of fields.
        let none: Fields = Arc::new(Map::new());
        let mut given = vec![none; objects.len()];
        if let (Some(fetch), false) = (&rule.item_fetch, single) {
            let refs = objects
                .iter()
                .map(|object| {
                    let path = item_path(exchange, &fetch.path, &|field| {
                        object.get(field).map(raw_segment_of)
                    })?;
                    let key = object
                        .number("project_id")
                        .zip(object.number("iid").map(|iid| iid.to_string()));
                    Some(ItemRef { path, key })
                })
                .collect();
            let fetched = self.fetch_items(exchange, fetch, refs).await?;
            for (fields, fetched) in given.iter_mut().zip(fetched) {
                if let Some(Fetched::Fields(completed)) = fetched {
                    *fields = completed;
                }
            }
        }
        if let Some(kind) = entity_kind(entity) {
            let records = objects
                .iter()
                .filter_map(|object| {
                    Some(IdRecord {
                        kind,
                        id: object.number("id")?,
                        project_id: object.number("project_id")?,
                        iid: object.number("iid")?,
                    })
                })
                .collect();
            self.ids.learn_records(records);
        }
        let mut out = Vec::with_capacity(bytes.len());
        let mut hints = MemberHints::default();
        if single {
            self.shapes
                .write_raw(entity, &objects[0], &given[0], &mut hints, &mut out);
        } else {
            out.push(b'[');
            for (index, (object, fields)) in objects.iter().zip(&given).enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                self.shapes
                    .write_raw(entity, object, fields, &mut hints, &mut out);
            }
            out.push(b']');
        }
        let mut headers = headers.clone();
        pagination::rewrite(&mut headers, self.origin, self.v3_path, rule.page_base);
        Ok(Some(self.respond_bytes(status, headers, out)))
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

/// The V4 path of one list item: `{field}` takes the item's field (as a path segment, from `segment_of_field`),
/// `:param` the request's path parameter.
fn item_path(
    exchange: &Exchange<'_>,
    template: &str,
    segment_of_field: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    // One string built in place: a list of 100 items builds 100 paths per request.
    let mut path = String::with_capacity(7 + template.len() + 16);
    path.push_str("/api/v4");
    for (index, segment) in template.split('/').enumerate() {
        if index > 0 {
            path.push('/');
        }
        if let Some(field) = segment.strip_prefix('{').and_then(|rest| rest.strip_suffix('}')) {
            path.push_str(&segment_of_field(field)?);
        } else if let Some(name) = segment.strip_prefix(':') {
            path.push_str(exchange.raw_param(name)?);
        } else {
            path.push_str(segment);
        }
    }
    Some(path)
}

/// A field's value as a path segment: a string percent-encoded, anything else as its JSON text.
fn segment_of(value: &Value) -> String {
    match value {
        Value::String(text) => crate::util::url_parts::encode_segment(text),
        other => other.to_string(),
    }
}

/// [`segment_of`] from the value's text: an unsigned integer (an `iid`, nearly always) is its own text, unparsed.
/// Signed ones go the long way: JSON's `-0` reads as the float `-0.0`.
fn raw_segment_of(raw: &RawValue) -> String {
    let text = raw.get();
    if !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit()) {
        return text.to_owned();
    }
    segment_of(&serde_json::from_str(text).unwrap_or(Value::Null))
}

/// An item's iid as GraphQL writes it (text), from V4's number (or text).
fn iid_text(value: &Value) -> Option<String> {
    match value {
        Value::Number(number) => number.as_u64().map(|iid| iid.to_string()),
        Value::String(text) => Some(text.clone()),
        _ => None,
    }
}

/// What one completion gives a list item.
enum Fetched {
    /// The fields the rule completes (`item_fetch.fields`).
    Fields(Fields),
    /// The whole fetched item, which replaces the listed one.
    Whole(Value),
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;

    /// JSON scalars an item field may hold (an `iid`, a `sha`, a path), as text.
    fn scalar_text() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<i64>().prop_map(|number| number.to_string()),
            any::<u64>().prop_map(|number| number.to_string()),
            any::<f64>()
                .prop_filter("finite", |number| number.is_finite())
                .prop_map(|number| serde_json::to_string(&number).unwrap()),
            ".*".prop_map(|text| serde_json::to_string(&text).unwrap()),
            Just("null".to_owned()),
            Just("true".to_owned()),
            Just("-0".to_owned()),
            Just("1e3".to_owned()),
        ]
    }

    proptest! {
        #[test]
        fn a_segment_from_the_raw_text_is_the_segment_from_the_parsed_value(text in scalar_text()) {
            let raw: &RawValue = serde_json::from_str(&text).unwrap();
            let value: Value = serde_json::from_str(&text).unwrap();
            prop_assert_eq!(raw_segment_of(raw), segment_of(&value));
        }
    }

    #[test]
    fn strings_are_percent_encoded_and_integers_kept_as_written() {
        let raw: &RawValue = serde_json::from_str(r#""a/b c""#).unwrap();
        assert_eq!(raw_segment_of(raw), "a%2Fb%20c");
        let raw: &RawValue = serde_json::from_str("1042").unwrap();
        assert_eq!(raw_segment_of(raw), "1042");
    }
}
