//! V3 usage insight: which legacy clients still call which V3 routes, so teams know what to retire.
//!
//! Every V3 request is counted per route template (the rule, or the path with its ids folded when no rule
//! matched), per client (the caller's username as the backend reports it for the token — asked once and cached,
//! never the token itself — and the `User-Agent`), with first and last call and error answers. Counts gather in
//! memory and are written to the store in batches (every `usage_flush_interval`, and before every report), never
//! once a request.
//!
//! At each batch the recorder also notices a retired client coming back (`svcgate_v3_retired_clients_returned_total`):
//! it keeps each client's last call (as many clients as `access_cache_entries`, loaded from the store at the first
//! batch), and for a client in the batch whose last known call is older than `v3_client_retired_after` (or that it
//! does not know) it reads the store's rows again before counting, since another replica may have seen the client
//! meanwhile. A return is judged at the client's first call in the batch, not at the flush; `unknown` callers are
//! no client that could come back. When the store cannot be read in time (`database_timeout`), nothing is counted
//! for the clients it could not check, and their calls wait for the next batch, which checks them again.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use prometheus_client::metrics::counter::Counter;

use crate::backend::access::{AccessChecker, AccessError, Credentials};
use crate::store::{Store, UsageDelta, UsageRow};

use super::clients::is_retired;
use super::retirement;

/// The client name of requests without credentials.
pub const ANONYMOUS: &str = "anonymous";
pub use super::clients::{MANY_AGENTS, UNKNOWN};
pub use super::retirement::NO_RULE;
/// Distinct (route, caller, user agent) counts kept between two flushes; past it, calls are counted under
/// [`UNKNOWN`] and one user agent, so a flood of invented callers cannot grow memory.
const MAX_PENDING: usize = 10_000;

#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    route: String,
    since: String,
    /// A hash of the credentials (never the token), or `anonymous`.
    caller: String,
    user_agent: String,
}

#[derive(Clone)]
struct Counts {
    calls: u64,
    errors: u64,
    first_seen: String,
    last_seen: String,
}

/// The batches' knowledge of clients' last calls.
#[derive(Default)]
struct LastCalls {
    /// Each client's last call by client id, least recently called dropped first; `None` until the first batch
    /// loads it from the store.
    known: Option<lru::LruCache<String, String>>,
    /// Calls of clients whose return could not be checked, stored with the next batch once it can be.
    held: Vec<UsageDelta>,
}

/// Adds `delta` to the batch's counts of its route, client and user agent.
fn merge(merged: &mut HashMap<(String, String, String), UsageDelta>, delta: UsageDelta) {
    match merged.entry((
        delta.route.clone(),
        delta.client.clone(),
        delta.user_agent.clone(),
    )) {
        std::collections::hash_map::Entry::Occupied(mut entry) => {
            let entry = entry.get_mut();
            entry.calls += delta.calls;
            entry.errors += delta.errors;
            entry.first_seen = entry.first_seen.clone().min(delta.first_seen);
            entry.last_seen = entry.last_seen.clone().max(delta.last_seen);
        }
        std::collections::hash_map::Entry::Vacant(entry) => {
            entry.insert(delta);
        }
    }
}

enum Who {
    /// Not asked yet: the credentials to ask with, kept in memory only until then.
    Pending(Credentials),
    /// The backend's answer.
    Known(String),
}

/// Counts V3 calls and writes them to the store in batches.
pub struct UsageRecorder {
    pending: Mutex<HashMap<Key, Counts>>,
    /// Callers by credential hash, least recently seen dropped first (`access_cache_entries`).
    callers: Mutex<lru::LruCache<String, Who>>,
    store: Arc<dyn Store>,
    access: AccessChecker,
    max_clients: usize,
    retired_after: Duration,
    /// What the batches know of clients' last calls; one batch at a time.
    last_calls: tokio::sync::Mutex<LastCalls>,
    /// Longest a read of the store's rows may take when checking for returns (`database_timeout`).
    store_timeout: Duration,
    max_last_calls: std::num::NonZeroUsize,
    /// Calls from retired clients, each return counted once (`svcgate_v3_retired_clients_returned_total`).
    returned: Counter,
}

