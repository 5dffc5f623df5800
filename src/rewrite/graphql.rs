//! The backend's GraphQL, where it saves V3 answers backend requests: a list's per-item fields in one batched
//! request ([`GraphqlState::complete`]) and a global id's project and iid in one request ([`GraphqlState::locate`]).
//!
//! Both are asked with the caller's own credentials (the headers of their [`Caller`]), so what they see is what the
//! backend lets them see; each request counts against `max_backend_calls_per_request` like any backend call. There
//! is no capability probe: the first real request tries GraphQL. When the backend has none or refuses the query
//! (404, a validation error, an answer that is not GraphQL's), that is remembered for `graphql_retry_after` and the
//! callers fall back to their per-item requests or bisection; a 5xx or a timeout is remembered for a minute at most;
//! 401, 403 and 429 are the caller's, not the backend's, and fall back for that request only; so are 413 and 422
//! (a query too long), which split that request.
//!
//! Batches are sized to the backend's complexity limit: each request's score, counted as the service counts
//! svcgate's query shape ([`query_score`]: GitLab's resolver rule, under which items named by iid cost nothing and
//! each project alias a fixed amount), stays within the limit for the caller's kind, at first the service's
//! documented one (200 anonymous, 250 signed in) and then the one the backend names in each answer's
//! `queryComplexity { limit score }`, higher or lower; within one kind the lowest named is kept until the retry
//! time. The `score` an answer reports corrects the estimate: per kind, the highest `reported / estimated`, at
//! least one, multiplies later estimates until the retry time, so a backend that scores per item (an older server)
//! is fitted from its first answer on. A query refused for its complexity all the same is split into smaller batches,
//! and the size that fits is remembered until the retry time. A backend without `queryComplexity` is asked without
//! it until the retry time. Each request's query text stays under the service's length limit, and a split round is
//! only taken while the call budget covers the per-item fallback. A `null` that came with an error at its path is
//! unanswered, not absent.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http::StatusCode;
use serde_json::{json, Map, Value};

mod query;

use query::{
    alias_score, chunk_keys, completion_query, fitting_batch, query_score, selection_of, Budget,
    QUERY_COMPLEXITY_SCORE,
};

use super::backend::Caller;
use super::rule::GraphqlCollection;
use crate::http::error::GatewayError;
use crate::store::IdKind;
use crate::telemetry::Metrics;

/// The backend's GraphQL endpoint.
pub const ENDPOINT: &str = "/api/graphql";

/// The longest a backend error or timeout keeps GraphQL off (an outage should not double every list's requests).
const ERROR_RETRY: Duration = Duration::from_secs(60);

/// Items one GraphQL request names at most: the page size a connection answers in full.
const MAX_ITEMS: usize = 100;

/// Below this many items per request the complexity limit leaves GraphQL no gain: it is not asked (for that kind
/// of caller) until the retry time.
const MIN_BATCH: usize = 10;

/// The longest query text one request carries: the service refuses more than 10,000 characters ("Query too
/// large", 422), so each request stays under this, whatever its items and projects.
const MAX_QUERY_CHARS: usize = 9_000;

/// The service's documented complexity limits, by kind of caller ([`ANONYMOUS`], [`AUTHENTICATED`]):
/// `GitlabSchema::DEFAULT_MAX_COMPLEXITY` and `AUTHENTICATED_MAX_COMPLEXITY`. Batches are sized to these until an
/// answer names the backend's own.
const DOCUMENTED_LIMITS: [u64; 2] = [200, 250];

/// Rounds of complexity splitting one list may take before the rest falls back.
const MAX_SPLITS: usize = 4;

/// The longest anything is remembered: a `graphql_retry_after` beyond it is taken as this (no overflow).
const LONGEST: Duration = Duration::from_secs(100 * 365 * 86_400);

/// One list item as GraphQL names it: its project's id and its iid (as text: GraphQL's `ID` and `String`).
pub type ItemKey = (u64, String);

/// What one GraphQL request came to.
#[derive(Debug, PartialEq)]
enum Answer {
    /// Executed: the `data` object, and the `errors` that came with it (each with its `path`).
    Data {
        /// The `data` object.
        data: Map<String, Value>,
        /// The answer's `errors`, empty when it had none.
        errors: Vec<Value>,
    },
    /// Refused for its complexity: the query's score and the backend's limit.
    Complexity {
        /// The query's complexity as the backend counted it.
        score: u64,
        /// The backend's limit.
        max: u64,
    },
    /// Refused for its size (413, 422 "Query too large"): this request's trouble, not the backend's refusal.
    TooLarge,
    /// Refused for `queryComplexity`, a field the backend does not have (an older server): asked again without it.
    NoLimitField,
    /// The backend has no GraphQL or cannot run the query: remembered for `graphql_retry_after`.
    Refused,
    /// A backend error or timeout: remembered briefly.
    Error,
    /// Refused for this caller (401, 403, 429): not remembered.
    Denied,
}

/// Where a global id was found, as the backend's GraphQL answered.
#[derive(Debug, PartialEq, Eq)]
pub enum Located {
    /// The record, and its project's full path (from `reference(full: true)`) when the answer gave one.
    Found {
        /// The project's id.
        project_id: u64,
        /// The record's iid.
        iid: u64,
        /// The project's full path.
        project_path: Option<String>,
    },
    /// No such record for this caller (absent, or one they may not see).
    NotFound,
    /// GraphQL did not answer: look it up another way.
    Unanswered,
}

/// A correction of [`query_score`] for one kind of caller, until when.
#[derive(Debug, Clone, Copy)]
struct Correction {
    /// What the backend's score was at most, as a multiple of the estimate (at least 1).
    factor: f64,
    /// When it is forgotten (the retry time after it was last seen).
    until: Instant,
}

/// Items per request a complexity refusal allowed, for one kind of caller, until when.
#[derive(Debug, Clone, Copy)]
struct BatchLimit {
    /// Items per request; 0: GraphQL is not asked for this kind of caller until `until`.
    size: usize,
    /// When the figure is forgotten (the retry time after it was learnt).
    until: Instant,
}

/// The lowest complexity limit the backend named for one kind of caller, until when.
#[derive(Debug, Clone, Copy)]
struct NamedLimit {
    /// The limit.
    limit: u64,
    /// When it is forgotten (the retry time after it was named, or lowered).
    until: Instant,
}

