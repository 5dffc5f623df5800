//! The id ↔ iid index: V3 names issues and merge requests by global id, V4 by per-project iid.
//!
//! Every V4 issue and merge request the gateway reshapes carries `id`, `iid` and `project_id`; [`IdIndex::learn`]
//! records them in a bounded memory cache and in the store, so an id a client got through the gateway is known
//! without a backend call, also after a restart. A miss is asked of the backend's GraphQL in one request
//! (`issue(id:)`, `mergeRequest(id:)`), with the caller's credentials; where the backend has no GraphQL or refuses,
//! it is resolved by searching the project's list on the backend: lists sorted by `created_at` ascending follow id
//! order, so the search bisects pages instead of reading them all, and reads at most `id_lookup_max_pages` pages.
//! A V3 path may name the project by its full path: a known record then answers only once the index knows which
//! project that path names (from GraphQL's `reference`, or the first page of that path's list).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::backend::{header_number, Caller};
use super::graphql::{GraphqlState, Located};
use crate::http::error::GatewayError;
use crate::store::{IdKind, IdRecord, Store};
use crate::telemetry::Metrics;

/// The index shared by all requests.
pub struct IdIndex {
    cache: Mutex<HashMap<(IdKind, u64), (u64, u64)>>,
    /// Project full paths (decoded, lower case) and the project id each was seen to name, so that a record found
    /// in memory or in the store can be checked against a V3 path that names its project by path. Memory only:
    /// after a restart the first lookup per path asks the backend once.
    project_paths: Mutex<HashMap<String, u64>>,
    capacity: usize,
    max_pages: u32,
    store: Arc<dyn Store>,
    metrics: Arc<Metrics>,
    graphql: Arc<GraphqlState>,
}

fn number(value: &Value, key: &str) -> Option<u64> {
    value.get(key)?.as_u64()
}

fn record_of(kind: IdKind, item: &Value) -> Option<IdRecord> {
    Some(IdRecord {
        kind,
        id: number(item, "id")?,
        project_id: number(item, "project_id")?,
        iid: number(item, "iid")?,
    })
}

/// V3's answer when a record looked up by global id was not there for the caller: V3 found issues and merge
/// requests with ActiveRecord's `find` (`IssuesFinder#find`, `user_project.merge_requests.find`,
/// `lib/api/v3/helpers.rb`), and `lib/api/api.rb` answered every `RecordNotFound` `404 Not found`.
pub const V3_RECORD_NOT_FOUND: &str = "404 Not found";

/// V3's answer for a global id that names no issue or merge request the caller can see in the project:
/// `RecordNotFound`, which `lib/api/api.rb` answered 404 `{"message":"404 Not found"}`.
fn record_not_found() -> GatewayError {
    let body = serde_json::json!({ "message": V3_RECORD_NOT_FOUND });
    super::exchange::relay_error(
        http::StatusCode::NOT_FOUND,
        bytes::Bytes::from(serde_json::to_vec(&body).unwrap_or_default()),
    )
}

/// The V3 path's project (a percent-encoded full path) as the key of [`IdIndex::project_paths`]: decoded and in
/// lower case, since the service finds paths without regard to case.
fn path_key(project: &str) -> String {
    percent_encoding::percent_decode_str(project)
        .decode_utf8_lossy()
        .to_lowercase()
}

/// Whether a record belongs to the V3 path's project, as far as the index knows.
enum Membership {
    /// The record is in the project.
    Yes,
    /// The record is in another project.
    No,
    /// The project is named by a path the index has not seen yet: the backend must say.
    Unknown,
}

impl IdIndex {
    /// An index with a memory cache of `capacity` entries over `store`, asking misses of `graphql` first.
    pub fn new(
        store: Arc<dyn Store>,
        metrics: Arc<Metrics>,
        graphql: Arc<GraphqlState>,
        capacity: usize,
        max_pages: u32,
    ) -> Self {
        IdIndex {
            cache: Mutex::new(HashMap::new()),
            project_paths: Mutex::new(HashMap::new()),
            capacity,
            max_pages,
            store,
            metrics,
            graphql,
        }
    }

