//! The one body type that flows through the gateway, and small constructors for it.
//!
//! Streamed bodies (passthrough both ways) and bodies the gateway builds itself (reshaped V3 JSON, errors) share
//! [`Body`], so every handler returns `Response<Body>` and the server needs no per-route types.

use bytes::Bytes;
use http_body_util::{combinators::UnsyncBoxBody, BodyExt, Empty, Full};

/// Boxed error carried by bodies.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The body of every request forwarded and every response returned.
pub type Body = UnsyncBoxBody<Bytes, BoxError>;

/// A body holding `bytes` in one frame.
pub fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into())
        .map_err(|never| match never {})
        .boxed_unsync()
}

/// A body with no bytes.
pub fn empty() -> Body {
    Empty::new().map_err(|never| match never {}).boxed_unsync()
}

/// A streamed body from anything hyper can read (an incoming request or backend response).
pub fn stream<B>(body: B) -> Body
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    body.map_err(Into::into).boxed_unsync()
}

/// A JSON response with the given status.
pub fn json_response<T: serde::Serialize + ?Sized>(
    status: http::StatusCode,
    value: &T,
) -> http::Response<Body> {
    let bytes = serde_json::to_vec(value).unwrap_or_else(|_| b"null".to_vec());
    let mut response = http::Response::new(full(bytes));
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

/// The service's error shape, `{"message": "..."}`, with the given status.
pub fn error_response(status: http::StatusCode, message: &str) -> http::Response<Body> {
    json_response(status, &serde_json::json!({ "message": message }))
}

/// Reads a response the gateway built itself back as JSON (`None` when it is not JSON).
pub async fn read_json(response: http::Response<Body>) -> Option<serde_json::Value> {
    let bytes = response.into_body().collect().await.ok()?.to_bytes();
    serde_json::from_slice(&bytes).ok()
}
