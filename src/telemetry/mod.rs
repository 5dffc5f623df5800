//! Logs, metrics and request ids: everything ops read off a running gateway.
//!
//! All metric names are constants in [`names`], so dashboards and this file agree. Labels are low-cardinality by
//! construction: a route kind, a rule's V3 template (bounded by the rule table) and a status code, never a raw path,
//! user or token.
//!
//! Files: this one (the metrics registry and the log subscriber), [`names`], [`process_metrics`] (the process's own,
//! from `/proc`), [`logsink`] (the batched stderr writer), [`access_log`] (the line of each answered request),
//! [`request_series`] (the request counters resolved once per kind and status). May use: [`crate::util`],
//! [`crate::http`], [`crate::store`] (the counts read at scrape time). Whatever a metric's labels mean (alert severities, kinds) the
//! caller passes in, so telemetry knows no feature.

pub mod access_log;
pub mod logsink;
pub mod names;
pub mod process_metrics;
pub mod request_series;

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Duration;

use http::HeaderValue;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::Registry;

use tracing::Subscriber;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::util::SubscriberInitExt;

use crate::store::{CommitMetrics, Store, StoreError};
use crate::telemetry::logsink::{BatchedStderr, LogFlusher};
use crate::telemetry::process_metrics::ProcessCollector;

/// Log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// Human-readable key=value lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// How the gateway logs.
#[derive(Debug, Clone)]
pub struct LogSettings {
    /// Text or JSON lines (`log_format`).
    pub format: LogFormat,
    /// The filter, in `tracing` syntax (`log_level`).
    pub level: String,
}

/// Label values of the alert intake counter: every `outcome` it may carry.
pub mod outcomes {
    /// A new alert was opened.
    pub const CREATED: &str = "created";
    /// A repeat was counted into the open alert of its fingerprint.
    pub const GROUPED: &str = "grouped";
    /// The open alert of its fingerprint was resolved.
    pub const RESOLVED: &str = "resolved";
    /// A resolve that matched no open alert.
    pub const NO_OPEN_ALERT: &str = "no_open_alert";
    /// The request was refused before its alerts were stored (`reason` says why).
    pub const REFUSED: &str = "refused";
}

/// Labels of the alert intake counter: each value from a fixed set (integration types, outcomes, the intake's
/// error codes), so the series are bounded whatever senders send.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct AlertLabels {
    /// `generic`, `http` or `prometheus`: the kind of address the alert was sent to.
    pub integration_type: &'static str,
    /// One of [`outcomes`].
    pub outcome: &'static str,
    /// The refusal's `error` code (`unauthorized`, `rate_limited`, …); empty unless refused.
    pub reason: &'static str,
}

/// Labels of the open alert gauge.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct SeverityLabels {
    /// `critical`, `high`, `medium`, `low`, `info` or `unknown`.
    pub severity: &'static str,
}

/// Labels of the outbox counters.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OutboxLabels {
    /// `create_incident` or `close_incident`.
    pub kind: &'static str,
}

/// The kinds of incident call the outbox makes.
pub const OUTBOX_KINDS: [&str; 2] = ["create_incident", "close_incident"];

/// Labels of the V3 request counter: bounded by the rule table (no user, no raw path).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct V3Labels {
    /// The rule's V3 template, or `(prefix change)`.
    pub route: String,
    /// The rule's release, or empty.
    pub since: String,
    /// `2xx`, `3xx`, `4xx` or `5xx`.
    pub status_class: &'static str,
}

/// Labels of the request counter.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    /// `passthrough`, `rewrite`, `internal`, `alerts` or `pages`.
    pub kind: &'static str,
    /// The rule's V3 template, the pass-through prefix change, or empty.
    pub rule: String,
    /// The status answered.
    pub status: u16,
}

/// Labels of the request duration histogram.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct KindLabels {
    /// The route kind.
    pub kind: &'static str,
}

/// Labels of the closed-connection counter.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ClosedLabels {
    /// `refused`, `no_request`, `idle` or `evicted`.
    pub reason: &'static str,
}