    fn cached(&self, kind: IdKind, id: u64) -> Option<IdRecord> {
        let cache = self.cache.lock().ok()?;
        cache.get(&(kind, id)).map(|(project_id, iid)| IdRecord {
            kind,
            id,
            project_id: *project_id,
            iid: *iid,
        })
    }

    /// Remembers that the project path `project` (as the V3 path has it) names project `project_id`.
    fn learn_path(&self, project: &str, project_id: u64) {
        let Ok(mut paths) = self.project_paths.lock() else {
            return;
        };
        if paths.len() >= self.capacity {
            paths.clear(); // rare, and each path costs one backend request to learn again
        }
        paths.insert(path_key(project), project_id);
    }

    /// Whether `record` is in the V3 path's `project` (a numeric id or an encoded full path).
    fn membership(&self, record: &IdRecord, project: &str) -> Membership {
        let project_id = match project.parse::<u64>() {
            Ok(project_id) => Some(project_id),
            Err(_) => self
                .project_paths
                .lock()
                .ok()
                .and_then(|paths| paths.get(&path_key(project)).copied()),
        };
        match project_id {
            Some(project_id) if project_id == record.project_id => Membership::Yes,
            Some(_) => Membership::No,
            None => Membership::Unknown,
        }
    }

    /// Puts records in the memory cache; returns the ones that were new or changed.
    fn remember(&self, records: Vec<IdRecord>) -> Vec<IdRecord> {
        let Ok(mut cache) = self.cache.lock() else {
            return Vec::new();
        };
        if cache.len() + records.len() > self.capacity {
            // Evict about half, arbitrarily: the store still has every entry, so a dropped one costs one read.
            let mut keep = false;
            cache.retain(|_, _| {
                keep = !keep;
                keep
            });
        }
        records
            .into_iter()
            .filter(|record| {
                let value = (record.project_id, record.iid);
                cache.insert((record.kind, record.id), value) != Some(value)
            })
            .collect()
    }

    /// Records every issue or merge request in `value` (an object or an array of them).
    pub fn learn(&self, kind: IdKind, value: &Value) {
        let records: Vec<IdRecord> = match value {
            Value::Array(items) => items.iter().filter_map(|item| record_of(kind, item)).collect(),
            item => record_of(kind, item).into_iter().collect(),
        };
        self.learn_records(records);
    }

    /// Remembers id ↔ iid pairs read off an answer, in memory now and in the store soon after.
    pub fn learn_records(&self, records: Vec<IdRecord>) {
        if records.is_empty() {
            return;
        }
        let fresh = self.remember(records);
        if fresh.is_empty() {
            return;
        }
        let store = Arc::clone(&self.store);
        tokio::spawn(async move {
            if let Err(error) = store.id_record(fresh).await {
                tracing::warn!(%error, "id index: could not store learned ids");
            }
        });
    }