/// The kinds of caller whose complexity limits differ (the service allows anonymous callers less).
const ANONYMOUS: usize = 0;
/// See [`ANONYMOUS`].
const AUTHENTICATED: usize = 1;

/// The per-backend GraphQL state: whether to ask, and how many items a request may name.
pub struct GraphqlState {
    /// Until when GraphQL is not asked (the backend refused it).
    refused_until: Mutex<Option<Instant>>,
    /// How long a refusal is remembered.
    retry_after: Duration,
    /// Items per request a complexity refusal allowed, for anonymous and for authenticated callers.
    limits: Mutex<[Option<BatchLimit>; 2]>,
    /// The complexity limits the backend named, for anonymous and for authenticated callers.
    named: Mutex<[Option<NamedLimit>; 2]>,
    /// How much more than [`query_score`] the backend scored, for anonymous and for authenticated callers.
    corrections: Mutex<[Option<Correction>; 2]>,
    /// Whether an answer that answered nothing has been logged at `warn` (once; later ones at `debug`).
    warned_useless: AtomicBool,
    /// Until when completions leave out `queryComplexity` (the backend said it has no such field).
    no_limit_field_until: Mutex<Option<Instant>>,
    /// The global id app word (`gid://WORD/Issue/1`), the identifier word.
    word: String,
    metrics: Arc<Metrics>,
}

/// `now + period`, or as late as can be told when that overflows.
fn deadline(now: Instant, period: Duration) -> Instant {
    now.checked_add(period.min(LONGEST))
        .or_else(|| now.checked_add(Duration::from_secs(365 * 86_400)))
        .unwrap_or(now)
}

/// Which kind of caller `caller` is for the complexity limit: authenticated when it carries credentials.
fn class_of(caller: &Caller<'_>) -> usize {
    let headers = &caller.headers;
    if ["private-token", "authorization", "cookie"]
        .iter()
        .any(|name| headers.get(*name).is_some_and(|value| !value.is_empty()))
    {
        AUTHENTICATED
    } else {
        ANONYMOUS
    }
}

impl GraphqlState {
    /// State for a backend whose global ids read `gid://{word}/…`, remembering refusals for `retry_after`.
    pub fn new(word: &str, retry_after: Duration, metrics: Arc<Metrics>) -> Self {
        GraphqlState {
            refused_until: Mutex::new(None),
            retry_after,
            limits: Mutex::new([None; 2]),
            named: Mutex::new([None; 2]),
            corrections: Mutex::new([None; 2]),
            warned_useless: AtomicBool::new(false),
            no_limit_field_until: Mutex::new(None),
            word: word.to_owned(),
            metrics,
        }
    }

    /// Whether GraphQL may be asked for this caller now: not refused recently, and no `sudo` (GraphQL answers as
    /// the token's own user, never the one `sudo` names).
    fn usable(&self, caller: &Caller<'_>, kind: &'static str) -> bool {
        let refused = self
            .refused_until
            .lock()
            .ok()
            .and_then(|until| *until)
            .is_some_and(|until| Instant::now() < until);
        let usable = !refused && !caller.headers.contains_key("sudo");
        if !usable {
            self.metrics.graphql(kind, "skipped");
        }
        usable
    }

    /// Whether completions ask the backend's complexity limit and score (not until the retry time after the
    /// backend said it has no `queryComplexity`).
    fn asks_limit(&self) -> bool {
        self.no_limit_field_until
            .lock()
            .ok()
            .and_then(|until| *until)
            .map_or(true, |until| until <= Instant::now())
    }

    /// Keeps GraphQL off for `period`.
    fn refuse_for(&self, period: Duration) {
        if let Ok(mut until) = self.refused_until.lock() {
            *until = Some(deadline(Instant::now(), period));
        }
    }

    /// Items one request may name now for callers of `class`, as complexity refusals left it; `None` when GraphQL
    /// is not asked for them.
    fn batch_size(&self, class: usize) -> Option<usize> {
        let Ok(mut limits) = self.limits.lock() else {
            return Some(MAX_ITEMS);
        };
        match limits[class] {
            Some(limit) if Instant::now() < limit.until => {
                (limit.size > 0).then_some(limit.size.min(MAX_ITEMS))
            }
            _ => {
                limits[class] = None;
                Some(MAX_ITEMS)
            }
        }
    }

    /// The complexity limit for callers of `class`: the lowest the backend named since the retry time, else the
    /// service's documented one.
    fn complexity_limit(&self, class: usize) -> u64 {
        let documented = DOCUMENTED_LIMITS[class];
        let Ok(mut named) = self.named.lock() else {
            return documented;
        };
        match named[class] {
            Some(named) if Instant::now() < named.until => named.limit,
            _ => {
                named[class] = None;
                documented
            }
        }
    }

    /// Whether the backend named a complexity limit for callers of `class` since the retry time.
    fn limit_named(&self, class: usize) -> bool {
        self.named
            .lock()
            .ok()
            .and_then(|named| named[class])
            .is_some_and(|named| Instant::now() < named.until)
    }

    /// Remembers, until the retry time, that the backend named `limit` for callers of `class`: it replaces a
    /// figure forgotten, or the documented one, upwards or downwards, and lowers one still remembered (never
    /// raising it: a caller allowed more, such as an administrator, must not make the next caller's request fail).
    fn name_limit(&self, class: usize, limit: u64) {
        let now = Instant::now();
        let Ok(mut named) = self.named.lock() else {
            return;
        };
        let current = named[class].filter(|named| now < named.until);
        // A higher one is not taken while a lower is remembered; the same one keeps it remembered longer.
        if current.is_some_and(|named| named.limit < limit) {
            return;
        }
        if current.is_none() && limit != DOCUMENTED_LIMITS[class] {
            tracing::debug!(limit, "the backend's GraphQL complexity limit");
        }
        named[class] = Some(NamedLimit {
            limit,
            until: deadline(now, self.retry_after),
        });
    }