/// Labels of the id index counter.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct LookupLabels {
    /// `memory`, `store`, `backend` or `not_found`.
    pub result: &'static str,
}

/// Labels of the GraphQL counter.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct GraphqlLabels {
    /// `completion` (a list's per-item fields) or `id` (a global id's project and iid).
    pub kind: &'static str,
    /// `ok`, `split`, `refused`, `error`, `denied` or `skipped` (see docs/metrics.md).
    pub outcome: &'static str,
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

fn latency_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.0005, 2.0, 16))
}

/// The gateway's metrics and their registry.
pub struct Metrics {
    registry: Registry,
    /// Requests answered.
    pub requests: Family<RequestLabels, Counter>,
    /// Gateway latency by kind.
    pub request_duration: HistogramFamily<KindLabels>,
    /// `requests` and `request_duration` as each answer counts into them, their series resolved once per kind.
    pub answered: request_series::RequestSeries,
    /// Backend call latency.
    pub backend_duration: Histogram,
    /// Id index lookups by result.
    pub id_lookups: Family<LookupLabels, Counter>,
    /// GraphQL requests by kind and outcome.
    pub graphql: Family<GraphqlLabels, Counter>,
    /// V3 requests.
    pub v3_requests: Family<V3Labels, Counter>,
    /// Client connections closed or refused by the limits.
    pub connections_closed: Family<ClosedLabels, Counter>,
    /// 1 while the backend answers the periodic probe, 0 before the first answer and while it fails.
    pub backend_up: Gauge,
    /// Alerts received on the intake, by integration type, outcome and refusal reason.
    pub alerts_received: Family<AlertLabels, Counter>,
    /// Open alerts by severity and the outbox backlog, read at scrape time ([`Metrics::refresh_from_store`]).
    store_counts: StoreCountsCollector,
    /// Incident calls the backend accepted.
    pub outbox_done: Family<OutboxLabels, Counter>,
    /// Incident calls that failed (each retried later).
    pub outbox_failures: Family<OutboxLabels, Counter>,
    /// 1 when the last scrape read all its counts from the store, else 0.
    pub store_gauges_up: Gauge,
    /// Calls from V3 clients that were retired, each return counted once (by the usage recorder).
    pub v3_retired_clients_returned: Counter,
    /// What the store's writer observes of each commit.
    pub store_commits: CommitMetrics,
}

