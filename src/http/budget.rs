//! Memory held for request and answer bodies: one byte budget per side, shared by every request, a read timeout,
//! and for alert payloads a share per sender and a stall timeout.
//!
//! svcgate streams bodies it does not rewrite; the few it must hold whole (alert payloads, V3 request bodies it
//! converts, V4 answers it reshapes) are read through a [`BodyBudget`]. Each such read takes bytes from the
//! budget as the buffer grows (its capacity, not its length, so the doubling of a growing buffer is counted)
//! and gives them back when the request is done with them ([`Held`]). Past the budget the read stops at once,
//! and the request is answered 503 with `Retry-After`: under a flood of large bodies, memory stays bounded by
//! the budgets plus one frame per connection, and the bodies that fit keep going through. A body that arrives
//! slower than the read timeout is refused too, so a sender cannot hold its share of the budget by trickling.
//!
//! A read may also take its bytes from a [`Share`] of the budget (the alert intake gives each integration one),
//! so that one sender's bodies cannot hold the whole budget: the share is bounded in bytes, not in requests, so
//! many small bodies pass where a few large ones are refused. And a read may have a stall timeout: a body that
//! brings no byte for that long is refused at once, whatever is left of its read timeout, so a body that stops
//! gives its bytes back within seconds instead of holding them until the read timeout.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Why a body could not be read into memory.
#[derive(Debug, thiserror::Error)]
pub enum BudgetError {
    /// The body is larger than the per-request cap.
    #[error("the body is larger than {max} bytes")]
    TooLarge {
        /// The cap.
        max: usize,
    },
    /// The shared budget is spent by other requests' bodies for now.
    #[error("svcgate holds {budget} bytes of bodies already; retry shortly")]
    Exhausted {
        /// The budget.
        budget: usize,
    },
    /// The read's [`Share`] is spent by other bodies of the same sender for now.
    #[error("this sender's bodies hold {share} bytes already; retry shortly")]
    ShareExhausted {
        /// The share.
        share: usize,
    },
    /// The body did not arrive within the read timeout.
    #[error("the body did not arrive within {0:?}")]
    TimedOut(Duration),
    /// No byte of the body arrived for the stall timeout.
    #[error("no byte of the body arrived for {0:?}")]
    Stalled(Duration),
    /// The connection failed while the body was read.
    #[error("the body could not be read: {0}")]
    Unreadable(String),
}

/// Seconds a client is told to wait (`Retry-After`) when a budget is spent.
pub const RETRY_AFTER_SECONDS: u32 = 1;

/// A byte budget for bodies held in memory.
#[derive(Debug, Clone)]
pub struct BodyBudget {
    bytes: Arc<Semaphore>,
    total: usize,
    read_timeout: Duration,
    /// Longest a read may wait for its body's next bytes (`None`: only the read timeout bounds it).
    stall_timeout: Option<Duration>,
    /// The part of the budget reads also take their bytes from, when they have one.
    share: Option<Share>,
}

/// A part of a budget reserved to no one but capped: reads through it take their bytes from it and from the
/// budget alike, so all of them together hold at most its size.
#[derive(Debug, Clone)]
pub struct Share {
    bytes: Arc<Semaphore>,
    total: usize,
}

impl Share {
    /// A share of `total` bytes.
    pub fn new(total: usize) -> Self {
        Share {
            bytes: Arc::new(Semaphore::new(total.min(Semaphore::MAX_PERMITS))),
            total,
        }
    }

    /// Bytes of the share not held by any read now.
    pub fn available(&self) -> usize {
        self.bytes.available_permits()
    }
}

/// Bytes taken from a budget (and its share); given back when dropped.
#[derive(Debug)]
pub struct Held {
    permit: Option<OwnedSemaphorePermit>,
    shared: Option<OwnedSemaphorePermit>,
}

/// Takes `count` permits from `semaphore` now, or none.
fn try_take(semaphore: &Arc<Semaphore>, count: usize) -> Option<OwnedSemaphorePermit> {
    let count = u32::try_from(count).ok()?;
    Arc::clone(semaphore).try_acquire_many_owned(count).ok()
}

/// Adds `more` to what `held` holds.
fn merge(held: &mut Option<OwnedSemaphorePermit>, more: OwnedSemaphorePermit) {
    match held {
        Some(permit) => permit.merge(more),
        None => *held = Some(more),
    }
}

impl Held {
    /// Nothing held.
    pub fn none() -> Self {
        Held {
            permit: None,
            shared: None,
        }
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.permit.as_ref().map_or(0, OwnedSemaphorePermit::num_permits)
    }
}

impl BodyBudget {
    /// A budget of `total` bytes; each read must complete within `read_timeout`.
    pub fn new(total: usize, read_timeout: Duration) -> Self {
        BodyBudget {
            bytes: Arc::new(Semaphore::new(total.min(Semaphore::MAX_PERMITS))),
            total,
            read_timeout,
            stall_timeout: None,
            share: None,
        }
    }

