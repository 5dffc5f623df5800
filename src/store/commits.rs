//! What the stores' writers report of each commit: how many writes it carried and how long it took, into the
//! gateway's histograms. The gateway attaches them once the store is open ([`super::Store::observe_commits`]);
//! before that, and in commands that serve no metrics (`store copy`), commits are not observed.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use prometheus_client::metrics::histogram::Histogram;

/// The histograms a store's commits are observed into.
#[derive(Debug, Clone)]
pub struct CommitMetrics {
    /// Seconds from a batch's transaction start to its durable commit.
    pub duration: Histogram,
    /// Writes each commit carried.
    pub batch_size: Histogram,
}

/// Shared by a store and its writer: where commits are observed, once attached.
#[derive(Debug, Clone, Default)]
pub struct CommitObserver(Arc<OnceLock<CommitMetrics>>);

impl CommitObserver {
    /// Starts observing into `metrics`; a store already observed keeps its first histograms.
    pub fn attach(&self, metrics: CommitMetrics) {
        drop(self.0.set(metrics));
    }

    /// Records one commit of `writes` writes that began at `started` (whether it succeeded or not: a failed
    /// commit took its senders' time too).
    pub fn observe(&self, writes: usize, started: Instant) {
        if let Some(metrics) = self.0.get() {
            metrics.duration.observe(started.elapsed().as_secs_f64());
            metrics.batch_size.observe(writes as f64);
        }
    }
}