impl Metrics {
    /// Creates and registers every metric.
    pub fn new() -> Arc<Self> {
        let mut registry = Registry::default();
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(names::REQUESTS, "Requests answered", requests.clone());
        let request_duration: HistogramFamily<KindLabels> = Family::new_with_constructor(latency_histogram);
        registry.register(
            names::REQUEST_DURATION,
            "Time from request head to response head",
            request_duration.clone(),
        );
        let backend_duration = latency_histogram();
        registry.register(
            names::BACKEND_DURATION,
            "Time the backend took to send a response head",
            backend_duration.clone(),
        );
        let id_lookups = Family::<LookupLabels, Counter>::default();
        registry.register(
            names::ID_INDEX_LOOKUPS,
            "Global id to iid lookups by where they were answered",
            id_lookups.clone(),
        );
        let graphql = Family::<GraphqlLabels, Counter>::default();
        registry.register(
            names::GRAPHQL,
            "GraphQL requests made for V3 answers (list completions, id lookups), by kind and outcome",
            graphql.clone(),
        );
        let v3_requests = Family::<V3Labels, Counter>::default();
        registry.register(
            names::V3_REQUESTS,
            "V3 requests by route template, the release of its rule, and status class",
            v3_requests.clone(),
        );
        let connections_closed = Family::<ClosedLabels, Counter>::default();
        registry.register(
            names::CONNECTIONS_CLOSED,
            "Client connections closed or refused by the connection limits, by reason",
            connections_closed.clone(),
        );
        let backend_up = Gauge::default();
        registry.register(
            names::BACKEND_UP,
            "1 when the backend answered svcgate's last probe, else 0",
            backend_up.clone(),
        );
        let alerts_received = Family::<AlertLabels, Counter>::default();
        registry.register(
            names::ALERTS_RECEIVED,
            "Alerts received on the intake, by integration type and outcome; a refused request counts once, with \
             its reason",
            alerts_received.clone(),
        );
        let store_counts = StoreCountsCollector::default();
        registry.register_collector(Box::new(store_counts.clone()));
        let outbox_done = Family::<OutboxLabels, Counter>::default();
        registry.register(
            names::OUTBOX_DONE,
            "Incident calls the backend accepted, by kind",
            outbox_done.clone(),
        );
        let outbox_failures = Family::<OutboxLabels, Counter>::default();
        registry.register(
            names::OUTBOX_FAILURES,
            "Incident calls that failed and wait for a retry, by kind",
            outbox_failures.clone(),
        );
        // Both kinds exist from the start, so that rates and `increase` see the first call.
        for kind in OUTBOX_KINDS {
            drop(outbox_done.get_or_create(&OutboxLabels { kind }));
            drop(outbox_failures.get_or_create(&OutboxLabels { kind }));
        }
        let store_gauges_up = Gauge::default();
        registry.register(
            names::STORE_GAUGES_UP,
            "1 when this scrape read open alerts, the outbox backlog and the active V3 clients from the store, else 0 \
             (those not read are then left out)",
            store_gauges_up.clone(),
        );
        let v3_retired_clients_returned = Counter::default();
        registry.register(
            names::V3_RETIRED_CLIENTS_RETURNED,
            "Calls from a V3 client that was retired (no call for v3_client_retired_after), each return counted once",
            v3_retired_clients_returned.clone(),
        );
        let store_commits = CommitMetrics {
            duration: latency_histogram(),
            batch_size: Histogram::new(exponential_buckets(1.0, 2.0, 11)),
        };
        registry.register(
            names::STORE_COMMIT_DURATION,
            "Time one batch of store writes took, from its transaction's start to its durable commit",
            store_commits.duration.clone(),
        );
        registry.register(
            names::STORE_COMMIT_BATCH_SIZE,
            "Writes one store commit carried (alert events, on PostgreSQL)",
            store_commits.batch_size.clone(),
        );
        registry.register(
            names::BUILD,
            "The running build of svcgate",
            Info::new(vec![("version".to_owned(), env!("CARGO_PKG_VERSION").to_owned())]),
        );
        registry.register_collector(Box::new(ProcessCollector));
        Arc::new(Metrics {
            registry,
            alerts_received,
            store_counts,
            outbox_done,
            outbox_failures,
            store_gauges_up,
            v3_retired_clients_returned,
            store_commits,
            backend_up,
            connections_closed,
            answered: request_series::RequestSeries::new(requests.clone(), request_duration.clone()),
            requests,
            request_duration,
            backend_duration,
            id_lookups,
            graphql,
            v3_requests,
        })
    }

    /// Counts one connection closed or refused by the limits.
    pub fn connection_closed(&self, reason: &'static str) {
        self.connections_closed
            .get_or_create(&ClosedLabels { reason })
            .inc();
    }

    /// Counts one GraphQL outcome of `kind` (`completion` or `id`).
    pub fn graphql(&self, kind: &'static str, outcome: &'static str) {
        self.graphql.get_or_create(&GraphqlLabels { kind, outcome }).inc();
    }

    /// Counts one id lookup.
    pub fn id_lookup(&self, result: &'static str) {
        self.id_lookups.get_or_create(&LookupLabels { result }).inc();
    }

    /// Counts `count` alerts received through an address of `integration_type` with `outcome` (one of
    /// [`outcomes`]); `reason` is the refusal's code, empty otherwise.
    pub fn alerts_received(
        &self,
        integration_type: &'static str,
        outcome: &'static str,
        reason: &'static str,
        count: u64,
    ) {
        self.alerts_received
            .get_or_create(&AlertLabels {
                integration_type,
                outcome,
                reason,
            })
            .inc_by(count);
    }

