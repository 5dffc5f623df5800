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

use super::apply;
use super::generic;
use super::integrations::{Address, Integration, Kind, Registry};
use super::normalized::Edition as PayloadEdition;
use super::payload::{self, PayloadError};
use super::prometheus;
use super::ratelimit::RateLimiter;
use crate::body::{json_response, Body};
use crate::budget::{BodyBudget, BudgetError, Held};
use crate::config::{AlertConfig, Edition};
use crate::store::Store;

/// Seconds a sender is asked to wait when the store cannot commit.
const STORE_RETRY_AFTER: u64 = 5;

/// The receiving side of alert integrations.
pub struct Intake {
    registry: Arc<Registry>,
    store: Arc<dyn Store>,
    limiter: RateLimiter,
    config: AlertConfig,
    /// Bytes of alert bodies held at once (`alert_memory_budget_bytes`).
    budget: BodyBudget,
    /// Alert requests being read at once, all integrations together (`alert_max_concurrent`).
    reading: Arc<tokio::sync::Semaphore>,
    /// Alert requests being read at once, per integration (`alert_max_concurrent_per_integration`).
    reading_per_integration: std::sync::Mutex<HashMap<u64, Arc<tokio::sync::Semaphore>>>,
}

/// A slot among the alert requests read at once, overall and for one integration; given back when dropped.
struct ReadingSlot {
    _global: tokio::sync::OwnedSemaphorePermit,
    _integration: tokio::sync::OwnedSemaphorePermit,
}

/// A 503 that asks the sender to retry shortly, in the intake's error shape.
fn busy(message: &str) -> Response<Body> {
    with_header(
        alert_error(StatusCode::SERVICE_UNAVAILABLE, "busy", message),
        http::header::RETRY_AFTER,
        crate::budget::RETRY_AFTER_SECONDS.to_string(),
    )
}

/// An error answer in the alert intake's shape.
pub fn alert_error(status: StatusCode, code: &str, message: &str) -> Response<Body> {
    json_response(status, &json!({ "message": message, "error": code }))
}

