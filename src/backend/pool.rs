//! The pool of HTTP/1.1 connections to a cleartext (`http://`) backend, built for svcgate's one backend.
//!
//! hyper-util's pooled client serves any number of hosts: every request hashes its pool key to find idle
//! connections, races a lazily built connect against the checkout, and spawns a task to put the connection back
//! once the answer has been read. svcgate has one backend, so its pool is a list: a request takes the connection
//! returned last, and the connection goes back when the answer's body has been read to its end
//! ([`BackendBody`]), with no task of its own. Bench row 1, 1 KB and 50 conn: svcgate / bare 0.77 → 0.90 ×, 43,150 →
//! 38,580 instructions a request (bench/RESULTS.md, 2026-11-27 "a pool for one backend").
//!
//! What the client's pool did and this one keeps:
//! - a connection the backend closed while it was idle gives the request back unsent, and the request goes out
//!   again on another connection (the backend closes idle keep-alive connections on its own schedule);
//! - a connection whose answer was not read to its end (a client that went away mid-download) is closed, never
//!   reused;
//! - idle connections are closed after `backend_pool_idle_timeout`, at most 1.25 times that (the sweeper runs every
//!   eighth of the shorter of it and `backend_timeout`);
//! - a new connection is dialled by hyper-util's `HttpConnector`, as the client's was: a name that resolves to
//!   IPv6 and IPv4 addresses is tried both ways (RFC 6555, the second family 300 ms after the first), and each
//!   address's attempt is given its share of `backend_connect_timeout`; the whole (name lookup and head start
//!   included) must be done within it, or the request fails as a connect timeout;
//! - an answer's head must come within `backend_timeout`. No timer is armed per request for it: the request marks
//!   its connection with the sweep count from the moment it takes the connection (a new connection is first
//!   bounded by `backend_connect_timeout`), and the sweeper claims a mark that has grown too old, closing the
//!   connection; a request whose mark was claimed fails as a late head, even if the head came meanwhile (so a
//!   late answer is never cut short). A late head fails between 1 and 1.25 times `backend_timeout` after the
//!   request took its connection. Bench row 1's cell, 1 KB and 50 conn, interleaved against the build with a tokio
//!   timer per request: +2.9 % and +4.4 % requests per CPU-second in two runs (bench/RESULTS.md, 2026-11-27 "no
//!   timer per request").
//!
//! The sweeper is a task on the runtime of the request that started it; a request that finds none (the first, or
//! the first after that runtime shut down) starts one. A runtime kept but no longer driven is not noticed: svcgate
//! serves from one runtime.
//!
//! TLS backends (which may choose HTTP/2 by ALPN) and protocol upgrades keep hyper-util's client
//! ([`upstream`](super::upstream)).

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, Uri, Version};
use http_body::{Body as HttpBody, Frame, SizeHint};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper_util::client::legacy::connect::dns::{GaiResolver, Name};
use hyper_util::client::legacy::connect::HttpConnector;
use tokio::task::AbortHandle;
use tower_service::Service as _;

use crate::http::body::Body;

