//! A bare hyper 1 reverse proxy, the reference for svcgate's passthrough in `bench/run`.
//!
//! It owns nothing but what any hyper reverse proxy needs: one current-thread runtime, an accept loop, hyper's
//! HTTP/1 server and hyper-util's pooled client, built with the settings of svcgate's client for TLS backends
//! (`src/backend/upstream.rs`: `TokioExecutor`, a 90 s `pool_idle_timeout` on a `TokioTimer`, an `HttpConnector`
//! with `TCP_NODELAY` and a 5 s connect timeout; svcgate pools a cleartext backend's connections itself, in
//! `src/backend/pool.rs`, with the same idle and connect timeouts) and of svcgate's server (a `TokioTimer`, keep-alive, `TCP_NODELAY`
//! on accepted connections). Bodies stream both ways: the request's `Incoming` goes to the client as it is, and the
//! origin's `Incoming` comes back as it is. Without a flag: no rules, no logs, no metrics, no header hygiene; what
//! svcgate adds over this is what `bench/run`'s "svcgate / bare" rows measure.
//!
//! With `--forwarding-headers` it also does the header work any production reverse proxy does and svcgate does on
//! every passed-through request, the same operations in the same way: hop-by-hop headers removed both ways
//! (`strip_hop_by_hop` of `src/backend/upstream.rs`, copied), the client's `X-Request-Id` looked at, `Upgrade` looked
//! for, `Expect` removed, `X-Forwarded-For` (appended to a chain), `-Proto`, `-Host` and the request id (the
//! client's, or a fresh 16 hex digits) added to the request, and the same id to the answer. `bench/run` reports
//! svcgate against both: the bare proxy is issue #31's reference; the one with the header work separates what that
//! hygiene costs any proxy from what svcgate's own layers cost.
//!
//! `bare-proxy [--forwarding-headers] LISTEN_ADDR ORIGIN_HOST:PORT`, e.g. `bare-proxy 127.0.0.1:18098 127.0.0.1:18090`.

use std::convert::Infallible;
use std::error::Error;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use http_body_util::{Either, Empty};
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderMap, HeaderName, HeaderValue};
use hyper::http::uri::{Authority, PathAndQuery, Scheme};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode, Uri};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::net::TcpListener;

/// svcgate's default `backend_pool_idle_timeout`.
const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(90);
/// svcgate's default `backend_connect_timeout`.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long to pause after a failed accept (out of file descriptors and the like) instead of spinning.
const ACCEPT_PAUSE: Duration = Duration::from_millis(10);

/// The origin's answer as it streams in, or an empty 502 when it could not be reached.
type Reply = Response<Either<Incoming, Empty<Bytes>>>;

/// The pooled client and the origin every request goes to, shared by every connection.
struct Proxy {
    client: Client<HttpConnector, Incoming>,
    origin: Authority,
    /// The last request id's seed.
    request_ids: AtomicU64,
}

fn main() -> Result<(), Box<dyn Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let forwarding_headers = args.first().is_some_and(|arg| arg == "--forwarding-headers");
    if forwarding_headers {
        args.remove(0);
    }
    let [listen, origin] = args.as_slice() else {
        return Err("usage: bare-proxy [--forwarding-headers] LISTEN_ADDR ORIGIN_HOST:PORT".into());
    };
    let listen: SocketAddr = listen.parse()?;
    let origin: Authority = origin.parse()?;
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(serve(listen, origin, forwarding_headers))?;
    Ok(())
}

/// Accepts connections on `listen` for ever and forwards each request to `origin`.
async fn serve(listen: SocketAddr, origin: Authority, forwarding_headers: bool) -> std::io::Result<()> {
    let listener = TcpListener::bind(listen).await?;
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    connector.set_connect_timeout(Some(CONNECT_TIMEOUT));
    let client = Client::builder(TokioExecutor::new())
        .pool_idle_timeout(POOL_IDLE_TIMEOUT)
        .pool_timer(TokioTimer::new())
        .build(connector);
    let proxy = Arc::new(Proxy {
        client,
        origin,
        request_ids: AtomicU64::new(1),
    });
    let mut server = http1::Builder::new();
    server.timer(TokioTimer::new()).keep_alive(true);
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(error) => {
                eprintln!("bare-proxy: accept failed: {error}");
                tokio::time::sleep(ACCEPT_PAUSE).await;
                continue;
            }
        };
        // Nagle's delay would hold back small responses; failure to set it is harmless.
        drop(stream.set_nodelay(true));
        let proxy = Arc::clone(&proxy);
        let server = server.clone();
        // As svcgate does, the peer's address as a header value once per connection; none for the plain reference,
        // whose requests then clone nothing more than before.
        let peer = forwarding_headers.then(|| {
            HeaderValue::from_maybe_shared(Bytes::from(peer.ip().to_string()))
                .unwrap_or_else(|_| HeaderValue::from_static("unknown"))
        });
        tokio::spawn(async move {
            let service = service_fn(move |request| forward(Arc::clone(&proxy), peer.clone(), request));
            // A client that goes away mid-request is not the proxy's failure: nothing to report.
            drop(server.serve_connection(TokioIo::new(stream), service).await);
        });
    }
}

