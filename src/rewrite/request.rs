//! The V3 request in hand: its query pairs and its body, read and converted only when a rule needs it.
//!
//! Bodies of rules that rename or convert parameters (or whose procedure reads one) are read under the size cap
//! and rewritten as JSON or form pairs; every other body — multipart uploads included — is streamed on unread.

use bytes::Bytes;
use http::header::{HeaderMap, HeaderValue};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use serde_json::{Map, Value};

use super::params::{convert_json, convert_pairs, encode_pairs, pair_value, parse_pairs, ParamError};
use super::rule::Conversion;
use crate::body::{self, Body};
use crate::error::GatewayError;

/// The body of a V3 request, as far as the gateway has read it.
pub enum V3Body {
    /// No body.
    Empty,
    /// Not read: streamed to the backend as it arrives.
    Stream(Option<HeaderValue>, Incoming),
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
    /// Reads the parts of a request a rule needs; `read_body` says whether its body must be read.
    pub async fn read(
        headers: &HeaderMap,
        query: Option<&str>,
        incoming: Incoming,
        conversions: &[Conversion],
        read_body: bool,
        max_body: usize,
    ) -> Result<Self, GatewayError> {
        let query =
            convert_pairs(parse_pairs(query.unwrap_or("").as_bytes()), conversions).map_err(bad_param)?;
        let content_type = headers.get(http::header::CONTENT_TYPE).cloned();
        let has_body = headers.contains_key(http::header::CONTENT_LENGTH)
            || headers.contains_key(http::header::TRANSFER_ENCODING);
        let readable = is_json(content_type.as_ref()) || is_form(content_type.as_ref());
        if !has_body {
            return Ok(V3Request {
                query,
                body: V3Body::Empty,
            });
        }
        if !read_body || !readable {
            return Ok(V3Request {
                query,
                body: V3Body::Stream(content_type, incoming),
            });
        }
        let bytes = Limited::new(incoming, max_body)
            .collect()
            .await
            .map_err(|error| {
                GatewayError::BadRequest(format!(
                    "request body unreadable or larger than max_rewrite_body_bytes ({max_body}): {error}"
                ))
            })?
            .to_bytes();
        let body = if is_form(content_type.as_ref()) {
            V3Body::Form(convert_pairs(parse_pairs(&bytes), conversions).map_err(bad_param)?)
        } else if bytes.iter().all(u8::is_ascii_whitespace) {
            V3Body::Empty
        } else {
            match crate::plain_value::from_slice(&bytes) {
                Ok(Value::Object(object)) => {
                    V3Body::Json(convert_json(object, conversions).map_err(bad_param)?)
                }
                Ok(_) => V3Body::Raw(content_type, bytes),
                Err(error) => return Err(GatewayError::BadRequest(format!("invalid JSON body: {error}"))),
            }
        };
        Ok(V3Request { query, body })
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
                body::stream(incoming),
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