/// Why a request could not be sent through the pool.
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    /// No connection to the backend could be made.
    #[error("connecting to {address}")]
    Connect {
        /// The backend's `host:port`.
        address: String,
        /// What the connector said (its source says what the system said).
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Connecting took longer than `backend_connect_timeout`.
    #[error("connecting to {address}: no connection within {after:?}")]
    ConnectTimeout {
        /// The backend's `host:port`.
        address: String,
        /// The connect timeout.
        after: Duration,
    },
    /// The exchange itself failed: hyper's error is the source, so that the gateway can tell a client's broken
    /// body (hyper's user error caused by the client connection's own error) from the backend's failure.
    #[error("exchange with the backend")]
    Http(#[from] hyper::Error),
    /// The answer's head did not come within the head timeout, and its connection was closed.
    #[error("no answer from the backend within {after:?}")]
    HeadTimeout {
        /// The head timeout (`backend_timeout`).
        after: Duration,
    },
}

/// The connections to one cleartext backend.
pub struct BackendPool {
    /// The backend's `host:port`, as errors name it.
    address: String,
    /// The backend as the connector dials it (`http://host:port/`).
    target: Uri,
    /// Dials new connections (name lookup, both address families, `TCP_NODELAY`).
    connector: HttpConnector<Resolver>,
    connect_timeout: Duration,
    /// Idle connections, the one returned last at the back, each with the sweep count it was returned at.
    idle: Mutex<VecDeque<(Connection, u64)>>,
    /// Every open connection, idle or busy, for the sweeper's look at late answer heads.
    open: Mutex<Vec<Arc<Watch>>>,
    /// How many times the sweeper has run.
    sweeps: AtomicU64,
    /// How often the sweeper runs: every eighth of the shorter of the two timeouts it enforces.
    sweep_every: Duration,
    /// Sweeps an idle connection outlives: it is closed at the next.
    idle_sweeps: u64,
    /// The head timeout, and the sweeps a request may wait for its answer's head: it fails at the next.
    head_timeout: Duration,
    head_sweeps: u64,
    /// Whether a sweeper task exists: set when a request starts one (on the request's runtime), cleared when the
    /// task is dropped, as when its runtime shuts down, so that the next request starts another.
    sweeping: Arc<AtomicBool>,
}

/// One connection to the backend: the handle that sends requests on it, and what the sweeper sees of it.
#[derive(Debug)]
struct Connection {
    sender: SendRequest<Body>,
    watch: Arc<Watch>,
}

/// What the sweeper knows of a connection: whether a request on it waits for an answer's head, since when.
#[derive(Debug)]
struct Watch {
    /// The sweep count when the waiting request took the connection, plus one; 0 while no request waits for a
    /// head; [`CLAIMED`] once the sweeper has found the wait too long and closed the connection.
    waiting_since: AtomicU64,
    /// Ends the connection's task (and so the connection).
    task: AbortHandle,
}

/// A connection's mark once the sweeper has claimed its request's wait as late.
const CLAIMED: u64 = u64::MAX;

/// Marks a connection's request as waiting for its answer's head, until [`end`](Waiting::end)ed or dropped (a
/// request given up by its caller).
struct Waiting<'a> {
    watch: &'a Watch,
    ended: bool,
}

