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
//! - idle connections are closed after `backend_pool_idle_timeout` (checked every quarter of it, so an idle
//!   connection lives at most 1.25 times that);
//! - a new connection must be made within `backend_connect_timeout`.
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
use hyper_util::rt::TokioIo;

use crate::http::body::Body;

/// Why a request could not be sent through the pool.
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    /// No connection to the backend could be made.
    #[error("connecting to {address}: {source}")]
    Connect {
        /// The backend's `host:port`.
        address: String,
        /// What the system said.
        source: std::io::Error,
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
}

/// The idle connections to one cleartext backend.
pub struct BackendPool {
    /// The backend's `host:port`, as connections are made to it.
    address: String,
    connect_timeout: Duration,
    /// Idle connections, the one returned last at the back, each with the sweep count it was returned at.
    idle: Mutex<VecDeque<(SendRequest<Body>, u64)>>,
    /// How many times the sweeper has looked at the idle connections.
    sweeps: AtomicU64,
    idle_timeout: Duration,
    /// Whether the sweeper runs: it starts with the first connection, on the runtime that makes it.
    sweeping: AtomicBool,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// How many sweeps an idle connection survives: it is closed at the fifth after its return, which comes between
/// 4 and 5 quarters of the idle timeout later.
const SWEEPS_TO_CLOSE: u64 = 5;

impl BackendPool {
    /// A pool of connections to `address` (`host:port`). Connections idle for `idle_timeout` are closed by a task
    /// that starts with the first connection and ends when the pool is dropped.
    pub fn new(address: String, connect_timeout: Duration, idle_timeout: Duration) -> Arc<Self> {
        Arc::new(BackendPool {
            address,
            connect_timeout,
            idle: Mutex::new(VecDeque::new()),
            sweeps: AtomicU64::new(0),
            idle_timeout,
            sweeping: AtomicBool::new(false),
        })
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
        // A request with a body is watched until the body has been sent: a backend may answer before reading it
        // (a 401 or 413 to an upload), and the connection can take the next request only once it has been.
        let uploading = (!request.body().is_end_stream()).then(|| Arc::new(AtomicBool::new(false)));
        if let Some(sent) = &uploading {
            let sent = Arc::clone(sent);
            request = request.map(|body| crate::http::body::stream(SentBody { inner: body, sent }));
        }
        while let Some(mut sender) = self.checkout() {
            // Returned once its last answer was read, the connection is ready as soon as its task has seen the
            // end of that answer; one that closed meanwhile is skipped.
            if sender.ready().await.is_err() {
                continue;
            }
            match sender.try_send_request(request).await {
                Ok(response) => return Ok(self.answer(response, sender, uploading)),
                // The backend closed the connection before the request was written: try the next one.
                Err(mut failed) => match failed.take_message() {
                    Some(unsent) => request = unsent,
                    None => return Err(failed.into_error().into()),
                },
            }
        }
        let mut sender = self.connect().await?;
        let response = sender.send_request(request).await?;
        Ok(self.answer(response, sender, uploading))
    }

    /// The idle connection returned last that is still open; closed ones are dropped on the way.
    fn checkout(&self) -> Option<SendRequest<Body>> {
        let mut idle = lock(&self.idle);
        while let Some((sender, _)) = idle.pop_back() {
            if !sender.is_closed() {
                return Some(sender);
            }
        }
        None
    }

    /// Makes a new connection, its protocol driven by a task of its own until either side closes it.
    async fn connect(self: &Arc<Self>) -> Result<SendRequest<Body>, PoolError> {
        if !self.sweeping.swap(true, Ordering::AcqRel) {
            tokio::spawn(sweep(Arc::downgrade(self), self.idle_timeout / 4));
        }
        let connecting = tokio::net::TcpStream::connect(self.address.as_str());
        let stream = match tokio::time::timeout(self.connect_timeout, connecting).await {
            Ok(Ok(stream)) => stream,
            Ok(Err(source)) => {
                return Err(PoolError::Connect {
                    address: self.address.clone(),
                    source,
                })
            }
            Err(_) => {
                return Err(PoolError::ConnectTimeout {
                    address: self.address.clone(),
                    after: self.connect_timeout,
                })
            }
        };
        // Nagle's delay would hold back small requests; failure to set it is harmless.
        drop(stream.set_nodelay(true));
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%error, "backend connection ended with an error");
            }
        });
        Ok(sender)
    }

    /// The response with a body that returns `sender` to the pool once it has been read to its end, and the
    /// request's body (when it had one) sent to its end.
    fn answer(
        self: &Arc<Self>,
        response: Response<Incoming>,
        sender: SendRequest<Body>,
        uploading: Option<Arc<AtomicBool>>,
    ) -> Response<BackendBody> {
        response.map(|inner| BackendBody {
            inner,
            back: Some((sender, Arc::downgrade(self))),
            ended: false,
            uploading,
        })
    }

    /// Puts an idle connection back.
    fn checkin(&self, sender: SendRequest<Body>) {
        let sweep = self.sweeps.load(Ordering::Relaxed);
        lock(&self.idle).push_back((sender, sweep));
    }
}

/// Every `every`, closes the connections idle since `SWEEPS_TO_CLOSE` sweeps ago; ends with the pool.
async fn sweep(pool: Weak<BackendPool>, every: Duration) {
    let mut ticks = tokio::time::interval(every.max(Duration::from_millis(1)));
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticks.tick().await;
    loop {
        ticks.tick().await;
        let Some(pool) = pool.upgrade() else {
            return;
        };
        let now = pool.sweeps.fetch_add(1, Ordering::Relaxed) + 1;
        // Dropped outside the lock: dropping a sender ends its connection's task.
        let closing: Vec<_> = {
            let mut idle = lock(&pool.idle);
            let keep = idle
                .iter()
                .position(|(_, since)| now - since < SWEEPS_TO_CLOSE)
                .unwrap_or(idle.len());
            idle.drain(..keep).collect()
        };
        drop(closing);
    }
}

/// A backend answer's body. One from the pool puts its connection back when it has been read to its end; one
/// dropped before its end closes the connection (hyper cannot reuse a connection with an answer half read).
#[derive(Debug)]
pub struct BackendBody {
    inner: Incoming,
    back: Option<(SendRequest<Body>, Weak<BackendPool>)>,
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
        if let Some((sender, pool)) = self.back.take() {
            let answered = self.ended || self.inner.is_end_stream();
            // A connection still sending an upload the backend answered early is not put back: it closes once the
            // upload ends (a request taking it would wait for the upload, however long the client takes).
            let uploaded = self
                .uploading
                .as_ref()
                .map_or(true, |sent| sent.load(Ordering::Acquire));
            if answered && uploaded && !sender.is_closed() {
                if let Some(pool) = pool.upgrade() {
                    pool.checkin(sender);
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
