//! The byte tunnel of an upgraded connection (WebSocket and the like).
//!
//! Once the backend has answered a forwarded upgrade request with 101 and svcgate has passed that answer on, both
//! connections have left HTTP: this module waits for both hand-overs, then copies bytes both ways until either side
//! closes (the other is then shut down for writing, as TCP half-close allows) or no byte has moved in either
//! direction for the idle timeout, when both are closed.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::upgrade::OnUpgrade;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Instant;

/// Why a tunnel could not run to its end.
#[derive(Debug, thiserror::Error)]
pub enum TunnelError {
    /// The client's connection was not handed over (it closed before the 101 was written).
    #[error("client connection not upgraded: {0}")]
    Client(hyper::Error),
    /// The backend's connection was not handed over.
    #[error("backend connection not upgraded: {0}")]
    Backend(hyper::Error),
    /// Reading or writing either side failed.
    #[error("upgraded connection: {0}")]
    Io(#[from] io::Error),
}

/// How a tunnel ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TunnelEnd {
    /// Both sides closed; the bytes each sent.
    Closed {
        /// Bytes from the client to the backend.
        from_client: u64,
        /// Bytes from the backend to the client.
        from_backend: u64,
    },
    /// Nothing moved for the idle timeout, and svcgate closed both sides.
    Idle,
}

/// Waits for both connections to be handed over, then copies bytes between them until both sides have closed or
/// no byte has moved for `idle`.
pub async fn run(client: OnUpgrade, backend: OnUpgrade, idle: Duration) -> Result<TunnelEnd, TunnelError> {
    let client = client.await.map_err(TunnelError::Client)?;
    let backend = backend.await.map_err(TunnelError::Backend)?;
    let activity = Arc::new(Activity::new());
    let mut client = Watched {
        inner: TokioIo::new(client),
        activity: Arc::clone(&activity),
    };
    let mut backend = Watched {
        inner: TokioIo::new(backend),
        activity: Arc::clone(&activity),
    };
    let copy = tokio::io::copy_bidirectional(&mut client, &mut backend);
    tokio::pin!(copy);
    loop {
        tokio::select! {
            copied = &mut copy => {
                let (from_client, from_backend) = copied?;
                return Ok(TunnelEnd::Closed { from_client, from_backend });
            }
            () = tokio::time::sleep_until(activity.last() + idle) => {
                // Bytes may have moved while this timer ran: it is set again from the latest of them.
                if activity.last() + idle <= Instant::now() {
                    return Ok(TunnelEnd::Idle);
                }
            }
        }
    }
}

/// When bytes last moved through a tunnel, in either direction.
struct Activity {
    started: Instant,
    /// Milliseconds from `started` to the last read that returned bytes.
    last_millis: AtomicU64,
}

impl Activity {
    fn new() -> Self {
        Activity {
            started: Instant::now(),
            last_millis: AtomicU64::new(0),
        }
    }

    fn touch(&self) {
        let millis = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_millis.store(millis, Ordering::Relaxed);
    }

    fn last(&self) -> Instant {
        self.started + Duration::from_millis(self.last_millis.load(Ordering::Relaxed))
    }
}

/// One side of a tunnel, noting every read that returns bytes. Every byte written was read from the other side
/// first, so reads alone tell whether anything moved.
struct Watched<T> {
    inner: T,
    activity: Arc<Activity>,
}

impl<T: AsyncRead + Unpin> AsyncRead for Watched<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_read(context, buf);
        if buf.filled().len() > before {
            this.activity.touch();
        }
        polled
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Watched<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(context, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(context, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(context)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(context)
    }
}