    /// The factor [`query_score`]'s estimates are multiplied by for callers of `class`: the highest
    /// `reported / estimated` since the retry time, at least 1.
    fn correction(&self, class: usize) -> f64 {
        let Ok(mut corrections) = self.corrections.lock() else {
            return 1.0;
        };
        match corrections[class] {
            Some(correction) if Instant::now() < correction.until => correction.factor,
            _ => {
                corrections[class] = None;
                1.0
            }
        }
    }

    /// Remembers, until the retry time, that the backend scored `reported` a query [`query_score`] estimated at
    /// `estimated`, for callers of `class`: the factor only grows meanwhile (a server scoring per item reports
    /// less for a small batch than for a full one).
    fn correct(&self, class: usize, reported: u64, estimated: u64) {
        let now = Instant::now();
        let factor = (reported as f64 / estimated.max(1) as f64).max(1.0);
        let Ok(mut corrections) = self.corrections.lock() else {
            return;
        };
        let current = corrections[class].filter(|correction| now < correction.until);
        if current.is_some_and(|correction| correction.factor > factor) {
            return;
        }
        if factor > 1.0 && current.is_none() {
            tracing::debug!(
                factor,
                "the backend's GraphQL scores svcgate's queries higher than the service does"
            );
        }
        corrections[class] = Some(Correction {
            factor,
            until: deadline(now, self.retry_after),
        });
    }

    /// What one request may hold now for callers of `class` asking nodes `selection`: the items complexity
    /// refusals left, the complexity limit and the correction factor, or `None` when GraphQL is not asked (a
    /// refusal left fewer than [`MIN_BATCH`] items, or the limit does not fit one project's alias). The factor is
    /// capped so that one project's alias always fits the limit: a server scoring higher is then asked one
    /// project a request, and a refusal of those shrinks the items instead of switching GraphQL off.
    fn budget(&self, class: usize, selection: &str) -> Option<Budget> {
        let score = self.complexity_limit(class);
        let one = QUERY_COMPLEXITY_SCORE.saturating_add(alias_score(selection));
        let cap = score as f64 / one.max(1) as f64;
        let budget = Budget {
            items: self.batch_size(class)?,
            score,
            factor: self.correction(class).min(cap).max(1.0),
        };
        (score >= one).then_some(budget)
    }

    /// After the backend refused `chunk` (cut within `limits`) scoring it `score` over its limit `max`, for callers
    /// of `class` asking nodes `selection`: answers whether its items may be asked again. Cut for a higher limit
    /// (another caller's of this kind), it is cut again to the one named now; spanning several projects (the
    /// service scores per project), the estimate is corrected and it is cut again by projects; one project's
    /// items scored higher than estimated (a server scoring per item) make fewer items asked until the retry time.
    fn after_refusal(
        &self,
        class: usize,
        chunk: &[ItemKey],
        selection: &str,
        limits: Budget,
        score: u64,
        max: u64,
    ) -> bool {
        let estimated = query_score(chunk, selection);
        let named = Budget { score: max, ..limits };
        if !named.fits(estimated) {
            return true;
        }
        let first = chunk.first().map(|key| key.0);
        if chunk.iter().any(|key| Some(key.0) != first) {
            self.correct(class, score, estimated);
            return true;
        }
        let fits = fitting_batch(chunk.len(), score, max).min(chunk.len().saturating_sub(1));
        self.shrink_batch(class, fits)
    }

    /// Remembers, until the retry time, that requests of `fits` items fit the backend's complexity limit for
    /// callers of `class` (never growing the figure meanwhile); below [`MIN_BATCH`], GraphQL is not asked for
    /// them. Answers whether GraphQL may still be asked.
    fn shrink_batch(&self, class: usize, fits: usize) -> bool {
        let now = Instant::now();
        let Ok(mut limits) = self.limits.lock() else {
            return true;
        };
        let old = limits[class]
            .filter(|limit| now < limit.until)
            .map_or(MAX_ITEMS, |limit| limit.size);
        let size = match old.min(fits) {
            size if size < MIN_BATCH => 0,
            size => size,
        };
        if size == 0 && old != 0 {
            tracing::info!(
                fits,
                retry_after = ?self.retry_after,
                "the backend's GraphQL complexity limit allows too few items per request; using per-item requests \
                 until the retry time"
            );
        }
        limits[class] = Some(BatchLimit {
            size,
            until: deadline(now, self.retry_after),
        });
        size > 0
    }

    /// Sends one query and judges the answer; counts and remembers the outcome. An answer `useless` finds
    /// answering nothing the query asked is a refusal.
    async fn ask(
        &self,
        caller: &Caller<'_>,
        kind: &'static str,
        query: &str,
        variables: Value,
        useless: impl Fn(&Map<String, Value>, &[Value]) -> bool,
    ) -> Result<Answer, GatewayError> {
        let payload = json!({ "query": query, "variables": variables });
        let answer = match caller.post_json(ENDPOINT, &payload).await {
            Ok((parts, bytes)) => judge(parts.status, &bytes),
            Err(error @ (GatewayError::TooManyBackendCalls { .. } | GatewayError::Busy(_))) => {
                return Err(error)
            }
            Err(error) => {
                tracing::debug!(%error, "GraphQL request failed");
                Answer::Error
            }
        };
        let answer = match answer {
            Answer::Data { data, errors } if useless(&data, &errors) => {
                let message = errors
                    .first()
                    .and_then(|error| error.get("message"))
                    .and_then(Value::as_str)
                    .unwrap_or("no answer for any of the query's fields");
                if self.warned_useless.swap(true, Ordering::Relaxed) {
                    tracing::debug!(message, "the backend's GraphQL answered nothing svcgate asked");
                } else {
                    tracing::warn!(
                        message,
                        "the backend's GraphQL answered nothing svcgate asked (is identifier_word the backend's?)"
                    );
                }
                Answer::Refused
            }
            answer => answer,
        };
        let outcome = match &answer {
            Answer::Data { .. } => "ok",
            Answer::Complexity { .. } => "split",
            Answer::TooLarge => "too_large",
            Answer::NoLimitField => {
                if let Ok(mut until) = self.no_limit_field_until.lock() {
                    *until = Some(deadline(Instant::now(), self.retry_after));
                }
                "no_limit_field"
            }
            Answer::Refused => {
                tracing::info!(
                    retry_after = ?self.retry_after,
                    "the backend refused GraphQL; using per-item requests until the retry time"
                );
                self.refuse_for(self.retry_after);
                "refused"
            }
            Answer::Error => {
                self.refuse_for(self.retry_after.min(ERROR_RETRY));
                "error"
            }
            Answer::Denied => "denied",
        };
        self.metrics.graphql(kind, outcome);
        Ok(answer)
    }

