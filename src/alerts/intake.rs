//! The receiving endpoint: the checks of section 3 of the alert contract, in their order, each with its answer.
//!
//! 1 method, 2 address (one uniform 404), 3 key (constant time, before any body byte is read), 4 content type,
//! 5 size (from `Content-Length`, then from the stream), 6 JSON and depth, 7 payload shape, 8 rate limit,
//! 9 durable commit, 10 the per-alert outcomes. Every error is `{"message": "...", "error": "<code>"}`.

use std::collections::HashMap;
use std::sync::Arc;

use base64::Engine;
use http::header::{HeaderMap, HeaderValue};
use http::{Method, Request, Response, StatusCode};
use hyper::body::Incoming;
use serde_json::json;

use super::apply::{self, AnswerEntry};
use super::integrations::{Address, Integration, Registry};
use super::kinds;
use super::normalized::Edition as PayloadEdition;
use super::payload::PayloadError;
use super::ratelimit::RateLimiter;
use super::store_failures::StoreFailures;
use crate::alerts::settings::{AlertConfig, Edition};
use crate::http::body::{json_response, Body};
use crate::http::budget::{BodyBudget, BudgetError, Held, Share};
use crate::store::Store;
use crate::telemetry::{outcomes, Metrics};

/// Seconds a sender is asked to wait when the store cannot commit.
const STORE_RETRY_AFTER: u64 = 5;

/// The receiving side of alert integrations.
pub struct Intake {
    registry: Arc<Registry>,
    store: Arc<dyn Store>,
    limiter: RateLimiter,
    config: AlertConfig,
    /// Bytes of alert bodies held at once (`alert_memory_budget_bytes`), each read cut when its body stops
    /// (`alert_body_stall_timeout`).
    budget: BodyBudget,
    /// What each integration's senders may hold at once: bytes (`alert_integration_budget_bytes`) and read slots.
    allowances: std::sync::Mutex<HashMap<u64, Allowance>>,
    /// Alert requests being read at once, all integrations together (`alert_max_concurrent`).
    reading: Arc<tokio::sync::Semaphore>,
    /// Where alerts received are counted.
    metrics: Arc<Metrics>,
    /// Alerts the store could not take, logged at a bounded rate.
    store_failures: StoreFailures,
}

/// What one integration's senders may hold at once: bytes of payload, its share of the budget, and at most half
/// of the read slots (`alert_max_concurrent`), so that bodies trickling in on one key, each holding few bytes, cannot
/// take every slot from the other integrations. Both are given back as each read ends.
#[derive(Debug, Clone)]
struct Allowance {
    share: Share,
    reads: Arc<tokio::sync::Semaphore>,
    most_reads: usize,
}