    /// Counts one incident call of `kind`, accepted or failed.
    pub fn outbox_call(&self, kind: &str, accepted: bool) {
        let Some(kind) = OUTBOX_KINDS.into_iter().find(|known| *known == kind) else {
            return;
        };
        let family = if accepted {
            &self.outbox_done
        } else {
            &self.outbox_failures
        };
        family.get_or_create(&OutboxLabels { kind }).inc();
    }

    /// Sets the gauges counted in the store (open alerts by severity and the outbox backlog, from one query each;
    /// the active V3 clients that `active_clients` counts), the two reads run side by side, each waiting at most
    /// `timeout`. They are read at scrape time rather than kept by the writer so that every replica on a shared
    /// PostgreSQL reports the same, whole count (so dashboards take their `max`, not their `sum`). A read that
    /// fails or is slow leaves its own gauges out of this scrape (a stale count would look like a real one) and
    /// `svcgate_store_gauges_up` at 0; a slow scan of the V3 usage never hides the open alerts. `severities` are
    /// the alerts' severity names, most severe first: the gauge has one series for each, 0 when the store counts
    /// none.
    pub async fn refresh_from_store(
        &self,
        store: &dyn Store,
        timeout: Duration,
        severities: [&'static str; 6],
        active_clients: impl std::future::Future<Output = Result<u64, StoreError>>,
    ) {
        let alerts =
            async { Ok::<_, StoreError>((store.open_alert_counts().await?, store.outbox_backlog().await?)) };
        let (alerts, active_clients) = tokio::join!(
            bounded("open alerts and the outbox backlog", timeout, alerts),
            bounded("active V3 clients", timeout, active_clients),
        );
        let alerts = alerts.map(|(open, backlog)| {
            let open = severities.map(|name| {
                let count = open
                    .iter()
                    .filter(|(stored, _)| stored == name)
                    .map(|(_, count)| *count)
                    .sum::<u64>();
                (name, count)
            });
            (open, backlog)
        });
        self.store_gauges_up
            .set(i64::from(alerts.is_some() && active_clients.is_some()));
        self.store_counts.set(CountsRead {
            alerts,
            active_clients,
        });
    }

    /// The registry in the Prometheus text format.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        if prometheus_client::encoding::text::encode(&mut text, &self.registry).is_err() {
            text.clear();
        }
        text
    }
}

/// One of the store's counts for a scrape, waiting at most `timeout`; `None` (and a warning naming `what`) when the
/// store failed or was slower.
async fn bounded<T>(
    what: &'static str,
    timeout: Duration,
    read: impl std::future::Future<Output = Result<T, StoreError>>,
) -> Option<T> {
    match tokio::time::timeout(timeout, read).await {
        Ok(Ok(counts)) => Some(counts),
        Ok(Err(error)) => {
            tracing::warn!(%error, what, "metrics: the store's counts could not be read");
            None
        }
        Err(_) => {
            tracing::warn!(
                ?timeout,
                what,
                "metrics: the store's counts took longer than metrics_store_timeout"
            );
            None
        }
    }
}

