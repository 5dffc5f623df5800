//! The pooled client to the backend: TLS, timeouts, header hygiene and the forwarding headers.
//!
//! One [`Upstream`] is shared by every request. It keeps a keep-alive pool (never a connection per request),
//! speaks `http://` or `https://` (rustls with the system's roots plus an optional CA bundle and client
//! certificate), and maps transport failures to the gateway's errors: unreachable → 502, slow → 504.
//!
//! Requests forwarded for a client may be addressed by the client's own `Host` (`preserve_host`), and protocol
//! upgrades (WebSocket) always go over HTTP/1.1, the only version whose connection can be upgraded.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use http::header::{HeaderMap, HeaderName, HeaderValue};
use http::{Request, Response, Uri};
use hyper::body::Incoming;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use prometheus_client::metrics::histogram::Histogram;

use crate::backend::pool::{BackendBody, BackendPool, PoolError};
use crate::http::body::Body;
use crate::http::budget::{BodyBudget, BudgetError, Held};
use crate::http::error::GatewayError;
use crate::telemetry::Metrics;
use crate::util::tls::{read_certs, read_key, PemError};

/// How the gateway reaches its backend.
#[derive(Debug, Clone)]
pub struct BackendConfig {
    /// Base URL (`http://` or `https://`), without a trailing slash.
    pub url: Option<http::Uri>,
    /// Extra CA bundle to trust besides the system roots.
    pub ca_bundle: Option<PathBuf>,
    /// Client certificate and key presented to the backend.
    pub client_identity: Option<(PathBuf, PathBuf)>,
    /// Connect timeout.
    pub connect_timeout: Duration,
    /// Time to the response head.
    pub timeout: Duration,
    /// Idle time before a pooled connection is closed.
    pub pool_idle_timeout: Duration,
    /// Whether forwarded requests carry the client's `Host` rather than the backend's authority.
    pub preserve_host: bool,
    /// How long an upgraded connection may carry no bytes in either direction before it is closed.
    pub upgrade_idle_timeout: Duration,
    /// Bytes of V3 request bodies and backend answers held in memory at once, all requests together.
    pub memory_budget_bytes: usize,
}

