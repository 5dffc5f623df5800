//! V3 usage insight: which legacy clients still call which V3 routes, so teams know what to retire.
//!
//! Every V3 request is counted per route template (the rule, or the path with its ids folded when no rule
//! matched), per client (the caller's username as the backend reports it for the token — asked once and cached,
//! never the token itself — and the `User-Agent`), with first and last call and error answers. Counts gather in
//! memory and are written to the store in batches (every `usage_flush_interval`, and before every report), never
//! once a request.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::backend::access::{AccessChecker, AccessError, Credentials};
use crate::store::{Store, UsageDelta, UsageRow};

/// The client name of requests without credentials.
pub const ANONYMOUS: &str = "anonymous";
/// The client name of credentials the backend refused.
pub const UNKNOWN: &str = "unknown";
/// The one route bucket of V3 calls no rule names that the backend did not answer with success (typos, invented
/// paths): clients cannot grow the report or the metrics by inventing paths.
pub const NO_RULE: &str = "(no rule)";
/// Distinct (route, caller, user agent) counts kept between two flushes; past it, calls are counted under
/// [`UNKNOWN`] and one user agent, so a flood of invented callers cannot grow memory.
const MAX_PENDING: usize = 10_000;
/// The user agent of the calls counted under [`UNKNOWN`] past [`MAX_PENDING`].
pub const MANY_AGENTS: &str = "(many)";

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
    /// No call for this long marks a client retired in the migration report (`v3_client_retired_after`).
    retired_after: Duration,
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
}

impl UsageRecorder {
    /// A recorder writing to `store`, asking `access` who callers are, keeping `max_clients` clients a route and
    /// at most `max_callers` callers' names in memory.
    pub fn new(store: Arc<dyn Store>, access: AccessChecker, max_clients: usize, max_callers: usize) -> Self {
        UsageRecorder {
            pending: Mutex::new(HashMap::new()),
            callers: Mutex::new(lru::LruCache::new(
                std::num::NonZeroUsize::new(max_callers).unwrap_or(std::num::NonZeroUsize::MIN),
            )),
            store,
            access,
            max_clients,
            retired_after: Duration::from_secs(30 * 86_400),
        }
    }

    /// The recorder with `v3_client_retired_after` set.
    pub fn with_retired_after(mut self, retired_after: Duration) -> Self {
        self.retired_after = retired_after;
        self
    }

    /// No call for this long marks a client retired (`v3_client_retired_after`).
    pub fn retired_after(&self) -> Duration {
        self.retired_after
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
        if batch.is_empty() {
            return;
        }
        let mut merged: HashMap<(String, String, String), UsageDelta> = HashMap::new();
        for (key, counts) in batch {
            let client = self.name_of(&key.caller).await;
            let entry = merged
                .entry((key.route.clone(), client.clone(), key.user_agent.clone()))
                .or_insert_with(|| UsageDelta {
                    route: key.route.clone(),
                    since: key.since.clone(),
                    client,
                    user_agent: key.user_agent.clone(),
                    calls: 0,
                    errors: 0,
                    first_seen: counts.first_seen.clone(),
                    last_seen: counts.last_seen.clone(),
                });
            entry.calls += counts.calls;
            entry.errors += counts.errors;
            entry.first_seen = entry.first_seen.clone().min(counts.first_seen);
            entry.last_seen = entry.last_seen.clone().max(counts.last_seen);
        }
        if let Err(error) = self
            .store
            .usage_add(merged.into_values().collect(), self.max_clients)
            .await
        {
            tracing::warn!(%error, "V3 usage counts could not be stored");
        }
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
}

/// Days without a call after which a route is marked unused.
pub const UNUSED_AFTER_DAYS: i64 = 30;

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
    /// No call for [`UNUSED_AFTER_DAYS`] days.
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

/// Groups stored rows by route, routes sorted by `sort` (`calls`, `errors`, `last_seen`, `route`).
pub fn by_route(rows: Vec<UsageRow>, sort: &str, now: time::OffsetDateTime) -> Vec<RouteUsage> {
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
        route.unused_for_30_days = crate::util::time_format::parse_time(&route.last_seen)
            .is_some_and(|last| (now - last).whole_days() >= UNUSED_AFTER_DAYS);
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
        let routes = by_route(rows, "calls", now);
        assert_eq!(routes[0].route, "GET /b");
        assert_eq!(routes[0].calls, 7);
        assert_eq!(routes[0].last_seen, "2026-02-28T00:00:00.000Z");
        assert!(!routes[0].unused_for_30_days);
        assert!(routes[1].unused_for_30_days, "no call since January");
        assert_eq!(by_route(routes_rows(), "route", now)[0].route, "GET /a");
    }

    fn routes_rows() -> Vec<UsageRow> {
        vec![
            row("GET /b", "x", 5, "2026-02-28T00:00:00.000Z"),
            row("GET /a", "x", 1, "2026-01-02T00:00:00.000Z"),
        ]
    }
}
