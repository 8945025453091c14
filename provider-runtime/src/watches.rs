//! The shared caches of core's Clusters and MachinePools, and the triggers they send.
//!
//! One watch per kind serves every controller of the process: its reflector store answers the
//! owner lookups of every pass (no API read per pass), and each change is fanned out to the
//! controllers as a "touched" name that they map to their own objects — only when something a
//! provider reacts to changed (spec, labels, annotations, deletion, initialization flags), not on
//! every status-condition update core makes. Objects are slimmed before caching (managed fields
//! and the last-applied annotation dropped).

use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::fmt::Debug;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use contract::capi::{Cluster, MachinePool};

use futures::channel::mpsc;
use futures::{Stream, StreamExt};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Resource, ResourceExt};
use serde::de::DeserializeOwned;

/// kubectl's copy of the whole applied object; large and never needed here.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Drops what a controller never reads from a cached object: `managedFields` but for who holds
/// `spec.controlPlaneEndpoint` (the endpoint rule reads it, `contract::endpoint`), and kubectl's
/// last-applied copy.
pub(crate) fn slim<K: Resource>(obj: &mut K) {
    let meta = obj.meta_mut();
    meta.managed_fields = meta
        .managed_fields
        .take()
        .map(contract::endpoint::endpoint_owners)
        .filter(|kept| !kept.is_empty());
    if let Some(annotations) = meta.annotations.as_mut() {
        annotations.remove(LAST_APPLIED);
    }
}

/// The backoff of every watch the kernel runs: 250 ms doubling to at most 4 s, jittered over
/// half to all of each step, and back to 250 ms as soon as the watch delivers again. kube's
/// default backoff grows to 30 s, so after an API server outage of a few seconds a watch could
/// wait that long before it looked again: the fault suite measured 17 s from kube-apiserver's
/// return to the provider acting on a pool scaled meanwhile.
#[derive(Debug, Clone)]
pub(crate) struct WatchBackoff {
    next: std::time::Duration,
}

impl WatchBackoff {
    const FIRST: std::time::Duration = std::time::Duration::from_millis(250);
    const LONGEST: std::time::Duration = std::time::Duration::from_secs(4);
}

impl Default for WatchBackoff {
    fn default() -> Self {
        Self { next: Self::FIRST }
    }
}

impl Iterator for WatchBackoff {
    type Item = std::time::Duration;

    fn next(&mut self) -> Option<Self::Item> {
        let step = self.next;
        self.next = (step * 2).min(Self::LONGEST);
        Some(step.mul_f64(0.5 + 0.5 * crate::pacing::retry::jitter()))
    }
}

impl kube::runtime::utils::Backoff for WatchBackoff {
    fn reset(&mut self) {
        self.next = Self::FIRST;
    }
}

/// The name of a changed object.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Touched {
    pub namespace: String,
    pub name: String,
}

impl Touched {
    fn of<K: Resource>(obj: &K) -> Self {
        Self {
            namespace: obj.namespace().unwrap_or_default(),
            name: obj.name_any(),
        }
    }
}

/// A shared cache of one kind plus subscribers to its changes; built before the watch starts.
pub(crate) struct SharedWatch<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    api: Api<K>,
    store: Store<K>,
    writer: Option<reflector::store::Writer<K>>,
    subscribers: Vec<mpsc::UnboundedSender<Touched>>,
    relevance: fn(&K) -> u64,
}

/// The metadata every trigger cares about.
fn hash_meta<K: Resource>(obj: &K, h: &mut DefaultHasher) {
    let meta = obj.meta();
    meta.uid.hash(h);
    meta.generation.hash(h);
    meta.labels.hash(h);
    meta.annotations.hash(h);
    meta.deletion_timestamp.is_some().hash(h);
}

/// What of a Cluster a provider reacts to: its spec (generation), metadata, deletion, the
/// initialization flags (the infrastructure becoming provisioned releases the control plane),
/// and whether core reaches the workload API server (the pools' `NodesVisible`; its status
/// only, not its message or time).
pub(crate) fn cluster_relevance(c: &Cluster) -> u64 {
    let mut h = DefaultHasher::new();
    hash_meta(c, &mut h);
    let init = c.status.as_ref().and_then(|s| s.initialization.as_ref());
    init.map(|i| (i.infrastructure_provisioned, i.control_plane_initialized))
        .hash(&mut h);
    c.remote_connection_probe().map(|p| &p.status).hash(&mut h);
    h.finish()
}

