//! A handler's successful answer: status, body and extra headers.

use std::borrow::Cow;

use http::StatusCode;
use serde_json::{json, Value};

/// The body of a reply.
#[derive(Debug)]
pub enum ReplyBody {
    /// No body (204, 304).
    Empty,
    /// A JSON document.
    Json(Value),
    /// Raw bytes with their content type.
    Bytes(&'static str, Vec<u8>),
}

/// A successful answer.
#[derive(Debug)]
pub struct Reply {
    /// The HTTP status.
    pub status: StatusCode,
    /// The body.
    pub body: ReplyBody,
    /// Extra response headers (pagination and the like).
    pub headers: Vec<(Cow<'static, str>, String)>,
}

impl Reply {
    /// 200 with a JSON body.
    pub fn ok(value: Value) -> Self {
        Self::json(StatusCode::OK, value)
    }

    /// 201 with a JSON body.
    pub fn created(value: Value) -> Self {
        Self::json(StatusCode::CREATED, value)
    }

    /// Any status with a JSON body.
    pub fn json(status: StatusCode, value: Value) -> Self {
        Reply {
            status,
            body: ReplyBody::Json(value),
            headers: Vec::new(),
        }
    }

    /// 204 with no body.
    pub fn no_content() -> Self {
        Self::empty(StatusCode::NO_CONTENT)
    }

    /// 304 with no body.
    pub fn not_modified() -> Self {
        Self::empty(StatusCode::NOT_MODIFIED)
    }

    /// 202 `{"message":"202 Accepted"}`.
    pub fn accepted() -> Self {
        Self::json(StatusCode::ACCEPTED, json!({"message": "202 Accepted"}))
    }

    /// 200 with raw bytes.
    pub fn bytes(content_type: &'static str, data: Vec<u8>) -> Self {
        Reply {
            status: StatusCode::OK,
            body: ReplyBody::Bytes(content_type, data),
            headers: Vec::new(),
        }
    }

    fn empty(status: StatusCode) -> Self {
        Reply {
            status,
            body: ReplyBody::Empty,
            headers: Vec::new(),
        }
    }
}
