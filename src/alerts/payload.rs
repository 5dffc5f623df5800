//! A request body as JSON: check 6 of the receiving order (contract `alerts.md` section 3: is the body JSON, nested
//! no deeper than the limit), and [`PayloadError`], every reason a body cannot be taken as alerts at all.
//!
//! What the JSON means is the formats' business: [`super::generic`] (generic and HTTP Endpoint payloads, with
//! [`super::mapping`]) and [`super::prometheus`] (the Alertmanager webhook), both into
//! [`super::normalized::NormalizedAlert`]s.

use serde_json::Value;

use crate::plain_value;

/// Default nesting limit of a request body (section 3, check 6).
pub const DEFAULT_MAX_DEPTH: usize = 64;
/// Deepest nesting `serde_json` itself parses; a larger configured limit is capped to this.
pub const PARSER_MAX_DEPTH: usize = 127;

/// Why a body cannot be taken as alerts at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PayloadError {
    /// A generic or HTTP Endpoint body that is valid JSON but not an object (422).
    #[error("the payload must be a JSON object")]
    NotAnObject,
    /// A Prometheus body that is not an Alertmanager webhook envelope (422); the text says what is wrong.
    #[error("the payload is not an Alertmanager webhook: {0}")]
    NotAnEnvelope(String),
    /// The body is not JSON (400), with the parser's position (1-based line and column).
    #[error("invalid JSON at line {line} column {column}: {message}")]
    InvalidJson {
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
        /// The parser's message, without its position.
        message: String,
    },
    /// The body nests arrays and objects deeper than the limit (400).
    #[error("the JSON nests arrays and objects more than {limit} levels deep")]
    TooDeep {
        /// The limit that applied.
        limit: usize,
    },
}

impl PayloadError {
    /// The status this error is answered with: 400 for a body that is not usable JSON, 422 for a wrong shape.
    pub fn status(&self) -> http::StatusCode {
        match self {
            PayloadError::InvalidJson { .. } | PayloadError::TooDeep { .. } => http::StatusCode::BAD_REQUEST,
            PayloadError::NotAnObject | PayloadError::NotAnEnvelope(_) => {
                http::StatusCode::UNPROCESSABLE_ENTITY
            }
        }
    }

    /// The `error` code of the JSON answer: `invalid_json` or `invalid_payload`.
    pub fn code(&self) -> &'static str {
        match self {
            PayloadError::InvalidJson { .. } | PayloadError::TooDeep { .. } => "invalid_json",
            PayloadError::NotAnObject | PayloadError::NotAnEnvelope(_) => "invalid_payload",
        }
    }
}

/// Parses a request body as JSON, refusing it when arrays and objects nest more than `max_depth` levels
/// (`{"a":[1]}` nests two). `serde_json` itself stops at [`PARSER_MAX_DEPTH`], so a larger limit is capped to it.
/// Answers the value and the body as text: JSON is UTF-8 throughout, so a body that parses is text.
pub fn parse_json(bytes: &[u8], max_depth: usize) -> Result<(Value, &str), PayloadError> {
    let limit = max_depth.min(PARSER_MAX_DEPTH);
    // One UTF-8 check of the whole body, then `from_str`, which need not check each string again.
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        // Not UTF-8: `from_slice` tells where, as a JSON error with its line and column.
        Err(not_utf8) => {
            return Err(match plain_value::from_slice(bytes) {
                Err(error) => json_error(&error, limit),
                // serde_json refuses bytes that are not UTF-8 inside and outside strings; should it ever read
                // them, the body is refused all the same, at the first such byte.
                Ok(_) => {
                    let valid = &bytes[..not_utf8.valid_up_to()];
                    let line_start = valid
                        .iter()
                        .rposition(|&byte| byte == b'\n')
                        .map_or(0, |at| at + 1);
                    PayloadError::InvalidJson {
                        line: 1 + valid.iter().filter(|&&byte| byte == b'\n').count(),
                        column: valid.len() - line_start + 1,
                        message: "invalid UTF-8".to_owned(),
                    }
                }
            });
        }
    };
    let value = plain_value::from_str(text).map_err(|e| json_error(&e, limit))?;
    if nesting_depth(&value) > limit {
        return Err(PayloadError::TooDeep { limit });
    }
    Ok((value, text))
}

/// A serde_json error as the payload error it means (`TooDeep` for its recursion limit).
pub(super) fn json_error(error: &serde_json::Error, limit: usize) -> PayloadError {
    let full = error.to_string();
    if full.starts_with("recursion limit exceeded") {
        return PayloadError::TooDeep { limit };
    }
    let position = format!(" at line {} column {}", error.line(), error.column());
    let message = full.strip_suffix(&position).unwrap_or(&full).to_owned();
    PayloadError::InvalidJson {
        line: error.line(),
        column: error.column(),
        message,
    }
}

/// How many arrays and objects nest at the deepest point. Payload values are read by [`plain_value`], so they nest
/// at most 128 levels (serde_json's recursion limit, which its own `Value` reader lets a `RawValue` token escape)
/// and the recursion is bounded.
pub(super) fn nesting_depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(nesting_depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(nesting_depth).max().unwrap_or(0),
        _ => 0,
    }
}
