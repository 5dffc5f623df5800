//! Client connections: how many may be open, and how long one may stay open doing nothing.
//!
//! Every accepted connection is registered here, and three rules bound what clients that send nothing can hold:
//! - a connection must complete its first request head within `client_header_timeout` of opening, whether it
//!   sent one byte or none (hyper's own header timeout then bounds each later head of an HTTP/1 connection);
//! - a connection with no request in progress for `client_idle_timeout` is closed: an HTTP/2 connection that
//!   sent only its preface, or whose streams are all done;
//! - at most `max_connections` are open. At the cap, the connection idle the longest is closed to make room, so
//!   that a flood of silent connections cannot lock out the health check or real clients; when every open
//!   connection has a request in progress, the new one is refused at once.
//!
//! A request is in progress from its complete head until its response body has been sent ([`TrackedBody`]).
//! A client that stops reading is bounded too: a write to it that makes no progress for `client_write_timeout`
//! fails and closes the connection ([`WriteStallLimit`]); a slow reader that keeps reading is never cut.
//! A connection upgraded to another protocol (a WebSocket) leaves the registry once its 101 is sent; its tunnel
//! is bounded by `upgrade_idle_timeout` instead.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body as HttpBody, Frame, SizeHint};
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::http::aborts::AbortMark;
use crate::http::body::{Body, BoxError};

/// The limits on client connections.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The most connections open at once.
    pub max_connections: usize,
    /// How long a new connection may take to send its first complete request head.
    pub header_timeout: Duration,
    /// How long a connection may stay open with no request in progress.
    pub idle_timeout: Duration,
    /// How long a write to the client may make no progress.
    pub write_timeout: Duration,
}

/// Why the registry closed a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloseReason {
    /// No complete request head within the header timeout.
    NoRequest,
    /// No request in progress for the idle timeout.
    Idle,
    /// Closed to make room for a new connection at the cap.
    Evicted,
}

impl CloseReason {
    /// The reason as a metric label.
    pub fn label(self) -> &'static str {
        match self {
            CloseReason::NoRequest => "no_request",
            CloseReason::Idle => "idle",
            CloseReason::Evicted => "evicted",
        }
    }
}

/// The open client connections.
pub struct Registry {
    limits: Limits,
    live: Mutex<HashMap<u64, Arc<Connection>>>,
    next_id: AtomicU64,
}

/// What the registry knows of one open connection.
pub struct Connection {
    /// Requests whose response has not been sent in full.
    in_progress: AtomicUsize,
    /// Whether any request head has arrived.
    served: AtomicBool,
    /// When the last request in progress ended (or the connection opened).
    idle_since: Mutex<Instant>,
    /// Set while the limits' watcher waits for the requests in progress to end: only then does a request's end
    /// wake it. Requests start and end without waking anything otherwise (the watcher checks at its deadline).
    awaits_idle: AtomicBool,
    /// Woken by the connection's first request, and when a request ends while `awaits_idle` is set.
    changed: Notify,
    /// Woken when the registry evicts the connection.
    evicted: Notify,
}

/// A connection's place in the registry; dropping it removes the connection.
pub struct Admitted {
    registry: Arc<Registry>,
    id: u64,
    connection: Arc<Connection>,
}

/// One request in progress on a connection; dropping it ends the request.
pub struct InProgress {
    connection: Arc<Connection>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Registry {
    /// An empty registry enforcing `limits`.
    pub fn new(limits: Limits) -> Arc<Self> {
        Arc::new(Registry {
            limits,
            live: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(0),
        })
    }

    /// The limits.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        lock(&self.live).len()
    }

    /// Registers a new connection; at the cap the connection idle the longest is evicted for it, and when none
    /// is idle the new one is refused (`None`).
    pub fn admit(self: &Arc<Self>) -> Option<Admitted> {
        let mut live = lock(&self.live);
        if live.len() >= self.limits.max_connections {
            let idlest = live
                .iter()
                .filter(|(_, connection)| connection.in_progress.load(Ordering::Acquire) == 0)
                .min_by_key(|(_, connection)| *lock(&connection.idle_since))
                .map(|(id, _)| *id)?;
            if let Some(evicted) = live.remove(&idlest) {
                evicted.evicted.notify_one();
            }
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let connection = Arc::new(Connection {
            in_progress: AtomicUsize::new(0),
            served: AtomicBool::new(false),
            idle_since: Mutex::new(Instant::now()),
            awaits_idle: AtomicBool::new(false),
            changed: Notify::new(),
            evicted: Notify::new(),
        });
        live.insert(id, Arc::clone(&connection));
        Some(Admitted {
            registry: Arc::clone(self),
            id,
            connection,
        })
    }
}

impl Admitted {
    /// The connection.
    pub fn connection(&self) -> &Arc<Connection> {
        &self.connection
    }

