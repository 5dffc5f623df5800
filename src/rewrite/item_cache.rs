//! A short-lived cache of per-item completions (`subscribed` in V3 issue and merge request lists), by caller.
//!
//! V4 lists leave out `subscribed`; V3 lists carried it, so each item costs a fetch of its own. Those answers are
//! kept for `item_fetch_cache_ttl` per caller (a hash of their credentials) and item, so a client that polls a
//! list costs one backend call a poll instead of one per item. A change a caller makes through the gateway drops
//! their entries at once; a change made elsewhere shows after at most the TTL.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

/// The most entries kept (the cache is emptied past it; every entry expires within the TTL anyway).
const CAPACITY: usize = 50_000;

/// When an item's fields were fetched, and the fields.
type Completion = (Instant, Map<String, Value>);

/// Entries by caller, then by item path (looked up with borrowed keys: no allocation per item).
#[derive(Default)]
struct Entries {
    by_caller: HashMap<String, HashMap<String, Completion>>,
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

    /// The fields fetched for `path` by `caller`, if fresh.
    pub fn get(&self, caller: &str, path: &str) -> Option<Map<String, Value>> {
        if self.ttl.is_zero() {
            return None;
        }
        let entries = self.entries.lock().ok()?;
        let (at, fields) = entries.by_caller.get(caller)?.get(path)?;
        (at.elapsed() < self.ttl).then(|| fields.clone())
    }

    /// Keeps the fields fetched for `path` by `caller`.
    pub fn put(&self, caller: &str, path: &str, fields: Map<String, Value>) {
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
        cache.put("a", "/p/1", fields.clone());
        assert_eq!(cache.get("a", "/p/1"), Some(fields));
        assert_eq!(cache.get("b", "/p/1"), None, "per caller");
        cache.forget("a");
        assert_eq!(cache.get("a", "/p/1"), None);
        let off = ItemCache::new(Duration::ZERO);
        off.put("a", "/p/1", Map::new());
        assert_eq!(off.get("a", "/p/1"), None);
    }
}