impl Waiting<'_> {
    /// Ends the wait: whether it ended in time, that is before the sweeper claimed it as late.
    fn end(mut self) -> bool {
        self.ended = true;
        self.watch.waiting_since.swap(0, Ordering::AcqRel) != CLAIMED
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if !self.ended {
            self.watch.waiting_since.store(0, Ordering::Release);
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// How many whole `every`s `span` takes, rounded up: the sweeps a timeout of `span` spans.
fn sweeps_in(span: Duration, every: Duration) -> u64 {
    let every = every.as_nanos().max(1);
    u64::try_from(span.as_nanos().div_ceil(every)).unwrap_or(u64::MAX)
}

impl BackendPool {
    /// A pool of connections to `address` (`host:port`, an IPv6 address in brackets), or `None` if that is no
    /// authority. A task that starts with the first connection and ends when the pool is dropped closes connections
    /// idle for `idle_timeout` and connections whose answer's head has not come within `head_timeout`.
    pub fn new(
        address: String,
        connect_timeout: Duration,
        idle_timeout: Duration,
        head_timeout: Duration,
    ) -> Option<Arc<Self>> {
        let resolver = Resolver::System(GaiResolver::new());
        Self::resolving_with(address, resolver, connect_timeout, idle_timeout, head_timeout)
    }

    /// [`new`](Self::new), the backend's name resolved by `resolver`.
    fn resolving_with(
        address: String,
        resolver: Resolver,
        connect_timeout: Duration,
        idle_timeout: Duration,
        head_timeout: Duration,
    ) -> Option<Arc<Self>> {
        let target = Uri::builder()
            .scheme(http::uri::Scheme::HTTP)
            .authority(address.as_str())
            .path_and_query("/")
            .build()
            .ok()?;
        let mut connector = HttpConnector::new_with_resolver(resolver);
        connector.set_nodelay(true);
        connector.set_connect_timeout(Some(connect_timeout));
        let sweep_every = (idle_timeout.min(head_timeout) / 8).max(Duration::from_millis(1));
        Some(Arc::new(BackendPool {
            address,
            target,
            connector,
            connect_timeout,
            idle: Mutex::new(VecDeque::new()),
            open: Mutex::new(Vec::new()),
            sweeps: AtomicU64::new(0),
            sweep_every,
            idle_sweeps: sweeps_in(idle_timeout, sweep_every),
            head_timeout,
            head_sweeps: sweeps_in(head_timeout, sweep_every),
            sweeping: Arc::new(AtomicBool::new(false)),
        }))
    }

    /// Sends `request` (its `Host` already set) on an idle connection, or a new one when none is left, and
    /// answers the backend's response head; the connection returns to the pool once the body has been read.
    pub async fn send(
        self: &Arc<Self>,
        mut request: Request<Body>,
    ) -> Result<Response<BackendBody>, PoolError> {
        // HTTP/1 requests go out in origin form; the `Host` header names the backend.
        if request.uri().scheme().is_some() {
            let target = request.uri().path_and_query().cloned();
            *request.uri_mut() = target.map_or_else(|| Uri::from_static("/"), Uri::from);
        }
        *request.version_mut() = Version::HTTP_11;
        self.keep_sweeping();
        // A request with a body is watched until the body has been sent: a backend may answer before reading it
        // (a 401 or 413 to an upload), and the connection can take the next request only once it has been.
        let uploading = (!request.body().is_end_stream()).then(|| Arc::new(AtomicBool::new(false)));
        if let Some(sent) = &uploading {
            let sent = Arc::clone(sent);
            request = request.map(|body| crate::http::body::stream(SentBody { inner: body, sent }));
        }
        while let Some(mut connection) = self.checkout() {
            let waiting = self.waiting(&connection.watch);
            // Returned once its last answer was read, the connection is ready as soon as its task has seen the
            // end of that answer (and written the last of the request before it); one that closed meanwhile is
            // skipped.
            if connection.sender.ready().await.is_err() {
                if !waiting.end() {
                    return Err(self.late());
                }
                continue;
            }
            let sent = connection.sender.try_send_request(request).await;
            if !waiting.end() {
                return Err(self.late());
            }
            match sent {
                Ok(response) => return Ok(self.answer(response, connection, uploading)),
                // The backend closed the connection before the request was written: try the next one.
                Err(mut failed) => match failed.take_message() {
                    Some(unsent) => request = unsent,
                    None => return Err(failed.into_error().into()),
                },
            }
        }
        let mut connection = self.connect().await?;
        let waiting = self.waiting(&connection.watch);
        let sent = connection.sender.send_request(request).await;
        if !waiting.end() {
            return Err(self.late());
        }
        Ok(self.answer(sent?, connection, uploading))
    }

    /// The idle connection returned last that is still open; closed ones are dropped on the way.
    fn checkout(&self) -> Option<Connection> {
        let mut idle = lock(&self.idle);
        while let Some((connection, _)) = idle.pop_back() {
            if !connection.sender.is_closed() {
                return Some(connection);
            }
        }
        None
    }

    /// Marks `watch`'s connection as waiting for an answer's head from now on, until the mark is ended.
    fn waiting<'a>(&self, watch: &'a Watch) -> Waiting<'a> {
        let now = self.sweeps.load(Ordering::Acquire);
        watch.waiting_since.store(now + 1, Ordering::Release);
        Waiting { watch, ended: false }
    }

    /// The failure of a request whose wait the sweeper claimed as late.
    fn late(&self) -> PoolError {
        PoolError::HeadTimeout {
            after: self.head_timeout,
        }
    }

    /// Makes a new connection, its protocol driven by a task of its own until either side closes it.
    async fn connect(self: &Arc<Self>) -> Result<Connection, PoolError> {
        // `call` without `poll_ready`: the system resolver is always ready, and so is the fixed one of the tests.
        let connecting = self.connector.clone().call(self.target.clone());
        // The connector bounds each address's attempt, not the name lookup before them: this bounds the whole.
        let stream = match tokio::time::timeout(self.connect_timeout, connecting).await {
            Ok(Ok(stream)) => stream,
            // The last address's share of the time ran out (with one address, the whole of it).
            Ok(Err(error)) if timed_out(&error) => {
                return Err(PoolError::ConnectTimeout {
                    address: self.address.clone(),
                    after: self.connect_timeout,
                })
            }
            Ok(Err(error)) => {
                return Err(PoolError::Connect {
                    address: self.address.clone(),
                    source: Box::new(error),
                })
            }
            Err(_) => {
                return Err(PoolError::ConnectTimeout {
                    address: self.address.clone(),
                    after: self.connect_timeout,
                })
            }
        };
        let (sender, connection) = hyper::client::conn::http1::handshake(stream).await?;
        let task = tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%error, "backend connection ended with an error");
            }
        })
        .abort_handle();
        let watch = Arc::new(Watch {
            waiting_since: AtomicU64::new(0),
            task,
        });
        lock(&self.open).push(Arc::clone(&watch));
        Ok(Connection { sender, watch })
    }

    /// Starts the sweeper unless one exists: at the first request, and again after the runtime it ran on has shut
    /// down (a pool outliving that runtime would otherwise bound no wait any more). One atomic read a request.
    fn keep_sweeping(self: &Arc<Self>) {
        if self.sweeping.load(Ordering::Acquire) || self.sweeping.swap(true, Ordering::AcqRel) {
            return;
        }
        let exists = SweeperExists(Arc::clone(&self.sweeping));
        tokio::spawn(sweep(Arc::downgrade(self), self.sweep_every, exists));
    }

    /// The response with a body that returns `connection` to the pool once it has been read to its end, and the
    /// request's body (when it had one) sent to its end.
    fn answer(
        self: &Arc<Self>,
        response: Response<Incoming>,
        connection: Connection,
        uploading: Option<Arc<AtomicBool>>,
    ) -> Response<BackendBody> {
        response.map(|inner| BackendBody {
            inner,
            back: Some((connection, Arc::downgrade(self))),
            ended: false,
            uploading,
        })
    }

    /// Puts an idle connection back.
    fn checkin(&self, connection: Connection) {
        let sweep = self.sweeps.load(Ordering::Relaxed);
        lock(&self.idle).push_back((connection, sweep));
    }
}