    /// The same budget, whose reads fail once their body brings no byte for `stall_timeout`.
    pub fn with_stall_timeout(&self, stall_timeout: Duration) -> Self {
        BodyBudget {
            stall_timeout: Some(stall_timeout),
            ..self.clone()
        }
    }

    /// The same budget, whose reads also take their bytes from `share`.
    pub fn within(&self, share: &Share) -> Self {
        BodyBudget {
            share: Some(share.clone()),
            ..self.clone()
        }
    }

    /// The same budget (the same bytes), with another read timeout.
    pub fn with_read_timeout(&self, read_timeout: Duration) -> Self {
        BodyBudget {
            read_timeout,
            ..self.clone()
        }
    }

    /// The read timeout.
    pub fn read_timeout(&self) -> Duration {
        self.read_timeout
    }

    /// Bytes not held by any request now.
    pub fn available(&self) -> usize {
        self.bytes.available_permits()
    }

    fn take(&self, held: &mut Held, bytes: usize) -> Result<(), BudgetError> {
        if bytes == 0 {
            return Ok(());
        }
        // The share first: a sender over its share is refused without touching the budget others need. When
        // the budget then refuses, the share's bytes go back as `shared` is dropped.
        let shared = match &self.share {
            Some(share) => Some(
                try_take(&share.bytes, bytes).ok_or(BudgetError::ShareExhausted { share: share.total })?,
            ),
            None => None,
        };
        let more = try_take(&self.bytes, bytes).ok_or(BudgetError::Exhausted { budget: self.total })?;
        merge(&mut held.permit, more);
        if let Some(shared) = shared {
            merge(&mut held.shared, shared);
        }
        Ok(())
    }

    /// Reads `body` whole: at most `max` bytes, declared ones (`Content-Length`) taken from the budget before
    /// the first byte is read, within the read timeout.
    pub async fn read<B>(
        &self,
        body: B,
        declared: Option<u64>,
        max: usize,
    ) -> Result<(Bytes, Held), BudgetError>
    where
        B: http_body::Body<Data = Bytes> + Unpin,
        B::Error: std::fmt::Display,
    {
        if declared.is_some_and(|length| length > max as u64) {
            return Err(BudgetError::TooLarge { max });
        }
        match tokio::time::timeout(self.read_timeout, self.read_within(body, declared, max)).await {
            Ok(outcome) => outcome,
            Err(_) => Err(BudgetError::TimedOut(self.read_timeout)),
        }
    }