/// Folds a path's ids away for routes no rule names: numbers, encoded paths and hashes become `:id`.
pub fn route_of_path(method: &str, path: &str) -> String {
    let folded: Vec<&str> = path
        .split('/')
        .map(|segment| {
            let is_id = !segment.is_empty()
                && (segment.bytes().all(|b| b.is_ascii_digit())
                    || segment.contains('%')
                    || (segment.len() >= 20 && segment.bytes().all(|b| b.is_ascii_hexdigit())));
            if is_id {
                ":id"
            } else {
                segment
            }
        })
        .collect();
    format!("{method} {} (no rule)", folded.join("/"))
}

/// The usage counts' options.
#[derive(Debug, Clone, Copy)]
pub struct UsageSettings {
    /// How often gathered counts are written to the store (`usage_flush_interval`).
    pub flush_interval: Duration,
    /// Clients kept per route; the least recent are folded into `others` (`usage_max_clients_per_route`).
    pub max_clients_per_route: usize,
    /// No call for this long marks a client retired (`v3_client_retired_after`).
    pub client_retired_after: Duration,
    /// Longest a read of the stored rows may take when a batch checks for returning clients (`database_timeout`,
    /// the bound of one store operation).
    pub store_timeout: Duration,
}

impl UsageRecorder {
    /// A recorder writing to `store`, asking `access` who callers are, keeping `settings.max_clients_per_route`
    /// clients a route, at most `max_callers` callers' names and clients' last calls in memory, and counting
    /// retired clients that call again into `returned`.
    pub fn new(
        store: Arc<dyn Store>,
        access: AccessChecker,
        settings: &UsageSettings,
        max_callers: usize,
        returned: Counter,
    ) -> Self {
        let max_callers = std::num::NonZeroUsize::new(max_callers).unwrap_or(std::num::NonZeroUsize::MIN);
        UsageRecorder {
            pending: Mutex::new(HashMap::new()),
            callers: Mutex::new(lru::LruCache::new(max_callers)),
            store,
            access,
            max_clients: settings.max_clients_per_route,
            retired_after: settings.client_retired_after,
            last_calls: tokio::sync::Mutex::new(LastCalls::default()),
            store_timeout: settings.store_timeout,
            max_last_calls: max_callers,
            returned,
        }
    }

    /// How long without a call marks a client retired and a route unused (`v3_client_retired_after`).
    pub fn retired_after(&self) -> Duration {
        self.retired_after
    }

    /// Clients with a call within [`Self::retired_after`], as the store counts them now (so every replica on one
    /// store says the same).
    pub async fn active_clients(&self) -> Result<u64, crate::store::StoreError> {
        let rows = self.store.usage().await?;
        Ok(retirement::active_clients(
            &rows,
            time::OffsetDateTime::now_utc(),
            self.retired_after,
        ))
    }

    /// Counts one V3 call.
    pub fn record(
        &self,
        route: &str,
        since: &str,
        credentials: Option<Credentials>,
        user_agent: &str,
        status: u16,
    ) {
        // A call to a route no rule names that failed is one bucket, whatever path was invented.
        let route = if since.is_empty() && status >= 400 {
            NO_RULE
        } else {
            route
        };
        let caller = match credentials {
            // Credentials the backend refused name nobody: no lookup is kept for them.
            Some(_) if status == 401 => UNKNOWN.to_owned(),
            Some(credentials) => {
                let key = credentials.key().to_owned();
                if let Ok(mut callers) = self.callers.lock() {
                    if callers.get(&key).is_none() {
                        callers.put(key.clone(), Who::Pending(credentials));
                    }
                }
                key
            }
            None => ANONYMOUS.to_owned(),
        };
        let now = crate::util::time_format::format_time(time::OffsetDateTime::now_utc());
        let mut key = Key {
            route: route.to_owned(),
            since: since.to_owned(),
            caller,
            user_agent: user_agent.chars().take(200).collect(),
        };
        let Ok(mut pending) = self.pending.lock() else {
            return;
        };
        if pending.len() >= MAX_PENDING && !pending.contains_key(&key) {
            key.caller = UNKNOWN.to_owned();
            key.user_agent = MANY_AGENTS.to_owned();
        }
        let counts = pending.entry(key).or_insert_with(|| Counts {
            calls: 0,
            errors: 0,
            first_seen: now.clone(),
            last_seen: now.clone(),
        });
        counts.calls += 1;
        if status >= 400 {
            counts.errors += 1;
        }
        counts.last_seen = now;
    }

