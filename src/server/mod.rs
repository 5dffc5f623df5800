//! Listeners and dispatch: accepts HTTP/1.1 and HTTP/2 (prior knowledge, or ALPN over TLS), routes each request
//! by path, logs it, and shuts down gracefully.
//!
//! Dispatch: `/-/svcgate/…` → the V3 usage and alert management APIs, [`internal`] (health,
//! readiness, metrics), or the [`pages`](crate::pages) for the paths that are a browser's
//! ([`is_page_path`](crate::pages::routes::is_page_path)); any other path under the prefix is a JSON 404. Alert
//! receiving addresses → the intake; `/api/v3/…` → [`Rewriter`]; everything else →
//! [`passthrough`]. [`Gateway`] is built apart from serving it, so tests can start it on any
//! listener with any shutdown signal.
//!
//! Files: this one, and [`internal`] (the gateway's own routes). May use every layer below it (see `lib.rs`).

pub mod internal;
pub mod v3_clients;

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http::{Request, Response};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tracing::Instrument;

use crate::alerts::integrations::parse_target;
use crate::alerts::manage::ManageError;
use crate::alerts::AlertService;
use crate::backend::access::{AccessChecker, Credentials};
use crate::backend::context::RequestContext;
use crate::backend::passthrough;
use crate::backend::upstream::{ClientInfo, Upstream};
use crate::config::Config;
use crate::http::aborts::{AbortMark, ResetOnAbort};
use crate::http::body::Body;
use crate::http::connections::{CloseReason, Limits, Registry, ServerTls, TrackedBody, WriteStallLimit};
use crate::http::error::GatewayError;
use crate::http::refusals::RefusalBodies;
use crate::pages::Pages;
use crate::rewrite::table::RuleTable;
use crate::rewrite::usage::UsageRecorder;
use crate::rewrite::{is_v3, Rewriter};
use crate::store::Store;
use crate::telemetry::access_log::AccessEntry;
use crate::telemetry::{Metrics, RequestId, V3Labels, X_REQUEST_ID};
use crate::util::secret::SecretBox;
use crate::util::tls::{read_certs, read_key};
use crate::{alerts, pages};

/// The V3 usage report of the management API.
const V3_USAGE_API: &str = "/-/svcgate/api/v3-usage";

/// Everything a request may need, shared by all connections.
pub struct Gateway {
    /// The backend client.
    pub upstream: Arc<Upstream>,
    /// The V3 translator.
    pub rewriter: Rewriter,
    /// Metrics.
    pub metrics: Arc<Metrics>,
    /// The store.
    pub store: Arc<dyn Store>,
    /// Alert intake and management.
    pub alerts: Arc<AlertService>,
    /// The configured public base URL.
    pub public_url: Option<String>,
    /// Proxies whose `X-Forwarded-Proto` is believed.
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// The people-facing pages.
    pub pages: Pages,
    /// V3 usage counts.
    pub usage: Arc<UsageRecorder>,
    /// Whether the process is draining, and the backend's last probe, for readiness.
    pub health: Arc<internal::Health>,
    /// Longest a metrics scrape waits for the store's counts (`metrics_store_timeout`).
    pub metrics_store_timeout: std::time::Duration,
    /// Longest a readiness check waits for the store (`ready_timeout`).
    pub ready_timeout: std::time::Duration,
    /// Whether svcgate answers `/favicon.ico` itself: only in dev mode, where the backend is the simulator, which
    /// has no web pages. In front of a real server `/favicon.ico` is the server's own asset and passes through.
    pub answers_favicon: bool,
}