    /// Finds the iid of global `id` in `project` (the V3 path's `:id`, numeric or an encoded path).
    pub async fn resolve(
        &self,
        kind: IdKind,
        raw_id: &str,
        project: &str,
        caller: &Caller<'_>,
    ) -> Result<IdRecord, GatewayError> {
        // Ids are 64-bit signed integers (the store's and the service's): a larger number names nothing, and is
        // answered at once, without a lookup.
        let Some(id) = raw_id.parse::<i64>().ok().and_then(|id| u64::try_from(id).ok()) else {
            return Err(record_not_found());
        };
        // A record from memory or the store answers at once when its project is known to be the V3 path's.
        let known = match self.cached(kind, id) {
            Some(record) => Some((record, "memory")),
            None => match self.store.id_lookup(kind, id).await {
                Ok(Some(record)) => {
                    self.remember(vec![record]);
                    Some((record, "store"))
                }
                Ok(None) => None,
                Err(error) => {
                    tracing::warn!(%error, "id index: store lookup failed; asking the backend");
                    None
                }
            },
        };
        if let Some((record, source)) = known {
            match self.membership(&record, project) {
                Membership::Yes => {
                    self.metrics.id_lookup(source);
                    return Ok(record);
                }
                Membership::No => {
                    self.metrics.id_lookup(source);
                    return Err(record_not_found());
                }
                // A project named by a path not seen yet: the backend says which project that path is.
                Membership::Unknown => {}
            }
        }
        match self.graphql.locate(caller, kind, id).await? {
            Located::Found {
                project_id,
                iid,
                project_path,
            } => {
                let record = IdRecord {
                    kind,
                    id,
                    project_id,
                    iid,
                };
                self.learn_records(vec![record]);
                if let Some(path) = &project_path {
                    self.learn_path(path, project_id);
                }
                match self.membership(&record, project) {
                    Membership::Yes => {
                        self.metrics.id_lookup("graphql");
                        return Ok(record);
                    }
                    Membership::No if project.parse::<u64>().is_ok() => {
                        self.metrics.id_lookup("graphql");
                        return Err(record_not_found());
                    }
                    // A path other than the project's own: an old path the backend still follows after a
                    // rename, or another project; the named project's list says which.
                    Membership::No | Membership::Unknown => {}
                }
            }
            Located::NotFound => {
                // Not there for this caller, anywhere: the bisection would find nothing either.
                self.metrics.id_lookup("not_found");
                return Err(record_not_found());
            }
            Located::Unanswered => {}
        }
        match self.search(kind, id, project, caller).await? {
            Some(record) => {
                self.metrics.id_lookup("backend");
                Ok(record)
            }
            None => {
                self.metrics.id_lookup("not_found");
                Err(record_not_found())
            }
        }
    }

    /// Bisects the project's list, oldest first, for `id`.
    async fn search(
        &self,
        kind: IdKind,
        id: u64,
        project: &str,
        caller: &Caller<'_>,
    ) -> Result<Option<IdRecord>, GatewayError> {
        let collection = match kind {
            IdKind::Issue => "issues",
            IdKind::MergeRequest => "merge_requests",
        };
        let page_path = |page: u64| {
            format!(
                "/api/v4/projects/{project}/{collection}?state=all&order_by=created_at&sort=asc&per_page=100&page={page}"
            )
        };
        let mut low = 1;
        let mut high = u64::MAX;
        let mut pages_read = 0;
        while low <= high && pages_read < self.max_pages {
            let page = if pages_read == 0 {
                1
            } else {
                low + (high - low) / 2
            };
            pages_read += 1;
            let answer = caller.get_json(&page_path(page)).await?;
            if pages_read == 1 {
                high = header_number(&answer.headers, "x-total-pages")
                    .unwrap_or(1)
                    .max(1);
            }
            self.learn(kind, &answer.body);
            let items = answer.body.as_array().map(Vec::as_slice).unwrap_or_default();
            if project.parse::<u64>().is_err() {
                // The named project's own list: its items say which project the path names.
                if let Some(project_id) = items.first().and_then(|item| number(item, "project_id")) {
                    self.learn_path(project, project_id);
                }
            }
            if let Some(record) = items
                .iter()
                .filter_map(|item| record_of(kind, item))
                .find(|record| record.id == id)
            {
                return Ok(Some(record));
            }
            let first = items.first().and_then(|item| number(item, "id"));
            let last = items.last().and_then(|item| number(item, "id"));
            match (first, last) {
                (Some(first), _) if id < first => high = page.saturating_sub(1),
                (_, Some(last)) if id > last => low = page + 1,
                _ => return Ok(None),
            }
        }
        Ok(None)
    }
}