    async fn name_of(&self, caller: &str) -> String {
        if caller == ANONYMOUS {
            return ANONYMOUS.to_owned();
        }
        let credentials = match self
            .callers
            .lock()
            .ok()
            .and_then(|mut callers| match callers.get(caller) {
                Some(Who::Known(name)) => Some(Ok(name.clone())),
                Some(Who::Pending(credentials)) => Some(Err(credentials.clone())),
                None => None,
            }) {
            Some(Ok(name)) => return name,
            Some(Err(credentials)) => credentials,
            None => return UNKNOWN.to_owned(),
        };
        let name = match self.access.user(&credentials).await {
            Ok((username, _)) => username,
            Err(AccessError::Backend(_)) => return UNKNOWN.to_owned(),
            Err(_) => UNKNOWN.to_owned(),
        };
        if let Ok(mut callers) = self.callers.lock() {
            callers.put(caller.to_owned(), Who::Known(name.clone()));
        }
        name
    }

    /// Writes the counts gathered so far to the store.
    pub async fn flush(&self) {
        let batch: Vec<(Key, Counts)> = match self.pending.lock() {
            Ok(mut pending) => pending.drain().collect(),
            Err(_) => return,
        };
        // One batch at a time watches for returns, so that two flushes never both count one client.
        let mut last_calls = self.last_calls.lock().await;
        let held = std::mem::take(&mut last_calls.held);
        if batch.is_empty() && held.is_empty() {
            return;
        }
        let mut merged: HashMap<(String, String, String), UsageDelta> = HashMap::new();
        for delta in held {
            merge(&mut merged, delta);
        }
        for (key, counts) in batch {
            let client = self.name_of(&key.caller).await;
            merge(
                &mut merged,
                UsageDelta {
                    route: key.route,
                    since: key.since,
                    client,
                    user_agent: key.user_agent,
                    calls: counts.calls,
                    errors: counts.errors,
                    first_seen: counts.first_seen,
                    last_seen: counts.last_seen,
                },
            );
        }
        let deltas: Vec<UsageDelta> = merged.into_values().collect();
        let unresolved = self.count_returns(&mut last_calls.known, &deltas).await;
        // The calls of clients that could not be checked wait for the next batch: stored now, they would make
        // the client look recent to that batch's check, and its return would never be counted.
        let (held, mut deltas): (Vec<UsageDelta>, Vec<UsageDelta>) = deltas
            .into_iter()
            .partition(|delta| retirement::client_of(delta).is_some_and(|id| unresolved.contains(&id)));
        if held.len() > MAX_PENDING {
            tracing::warn!(
                rows = held.len(),
                "V3 usage: the clients' last calls could not be read for too long; their calls are stored \
                 without checking for returns"
            );
            deltas.extend(held);
        } else {
            last_calls.held = held;
        }
        if deltas.is_empty() {
            return;
        }
        if let Err(error) = self.store.usage_add(deltas, self.max_clients).await {
            tracing::warn!(%error, "V3 usage counts could not be stored");
        }
    }

    /// Every stored row, bounded by `store_timeout`; `None` (and a warning) when it fails or takes longer.
    async fn stored_rows(&self) -> Option<Vec<UsageRow>> {
        match tokio::time::timeout(self.store_timeout, self.store.usage()).await {
            Ok(Ok(rows)) => Some(rows),
            Ok(Err(error)) => {
                tracing::warn!(%error, "V3 usage: the clients' last calls could not be read");
                None
            }
            Err(_) => {
                tracing::warn!(
                    timeout = ?self.store_timeout,
                    "V3 usage: the clients' last calls took longer than database_timeout to read"
                );
                None
            }
        }
    }

