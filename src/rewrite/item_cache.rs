//! A short-lived cache of per-item completions (`subscribed` in V3 issue and merge request lists), by caller.
//!
//! V4 lists leave out `subscribed`; V3 lists carried it, so each item costs a fetch of its own. Those answers are
//! kept for `item_fetch_cache_ttl` per caller (a hash of their credentials) and item, so a client that polls a
//! list costs one backend call a poll instead of one per item. A change a caller makes through the gateway drops
//! their entries at once; a change made elsewhere shows after at most the TTL.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use foldhash::fast::RandomState;
use serde_json::{Map, Value};

/// The most entries kept (the cache is emptied past it; every entry expires within the TTL anyway).
const CAPACITY: usize = 50_000;

/// The fields one fetch completed, shared by every list answer that reuses them.
pub type Fields = Arc<Map<String, Value>>;

/// When an item's fields were fetched, and the fields.
type Completion = (Instant, Fields);

/// Entries by caller, then by item path (looked up with borrowed keys: no allocation per item). A list of 100 items
/// looks up 100 paths, so the maps use foldhash's fast hasher rather than SipHash; it is seeded at random per
/// process, so paths that clients partly choose cannot be aimed at one bucket.
#[derive(Default)]
struct Entries {
    by_caller: HashMap<String, HashMap<String, Completion, RandomState>, RandomState>,
    count: usize,
}

/// Completed fields by caller and item path.
pub struct ItemCache {
    ttl: Duration,
    entries: Mutex<Entries>,
}

impl ItemCache {
    /// A cache keeping answers for `ttl` (zero: no caching).
    pub fn new(ttl: Duration) -> Self {
        ItemCache {
            ttl,
            entries: Mutex::new(Entries::default()),
        }
    }

    /// The fields fetched for each of `paths` by `caller`, where fresh (one lock and caller lookup for a list).
    pub fn get_many(&self, caller: &str, paths: &[Option<String>]) -> Vec<Option<Fields>> {
        let mut found = vec![None; paths.len()];
        if self.ttl.is_zero() {
            return found;
        }
        let Ok(entries) = self.entries.lock() else {
            return found;
        };
        let Some(items) = entries.by_caller.get(caller) else {
            return found;
        };
        // One clock reading for the whole list.
        let now = Instant::now();
        for (slot, path) in found.iter_mut().zip(paths) {
            if let Some((at, fields)) = path.as_deref().and_then(|path| items.get(path)) {
                if now.saturating_duration_since(*at) < self.ttl {
                    *slot = Some(Arc::clone(fields));
                }
            }
        }
        found
    }

    /// Keeps the fields fetched for `path` by `caller`.
    pub fn put(&self, caller: &str, path: &str, fields: Fields) {
        if self.ttl.is_zero() {
            return;
        }
        if let Ok(mut entries) = self.entries.lock() {
            if entries.count >= CAPACITY {
                *entries = Entries::default();
            }
            let previous = entries
                .by_caller
                .entry(caller.to_owned())
                .or_default()
                .insert(path.to_owned(), (Instant::now(), fields));
            if previous.is_none() {
                entries.count += 1;
            }
        }
    }

    /// Forgets a caller's entries (they changed something through the gateway).
    pub fn forget(&self, caller: &str) {
        if let Ok(mut entries) = self.entries.lock() {
            if let Some(gone) = entries.by_caller.remove(caller) {
                entries.count -= gone.len();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_per_caller_expire_and_are_forgotten() {
        let cache = ItemCache::new(Duration::from_secs(60));
        let mut fields = Map::new();
        fields.insert("subscribed".to_owned(), Value::Bool(true));
        let fields = Arc::new(fields);
        cache.put("a", "/p/1", Arc::clone(&fields));
        let paths = [Some("/p/1".to_owned()), None, Some("/p/2".to_owned())];
        assert_eq!(
            cache.get_many("a", &paths),
            vec![Some(Arc::clone(&fields)), None, None]
        );
        assert_eq!(cache.get_many("b", &paths), vec![None, None, None], "per caller");
        cache.forget("a");
        assert_eq!(cache.get_many("a", &paths), vec![None, None, None]);
        let off = ItemCache::new(Duration::ZERO);
        off.put("a", "/p/1", fields);
        assert_eq!(off.get_many("a", &paths), vec![None, None, None]);
    }
}