/// What the store said at the last scrape; `None` for a count that could not be read.
#[derive(Debug, Clone, Copy, Default)]
struct CountsRead {
    /// Open alerts of each severity, most severe first, and the incident calls waiting.
    alerts: Option<([(&'static str, u64); 6], u64)>,
    /// V3 clients with a call within the retirement period.
    active_clients: Option<u64>,
}

/// Encodes the store's counts read for this scrape; nothing for those that could not be read.
#[derive(Debug, Clone, Default)]
struct StoreCountsCollector(Arc<std::sync::Mutex<CountsRead>>);

impl StoreCountsCollector {
    fn set(&self, counts: CountsRead) {
        *self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = counts;
    }
}

impl Collector for StoreCountsCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let counts = *self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((open_counts, backlog)) = counts.alerts {
            let open = Family::<SeverityLabels, Gauge>::default();
            for (severity, count) in open_counts {
                open.get_or_create(&SeverityLabels { severity })
                    .set(i64::try_from(count).unwrap_or(i64::MAX));
            }
            let help =
                "Open alerts (triggered or acknowledged) by severity, counted in the store when scraped.";
            open.encode(encoder.encode_descriptor(names::ALERTS_OPEN, help, None, open.metric_type())?)?;
            let backlog = ConstGauge::new(i64::try_from(backlog).unwrap_or(i64::MAX));
            let help = "Incident calls waiting in the outbox, counted in the store when scraped.";
            backlog.encode(encoder.encode_descriptor(
                names::OUTBOX_BACKLOG,
                help,
                None,
                backlog.metric_type(),
            )?)?;
        }
        let Some(active_clients) = counts.active_clients else {
            return Ok(());
        };
        let active = ConstGauge::new(i64::try_from(active_clients).unwrap_or(i64::MAX));
        let help =
            "V3 clients (a user and a product) with a call within v3_client_retired_after, counted in the \
                    store when scraped.";
        active.encode(encoder.encode_descriptor(
            names::V3_ACTIVE_CLIENTS,
            help,
            None,
            active.metric_type(),
        )?)
    }
}

/// Installs the global tracing subscriber; `filter` uses the `tracing` directive syntax. Lines reach stderr
/// through the [`BatchedStderr`] sink; keep the returned flusher until exit.
/// Colours only when stderr is a terminal.
pub fn init_logging(format: LogFormat, filter: &str) -> std::io::Result<LogFlusher> {
    let (sink, flusher) = BatchedStderr::start()?;
    let ansi = std::io::stderr().is_terminal();
    // A subscriber may already be installed (tests start several gateways in one process); keep the first.
    // `try_init` also passes `log` records (rustls, the store's pool) on to it.
    let subscriber = subscriber(format, filter, sink.clone(), ansi);
    let max_level = subscriber.max_level_hint();
    let installed = subscriber.try_init().is_ok();
    // Access lines skip the event when the subscriber would write them as plain lines into this sink: no colours,
    // no span around them, the access event on.
    if installed && !ansi && access_log::written_plain(filter, max_level) {
        access_log::write_directly(sink, format == LogFormat::Json);
    }
    Ok(flusher)
}

/// The subscriber [`init_logging`] installs, writing to `writer`: `<RFC 3339 UTC timestamp> <LEVEL>
/// <span{fields}:…> <message> <name>=<value>…` as text (tracing-subscriber's full format without targets), or
/// one flat JSON object a line.
pub fn subscriber<W>(
    format: LogFormat,
    filter: &str,
    writer: W,
    ansi: bool,
) -> Box<dyn Subscriber + Send + Sync>
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::Layer;
    let filter = tracing_subscriber::EnvFilter::try_new(filter)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    // Whatever `log_level` says, records that carry the data svcgate handles are never written.
    let filter = tracing_subscriber::filter::FilterExt::and(
        filter,
        // It may pass anything up to `trace`: the hint leaves the level to `filter` (an `and` with no hint has none,
        // which would make every disabled `debug!` in svcgate and its crates ask the subscriber).
        tracing_subscriber::filter::filter_fn(|metadata| !carries_data(metadata))
            .with_max_level_hint(tracing::level_filters::LevelFilter::TRACE),
    );
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(writer)
        .with_ansi(ansi)
        .with_target(false);
    let registry = tracing_subscriber::registry();
    match format {
        LogFormat::Text => Box::new(registry.with(layer.with_filter(filter))),
        LogFormat::Json => Box::new(registry.with(layer.json().flatten_event(true).with_filter(filter))),
    }
}

/// Whether a record of a dependency carries the data svcgate handles rather than what happened to it: the
/// PostgreSQL client's debug and trace lines print each statement's parameters (page sessions' CSRF tokens,
/// sealed OAuth tokens, whole alert payloads). svcgate's own lines name what happened and never carry a secret;
/// alert payloads appear nowhere in them.
fn carries_data(metadata: &tracing::Metadata<'_>) -> bool {
    metadata.target().starts_with("tokio_postgres") && *metadata.level() > tracing::Level::INFO
}

