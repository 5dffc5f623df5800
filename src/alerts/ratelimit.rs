//! A token bucket per integration: `rate` alerts a second with bursts of `burst`, off unless configured.
//!
//! With several replicas on one PostgreSQL, each replica holds its own buckets and takes its share of the rate:
//! the configured rate and burst divided by the number of live replicas ([`RateLimiter::set_replicas`]), so the
//! integration's limit holds in total when the load balancer spreads its senders evenly. A shared bucket row
//! would hold it exactly but cost a database write per alert request.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// The buckets of every integration.
pub struct RateLimiter {
    rate: Option<f64>,
    burst: f64,
    /// Live replicas sharing the limit (1 on its own).
    replicas: AtomicU64,
    buckets: Mutex<HashMap<u64, (f64, Instant)>>,
}

impl RateLimiter {
    /// A limiter of `rate` a second (`None`: unlimited) with bursts of `burst`.
    pub fn new(rate: Option<u32>, burst: u32) -> Self {
        RateLimiter {
            rate: rate.map(f64::from),
            burst: f64::from(burst.max(1)),
            replicas: AtomicU64::new(1),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Shares the limit among `replicas` live replicas (at least 1).
    pub fn set_replicas(&self, replicas: u64) {
        self.replicas.store(replicas.max(1), Ordering::Relaxed);
    }

    /// Takes `count` tokens for `integration`; when there are too few, the seconds to wait.
    pub fn take(&self, integration: u64, count: usize) -> Result<(), u64> {
        let Some(rate) = self.rate else {
            return Ok(());
        };
        let share = self.replicas.load(Ordering::Relaxed) as f64;
        let (rate, burst) = (rate / share, (self.burst / share).max(1.0));
        let Ok(mut buckets) = self.buckets.lock() else {
            return Ok(());
        };
        let now = Instant::now();
        let (tokens, last) = buckets.entry(integration).or_insert((burst, now));
        *tokens = (*tokens + now.duration_since(*last).as_secs_f64() * rate).min(burst);
        *last = now;
        let wanted = count.max(1) as f64;
        if *tokens >= wanted {
            *tokens -= wanted;
            Ok(())
        } else {
            Err(((wanted - *tokens) / rate).ceil().max(1.0) as u64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_passes_then_the_sender_is_told_when_to_retry() {
        let limiter = RateLimiter::new(Some(1), 3);
        assert!((0..3).all(|_| limiter.take(1, 1).is_ok()));
        assert_eq!(limiter.take(1, 1), Err(1));
        assert!(limiter.take(2, 1).is_ok(), "buckets are per integration");
    }

    #[test]
    fn replicas_share_the_rate_and_the_burst() {
        let limiter = RateLimiter::new(Some(2), 6);
        limiter.set_replicas(3);
        assert!((0..2).all(|_| limiter.take(1, 1).is_ok()), "a third of the burst");
        // A third of the rate: one token every 1.5 s, so the sender waits 2 s.
        assert_eq!(limiter.take(1, 1), Err(2));
    }

    #[test]
    fn no_rate_means_no_limit() {
        let limiter = RateLimiter::new(None, 1);
        assert!((0..1000).all(|_| limiter.take(1, 1).is_ok()));
    }
}