    /// Counts the clients of `batch` that come back after being retired, then notes the batch's calls as each
    /// client's last. A client whose last known call is recent costs nothing; one that is unknown or retired by
    /// what this replica knows is checked against the store's rows (read at most once a batch) before it counts,
    /// judged at its first call in the batch (not at the flush, which comes later). Returns the clients that
    /// could not be checked (the store failed or was slow): their last calls are left as they were, so that a
    /// later batch checks them again. [`UNKNOWN`] callers (refused credentials, a backend that could not say who
    /// called, the overflow bucket) are no client that could come back.
    async fn count_returns(
        &self,
        known: &mut Option<lru::LruCache<String, String>>,
        batch: &[UsageDelta],
    ) -> HashSet<String> {
        let now = time::OffsetDateTime::now_utc();
        // Each client's (first, last) call in the batch.
        let mut calls: HashMap<String, (&str, &str)> = HashMap::new();
        for delta in batch {
            if delta.client == UNKNOWN {
                continue;
            }
            if let Some(id) = retirement::client_of(delta) {
                let (first, last) = calls
                    .entry(id)
                    .or_insert((delta.first_seen.as_str(), delta.last_seen.as_str()));
                if delta.first_seen.as_str() < *first {
                    *first = delta.first_seen.as_str();
                }
                if delta.last_seen.as_str() > *last {
                    *last = delta.last_seen.as_str();
                }
            }
        }
        let mut stored: Option<HashMap<String, String>> = None;
        if known.is_none() {
            let Some(rows) = self.stored_rows().await else {
                return calls.into_keys().collect();
            };
            let mut loaded: Vec<(String, String)> = retirement::last_calls(&rows).into_iter().collect();
            // The most recent are kept when there are more clients than room.
            loaded.sort_by(|a, b| a.1.cmp(&b.1));
            let mut cache = lru::LruCache::new(self.max_last_calls);
            for (id, last) in &loaded {
                cache.put(id.clone(), last.clone());
            }
            *known = Some(cache);
            stored = Some(loaded.into_iter().collect());
        }
        let Some(cache) = known.as_mut() else {
            return HashSet::new();
        };
        // A cheap first sift at the flush's time: a client retired at its call is retired now too.
        let suspects: Vec<&String> = calls
            .keys()
            .filter(|id| match cache.peek(*id) {
                Some(last) => is_retired(last, now, self.retired_after),
                None => true,
            })
            .collect();
        if !suspects.is_empty() && stored.is_none() {
            match self.stored_rows().await {
                Some(rows) => stored = Some(retirement::last_calls(&rows)),
                None => {
                    let unresolved: HashSet<String> = suspects.into_iter().cloned().collect();
                    for (id, (_, last)) in calls {
                        if !unresolved.contains(&id) {
                            cache.put(id, last.to_owned());
                        }
                    }
                    return unresolved;
                }
            }
        }
        if let Some(stored) = &stored {
            for id in suspects {
                let first_call = calls
                    .get(id)
                    .and_then(|(first, _)| crate::util::time_format::parse_time(first));
                // A client the store has never seen is new, not back; one that called within the period before
                // its first call here is not back either, however late the flush.
                let back = stored
                    .get(id)
                    .zip(first_call)
                    .is_some_and(|(last, first_call)| is_retired(last, first_call, self.retired_after));
                if back {
                    tracing::info!(client = %id, "V3 usage: a retired client called again");
                    self.returned.inc();
                }
            }
        }
        for (id, (_, last)) in calls {
            cache.put(id, last.to_owned());
        }
        HashSet::new()
    }

    /// Flushes every `interval` until the task is dropped.
    pub async fn run(self: Arc<Self>, interval: Duration) {
        loop {
            tokio::time::sleep(interval).await;
            self.flush().await;
        }
    }

