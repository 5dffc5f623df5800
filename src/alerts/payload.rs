//! A request body as JSON: check 6 of the receiving order (contract `alerts.md` section 3: is the body JSON, nested
//! no deeper than the limit), and [`PayloadError`], every reason a body cannot be taken as alerts at all.
//!
//! What the JSON means is the formats' business: [`super::generic`] (generic and HTTP Endpoint payloads, with
//! [`super::mapping`]) and [`super::prometheus`] (the Alertmanager webhook), both into
//! [`super::normalized::NormalizedAlert`]s.

use serde_json::Value;

use crate::util::plain_value;

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
    /// A body that does not have its format's shape (422); the reason says what was expected.
    #[error("the payload is not a {format} body: {reason}")]
    NotTheFormat {
        /// The format's name.
        format: String,
        /// What is wrong, or what was expected.
        reason: String,
    },
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
            PayloadError::NotAnObject
            | PayloadError::NotAnEnvelope(_)
            | PayloadError::NotTheFormat { .. } => http::StatusCode::UNPROCESSABLE_ENTITY,
        }
    }

    /// The `error` code of the JSON answer: `invalid_json` or `invalid_payload`.
    pub fn code(&self) -> &'static str {
        match self {
            PayloadError::InvalidJson { .. } | PayloadError::TooDeep { .. } => "invalid_json",
            PayloadError::NotAnObject
            | PayloadError::NotAnEnvelope(_)
            | PayloadError::NotTheFormat { .. } => "invalid_payload",
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::alerts::test_support::*;
    use proptest::prelude::*;
    use serde_json::json;
    use serde_json::Value;

    #[test]
    fn parse_json_accepts_valid_json() {
        let cases: [(&str, Value); 5] = [
            ("{}", json!({})),
            (" {\"a\": [1, 2]}\n", json!({"a": [1, 2]})),
            ("[]", json!([])),
            ("\"text\"", json!("text")),
            ("null", json!(null)),
        ];
        for (text, want) in cases {
            assert_eq!(
                parse_json(text.as_bytes(), DEFAULT_MAX_DEPTH).unwrap(),
                (want, text),
                "for {text}"
            );
        }
    }

    #[test]
    fn parse_json_reports_line_and_column() {
        let cases: [(&[u8], usize, usize); 7] = [
            (b"{\n  \"a\": }", 2, 8),
            (b"", 1, 0),
            (b"{\"a\": 1} x", 1, 10),
            (b"{'a': 1}", 1, 2),
            (b"[1,\n2,\n", 3, 0),
            // Bytes that are not UTF-8, in a string and outside one.
            (b"{\"a\": \"\xff\"}", 1, 8),
            (b"{\"a\": 1}\n\xff", 2, 1),
        ];
        for (text, line, column) in cases {
            match parse_json(text, DEFAULT_MAX_DEPTH) {
                Err(PayloadError::InvalidJson {
                    line: l,
                    column: c,
                    message,
                }) => {
                    assert_eq!((l, c), (line, column), "for {text:?}: {message}");
                    assert!(!message.contains(" at line "), "position repeated in {message:?}");
                    assert!(!message.is_empty());
                }
                other => panic!("for {text:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn parse_json_enforces_the_depth_limit() {
        let cases: [(usize, usize, Result<(), PayloadError>); 7] = [
            (64, 64, Ok(())),
            (65, 64, Err(PayloadError::TooDeep { limit: 64 })),
            (3, 2, Err(PayloadError::TooDeep { limit: 2 })),
            (200, 64, Err(PayloadError::TooDeep { limit: 64 })),
            (127, 1_000, Ok(())),
            (
                128,
                1_000,
                Err(PayloadError::TooDeep {
                    limit: PARSER_MAX_DEPTH,
                }),
            ),
            (0, 0, Ok(())),
        ];
        for (depth, limit, want) in cases {
            let text = if depth == 0 {
                "1".to_owned()
            } else {
                nested_arrays(depth)
            };
            let got = parse_json(text.as_bytes(), limit).map(|_| ());
            assert_eq!(got, want, "depth {depth}, limit {limit}");
        }
        let object_depth = "{\"a\":{\"b\":[{}]}}";
        assert!(parse_json(object_depth.as_bytes(), 4).is_ok());
        assert_eq!(
            parse_json(object_depth.as_bytes(), 3),
            Err(PayloadError::TooDeep { limit: 3 })
        );
    }

    #[test]
    fn payload_errors_know_their_answer() {
        let cases = [
            (PayloadError::NotAnObject, 422, "invalid_payload"),
            (
                PayloadError::NotAnEnvelope("x".to_owned()),
                422,
                "invalid_payload",
            ),
            (
                PayloadError::InvalidJson {
                    line: 1,
                    column: 2,
                    message: "m".to_owned(),
                },
                400,
                "invalid_json",
            ),
            (PayloadError::TooDeep { limit: 64 }, 400, "invalid_json"),
            (
                PayloadError::NotTheFormat {
                    format: "grafana".to_owned(),
                    reason: "there is no alerts array".to_owned(),
                },
                422,
                "invalid_payload",
            ),
        ];
        for (error, status, code) in cases {
            assert_eq!(error.status().as_u16(), status, "{error}");
            assert_eq!(error.code(), code, "{error}");
        }
        let message = PayloadError::InvalidJson {
            line: 2,
            column: 8,
            message: "expected value".to_owned(),
        };
        assert_eq!(
            message.to_string(),
            "invalid JSON at line 2 column 8: expected value"
        );
    }

    proptest! {
    #[test]
    fn parse_json_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..512), limit in 0usize..200) {
        let _ = parse_json(&bytes, limit);
    }

    #[test]
    fn parse_json_accepts_exactly_what_serde_json_reads_from_bytes(
        bytes in prop_oneof![
            prop::collection::vec(any::<u8>(), 0..64),
            "[\\[\\]{}\":,0-9a-z \\\\\u{e9}\u{1f600}\n]{0,200}".prop_map(String::into_bytes),
            "[\\[\\]{}\":,0-9a-z]{0,100}".prop_map(|text| {
                let mut bytes = text.into_bytes();
                bytes.insert(bytes.len() / 2, 0xff);
                bytes
            }),
        ]
    ) {
        let from_bytes = serde_json::from_slice::<Value>(&bytes);
        match parse_json(&bytes, PARSER_MAX_DEPTH) {
            Ok((value, text)) => {
                prop_assert_eq!(Some(value), from_bytes.ok());
                prop_assert_eq!(text.as_bytes(), &bytes[..]);
            }
            Err(PayloadError::InvalidJson { line, column, .. }) => {
                let error = from_bytes.err();
                prop_assert_eq!(error.as_ref().map(|e| (e.line(), e.column())), Some((line, column)));
            }
            Err(other) => prop_assert!(false, "unexpected {:?}", other),
        }
    }

    #[test]
    fn parse_json_never_panics_on_json_like_bytes(text in "[\\[\\]{}\":,0-9a-z \\\\\n]{0,400}", limit in 0usize..200) {
        match parse_json(text.as_bytes(), limit) {
            Ok((value, _)) => prop_assert!(nesting_depth(&value) <= limit),
            Err(PayloadError::InvalidJson { line, .. }) => prop_assert!(line >= 1),
            Err(PayloadError::TooDeep { limit: l }) => prop_assert_eq!(l, limit.min(PARSER_MAX_DEPTH)),
            Err(other) => prop_assert!(false, "unexpected {:?}", other),
        }
    }

    #[test]
    fn parse_json_depth_limit_is_exact(depth in 1usize..140, limit in 1usize..140) {
        let text = nested_arrays(depth);
        let got = parse_json(text.as_bytes(), limit);
        prop_assert_eq!(got.is_ok(), depth <= limit.min(PARSER_MAX_DEPTH));
    }

    #[test]
    fn parse_json_reads_what_serde_json_writes(value in json_value()) {
        let text = serde_json::to_vec(&value).unwrap();
        prop_assert_eq!(parse_json(&text, DEFAULT_MAX_DEPTH).unwrap().0, value);
    }
    }
}