impl Gateway {
    /// Builds the gateway for `config`, talking to `backend`, keeping state in `store`.
    pub async fn build(
        config: &Config,
        backend: &http::Uri,
        store: Arc<dyn Store>,
        table: RuleTable,
        data_dir: &std::path::Path,
    ) -> anyhow::Result<Arc<Self>> {
        let metrics = Metrics::new();
        store.observe_commits(metrics.store_commits.clone());
        let upstream = Arc::new(Upstream::new(&config.backend, backend, Arc::clone(&metrics))?);
        let secret = Arc::new(SecretBox::load(config.alerts.secret_key, data_dir)?);
        let store_for_usage = Arc::clone(&store);
        let retired_clients_returned = metrics.v3_retired_clients_returned.clone();
        let upstream_for_usage = Arc::clone(&upstream);
        let alerts = AlertService::start(
            Arc::clone(&store),
            Arc::clone(&upstream),
            config.alerts.clone(),
            Arc::clone(&secret),
            backend.to_string().trim_end_matches('/').to_owned(),
            Arc::clone(&metrics),
            Arc::new(crate::alerts::formats::Catalog::load(
                config.alerts.formats_dir.as_deref(),
            )?),
        )
        .await?;
        let rewriter = Rewriter::new(
            table,
            Arc::clone(&store),
            Arc::clone(&metrics),
            Arc::clone(&upstream),
            config.rewrite.clone(),
            Arc::clone(&secret),
        );
        let oauth = config
            .pages
            .oauth
            .clone()
            .map(|settings| crate::pages::oauth::OAuthClient::new(settings, Arc::clone(&upstream)));
        let pages = Pages::new(
            config.pages.session_ttl,
            Arc::clone(&store),
            secret,
            oauth,
            config.pages.sign_in,
        );
        Ok(Arc::new(Gateway {
            upstream,
            rewriter,
            metrics,
            store,
            alerts,
            public_url: config.server.public_url.clone(),
            trusted_proxies: config.server.trusted_proxies.clone(),
            pages,
            health: internal::Health::new(),
            metrics_store_timeout: config.server.metrics_store_timeout,
            ready_timeout: config.server.ready_timeout,
            answers_favicon: config.dev && config.backend.url.is_none(),
            usage: Arc::new(UsageRecorder::new(
                Arc::clone(&store_for_usage),
                AccessChecker::new(
                    Arc::clone(&upstream_for_usage),
                    config.alerts.access_cache_ttl,
                    config.alerts.access_cache_entries,
                ),
                &config.usage,
                config.alerts.access_cache_entries,
                retired_clients_returned,
            )),
        }))
    }

    /// Answers one request; never fails (every error becomes a response in the service's error shape).
    pub async fn handle(&self, request: Request<Incoming>, client: ClientInfo) -> Response<Body> {
        let request_id = RequestId::from_client(request.headers()).unwrap_or_default();
        let proto = crate::http::forwarded::client_proto(
            &self.trusted_proxies,
            client.peer,
            client.proto,
            request.headers(),
        );
        let client = if proto == client.proto {
            client
        } else {
            client.with_proto(proto)
        };
        let mut context = RequestContext::new(request_id, client);
        let method = request.method().clone();
        // The URI's bytes are shared with the request, not copied: the request itself moves on to its handler.
        let uri = request.uri().clone();
        let path = uri.path();
        // Who calls V3, for the usage counts: a hash of their credentials and their User-Agent.
        let v3_caller = is_v3(path).then(|| {
            let credentials = Credentials::from_headers(request.headers())
                .or_else(|| Credentials::from_query(request.uri().query()));
            let user_agent = request
                .headers()
                .get(http::header::USER_AGENT)
                .and_then(|value| value.to_str().ok())
                .unwrap_or("")
                .to_owned();
            (credentials, user_agent)
        });

        // Every route but the passthrough runs boxed: its future is then a pointer in this one, which hyper moves
        // on every request, instead of the largest of them all (the V3 rewriter's); bench row 1, 1 KB and 50 conn: svcgate / bare 0.75 → 0.84 × (100 KB: 0.91 → 0.93 ×) with the other changes of its step (bench/RESULTS.md, 2026-11-26).
        let outcome = if path == V3_USAGE_API {
            context.kind = "internal";
            context.route = V3_USAGE_API.to_owned();
            Ok(Box::pin(self.v3_usage_api(request.headers(), request.uri().query())).await)
        } else if let Some(rest) = v3_clients::rest_of(path) {
            context.kind = "internal";
            context.route = v3_clients::ROUTE.to_owned();
            let sources = v3_clients::Sources {
                usage: &self.usage,
                table: self.rewriter.table(),
                access: &self.alerts.access,
            };
            Ok(Box::pin(v3_clients::handle(
                sources,
                request.method(),
                request.headers(),
                rest,
            ))
            .await)
        } else if path.starts_with(alerts::api::PREFIX) {
            context.kind = "internal";
            context.route = "/-/svcgate/api/projects/:project/…".to_owned();
            Ok(Box::pin(self.alert_api(request, &context)).await)
        } else if internal::is_internal(path) {
            context.kind = "internal";
            context.route = path.to_owned();
            let probes = internal::Probes {
                store: self.store.as_ref(),
                health: &self.health,
                upstream: &self.upstream,
                metrics: &self.metrics,
                usage: &self.usage,
                store_timeout: self.metrics_store_timeout,
                ready_timeout: self.ready_timeout,
            };
            Ok(Box::pin(internal::handle(probes, &method, path)).await)
        } else if path
            .strip_prefix(pages::PREFIX)
            .is_some_and(pages::routes::is_page_path)
        {
            context.kind = "pages";
            context.route = "/-/svcgate/ pages".to_owned();
            let origin = self.origin_of(request.headers(), request.uri(), &context);
            // `Secure` when the browser reached svcgate over TLS: directly, through a trusted proxy that says so,
            // or at an `https://` public address (a browser that uses that address always comes over TLS).
            let secure = context.client.proto == "https"
                || self
                    .public_url
                    .as_deref()
                    .is_some_and(|url| url.starts_with("https://"));
            Ok(Box::pin(self.pages.handle(
                &self.alerts,
                &self.usage,
                self.rewriter.table(),
                request,
                secure,
                origin,
            ))
            .await)
        } else if self.answers_favicon && path == "/favicon.ico" {
            context.kind = "pages";
            context.route = "/favicon.ico".to_owned();
            Ok(pages::icon())
        } else if path.starts_with(internal::PREFIX) {
            // Under svcgate's prefix but neither an operational route, the API nor a page (`readyz`, `api/nope`):
            // a 404 a probe or an API client can read, never a redirect to the sign-in page.
            context.kind = "internal";
            Err(GatewayError::NoRoute)
        } else if let Some(target) = parse_target(path) {
            context.kind = "alerts";
            context.route = "alert intake".to_owned();
            Ok(Box::pin(self.alerts.intake.handle(request, &target)).await)
        } else if is_v3(path) {
            context.kind = "rewrite";
            Box::pin(self.rewriter.handle(request, &mut context)).await
        } else {
            passthrough::forward(&self.upstream, request, &context).await
        };
        let mut response = outcome.unwrap_or_else(|error| {
            tracing::debug!(%error, "request ended with an error");
            error.into_response()
        });
        response
            .headers_mut()
            .insert(X_REQUEST_ID, context.request_id.header());
        let status = response.status().as_u16();
        self.record(&context, &method, path, status);
        if let (Some((credentials, user_agent)), "rewrite") = (v3_caller, context.kind) {
            // A token svcgate moved out of the query or body names the caller as a header would have.
            let credentials = context.caller.take().or(credentials);
            self.usage
                .record(&context.route, &context.since, credentials, &user_agent, status);
            let route = if context.since.is_empty() {
                "(prefix change)".to_owned()
            } else {
                context.route.clone()
            };
            let status_class = match status {
                200..=299 => "2xx",
                300..=399 => "3xx",
                400..=499 => "4xx",
                _ => "5xx",
            };
            self.metrics
                .v3_requests
                .get_or_create(&V3Labels {
                    route,
                    since: context.since.clone(),
                    status_class,
                })
                .inc();
        }
        response
    }