/// Failure to set up the backend client (bad TLS material).
#[derive(Debug, thiserror::Error)]
pub enum UpstreamSetupError {
    /// A PEM file could not be read or holds nothing usable.
    #[error(transparent)]
    Pem(#[from] PemError),
    /// rustls refused the material.
    #[error("backend TLS: {0}")]
    Tls(#[from] rustls::Error),
    /// The backend's host cannot be sent as a `Host` header.
    #[error("backend host {0:?} is not a valid Host header")]
    BadHost(String),
}

type Connector = hyper_rustls::HttpsConnector<HttpConnector>;

/// The authority of every request to a cleartext (`http://`) backend inside svcgate. It is never sent: HTTP/1
/// requests go out in origin form, with the backend's own `Host`. hyper-util's pool keys connections by scheme and
/// authority, and hashes the authority one byte at a time (SipHash) three times per request: with the backend's
/// real `host:port` that cost about 3 k instructions, 6 % of a 1 KB passthrough. There is one backend, so requests
/// carry this one-letter name and [`BackendConnector`] dials the configured backend whatever a request's URI says.
/// An `https://` backend may speak HTTP/2 (ALPN), whose `:authority` is taken from the URI: its requests keep the
/// real authority.
const POOL_AUTHORITY: http::uri::Authority = http::uri::Authority::from_static("b");

/// Connects to the configured backend (TCP, then TLS for `https://` with the backend's server name), whatever URI
/// the pool asks for: see [`POOL_AUTHORITY`].
#[derive(Clone)]
struct BackendConnector {
    inner: Connector,
    backend: Uri,
}

impl tower_service::Service<Uri> for BackendConnector {
    type Response = <Connector as tower_service::Service<Uri>>::Response;
    type Error = <Connector as tower_service::Service<Uri>>::Error;
    type Future = <Connector as tower_service::Service<Uri>>::Future;

    fn poll_ready(
        &mut self,
        context: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(context)
    }

    fn call(&mut self, _pool_uri: Uri) -> Self::Future {
        self.inner.call(self.backend.clone())
    }
}

/// The shared backend client.
pub struct Upstream {
    /// The pool for a cleartext backend, which every request but a protocol upgrade goes through; `None` for TLS.
    pool: Option<Arc<BackendPool>>,
    client: Client<BackendConnector, Body>,
    /// A client that speaks HTTP/1.1 only: the same as `client` for a cleartext backend (which is never offered
    /// HTTP/2), its own pool for TLS, where ALPN could otherwise choose HTTP/2. Protocol upgrades need HTTP/1.1;
    /// requests with the client's `Host` use it too, so that HTTP/2's `:authority` (taken from the URI, which is
    /// also the pool's key) never has to carry a name each client chooses.
    http1: Client<BackendConnector, Body>,
    scheme: http::uri::Scheme,
    authority: http::uri::Authority,
    /// The authority of request URIs: [`POOL_AUTHORITY`] for a cleartext backend, the real one for TLS.
    request_authority: http::uri::Authority,
    /// The `Host` svcgate sets for a cleartext backend. For TLS, hyper-util writes it from the URI for HTTP/1, and
    /// HTTP/2 carries `:authority` alone (a second, different `Host` is refused by some servers).
    host: Option<HeaderValue>,
    path_prefix: String,
    timeout: Duration,
    /// Bytes of bodies held whole, all requests together.
    body_budget: BodyBudget,
    preserve_host: bool,
    upgrade_idle_timeout: Duration,
    metrics: Arc<Metrics>,
}

impl Upstream {
    /// Builds the client for `base` (the backend's base URL) with the configured TLS and timeouts.
    pub fn new(
        config: &BackendConfig,
        base: &Uri,
        metrics: Arc<Metrics>,
    ) -> Result<Self, UpstreamSetupError> {
        let tls = client_tls(config, base.scheme_str() == Some("https"))?;
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_connect_timeout(Some(config.connect_timeout));
        http.set_nodelay(true);
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls.clone())
            .https_or_http()
            .enable_http1()
            .enable_http2()
            .wrap_connector(http.clone());
        let scheme = base.scheme().cloned().unwrap_or(http::uri::Scheme::HTTP);
        let authority = base
            .authority()
            .cloned()
            .unwrap_or_else(|| http::uri::Authority::from_static("localhost"));
        let backend = Uri::builder()
            .scheme(scheme.clone())
            .authority(authority.clone())
            .path_and_query("/")
            .build()
            .map_err(|_| UpstreamSetupError::BadHost(authority.to_string()))?;
        let mut builder = Client::builder(TokioExecutor::new());
        builder
            .pool_idle_timeout(config.pool_idle_timeout)
            .pool_timer(TokioTimer::new());
        let client = builder.build(BackendConnector {
            inner: connector,
            backend: backend.clone(),
        });
        let http1 = if scheme == http::uri::Scheme::HTTPS {
            // Without HTTP/2 enabled the connector offers no ALPN protocol, and the server keeps to HTTP/1.1.
            let connector = hyper_rustls::HttpsConnectorBuilder::new()
                .with_tls_config(tls)
                .https_or_http()
                .enable_http1()
                .wrap_connector(http);
            builder.build(BackendConnector {
                inner: connector,
                backend,
            })
        } else {
            client.clone()
        };
        let host = HeaderValue::from_str(authority.as_str())
            .map_err(|_| UpstreamSetupError::BadHost(authority.to_string()))?;
        let (request_authority, host) = if scheme == http::uri::Scheme::HTTPS {
            (authority.clone(), None)
        } else {
            (POOL_AUTHORITY, Some(host))
        };
        let pool = if scheme == http::uri::Scheme::HTTPS {
            None
        } else {
            let port = authority.port_u16().unwrap_or(80);
            let pool = BackendPool::new(
                format!("{}:{port}", authority.host()),
                config.connect_timeout,
                config.pool_idle_timeout,
                config.timeout,
            );
            Some(pool.ok_or_else(|| UpstreamSetupError::BadHost(authority.to_string()))?)
        };
        Ok(Upstream {
            pool,
            client,
            http1,
            scheme,
            request_authority,
            host,
            authority,
            path_prefix: base.path().trim_end_matches('/').to_owned(),
            timeout: config.timeout,
            body_budget: BodyBudget::new(config.memory_budget_bytes, config.timeout),
            preserve_host: config.preserve_host,
            upgrade_idle_timeout: config.upgrade_idle_timeout,
            metrics,
        })
    }

    /// The backend's `host[:port]`: the `Host` of requests to it, unless forwarded with `preserve_host`.
    pub fn authority(&self) -> &http::uri::Authority {
        &self.authority
    }

    /// The backend URI for a gateway-relative `path_and_query` (which must start with `/`).
    pub fn uri(&self, path_and_query: &str) -> Result<Uri, GatewayError> {
        let target = if self.path_prefix.is_empty() {
            http::uri::PathAndQuery::try_from(path_and_query)
        } else {
            http::uri::PathAndQuery::try_from(format!("{}{}", self.path_prefix, path_and_query))
        }
        .map_err(|error| GatewayError::BadRequest(format!("request target cannot be forwarded: {error}")))?;
        self.uri_of(target)
    }

    /// The backend URI for a client's own request target, already parsed: without a backend path prefix its bytes
    /// are shared, not copied or parsed again.
    pub fn uri_for_target(&self, target: &http::uri::PathAndQuery) -> Result<Uri, GatewayError> {
        if self.path_prefix.is_empty() {
            self.uri_of(target.clone())
        } else {
            self.uri(target.as_str())
        }
    }

    /// The backend URI for `target`, a path and query with any prefix already applied.
    fn uri_of(&self, target: http::uri::PathAndQuery) -> Result<Uri, GatewayError> {
        let mut parts = http::uri::Parts::default();
        parts.scheme = Some(self.scheme.clone());
        parts.authority = Some(self.request_authority.clone());
        parts.path_and_query = Some(target);
        Uri::from_parts(parts)
            .map_err(|error| GatewayError::BadRequest(format!("request target cannot be forwarded: {error}")))
    }

    /// How long the backend may take to send a response head, and to send a body svcgate reads whole.
    pub fn backend_timeout(&self) -> Duration {
        self.timeout
    }

    /// The budget of bytes held for bodies read whole (`rewrite_memory_budget_bytes`), its reads bounded by the
    /// backend timeout.
    pub fn body_budget(&self) -> &BodyBudget {
        &self.body_budget
    }

    /// Reads a backend answer's body whole: at most `max_bytes`, within the backend timeout (a backend that sends
    /// its head and stalls does not hold the caller), its bytes counted in the body budget while `Held`.
    pub async fn read_body(
        &self,
        body: BackendBody,
        max_bytes: usize,
    ) -> Result<(bytes::Bytes, Held), GatewayError> {
        self.body_budget
            .read(body, None, max_bytes)
            .await
            .map_err(|error| match error {
                BudgetError::TimedOut(after) | BudgetError::Stalled(after) => GatewayError::BackendTimeout(after),
                BudgetError::Exhausted { budget } | BudgetError::ShareExhausted { share: budget } => GatewayError::Busy(format!(
                    "svcgate holds {budget} bytes of bodies already (rewrite_memory_budget_bytes); retry shortly"
                )),
                BudgetError::TooLarge { max } => GatewayError::BadBackendAnswer(format!("body over {max} bytes")),
                BudgetError::Unreadable(detail) => GatewayError::BadBackendAnswer(detail),
            })
    }

    /// How long an upgraded connection may carry no bytes before svcgate closes it.
    pub fn upgrade_idle_timeout(&self) -> Duration {
        self.upgrade_idle_timeout
    }

    /// Sends one request addressed to the backend by its own name, waiting for the response head as long as the
    /// backend timeout allows (see [`exchange`](Self::exchange)).
    pub async fn send(&self, mut request: Request<Body>) -> Result<Response<BackendBody>, GatewayError> {
        self.address_backend(request.headers_mut());
        self.exchange(&self.client, request).await
    }

    /// Sends a request forwarded for a client that addressed svcgate as `client_host` (its `Host`, or the
    /// authority of an HTTP/2 request). With `preserve_host` the backend sees that name as `Host`; otherwise, or
    /// when the client named no host, the backend's own.
    pub async fn forward(
        &self,
        mut request: Request<Body>,
        client_host: Option<&HeaderValue>,
    ) -> Result<Response<BackendBody>, GatewayError> {
        match self.preserved_host(client_host)? {
            Some(host) => {
                request.headers_mut().insert(http::header::HOST, host);
                self.exchange(&self.http1, request).await
            }
            None => self.send(request).await,
        }
    }

    /// Sends a protocol upgrade request (`Connection: upgrade`) forwarded for a client, over HTTP/1.1 on a
    /// connection that, if the backend answers 101, leaves the pool and carries the upgraded protocol.
    pub async fn forward_upgrade(
        &self,
        mut request: Request<Body>,
        client_host: Option<&HeaderValue>,
    ) -> Result<Response<Incoming>, GatewayError> {
        match self.preserved_host(client_host)? {
            Some(host) => {
                request.headers_mut().insert(http::header::HOST, host);
            }
            None => self.address_backend(request.headers_mut()),
        }
        self.timed(self.http1.request(request)).await
    }

    /// Sets the `Host` of a request addressed to the backend by its own name.
    fn address_backend(&self, headers: &mut HeaderMap) {
        match &self.host {
            Some(host) => headers.insert(http::header::HOST, host.clone()),
            None => headers.remove(http::header::HOST),
        };
    }

    /// The client's host as the `Host` to send, with `preserve_host`. A name that is not a host (and port) is the
    /// client's error: it must not reach the backend's virtual hosting as something else.
    fn preserved_host(&self, client_host: Option<&HeaderValue>) -> Result<Option<HeaderValue>, GatewayError> {
        let Some(host) = client_host.filter(|_| self.preserve_host) else {
            return Ok(None);
        };
        let text = host.to_str().unwrap_or("");
        http::uri::Authority::try_from(text)
            .ok()
            .filter(|authority| !authority.as_str().contains('@'))
            .and_then(|authority| HeaderValue::from_str(authority.as_str()).ok())
            .map(Some)
            .ok_or_else(|| GatewayError::BadRequest(format!("Host {text:?} is not a host name")))
    }

    /// Sends a request whose `Host` is set: through the pool for a cleartext backend, on `client` for TLS. The
    /// wait for the response head is bounded by the backend timeout: exactly on `client`, and within 1.25 times it
    /// in the pool, which checks it without a timer per request (after a new connection's own connect timeout).
    async fn exchange(
        &self,
        client: &Client<BackendConnector, Body>,
        request: Request<Body>,
    ) -> Result<Response<BackendBody>, GatewayError> {
        match &self.pool {
            // The pool bounds the wait for the head itself, without a timer per request.
            Some(pool) => {
                let timing = HeadTiming::start(&self.metrics.backend_duration);
                let outcome = pool.send(request).await;
                drop(timing);
                match outcome {
                    Err(PoolError::HeadTimeout { after }) => Err(GatewayError::BackendTimeout(after)),
                    outcome => self.settled(outcome),
                }
            }
            None => self
                .timed(client.request(request))
                .await
                .map(|response| response.map(BackendBody::unpooled)),
        }
    }

    /// Waits at most the backend timeout for `call` (a request on its way to the backend) to bring the response
    /// head, timing it for the backend histogram.
    async fn timed<T, E>(
        &self,
        call: impl std::future::Future<Output = Result<T, E>>,
    ) -> Result<T, GatewayError>
    where
        E: std::error::Error + 'static,
    {
        // One clock reading for the deadline and the histogram.
        let timing = HeadTiming::start(&self.metrics.backend_duration);
        let outcome = match timing.started.checked_add(self.timeout) {
            Some(deadline) => tokio::time::timeout_at(deadline, call).await,
            // A `backend_timeout` too long to add to the clock: tokio's own bound, which takes it as no deadline.
            None => tokio::time::timeout(self.timeout, call).await,
        };
        drop(timing);
        match outcome {
            Err(_) => Err(GatewayError::BackendTimeout(self.timeout)),
            Ok(outcome) => self.settled(outcome),
        }
    }

    /// A backend call's outcome as the gateway answers it: a failure of the client's own body is the client's.
    fn settled<T, E>(&self, outcome: Result<T, E>) -> Result<T, GatewayError>
    where
        E: std::error::Error + 'static,
    {
        match outcome {
            // The client's own body failed (a chunk size that overflows, a cut connection): its fault, not the
            // backend's.
            Err(error) if client_body_failed(&error) => Err(GatewayError::BadRequest(format!(
                "the request body could not be read: {}",
                error_chain(&error)
            ))),
            Err(error) => Err(GatewayError::BackendUnreachable(error_chain(&error))),
            Ok(response) => Ok(response),
        }
    }
}

/// Whether a failed backend call failed because the body svcgate was forwarding from its client failed: hyper
/// reports that as a user error (the request body stream) caused by the client connection's own hyper error.
fn client_body_failed(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut source = Some(error);
    while let Some(current) = source {
        if current
            .downcast_ref::<hyper::Error>()
            .is_some_and(hyper::Error::is_user)
        {
            let mut cause = current.source();
            while let Some(inner) = cause {
                if inner.downcast_ref::<hyper::Error>().is_some() {
                    return true;
                }
                cause = inner.source();
            }
            return false;
        }
        source = current.source();
    }
    false
}

fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(inner) = source {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        source = inner.source();
    }
    text
}

