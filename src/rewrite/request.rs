//! The V3 request in hand: its query pairs and its body, read and converted only when a rule needs it.
//!
//! Bodies of rules that rename or convert parameters (or whose procedure reads one) are read under the size cap
//! and rewritten as JSON or form pairs; every other body — multipart uploads included — is streamed on unread.

use bytes::Bytes;
use http::header::{HeaderMap, HeaderValue};
use serde_json::{Map, Value};

use super::params::{convert_json, convert_pairs, ParamError};
use super::rule::{Conversion, Rule};
use crate::backend::context::RequestContext;
use crate::http::body::{self, Body};
use crate::http::budget::{BodyBudget, BudgetError};
use crate::http::error::GatewayError;
use crate::util::url_parts::{encode_pairs, pair_value, parse_pairs};

/// The body of a V3 request, as far as the gateway has read it.
pub enum V3Body {
    /// No body.
    Empty,
    /// Not read: streamed to the backend as it arrives.
    Stream(Option<HeaderValue>, Body),
    /// A JSON object body.
    Json(Map<String, Value>),
    /// A form-encoded body.
    Form(Vec<(String, String)>),
    /// A body read whole that is neither (sent on as it came).
    Raw(Option<HeaderValue>, Bytes),
}

/// A V3 request's parameters.
pub struct V3Request {
    /// Query pairs, converted.
    pub query: Vec<(String, String)>,
    /// The body.
    pub body: V3Body,
    /// `(V4 name, V3 name)` of each parameter the client sent under a name the rule renames, so that a V4 error
    /// about `visibility` can name the `visibility_level` the client sent.
    pub renamed: Vec<(String, String)>,
}

/// The `(V4 name, V3 name)` pairs of the renaming conversions whose V3 name is among `sent` (JSON keys are matched
/// without their `[]` suffix).
fn renames_sent<'a>(
    conversions: &[Conversion],
    sent: impl Iterator<Item = &'a str> + Clone,
) -> Vec<(String, String)> {
    conversions
        .iter()
        .filter(|conversion| conversion.from != conversion.to)
        .filter(|conversion| {
            let from = conversion.from.strip_suffix("[]").unwrap_or(&conversion.from);
            sent.clone()
                .any(|name| name.strip_suffix("[]").unwrap_or(name) == from)
        })
        .map(|conversion| (conversion.to.clone(), conversion.from.clone()))
        .collect()
}

fn is_json(content_type: Option<&HeaderValue>) -> bool {
    content_type
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            let essence = value.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
            essence == "application/json" || essence.ends_with("+json")
        })
}

fn is_form(content_type: Option<&HeaderValue>) -> bool {
    content_type
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            value
                .split(';')
                .next()
                .unwrap_or("")
                .trim()
                .eq_ignore_ascii_case("application/x-www-form-urlencoded")
        })
}

/// Whether the gateway reads a body of this content type when its rule needs it: JSON, a form, or none given.
fn is_readable(content_type: Option<&HeaderValue>) -> bool {
    content_type.is_none() || is_json(content_type) || is_form(content_type)
}

/// `(name, value)` pairs of a query or form, or `(V4 name, V3 name)` pairs of renames.
type Pairs = Vec<(String, String)>;

/// The query pairs, converted, and the renames among them.
fn read_query(query: Option<&str>, conversions: &[Conversion]) -> Result<(Pairs, Pairs), GatewayError> {
    let mut pairs = parse_pairs(query.unwrap_or("").as_bytes());
    unindex_pairs(&mut pairs);
    let renamed = renames_sent(conversions, pairs.iter().map(|(name, _)| name.as_str()));
    let pairs = convert_pairs(pairs, conversions).map_err(bad_param)?;
    Ok((pairs, renamed))
}