    /// `GET /-/svcgate/api/v3-usage`: how many clients and routes are still active (`summary`) and the routes by
    /// calls with their clients (`routes`); for admins of the backend only.
    async fn v3_usage_api(&self, headers: &http::HeaderMap, query: Option<&str>) -> Response<Body> {
        let report = async {
            let credentials = Credentials::from_headers(headers).ok_or(ManageError::Unauthenticated)?;
            let (_, admin) = self.alerts.access.user(&credentials).await?;
            if !admin {
                return Err(ManageError::AdminOnly);
            }
            Ok(self.usage.report().await?)
        };
        let rows = match report.await {
            Ok(rows) => rows,
            Err(error) => return alerts::api::error_response(&error),
        };
        let pairs = crate::util::url_parts::parse_pairs(query.unwrap_or("").as_bytes());
        let sort = pairs
            .iter()
            .find(|(name, _)| name == "sort")
            .map_or("calls", |(_, value)| value.as_str());
        let now = time::OffsetDateTime::now_utc();
        let summary = crate::rewrite::retirement::summary(&rows, now, self.usage.retired_after());
        let routes = crate::rewrite::usage::by_route(rows, sort, now, self.usage.retired_after());
        crate::http::body::json_response(
            http::StatusCode::OK,
            &serde_json::json!({ "summary": summary, "routes": routes }),
        )
    }