/// The header that carries a request's id (a constant: a name given as text is parsed again on every lookup).
pub const X_REQUEST_ID: http::HeaderName = http::HeaderName::from_static("x-request-id");

/// A request's id as it travels: the header value sent to the backend and back to the client, and the text its
/// log line shows. Made once per request; both headers share its bytes (one allocation instead of three: bench row 1, 1 KB and 50 conn: svcgate / bare 0.75 → 0.84 × (100 KB: 0.91 → 0.93 ×) with the other changes of its step (bench/RESULTS.md, 2026-11-26)).
#[derive(Debug, Clone)]
pub struct RequestId(HeaderValue);

impl RequestId {
    /// A fresh id: 16 lowercase hex digits.
    pub fn new() -> Self {
        let mut digits = [0u8; 16];
        let mut value = fastrand::u64(..);
        for digit in digits.iter_mut().rev() {
            *digit = b"0123456789abcdef"[(value & 0xf) as usize];
            value >>= 4;
        }
        RequestId(
            HeaderValue::from_maybe_shared(bytes::Bytes::copy_from_slice(&digits))
                .unwrap_or_else(|_| HeaderValue::from_static("0000000000000000")),
        )
    }

    /// The client's own `X-Request-Id`, when it is safe to pass on and log ([`acceptable_request_id`]).
    pub fn from_client(headers: &http::HeaderMap) -> Option<Self> {
        headers
            .get(X_REQUEST_ID)
            .filter(|value| value.to_str().is_ok_and(acceptable_request_id))
            .map(|value| RequestId(value.clone()))
    }

    /// A fixed id, for work no client asked for (the `translate` command).
    pub fn fixed(text: &'static str) -> Self {
        RequestId(HeaderValue::from_static(text))
    }

    /// The id as a header value.
    pub fn header(&self) -> HeaderValue {
        self.0.clone()
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        // Only visible ASCII gets in (`new`, `acceptable_request_id`), so the conversion cannot fail.
        self.0.to_str().unwrap_or("")
    }
}

impl Default for RequestId {
    fn default() -> Self {
        RequestId::new()
    }
}