    /// Every stored row, after a flush.
    pub async fn report(&self) -> Result<Vec<UsageRow>, crate::store::StoreError> {
        self.flush().await;
        self.store.usage().await
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn routes_without_a_rule_fold_their_ids() {
        assert_eq!(
            route_of_path("GET", "/projects/12/issues/3/closed_by"),
            "GET /projects/:id/issues/:id/closed_by (no rule)"
        );
        assert_eq!(
            route_of_path("GET", "/projects/group%2Fproj/events"),
            "GET /projects/:id/events (no rule)"
        );
        assert_eq!(route_of_path("GET", "/user"), "GET /user (no rule)");
    }

    /// A recorder on a SQLite store in `dir`, retiring clients after 30 days; its callers are all anonymous, so
    /// the backend (nothing listens there) is never asked.
    fn recorder(dir: &std::path::Path) -> (UsageRecorder, Arc<dyn Store>, Counter) {
        let store: Arc<dyn Store> = Arc::new(crate::store::SqliteStore::open(dir).unwrap());
        let backend = crate::backend::upstream::BackendConfig::for_tests(Duration::from_millis(100));
        let upstream = crate::backend::upstream::Upstream::new(
            &backend,
            &http::Uri::from_static("http://127.0.0.1:9"),
            crate::telemetry::Metrics::new(),
        )
        .unwrap();
        let access = AccessChecker::new(Arc::new(upstream), Duration::from_secs(60), 100);
        let settings = UsageSettings {
            flush_interval: Duration::from_secs(3600),
            max_clients_per_route: 50,
            client_retired_after: Duration::from_secs(30 * 86_400),
            store_timeout: Duration::from_secs(5),
        };
        let returned = Counter::default();
        let recorder = UsageRecorder::new(Arc::clone(&store), access, &settings, 100, returned.clone());
        (recorder, store, returned)
    }

    /// [`recorder`] on a store in `dir` that already holds `rows`, as an earlier run (or another replica) wrote them.
    async fn seeded(
        dir: &std::path::Path,
        rows: Vec<UsageDelta>,
    ) -> (UsageRecorder, Arc<dyn Store>, Counter) {
        let (recorder, store, returned) = recorder(dir);
        store.usage_add(rows, 50).await.unwrap();
        (recorder, store, returned)
    }

    /// A stored row of `user_agent`'s anonymous calls to `route`, last at `days_ago` days before now.
    fn old_row(route: &str, user_agent: &str, days_ago: i64) -> UsageDelta {
        let at = crate::util::time_format::format_time(
            time::OffsetDateTime::now_utc() - time::Duration::days(days_ago),
        );
        UsageDelta {
            route: route.to_owned(),
            since: "9.0".to_owned(),
            client: ANONYMOUS.to_owned(),
            user_agent: user_agent.to_owned(),
            calls: 3,
            errors: 0,
            first_seen: at.clone(),
            last_seen: at,
        }
    }

    #[tokio::test]
    async fn a_retired_client_calling_again_is_counted_once() {
        let dir = tempfile::tempdir().unwrap();
        // Rows older than the period, as an earlier run (or another replica) wrote them.
        let (recorder, _, returned) = seeded(
            dir.path(),
            vec![
                old_row("GET /projects", "old-tool/1.0", 45),
                old_row("GET /user (no rule)", "old-tool/1.0", 40),
                old_row("GET /projects", "recent-tool/2", 3),
            ],
        )
        .await;
        assert_eq!(recorder.active_clients().await.unwrap(), 1);

        // A recent client and a new one: nobody came back.
        recorder.record("GET /projects", "9.0", None, "recent-tool/2", 200);
        recorder.record("GET /projects", "9.0", None, "brand-new/1", 200);
        recorder.flush().await;
        assert_eq!(returned.get(), 0);

        // The retired client calls again, in a newer version: one client, counted once.
        recorder.record("GET /projects", "9.0", None, "old-tool/1.1", 200);
        recorder.record("GET /projects", "9.0", None, "old-tool/1.1", 200);
        recorder.flush().await;
        assert_eq!(returned.get(), 1);
        assert_eq!(recorder.active_clients().await.unwrap(), 3);

        // Its next calls are those of an active client.
        recorder.record("GET /user (no rule)", "", None, "old-tool/1.1", 200);
        recorder.flush().await;
        assert_eq!(returned.get(), 1);
    }

    /// `row` with both its calls at `at`.
    fn at(mut row: UsageDelta, at: time::OffsetDateTime) -> UsageDelta {
        row.first_seen = crate::util::time_format::format_time(at);
        row.last_seen = row.first_seen.clone();
        row
    }

    /// Puts one anonymous call of `user_agent` made at `when` in the recorder's next batch.
    fn record_at(recorder: &UsageRecorder, user_agent: &str, when: time::OffsetDateTime) {
        let when = crate::util::time_format::format_time(when);
        let key = Key {
            route: "GET /projects".to_owned(),
            since: "9.0".to_owned(),
            caller: ANONYMOUS.to_owned(),
            user_agent: user_agent.to_owned(),
        };
        let counts = Counts {
            calls: 1,
            errors: 0,
            first_seen: when.clone(),
            last_seen: when,
        };
        recorder.pending.lock().unwrap().insert(key, counts);
    }

    #[tokio::test]
    async fn a_call_just_inside_the_period_flushed_after_it_is_no_return() {
        let dir = tempfile::tempdir().unwrap();
        let now = time::OffsetDateTime::now_utc();
        let period = time::Duration::days(30);
        // Last stored call 30 days and 5 seconds before the flush; the new call 10 seconds before it.
        let last = now - period - time::Duration::seconds(5);
        let (recorder, _, returned) = seeded(
            dir.path(),
            vec![at(old_row("GET /projects", "old-tool/1.0", 0), last)],
        )
        .await;
        record_at(&recorder, "old-tool/1.0", now - time::Duration::seconds(10));
        recorder.flush().await;
        assert_eq!(
            returned.get(),
            0,
            "the call came 30 days less 5 seconds after the last"
        );
    }

    #[tokio::test]
    async fn unknown_callers_are_no_client_coming_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut unknown = old_row("GET /projects", "tool/1.0", 45);
        unknown.client = UNKNOWN.to_owned();
        let (recorder, _, returned) = seeded(dir.path(), vec![unknown]).await;
        // Refused credentials are counted as `unknown`, as a backend that cannot say who called.
        recorder.record(
            "GET /projects",
            "9.0",
            Credentials::from_token("t0ken"),
            "tool/1.0",
            401,
        );
        recorder.flush().await;
        assert_eq!(returned.get(), 0);
    }

