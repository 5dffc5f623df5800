//! Memory held for request and answer bodies: one byte budget per side, shared by every request, and a read
//! timeout.
//!
//! svcgate streams bodies it does not rewrite; the few it must hold whole (alert payloads, V3 request bodies it
//! converts, V4 answers it reshapes) are read through a [`BodyBudget`]. Each such read takes bytes from the
//! budget as the buffer grows (its capacity, not its length, so the doubling of a growing buffer is counted)
//! and gives them back when the request is done with them ([`Held`]). Past the budget the read stops at once,
//! and the request is answered 503 with `Retry-After`: under a flood of large bodies, memory stays bounded by
//! the budgets plus one frame per connection, and the bodies that fit keep going through. A body that arrives
//! slower than the read timeout is refused too, so a sender cannot hold its share of the budget by trickling.

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
    /// The body did not arrive within the read timeout.
    #[error("the body did not arrive within {0:?}")]
    TimedOut(Duration),
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
}

/// Bytes taken from a budget; given back when dropped.
#[derive(Debug)]
pub struct Held {
    permit: Option<OwnedSemaphorePermit>,
}

impl Held {
    /// Nothing held.
    pub fn none() -> Self {
        Held { permit: None }
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
        let more = u32::try_from(bytes)
            .ok()
            .and_then(|bytes| Arc::clone(&self.bytes).try_acquire_many_owned(bytes).ok())
            .ok_or(BudgetError::Exhausted { budget: self.total })?;
        match &mut held.permit {
            Some(permit) => permit.merge(more),
            None => held.permit = Some(more),
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
        while let Some(frame) = body.frame().await {
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
            collected.reserve(data.len());
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
}