    /// Completes when the limits say the connection must close, with the reason.
    ///
    /// Requests do not wake this watcher as they start and end (that was two wake-ups of the connection's task and
    /// a new timer per request; only the first request does, ending the wait for a head): it sleeps until the
    /// deadline the connection had when it last looked, and then looks again. A request in progress is never
    /// cut; after it ends the deadline counts from its end. Bench row 1, 50 conn: svcgate / bare 0.84 → 0.86 × at
    /// 1 KB, 0.93 → 0.96 × at 100 KB (bench/RESULTS.md, 2026-11-26).
    /// `evicted`: the connection was evicted while a request was in progress; it closes once idle.
    pub async fn closed_by_limits(&self, evicted: bool) -> CloseReason {
        let limits = self.registry.limits;
        let connection = &self.connection;
        if evicted {
            while connection.in_progress.load(Ordering::Acquire) > 0 {
                connection.idle_again().await;
            }
            return CloseReason::Evicted;
        }
        loop {
            if connection.in_progress.load(Ordering::Acquire) > 0 {
                connection.idle_again().await;
                continue;
            }
            let served = connection.served.load(Ordering::Acquire);
            let (limit, reason) = if served {
                (limits.idle_timeout, CloseReason::Idle)
            } else {
                (limits.header_timeout, CloseReason::NoRequest)
            };
            let deadline = *lock(&connection.idle_since) + limit;
            tokio::select! {
                () = tokio::time::sleep_until(deadline) => {
                    let still_idle = connection.in_progress.load(Ordering::Acquire) == 0
                        && *lock(&connection.idle_since) + limit <= Instant::now();
                    if still_idle {
                        return reason;
                    }
                }
                () = connection.changed.notified(), if !served => {}
                () = connection.evicted.notified() => {
                    // An eviction that raced with a request's start waits until the connection is idle again.
                    while connection.in_progress.load(Ordering::Acquire) > 0 {
                        connection.idle_again().await;
                    }
                    return CloseReason::Evicted;
                }
            }
        }
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        lock(&self.registry.live).remove(&self.id);
    }
}

impl Connection {
    /// Marks a request as started (its head is complete); it ends when the returned guard is dropped.
    pub fn request_started(self: &Arc<Self>) -> InProgress {
        self.in_progress.fetch_add(1, Ordering::AcqRel);
        // The first request ends the wait for a request head, whose deadline may be later than the idle one.
        if !self.served.swap(true, Ordering::AcqRel) {
            self.changed.notify_one();
        }
        InProgress {
            connection: Arc::clone(self),
        }
    }

    /// Requests in progress now (their responses not yet sent in full).
    pub fn in_progress(&self) -> usize {
        self.in_progress.load(Ordering::Acquire)
    }