    /// The `fields` (V4 names) of each item in `keys`, asked in as few requests as the backend accepts, at most
    /// `concurrency` at once. Items the answer lacks (deleted or hidden since the list was read, or a field the
    /// backend could not answer), and all of them when GraphQL is refused, are left out: the caller fetches those
    /// one by one. Another round of splitting is only taken while the call budget left also covers fetching every
    /// item still unanswered one by one.
    pub async fn complete(
        &self,
        caller: &Caller<'_>,
        collection: GraphqlCollection,
        fields: &[String],
        keys: &[ItemKey],
        concurrency: usize,
    ) -> Result<HashMap<ItemKey, Map<String, Value>>, GatewayError> {
        let mut found = HashMap::new();
        if keys.is_empty() || !self.usable(caller, "completion") {
            return Ok(found);
        }
        let class = class_of(caller);
        let selection = &selection_of(fields);
        let mut max_chars = MAX_QUERY_CHARS;
        let mut max_items = MAX_ITEMS;
        let mut pending: Vec<ItemKey> = keys.to_vec();
        // Rounds counted against `MAX_SPLITS`: the round sending what the first request held back is not one.
        let mut rounds = 0;
        let mut after_probe = false;
        // Until an answer with `data`, the first request of a list goes alone.
        let mut probing = true;
        loop {
            let split = !std::mem::take(&mut after_probe);
            if split {
                if rounds == MAX_SPLITS {
                    break;
                }
                rounds += 1;
            }
            let Some(budget) = self.budget(class, selection) else {
                self.metrics.graphql("completion", "skipped");
                break;
            };
            let limits = Budget {
                items: budget.items.min(max_items),
                ..budget
            };
            let chunks = chunk_keys(&pending, limits, max_chars, collection, selection);
            if split && rounds > 1 {
                let left = caller
                    .max_calls
                    .saturating_sub(caller.context.backend_call_count());
                let unanswered = keys.len().saturating_sub(found.len());
                if usize::try_from(left).unwrap_or(usize::MAX) < chunks.len().saturating_add(unanswered) {
                    tracing::debug!(
                        left,
                        unanswered,
                        "too few backend calls left to split GraphQL again"
                    );
                    break;
                }
            }
            let mut retry = Vec::new();
            let mut stop = false;
            let asks_limit = self.asks_limit();
            // Until the backend has named its limit for this kind of caller, one request goes first and the rest
            // are cut again to the limit its answer names: at most one request is refused per retry time.
            let probe = probing && asks_limit && chunks.len() > 1 && !self.limit_named(class);
            let (now, later) = chunks.split_at(if probe { 1 } else { chunks.len() });
            retry.extend(later.iter().flatten().cloned());
            for wave in now.chunks(concurrency.max(1)) {
                let asked = wave.iter().map(|chunk| async move {
                    let (query, variables, aliases) =
                        completion_query(&self.word, collection, selection, chunk, asks_limit);
                    let useless =
                        |data: &Map<String, Value>, errors: &[Value]| answers_nothing(data, errors, aliases);
                    let answer = self.ask(caller, "completion", &query, variables, useless).await;
                    (chunk, answer)
                });
                for (chunk, answer) in futures_util::future::join_all(asked).await {
                    match answer? {
                        Answer::Data { data, .. } => {
                            probing = false;
                            if let Some(limit) = named_limit(&data) {
                                self.name_limit(class, limit);
                            }
                            if let Some(reported) = reported_score(&data) {
                                self.correct(class, reported, query_score(chunk, selection));
                            }
                            found.extend(read_completion(&data, collection, fields, chunk.len()))
                        }
                        Answer::Complexity { score, max } => {
                            self.name_limit(class, max);
                            // A single item that does not fit cannot be split: it is fetched on its own.
                            if chunk.len() > 1 {
                                if self.after_refusal(class, chunk, selection, limits, score, max) {
                                    retry.extend_from_slice(chunk);
                                } else {
                                    stop = true;
                                }
                            }
                        }
                        Answer::TooLarge => {
                            // This request's size, not the backend's refusal: asked again in halves.
                            if chunk.len() > 1 {
                                max_items = max_items.min(chunk.len() / 2).max(1);
                                max_chars = (max_chars / 2).max(1_000);
                                retry.extend_from_slice(chunk);
                            }
                        }
                        Answer::NoLimitField => retry.extend_from_slice(chunk),
                        Answer::Refused | Answer::Error | Answer::Denied => stop = true,
                    }
                }
                if stop {
                    return Ok(found);
                }
            }
            if retry.is_empty() {
                break;
            }
            // Only what the first request held back is asked again: not a split.
            after_probe = probe && retry.len() == later.iter().map(Vec::len).sum::<usize>();
            pending = retry;
        }
        Ok(found)
    }

    /// The project and iid of global id `id` of `kind`, in one request.
    pub async fn locate(&self, caller: &Caller<'_>, kind: IdKind, id: u64) -> Result<Located, GatewayError> {
        if !self.usable(caller, "id") {
            return Ok(Located::Unanswered);
        }
        let (field, model) = match kind {
            IdKind::Issue => ("issue", "Issue"),
            IdKind::MergeRequest => ("mergeRequest", "MergeRequest"),
        };
        let query = format!("query($id:{model}ID!){{{field}(id:$id){{iid projectId reference(full:true)}}}}");
        let variables = json!({ "id": format!("gid://{}/{model}/{id}", self.word) });
        let useless = |data: &Map<String, Value>, _: &[Value]| !data.contains_key(field);
        match self.ask(caller, "id", &query, variables, useless).await? {
            Answer::Data { data, errors } => Ok(read_located(data.get(field), &errors, field)),
            _ => Ok(Located::Unanswered),
        }
    }
}

