//! A bounded cache of answers that cost a backend call to learn (who a token belongs to, a caller's access to a
//! project).
//!
//! Three rules keep what clients invent from growing svcgate or the backend's load: at most `capacity` entries
//! are kept (the least recently used go first, so memory is bounded however many distinct tokens are sent), an
//! answer is reused for its time to live, and callers asking for the same key at once share one call (so a key
//! is looked up at most once per time to live, however many requests carry it).

use std::future::Future;
use std::hash::Hash;
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use lru::LruCache;
use tokio::sync::OnceCell;
use tokio::time::Instant;

/// One key's answer, or the call learning it.
struct Slot<V> {
    asked_at: Instant,
    answer: Arc<OnceCell<V>>,
}

/// Answers by key, bounded, reused for a time to live, learned once.
pub struct AnswerCache<K: Hash + Eq, V> {
    slots: Mutex<LruCache<K, Slot<V>>>,
    ttl: Duration,
}

impl<K: Hash + Eq + Clone, V: Clone> AnswerCache<K, V> {
    /// A cache of at most `capacity` answers (at least one), each reused for `ttl`.
    pub fn new(capacity: usize, ttl: Duration) -> Self {
        AnswerCache {
            slots: Mutex::new(LruCache::new(
                NonZeroUsize::new(capacity).unwrap_or(NonZeroUsize::MIN),
            )),
            ttl,
        }
    }

    fn slots(&self) -> MutexGuard<'_, LruCache<K, Slot<V>>> {
        self.slots
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The answer for `key`: a fresh one kept, the one being learned by another caller, or `ask`'s.
    pub async fn get_or_ask<F, Fut>(&self, key: K, ask: F) -> V
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = V>,
    {
        let answer = {
            let mut slots = self.slots();
            match slots.get(&key) {
                Some(slot) if slot.asked_at.elapsed() < self.ttl => Arc::clone(&slot.answer),
                _ => {
                    let answer = Arc::new(OnceCell::new());
                    slots.put(
                        key,
                        Slot {
                            asked_at: Instant::now(),
                            answer: Arc::clone(&answer),
                        },
                    );
                    answer
                }
            }
        };
        answer.get_or_init(ask).await.clone()
    }

    /// Forgets `key`'s answer (a failure not worth keeping), so the next caller asks again.
    pub fn forget(&self, key: &K) {
        self.slots().pop(key);
    }

    /// Answers kept now.
    pub fn len(&self) -> usize {
        self.slots().len()
    }

    /// Whether no answer is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test(start_paused = true)]
    async fn concurrent_askers_of_one_key_share_one_call_and_the_answer_lasts_its_ttl() {
        let cache = Arc::new(AnswerCache::<String, u32>::new(10, Duration::from_secs(60)));
        let calls = Arc::new(AtomicUsize::new(0));
        let askers: Vec<_> = (0..20)
            .map(|_| {
                let (cache, calls) = (Arc::clone(&cache), Arc::clone(&calls));
                tokio::spawn(async move {
                    cache
                        .get_or_ask("token".to_owned(), || async {
                            calls.fetch_add(1, Ordering::SeqCst);
                            tokio::time::sleep(Duration::from_millis(100)).await;
                            7
                        })
                        .await
                })
            })
            .collect();
        for asker in askers {
            assert_eq!(asker.await.unwrap(), 7);
        }
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        tokio::time::advance(Duration::from_secs(61)).await;
        let again = cache
            .get_or_ask("token".to_owned(), || async {
                calls.fetch_add(1, Ordering::SeqCst);
                8
            })
            .await;
        assert_eq!((again, calls.load(Ordering::SeqCst)), (8, 2));
    }

    #[tokio::test]
    async fn the_least_recently_used_answers_go_first_past_the_capacity() {
        let cache = AnswerCache::<u32, u32>::new(3, Duration::from_secs(60));
        for key in 0..1000 {
            cache.get_or_ask(key, || async move { key * 2 }).await;
        }
        assert_eq!(cache.len(), 3);
        let kept = cache.get_or_ask(999, || async { 0 }).await;
        assert_eq!(kept, 1998);
        let forgotten = cache.get_or_ask(0, || async { 5 }).await;
        assert_eq!(forgotten, 5);
    }
}