/// What of a MachinePool a provider reacts to: its spec (replicas, version, zones) and metadata.
pub(crate) fn machine_pool_relevance(p: &MachinePool) -> u64 {
    let mut h = DefaultHasher::new();
    hash_meta(p, &mut h);
    h.finish()
}

impl<K> SharedWatch<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    /// A watch of `api` announcing a change only when `relevance` of the object changed.
    pub(crate) fn new(api: Api<K>, relevance: fn(&K) -> u64) -> Self {
        let (store, writer) = reflector::store();
        Self {
            api,
            store,
            writer: Some(writer),
            subscribers: Vec::new(),
            relevance,
        }
    }

    pub(crate) fn store(&self) -> Store<K> {
        self.store.clone()
    }

    /// A stream of changed objects' names; subscribe before [`Self::run`].
    pub(crate) fn subscribe(&mut self) -> mpsc::UnboundedReceiver<Touched> {
        let (tx, rx) = mpsc::unbounded();
        self.subscribers.push(tx);
        rx
    }

    /// Drives the watch forever (until the future is dropped).
    ///
    /// Changes seen during a (re)list are announced once the list completes, when the store
    /// has swapped in the new state, so a subscriber never reads an older object than the
    /// one that triggered it.
    pub(crate) fn run(mut self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let writer = self.writer.take();
        let api = self.api.clone();
        let subscribers = std::mem::take(&mut self.subscribers);
        async move {
            let Some(writer) = writer else { return };
            let kind = K::kind(&()).into_owned();
            let stream = watcher(api, watcher::Config::default())
                .backoff(WatchBackoff::default())
                .modify(slim::<K>)
                .reflect(writer);
            let mut stream = std::pin::pin!(stream);
            let relevance = self.relevance;
            // Last announced relevance per object; a relist re-announces only what changed.
            let mut seen: HashMap<Touched, u64> = HashMap::new();
            let mut listed: HashMap<Touched, u64> = HashMap::new();
            let send = |t: &Touched| {
                for s in &subscribers {
                    let _ = s.unbounded_send(t.clone());
                }
            };
            while let Some(event) = stream.next().await {
                match event {
                    Ok(watcher::Event::Apply(obj)) => {
                        let t = Touched::of(&obj);
                        let r = relevance(&obj);
                        if seen.insert(t.clone(), r) != Some(r) {
                            send(&t);
                        }
                    }
                    Ok(watcher::Event::Delete(obj)) => {
                        let t = Touched::of(&obj);
                        seen.remove(&t);
                        send(&t);
                    }
                    Ok(watcher::Event::Init) => listed.clear(),
                    Ok(watcher::Event::InitApply(obj)) => {
                        listed.insert(Touched::of(&obj), relevance(&obj));
                    }
                    Ok(watcher::Event::InitDone) => {
                        // Announced once the store holds the new list, never before.
                        for (t, r) in &listed {
                            if seen.get(t) != Some(r) {
                                send(t);
                            }
                        }
                        for t in seen.keys() {
                            if !listed.contains_key(t) {
                                send(t);
                            }
                        }
                        seen = std::mem::take(&mut listed);
                    }
                    Err(error) => tracing::warn!(%error, kind, "watch failed; retrying"),
                }
            }
        }
    }
}

/// Maps touched owners to the objects of `K` found by `select` in `store`.
pub(crate) fn map_touched<K, F>(
    touched: mpsc::UnboundedReceiver<Touched>,
    store: Store<K>,
    select: F,
) -> impl Stream<Item = ObjectRef<K>> + Send + 'static
where
    K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
    F: Fn(&K, &Touched) -> bool + Send + Sync + 'static,
{
    let select = Arc::new(select);
    touched.flat_map(move |t| {
        let select = select.clone();
        let refs: Vec<ObjectRef<K>> = store
            .state_filter(|obj| {
                obj.namespace().as_deref() == Some(t.namespace.as_str()) && select(obj, &t)
            })
            .iter()
            .map(|o| ObjectRef::from_obj(o.as_ref()))
            .collect();
        futures::stream::iter(refs)
    })
}