    #[tokio::test]
    async fn a_return_that_could_not_be_checked_is_counted_by_a_later_batch() {
        let dir = tempfile::tempdir().unwrap();
        let (recorder, _, returned) = seeded(
            dir.path(),
            vec![
                old_row("GET /projects", "old-tool/1.0", 45),
                old_row("GET /projects", "recent-tool/1", 1),
            ],
        )
        .await;
        // The first batch learns the last calls.
        recorder.record("GET /projects", "9.0", None, "recent-tool/1", 200);
        recorder.flush().await;
        // The store fails the check: nothing counted, and the return's calls wait.
        let table = rusqlite::Connection::open(dir.path().join("svcgate.db")).unwrap();
        table
            .execute_batch("ALTER TABLE v3_usage RENAME TO v3_usage_away")
            .unwrap();
        recorder.record("GET /projects", "9.0", None, "old-tool/1.0", 200);
        recorder.flush().await;
        assert_eq!(returned.get(), 0);
        // The store answers again: the return is counted once, and its calls stored.
        table
            .execute_batch("ALTER TABLE v3_usage_away RENAME TO v3_usage")
            .unwrap();
        recorder.flush().await;
        assert_eq!(returned.get(), 1);
        assert_eq!(recorder.active_clients().await.unwrap(), 2);
        recorder.record("GET /projects", "9.0", None, "old-tool/1.0", 200);
        recorder.flush().await;
        assert_eq!(returned.get(), 1);
    }

    #[tokio::test]
    async fn a_return_another_replica_already_stored_is_not_counted_again() {
        let dir = tempfile::tempdir().unwrap();
        let (recorder, store, returned) =
            seeded(dir.path(), vec![old_row("GET /projects", "old-tool/1.0", 45)]).await;
        // This replica learns the client's old last call at its first batch.
        recorder.record("GET /projects", "9.0", None, "other/1", 200);
        recorder.flush().await;
        // Another replica stores the client's return.
        store
            .usage_add(vec![old_row("GET /projects", "old-tool/1.0", 0)], 50)
            .await
            .unwrap();
        recorder.record("GET /projects", "9.0", None, "old-tool/1.0", 200);
        recorder.flush().await;
        assert_eq!(returned.get(), 0, "the store says it was back already");
    }
}

/// One route's usage, with its clients, most called first.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RouteUsage {
    /// The route template.
    pub route: String,
    /// The release of its rule.
    pub since: String,
    /// Calls.
    pub calls: u64,
    /// Error answers.
    pub errors: u64,
    /// First call.
    pub first_seen: String,
    /// Last call.
    pub last_seen: String,
    /// No call for `v3_client_retired_after` (30 days unless configured; the name is the default's).
    pub unused_for_30_days: bool,
    /// Its clients.
    pub clients: Vec<ClientUsage>,
}

/// One client of a route.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ClientUsage {
    /// Username (or `anonymous`, `unknown`, `others`).
    pub user: String,
    /// `User-Agent`.
    pub user_agent: String,
    /// Calls.
    pub calls: u64,
    /// Error answers.
    pub errors: u64,
    /// First call.
    pub first_seen: String,
    /// Last call.
    pub last_seen: String,
}