fn client_tls(config: &BackendConfig, https: bool) -> Result<rustls::ClientConfig, UpstreamSetupError> {
    let mut roots = rustls::RootCertStore::empty();
    // Reading the system's roots costs tens of milliseconds at start; a plain-HTTP backend needs none of them.
    // System roots that fail to parse are skipped: one bad certificate in /etc/ssl must not stop the gateway.
    if https {
        let native = rustls_native_certs::load_native_certs();
        roots.add_parsable_certificates(native.certs);
    }
    if let Some(path) = &config.ca_bundle {
        for cert in read_certs("backend_ca_bundle", path)? {
            roots.add(cert)?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots);
    let config = match &config.client_identity {
        Some((cert, key)) => builder.with_client_auth_cert(
            read_certs("backend_client_cert", cert)?,
            read_key("backend_client_key", key)?,
        )?,
        None => builder.with_no_client_auth(),
    };
    Ok(config)
}

/// Headers that describe one connection, not the message, and so are never forwarded (RFC 9110 §7.6.1).
const HOP_BY_HOP: [HeaderName; 9] = [
    http::header::CONNECTION,
    HeaderName::from_static("keep-alive"),
    HeaderName::from_static("proxy-connection"),
    http::header::PROXY_AUTHENTICATE,
    http::header::PROXY_AUTHORIZATION,
    http::header::TE,
    http::header::TRAILER,
    http::header::UPGRADE,
    http::header::TRANSFER_ENCODING,
];

/// Removes hop-by-hop headers, including any that `Connection` names. `Transfer-Encoding` is left to hyper,
/// which frames bodies itself.
pub fn strip_hop_by_hop(headers: &mut HeaderMap) {
    // One pass over the names present (a message has a handful, and at most `Connection` of these, as a rule),
    // marking which hop-by-hop names occur, instead of a removal per hop-by-hop name; nothing is allocated unless
    // `Connection` names a header outside the fixed list that the message carries. This runs twice on every
    // proxied request (bench row 1, 1 KB and 50 conn: svcgate / bare 0.75 → 0.84 × (100 KB: 0.91 → 0.93 ×) with the other changes of its step (bench/RESULTS.md, 2026-11-26)).
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
        .get_all(http::header::CONNECTION)
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

/// Times a backend call to its answer's head for the backend histogram, and counts it when dropped: when the head
/// came, and also when the call was abandoned on the way (a caller's own bound ran out, as the outbox's does, or the
/// client went away), so that the slowest calls are not the ones the histogram leaves out.
struct HeadTiming<'a> {
    histogram: &'a Histogram,
    started: tokio::time::Instant,
}

impl<'a> HeadTiming<'a> {
    /// Starts timing a call now.
    fn start(histogram: &'a Histogram) -> Self {
        HeadTiming {
            histogram,
            started: tokio::time::Instant::now(),
        }
    }
}

impl Drop for HeadTiming<'_> {
    fn drop(&mut self) {
        self.histogram.observe(self.started.elapsed().as_secs_f64());
    }
}