/// Why the intake refused a request or could not keep its alerts. [`IntakeError::into_response`] is the one place
/// that turns it into an answer, `{"message": "...", "error": "<code>"}`, with the headers senders act on.
#[derive(Debug, thiserror::Error)]
pub enum IntakeError {
    /// Only POST is accepted (405, `Allow: POST`).
    #[error("only POST is accepted")]
    MethodNotAllowed,
    /// No active integration at this address (one 404 for unknown projects, endpoints and inactive ones).
    #[error("no active alert integration at this address")]
    NotFound,
    /// The key is missing or wrong (401, `WWW-Authenticate: Bearer`).
    #[error("missing or wrong authorization key")]
    Unauthorized,
    /// The body is not declared as JSON (415).
    #[error("the payload must be sent as application/json")]
    UnsupportedMediaType,
    /// The body is larger than `alert_max_body_bytes` (413).
    #[error("the payload is larger than {limit} bytes (alert_max_body_bytes)")]
    TooLarge {
        /// The limit that applied.
        limit: u64,
    },
    /// A shared limit is spent for now (503, `Retry-After`).
    #[error("{0}")]
    Busy(String),
    /// The body did not arrive within `body_read_timeout` (408).
    #[error("the payload did not arrive within {0:?} (body_read_timeout)")]
    TimedOut(std::time::Duration),
    /// The body stopped: no byte of it arrived for `alert_body_stall_timeout` (408).
    #[error("the payload stopped arriving: no byte for {0:?} (alert_body_stall_timeout)")]
    Stalled(std::time::Duration),
    /// The body's stream failed before it ended (400).
    #[error("the payload could not be read")]
    Unreadable,
    /// The body is not usable JSON (400) or not an alert (422).
    #[error(transparent)]
    Payload(#[from] PayloadError),
    /// Over the integration's rate (429, or 503 for Prometheus, whose Alertmanager retries only 5xx).
    #[error("over the rate limit; retry later")]
    RateLimited {
        /// Seconds until a token is free (`Retry-After`).
        wait: u64,
        /// The integration is a Prometheus one.
        prometheus: bool,
    },
    /// The store could not commit (503, `Retry-After`); the detail is logged, never sent. The answer says whether
    /// the alert may be stored all the same (the commit was sent and its answer lost) or surely is not.
    #[error("{}", store_failure_message(.0))]
    StoreUnavailable(#[source] crate::store::StoreError),
}

impl IntakeError {
    /// The status this error is answered with.
    pub fn status(&self) -> StatusCode {
        match self {
            IntakeError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            IntakeError::NotFound => StatusCode::NOT_FOUND,
            IntakeError::Unauthorized => StatusCode::UNAUTHORIZED,
            IntakeError::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            IntakeError::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            IntakeError::Busy(_) | IntakeError::StoreUnavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            IntakeError::TimedOut(_) | IntakeError::Stalled(_) => StatusCode::REQUEST_TIMEOUT,
            IntakeError::Unreadable => StatusCode::BAD_REQUEST,
            IntakeError::Payload(error) => error.status(),
            IntakeError::RateLimited { prometheus: true, .. } => StatusCode::SERVICE_UNAVAILABLE,
            IntakeError::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
        }
    }

    /// The answer's `error` code, for senders that branch on it.
    pub fn code(&self) -> &'static str {
        match self {
            IntakeError::MethodNotAllowed => "method_not_allowed",
            IntakeError::NotFound => "not_found",
            IntakeError::Unauthorized => "unauthorized",
            IntakeError::UnsupportedMediaType => "unsupported_media_type",
            IntakeError::TooLarge { .. } => "payload_too_large",
            IntakeError::Busy(_) => "busy",
            IntakeError::TimedOut(_) | IntakeError::Stalled(_) => "timeout",
            IntakeError::Unreadable => "invalid_json",
            IntakeError::Payload(error) => error.code(),
            IntakeError::RateLimited { .. } => "rate_limited",
            IntakeError::StoreUnavailable(_) => "store_unavailable",
        }
    }

    /// The answer for this error, in the intake's shape and with the header the sender acts on.
    pub fn into_response(self) -> Response<Body> {
        let header = match &self {
            IntakeError::MethodNotAllowed => Some((http::header::ALLOW, "POST".to_owned())),
            IntakeError::Unauthorized => Some((http::header::WWW_AUTHENTICATE, "Bearer".to_owned())),
            IntakeError::Busy(_) => Some((
                http::header::RETRY_AFTER,
                crate::http::budget::RETRY_AFTER_SECONDS.to_string(),
            )),
            IntakeError::RateLimited { wait, .. } => Some((http::header::RETRY_AFTER, wait.to_string())),
            IntakeError::StoreUnavailable(_) => {
                Some((http::header::RETRY_AFTER, STORE_RETRY_AFTER.to_string()))
            }
            _ => None,
        };
        let mut response = json_response(
            self.status(),
            &json!({ "message": self.to_string(), "error": self.code() }),
        );
        if let Some((name, value)) = header {
            if let Ok(value) = HeaderValue::from_str(&value) {
                response.headers_mut().insert(name, value);
            }
        }
        response
    }
}

/// The key a sender presented: `Authorization: Bearer <key>`, or HTTP Basic with the key as password.
fn presented_key(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(http::header::AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, rest) = value.split_once(' ')?;
    if scheme.eq_ignore_ascii_case("bearer") {
        return Some(rest.trim().to_owned());
    }
    if scheme.eq_ignore_ascii_case("basic") {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(rest.trim())
            .ok()?;
        let text = String::from_utf8(decoded).ok()?;
        return text.split_once(':').map(|(_, password)| password.to_owned());
    }
    None
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .map(|value| value.split(';').next().unwrap_or("").trim().to_ascii_lowercase())
        .is_some_and(|essence| essence == "application/json" || essence.ends_with("+json"))
}

impl Intake {
    /// The intake over `registry` and `store`.
    pub fn new(
        registry: Arc<Registry>,
        store: Arc<dyn Store>,
        config: AlertConfig,
        metrics: Arc<Metrics>,
    ) -> Self {
        Intake {
            metrics,
            registry,
            store,
            limiter: RateLimiter::new(config.rate_limit, config.rate_burst),
            budget: BodyBudget::new(config.memory_budget_bytes, config.body_read_timeout)
                .with_stall_timeout(config.body_stall_timeout),
            allowances: std::sync::Mutex::default(),
            reading: Arc::new(tokio::sync::Semaphore::new(config.max_concurrent)),
            config,
            store_failures: StoreFailures::default(),
        }
    }