#[cfg(test)]
mod backoff_tests {
    use std::time::Duration;

    use kube::runtime::utils::Backoff as _;

    use super::WatchBackoff;

    #[test]
    fn a_watch_retries_within_four_seconds_however_long_it_failed_and_starts_over_after_a_success()
    {
        let mut b = WatchBackoff::default();
        let steps: Vec<Duration> = (0..20).filter_map(|_| b.next()).collect();
        assert!(steps[0] <= Duration::from_millis(250), "{steps:?}");
        assert!(
            steps.iter().all(|d| *d <= Duration::from_secs(4)),
            "{steps:?}"
        );
        assert!(steps[19] >= Duration::from_secs(2), "{steps:?}");
        b.reset();
        assert!(b.next().is_some_and(|d| d <= Duration::from_millis(250)));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use contract::capi::{Cluster, ClusterSpec};

    #[test]
    fn cluster_triggers_ignore_condition_churn_but_not_what_providers_read() {
        let mut c = Cluster::new("c", ClusterSpec::default());
        c.metadata.generation = Some(1);
        let base = cluster_relevance(&c);
        let mut churn = c.clone();
        churn.status = Some(contract::capi::ClusterStatus {
            phase: Some("Provisioning".into()),
            ..Default::default()
        });
        assert_eq!(cluster_relevance(&churn), base);
        let mut provisioned = churn.clone();
        provisioned.status.as_mut().unwrap().initialization =
            Some(contract::capi::ClusterInitialization {
                infrastructure_provisioned: Some(true),
                control_plane_initialized: None,
            });
        assert_ne!(cluster_relevance(&provisioned), base);
        let mut paused = c.clone();
        paused.metadata.generation = Some(2);
        assert_ne!(cluster_relevance(&paused), base);
        let mut annotated = c.clone();
        annotated.metadata.annotations =
            Some([(contract::capi::PAUSED_ANNOTATION.to_string(), String::new())].into());
        assert_ne!(cluster_relevance(&annotated), base);

        let probe = |status: &str, message: &str| {
            let mut probed = churn.clone();
            probed.status.as_mut().unwrap().conditions =
                vec![k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition {
                    type_: contract::capi::REMOTE_CONNECTION_PROBE.into(),
                    status: status.into(),
                    reason: "ProbeFailed".into(),
                    message: message.into(),
                    last_transition_time: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                        jiff::Timestamp::UNIX_EPOCH,
                    ),
                    observed_generation: None,
                }];
            cluster_relevance(&probed)
        };
        assert_ne!(probe("False", "probe failed at 10:00"), base);
        assert_eq!(
            probe("False", "probe failed at 10:00"),
            probe("False", "probe failed at 10:05")
        );
        assert_ne!(probe("False", ""), probe("True", ""));
    }

    #[test]
    fn slimming_drops_managed_fields_but_the_endpoint_s_owner_and_the_last_applied_copy() {
        let mut c = Cluster::new("c", ClusterSpec::default());
        c.metadata.managed_fields = Some(vec![Default::default()]);
        c.metadata.annotations = Some(
            [
                (LAST_APPLIED.to_string(), "{...}".to_string()),
                ("keep".to_string(), "me".to_string()),
            ]
            .into(),
        );
        slim(&mut c);
        assert!(c.metadata.managed_fields.is_none());
        let mut cp = Cluster::new("c", ClusterSpec::default());
        let endpoint = k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry {
            manager: Some("eks".into()),
            operation: Some("Apply".into()),
            fields_v1: Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1(
                serde_json::json!({"f:spec": {"f:controlPlaneEndpoint": {"f:host": {}}, "f:x": {}}}),
            )),
            ..Default::default()
        };
        cp.metadata.managed_fields = Some(vec![endpoint, Default::default()]);
        slim(&mut cp);
        let kept = cp.metadata.managed_fields.unwrap_or_default();
        assert_eq!(kept.len(), 1, "who holds the endpoint stays");
        assert!(contract::endpoint::endpoint_applied_by(&kept, "eks"));
        assert_eq!(c.annotations().len(), 1);
        assert_eq!(c.annotations()["keep"], "me");
    }
}
