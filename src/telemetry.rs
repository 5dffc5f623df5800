//! Logs, metrics and request ids: everything ops read off a running gateway.
//!
//! All metric names are constants in [`names`], so dashboards and this file agree. Labels are low-cardinality by
//! construction: a route kind, a rule's V3 template (bounded by the rule table) and a status code, never a raw path,
//! user or token.

use std::io::IsTerminal;
use std::sync::Arc;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

use crate::config::LogFormat;
use crate::logsink::{BatchedStderr, LogFlusher};

/// Metric names, one place for all of them.
pub mod names {
    /// Requests answered, by route kind, rule and status.
    pub const REQUESTS: &str = "svcgate_requests";
    /// Time from request head to response head, by route kind.
    pub const REQUEST_DURATION: &str = "svcgate_request_duration_seconds";
    /// Time the backend took to answer one call.
    pub const BACKEND_DURATION: &str = "svcgate_backend_request_duration_seconds";
    /// Id ↔ iid lookups by where they were answered.
    pub const ID_INDEX_LOOKUPS: &str = "svcgate_id_index_lookups";
    /// V3 requests by route template, the rule's release and status class.
    pub const V3_REQUESTS: &str = "svcgate_v3_requests";
    /// Client connections closed or refused by the connection limits, by reason.
    pub const CONNECTIONS_CLOSED: &str = "svcgate_client_connections_closed";
    /// 1 when the backend answered the last readiness probe, else 0.
    pub const BACKEND_UP: &str = "svcgate_backend_up";
}

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
    /// `passthrough`, `rewrite`, `internal` or `alerts`.
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
    /// Backend call latency.
    pub backend_duration: Histogram,
    /// Id index lookups by result.
    pub id_lookups: Family<LookupLabels, Counter>,
    /// V3 requests.
    pub v3_requests: Family<V3Labels, Counter>,
    /// Client connections closed or refused by the limits.
    pub connections_closed: Family<ClosedLabels, Counter>,
    /// 1 while the backend answers the periodic probe, 0 before the first answer and while it fails.
    pub backend_up: Gauge,
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
        Arc::new(Metrics {
            registry,
            backend_up,
            connections_closed,
            requests,
            request_duration,
            backend_duration,
            id_lookups,
            v3_requests,
        })
    }

    /// Counts one connection closed or refused by the limits.
    pub fn connection_closed(&self, reason: &'static str) {
        self.connections_closed
            .get_or_create(&ClosedLabels { reason })
            .inc();
    }

    /// Counts one id lookup.
    pub fn id_lookup(&self, result: &'static str) {
        self.id_lookups.get_or_create(&LookupLabels { result }).inc();
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

/// Installs the global tracing subscriber; `filter` uses the `tracing` directive syntax. Lines reach stderr
/// through the [`BatchedStderr`](crate::logsink::BatchedStderr) sink; keep the returned flusher until exit.
/// Colours only when stderr is a terminal.
pub fn init_logging(format: LogFormat, filter: &str) -> std::io::Result<LogFlusher> {
    let filter = tracing_subscriber::EnvFilter::try_new(filter)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let (sink, flusher) = BatchedStderr::start()?;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(sink)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false);
    let installed = match format {
        LogFormat::Text => builder.event_format(crate::logformat::TextLine).try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
    // A subscriber may already be installed (tests start several gateways in one process); keep the first.
    drop(installed);
    Ok(flusher)
}

/// A fresh request id: 16 lowercase hex digits.
pub fn new_request_id() -> String {
    format!("{:016x}", fastrand::u64(..))
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
    use super::*;

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
    fn request_ids_are_checked_before_being_trusted() {
        assert!(acceptable_request_id("abc-123"));
        assert!(!acceptable_request_id("a b"));
        assert!(!acceptable_request_id(""));
        assert!(!acceptable_request_id(&"x".repeat(129)));
        assert_eq!(new_request_id().len(), 16);
    }
}