    /// Shares each integration's rate limit among `replicas` live replicas.
    pub fn share_rate_among(&self, replicas: u64) {
        self.limiter.set_replicas(replicas);
    }

    fn edition(&self) -> PayloadEdition {
        match self.config.edition {
            Edition::Free => PayloadEdition::Free,
            Edition::Premium => PayloadEdition::Premium,
        }
    }

    /// Answers one request to a receiving address, counting its alerts by outcome (a refused request once, by
    /// its reason) under the type of integration the address names. Test alerts sent through the management API
    /// or the settings page are not counted: this counter is what senders sent.
    pub async fn handle(&self, request: Request<Incoming>, address: &Address) -> Response<Body> {
        let integration_type = address.kind().as_str();
        match self.receive(request, address).await {
            Ok((integration, entries)) => {
                self.count_outcomes(integration_type, &entries);
                answer(&integration, &entries)
            }
            Err(error) => {
                self.metrics
                    .alerts_received(integration_type, outcomes::REFUSED, error.code(), 1);
                error.into_response()
            }
        }
    }

    /// Counts the alerts of one accepted request, one counter update per outcome present.
    fn count_outcomes(&self, integration_type: &'static str, entries: &[AnswerEntry]) {
        for outcome in [
            outcomes::CREATED,
            outcomes::GROUPED,
            outcomes::RESOLVED,
            outcomes::NO_OPEN_ALERT,
        ] {
            let count = entries.iter().filter(|entry| entry.outcome() == outcome).count();
            if count > 0 {
                self.metrics
                    .alerts_received(integration_type, outcome, "", count as u64);
            }
        }
    }

    /// The checks of the contract in their order, then the alerts applied.
    async fn receive(
        &self,
        request: Request<Incoming>,
        address: &Address,
    ) -> Result<(Arc<Integration>, Vec<AnswerEntry>), IntakeError> {
        if request.method() != Method::POST {
            return Err(IntakeError::MethodNotAllowed);
        }
        // One answer for an unknown project, an unknown endpoint and an inactive integration alike.
        let integration = self.registry.receiving(address).ok_or(IntakeError::NotFound)?;
        if !presented_key(request.headers()).is_some_and(|key| integration.accepts(&key)) {
            return Err(IntakeError::Unauthorized);
        }
        if !is_json(request.headers()) {
            return Err(IntakeError::UnsupportedMediaType);
        }
        let allowance = self.allowance(integration.record.id);
        // No key takes every read slot with bodies that trickle in: one over its half is refused at once.
        let Ok(own_slot) = Arc::clone(&allowance.reads).try_acquire_owned() else {
            return Err(IntakeError::Busy(format!(
                "this integration's senders are sending {} payloads at once already (half of alert_max_concurrent); \
                 retry shortly",
                allowance.most_reads
            )));
        };
        let Some(slot) = self.reading_slot().await else {
            return Err(IntakeError::Busy(
                "too many alert requests are waiting to be read; retry shortly".to_owned(),
            ));
        };
        // The body's bytes stay counted in the budget and the integration's share until the alert is stored and
        // answered; the read slots are given back once it is read.
        let (bytes, _held) = self.read_body(request, &allowance.share).await?;
        drop((slot, own_slot));
        let entries = self.accept(&integration, &bytes).await?;
        Ok((integration, entries))
    }

    /// A slot among the requests read at once, all integrations together. A request waits for one (its body
    /// unread, so it holds no payload memory) at most `alert_body_stall_timeout`: a slot is held only while a
    /// body is read, and one that stops is cut within that time, so a longer wait would only queue senders behind
    /// stopped bodies. `None` when none came free in that time.
    async fn reading_slot(&self) -> Option<tokio::sync::OwnedSemaphorePermit> {
        let slot = Arc::clone(&self.reading).acquire_owned();
        tokio::time::timeout(self.config.body_stall_timeout, slot)
            .await
            .ok()?
            .ok()
    }

