//! The log of alerts the store could not take: during an outage every alert fails, and one line per alert would
//! flood the log and hide everything else. The first failure is logged at once; later ones are counted and logged
//! as one line per [`FAILURE_LOG_INTERVAL`], and the first success after failures says how many there were.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::store::StoreError;

/// How often, at most, a line reports store failures of alerts.
pub const FAILURE_LOG_INTERVAL: Duration = Duration::from_secs(10);

/// Counts alert store failures and logs them at a bounded rate.
#[derive(Debug, Default)]
pub struct StoreFailures {
    /// Whether failures were seen since the last success (read on every success, so kept outside the lock).
    failing: AtomicBool,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// When the last line was written.
    logged_at: Option<Instant>,
    /// Failures since that line, by whether their commit may have been sent.
    not_stored: u64,
    undecided: u64,
    /// Failures since the last success.
    since_success: u64,
}

impl StoreFailures {
    /// Counts one alert the store failed (`integration` received it); writes a line if none was written within
    /// [`FAILURE_LOG_INTERVAL`].
    pub fn failed(&self, error: &StoreError, integration: u64) {
        self.failing.store(true, Ordering::Relaxed);
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        match error {
            StoreError::Undecided(_) => state.undecided += 1,
            _ => state.not_stored += 1,
        }
        state.since_success += 1;
        let now = Instant::now();
        if state
            .logged_at
            .is_some_and(|at| now.duration_since(at) < FAILURE_LOG_INTERVAL)
        {
            return;
        }
        let (not_stored, undecided) = (state.not_stored, state.undecided);
        state.not_stored = 0;
        state.undecided = 0;
        state.logged_at = Some(now);
        drop(state);
        tracing::error!(
            %error,
            integration,
            not_stored,
            may_or_may_not_be_stored = undecided,
            interval = ?FAILURE_LOG_INTERVAL,
            "alerts the store could not take since the last such line (answered 503 with Retry-After)"
        );
    }

    /// Notes an alert the store took; after failures, writes one line saying how many there were.
    pub fn succeeded(&self) {
        if !self.failing.swap(false, Ordering::Relaxed) {
            return;
        }
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let failed = std::mem::take(&mut state.since_success);
        state.not_stored = 0;
        state.undecided = 0;
        state.logged_at = None;
        drop(state);
        if failed > 0 {
            tracing::info!(failed, "the store takes alerts again");
        }
    }

    /// Failures since the last success (for tests and the log).
    pub fn since_success(&self) -> u64 {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .since_success
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_counted_until_a_success_resets_them() {
        let failures = StoreFailures::default();
        for _ in 0..1000 {
            failures.failed(&StoreError::Unavailable("refused".to_owned()), 7);
        }
        failures.failed(&StoreError::Undecided("reset".to_owned()), 7);
        assert_eq!(failures.since_success(), 1001);
        failures.succeeded();
        assert_eq!(failures.since_success(), 0);
    }
}
