//! The request counter's and the duration histogram's series for each kind of request, resolved once instead of
//! looked up by label on every answer.
//!
//! A `Family` lookup hashes the label set and takes the family's lock; the passthrough answers tens of thousands
//! of requests a second with a handful of label sets. Here each kind's duration histogram, and its counter for
//! each status, is taken from the family on first use and kept. The series are the family's own: the registry
//! exports them as before, and a kind or status never answered still has no series. Rewritten requests, labelled
//! by their rule as well, keep the family lookup. Resolving once: bench row 1, 1 KB and 50 conn: svcgate / bare 0.75 → 0.84 × (100 KB: 0.91 → 0.93 ×) with the other changes of its step (bench/RESULTS.md, 2026-11-26).

use std::sync::OnceLock;
use std::time::Duration;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;

use super::{HistogramFamily, KindLabels, RequestLabels};

/// The kinds of request with series of their own here (every kind `RequestContext::kind` takes but `rewrite`).
const KINDS: [&str; 4] = ["passthrough", "internal", "alerts", "pages"];

/// The statuses with a kept counter: 100 to 599 (any other status is looked up by label).
const FIRST_STATUS: u16 = 100;
const STATUSES: usize = 500;

/// One kind's kept series.
struct KindSeries {
    /// The kind's duration histogram.
    duration: OnceLock<Histogram>,
    /// The kind's request counter for each status from [`FIRST_STATUS`].
    by_status: Box<[OnceLock<Counter>]>,
}

/// Every kind's kept series, and the families they come from.
pub struct RequestSeries {
    requests: Family<RequestLabels, Counter>,
    durations: HistogramFamily<KindLabels>,
    kinds: [KindSeries; KINDS.len()],
}

impl RequestSeries {
    /// Series of `requests` and `durations`, none resolved yet.
    pub(super) fn new(
        requests: Family<RequestLabels, Counter>,
        durations: HistogramFamily<KindLabels>,
    ) -> Self {
        RequestSeries {
            requests,
            durations,
            kinds: std::array::from_fn(|_| KindSeries {
                duration: OnceLock::new(),
                by_status: (0..STATUSES).map(|_| OnceLock::new()).collect(),
            }),
        }
    }

    /// Counts one answered request of `kind` (for `rewrite`, of the rule `rule`) with `status`, which took `elapsed`.
    pub fn answered(&self, kind: &'static str, rule: &str, status: u16, elapsed: Duration) {
        let seconds = elapsed.as_secs_f64();
        let kept = KINDS
            .iter()
            .position(|known| *known == kind)
            .filter(|_| rule.is_empty());
        let Some(series) = kept.map(|index| &self.kinds[index]) else {
            self.durations
                .get_or_create(&KindLabels { kind })
                .observe(seconds);
            self.count(kind, rule, status);
            return;
        };
        series
            .duration
            .get_or_init(|| self.durations.get_or_create(&KindLabels { kind }).clone())
            .observe(seconds);
        let slot = status
            .checked_sub(FIRST_STATUS)
            .and_then(|offset| series.by_status.get(usize::from(offset)));
        match slot {
            Some(slot) => {
                slot.get_or_init(|| self.labelled(kind, rule, status)).inc();
            }
            None => self.count(kind, rule, status),
        }
    }

    /// Counts one request by looking its series up by label.
    fn count(&self, kind: &'static str, rule: &str, status: u16) {
        self.labelled(kind, rule, status).inc();
    }

    /// The family's counter for these labels.
    fn labelled(&self, kind: &'static str, rule: &str, status: u16) -> Counter {
        self.requests
            .get_or_create(&RequestLabels {
                kind,
                rule: rule.to_owned(),
                status,
            })
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_and_looked_up_series_are_the_same_series() {
        let requests = Family::<RequestLabels, Counter>::default();
        let durations: HistogramFamily<KindLabels> =
            Family::new_with_constructor(super::super::latency_histogram);
        let series = RequestSeries::new(requests.clone(), durations.clone());
        for status in [200, 200, 404, 999] {
            series.answered("passthrough", "", status, Duration::from_millis(1));
        }
        series.answered("rewrite", "/projects/:id", 200, Duration::from_millis(1));
        let count = |kind, rule: &str, status| {
            requests
                .get_or_create(&RequestLabels {
                    kind,
                    rule: rule.to_owned(),
                    status,
                })
                .get()
        };
        assert_eq!(count("passthrough", "", 200), 2);
        assert_eq!(count("passthrough", "", 404), 1);
        assert_eq!(count("passthrough", "", 999), 1);
        assert_eq!(count("rewrite", "/projects/:id", 200), 1);
        assert_eq!(count("internal", "", 200), 0);
    }
}
