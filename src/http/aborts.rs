//! A response cut short ends in a connection reset, never in a clean close.
//!
//! When a response body fails mid-way (the backend aborted a download), hyper stops writing and drops the HTTP/1
//! connection. A chunked client notices the missing last chunk, but a close-delimited response (an HTTP/1.0
//! client) ends where its body ends: a clean close (FIN) would make a cut download look complete. So the body
//! that fails marks its connection ([`AbortMark`], set by [`TrackedBody`](crate::http::connections::TrackedBody)), and
//! the client socket ([`ResetOnAbort`]) of a marked connection is closed with `SO_LINGER` 0: the kernel sends a
//! reset, and the client reads an error (`ECONNRESET`) instead of an end of file. HTTP/2 needs no mark: hyper
//! resets the failed stream itself (`RST_STREAM`) and the connection's other streams go on.

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// Whether a response on a connection failed mid-way; shared by the connection's socket and its responses.
#[derive(Debug, Clone, Default)]
pub struct AbortMark(Arc<AtomicBool>);

impl AbortMark {
    /// Marks the connection: it is reset when closed.
    pub fn mark(&self) {
        self.0.store(true, Ordering::Release);
    }

    /// Whether the connection is marked.
    pub fn is_marked(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

/// A client socket that is reset, not closed cleanly, when dropped after its [`AbortMark`] was set.
pub struct ResetOnAbort {
    inner: TcpStream,
    mark: AbortMark,
}

impl ResetOnAbort {
    /// Wraps the accepted `inner`; `mark` decides how it is closed.
    pub fn new(inner: TcpStream, mark: AbortMark) -> Self {
        ResetOnAbort { inner, mark }
    }
}

impl Drop for ResetOnAbort {
    fn drop(&mut self) {
        if self.mark.is_marked() {
            // A zero linger makes close() send RST at once and discard what is unsent (the client is losing the
            // rest of the body anyway); it never blocks. Failing to set it leaves the clean close.
            drop(self.inner.set_zero_linger());
        }
    }
}

impl AsyncRead for ResetOnAbort {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for ResetOnAbort {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        if this.mark.is_marked() {
            // No FIN before the reset: the client must not see an end of stream first.
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}
