//! A token bucket per integration: `rate` alerts a second with bursts of `burst`, off unless configured.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

/// The buckets of every integration.
pub struct RateLimiter {
    rate: Option<f64>,
    burst: f64,
    buckets: Mutex<HashMap<u64, (f64, Instant)>>,
}

impl RateLimiter {
    /// A limiter of `rate` a second (`None`: unlimited) with bursts of `burst`.
    pub fn new(rate: Option<u32>, burst: u32) -> Self {
        RateLimiter {
            rate: rate.map(f64::from),
            burst: f64::from(burst.max(1)),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes `count` tokens for `integration`; when there are too few, the seconds to wait.
    pub fn take(&self, integration: u64, count: usize) -> Result<(), u64> {
        let Some(rate) = self.rate else {
            return Ok(());
        };
        let Ok(mut buckets) = self.buckets.lock() else {
            return Ok(());
        };
        let now = Instant::now();
        let (tokens, last) = buckets.entry(integration).or_insert((self.burst, now));
        *tokens = (*tokens + now.duration_since(*last).as_secs_f64() * rate).min(self.burst);
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
    fn no_rate_means_no_limit() {
        let limiter = RateLimiter::new(None, 1);
        assert!((0..1000).all(|_| limiter.take(1, 1).is_ok()));
    }
}