/// Sends `request` to the origin with the same path and query and hands back its answer, streaming; with `peer`
/// (`--forwarding-headers`), after svcgate's header work.
async fn forward(
    proxy: Arc<Proxy>,
    peer: Option<HeaderValue>,
    mut request: Request<Incoming>,
) -> Result<Reply, Infallible> {
    let path = request
        .uri()
        .path_and_query()
        .cloned()
        .unwrap_or_else(|| PathAndQuery::from_static("/"));
    let mut parts = hyper::http::uri::Parts::default();
    parts.scheme = Some(Scheme::HTTP);
    parts.authority = Some(proxy.origin.clone());
    parts.path_and_query = Some(path);
    match Uri::from_parts(parts) {
        Ok(uri) => *request.uri_mut() = uri,
        Err(_) => return Ok(status(StatusCode::BAD_REQUEST)),
    }
    let request_id = peer.map(|peer| {
        let headers = request.headers_mut();
        let request_id = headers
            .get(X_REQUEST_ID)
            .filter(|value| value.to_str().is_ok_and(acceptable_request_id))
            .cloned()
            .unwrap_or_else(|| fresh_request_id(&proxy.request_ids));
        // svcgate looks for an upgrade on every request (`Upgrade` first, rare); the reference looks too, and, as
        // without the flag, does not tunnel one.
        std::hint::black_box(headers.get(hyper::header::UPGRADE));
        strip_hop_by_hop(headers);
        // svcgate answers `Expect` itself.
        headers.remove(hyper::header::EXPECT);
        add_forwarding_headers(headers, &peer, request_id.clone());
        request_id
    });
    match proxy.client.request(request).await {
        Ok(mut response) => {
            if let Some(request_id) = request_id {
                strip_hop_by_hop(response.headers_mut());
                response.headers_mut().insert(X_REQUEST_ID, request_id);
            }
            Ok(response.map(Either::Left))
        }
        Err(_) => Ok(status(StatusCode::BAD_GATEWAY)),
    }
}

const X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");
const X_FORWARDED_PROTO: HeaderName = HeaderName::from_static("x-forwarded-proto");
const X_FORWARDED_HOST: HeaderName = HeaderName::from_static("x-forwarded-host");
const X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Hop-by-hop headers (RFC 9110 §7.6.1), as svcgate's list.
const HOP_BY_HOP: [HeaderName; 9] = [
    hyper::header::CONNECTION,
    HeaderName::from_static("keep-alive"),
    HeaderName::from_static("proxy-connection"),
    hyper::header::PROXY_AUTHENTICATE,
    hyper::header::PROXY_AUTHORIZATION,
    hyper::header::TE,
    hyper::header::TRAILER,
    hyper::header::UPGRADE,
    hyper::header::TRANSFER_ENCODING,
];

/// A fresh request id, 16 lowercase hex digits, as svcgate's own (a mixed counter instead of its random number).
fn fresh_request_id(seed: &AtomicU64) -> HeaderValue {
    let mut value = seed
        .fetch_add(1, Ordering::Relaxed)
        .wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut digits = [0u8; 16];
    for digit in digits.iter_mut().rev() {
        *digit = b"0123456789abcdef"[(value & 0xf) as usize];
        value >>= 4;
    }
    HeaderValue::from_maybe_shared(Bytes::copy_from_slice(&digits))
        .unwrap_or_else(|_| HeaderValue::from_static("0000000000000000"))
}

/// svcgate's `acceptable_request_id` (`src/telemetry/mod.rs`): a client's id it passes on and logs.
fn acceptable_request_id(value: &str) -> bool {
    !value.is_empty()
        && value.len() <= 128
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b))
}

/// svcgate's `add_forwarding_headers` (`src/backend/upstream.rs`), with its `original_host`: the forwarding headers
/// and the request id in.
fn add_forwarding_headers(headers: &mut HeaderMap, peer: &HeaderValue, request_id: HeaderValue) {
    let host = headers
        .get(hyper::header::HOST)
        .filter(|value| value.to_str().is_ok())
        .cloned();
    let chain = match headers
        .get(&X_FORWARDED_FOR)
        .and_then(|value| value.to_str().ok())
    {
        Some(existing) if !existing.trim().is_empty() => peer
            .to_str()
            .ok()
            .and_then(|peer| HeaderValue::from_str(&format!("{existing}, {peer}")).ok()),
        _ => Some(peer.clone()),
    };
    if let Some(value) = chain {
        headers.insert(X_FORWARDED_FOR, value);
    }
    headers.insert(X_FORWARDED_PROTO, HeaderValue::from_static("http"));
    if let Some(host) = host {
        headers.insert(X_FORWARDED_HOST, host);
    }
    headers.insert(X_REQUEST_ID, request_id);
}

/// svcgate's `strip_hop_by_hop` (`src/backend/upstream.rs`), copied: removes hop-by-hop headers, including any that
/// `Connection` names.
fn strip_hop_by_hop(headers: &mut HeaderMap) {
    let mut present = 0u16;
    for name in headers.keys() {
        if let Some(index) = HOP_BY_HOP.iter().position(|hop| hop == name) {
            present |= 1 << index;
        }
    }
    if present == 0 {
        return;
    }
    let mut named: Vec<HeaderName> = Vec::new();
    for token in headers
        .get_all(hyper::header::CONNECTION)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(str::trim)
    {
        let fixed = HOP_BY_HOP
            .iter()
            .any(|hop| hop.as_str().eq_ignore_ascii_case(token));
        if !fixed && !token.is_empty() && headers.contains_key(token) {
            if let Ok(name) = HeaderName::from_bytes(token.as_bytes()) {
                named.push(name);
            }
        }
    }
    for name in named {
        headers.remove(name);
    }
    for (index, hop) in HOP_BY_HOP.iter().enumerate() {
        if present & (1 << index) != 0 {
            headers.remove(hop);
        }
    }
}

/// An empty answer with `code`.
fn status(code: StatusCode) -> Reply {
    let mut response = Response::new(Either::Right(Empty::new()));
    *response.status_mut() = code;
    response
}
