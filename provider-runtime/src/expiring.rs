//! Values a provider reads from its cloud now and then rather than on every pass (a cluster's
//! CA, a region's zones): kept for a while, read again after.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Values by key, each fresh for `ttl` after it was put; stale ones are dropped as new ones
/// come, so keys of deleted things do not pile up.
#[derive(Debug)]
pub struct Expiring<K, V> {
    ttl: Duration,
    entries: Mutex<BTreeMap<K, (V, Instant)>>,
}

impl<K: Ord, V: Clone> Expiring<K, V> {
    /// An empty map whose values are fresh for `ttl`.
    pub fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            entries: Mutex::new(BTreeMap::new()),
        }
    }

    /// The value of `key`, while fresh.
    pub fn get(&self, key: &K) -> Option<V> {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)
            .filter(|(_, at)| at.elapsed() < self.ttl)
            .map(|(v, _)| v.clone())
    }

    /// Keeps `value` for `key`, dropping what has gone stale.
    pub fn put(&self, key: K, value: V) {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries.retain(|_, (_, at)| at.elapsed() < self.ttl);
        entries.insert(key, (value, Instant::now()));
    }

    /// How many values are kept (stale ones included until the next put).
    pub fn len(&self) -> usize {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Whether none is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_kept_while_fresh_and_stale_ones_go_as_new_ones_come() {
        let fresh: Expiring<&str, u32> = Expiring::new(Duration::from_secs(3600));
        fresh.put("a", 1);
        assert_eq!(fresh.get(&"a"), Some(1));
        assert_eq!(fresh.get(&"b"), None);
        let stale: Expiring<&str, u32> = Expiring::new(Duration::ZERO);
        stale.put("a", 1);
        assert_eq!(stale.get(&"a"), None);
        stale.put("b", 2);
        assert_eq!(
            stale.len(),
            1,
            "the stale value is dropped when another comes"
        );
    }
}
