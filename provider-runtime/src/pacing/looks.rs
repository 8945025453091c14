//! What a pass may report without reading the cloud again: the last look at a control plane at
//! rest ([`Looks`]), the network an InfraCluster walk last saw whole ([`NetworkMemo`]), and
//! values read now and then rather than on every pass, such as a cluster's CA or a region's
//! zones ([`Expiring`]). All in memory: a restarted provider (or a new leader) looks once more.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use contract::conditions::DesiredCondition;

use crate::infra_cluster::NetworkReport;

/// The last look at each control plane that found it serving with nothing to do, by UID: what
/// was observed, when, and at which generation of the object. One entry per control plane,
/// dropped when it is deleted or no longer at rest.
pub(crate) struct Looks<T> {
    looks: Mutex<HashMap<String, Look<T>>>,
}

struct Look<T> {
    at: Instant,
    generation: Option<i64>,
    observed: Arc<T>,
}

impl<T> Default for Looks<T> {
    fn default() -> Self {
        Self {
            looks: Mutex::new(HashMap::new()),
        }
    }
}

impl<T> Looks<T> {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Look<T>>> {
        self.looks.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The last look at `uid` and its age, when it was taken at `generation` less than `good_for`
    /// ago.
    pub(crate) fn recent(
        &self,
        uid: &str,
        generation: Option<i64>,
        good_for: Duration,
        now: Instant,
    ) -> Option<(Arc<T>, Duration)> {
        let looks = self.lock();
        let look = looks.get(uid)?;
        let age = now.checked_duration_since(look.at)?;
        (look.generation == generation && age < good_for).then(|| (look.observed.clone(), age))
    }

    /// Remembers a look at `uid`; looks older than `forget_after` are dropped on the way (their
    /// control planes were deleted, or left rest without a pass since).
    pub(crate) fn remember(
        &self,
        uid: &str,
        generation: Option<i64>,
        observed: Arc<T>,
        now: Instant,
        forget_after: Duration,
    ) {
        let mut looks = self.lock();
        looks.retain(|_, l| now.saturating_duration_since(l.at) < forget_after);
        looks.insert(
            uid.to_owned(),
            Look {
                at: now,
                generation,
                observed,
            },
        );
    }

    /// Forgets the look at `uid`.
    pub(crate) fn forget(&self, uid: &str) {
        self.lock().remove(uid);
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().len()
    }
}

/// The networks last seen whole, by object UID: what a pass reports without reading the cloud
/// while the last walk's look-again time has not come and the spec's generation is the same.
/// In memory only: a restarted provider (or a new leader) reads every network once.
#[derive(Debug)]
pub struct NetworkMemo<N> {
    seen: Mutex<HashMap<String, Seen<N>>>,
}

#[derive(Debug)]
struct Seen<N> {
    generation: Option<i64>,
    at: Instant,
    until: Duration,
    network: N,
    condition: DesiredCondition,
}

impl<N: Clone> Default for NetworkMemo<N> {
    fn default() -> Self {
        Self {
            seen: Mutex::new(HashMap::new()),
        }
    }
}

impl<N: Clone> NetworkMemo<N> {
    /// Remembers a report if it saw the network whole (else forgets the object's).
    pub fn remember(
        &self,
        uid: &str,
        generation: Option<i64>,
        now: Instant,
        report: &NetworkReport<N>,
    ) {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        match (&report.network, report.complete && report.error.is_none()) {
            (Some(network), true) => {
                seen.insert(
                    uid.to_string(),
                    Seen {
                        generation,
                        at: now,
                        until: report.requeue,
                        network: network.clone(),
                        condition: report.condition.clone(),
                    },
                );
            }
            _ => {
                seen.remove(uid);
            }
        }
    }

    /// The remembered report, its look-again time shortened by the time gone, while that time
    /// has not come and the generation is the one it was seen at.
    pub fn fresh(
        &self,
        uid: &str,
        generation: Option<i64>,
        now: Instant,
    ) -> Option<NetworkReport<N>> {
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let s = seen.get(uid)?;
        let gone = now.checked_duration_since(s.at)?;
        if s.generation != generation || gone >= s.until {
            return None;
        }
        Some(NetworkReport {
            network: Some(s.network.clone()),
            complete: true,
            condition: s.condition.clone(),
            requeue: s.until - gone,
            error: None,
        })
    }

    /// Forgets an object (it is being deleted).
    pub fn forget(&self, uid: &str) {
        self.seen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(uid);
    }
}

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
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::ProviderError;
    use contract::conditions::Reason;

    #[test]
    fn a_look_serves_its_object_at_its_generation_for_its_time_then_is_forgotten() {
        let looks = Looks::<&str>::default();
        let t0 = std::time::Instant::now();
        let rest = Duration::from_secs(900);
        let at = |s: u64| t0 + Duration::from_secs(s);
        assert!(looks.recent("a", Some(1), rest, t0).is_none());
        looks.remember("a", Some(1), Arc::new("seen"), t0, rest * 2);
        let (seen, age) = looks.recent("a", Some(1), rest, at(600)).expect("recent");
        assert_eq!((*seen, age), ("seen", Duration::from_secs(600)));
        assert!(
            looks.recent("a", Some(2), rest, at(1)).is_none(),
            "spec changed"
        );
        assert!(
            looks.recent("b", Some(1), rest, at(1)).is_none(),
            "another object"
        );
        assert!(
            looks.recent("a", Some(1), rest, at(900)).is_none(),
            "too old"
        );
        // Remembering drops looks past their use; forgetting drops one.
        looks.remember("b", Some(1), Arc::new("b"), at(1_800), rest * 2);
        assert_eq!(looks.len(), 1);
        looks.forget("b");
        assert_eq!(looks.len(), 0);
    }

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

    fn ready(requeue: u64) -> NetworkReport<&'static str> {
        NetworkReport::ready("vpc-1", "ready", Duration::from_secs(requeue))
    }

    #[test]
    fn a_network_seen_whole_is_not_read_again_before_its_time_nor_after_a_spec_change() {
        let memo = NetworkMemo::default();
        let t0 = Instant::now();
        let at = |secs| t0 + Duration::from_secs(secs);
        memo.remember("uid-1", Some(1), t0, &ready(600));
        let hit = memo.fresh("uid-1", Some(1), at(100)).expect("remembered");
        assert_eq!(
            (hit.network, hit.complete, hit.requeue),
            (Some("vpc-1"), true, Duration::from_secs(500))
        );
        assert!(
            memo.fresh("uid-1", Some(1), at(600)).is_none(),
            "its time came"
        );
        assert!(
            memo.fresh("uid-1", Some(2), at(1)).is_none(),
            "the spec changed"
        );
        assert!(
            memo.fresh("uid-2", Some(1), at(1)).is_none(),
            "another object"
        );

        // A walk that did not see the network whole forgets it; so does a deletion.
        let mut partial = ready(5);
        partial.complete = false;
        memo.remember("uid-1", Some(1), t0, &partial);
        assert!(memo.fresh("uid-1", Some(1), at(1)).is_none());
        memo.remember("uid-1", Some(1), t0, &ready(600));
        memo.forget("uid-1");
        assert!(memo.fresh("uid-1", Some(1), at(1)).is_none());
        let failed: NetworkReport<&str> =
            NetworkReport::failed(ProviderError::terminal(Reason::CloudError, "throttled"));
        memo.remember("uid-1", Some(1), t0, &failed);
        assert!(memo.fresh("uid-1", Some(1), at(1)).is_none());
    }
}
