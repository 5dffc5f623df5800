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

use tracing::Subscriber;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::util::SubscriberInitExt;

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
    let (sink, flusher) = BatchedStderr::start()?;
    // A subscriber may already be installed (tests start several gateways in one process); keep the first.
    // `try_init` also passes `log` records (rustls, the store's pool) on to it.
    drop(subscriber(format, filter, sink, std::io::stderr().is_terminal()).try_init());
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
    let filter = tracing_subscriber::EnvFilter::try_new(filter)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(ansi)
        .with_target(false);
    match format {
        LogFormat::Text => Box::new(builder.finish()),
        LogFormat::Json => Box::new(builder.json().flatten_event(true).finish()),
    }
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
    struct Captured(Arc<Mutex<Vec<u8>>>);

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
        fn text(&self) -> String {
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
    fn request_ids_are_checked_before_being_trusted() {
        assert!(acceptable_request_id("abc-123"));
        assert!(!acceptable_request_id("a b"));
        assert!(!acceptable_request_id(""));
        assert!(!acceptable_request_id(&"x".repeat(129)));
        assert_eq!(new_request_id().len(), 16);
    }
}