/// A body read whole: a JSON object or form converted by the rule (its renames added to `renamed`); blank is no
/// body; anything else is sent on as it came.
fn parse_body(
    content_type: Option<HeaderValue>,
    bytes: Bytes,
    conversions: &[Conversion],
    renamed: &mut Vec<(String, String)>,
) -> Result<V3Body, GatewayError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(V3Body::Empty);
    }
    if is_form(content_type.as_ref()) {
        let mut pairs = parse_pairs(&bytes);
        unindex_pairs(&mut pairs);
        renamed.extend(renames_sent(
            conversions,
            pairs.iter().map(|(name, _)| name.as_str()),
        ));
        return Ok(V3Body::Form(
            convert_pairs(pairs, conversions).map_err(bad_param)?,
        ));
    }
    if content_type.is_none() {
        // Neither JSON nor form by its headers: sent on as it came.
        return Ok(V3Body::Raw(None, bytes));
    }
    match crate::util::plain_value::from_slice(&bytes) {
        Ok(Value::Object(object)) => {
            renamed.extend(renames_sent(conversions, object.keys().map(String::as_str)));
            Ok(V3Body::Json(
                convert_json(object, conversions).map_err(bad_param)?,
            ))
        }
        Ok(_) => Ok(V3Body::Raw(content_type, bytes)),
        Err(error) => Err(GatewayError::BadRequest(format!("invalid JSON body: {error}"))),
    }
}

/// The name of an indexed array element as V3's Rack read it (`scope[0]` → `scope[]`); other names as they are.
fn unindexed(name: &str) -> Option<String> {
    let inner = name.strip_suffix(']')?;
    let (base, index) = inner.rsplit_once('[')?;
    (!base.is_empty() && !index.is_empty() && index.bytes().all(|byte| byte.is_ascii_digit()))
        .then(|| format!("{base}[]"))
}

/// Renames indexed array elements (`scope[0]=pending&scope[1]=running`) to the `scope[]` form V4 reads, in place;
/// answers whether any was renamed. V3's Rack parsed both forms as one array.
pub(crate) fn unindex_pairs(pairs: &mut [(String, String)]) -> bool {
    let mut changed = false;
    for (name, _) in pairs.iter_mut() {
        if let Some(plain) = unindexed(name) {
            *name = plain;
            changed = true;
        }
    }
    changed
}

/// A query with its indexed array elements renamed (see [`unindex_pairs`]), or `None` when it has none.
pub(crate) fn unindex_query(query: &str) -> Option<String> {
    let mut pairs = parse_pairs(query.as_bytes());
    unindex_pairs(&mut pairs).then(|| encode_pairs(&pairs))
}

/// The answer to a client body svcgate could not read: too large → 400, the body budget spent → 503 Busy (with
/// `Retry-After`), a slow or stalled client → 408.
pub(crate) fn body_error(error: BudgetError) -> GatewayError {
    match error {
        BudgetError::TooLarge { max } => GatewayError::BadRequest(format!(
            "the request body is larger than max_rewrite_body_bytes ({max})"
        )),
        BudgetError::Exhausted { budget } | BudgetError::ShareExhausted { share: budget } => {
            GatewayError::Busy(format!(
                "svcgate holds {budget} bytes of bodies already (rewrite_memory_budget_bytes); retry shortly"
            ))
        }
        BudgetError::TimedOut(after) | BudgetError::Stalled(after) => GatewayError::BodyTimeout(after),
        BudgetError::Unreadable(detail) => {
            GatewayError::BadRequest(format!("the request body could not be read: {detail}"))
        }
    }
}

fn take_pair(pairs: &mut Vec<(String, String)>, name: &str) -> Option<String> {
    let position = pairs.iter().position(|(key, _)| key == name)?;
    let (_, value) = pairs.remove(position);
    pairs.retain(|(key, _)| key != name);
    Some(value)
}

fn bad_param(error: ParamError) -> GatewayError {
    GatewayError::BadRequest(error.to_string())
}

impl V3Request {
    /// A request given whole (`svcgate translate`): read as [`V3Request::read`] reads one that arrived with these
    /// query, content type and body bytes.
    pub fn given(
        query: &str,
        body: Option<(HeaderValue, Bytes)>,
        conversions: &[Conversion],
        read_body: bool,
    ) -> Result<Self, GatewayError> {
        let (query, mut renamed) = read_query(Some(query), conversions)?;
        let body = match body {
            None => V3Body::Empty,
            Some((_, bytes)) if bytes.is_empty() => V3Body::Empty,
            Some((content_type, bytes)) if !read_body || !is_readable(Some(&content_type)) => {
                V3Body::Raw(Some(content_type), bytes)
            }
            Some((content_type, bytes)) => parse_body(Some(content_type), bytes, conversions, &mut renamed)?,
        };
        Ok(V3Request { query, body, renamed })
    }