/// Whether an error of `errors` is at `field` (its `path` starts with it).
fn error_at(errors: &[Value], field: &str) -> bool {
    errors.iter().any(|error| {
        error
            .get("path")
            .and_then(Value::as_array)
            .and_then(|path| path.first())
            .and_then(Value::as_str)
            == Some(field)
    })
}

/// Whether the `data` of a [`completion_query`] with `aliases` aliases answered none of them: no alias at all, or
/// every one `null` with an error at its path (a query the backend cannot run for any project, such as global
/// ids of another app word).
fn answers_nothing(data: &Map<String, Value>, errors: &[Value], aliases: usize) -> bool {
    let names: Vec<String> = (0..aliases).map(|index| format!("p{index}")).collect();
    if !names.iter().any(|name| data.contains_key(name)) {
        return true;
    }
    names
        .iter()
        .all(|name| data.get(name).map_or(true, Value::is_null) && error_at(errors, name))
}

/// Judges one GraphQL answer by its status and body.
fn judge(status: StatusCode, bytes: &[u8]) -> Answer {
    match status {
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN | StatusCode::TOO_MANY_REQUESTS => {
            return Answer::Denied
        }
        StatusCode::PAYLOAD_TOO_LARGE | StatusCode::UNPROCESSABLE_ENTITY => return Answer::TooLarge,
        status if status.is_server_error() || status == StatusCode::REQUEST_TIMEOUT => return Answer::Error,
        status if !status.is_success() => return Answer::Refused,
        _ => {}
    }
    let Ok(Value::Object(mut body)) = serde_json::from_slice::<Value>(bytes) else {
        return Answer::Refused;
    };
    let errors = match body.remove("errors") {
        Some(Value::Array(errors)) => errors,
        _ => Vec::new(),
    };
    if let Some(Value::Object(data)) = body.remove("data") {
        return Answer::Data { data, errors };
    }
    let messages: Vec<&str> = errors
        .iter()
        .filter_map(|error| error.get("message").and_then(Value::as_str))
        .collect();
    if let Some((score, max)) = messages.iter().find_map(|message| complexity_of(message)) {
        return Answer::Complexity { score, max };
    }
    if messages
        .iter()
        .any(|message| message.contains("'queryComplexity'"))
    {
        return Answer::NoLimitField;
    }
    if let Some(message) = messages.first() {
        tracing::warn!(message, "the backend's GraphQL refused svcgate's query");
    }
    Answer::Refused
}

/// The score and limit of a complexity refusal: `Query has complexity of 603, which exceeds max complexity of 250`.
fn complexity_of(message: &str) -> Option<(u64, u64)> {
    let rest = message.strip_prefix("Query has complexity of ")?;
    let (score, rest) = rest.split_once(',')?;
    let max = rest.trim().strip_prefix("which exceeds max complexity of ")?;
    let max = max.trim_end_matches('.').trim();
    Some((score.trim().parse().ok()?, max.parse().ok()?))
}