/// What the gateway knows about the client connection, for the `X-Forwarded-*` headers.
#[derive(Debug, Clone)]
pub struct ClientInfo {
    /// The peer's IP address.
    pub peer: std::net::IpAddr,
    /// `http` or `https`, as the client reached the gateway.
    pub proto: &'static str,
    /// The peer's address as a header value, written once per connection rather than once per request.
    peer_header: HeaderValue,
}

impl ClientInfo {
    /// The client at `peer`, reached over `proto` (`http` or `https`).
    pub fn new(peer: std::net::IpAddr, proto: &'static str) -> Self {
        let peer_header = HeaderValue::from_maybe_shared(bytes::Bytes::from(peer.to_string()))
            .unwrap_or_else(|_| HeaderValue::from_static("unknown"));
        ClientInfo {
            peer,
            proto,
            peer_header,
        }
    }

    /// The same client, as having reached the gateway over `proto` (what a trusted proxy reported).
    pub fn with_proto(mut self, proto: &'static str) -> Self {
        self.proto = proto;
        self
    }
}

/// Adds `X-Forwarded-For` (appended to any existing chain), `X-Forwarded-Proto`, `X-Forwarded-Host` and
/// `X-Request-Id` to a request about to go to the backend. `original_host` is the client's `Host` or authority.
pub fn add_forwarding_headers(
    headers: &mut HeaderMap,
    client: &ClientInfo,
    original_host: Option<&HeaderValue>,
    request_id: &crate::telemetry::RequestId,
) {
    let chain = match headers
        .get(&X_FORWARDED_FOR)
        .and_then(|value| value.to_str().ok())
    {
        Some(existing) if !existing.trim().is_empty() => {
            HeaderValue::from_str(&format!("{existing}, {}", client.peer)).ok()
        }
        _ => Some(client.peer_header.clone()),
    };
    if let Some(value) = chain {
        headers.insert(X_FORWARDED_FOR, value);
    }
    headers.insert(X_FORWARDED_PROTO, HeaderValue::from_static(client.proto));
    if let Some(host) = original_host {
        headers.insert(X_FORWARDED_HOST, host.clone());
    }
    headers.insert(X_REQUEST_ID, request_id.header());
}

