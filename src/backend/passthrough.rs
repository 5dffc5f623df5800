//! The streaming forwarder for everything the gateway neither rewrites nor answers itself.
//!
//! Method, path and query go to the backend byte for byte (percent-encoding preserved), headers less the
//! hop-by-hop ones plus the forwarding headers; both bodies are streamed frame by frame and never collected, so a
//! multi-gigabyte clone or download costs a few buffers of memory.
//!
//! An HTTP/1.1 protocol upgrade (`Connection: upgrade`, `Upgrade: websocket`: the web interface's live updates
//! and terminal) keeps those two headers; when the backend switches protocols, so does the client's connection,
//! and [`tunnel`] carries the bytes from then on. Upgrades over HTTP/2 (extended CONNECT) are not offered:
//! svcgate's HTTP/2 server does not enable them. A `CONNECT` of any other kind is refused with a 405: svcgate is
//! no forward proxy.

use http::header::{HeaderValue, CONNECTION, EXPECT, UPGRADE};
use http::{Method, Request, Response, StatusCode, Version};
use hyper::body::Incoming;
use tracing::Instrument;

use crate::backend::context::RequestContext;
use crate::backend::tunnel::{self, TunnelEnd};
use crate::backend::upstream::{add_forwarding_headers, strip_hop_by_hop, Upstream};
use crate::http::body::{self, Body};
use crate::http::error::GatewayError;

/// The `Allow` header of a refused `CONNECT`: the methods the backend's API and web interface use (any method but
/// `CONNECT` is passed on; these are the ones a client of the service needs).
const FORWARDED_METHODS: &str = "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS";

/// Forwards `request` unchanged to the backend and streams the answer back; a protocol upgrade the backend
/// accepts becomes a tunnel between the client and the backend.
pub async fn forward(
    upstream: &Upstream,
    request: Request<Incoming>,
    context: &RequestContext,
) -> Result<Response<Body>, GatewayError> {
    match upgrade_protocol(&request) {
        Some(protocol) => forward_upgrade(upstream, request, context, protocol).await,
        None => forward_to(upstream, request, context, None).await,
    }
}

/// Forwards `request` to `target` (a path and query; the request's own when `None`), streaming both ways.
pub async fn forward_to<B>(
    upstream: &Upstream,
    request: Request<B>,
    context: &RequestContext,
    target: Option<&str>,
) -> Result<Response<Body>, GatewayError>
where
    B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<body::BoxError>,
{
    let (mut parts, incoming) = request.into_parts();
    let client_host = prepare(upstream, &mut parts, context, target)?;
    context.count_backend_call();
    let response = upstream
        .forward(
            Request::from_parts(parts, body::stream(incoming)),
            client_host.as_ref(),
        )
        .await?;
    Ok(stream_back(response))
}

/// Readies a client's request head for the backend: its target, less the hop-by-hop headers and `Expect`, plus
/// the forwarding headers. Answers the host the client addressed; refuses `CONNECT`.
fn prepare(
    upstream: &Upstream,
    parts: &mut http::request::Parts,
    context: &RequestContext,
    target: Option<&str>,
) -> Result<Option<HeaderValue>, GatewayError> {
    if parts.method == Method::CONNECT {
        // svcgate stands in for one backend and opens no tunnels to elsewhere: passed on, the request would reach
        // the backend as `CONNECT /`, and a 2xx to it would turn the client's connection into a tunnel.
        return Err(GatewayError::MethodNotAllowed(FORWARDED_METHODS));
    }
    let uri = match (target, parts.uri.path_and_query()) {
        (Some(target), _) => upstream.uri(target)?,
        (None, Some(own)) => upstream.uri_for_target(own)?,
        (None, None) => upstream.uri("/")?,
    };
    let original_host = original_host(parts);
    strip_hop_by_hop(&mut parts.headers);
    // `Expect: 100-continue` (curl sends it before a large body, git before a large push to a server that offers
    // Negotiate authentication) is answered here, not forwarded. hyper sends the client its `100 Continue` when
    // the body is first read, which is once a backend connection is ready and the request head has been written
    // to it: a waiting client learns of an unreachable backend (502) before it sends its body, and otherwise
    // starts sending as soon as the backend can take it. hyper's client never waits for a backend's own
    // `100 Continue`, so forwarding the expectation would only make the backend send an interim answer that
    // nobody reads (or a 417 from a server that takes no expectations).
    parts.headers.remove(EXPECT);
    add_forwarding_headers(
        &mut parts.headers,
        &context.client,
        original_host.as_ref(),
        &context.request_id,
    );
    parts.uri = uri;
    // The backend connection picks its own protocol; the client's HTTP/2 must not leak into an HTTP/1.1 pool.
    parts.version = Version::HTTP_11;
    Ok(original_host)
}