fn with_header(mut response: Response<Body>, name: http::HeaderName, value: String) -> Response<Body> {
    if let Ok(value) = HeaderValue::from_str(&value) {
        response.headers_mut().insert(name, value);
    }
    response
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
    pub fn new(registry: Arc<Registry>, store: Arc<dyn Store>, config: AlertConfig) -> Self {
        Intake {
            registry,
            store,
            limiter: RateLimiter::new(config.rate_limit, config.rate_burst),
            budget: BodyBudget::new(config.memory_budget_bytes, config.body_read_timeout),
            reading: Arc::new(tokio::sync::Semaphore::new(config.max_concurrent)),
            reading_per_integration: std::sync::Mutex::default(),
            config,
        }
    }

    fn edition(&self) -> PayloadEdition {
        match self.config.edition {
            Edition::Free => PayloadEdition::Free,
            Edition::Premium => PayloadEdition::Premium,
        }
    }

    /// Answers one request to a receiving address.
    pub async fn handle(&self, request: Request<Incoming>, address: &Address) -> Response<Body> {
        if request.method() != Method::POST {
            let answer = alert_error(
                StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
                "only POST is accepted",
            );
            return with_header(answer, http::header::ALLOW, "POST".to_owned());
        }
        // One answer for an unknown project, an unknown endpoint and an inactive integration alike.
        let Some(integration) = self.registry.receiving(address) else {
            return alert_error(
                StatusCode::NOT_FOUND,
                "not_found",
                "no active alert integration at this address",
            );
        };
        if !presented_key(request.headers()).is_some_and(|key| integration.accepts(&key)) {
            let answer = alert_error(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "missing or wrong authorization key",
            );
            return with_header(answer, http::header::WWW_AUTHENTICATE, "Bearer".to_owned());
        }
        if !is_json(request.headers()) {
            return alert_error(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "the payload must be sent as application/json",
            );
        }
        let Some(_slot) = self.reading_slot(integration.record.id).await else {
            return busy("too many alert requests are waiting to be read; retry shortly");
        };
        match self.read_body(request).await {
            // The body's bytes stay counted in the budget until the alert is stored and answered.
            Ok((bytes, _held)) => self.accept(&integration, &bytes).await,
            Err(answer) => answer,
        }
    }

    /// A slot among the requests read at once. A request waits for one (its body unread, so it holds no
    /// payload memory) at most `body_read_timeout`; `None` when none came free in that time.
    async fn reading_slot(&self, integration: u64) -> Option<ReadingSlot> {
        let per_integration = Arc::clone(
            self.reading_per_integration
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .entry(integration)
                .or_insert_with(|| {
                    Arc::new(tokio::sync::Semaphore::new(
                        self.config.max_concurrent_per_integration,
                    ))
                }),
        );
        let slots = async {
            let integration = per_integration.acquire_owned().await.ok()?;
            let global = Arc::clone(&self.reading).acquire_owned().await.ok()?;
            Some(ReadingSlot {
                _global: global,
                _integration: integration,
            })
        };
        tokio::time::timeout(self.config.body_read_timeout, slots)
            .await
            .ok()
            .flatten()
    }

    async fn read_body(&self, request: Request<Incoming>) -> Result<(bytes::Bytes, Held), Response<Body>> {
        let limit = self.config.max_body_bytes;
        let declared = request
            .headers()
            .get(http::header::CONTENT_LENGTH)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.parse::<u64>().ok());
        let max = usize::try_from(limit).unwrap_or(usize::MAX);
        self.budget
            .read(request.into_body(), declared, max)
            .await
            .map_err(|error| match error {
                BudgetError::TooLarge { .. } => alert_error(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "payload_too_large",
                    &format!("the payload is larger than {limit} bytes (alert_max_body_bytes)"),
                ),
                BudgetError::Exhausted { budget } => busy(&format!(
                    "svcgate holds {budget} bytes of alert payloads already (alert_memory_budget_bytes); retry shortly"
                )),
                BudgetError::TimedOut(after) => alert_error(
                    StatusCode::REQUEST_TIMEOUT,
                    "timeout",
                    &format!("the payload did not arrive within {after:?} (body_read_timeout)"),
                ),
                BudgetError::Unreadable(_) => alert_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_json",
                    "the payload could not be read",
                ),
            })
    }

    /// Parses, checks, rate-limits and stores a payload already authorised (also used by test alerts).
    pub async fn accept(&self, integration: &Integration, bytes: &[u8]) -> Response<Body> {
        let now = time::OffsetDateTime::now_utc();
        let max_depth = self.config.max_depth;
        let normalized = match integration.kind {
            Kind::Prometheus => payload::parse_json(bytes, max_depth)
                .and_then(|(value, _)| prometheus::normalize_prometheus(&value, now, self.edition())),
            _ => generic::read_generic(
                bytes,
                max_depth,
                now,
                self.edition(),
                integration.mapping.as_ref(),
            )
            .map(|alert| vec![alert]),
        };
        let alerts = match normalized {
            Ok(alerts) => alerts,
            Err(error @ (PayloadError::InvalidJson { .. } | PayloadError::TooDeep { .. })) => {
                return alert_error(StatusCode::BAD_REQUEST, "invalid_json", &error.to_string())
            }
            Err(error) => {
                return alert_error(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "invalid_payload",
                    &error.to_string(),
                )
            }
        };
        if let Err(wait) = self.limiter.take(integration.record.id, alerts.len()) {
            // Alertmanager retries only 5xx answers, so Prometheus senders are told 503.
            let (status, message) = match integration.kind {
                Kind::Prometheus => (
                    StatusCode::SERVICE_UNAVAILABLE,
                    "over the rate limit; retry later",
                ),
                _ => (StatusCode::TOO_MANY_REQUESTS, "over the rate limit; retry later"),
            };
            let answer = alert_error(status, "rate_limited", message);
            return with_header(answer, http::header::RETRY_AFTER, wait.to_string());
        }
        match apply::process(self.store.as_ref(), integration, alerts, now).await {
            Ok(entries) => {
                let status = match integration.kind {
                    Kind::Prometheus => StatusCode::CREATED,
                    _ => StatusCode::OK,
                };
                json_response(status, &entries)
            }
            Err(error) => {
                tracing::error!(%error, integration = integration.record.id, "alert not committed");
                let answer = alert_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "store_unavailable",
                    "the alert could not be stored; retry later",
                );
                with_header(answer, http::header::RETRY_AFTER, STORE_RETRY_AFTER.to_string())
            }
        }
    }
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