// Header names as constants: a name given as text is parsed again on every use.
const X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");
const X_FORWARDED_PROTO: HeaderName = HeaderName::from_static("x-forwarded-proto");
const X_FORWARDED_HOST: HeaderName = HeaderName::from_static("x-forwarded-host");
const X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

#[cfg(test)]
impl BackendConfig {
    /// Settings for unit tests: no URL of its own, 100 ms to connect, `timeout` for an answer.
    pub(crate) fn for_tests(timeout: Duration) -> Self {
        BackendConfig {
            url: None,
            ca_bundle: None,
            client_identity: None,
            connect_timeout: Duration::from_millis(100),
            timeout,
            pool_idle_timeout: Duration::from_secs(1),
            preserve_host: false,
            upgrade_idle_timeout: Duration::from_secs(1),
            memory_budget_bytes: 1 << 20,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[tokio::test]
    async fn a_backend_timeout_too_long_for_the_clock_is_no_deadline_not_a_panic() {
        let backend = BackendConfig::for_tests(Duration::MAX);
        // Nothing listens on port 9: the call fails to connect, within the connect timeout.
        let upstream = Upstream::new(
            &backend,
            &http::Uri::from_static("http://127.0.0.1:9"),
            crate::telemetry::Metrics::new(),
        )
        .unwrap();
        let request = Request::get("http://127.0.0.1:9/api/v4/version")
            .body(crate::http::body::empty())
            .unwrap();
        let outcome = upstream.send(request).await;
        assert!(
            matches!(outcome, Err(GatewayError::BackendUnreachable(_))),
            "{outcome:?}"
        );
    }

    #[tokio::test]
    async fn a_backend_call_abandoned_before_its_head_still_counts_in_the_backend_histogram() {
        // A backend that takes connections and never answers.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let held = tokio::spawn(async move {
            let mut open = Vec::new();
            while let Ok((stream, _)) = listener.accept().await {
                open.push(stream);
            }
        });
        let metrics = Metrics::new();
        let upstream = Upstream::new(
            &BackendConfig::for_tests(Duration::from_secs(30)),
            &format!("http://{address}").parse().unwrap(),
            Arc::clone(&metrics),
        )
        .unwrap();
        let request = Request::get(format!("http://{address}/api/v4/version"))
            .body(crate::http::body::empty())
            .unwrap();
        // The caller's own bound (as the outbox's is) runs out long before the backend timeout.
        let abandoned = tokio::time::timeout(Duration::from_millis(200), upstream.send(request)).await;
        assert!(abandoned.is_err(), "the backend never answers");
        let text = metrics.encode();
        let counted = format!("{}_count 1", crate::telemetry::names::BACKEND_DURATION);
        assert!(text.lines().any(|line| line == counted), "{text}");
        held.abort();
    }