/// The protocol an HTTP/1.1 request asks to switch to: its `Upgrade` header, when `Connection` names `upgrade`.
fn upgrade_protocol(request: &Request<Incoming>) -> Option<HeaderValue> {
    // `Upgrade` first: it is rare, so most requests cost one lookup here.
    let protocol = request.headers().get(UPGRADE)?;
    if request.version() != Version::HTTP_11 {
        return None;
    }
    request
        .headers()
        .get_all(CONNECTION)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|token| token.trim().eq_ignore_ascii_case("upgrade"))
        .then(|| protocol.clone())
}

/// Forwards an upgrade request with its `Connection: upgrade` and `Upgrade`. A 101 from the backend is passed on
/// with the backend's headers (`Upgrade`, `Sec-WebSocket-Accept`, …) and both connections are joined by a
/// tunnel; any other answer is streamed back like an ordinary one.
async fn forward_upgrade(
    upstream: &Upstream,
    mut request: Request<Incoming>,
    context: &RequestContext,
    protocol: HeaderValue,
) -> Result<Response<Body>, GatewayError> {
    let client_upgrade = hyper::upgrade::on(&mut request);
    let (mut parts, incoming) = request.into_parts();
    let client_host = prepare(upstream, &mut parts, context, None)?;
    parts
        .headers
        .insert(CONNECTION, HeaderValue::from_static("upgrade"));
    parts.headers.insert(UPGRADE, protocol);
    context.count_backend_call();
    let mut response = upstream
        .forward_upgrade(
            Request::from_parts(parts, body::stream(incoming)),
            client_host.as_ref(),
        )
        .await?;
    if response.status() != StatusCode::SWITCHING_PROTOCOLS {
        return Ok(stream_back(response));
    }
    let backend_upgrade = hyper::upgrade::on(&mut response);
    let (mut parts, _) = response.into_parts();
    let switched_to = parts.headers.get(UPGRADE).cloned();
    strip_hop_by_hop(&mut parts.headers);
    parts
        .headers
        .insert(CONNECTION, HeaderValue::from_static("upgrade"));
    if let Some(switched_to) = switched_to {
        parts.headers.insert(UPGRADE, switched_to);
    }
    let idle = upstream.upgrade_idle_timeout();
    // The tunnel outlives this request: it runs on its own task, and ends with its log line.
    tokio::spawn(
        async move {
            match tunnel::run(client_upgrade, backend_upgrade, idle).await {
                Ok(TunnelEnd::Closed {
                    from_client,
                    from_backend,
                }) => tracing::debug!(from_client, from_backend, "upgraded connection closed"),
                Ok(TunnelEnd::Idle) => tracing::debug!(?idle, "upgraded connection idle; closed"),
                Err(error) => tracing::debug!(%error, "upgraded connection failed"),
            }
        }
        .instrument(tracing::debug_span!("upgraded", request_id = %context.request_id)),
    );
    Ok(Response::from_parts(parts, body::empty()))
}

/// Turns a backend response into a client response with the body still streaming.
pub fn stream_back<B>(response: Response<B>) -> Response<Body>
where
    B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<body::BoxError>,
{
    let (mut parts, incoming) = response.into_parts();
    strip_hop_by_hop(&mut parts.headers);
    Response::from_parts(parts, body::stream(incoming))
}

/// The host the client addressed: the `Host` header (shared, not copied), or the authority of an HTTP/2 request.
/// Sharing the header and the request's parsed target instead of copying both: bench row 1, 1 KB and 50 conn: svcgate / bare 0.75 → 0.84 × (100 KB: 0.91 → 0.93 ×) with the other changes of its step (bench/RESULTS.md, 2026-11-26).
pub fn original_host(parts: &http::request::Parts) -> Option<HeaderValue> {
    parts
        .headers
        .get(http::header::HOST)
        .filter(|value| value.to_str().is_ok())
        .cloned()
        .or_else(|| {
            parts
                .uri
                .authority()
                .and_then(|authority| HeaderValue::from_str(authority.as_str()).ok())
        })
}
