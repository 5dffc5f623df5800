//! The streaming forwarder for everything the gateway neither rewrites nor answers itself.
//!
//! Method, path and query go to the backend byte for byte (percent-encoding preserved), headers less the
//! hop-by-hop ones plus the forwarding headers; both bodies are streamed frame by frame and never collected, so a
//! multi-gigabyte clone or download costs a few buffers of memory.

use http::{Request, Response, Version};
use hyper::body::Incoming;

use crate::body::{self, Body};
use crate::context::RequestContext;
use crate::error::GatewayError;
use crate::upstream::{add_forwarding_headers, strip_hop_by_hop, Upstream};

/// Forwards `request` unchanged to the backend and streams the answer back.
pub async fn forward(
    upstream: &Upstream,
    request: Request<Incoming>,
    context: &RequestContext,
) -> Result<Response<Body>, GatewayError> {
    forward_to(upstream, request, context, None).await
}

/// Forwards `request` to `target` (a path and query; the request's own when `None`), streaming both ways.
pub async fn forward_to(
    upstream: &Upstream,
    request: Request<Incoming>,
    context: &RequestContext,
    target: Option<&str>,
) -> Result<Response<Body>, GatewayError> {
    let (mut parts, incoming) = request.into_parts();
    let target = target.unwrap_or_else(|| parts.uri.path_and_query().map_or("/", |target| target.as_str()));
    let uri = upstream.uri(target)?;
    let original_host = original_host(&parts);
    strip_hop_by_hop(&mut parts.headers);
    add_forwarding_headers(
        &mut parts.headers,
        &context.client,
        original_host.as_deref(),
        &context.request_id,
    );
    parts.uri = uri;
    // The backend connection picks its own protocol; the client's HTTP/2 must not leak into an HTTP/1.1 pool.
    parts.version = Version::HTTP_11;
    context.count_backend_call();
    let response = upstream
        .send(Request::from_parts(parts, body::stream(incoming)))
        .await?;
    Ok(stream_back(response))
}

/// Turns a backend response into a client response with the body still streaming.
pub fn stream_back(response: Response<Incoming>) -> Response<Body> {
    let (mut parts, incoming) = response.into_parts();
    strip_hop_by_hop(&mut parts.headers);
    Response::from_parts(parts, body::stream(incoming))
}

/// The host the client addressed: the `Host` header, or the authority of an HTTP/2 request.
pub fn original_host(parts: &http::request::Parts) -> Option<String> {
    parts
        .headers
        .get(http::header::HOST)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned)
        .or_else(|| parts.uri.authority().map(|authority| authority.to_string()))
}