impl std::fmt::Display for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether a client-supplied request id is safe to pass on and log (short, visible ASCII).
pub fn acceptable_request_id(value: &str) -> bool {
    !value.is_empty()
        && value.len() <= 128
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b))
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("outer \x1b failure")]
    struct Outer(#[source] Inner);

    #[derive(Debug, thiserror::Error)]
    #[error("inner cause")]
    struct Inner;

    /// Collects what the subscriber writes.
    #[derive(Clone, Default)]
    pub(super) struct Captured(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .map_err(|_| std::io::ErrorKind::Other)?
                .extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl<'a> MakeWriter<'a> for Captured {
        type Writer = Captured;
        fn make_writer(&'a self) -> Self::Writer {
            self.clone()
        }
    }

    impl Captured {
        /// What was written so far.
        pub(super) fn text(&self) -> String {
            String::from_utf8_lossy(&self.0.lock().map(|bytes| bytes.clone()).unwrap_or_default())
                .into_owned()
        }
    }

    /// What the installed layout writes for `log`.
    fn logged(format: LogFormat, ansi: bool, log: impl Fn()) -> String {
        let captured = Captured::default();
        let subscriber = subscriber(format, "trace", captured.clone(), ansi);
        tracing::subscriber::with_default(subscriber, log);
        captured.text()
    }

    /// Drops each line's timestamp, which differs between two runs.
    fn without_timestamps(text: &str) -> Vec<String> {
        text.lines()
            .map(|line| line.split_once("Z ").map_or(line, |(_, rest)| rest).to_owned())
            .collect()
    }

    fn events() {
        let peer = "127.0.0.1:5000";
        let span = tracing::debug_span!("connection", %peer, id = 7);
        let _entered = span.enter();
        tracing::info!(
            request_id = "ab12",
            method = %http::Method::GET,
            kind = "passthrough",
            route = "/api/v4/projects/1",
            status = 200u16,
            latency_ms = 0.945,
            backend_calls = 1usize,
            "request"
        );
        tracing::warn!(
            quoted = "a \"b\" \\ c\td é",
            negative = -3i64,
            flag = true,
            "odd values"
        );
        tracing::error!(error = %"refused", "message with \x1b[31m escape \u{85} and {}", 5);
        let failure = Outer(Inner);
        tracing::warn!(
            error = &failure as &(dyn std::error::Error + 'static),
            "with sources"
        );
        tracing::warn!(
            error = &Inner as &(dyn std::error::Error + 'static),
            "without sources"
        );
        tracing::debug!(r#type = "x", "raw name");
        tracing::trace!("no fields");
        tracing::info!(message = 5u64, flag = false);
        tracing::info!(message = true);
        tracing::info!(
            "log.target" = "rustls::client",
            "log.line" = 7u64,
            "from a log record"
        );
    }

    #[test]
    fn text_lines_have_the_layout_ops_read() {
        let text = logged(LogFormat::Text, false, events);
        let expected = [
            r#" INFO connection{peer=127.0.0.1:5000 id=7}: request request_id="ab12" method=GET kind="passthrough" route="/api/v4/projects/1" status=200 latency_ms=0.945 backend_calls=1"#,
            r#" WARN connection{peer=127.0.0.1:5000 id=7}: odd values quoted="a \"b\" \\ c\td é" negative=-3 flag=true"#,
            r#"ERROR connection{peer=127.0.0.1:5000 id=7}: message with \x1b[31m escape \u{85} and 5 error=refused"#,
            r#" WARN connection{peer=127.0.0.1:5000 id=7}: with sources error=outer \x1b failure error.sources=[inner cause]"#,
            r#" WARN connection{peer=127.0.0.1:5000 id=7}: without sources error=inner cause"#,
            r#"DEBUG connection{peer=127.0.0.1:5000 id=7}: raw name type="x""#,
            r#"TRACE connection{peer=127.0.0.1:5000 id=7}: no fields"#,
            r#" INFO connection{peer=127.0.0.1:5000 id=7}: 5 flag=false"#,
            r#" INFO connection{peer=127.0.0.1:5000 id=7}: true"#,
            r#" INFO connection{peer=127.0.0.1:5000 id=7}: from a log record"#,
        ];
        assert_eq!(without_timestamps(&text), expected);
    }

    #[test]
    fn text_lines_start_with_an_rfc3339_utc_timestamp_in_microseconds() {
        let text = logged(LogFormat::Text, false, events);
        assert_eq!(text.lines().count(), 10);
        for line in text.lines() {
            let (timestamp, _) = line.split_once(' ').unwrap_or_default();
            assert_eq!(timestamp.len(), "2026-11-22T17:25:45.526728Z".len(), "{line}");
            assert!(humantime::parse_rfc3339(timestamp).is_ok(), "{line}");
        }
    }

    #[test]
    fn coloured_lines_keep_the_same_text_once_escapes_are_removed() {
        let coloured = logged(LogFormat::Text, true, events);
        let mut plain = coloured.clone();
        for escape in [
            "\x1b[2m", "\x1b[1m", "\x1b[3m", "\x1b[0m", "\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[34m",
            "\x1b[35m",
        ] {
            plain = plain.replace(escape, "");
        }
        let text = logged(LogFormat::Text, false, events);
        assert_eq!(without_timestamps(&plain), without_timestamps(&text));
        assert!(coloured.contains("\x1b[32m INFO\x1b[0m"));
    }

    #[test]
    fn json_lines_are_flat_objects() {
        let text = logged(LogFormat::Json, false, || {
            tracing::info!(status = 200u16, route = "/api/v4/projects/1", "request");
        });
        let line: serde_json::Value = serde_json::from_str(text.trim_end()).unwrap_or_default();
        assert_eq!(line["message"], "request");
        assert_eq!(line["status"], 200);
        assert_eq!(line["level"], "INFO");
        assert!(line["timestamp"].is_string());
    }

    #[test]
    fn metrics_render_in_prometheus_text_format() {
        let metrics = Metrics::new();
        metrics
            .requests
            .get_or_create(&RequestLabels {
                kind: "passthrough",
                rule: String::new(),
                status: 200,
            })
            .inc();
        let text = metrics.encode();
        assert!(
            text.contains("svcgate_requests_total{kind=\"passthrough\",rule=\"\",status=\"200\"} 1"),
            "{text}"
        );
        assert!(text.ends_with("# EOF\n"));
    }

    #[test]
    fn a_fresh_registry_shows_the_build_and_both_outbox_kinds_at_zero() {
        let metrics = Metrics::new();
        metrics.outbox_call("create_incident", false);
        metrics.outbox_call("not_a_kind", true);
        metrics.alerts_received("prometheus", outcomes::REFUSED, "rate_limited", 1);
        let text = metrics.encode();
        let version = env!("CARGO_PKG_VERSION");
        for line in [
            format!("svcgate_build_info{{version=\"{version}\"}} 1"),
            "svcgate_incident_outbox_failures_total{kind=\"create_incident\"} 1".to_owned(),
            "svcgate_incident_outbox_failures_total{kind=\"close_incident\"} 0".to_owned(),
            "svcgate_incident_outbox_done_total{kind=\"create_incident\"} 0".to_owned(),
            "svcgate_incident_outbox_done_total{kind=\"close_incident\"} 0".to_owned(),
            "svcgate_alerts_received_total{integration_type=\"prometheus\",outcome=\"refused\",reason=\"rate_limited\"} 1"
                .to_owned(),
            "svcgate_store_gauges_up 0".to_owned(),
        ] {
            assert!(text.lines().any(|written| written == line), "{line} not in {text}");
        }
        assert!(!text.contains("not_a_kind"), "{text}");
        // Nothing was read from a store yet: the store's counts are left out, not shown as 0.
        assert!(!text.contains("svcgate_alerts_open"), "{text}");
        assert!(!text.contains("svcgate_incident_outbox_backlog"), "{text}");
    }

    #[tokio::test]
    #[allow(clippy::unwrap_used)]
    async fn a_slow_count_of_active_clients_leaves_only_itself_out() {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::store::SqliteStore::open(dir.path()).unwrap();
        let metrics = Metrics::new();
        let severities = ["critical", "high", "medium", "low", "info", "unknown"];
        let has = |text: &str, line: &str| text.lines().any(|written| written == line);
        let timeout = Duration::from_millis(200);
        metrics
            .refresh_from_store(&store, timeout, severities, std::future::pending())
            .await;
        let text = metrics.encode();
        assert!(has(&text, "svcgate_alerts_open{severity=\"medium\"} 0"), "{text}");
        assert!(has(&text, "svcgate_incident_outbox_backlog 0"), "{text}");
        assert!(!text.contains("svcgate_v3_active_clients"), "{text}");
        assert!(has(&text, "svcgate_store_gauges_up 0"), "{text}");
        metrics
            .refresh_from_store(&store, timeout, severities, async { Ok(4) })
            .await;
        let text = metrics.encode();
        assert!(has(&text, "svcgate_v3_active_clients 4"), "{text}");
        assert!(has(&text, "svcgate_alerts_open{severity=\"medium\"} 0"), "{text}");
        assert!(has(&text, "svcgate_store_gauges_up 1"), "{text}");
    }

    #[test]
    fn request_ids_are_checked_before_being_trusted() {
        assert!(acceptable_request_id("abc-123"));
        assert!(!acceptable_request_id("a b"));
        assert!(!acceptable_request_id(""));
        assert!(!acceptable_request_id(&"x".repeat(129)));
        let id = RequestId::new();
        assert_eq!(id.as_str().len(), 16);
        assert!(id
            .as_str()
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
    }
}