    async fn read_within<B>(
        &self,
        mut body: B,
        declared: Option<u64>,
        max: usize,
    ) -> Result<(Bytes, Held), BudgetError>
    where
        B: http_body::Body<Data = Bytes> + Unpin,
        B::Error: std::fmt::Display,
    {
        let mut held = Held::none();
        let capacity = declared.map_or(0, |length| usize::try_from(length).unwrap_or(max));
        self.take(&mut held, capacity)?;
        let mut collected: Vec<u8> = Vec::with_capacity(capacity);
        let mut single: Option<Bytes> = None;
        loop {
            let next = match self.stall_timeout {
                Some(stall) => tokio::time::timeout(stall, body.frame())
                    .await
                    .map_err(|_| BudgetError::Stalled(stall))?,
                None => body.frame().await,
            };
            let Some(frame) = next else {
                break;
            };
            let frame = frame.map_err(|error| BudgetError::Unreadable(error.to_string()))?;
            let Ok(data) = frame.into_data() else {
                continue;
            };
            let length = single.as_ref().map_or(collected.len(), Bytes::len) + data.len();
            if length > max {
                return Err(BudgetError::TooLarge { max });
            }
            // A body of one frame is kept as it came, without a copy.
            if collected.is_empty() && single.is_none() && capacity == 0 {
                self.take(&mut held, data.len())?;
                single = Some(data);
                continue;
            }
            if let Some(first) = single.take() {
                collected.extend_from_slice(&first);
            }
            let needed = collected.len() + data.len();
            if collected.capacity() < needed {
                // Doubling as `Vec` does, but never past the largest body allowed: a body within its limit never
                // holds more of the budget than that limit.
                let target = needed
                    .max(collected.capacity().saturating_mul(2))
                    .min(max.max(needed));
                collected.reserve_exact(target - collected.len());
            }
            let grown = collected.capacity().saturating_sub(held.bytes());
            self.take(&mut held, grown)?;
            collected.extend_from_slice(&data);
        }
        let bytes = match single {
            Some(single) => single,
            None => Bytes::from(collected),
        };
        Ok((bytes, held))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use futures_util::StreamExt;
    use http_body_util::{Full, StreamBody};

    fn chunks(
        parts: Vec<&'static [u8]>,
    ) -> impl http_body::Body<Data = Bytes, Error = std::convert::Infallible> + Unpin {
        StreamBody::new(futures_util::stream::iter(
            parts
                .into_iter()
                .map(|part| Ok(http_body::Frame::data(Bytes::from_static(part)))),
        ))
    }

    #[tokio::test]
    async fn a_body_is_read_whole_and_its_bytes_are_given_back_when_done() {
        let budget = BodyBudget::new(1 << 20, Duration::from_secs(5));
        let (bytes, held) = budget
            .read(chunks(vec![b"{\"a\":", b" 1}"]), None, 1024)
            .await
            .unwrap();
        assert_eq!(&bytes[..], b"{\"a\": 1}");
        assert!(held.bytes() >= bytes.len());
        assert!(budget.available() < 1 << 20);
        drop(held);
        assert_eq!(budget.available(), 1 << 20);
    }

    #[tokio::test]
    async fn a_declared_length_is_taken_before_reading_and_a_spent_budget_refuses_at_once() {
        let budget = BodyBudget::new(100, Duration::from_secs(5));
        let (_, first) = budget
            .read(Full::new(Bytes::from_static(&[b'x'; 60])), Some(60), 1000)
            .await
            .unwrap();
        let second = budget
            .read(Full::new(Bytes::from_static(&[b'y'; 60])), Some(60), 1000)
            .await;
        assert!(matches!(second, Err(BudgetError::Exhausted { budget: 100 })));
        drop(first);
        assert!(budget
            .read(Full::new(Bytes::from_static(&[b'y'; 60])), Some(60), 1000)
            .await
            .is_ok());
    }

    #[tokio::test]
    async fn a_body_over_the_cap_is_refused_declared_or_not() {
        let budget = BodyBudget::new(1 << 20, Duration::from_secs(5));
        let declared = budget.read(chunks(vec![b"0123456789"]), Some(10), 4).await;
        assert!(matches!(declared, Err(BudgetError::TooLarge { max: 4 })));
        let streamed = budget.read(chunks(vec![b"012", b"345"]), None, 4).await;
        assert!(matches!(streamed, Err(BudgetError::TooLarge { max: 4 })));
        assert_eq!(budget.available(), 1 << 20);
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_trickles_past_the_read_timeout_is_refused() {
        let budget = BodyBudget::new(1 << 20, Duration::from_secs(30));
        let never = StreamBody::new(futures_util::stream::pending::<
            Result<http_body::Frame<Bytes>, std::convert::Infallible>,
        >());
        let outcome = budget.read(never, None, 1024).await;
        assert!(matches!(outcome, Err(BudgetError::TimedOut(_))));
    }

    #[tokio::test]
    async fn a_share_caps_one_senders_bytes_and_other_reads_of_the_budget_go_on() {
        let budget = BodyBudget::new(100, Duration::from_secs(5));
        let share = Share::new(50);
        let sender = budget.within(&share);
        let (_, first) = sender
            .read(Full::new(Bytes::from_static(&[b'x'; 40])), Some(40), 1000)
            .await
            .unwrap();
        let second = sender
            .read(Full::new(Bytes::from_static(&[b'y'; 40])), Some(40), 1000)
            .await;
        assert!(matches!(second, Err(BudgetError::ShareExhausted { share: 50 })));
        // What the share refused was given back to the budget: another sender has the rest.
        assert_eq!(budget.available(), 60);
        assert!(budget
            .read(Full::new(Bytes::from_static(&[b'z'; 60])), Some(60), 1000)
            .await
            .is_ok());
        // Small bodies fit beside the held one, as many as the share's bytes allow.
        assert_eq!(share.available(), 10);
        for _ in 0..10 {
            let (_, small) = sender.read(chunks(vec![b"1"]), None, 1000).await.unwrap();
            drop(small);
        }
        drop(first);
        assert_eq!(share.available(), 50);
        assert_eq!(budget.available(), 100);
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_stops_is_refused_at_the_stall_timeout_and_its_bytes_given_back() {
        let budget =
            BodyBudget::new(1 << 20, Duration::from_secs(30)).with_stall_timeout(Duration::from_secs(2));
        let started = tokio::time::Instant::now();
        let stops = StreamBody::new(
            futures_util::stream::iter([Ok::<_, std::convert::Infallible>(http_body::Frame::data(
                Bytes::from_static(b"{\"partial\":"),
            ))])
            .chain(futures_util::stream::pending()),
        );
        let outcome = budget.read(stops, Some(1000), 1000).await;
        assert!(matches!(outcome, Err(BudgetError::Stalled(_))), "{outcome:?}");
        assert_eq!(started.elapsed(), Duration::from_secs(2));
        assert_eq!(budget.available(), 1 << 20);
    }
}