/// A GraphQL `ID`, `String` or `Int` as text (an iid is `ID!` on issues, `String!` on merge requests).
fn text_of(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

/// The project id in a project's global id (`gid://svc/Project/5` → 5).
fn project_id_of(gid: &str) -> Option<u64> {
    gid.rsplit_once("/Project/")?.1.parse().ok()
}

/// Whether `value` is of the type V4 gives `field` (`subscribed` and `confidential` booleans, `title` and
/// `web_url` text): anything else is not copied, and the item is fetched on its own.
fn typed_as_v4(field: &str, value: &Value) -> bool {
    match field {
        "subscribed" | "confidential" => value.is_boolean(),
        "title" | "web_url" => value.is_string(),
        _ => false,
    }
}

/// The items the `data` of a [`completion_query`] gave, each with its fields under their V4 names. A node that
/// lacks one of the fields, or has one of another type than V4's, is left out (fetched one by one).
fn read_completion(
    data: &Map<String, Value>,
    collection: GraphqlCollection,
    fields: &[String],
    capacity: usize,
) -> HashMap<ItemKey, Map<String, Value>> {
    let mut found = HashMap::with_capacity(capacity);
    let aliases = data.iter().filter(|(name, _)| name.starts_with('p'));
    for (_, alias) in aliases {
        let Some(project) = alias
            .get("nodes")
            .and_then(Value::as_array)
            .and_then(|nodes| nodes.first())
        else {
            continue;
        };
        let Some(project_id) = project.get("id").and_then(Value::as_str).and_then(project_id_of) else {
            continue;
        };
        let nodes = project
            .get(collection.field())
            .and_then(|connection| connection.get("nodes"))
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        for node in nodes {
            let Some(iid) = node.get("iid").and_then(text_of) else {
                continue;
            };
            let completed: Option<Map<String, Value>> = fields
                .iter()
                .map(|field| {
                    let value = node.get(GraphqlCollection::node_field(field)?)?;
                    typed_as_v4(field, value).then(|| (field.clone(), value.clone()))
                })
                .collect();
            if let Some(completed) = completed {
                found.insert((project_id, iid), completed);
            }
        }
    }
    found
}

/// The complexity limit an answer's `queryComplexity { limit }` names, if any.
fn named_limit(data: &Map<String, Value>) -> Option<u64> {
    data.get("queryComplexity")?.get("limit")?.as_u64()
}

/// The query's own score an answer's `queryComplexity { score }` reports, if any.
fn reported_score(data: &Map<String, Value>) -> Option<u64> {
    data.get("queryComplexity")?.get("score")?.as_u64()
}

/// What `issue(id:)` or `mergeRequest(id:)` (`field`) answered: `null` is no record for this caller, unless an
/// error came at its path (then GraphQL did not answer).
fn read_located(record: Option<&Value>, errors: &[Value], field: &str) -> Located {
    match record {
        None => Located::Unanswered,
        Some(Value::Null) if error_at(errors, field) => Located::Unanswered,
        Some(Value::Null) => Located::NotFound,
        Some(record) => {
            let iid = record
                .get("iid")
                .and_then(text_of)
                .and_then(|iid| iid.parse().ok());
            let project_id = record
                .get("projectId")
                .and_then(text_of)
                .and_then(|id| id.parse().ok());
            let project_path = record
                .get("reference")
                .and_then(Value::as_str)
                .and_then(|reference| reference.rfind(['#', '!']).map(|at| reference[..at].to_owned()));
            match (project_id, iid) {
                (Some(project_id), Some(iid)) => Located::Found {
                    project_id,
                    iid,
                    project_path,
                },
                _ => Located::Unanswered,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_completion_query_has_one_alias_per_project_by_id() {
        let keys = vec![(5, "1".to_owned()), (7, "3".to_owned()), (5, "2".to_owned())];
        let selection = selection_of(&["subscribed".to_owned()]);
        let (query, variables, aliases) =
            completion_query("svc", GraphqlCollection::Issues, &selection, &keys, true);
        assert_eq!(aliases, 2);
        assert_eq!(
            query,
            "query($p0:[ID!],$i0:[String!],$p1:[ID!],$i1:[String!]){queryComplexity{limit score}\
             p0:projects(ids:$p0,first:1){nodes{id issues(iids:$i0,first:2){nodes{iid subscribed}}}}\
             p1:projects(ids:$p1,first:1){nodes{id issues(iids:$i1,first:1){nodes{iid subscribed}}}}}"
        );
        assert_eq!(
            variables,
            json!({"p0": ["gid://svc/Project/5"], "i0": ["1", "2"], "p1": ["gid://svc/Project/7"], "i1": ["3"]})
        );
        let (query, _, _) = completion_query(
            "svc",
            GraphqlCollection::MergeRequests,
            &selection,
            &keys[..1],
            false,
        );
        assert!(query.contains("mergeRequests(iids:$i0,first:1)"), "{query}");
        assert!(
            query.starts_with("query($p0:[ID!],$i0:[String!]){p0:"),
            "without the limit: {query}"
        );
    }

    #[test]
    fn an_answer_gives_each_listed_node_and_leaves_out_the_rest() {
        let data = json!({
            "p0": {"nodes": [{"id": "gid://svc/Project/5", "issues": {"nodes": [
                {"iid": "1", "subscribed": true},
                {"iid": "2"},
            ]}}]},
            "p1": {"nodes": []},
        });
        let Value::Object(data) = data else { unreachable!() };
        let found = read_completion(&data, GraphqlCollection::Issues, &["subscribed".to_owned()], 2);
        assert_eq!(found.len(), 1);
        assert_eq!(found[&(5, "1".to_owned())]["subscribed"], json!(true));
    }

    #[test]
    fn answers_are_judged_by_status_and_shape() {
        let ok = judge(StatusCode::OK, br#"{"data":{"issue":null}}"#);
        assert!(matches!(ok, Answer::Data { errors, .. } if errors.is_empty()));
        let with_errors = judge(
            StatusCode::OK,
            br#"{"data":{"issue":null},"errors":[{"message":"boom","path":["issue"]}]}"#,
        );
        assert!(matches!(with_errors, Answer::Data { errors, .. } if errors.len() == 1));
        assert_eq!(
            judge(
                StatusCode::UNPROCESSABLE_ENTITY,
                br#"{"errors":[{"message":"Query too large"}]}"#
            ),
            Answer::TooLarge
        );
        assert_eq!(judge(StatusCode::PAYLOAD_TOO_LARGE, b""), Answer::TooLarge);
        assert_eq!(
            judge(
                StatusCode::OK,
                br#"{"errors":[{"message":"Query has complexity of 603, which exceeds max complexity of 250"}]}"#
            ),
            Answer::Complexity {
                score: 603,
                max: 250
            }
        );
        assert_eq!(
            judge(
                StatusCode::OK,
                br#"{"errors":[{"message":"Field 'x' doesn't exist on type 'Query'"}]}"#
            ),
            Answer::Refused
        );
        assert_eq!(
            judge(StatusCode::NOT_FOUND, br#"{"message":"404 Not Found"}"#),
            Answer::Refused
        );
        assert_eq!(
            judge(
                StatusCode::OK,
                br#"{"errors":[{"message":"Field 'queryComplexity' doesn't exist on type 'Query'"}]}"#
            ),
            Answer::NoLimitField
        );
        assert_eq!(judge(StatusCode::OK, b"<html>"), Answer::Refused);
        assert_eq!(judge(StatusCode::OK, b"{}"), Answer::Refused);
        assert_eq!(judge(StatusCode::UNAUTHORIZED, b"{}"), Answer::Denied);
        assert_eq!(judge(StatusCode::TOO_MANY_REQUESTS, b""), Answer::Denied);
        assert_eq!(judge(StatusCode::BAD_GATEWAY, b""), Answer::Error);
    }

    #[test]
    fn a_complexity_refusal_gives_a_batch_that_fits() {
        assert_eq!(fitting_batch(100, 603, 250), 37);
        assert_eq!(fitting_batch(1, 603, 250), 1);
        assert_eq!(fitting_batch(3, 0, 250), 1);
    }

    #[test]
    fn a_located_record_names_its_project() {
        let record = json!({"iid": "12", "projectId": 5, "reference": "group/proj#12"});
        assert_eq!(
            read_located(Some(&record), &[], "issue"),
            Located::Found {
                project_id: 5,
                iid: 12,
                project_path: Some("group/proj".to_owned())
            }
        );
        let record = json!({"iid": "3", "projectId": 5, "reference": "a/b!3"});
        assert!(matches!(
            read_located(Some(&record), &[], "issue"),
            Located::Found { project_path: Some(path), .. } if path == "a/b"
        ));
        assert_eq!(read_located(Some(&Value::Null), &[], "issue"), Located::NotFound);
        assert_eq!(read_located(None, &[], "issue"), Located::Unanswered);
    }

    #[test]
    fn a_null_record_that_came_with_an_error_at_its_path_is_unanswered_not_absent() {
        let errors = [json!({"message": "Internal server error", "path": ["issue"]})];
        assert_eq!(
            read_located(Some(&Value::Null), &errors, "issue"),
            Located::Unanswered
        );
        let elsewhere = [json!({"message": "x", "path": ["mergeRequest"]})];
        assert_eq!(
            read_located(Some(&Value::Null), &elsewhere, "issue"),
            Located::NotFound
        );
    }

    #[test]
    fn requests_are_cut_by_items_and_by_query_length() {
        let selection = selection_of(&["subscribed".to_owned()]);
        let many: Vec<ItemKey> = (0..200).map(|project| (project, "1".to_owned())).collect();
        let unlimited = Budget {
            items: MAX_ITEMS,
            score: u64::MAX,
            factor: 1.0,
        };
        let chunks = chunk_keys(
            &many,
            unlimited,
            MAX_QUERY_CHARS,
            GraphqlCollection::Issues,
            &selection,
        );
        assert!(chunks.len() >= 3, "{}", chunks.len());
        assert_eq!(chunks.iter().map(Vec::len).sum::<usize>(), 200);
        for chunk in &chunks {
            let (query, _, _) = completion_query("svc", GraphqlCollection::Issues, &selection, chunk, true);
            assert!(query.len() <= MAX_QUERY_CHARS, "{}", query.len());
        }
        let one: Vec<ItemKey> = (0..250).map(|iid| (5, iid.to_string())).collect();
        let chunks = chunk_keys(
            &one,
            unlimited,
            MAX_QUERY_CHARS,
            GraphqlCollection::Issues,
            &selection,
        );
        assert_eq!(chunks.iter().map(Vec::len).collect::<Vec<_>>(), [100, 100, 50]);
    }

    #[test]
    fn a_completion_query_scores_per_project_alias_as_gitlab_counts_it_whatever_its_items() {
        let selection = selection_of(&["subscribed".to_owned()]);
        let hundred: Vec<ItemKey> = (0..100).map(|iid| (5, iid.to_string())).collect();
        // 3 for queryComplexity{limit score}; the alias: issues (1 + 6) + 2 = 9, projects (1 + 1 + 9) + 2 = 13
        // (its resolver and its defaulted `sort`), × 1.01 rounded down = 13; items named by iid add nothing.
        assert_eq!(alias_score(&selection), 13);
        assert_eq!(query_score(&hundred, &selection), 16);
        assert_eq!(query_score(&hundred[..1], &selection), 16);
        let two_projects = [(5, "1".to_owned()), (7, "1".to_owned())];
        assert_eq!(query_score(&two_projects, &selection), 3 + 2 * 13);
        // A list of 100 of one project is one request within either documented limit.
        for limit in DOCUMENTED_LIMITS {
            let budget = Budget {
                items: MAX_ITEMS,
                score: limit,
                factor: 1.0,
            };
            let chunks = chunk_keys(
                &hundred,
                budget,
                MAX_QUERY_CHARS,
                GraphqlCollection::Issues,
                &selection,
            );
            assert_eq!(chunks.iter().map(Vec::len).collect::<Vec<_>>(), [100], "{limit}");
        }
        // Projects are what costs: 19 projects of one item fit 250 (3 + 19 × 13 = 250), 15 fit 200.
        let spread: Vec<ItemKey> = (0..20).map(|project| (project, "1".to_owned())).collect();
        let cut = |score: u64, factor: f64| {
            let budget = Budget {
                items: MAX_ITEMS,
                score,
                factor,
            };
            let chunks = chunk_keys(
                &spread,
                budget,
                MAX_QUERY_CHARS,
                GraphqlCollection::Issues,
                &selection,
            );
            chunks.iter().map(Vec::len).collect::<Vec<_>>()
        };
        assert_eq!(cut(250, 1.0), [19, 1]);
        assert_eq!(cut(200, 1.0), [15, 5]);
        // A correction factor of 2 halves what fits: (3 + 13k) × 2 ≤ 250 → 9 projects.
        assert_eq!(cut(250, 2.0), [9, 9, 2]);
    }

    #[test]
    fn the_reported_score_corrects_estimates_upwards_only_until_the_retry_time() {
        let state = GraphqlState::new("svc", Duration::from_secs(600), Metrics::new());
        let selection = selection_of(&["subscribed".to_owned()]);
        state.correct(AUTHENTICATED, 10, 15);
        assert_eq!(state.correction(AUTHENTICATED), 1.0, "never below 1");
        // A server scoring per item: 37 items of one project scored 3 + 5 + 37 × 6 = 230.
        state.correct(AUTHENTICATED, 230, 15);
        state.correct(AUTHENTICATED, 30, 15);
        let factor = state.correction(AUTHENTICATED);
        assert!((factor - 230.0 / 15.0).abs() < 1e-9, "{factor}: the highest kept");
        assert_eq!(state.correction(ANONYMOUS), 1.0, "apart per kind");
        let budget = state.budget(AUTHENTICATED, &selection).unwrap();
        assert!(budget.fits(16) && !budget.fits(29), "one project per request");
        let forgetful = GraphqlState::new("svc", Duration::ZERO, Metrics::new());
        forgetful.correct(AUTHENTICATED, 230, 15);
        assert_eq!(
            forgetful.correction(AUTHENTICATED),
            1.0,
            "forgotten at the retry time"
        );
    }

    #[test]
    fn a_correction_factor_never_switches_graphql_off_one_project_alias_always_fits() {
        let state = GraphqlState::new("svc", Duration::from_secs(600), Metrics::new());
        let selection = selection_of(&["subscribed".to_owned()]);
        // Scored 20 times the estimate: one alias (16) would be 320, over 200, yet one still goes.
        state.correct(ANONYMOUS, 16 * 20, 16);
        let budget = state.budget(ANONYMOUS, &selection).unwrap();
        assert!(budget.fits(16) && !budget.fits(29), "one project per request");
        // A lower limit named later does not switch it off either.
        state.name_limit(ANONYMOUS, 40);
        let budget = state.budget(ANONYMOUS, &selection).unwrap();
        assert_eq!(budget.score, 40);
        assert!(budget.fits(16) && !budget.fits(29), "one project per request");
    }

    #[test]
    fn a_refused_request_over_several_projects_corrects_the_estimate_and_one_over_a_single_project_shrinks_items(
    ) {
        let state = GraphqlState::new("svc", Duration::from_secs(600), Metrics::new());
        let selection = selection_of(&["subscribed".to_owned()]);
        let limits = state.budget(AUTHENTICATED, &selection).unwrap();
        // Ten projects (estimated 3 + 10 × 13 = 133) scored 400 over 250: cut again by projects, items untouched.
        let spread: Vec<ItemKey> = (0..10).map(|project| (project, "1".to_owned())).collect();
        assert!(state.after_refusal(AUTHENTICATED, &spread, &selection, limits, 400, 250));
        assert_eq!(state.batch_size(AUTHENTICATED), Some(MAX_ITEMS), "no item shrink");
        let corrected = state.budget(AUTHENTICATED, &selection).unwrap();
        // Scored about 3 times the estimate: 6 projects a request now (81 × 400 / 133 ≤ 250).
        assert!(
            corrected.fits(3 + 6 * 13) && !corrected.fits(3 + 7 * 13),
            "{corrected:?}"
        );
        // Sized for a higher limit than the one named now: cut again, nothing learnt.
        let other = GraphqlState::new("svc", Duration::from_secs(600), Metrics::new());
        assert!(other.after_refusal(AUTHENTICATED, &spread, &selection, limits, 133, 100));
        assert_eq!(other.correction(AUTHENTICATED), 1.0);
        assert_eq!(other.batch_size(AUTHENTICATED), Some(MAX_ITEMS));
        // One project's 100 items scored 603 over 250 (a server scoring per item): fewer items a request.
        let hundred: Vec<ItemKey> = (0..100).map(|iid| (5, iid.to_string())).collect();
        assert!(other.after_refusal(AUTHENTICATED, &hundred, &selection, limits, 603, 250));
        assert_eq!(other.batch_size(AUTHENTICATED), Some(37));
    }

    #[test]
    fn a_named_limit_replaces_the_documented_one_both_ways_and_within_a_kind_the_lowest_is_kept() {
        let state = GraphqlState::new("svc", Duration::from_secs(600), Metrics::new());
        assert_eq!(state.complexity_limit(ANONYMOUS), 200);
        assert_eq!(state.complexity_limit(AUTHENTICATED), 250);
        state.name_limit(AUTHENTICATED, 1_000);
        assert_eq!(state.complexity_limit(AUTHENTICATED), 1_000, "upwards");
        state.name_limit(AUTHENTICATED, 300);
        state.name_limit(AUTHENTICATED, 400);
        assert_eq!(state.complexity_limit(AUTHENTICATED), 300, "the lowest named");
        assert_eq!(state.complexity_limit(ANONYMOUS), 200, "apart per kind");
        state.name_limit(ANONYMOUS, 10);
        let selection = selection_of(&["subscribed".to_owned()]);
        assert_eq!(
            state.budget(ANONYMOUS, &selection),
            None,
            "not even one project fits"
        );
        assert_eq!(
            state.budget(AUTHENTICATED, &selection),
            Some(Budget {
                items: MAX_ITEMS,
                score: 300,
                factor: 1.0,
            })
        );
        let forgetful = GraphqlState::new("svc", Duration::ZERO, Metrics::new());
        forgetful.name_limit(AUTHENTICATED, 1_000);
        assert_eq!(
            forgetful.complexity_limit(AUTHENTICATED),
            250,
            "forgotten at the retry time"
        );
    }

    #[test]
    fn naming_the_same_limit_again_keeps_it_until_a_later_retry_time() {
        let state = GraphqlState::new("svc", Duration::from_secs(600), Metrics::new());
        state.name_limit(AUTHENTICATED, 300);
        let first = state.named.lock().unwrap()[AUTHENTICATED].unwrap().until;
        std::thread::sleep(Duration::from_millis(5));
        state.name_limit(AUTHENTICATED, 300);
        let again = state.named.lock().unwrap()[AUTHENTICATED].unwrap().until;
        assert!(again > first);
    }

    #[test]
    fn a_backend_without_query_complexity_is_asked_for_it_again_after_the_retry_time() {
        let state = GraphqlState::new("svc", Duration::from_secs(600), Metrics::new());
        assert!(state.asks_limit());
        *state.no_limit_field_until.lock().unwrap() =
            Some(deadline(Instant::now(), Duration::from_secs(600)));
        assert!(!state.asks_limit());
        *state.no_limit_field_until.lock().unwrap() = Some(Instant::now());
        assert!(state.asks_limit());
    }

    #[test]
    fn an_answer_names_its_limit() {
        let Value::Object(data) = json!({"queryComplexity": {"limit": 250, "score": 15}, "p0": null}) else {
            unreachable!()
        };
        assert_eq!(named_limit(&data), Some(250));
        assert_eq!(reported_score(&data), Some(15));
        let Value::Object(data) = json!({"queryComplexity": null}) else {
            unreachable!()
        };
        assert_eq!(named_limit(&data), None);
    }

    #[test]
    fn an_answer_without_our_aliases_or_with_every_alias_in_error_answers_nothing() {
        let Value::Object(empty) = json!({}) else {
            unreachable!()
        };
        assert!(answers_nothing(&empty, &[], 2));
        let Value::Object(nulls) = json!({"p0": null, "p1": null}) else {
            unreachable!()
        };
        let errors = [
            json!({"message": "gid://svc/Project/1 is not a valid ID for Project.", "path": ["p0"]}),
            json!({"message": "gid://svc/Project/2 is not a valid ID for Project.", "path": ["p1"]}),
        ];
        assert!(answers_nothing(&nulls, &errors, 2));
        assert!(
            !answers_nothing(&nulls, &errors[..1], 2),
            "p1 null without an error"
        );
        let Value::Object(hidden) = json!({"p0": {"nodes": []}}) else {
            unreachable!()
        };
        assert!(
            !answers_nothing(&hidden, &[], 1),
            "a project the caller cannot see"
        );
    }

    #[test]
    fn only_v4_typed_values_are_copied() {
        let data = json!({"p0": {"nodes": [{"id": "gid://svc/Project/5", "issues": {"nodes": [
            {"iid": "1", "subscribed": "yes"},
            {"iid": "2", "subscribed": null},
            {"iid": "3", "subscribed": false},
        ]}}]}});
        let Value::Object(data) = data else { unreachable!() };
        let found = read_completion(&data, GraphqlCollection::Issues, &["subscribed".to_owned()], 3);
        assert_eq!(found.len(), 1);
        assert_eq!(found[&(5, "3".to_owned())]["subscribed"], json!(false));
    }

    #[test]
    fn a_huge_retry_time_saturates() {
        let now = Instant::now();
        assert!(deadline(now, Duration::MAX) > now + Duration::from_secs(86_400));
    }
}