/// Held by the sweeper's task: clears the pool's `sweeping` flag when the task is dropped (the pool gone, or the
/// runtime shut down).
struct SweeperExists(Arc<AtomicBool>);

impl Drop for SweeperExists {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

/// Whether a connector's error is a connect attempt that ran out of time.
fn timed_out(error: &(dyn std::error::Error + 'static)) -> bool {
    std::iter::successors(Some(error), |current| current.source()).any(|current| {
        current
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut)
    })
}

/// How the pool finds the backend's addresses: the system's resolver (`getaddrinfo` on a blocking thread), or in
/// tests a fixed list.
#[derive(Clone)]
enum Resolver {
    System(GaiResolver),
    #[cfg(test)]
    Fixed(Vec<std::net::SocketAddr>),
}

/// The addresses a [`Resolver`] found, in the order to try them.
type Addresses = std::vec::IntoIter<std::net::SocketAddr>;

impl tower_service::Service<Name> for Resolver {
    type Response = Addresses;
    type Error = std::io::Error;
    type Future = Pin<Box<dyn std::future::Future<Output = Result<Addresses, std::io::Error>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: Name) -> Self::Future {
        match self {
            Resolver::System(system) => {
                let resolving = system.call(name);
                Box::pin(async move { Ok(resolving.await?.collect::<Vec<_>>().into_iter()) })
            }
            #[cfg(test)]
            Resolver::Fixed(addresses) => {
                let addresses = addresses.clone().into_iter();
                Box::pin(async move { Ok(addresses) })
            }
        }
    }
}