    #[test]
    fn hop_by_hop_headers_and_those_connection_names_are_removed() {
        let mut headers = HeaderMap::new();
        headers.insert("connection", HeaderValue::from_static("keep-alive, x-secret-hop"));
        headers.insert("keep-alive", HeaderValue::from_static("timeout=5"));
        headers.insert("x-secret-hop", HeaderValue::from_static("1"));
        headers.insert("te", HeaderValue::from_static("trailers"));
        headers.insert("private-token", HeaderValue::from_static("t"));
        strip_hop_by_hop(&mut headers);
        assert_eq!(headers.len(), 1);
        assert!(headers.contains_key("private-token"));
    }

    #[test]
    fn forwarded_for_appends_to_an_existing_chain() {
        let mut headers = HeaderMap::new();
        headers.insert("x-forwarded-for", HeaderValue::from_static("10.0.0.1"));
        let client = ClientInfo::new("127.0.0.1".parse().unwrap(), "https");
        add_forwarding_headers(
            &mut headers,
            &client,
            Some(&HeaderValue::from_static("gate.example")),
            &crate::telemetry::RequestId::fixed("abc"),
        );
        assert_eq!(headers["x-forwarded-for"], "10.0.0.1, 127.0.0.1");
        assert_eq!(headers["x-forwarded-proto"], "https");
        assert_eq!(headers["x-forwarded-host"], "gate.example");
        assert_eq!(headers["x-request-id"], "abc");
    }
}