    /// Waits until no request is in progress (returns at once when none is).
    async fn idle_again(&self) {
        self.awaits_idle.store(true, Ordering::SeqCst);
        // A request that ended between the caller's look and the flag did not notify: look again. One that ends
        // after it leaves a permit, so the wait below cannot miss it.
        while self.in_progress.load(Ordering::SeqCst) > 0 {
            self.changed.notified().await;
        }
        self.awaits_idle.store(false, Ordering::SeqCst);
    }
}

impl Drop for InProgress {
    fn drop(&mut self) {
        *lock(&self.connection.idle_since) = Instant::now();
        self.connection.in_progress.fetch_sub(1, Ordering::SeqCst);
        if self.connection.awaits_idle.load(Ordering::SeqCst) {
            self.connection.changed.notify_one();
        }
    }
}

/// A response body that keeps its request in progress until it has been sent (or dropped), and marks its
/// connection for a reset when it fails mid-way ([`aborts`](crate::http::aborts)).
pub struct TrackedBody {
    inner: Body,
    _in_progress: InProgress,
    abort: Option<AbortMark>,
}

impl TrackedBody {
    /// Wraps `inner` so that `in_progress` ends with it; a failure of `inner` sets `abort` (HTTP/1 responses).
    pub fn new(inner: Body, in_progress: InProgress, abort: Option<AbortMark>) -> Self {
        TrackedBody {
            inner,
            _in_progress: in_progress,
            abort,
        }
    }
}

impl HttpBody for TrackedBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        if let (Poll::Ready(Some(Err(_))), Some(abort)) = (&polled, &this.abort) {
            abort.mark();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A client stream whose writes must make progress: a write (or flush) that stays blocked for the limit, the
/// client having stopped reading, fails with `TimedOut`, which ends the connection. It costs one branch per
/// write while the client reads, and a timer only while a write is blocked.
pub struct WriteStallLimit<S> {
    inner: S,
    limit: Duration,
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<S> WriteStallLimit<S> {
    /// Wraps `inner`; a write blocked for `limit` fails.
    pub fn new(inner: S, limit: Duration) -> Self {
        WriteStallLimit {
            inner,
            limit,
            stalled: None,
        }
    }

    /// Called with a write's outcome: a ready one clears the stall timer, a pending one starts it (once) and
    /// fails when it has run out.
    fn check<T>(
        &mut self,
        cx: &mut Context<'_>,
        outcome: Poll<std::io::Result<T>>,
    ) -> Poll<std::io::Result<T>> {
        if outcome.is_ready() {
            self.stalled = None;
            return outcome;
        }
        let limit = self.limit;
        let timer = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the client read nothing for client_write_timeout",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<S: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for WriteStallLimit<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl<S: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for WriteStallLimit<S> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let outcome = Pin::new(&mut this.inner).poll_write(cx, buf);
        this.check(cx, outcome)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let outcome = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        this.check(cx, outcome)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let outcome = Pin::new(&mut this.inner).poll_flush(cx);
        this.check(cx, outcome)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

/// The soft limit on open files of this process, from `/proc/self/limits` (Linux); `None` where it cannot be
/// read.
pub fn open_file_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|line| line.starts_with("Max open files"))?;
    let soft = line
        .trim_start_matches("Max open files")
        .split_whitespace()
        .next()?;
    match soft {
        "unlimited" => Some(u64::MAX),
        number => number.parse().ok(),
    }
}

/// File descriptors kept free of client connections: backend connections, the store's files, logs, upgraded
/// tunnels.
pub const RESERVED_FILES: u64 = 256;

/// The default `max_connections`: three quarters of what the open-file limit leaves after [`RESERVED_FILES`],
/// at most 50,000 and at least 16.
pub fn default_max_connections() -> usize {
    let usable = open_file_limit()
        .unwrap_or(1024)
        .saturating_sub(RESERVED_FILES)
        .saturating_mul(3)
        / 4;
    usize::try_from(usable.clamp(16, 50_000)).unwrap_or(50_000)
}

/// TLS material for serving clients.
#[derive(Debug, Clone)]
pub struct ServerTls {
    /// PEM certificate chain.
    pub cert: std::path::PathBuf,
    /// PEM private key.
    pub key: std::path::PathBuf,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn limits(max_connections: usize) -> Limits {
        Limits {
            max_connections,
            header_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
            write_timeout: Duration::from_secs(60),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_connection_without_a_request_closes_at_the_header_timeout() {
        let registry = Registry::new(limits(10));
        let admitted = registry.admit().unwrap();
        let started = Instant::now();
        assert_eq!(admitted.closed_by_limits(false).await, CloseReason::NoRequest);
        assert_eq!(started.elapsed(), Duration::from_secs(30));
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_in_progress_holds_the_connection_open_and_idleness_counts_from_its_end() {
        let registry = Registry::new(limits(10));
        let admitted = registry.admit().unwrap();
        let request = admitted.connection().request_started();
        let watchdog = admitted.closed_by_limits(false);
        tokio::pin!(watchdog);
        assert!(tokio::time::timeout(Duration::from_secs(600), &mut watchdog)
            .await
            .is_err());
        let ended = Instant::now();
        drop(request);
        assert_eq!(watchdog.await, CloseReason::Idle);
        assert_eq!(ended.elapsed(), Duration::from_secs(60));
    }

    #[tokio::test(start_paused = true)]
    async fn at_the_cap_the_idlest_connection_makes_room_and_busy_ones_are_kept() {
        let registry = Registry::new(limits(2));
        let oldest = registry.admit().unwrap();
        tokio::time::advance(Duration::from_secs(1)).await;
        let busy = registry.admit().unwrap();
        let _request = busy.connection().request_started();
        let newest = registry.admit().expect("room made by evicting the idle one");
        assert_eq!(oldest.closed_by_limits(false).await, CloseReason::Evicted);
        assert_eq!(registry.open(), 2);
        // Every open connection busy: the next is refused.
        let _also_busy = newest.connection().request_started();
        assert!(registry.admit().is_none());
        drop(oldest);
        assert_eq!(registry.open(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn an_eviction_found_with_a_request_in_progress_closes_once_the_request_ends() {
        let registry = Registry::new(limits(10));
        let admitted = registry.admit().unwrap();
        let request = admitted.connection().request_started();
        let watchdog = admitted.closed_by_limits(true);
        tokio::pin!(watchdog);
        assert!(tokio::time::timeout(Duration::from_secs(600), &mut watchdog)
            .await
            .is_err());
        drop(request);
        assert_eq!(watchdog.await, CloseReason::Evicted);
    }

    #[test]
    fn the_default_cap_stays_below_the_open_file_limit() {
        let cap = default_max_connections() as u64;
        if let Some(limit) = open_file_limit() {
            assert!(cap < limit, "{cap} >= {limit}");
        }
        assert!(cap >= 16);
    }
}