/// Every `every`: closes the connections idle for more than `idle_sweeps` sweeps, and those whose request has
/// waited for its answer's head for more than `head_sweeps`; ends with the pool. `_exists` is dropped with the
/// task, whenever and however it ends.
async fn sweep(pool: Weak<BackendPool>, every: Duration, _exists: SweeperExists) {
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticks.tick().await;
    loop {
        ticks.tick().await;
        let Some(pool) = pool.upgrade() else {
            return;
        };
        let now = pool.sweeps.fetch_add(1, Ordering::AcqRel) + 1;
        // Dropped outside the lock: dropping a sender ends its connection's task.
        let closing: Vec<_> = {
            let mut idle = lock(&pool.idle);
            let keep = idle
                .iter()
                .position(|(_, since)| now - since <= pool.idle_sweeps)
                .unwrap_or(idle.len());
            idle.drain(..keep).collect()
        };
        drop(closing);
        let mut open = lock(&pool.open);
        open.retain(|watch| !watch.task.is_finished());
        for watch in open.iter() {
            let since = watch.waiting_since.load(Ordering::Acquire);
            let late = since != 0 && since != CLAIMED && now.saturating_sub(since - 1) > pool.head_sweeps;
            // Claimed only if the mark is still the one read: a request that ended its wait meanwhile, or a new
            // request on the connection, keeps it.
            if late
                && watch
                    .waiting_since
                    .compare_exchange(since, CLAIMED, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
            {
                watch.task.abort();
            }
        }
    }
}

/// A backend answer's body. One from the pool puts its connection back when it has been read to its end; one
/// dropped before its end closes the connection (hyper cannot reuse a connection with an answer half read).
#[derive(Debug)]
pub struct BackendBody {
    inner: Incoming,
    back: Option<(Connection, Weak<BackendPool>)>,
    /// Whether the body has been read to its end: a chunked one says so only by ending.
    ended: bool,
    /// Set once the request's body has been sent to its end; `None` for a request without a body.
    uploading: Option<Arc<AtomicBool>>,
}

impl BackendBody {
    /// A body from hyper-util's client, whose pool takes care of its connection.
    pub fn unpooled(inner: Incoming) -> Self {
        BackendBody {
            inner,
            back: None,
            ended: false,
            uploading: None,
        }
    }
}

impl HttpBody for BackendBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        if let Poll::Ready(None) = polled {
            this.ended = true;
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

impl Drop for BackendBody {
    fn drop(&mut self) {
        if let Some((connection, pool)) = self.back.take() {
            let answered = self.ended || self.inner.is_end_stream();
            // A connection still sending an upload the backend answered early is not put back: it closes once the
            // upload ends (a request taking it would wait for the upload, however long the client takes).
            let uploaded = self
                .uploading
                .as_ref()
                .map_or(true, |sent| sent.load(Ordering::Acquire));
            if answered && uploaded && !connection.sender.is_closed() {
                if let Some(pool) = pool.upgrade() {
                    pool.checkin(connection);
                }
            }
        }
    }
}

/// A request body that says when it has been sent to its end.
struct SentBody {
    inner: Body,
    sent: Arc<AtomicBool>,
}

impl HttpBody for SentBody {
    type Data = Bytes;
    type Error = crate::http::body::BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        // hyper stops at the last frame of a body of known length, and polls a chunked one to its end.
        let done = match &polled {
            Poll::Ready(None) => true,
            Poll::Ready(Some(Ok(_))) => this.inner.is_end_stream(),
            _ => false,
        };
        if done {
            this.sent.store(true, Ordering::Release);
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

#[cfg(test)]
mod tests {
    #![allow(clippy::expect_used)]
    use super::*;
    use http_body_util::BodyExt;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    /// A backend on a free loopback port that hands each connection to `answer` on a task of its own. Answers its
    /// address.
    async fn serving<F>(answer: fn(TcpStream) -> F) -> std::net::SocketAddr
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
        let address = listener.local_addr().expect("an address");
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(answer(stream));
            }
        });
        address
    }

    /// A backend that answers each request head with `200 ok` as soon as it has read it, and then reads nothing
    /// more of that connection (a request body is left unread). Answers its address.
    async fn answering_early() -> std::net::SocketAddr {
        serving(answer_first_head).await
    }

    /// A listener at `address` whose queue of connections waiting to be accepted is full and never taken from:
    /// a connection to it hangs, as to an address whose packets are dropped. Keep what it answers alive.
    async fn black_hole(address: std::net::SocketAddr) -> (TcpListener, Vec<TcpStream>) {
        let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
        socket.bind(address).expect("the address");
        let listener = socket.listen(0).expect("listening");
        let address = listener.local_addr().expect("an address");
        let mut queued = Vec::new();
        for _ in 0..16 {
            match tokio::time::timeout(Duration::from_millis(300), TcpStream::connect(address)).await {
                Ok(Ok(stream)) => queued.push(stream),
                _ => return (listener, queued),
            }
        }
        panic!("the queue of {address} never filled");
    }

    /// The next request head on `stream`, read a byte at a time (nothing after it); `None` once it closes.
    async fn request_head(stream: &mut TcpStream) -> Option<Vec<u8>> {
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            match stream.read(&mut byte).await {
                Ok(1) => head.push(byte[0]),
                _ => return None,
            }
        }
        Some(head)
    }

    /// Reads one request head from `stream`, answers it, and holds the connection open without reading on.
    async fn answer_first_head(mut stream: TcpStream) {
        if request_head(&mut stream).await.is_none() {
            return;
        }
        if stream
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
            .await
            .is_err()
        {
            return;
        }
        // Held, unread, until the client closes it.
        std::future::pending::<()>().await;
    }

    /// A pool for `address` with a 5 s connect timeout and these idle and head timeouts.
    fn pool_for(address: String, head_timeout: Duration) -> Arc<BackendPool> {
        BackendPool::new(
            address,
            Duration::from_secs(5),
            Duration::from_secs(90),
            head_timeout,
        )
        .expect("an authority")
    }

    /// `request`'s answer read to its end: its status and body.
    async fn read(pool: &Arc<BackendPool>, request: Request<Body>) -> Result<(u16, Bytes), PoolError> {
        let response = pool.send(request).await?;
        let status = response.status().as_u16();
        let body = response.into_body().collect().await.expect("a body").to_bytes();
        Ok((status, body))
    }

    #[test]
    fn head_timeouts_hold_after_the_runtime_the_sweeper_ran_on_has_shut_down() {
        let runtime = || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime")
        };
        // A backend that answers `GET /answer` and nothing else, on a runtime of its own that lasts the whole test.
        let backend_runtime = runtime();
        let backend = backend_runtime.block_on(serving(answer_only_answer));
        // Detached: the backend serves until the test process ends.
        drop(std::thread::spawn(move || {
            backend_runtime.block_on(std::future::pending::<()>())
        }));
        let head_timeout = Duration::from_millis(300);
        let pool = pool_for(backend.to_string(), head_timeout);
        let call = |pool: &Arc<BackendPool>, path: &'static str| {
            let pool = Arc::clone(pool);
            async move {
                let request = Request::builder()
                    .uri(path)
                    .body(crate::http::body::empty())
                    .expect("a request");
                tokio::time::timeout(Duration::from_secs(10), read(&pool, request))
                    .await
                    .expect("no unbounded wait")
            }
        };
        // The first request starts the sweeper on its runtime, which bounds its wait.
        let first_runtime = runtime();
        let late = first_runtime.block_on(call(&pool, "/late"));
        assert!(matches!(late, Err(PoolError::HeadTimeout { .. })), "{late:?}");
        // A second runtime makes a connection and keeps it idle in the pool; then the first runtime shuts down,
        // and the sweeper with it.
        let second_runtime = runtime();
        let answered = second_runtime.block_on(call(&pool, "/answer"));
        assert_eq!(answered.expect("an answer"), (200, Bytes::from_static(b"ok")));
        drop(first_runtime);
        // The next request reuses that connection (no new connection is made), and its wait is bounded still.
        let late = second_runtime.block_on(call(&pool, "/late"));
        assert!(matches!(late, Err(PoolError::HeadTimeout { .. })), "{late:?}");
    }

    /// Answers each `GET /answer` on `stream` with `200 ok`; reads any other request head and answers nothing.
    async fn answer_only_answer(mut stream: TcpStream) {
        while let Some(head) = request_head(&mut stream).await {
            if !head.starts_with(b"GET /answer ") {
                continue;
            }
            let answer = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
            if stream.write_all(answer).await.is_err() {
                return;
            }
        }
    }

    #[tokio::test]
    async fn a_backend_name_whose_first_address_drops_packets_is_reached_at_the_next_within_the_connect_timeout(
    ) {
        let backend = answering_early().await;
        // The same port on another loopback address, where connections hang.
        let dropping = std::net::SocketAddr::from(([127, 0, 0, 2], backend.port()));
        let _hole = black_hole(dropping).await;
        let connect_timeout = Duration::from_secs(2);
        let resolver = Resolver::Fixed(vec![dropping, backend]);
        let name = format!("backend.test:{}", backend.port());
        let pool = BackendPool::resolving_with(
            name,
            resolver,
            connect_timeout,
            Duration::from_secs(90),
            connect_timeout,
        )
        .expect("an authority");
        let started = std::time::Instant::now();
        let answer = read(&pool, Request::new(crate::http::body::empty())).await;
        let waited = started.elapsed();
        // Each address has half the time: the second is dialled once the first's share has run out.
        assert_eq!(answer.expect("an answer"), (200, Bytes::from_static(b"ok")));
        assert!(waited < connect_timeout, "connected after {waited:?}");
    }

    #[tokio::test]
    async fn a_connection_that_hangs_fails_as_a_connect_timeout() {
        let dropping = std::net::SocketAddr::from(([127, 0, 0, 2], 0));
        let (hole, _queued) = black_hole(dropping).await;
        let address = hole.local_addr().expect("an address");
        let pool = BackendPool::new(
            address.to_string(),
            Duration::from_millis(300),
            Duration::from_secs(90),
            Duration::from_secs(5),
        )
        .expect("an authority");
        let error = read(&pool, Request::new(crate::http::body::empty()))
            .await
            .expect_err("the connection hangs");
        assert!(matches!(error, PoolError::ConnectTimeout { .. }), "{error:?}");
    }

    #[tokio::test]
    async fn a_refused_connection_is_an_error_that_says_what_the_system_said() {
        // Bound and kept, but not listening: connections to it are refused.
        let unused = tokio::net::TcpSocket::new_v4().expect("a socket");
        unused
            .bind("127.0.0.1:0".parse().expect("an address"))
            .expect("a port");
        let address = unused.local_addr().expect("an address");
        let pool = pool_for(address.to_string(), Duration::from_secs(5));
        let error = read(&pool, Request::new(crate::http::body::empty()))
            .await
            .expect_err("nothing listens");
        // As the gateway reports it: each error of the chain, `: `-separated.
        let chain = std::iter::successors(Some(&error as &dyn std::error::Error), |e| e.source())
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(": ");
        assert!(matches!(error, PoolError::Connect { .. }), "{chain}");
        assert!(
            chain.starts_with(&format!("connecting to {address}: ")),
            "{chain}"
        );
        assert!(chain.contains("refused"), "{chain}");
    }

    #[tokio::test]
    async fn a_connection_still_writing_an_upload_the_backend_stopped_reading_fails_the_next_request_in_time()
    {
        let backend = answering_early().await;
        let head_timeout = Duration::from_millis(400);
        let pool = pool_for(backend.to_string(), head_timeout);
        // One frame of 32 MiB: the body has given hyper its last frame (so the connection goes back once the
        // answer is read), but far more than the sockets' buffers hold is still to be written.
        let upload = Request::new(crate::http::body::full(vec![0u8; 32 << 20]));
        let answer = read(&pool, upload).await.expect("the early answer");
        assert_eq!(answer, (200, Bytes::from_static(b"ok")));
        // The next request takes that connection and waits for it to be ready, which it never is: the wait is
        // bounded by the head timeout like the wait for a head.
        let started = std::time::Instant::now();
        let next = tokio::time::timeout(
            Duration::from_secs(10),
            read(&pool, Request::new(crate::http::body::empty())),
        )
        .await
        .expect("no unbounded wait");
        let waited = started.elapsed();
        assert!(matches!(next, Err(PoolError::HeadTimeout { .. })), "{next:?}");
        assert!(waited >= head_timeout, "failed after {waited:?}");
        assert!(waited < head_timeout * 3, "failed after {waited:?}");
        // The stuck connection was closed; the pool goes on with a new one.
        let after = read(&pool, Request::new(crate::http::body::empty())).await;
        assert_eq!(after.expect("an answer"), (200, Bytes::from_static(b"ok")));
    }

    #[test]
    fn a_timeout_spans_its_sweeps_rounded_up() {
        let cases = [
            (Duration::from_secs(60), Duration::from_millis(7_500), 8),
            (Duration::from_secs(90), Duration::from_millis(7_500), 12),
            (Duration::from_millis(1_001), Duration::from_millis(125), 9),
            (Duration::from_secs(1), Duration::ZERO, 1_000_000_000),
        ];
        for (span, every, sweeps) in cases {
            assert_eq!(sweeps_in(span, every), sweeps, "{span:?} in sweeps of {every:?}");
        }
    }

    #[test]
    fn the_sweeper_runs_often_enough_for_both_timeouts() {
        // (idle timeout, head timeout) → (sweep interval, idle sweeps, head sweeps)
        let cases = [
            ((90, 60), (7_500, 12, 8)),
            ((90, 170), (11_250, 8, 16)),
            ((4, 60), (500, 8, 120)),
        ];
        for ((idle, head), (every_ms, idle_sweeps, head_sweeps)) in cases {
            let pool = BackendPool::new(
                "127.0.0.1:1".to_owned(),
                Duration::from_secs(5),
                Duration::from_secs(idle),
                Duration::from_secs(head),
            )
            .expect("an authority");
            assert_eq!(
                pool.sweep_every,
                Duration::from_millis(every_ms),
                "idle {idle}s, head {head}s"
            );
            assert_eq!(
                (pool.idle_sweeps, pool.head_sweeps),
                (idle_sweeps, head_sweeps),
                "idle {idle}s, head {head}s"
            );
        }
    }
}
