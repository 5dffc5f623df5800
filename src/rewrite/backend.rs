//! Calls the gateway makes to the backend on a V3 client's behalf: same credentials, same request id, counted,
//! and with bodies read under the configured size cap.

use crate::backend::pool::BackendBody;
use bytes::Bytes;
use http::header::{HeaderMap, HeaderValue};
use http::{Method, Request, Response, StatusCode, Version};
use serde_json::Value;

use crate::backend::context::RequestContext;
use crate::backend::upstream::Upstream;
use crate::http::body::{self, Body};
use crate::http::error::GatewayError;

/// A decoded JSON answer from the backend.
#[derive(Debug)]
pub struct JsonAnswer {
    /// The status.
    pub status: StatusCode,
    /// The headers.
    pub headers: HeaderMap,
    /// The parsed body (`Null` when empty).
    pub body: Value,
}

/// Makes backend calls for one client request.
pub struct Caller<'a> {
    /// The shared backend client.
    pub upstream: &'a Upstream,
    /// Headers every call carries: the client's credentials and the forwarding headers.
    pub headers: HeaderMap,
    /// The request the calls are made for.
    pub context: &'a RequestContext,
    /// The largest body read into memory.
    pub max_body: usize,
    /// The most backend calls the client request may cause (`max_backend_calls_per_request`).
    pub max_calls: u32,
}

impl Caller<'_> {
    /// Sends one call with an optional body and its content type.
    pub async fn send(
        &self,
        method: Method,
        path_and_query: &str,
        payload: Option<(HeaderValue, Body)>,
    ) -> Result<Response<BackendBody>, GatewayError> {
        let mut request = Request::new(body::empty());
        *request.method_mut() = method;
        *request.uri_mut() = self.upstream.uri(path_and_query)?;
        *request.version_mut() = Version::HTTP_11;
        *request.headers_mut() = self.headers.clone();
        if let Some((content_type, payload)) = payload {
            request
                .headers_mut()
                .insert(http::header::CONTENT_TYPE, content_type);
            *request.body_mut() = payload;
        }
        if self.context.count_backend_call() > self.max_calls {
            return Err(GatewayError::TooManyBackendCalls {
                limit: self.max_calls,
                param: None,
            });
        }
        self.upstream.send(request).await
    }

    /// Reads a response body whole, refusing one larger than the cap or slower than the backend timeout (a
    /// backend that sends its head and stalls does not hold the client).
    pub async fn read_bytes(
        &self,
        response: Response<BackendBody>,
    ) -> Result<(http::response::Parts, Bytes), GatewayError> {
        let (parts, incoming) = response.into_parts();
        let (bytes, held) = self
            .upstream
            .read_body(incoming, self.max_body)
            .await
            .map_err(|error| match error {
                GatewayError::BadBackendAnswer(detail) => {
                    GatewayError::BadBackendAnswer(format!("{detail} (max_rewrite_body_bytes)"))
                }
                other => other,
            })?;
        self.context.hold(held);
        Ok((parts, bytes))
    }

    /// Reads a response as JSON.
    pub async fn read_json(&self, response: Response<BackendBody>) -> Result<JsonAnswer, GatewayError> {
        let (parts, bytes) = self.read_bytes(response).await?;
        let body = parse_json(&bytes)?;
        Ok(JsonAnswer {
            status: parts.status,
            headers: parts.headers,
            body,
        })
    }

    /// `GET` a path and read the JSON answer; a non-2xx answer is relayed to the client as an error.
    pub async fn get_json(&self, path_and_query: &str) -> Result<JsonAnswer, GatewayError> {
        let response = self.send(Method::GET, path_and_query, None).await?;
        if !response.status().is_success() {
            let status = response.status();
            let (_, bytes) = self.read_bytes(response).await?;
            return Err(GatewayError::Relay { status, body: bytes });
        }
        self.read_json(response).await
    }

    /// `POST` a JSON body to a path and read the answer whole, whatever its status (the caller judges it).
    pub async fn post_json(
        &self,
        path: &str,
        payload: &Value,
    ) -> Result<(http::response::Parts, Bytes), GatewayError> {
        let text = serde_json::to_vec(payload)
            .map_err(|error| GatewayError::BadBackendAnswer(format!("JSON: {error}")))?;
        let response = self
            .send(
                Method::POST,
                path,
                Some((HeaderValue::from_static("application/json"), body::full(text))),
            )
            .await?;
        self.read_bytes(response).await
    }
}

/// A backend answer's body as JSON; an empty body is `null`.
pub fn parse_json(bytes: &[u8]) -> Result<Value, GatewayError> {
    if bytes.is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_slice(bytes).map_err(|error| GatewayError::BadBackendAnswer(format!("JSON: {error}")))
}

/// A header's value as a number.
pub fn header_number(headers: &HeaderMap, name: &str) -> Option<u64> {
    headers.get(name)?.to_str().ok()?.trim().parse().ok()
}