    /// Reads the parts of a request its rule needs: the body only when the rule reads it.
    ///
    /// A body announced as empty (`Content-Length: 0`) is no body: a rule's added parameters then make one. A
    /// body without a content type is read too when the rule needs it, so that an empty one counts as none. A
    /// body read already (`preread`, to find a token in it; `incoming` then streams the same bytes) is not read
    /// or counted in the budget again.
    #[allow(clippy::too_many_arguments)]
    pub async fn read(
        headers: &HeaderMap,
        query: Option<&str>,
        incoming: Body,
        preread: Option<Bytes>,
        rule: &Rule,
        budget: &BodyBudget,
        max_body: usize,
        context: &RequestContext,
    ) -> Result<Self, GatewayError> {
        let (conversions, read_body) = (rule.conversions.as_slice(), rule.reads_body());
        let (query, mut renamed) = read_query(query, conversions)?;
        let content_type = headers.get(http::header::CONTENT_TYPE).cloned();
        let announced_empty = headers
            .get(http::header::CONTENT_LENGTH)
            .is_some_and(|length| length.as_bytes() == b"0");
        let has_body = !announced_empty
            && (headers.contains_key(http::header::CONTENT_LENGTH)
                || headers.contains_key(http::header::TRANSFER_ENCODING));
        if !has_body {
            return Ok(V3Request {
                query,
                body: V3Body::Empty,
                renamed,
            });
        }
        if !read_body || !is_readable(content_type.as_ref()) {
            return Ok(V3Request {
                query,
                body: V3Body::Stream(content_type, incoming),
                renamed,
            });
        }
        let declared = headers
            .get(http::header::CONTENT_LENGTH)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.trim().parse::<u64>().ok());
        let bytes = match preread {
            Some(bytes) => bytes,
            None => {
                let (bytes, held) = budget
                    .read(incoming, declared, max_body)
                    .await
                    .map_err(body_error)?;
                context.hold(held);
                bytes
            }
        };
        let body = parse_body(content_type, bytes, conversions, &mut renamed)?;
        Ok(V3Request { query, body, renamed })
    }

    /// Whether the client sent parameter `name` (any value, empty included) in the query or a form or JSON body,
    /// as V3's `requires` checked; `None` when the body was not read (streamed, or not form or JSON).
    pub fn sent(&self, name: &str) -> Option<bool> {
        let in_query = self.query.iter().any(|(key, _)| key == name);
        match &self.body {
            V3Body::Json(object) => Some(in_query || object.contains_key(name)),
            V3Body::Form(pairs) => Some(in_query || pairs.iter().any(|(key, _)| key == name)),
            V3Body::Empty => Some(in_query),
            V3Body::Stream(..) | V3Body::Raw(..) => None,
        }
    }

    /// A parameter's value from the body, else the query.
    pub fn param(&self, name: &str) -> Option<&str> {
        let from_body = match &self.body {
            V3Body::Json(object) => object.get(name).and_then(|value| match value {
                Value::String(text) => Some(text.as_str()),
                _ => None,
            }),
            V3Body::Form(pairs) => pair_value(pairs, name),
            _ => None,
        };
        from_body.or_else(|| pair_value(&self.query, name))
    }

    /// A parameter's value as Rails' `present?` read it: a non-blank string, or a JSON number, `true`, or non-empty
    /// array or object (as JSON text); `None` when it was not sent (in a body read), or is blank, `null` or `false`.
    pub fn present_param(&self, name: &str) -> Option<String> {
        let text = |text: &str| (!text.trim().is_empty()).then(|| text.to_owned());
        let from_body = match &self.body {
            V3Body::Json(object) => match object.get(name) {
                Some(Value::String(value)) => text(value),
                Some(Value::Null | Value::Bool(false)) => None,
                Some(Value::Array(items)) if items.is_empty() => None,
                Some(Value::Object(fields)) if fields.is_empty() => None,
                Some(other) => Some(other.to_string()),
                None => None,
            },
            V3Body::Form(pairs) => pair_value(pairs, name).and_then(text),
            _ => None,
        };
        from_body.or_else(|| pair_value(&self.query, name).and_then(text))
    }

    /// Whether the body was left unread (streamed, or read but neither form nor JSON): its parameters are unknown.
    pub fn body_unread(&self) -> bool {
        matches!(self.body, V3Body::Stream(..) | V3Body::Raw(..))
    }

    /// A parameter's value as a number, from a JSON number too.
    pub fn number_param(&self, name: &str) -> Option<u64> {
        if let V3Body::Json(object) = &self.body {
            if let Some(number) = object.get(name).and_then(Value::as_u64) {
                return Some(number);
            }
        }
        self.param(name).and_then(|text| text.trim().parse().ok())
    }

    /// Removes a parameter from the body and the query, returning its value.
    pub fn take_param(&mut self, name: &str) -> Option<String> {
        let from_body = match &mut self.body {
            V3Body::Json(object) => object.remove(name).and_then(|value| match value {
                Value::String(text) => Some(text),
                Value::Null => None,
                other => Some(other.to_string()),
            }),
            V3Body::Form(pairs) => take_pair(pairs, name),
            _ => None,
        };
        let from_query = take_pair(&mut self.query, name);
        from_body.or(from_query)
    }

    /// Whether any parameter is left in the body or query.
    pub fn has_params(&self) -> bool {
        let body = match &self.body {
            V3Body::Json(object) => !object.is_empty(),
            V3Body::Form(pairs) => !pairs.is_empty(),
            V3Body::Empty => false,
            V3Body::Stream(..) | V3Body::Raw(..) => true,
        };
        body || !self.query.is_empty()
    }

    /// Leaves out parameters that have the given value (`state=all`).
    pub fn drop_if(&mut self, rules: &[(String, String)]) {
        for (name, unwanted) in rules {
            self.query
                .retain(|(key, value)| !(key == name && value == unwanted));
            match &mut self.body {
                V3Body::Json(object) => {
                    let matches = object.get(name).is_some_and(|value| match value {
                        Value::String(text) => text == unwanted,
                        Value::Bool(flag) => unwanted.as_str() == if *flag { "true" } else { "false" },
                        Value::Number(number) => unwanted.parse::<f64>().ok() == number.as_f64(),
                        _ => false,
                    });
                    if matches {
                        object.remove(name);
                    }
                }
                V3Body::Form(pairs) => pairs.retain(|(key, value)| !(key == name && value == unwanted)),
                _ => {}
            }
        }
    }

    /// Adds body parameters the client did not send (a body is made when there was none).
    pub fn add_body(&mut self, defaults: &[(String, Value)]) {
        if defaults.is_empty() {
            return;
        }
        if matches!(self.body, V3Body::Empty) {
            self.body = V3Body::Json(Map::new());
        }
        for (name, value) in defaults {
            match &mut self.body {
                V3Body::Json(object) => {
                    object.entry(name.clone()).or_insert_with(|| value.clone());
                }
                V3Body::Form(pairs) if !pairs.iter().any(|(key, _)| key == name) => {
                    let text = match value {
                        Value::String(text) => text.clone(),
                        other => other.to_string(),
                    };
                    pairs.push((name.clone(), text));
                }
                _ => {}
            }
        }
    }

    /// The body to send to the backend, with its content type.
    pub fn into_payload(self) -> Option<(HeaderValue, Body)> {
        match self.body {
            V3Body::Empty => None,
            V3Body::Stream(content_type, incoming) => Some((
                content_type.unwrap_or(HeaderValue::from_static("application/octet-stream")),
                incoming,
            )),
            V3Body::Json(object) => Some((
                HeaderValue::from_static("application/json"),
                body::full(serde_json::to_vec(&Value::Object(object)).unwrap_or_default()),
            )),
            V3Body::Form(pairs) => Some((
                HeaderValue::from_static("application/x-www-form-urlencoded"),
                body::full(encode_pairs(&pairs)),
            )),
            V3Body::Raw(content_type, bytes) => Some((
                content_type.unwrap_or(HeaderValue::from_static("application/octet-stream")),
                body::full(bytes),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexed_array_elements_become_plain_array_elements() {
        let query = unindex_query("scope[0]=pending&scope[1]=running&page=2").unwrap_or_default();
        let names: Vec<String> = parse_pairs(query.as_bytes())
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        assert_eq!(names, ["scope[]", "scope[]", "page"]);
        assert_eq!(unindex_query("scope[]=pending&a[b]=c&[0]=x"), None);
        assert_eq!(unindexed("iid[12]").as_deref(), Some("iid[]"));
    }
}