    /// The integration's allowance, made on its first request.
    fn allowance(&self, integration: u64) -> Allowance {
        let most_reads = (self.config.max_concurrent / 2).max(1);
        self.allowances
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(integration)
            .or_insert_with(|| Allowance {
                share: Share::new(self.config.integration_budget_bytes),
                reads: Arc::new(tokio::sync::Semaphore::new(most_reads)),
                most_reads,
            })
            .clone()
    }

    /// Reads a payload whole within the budget and the integration's `share` of it. A sender over its share is
    /// refused at once, never queued: a new request never waits behind others' stalled bodies.
    async fn read_body(
        &self,
        request: Request<Incoming>,
        share: &Share,
    ) -> Result<(bytes::Bytes, Held), IntakeError> {
        let limit = self.config.max_body_bytes;
        let declared = request
            .headers()
            .get(http::header::CONTENT_LENGTH)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.parse::<u64>().ok());
        let max = usize::try_from(limit).unwrap_or(usize::MAX);
        self.budget
            .within(share)
            .read(request.into_body(), declared, max)
            .await
            .map_err(|error| match error {
                BudgetError::TooLarge { .. } => IntakeError::TooLarge { limit },
                BudgetError::Exhausted { budget } => IntakeError::Busy(format!(
                    "svcgate holds {budget} bytes of alert payloads already (alert_memory_budget_bytes); retry shortly"
                )),
                BudgetError::ShareExhausted { share } => IntakeError::Busy(format!(
                    "this integration's senders hold {share} bytes of alert payloads already (alert_integration_budget_bytes); retry shortly"
                )),
                BudgetError::TimedOut(after) => IntakeError::TimedOut(after),
                BudgetError::Stalled(after) => IntakeError::Stalled(after),
                BudgetError::Unreadable(_) => IntakeError::Unreadable,
            })
    }

    /// Parses, checks, rate-limits and stores a payload already authorised (also used by test alerts): one answer
    /// entry per alert, in order.
    pub async fn accept(
        &self,
        integration: &Integration,
        bytes: &[u8],
    ) -> Result<Vec<AnswerEntry>, IntakeError> {
        let now = time::OffsetDateTime::now_utc();
        let max_depth = self.config.max_depth;
        let spec = kinds::spec(integration.kind);
        // A kind that receives nothing has no address, so no sender reaches it; a test alert is refused before.
        let read = spec.read.ok_or(IntakeError::NotFound)?;
        let alerts = read(
            bytes,
            max_depth,
            now,
            self.edition(),
            integration.mapping.as_ref(),
        )?;
        if let Err(wait) = self.limiter.take(integration.record.id, alerts.len()) {
            return Err(IntakeError::RateLimited {
                wait,
                prometheus: spec.alertmanager_answers,
            });
        }
        match apply::process(self.store.as_ref(), integration, alerts, now).await {
            Ok(entries) => {
                self.store_failures.succeeded();
                Ok(entries)
            }
            Err(error) => {
                self.store_failures.failed(&error, integration.record.id);
                Err(IntakeError::StoreUnavailable(error))
            }
        }
    }
}

/// What a sender is told when the store failed its alert: whether it may be stored all the same.
fn store_failure_message(error: &crate::store::StoreError) -> &'static str {
    match error {
        crate::store::StoreError::Undecided(_) => {
            "the store lost the answer to its commit: the alert may or may not be stored; send it again (a repeat \
             groups with it)"
        }
        _ => "the alert was not stored: the store is unavailable; retry later",
    }
}

/// The answer to alerts taken in: 201 for Prometheus (as Alertmanager's receivers answer), else 200.
fn answer(integration: &Integration, entries: &[AnswerEntry]) -> Response<Body> {
    let status = if kinds::spec(integration.kind).alertmanager_answers {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    json_response(status, &entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_come_from_bearer_or_basic_passwords() {
        let mut headers = HeaderMap::new();
        headers.insert(
            http::header::AUTHORIZATION,
            HeaderValue::from_static("Bearer abc123"),
        );
        assert_eq!(presented_key(&headers).as_deref(), Some("abc123"));
        // "user:s3cret" in base64.
        headers.insert(
            http::header::AUTHORIZATION,
            HeaderValue::from_static("Basic dXNlcjpzM2NyZXQ="),
        );
        assert_eq!(presented_key(&headers).as_deref(), Some("s3cret"));
        headers.insert(http::header::AUTHORIZATION, HeaderValue::from_static("Basic !!!"));
        assert_eq!(presented_key(&headers), None);
    }
}