    /// The gateway's base URL as clients see it: `public_url`, else the request's scheme and host.
    fn origin_of(&self, headers: &http::HeaderMap, uri: &http::Uri, context: &RequestContext) -> String {
        if let Some(url) = &self.public_url {
            return url.clone();
        }
        let host = headers
            .get(http::header::HOST)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned)
            .or_else(|| uri.authority().map(|authority| authority.to_string()))
            .unwrap_or_else(|| "localhost".to_owned());
        format!("{}://{host}", context.client.proto)
    }

    /// Answers a management request, with the gateway's base URL for receiving addresses.
    async fn alert_api(&self, request: Request<Incoming>, context: &RequestContext) -> Response<Body> {
        let origin = self.origin_of(request.headers(), request.uri(), context);
        alerts::api::handle(&self.alerts, request, origin).await
    }

    fn record(&self, context: &RequestContext, method: &http::Method, path: &str, status: u16) {
        let elapsed = context.started.elapsed();
        // Metric labels come from the rule table and a fixed set only: a V3 path no rule names is `(no rule)`,
        // however many distinct paths clients invent.
        let rule = match (context.kind, context.since.is_empty()) {
            ("rewrite", false) => context.route.as_str(),
            ("rewrite", true) => crate::rewrite::usage::NO_RULE,
            _ => "",
        };
        self.metrics
            .answered
            .answered(context.kind, rule, status, elapsed);
        // The route template for rewritten requests, the path (never the query) otherwise: no token can appear.
        let route = if context.route.is_empty() {
            path
        } else {
            context.route.as_str()
        };
        crate::telemetry::access_log::log(&AccessEntry {
            request_id: context.request_id.as_str(),
            method: method.as_str(),
            kind: context.kind,
            route,
            status,
            latency_micros: u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX),
            backend_calls: u64::from(context.backend_call_count()),
        });
    }
}

/// Builds the TLS acceptor for serving clients, offering HTTP/2 and HTTP/1.1 by ALPN.
pub fn tls_acceptor(tls: &ServerTls) -> anyhow::Result<TlsAcceptor> {
    let certs = read_certs("tls_cert", &tls.cert)?;
    let key = read_key("tls_key", &tls.key)?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(certs, key)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// When serving stops: the signal, and what follows it (see [`serve`]).
#[derive(Debug, Clone, Copy)]
pub struct Shutdown {
    /// How long the listener stays open after the signal, readiness answering 503 (`shutdown_delay`).
    pub delay: Duration,
    /// How long in-flight requests may take to finish once the listener is closed (`shutdown_grace`).
    pub grace: Duration,
}

/// Serves `gateway` on `listener` until `shutdown` completes. Then readiness answers 503 at once, new connections
/// are still accepted for `timing.delay` (a load balancer takes that long to notice), the listener closes, and
/// in-flight requests have at most `timing.grace` to finish before this returns. `limits` bound how many
/// connections may be open and how long one may send nothing ([`connections`](crate::http::connections)).
pub async fn serve(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    gateway: Arc<Gateway>,
    shutdown: impl Future<Output = ()>,
    timing: Shutdown,
    limits: Limits,
) {
    let graceful = GracefulShutdown::new();
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true);
    builder.http2().timer(TokioTimer::new());
    let builder = Arc::new(builder);
    let registry = Registry::new(limits);
    let mut accept_backoff = AcceptBackoff::default();
    let health = Arc::clone(&gateway.health);
    let stop_accepting = async move {
        shutdown.await;
        health.start_draining();
        tracing::info!(
            delay = ?timing.delay,
            "shutting down: readiness answers 503; accepting connections for shutdown_delay"
        );
        tokio::time::sleep(timing.delay).await;
    };
    tokio::pin!(stop_accepting);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => {
                    accept_backoff.reset();
                    accepted
                }
                Err(error) => {
                    // Out of file descriptors and the like: back off instead of spinning.
                    let pause = accept_backoff.next();
                    tracing::warn!(%error, ?pause, "accept failed");
                    tokio::time::sleep(pause).await;
                    continue;
                }
            },
            () = &mut stop_accepting => break,
        };
        let Some(admitted) = registry.admit() else {
            // Every open connection has a request in progress: refuse this one at once.
            gateway.metrics.connection_closed("refused");
            drop(stream);
            continue;
        };
        // Nagle's delay would hold back small responses; failure to set it is harmless.
        drop(stream.set_nodelay(true));
        let abort = AbortMark::default();
        let stream = RefusalBodies::new(WriteStallLimit::new(
            ResetOnAbort::new(stream, abort.clone()),
            limits.write_timeout,
        ));
        let watcher = graceful.watcher();
        let builder = Arc::clone(&builder);
        let gateway = Arc::clone(&gateway);
        let tls = tls.clone();
        tokio::spawn(
            async move {
                let proto = if tls.is_some() { "https" } else { "http" };
                let client = ClientInfo::new(peer.ip(), proto);
                let connection = Arc::clone(admitted.connection());
                let metrics = Arc::clone(&gateway.metrics);
                let service = service_fn(move |request| {
                    let gateway = Arc::clone(&gateway);
                    let client = client.clone();
                    let in_progress = connection.request_started();
                    // An HTTP/1 response cut short resets the connection; HTTP/2 resets only its stream.
                    let abort = (request.version() < http::Version::HTTP_2).then(|| abort.clone());
                    async move {
                        let response = gateway.handle(request, client).await;
                        Ok::<_, Infallible>(response.map(|body| TrackedBody::new(body, in_progress, abort)))
                    }
                });
                let served = async {
                    match tls {
                        Some(acceptor) => match acceptor.accept(stream).await {
                            Ok(stream) => {
                                let connection =
                                    builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
                                watcher.watch(connection.into_owned()).await
                            }
                            Err(error) => {
                                tracing::debug!(%error, "TLS handshake failed");
                                Ok(())
                            }
                        },
                        None => {
                            let connection =
                                builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
                            watcher.watch(connection.into_owned()).await
                        }
                    }
                };
                // The limits' watcher is a task of its own, stopped with the connection: polled beside the
                // connection, its timer and notifications were polled again on each of the several wake-ups of
                // every request. Its verdict is one cheap channel to poll. Bench row 1, 50 conn: svcgate / bare
                // 0.86 → 0.87 × at 1 KB, 0.94 → 0.97 × at 100 KB (bench/RESULTS.md, 2026-11-26).
                let admitted = Arc::new(admitted);
                let watch = |evicted: bool| {
                    let admitted = Arc::clone(&admitted);
                    let (verdict_sender, verdict) = tokio::sync::oneshot::channel();
                    let task = StopOnDrop(tokio::spawn(async move {
                        // The connection may have ended first: nobody is left to tell.
                        let _ = verdict_sender.send(admitted.closed_by_limits(evicted).await);
                    }));
                    (verdict, task)
                };
                let (mut verdict, mut watcher) = watch(false);
                tokio::pin!(served);
                // The TLS handshake counts as part of the first request head's time.
                let result = loop {
                    tokio::select! {
                        result = &mut served => break result,
                        Ok(reason) = &mut verdict => {
                            // The watcher decided on its own task; a request may have started since. Here, on the
                            // task that starts requests, none can start between this look and the close.
                            if admitted.connection().in_progress() == 0 {
                                tracing::debug!(reason = reason.label(), "closing connection");
                                metrics.connection_closed(reason.label());
                                break Ok(());
                            }
                            (verdict, watcher) = watch(reason == CloseReason::Evicted);
                        }
                    }
                };
                drop(watcher);
                if let Err(error) = result {
                    tracing::debug!(error = %error, "connection ended with an error");
                }
            }
            .instrument(tracing::debug_span!("connection", %peer)),
        );
    }
    drop(listener);
    tracing::info!(
        in_flight_connections = graceful.count(),
        "stopped accepting; draining in-flight requests"
    );
    tokio::select! {
        () = graceful.shutdown() => tracing::info!("all connections closed"),
        () = tokio::time::sleep(timing.grace) => {
            tracing::warn!(grace = ?timing.grace, "grace period over; closing remaining connections");
        }
    }
}