/// Groups stored rows by route, routes sorted by `sort` (`calls`, `errors`, `last_seen`, `route`); a route without a
/// call for `unused_after` is marked unused.
pub fn by_route(
    rows: Vec<UsageRow>,
    sort: &str,
    now: time::OffsetDateTime,
    unused_after: Duration,
) -> Vec<RouteUsage> {
    let mut routes: Vec<RouteUsage> = Vec::new();
    for row in rows {
        let client = ClientUsage {
            user: row.client,
            user_agent: row.user_agent,
            calls: row.calls,
            errors: row.errors,
            first_seen: row.first_seen.clone(),
            last_seen: row.last_seen.clone(),
        };
        match routes.iter_mut().find(|route| route.route == row.route) {
            Some(route) => {
                route.calls += client.calls;
                route.errors += client.errors;
                route.first_seen = route.first_seen.clone().min(row.first_seen);
                route.last_seen = route.last_seen.clone().max(row.last_seen);
                route.clients.push(client);
            }
            None => routes.push(RouteUsage {
                route: row.route,
                since: row.since,
                calls: client.calls,
                errors: client.errors,
                first_seen: row.first_seen,
                last_seen: row.last_seen,
                unused_for_30_days: false,
                clients: vec![client],
            }),
        }
    }
    for route in &mut routes {
        route
            .clients
            .sort_by_key(|client| std::cmp::Reverse(client.calls));
        route.unused_for_30_days = is_retired(&route.last_seen, now, unused_after);
    }
    match sort {
        "route" => routes.sort_by(|a, b| a.route.cmp(&b.route)),
        "errors" => routes.sort_by_key(|route| std::cmp::Reverse(route.errors)),
        "last_seen" => routes.sort_by(|a, b| b.last_seen.cmp(&a.last_seen)),
        _ => routes.sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| a.route.cmp(&b.route))),
    }
    routes
}

/// The usage as CSV, one line per route and client.
pub fn csv(routes: &[RouteUsage]) -> Result<String, csv::Error> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record([
        "route",
        "since",
        "user",
        "user_agent",
        "calls",
        "errors",
        "first_seen",
        "last_seen",
        "route_unused_for_30_days",
    ])?;
    for route in routes {
        for client in &route.clients {
            writer.write_record([
                route.route.as_str(),
                route.since.as_str(),
                client.user.as_str(),
                client.user_agent.as_str(),
                &client.calls.to_string(),
                &client.errors.to_string(),
                client.first_seen.as_str(),
                client.last_seen.as_str(),
                if route.unused_for_30_days { "yes" } else { "no" },
            ])?;
        }
    }
    let bytes = writer.into_inner().map_err(|error| error.into_error())?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod report_tests {
    use super::*;

    const THIRTY_DAYS: Duration = Duration::from_secs(30 * 86_400);

    fn row(route: &str, client: &str, calls: u64, last_seen: &str) -> UsageRow {
        UsageRow {
            route: route.to_owned(),
            since: "9.0".to_owned(),
            client: client.to_owned(),
            user_agent: String::new(),
            calls,
            errors: 0,
            first_seen: "2026-01-01T00:00:00.000Z".to_owned(),
            last_seen: last_seen.to_owned(),
        }
    }

    #[test]
    fn routes_are_summed_sorted_and_marked_unused_after_30_days() {
        let now = crate::util::time_format::parse_time("2026-03-01T00:00:00Z")
            .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
        let rows = vec![
            row("GET /a", "x", 1, "2026-01-02T00:00:00.000Z"),
            row("GET /b", "x", 5, "2026-02-28T00:00:00.000Z"),
            row("GET /b", "y", 2, "2026-02-20T00:00:00.000Z"),
        ];
        let routes = by_route(rows, "calls", now, THIRTY_DAYS);
        assert_eq!(routes[0].route, "GET /b");
        assert_eq!(routes[0].calls, 7);
        assert_eq!(routes[0].last_seen, "2026-02-28T00:00:00.000Z");
        assert!(!routes[0].unused_for_30_days);
        assert!(routes[1].unused_for_30_days, "no call since January");
        assert_eq!(
            by_route(routes_rows(), "route", now, THIRTY_DAYS)[0].route,
            "GET /a"
        );
    }

    fn routes_rows() -> Vec<UsageRow> {
        vec![
            row("GET /b", "x", 5, "2026-02-28T00:00:00.000Z"),
            row("GET /a", "x", 1, "2026-01-02T00:00:00.000Z"),
        ]
    }
}
