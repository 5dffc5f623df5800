//! The receiving endpoint: the checks of section 3 of the alert contract, in their order, each with its answer.
//!
//! 1 method, 2 address and the suffix its format takes (one uniform 404), 3 key (constant time, before any body byte
//! is read, except for a format whose key travels in the body; [`super::reception`]), 4 content type,
//! 5 size (from `Content-Length`, then from the stream), 6 JSON and depth, 7 payload shape, 8 rate limit,
//! 9 durable commit, 10 the per-alert outcomes. Every error is `{"message": "...", "error": "<code>"}`.

use std::collections::HashMap;
use std::sync::Arc;

use http::header::{HeaderMap, HeaderValue};
use http::{Method, Request, Response, StatusCode};
use hyper::body::Incoming;
use serde_json::json;

use super::apply::{self, AnswerEntry};
use super::form::{self, FormError};
use super::formats::{Catalog, Delivery, Reading};
use super::integrations::{Integration, Registry, Target};
use super::kinds;
use super::lookup;
use super::normalized::Edition as PayloadEdition;
use super::payload::PayloadError;
use super::ratelimit::RateLimiter;
use super::reception::{FormatMissing, Reception};
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
    /// The payload formats integrations may read.
    catalog: Arc<Catalog>,
    /// Read slots and bytes for bodies read before their key is checked (the key is inside them).
    keyless: Allowance,
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
    /// A method the address does not take (405, with `Allow`: `POST`, or what the routes of the integration's
    /// format take there: `PUT`, `GET` at a lookup route). The methods, as `Allow` lists them.
    #[error("only {0} is accepted at this address")]
    MethodNotAllowed(String),
    /// No active integration at this address (one 404 for unknown projects, endpoints and inactive ones).
    #[error("no active alert integration at this address")]
    NotFound,
    /// The key is missing or wrong (401, `WWW-Authenticate: Bearer`).
    #[error("missing or wrong authorization key")]
    Unauthorized,
    /// The body is not declared as JSON (415).
    #[error("the payload must be sent as application/json")]
    UnsupportedMediaType,
    /// The body is larger than `alert_max_body_bytes`, or `alert_key_in_body_max_bytes` for a body read before
    /// its key is checked (413).
    #[error("the payload is larger than {limit} bytes ({setting})")]
    TooLarge {
        /// The limit that applied.
        limit: u64,
        /// The setting that holds it.
        setting: &'static str,
    },
    /// The integration's payload format is not loaded here (503, `Retry-After`: another replica, or this one
    /// once its format directory is mended, may read it).
    #[error(transparent)]
    FormatMissing(#[from] FormatMissing),
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
    /// A form body (for a format whose senders post one) did not give its JSON field (400).
    #[error(transparent)]
    Form(#[from] FormError),
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
            IntakeError::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            IntakeError::NotFound => StatusCode::NOT_FOUND,
            IntakeError::Unauthorized => StatusCode::UNAUTHORIZED,
            IntakeError::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            IntakeError::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            IntakeError::Busy(_) | IntakeError::StoreUnavailable(_) | IntakeError::FormatMissing(_) => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            IntakeError::TimedOut(_) | IntakeError::Stalled(_) => StatusCode::REQUEST_TIMEOUT,
            IntakeError::Unreadable | IntakeError::Form(_) => StatusCode::BAD_REQUEST,
            IntakeError::Payload(error) => error.status(),
            IntakeError::RateLimited { prometheus: true, .. } => StatusCode::SERVICE_UNAVAILABLE,
            IntakeError::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
        }
    }

    /// The answer's `error` code, for senders that branch on it.
    pub fn code(&self) -> &'static str {
        match self {
            IntakeError::MethodNotAllowed(_) => "method_not_allowed",
            IntakeError::NotFound => "not_found",
            IntakeError::Unauthorized => "unauthorized",
            IntakeError::UnsupportedMediaType => "unsupported_media_type",
            IntakeError::TooLarge { .. } => "payload_too_large",
            IntakeError::Busy(_) => "busy",
            IntakeError::TimedOut(_) | IntakeError::Stalled(_) => "timeout",
            IntakeError::Unreadable => "invalid_json",
            IntakeError::Form(_) => "invalid_form",
            IntakeError::Payload(error) => error.code(),
            IntakeError::RateLimited { .. } => "rate_limited",
            IntakeError::StoreUnavailable(_) => "store_unavailable",
            IntakeError::FormatMissing(_) => "format_missing",
        }
    }

    /// The answer for this error, in the intake's shape and with the header the sender acts on.
    pub fn into_response(self) -> Response<Body> {
        let header = match &self {
            IntakeError::MethodNotAllowed(allow) => Some((http::header::ALLOW, allow.clone())),
            IntakeError::Unauthorized => Some((http::header::WWW_AUTHENTICATE, "Bearer".to_owned())),
            IntakeError::Busy(_) => Some((
                http::header::RETRY_AFTER,
                crate::http::budget::RETRY_AFTER_SECONDS.to_string(),
            )),
            IntakeError::RateLimited { wait, .. } => Some((http::header::RETRY_AFTER, wait.to_string())),
            IntakeError::StoreUnavailable(_) | IntakeError::FormatMissing(_) => {
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
        catalog: Arc<Catalog>,
    ) -> Self {
        Intake {
            metrics,
            catalog,
            keyless: Allowance {
                share: Share::new(
                    config
                        .key_in_body_max_concurrent
                        .saturating_mul(usize::try_from(config.key_in_body_max_bytes).unwrap_or(usize::MAX)),
                ),
                reads: Arc::new(tokio::sync::Semaphore::new(config.key_in_body_max_concurrent)),
                most_reads: config.key_in_body_max_concurrent,
            },
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

    /// The payload formats integrations may read.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
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
    pub async fn handle(&self, request: Request<Incoming>, target: &Target) -> Response<Body> {
        if request.method() == Method::GET {
            return self
                .look_up(&request, target)
                .unwrap_or_else(IntakeError::into_response);
        }
        let integration_type = target.address.kind().as_str();
        match self.receive(request, target).await {
            Ok(delivered) => {
                if let Received::Alerts(entries) = &delivered.received {
                    self.count_outcomes(integration_type, entries);
                }
                delivered.answer()
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

    /// A sender's lookup of a request id it was answered with (Opsgenie's `GET …/v2/alerts/requests/{id}`), at
    /// the lookup route of the integration's format; a `GET` anywhere else is refused as any method but POST is.
    /// The key is checked as for a delivery.
    fn look_up(&self, request: &Request<Incoming>, target: &Target) -> Result<Response<Body>, IntakeError> {
        let integration = self
            .registry
            .receiving(&target.address)
            .ok_or_else(|| self.not_allowed(target))?;
        let reception = Reception::of(&integration, &self.catalog)?;
        let Some(Reception::Format(format)) = &reception else {
            return Err(self.not_allowed(target));
        };
        let request_id = format
            .lookup_id(&target.suffix)
            .ok_or_else(|| self.not_allowed(target))?;
        if !reception.as_ref().is_some_and(|reception| {
            reception.head_key_matches(&integration, request.headers(), request.uri().query())
        }) {
            return Err(IntakeError::Unauthorized);
        }
        let (status, body) = lookup::answer(integration.token(), &request_id);
        Ok(json_response(status, &body))
    }

    /// The refusal of a method `target` does not take, naming those it does: what the routes of its integration's
    /// format take there, and `POST` where the address is unknown (as at any receiving address) or takes nothing.
    fn not_allowed(&self, target: &Target) -> IntakeError {
        let methods = self
            .registry
            .receiving(&target.address)
            .and_then(|integration| Reception::of(&integration, &self.catalog).ok().flatten())
            .map(|reception| reception.allowed_methods(&target.suffix))
            .unwrap_or_default();
        IntakeError::MethodNotAllowed(if methods.is_empty() {
            "POST".to_owned()
        } else {
            methods.join(", ")
        })
    }

    /// The id a delivery is answered with (`{request_id}`): one its sender can look up, for a format with a lookup
    /// route, else a random one.
    fn request_id(
        &self,
        integration: &Integration,
        reception: &Reception,
        delivery: &Delivery<'_>,
        received: &Received,
    ) -> String {
        let Reception::Format(format) = reception else {
            return format!("{:032x}", fastrand::u128(..));
        };
        if !format.has_lookup() {
            return format!("{:032x}", fastrand::u128(..));
        }
        let first = match received {
            Received::Alerts(entries) => entries.first(),
            Received::Confirmation { .. } | Received::Ignored { .. } => None,
        };
        let reason = match received {
            Received::Ignored { reason } => Some(reason.clone()),
            Received::Alerts(_) | Received::Confirmation { .. } => None,
        };
        let issued = lookup::Issued {
            outcome: first.map_or("ignored", AnswerEntry::outcome).to_owned(),
            iid: first.and_then(AnswerEntry::iid),
            key: format.sender_key(delivery, self.config.max_depth),
            reason,
            nonce: fastrand::u64(..),
        };
        lookup::issue(integration.token(), &issued)
    }

    /// The checks of the contract in their order, then the delivery read and applied.
    async fn receive(&self, request: Request<Incoming>, target: &Target) -> Result<Delivered, IntakeError> {
        // PUT only where a format's route says so (Opsgenie's updates of an alert's message).
        if request.method() != Method::POST && request.method() != Method::PUT {
            return Err(self.not_allowed(target));
        }
        // One answer for an unknown project, an unknown endpoint, an inactive integration, and a suffix its format
        // is not posted to.
        let integration = self
            .registry
            .receiving(&target.address)
            .ok_or(IntakeError::NotFound)?;
        let reception = Reception::of(&integration, &self.catalog)?.ok_or(IntakeError::NotFound)?;
        if !reception.accepts(request.method(), &target.suffix) {
            let methods = reception.allowed_methods(&target.suffix);
            return Err(if methods.is_empty() {
                IntakeError::NotFound
            } else {
                IntakeError::MethodNotAllowed(methods.join(", "))
            });
        }
        let (parts, body) = request.into_parts();
        let query = parts.uri.query();
        // The key is checked before any body byte is read, except for a format whose key travels in the body:
        // such a request, with no key in its head, is read within the smaller `alert_key_in_body_max_bytes` first.
        let key_in_head = reception.head_key_matches(&integration, &parts.headers, query);
        if !key_in_head && !reception.key_may_be_in_body() {
            return Err(IntakeError::Unauthorized);
        }
        // A format whose senders may post a form (Uptime Kuma's form preset) reads its JSON from the named field.
        let form_field = reception.form_field().filter(|_| form::is_form(&parts.headers));
        if reception.needs_json_label() && !is_json(&parts.headers) && form_field.is_none() {
            return Err(IntakeError::UnsupportedMediaType);
        }
        let (bytes, _held) = if key_in_head {
            let allowance = self.allowance(integration.record.id);
            // No key takes every read slot with bodies that trickle in: one over its half is refused at once.
            let Ok(own_slot) = Arc::clone(&allowance.reads).try_acquire_owned() else {
                return Err(IntakeError::Busy(format!(
                    "this integration's senders are sending {} payloads at once already (half of \
                     alert_max_concurrent); retry shortly",
                    allowance.most_reads
                )));
            };
            let Some(slot) = self.reading_slot().await else {
                return Err(IntakeError::Busy(
                    "too many alert requests are waiting to be read; retry shortly".to_owned(),
                ));
            };
            // The body's bytes stay counted in the budget and the integration's share until the alert is stored
            // and answered; the read slots are given back once it is read.
            let limit = self.config.max_body_bytes;
            let read = self
                .read_body(
                    &parts.headers,
                    body,
                    &allowance.share,
                    limit,
                    "alert_max_body_bytes",
                )
                .await?;
            drop((slot, own_slot));
            read
        } else {
            // A body whose key is inside it is read before anyone is known: on read slots and bytes of its own
            // (`alert_key_in_body_max_concurrent` bodies of at most `alert_key_in_body_max_bytes`), so that requests
            // without a key cannot hold what keyed senders need.
            let Ok(slot) = Arc::clone(&self.keyless.reads).try_acquire_owned() else {
                return Err(IntakeError::Busy(
                    "too many alert payloads whose key is in the body are being read at once \
                     (alert_key_in_body_max_concurrent); retry shortly"
                        .to_owned(),
                ));
            };
            let limit = self.config.key_in_body_max_bytes.min(self.config.max_body_bytes);
            let read = self
                .read_body(
                    &parts.headers,
                    body,
                    &self.keyless.share,
                    limit,
                    "alert_key_in_body_max_bytes",
                )
                .await?;
            drop(slot);
            if !reception.body_key_matches(&integration, &read.0) {
                return Err(IntakeError::Unauthorized);
            }
            read
        };
        let bytes = match form_field {
            // multer copies the body into its own buffer as it starts (for the length of that copy the form is held
            // twice) and the field is a slice of that buffer: what stays held is never more than the body's count
            // in the budget.
            Some(field) => form::field(&parts.headers, bytes, field).await?,
            None => bytes,
        };
        let delivery = Delivery {
            body: &bytes,
            suffix: &target.suffix,
            query,
            headers: &parts.headers,
        };
        let received = self.deliver(&integration, &reception, &delivery, true).await?;
        let status = reception.success_status(&integration);
        let request_id = self.request_id(&integration, &reception, &delivery, &received);
        let own_answer = reception.answer_body(&[("request_id", &request_id)], &bytes);
        Ok(Delivered {
            received,
            status,
            own_answer,
        })
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

    /// Reads a payload whole, at most `limit` bytes (the `setting` that holds it), within the budget and the
    /// integration's `share` of it. A sender over its share is refused at once, never queued: a new request never
    /// waits behind others' stalled bodies.
    async fn read_body(
        &self,
        headers: &HeaderMap,
        body: Incoming,
        share: &Share,
        limit: u64,
        setting: &'static str,
    ) -> Result<(bytes::Bytes, Held), IntakeError> {
        let declared = headers
            .get(http::header::CONTENT_LENGTH)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.parse::<u64>().ok());
        let max = usize::try_from(limit).unwrap_or(usize::MAX);
        self.budget
            .within(share)
            .read(body, declared, max)
            .await
            .map_err(|error| match error {
                BudgetError::TooLarge { .. } => IntakeError::TooLarge { limit, setting },
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

    /// Reads, rate-limits and stores a payload already authorised, sent to the address itself (also used by test
    /// alerts): one answer entry per alert, in order; none for a delivery that carries no alert.
    pub async fn accept(
        &self,
        integration: &Integration,
        bytes: &[u8],
    ) -> Result<Vec<AnswerEntry>, IntakeError> {
        // A kind that receives nothing has no address, so no sender reaches it; a test alert is refused before.
        let reception = Reception::of(integration, &self.catalog)?.ok_or(IntakeError::NotFound)?;
        let delivery = Delivery::sample(bytes);
        // A test alert never keeps a confirmation address: only a sender's own delivery may ask a maintainer to open one.
        match self.deliver(integration, &reception, &delivery, false).await? {
            Received::Alerts(entries) => Ok(entries),
            Received::Confirmation { .. } | Received::Ignored { .. } => Ok(Vec::new()),
        }
    }

    /// Reads a sample through the integration's format, as the intake would read it at the address itself, and
    /// stores nothing: what "Save and test" shows before any alert is created.
    pub fn preview(&self, integration: &Integration, bytes: &[u8]) -> Result<Reading, IntakeError> {
        let reception = Reception::of(integration, &self.catalog)?.ok_or(IntakeError::NotFound)?;
        let delivery = Delivery::sample(bytes);
        let now = time::OffsetDateTime::now_utc();
        Ok(reception.read(integration, &delivery, self.config.max_depth, now, self.edition())?)
    }

    /// Reads a delivery through the integration's format; rate-limits and stores its alerts, and keeps a
    /// subscription confirmation when `from_sender` (a delivery to the address, not a test alert).
    async fn deliver(
        &self,
        integration: &Integration,
        reception: &Reception,
        delivery: &Delivery<'_>,
        from_sender: bool,
    ) -> Result<Received, IntakeError> {
        let now = time::OffsetDateTime::now_utc();
        let alerts = match reception.read(
            integration,
            delivery,
            self.config.max_depth,
            now,
            self.edition(),
        )? {
            Reading::Alerts(alerts) => alerts,
            Reading::Confirmation { subscribe_url } => {
                // Each kept confirmation is a write every replica reloads: it counts against the rate.
                if let Err(wait) = self.limiter.take(integration.record.id, 1) {
                    return Err(IntakeError::RateLimited {
                        wait,
                        prometheus: false,
                    });
                }
                if from_sender && integration.record.pending_confirmation.as_ref() != Some(&subscribe_url) {
                    tracing::info!(
                        integration = integration.record.id,
                        %subscribe_url,
                        "a sender asks for its subscription to be confirmed: a maintainer opens this address"
                    );
                    if let Err(error) = self
                        .keep_confirmation(integration, Some(subscribe_url.clone()))
                        .await
                    {
                        self.store_failures.failed(&error, integration.record.id);
                        return Err(IntakeError::StoreUnavailable(error));
                    }
                }
                return Ok(Received::Confirmation { subscribe_url });
            }
            Reading::Ignored { reason } => return Ok(Received::Ignored { reason }),
        };
        let spec = kinds::spec(integration.kind);
        if let Err(wait) = self.limiter.take(integration.record.id, alerts.len()) {
            return Err(IntakeError::RateLimited {
                wait,
                prometheus: spec.alertmanager_answers,
            });
        }
        match apply::process(self.store.as_ref(), integration, alerts, now).await {
            Ok(entries) => {
                self.store_failures.succeeded();
                // A sender that notifies has had its subscription confirmed: the kept address has served. The alerts
                // are stored whatever happens to this write, so its failure is logged, not answered.
                if from_sender && integration.record.pending_confirmation.is_some() {
                    if let Err(error) = self.keep_confirmation(integration, None).await {
                        tracing::warn!(
                            integration = integration.record.id,
                            %error,
                            "could not forget a subscription confirmation that has served; its notice stays on the page"
                        );
                    }
                }
                Ok(Received::Alerts(entries))
            }
            Err(error) => {
                self.store_failures.failed(&error, integration.record.id);
                Err(IntakeError::StoreUnavailable(error))
            }
        }
    }
}

impl Intake {
    /// Keeps the subscription confirmation address a sender sent (`None`: forgets it), in the store and in the
    /// registry, for the integration's page to show a maintainer. Only that field is written, on the integration as
    /// it is now: a key reset, a switch-off or a deletion made meanwhile stays as it was made.
    async fn keep_confirmation(
        &self,
        integration: &Integration,
        url: Option<String>,
    ) -> Result<(), crate::store::StoreError> {
        let id = integration.record.id;
        self.store.integration_confirmation(id, url.clone()).await?;
        if let Some(current) = self.registry.get(id) {
            let mut record = current.record.clone();
            record.pending_confirmation = url;
            self.registry.put(Integration::new(
                record,
                current.kind,
                current.token().to_owned(),
                current.mapping.clone(),
            ));
        }
        Ok(())
    }
}

/// What a delivery came to.
#[derive(Debug)]
pub enum Received {
    /// Alerts applied: one entry each, in order.
    Alerts(Vec<AnswerEntry>),
    /// A subscription to confirm (SNS): its address, for a maintainer to open.
    Confirmation {
        /// The address the sender asks to be opened.
        subscribe_url: String,
    },
    /// Nothing to do (a test message, an acknowledgement).
    Ignored {
        /// Why.
        reason: String,
    },
}

/// A delivery taken in, with how its sender is answered.
struct Delivered {
    received: Received,
    status: StatusCode,
    /// The body the format's senders expect (PagerDuty's, Alerta's, Opsgenie's), instead of svcgate's own.
    own_answer: Option<serde_json::Value>,
}

impl Delivered {
    /// The answer: the format's own body when it has one, else svcgate's: the alerts' entries, or a message.
    fn answer(self) -> Response<Body> {
        if let Some(body) = self.own_answer {
            return json_response(self.status, &body);
        }
        match self.received {
            Received::Alerts(entries) => json_response(self.status, &entries),
            Received::Confirmation { .. } => json_response(
                self.status,
                &json!({ "message": "subscription confirmation kept: a maintainer confirms it from the integration's page" }),
            ),
            Received::Ignored { reason } => json_response(self.status, &json!({ "message": reason })),
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