/// A task aborted when this is dropped: a connection's limits watcher ends with the connection.
struct StopOnDrop(tokio::task::JoinHandle<()>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Pauses between failed `accept` calls: 10 ms doubling to 1 s, back to 10 ms after a success.
#[derive(Default)]
struct AcceptBackoff {
    failures: u32,
}

impl AcceptBackoff {
    fn next(&mut self) -> Duration {
        let pause = Duration::from_millis(10u64 << self.failures.min(7)).min(Duration::from_secs(1));
        self.failures = self.failures.saturating_add(1);
        pause
    }

    fn reset(&mut self) {
        self.failures = 0;
    }
}

/// Completes on SIGTERM or SIGINT.
pub async fn shutdown_signal() {
    let interrupt = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => tracing::info!("SIGINT received"),
        () = terminate => tracing::info!("SIGTERM received"),
    }
}

/// Binds the configured address.
pub async fn bind(address: SocketAddr) -> std::io::Result<TcpListener> {
    TcpListener::bind(address).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_accepts_back_off_from_10_ms_to_1_s_and_start_over_after_a_success() {
        let mut backoff = AcceptBackoff::default();
        let pauses: Vec<u64> = (0..9).map(|_| backoff.next().as_millis() as u64).collect();
        assert_eq!(pauses, [10, 20, 40, 80, 160, 320, 640, 1000, 1000]);
        backoff.reset();
        assert_eq!(backoff.next(), Duration::from_millis(10));
    }
}
