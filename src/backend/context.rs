//! The per-request context shared by every stage of handling one request.

use std::time::Instant;

use crate::backend::upstream::ClientInfo;
use crate::http::budget::Held;
use crate::telemetry::RequestId;

/// What every stage knows about the request in hand, and what it records for the log line.
#[derive(Debug)]
pub struct RequestContext {
    /// The request id, taken from the client or made.
    pub request_id: RequestId,
    /// The client connection.
    pub client: ClientInfo,
    /// When the request head arrived.
    pub started: Instant,
    /// `passthrough`, `rewrite`, `internal` or `alerts`.
    pub kind: &'static str,
    /// The route template that matched (a rule's V3 template), never the raw path.
    pub route: String,
    /// The release of the rule that matched (`9.0`), empty otherwise.
    pub since: String,
    /// The caller's credentials when svcgate moved a token from the query or body into a header (the usage report
    /// counts the caller by them); `None` otherwise.
    pub caller: Option<crate::backend::access::Credentials>,
    /// How many calls to the backend the request cost.
    pub backend_calls: std::sync::atomic::AtomicU32,
    /// Bytes of bodies read whole for this request, counted in the body budget until the request is answered.
    held: std::sync::Mutex<Vec<Held>>,
}

impl RequestContext {
    /// A context for a request that has just arrived.
    pub fn new(request_id: RequestId, client: ClientInfo) -> Self {
        RequestContext {
            request_id,
            client,
            started: Instant::now(),
            kind: "passthrough",
            route: String::new(),
            since: String::new(),
            caller: None,
            backend_calls: std::sync::atomic::AtomicU32::new(0),
            held: std::sync::Mutex::new(Vec::new()),
        }
    }
}

impl RequestContext {
    /// Counts one call to the backend; answers how many this request has made with it.
    pub fn count_backend_call(&self) -> u32 {
        self.backend_calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            .saturating_add(1)
    }

    /// Keeps `held` bytes counted in their budget until this request is answered.
    pub fn hold(&self, held: Held) {
        if held.bytes() > 0 {
            self.held
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(held);
        }
    }

    /// Backend calls made so far.
    pub fn backend_call_count(&self) -> u32 {
        self.backend_calls.load(std::sync::atomic::Ordering::Relaxed)
    }
}
