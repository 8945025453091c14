//! The ticker: moves work requests ACCEPTED → IN_PROGRESS → SUCCEEDED / FAILED and applies what
//! they do; launches and terminates node instances (a removed node stays `DELETING` for the
//! kit's `instanceShutdown` window first); moves Core resources through their states; starts
//! and stops workload API servers and keeps each cluster's Nodes equal to its instances, in
//! spawned tasks, never inside a request.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::containerengine::{labels_of, quota_error};
use super::error::OciError;
use super::state::{Effect, Life, Node, NodePool, State, WrStatus};
use super::{Oke, catalog, new_etag, now_rfc3339, provider_id};
use crate::kit::lifecycle::Delays;
use crate::kit::workload::{self, NodeSpec, WorkloadClusters, WorkloadEndpoint};

/// How long a DELETED cluster or node pool stays readable.
const FORGET_AFTER: Duration = Duration::from_secs(60);

/// A side effect run outside the state lock.
#[derive(Debug)]
enum Task {
    StartWorkload { key: String, id: String },
    StopWorkload { id: String },
    SyncNodes { key: String },
}

impl Oke {
    /// One tick.
    pub(super) fn tick(self: &Arc<Self>) {
        let now = Instant::now();
        let workload = self.config.workload.is_some();
        let leave_at = now + Delays::duration(self.kit.timing().instance_shutdown);
        let mut tasks = Vec::new();
        {
            let mut st = self.lock();
            self.tick_core(&mut st, now);
            st.clusters
                .retain(|_, c| c.forget_at.is_none_or(|at| at > now));
            st.pools
                .retain(|_, p| p.forget_at.is_none_or(|at| at > now));
            for (key, c) in &mut st.clusters {
                if workload && !c.start_requested && c.life == Life::Creating {
                    c.start_requested = true;
                    tasks.push(Task::StartWorkload {
                        key: key.clone(),
                        id: c.workload_id.clone(),
                    });
                }
            }
            let started: Vec<String> = st
                .work_requests
                .values()
                .filter(|w| w.status == WrStatus::Accepted && now >= w.start_at)
                .map(|w| w.id.clone())
                .collect();
            for id in started {
                if let Some(w) = st.work_requests.get_mut(&id) {
                    w.status = WrStatus::InProgress;
                    w.times[1] = Some(now_rfc3339());
                    w.logs
                        .push((now_rfc3339(), format!("{} in progress", w.operation)));
                }
            }
            let due: Vec<String> = st
                .work_requests
                .values()
                .filter(|w| w.status == WrStatus::InProgress && now >= w.done_at)
                .map(|w| w.id.clone())
                .collect();
            for id in due {
                let Some(mut w) = st.work_requests.remove(&id) else {
                    continue;
                };
                let waiting = matches!(w.effect, Some(Effect::CreateCluster))
                    && workload
                    && st
                        .clusters
                        .get(&w.entity.1)
                        .is_some_and(|c| c.endpoint.is_none());
                if !waiting {
                    let outcome = match w.effect.take() {
                        Some(effect) => {
                            self.apply(&mut st, &w.entity.1, effect, now, leave_at, &mut tasks)
                        }
                        None => Ok(()),
                    };
                    match outcome {
                        Ok(()) => {
                            w.status = WrStatus::Succeeded;
                            w.logs
                                .push((now_rfc3339(), format!("{} succeeded", w.operation)));
                        }
                        Err(e) => {
                            tracing::info!(work_request = %w.id, error = %e.message, "work request failed");
                            w.fail(e);
                        }
                    }
                    w.times[2] = Some(now_rfc3339());
                    release(&mut st, &w.entity.1, &w.id);
                }
                st.work_requests.insert(id, w);
            }
            let mut dirty = Vec::new();
            for p in st.pools.values_mut() {
                let before = p.nodes.len();
                p.nodes.retain(|n| n.leaving_at.is_none_or(|at| at > now));
                if p.nodes.len() != before {
                    dirty.push(p.cluster.clone());
                }
            }
            for (key, c) in &mut st.clusters {
                if dirty.contains(key) {
                    c.nodes_dirty = true;
                }
                if c.nodes_dirty && c.endpoint.is_some() {
                    c.nodes_dirty = false;
                    tasks.push(Task::SyncNodes { key: key.clone() });
                } else if c.endpoint.is_none() {
                    c.nodes_dirty = false;
                }
            }
        }
        for task in tasks {
            let oke = Arc::clone(self);
            tokio::spawn(async move { oke.run(task).await });
        }
    }

    /// What a completed work request does to `target` (a cluster or node pool OCID).
    fn apply(
        &self,
        st: &mut State,
        target: &str,
        effect: Effect,
        now: Instant,
        leave_at: Instant,
        tasks: &mut Vec<Task>,
    ) -> Result<(), OciError> {
        match effect {
            Effect::CreateCluster | Effect::UpdateCluster | Effect::UpgradeCluster(_) => {
                let Some(c) = st.clusters.get_mut(target) else {
                    return Ok(());
                };
                match effect {
                    Effect::UpgradeCluster(v) => {
                        tracing::info!(cluster = %c.name, version = %v, "cluster upgraded");
                        c.version = v;
                    }
                    // When the cloud said ACTIVE, for the benchmark's P5 (the kit's milestones).
                    Effect::CreateCluster => self
                        .kit
                        .milestones
                        .record(format!("cluster/{}", c.name), "ACTIVE"),
                    _ => {}
                }
                c.life = Life::Active;
                c.details = String::new();
                c.etag = new_etag();
                c.metadata["timeUpdated"] = serde_json::json!(now_rfc3339());
                c.nodes_dirty = true;
                Ok(())
            }
            Effect::DeleteCluster => {
                let Some(c) = st.clusters.get_mut(target) else {
                    return Ok(());
                };
                c.life = Life::Deleted;
                c.details = String::new();
                c.etag = new_etag();
                c.endpoint = None;
                c.forget_at = Some(now + FORGET_AFTER);
                c.metadata["timeDeleted"] = serde_json::json!(now_rfc3339());
                if c.start_requested {
                    tasks.push(Task::StopWorkload {
                        id: c.workload_id.clone(),
                    });
                }
                tracing::info!(cluster = %c.name, "cluster deleted");
                for p in st.pools.values_mut().filter(|p| p.cluster == target) {
                    p.life = Life::Deleted;
                    p.nodes.clear();
                    p.forget_at = Some(now + FORGET_AFTER);
                }
                Ok(())
            }
            Effect::CreatePool | Effect::UpdatePool => {
                let used = st.ocpus_used();
                let limit = self.config.ocpu_limit;
                let ads = self.availability_domains();
                let Some(p) = st.pools.get(target).cloned() else {
                    return Ok(());
                };
                let extra =
                    p.ocpus_per_node() * p.size().saturating_sub(p.serving().count() as u32);
                if used + extra > limit {
                    // Another pool took the OCPUs since the request was accepted.
                    if let Some(p) = st.pools.get_mut(target) {
                        p.life = if p.nodes.is_empty() {
                            Life::Failed
                        } else {
                            Life::NeedsAttention
                        };
                        p.details = "Out of capacity".into();
                    }
                    return Err(quota_error(limit, used, extra));
                }
                let mut p = p;
                let cycling = p.cycling["isNodeCyclingEnabled"] == true;
                if cycling {
                    // Nodes on another version or image are replaced by new ones.
                    for n in p.nodes.iter_mut().filter(|n| n.version != p.version) {
                        n.leaving_at.get_or_insert(leave_at);
                    }
                }
                scale(st, &mut p, &ads, leave_at, self.region_key());
                p.life = Life::Active;
                p.details = String::new();
                p.etag = new_etag();
                let cluster = p.cluster.clone();
                st.pools.insert(target.to_string(), p);
                if let Some(c) = st.clusters.get_mut(&cluster) {
                    c.nodes_dirty = true;
                }
                Ok(())
            }
            Effect::DeletePool => {
                let Some(p) = st.pools.get_mut(target) else {
                    return Ok(());
                };
                for n in &mut p.nodes {
                    n.leaving_at.get_or_insert(leave_at);
                }
                p.life = Life::Deleted;
                p.details = String::new();
                p.etag = new_etag();
                p.forget_at = Some(leave_at.max(now) + FORGET_AFTER);
                Ok(())
            }
        }
    }

    async fn run(self: Arc<Self>, task: Task) {
        let Some(w) = self.config.workload.clone() else {
            return;
        };
        match task {
            Task::StartWorkload { key, id } => workload::start_for(&w, &*self, &key, &id).await,
            Task::StopWorkload { id } => w.stop_cluster(&id).await,
            Task::SyncNodes { key } => workload::sync_for(&w, &self.node_sync, &*self, &key).await,
        }
    }
}

/// Frees the cluster or pool a finished work request held.
fn release(st: &mut State, target: &str, work_request: &str) {
    if let Some(c) = st.clusters.get_mut(target)
        && c.busy.as_deref() == Some(work_request)
    {
        c.busy = None;
    }
    if let Some(p) = st.pools.get_mut(target)
        && p.busy.as_deref() == Some(work_request)
    {
        p.busy = None;
    }
}

/// Brings a pool to its size in serving nodes: new ones are launched across its placements
/// (round robin over availability domains and their fault domains), surplus ones (newest first)
/// start leaving.
fn scale(st: &mut State, p: &mut NodePool, ads: &[String], leave_at: Instant, region_key: &str) {
    let placements: Vec<(String, String, Vec<String>)> = p.node_config["placementConfigs"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|pc| {
            (
                pc["availabilityDomain"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                pc["subnetId"].as_str().unwrap_or_default().to_string(),
                pc["faultDomains"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|f| f.as_str().map(String::from))
                    .collect(),
            )
        })
        .collect();
    let size = p.size() as usize;
    let serving: Vec<usize> = p
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.leaving_at.is_none())
        .map(|(i, _)| i)
        .collect();
    for i in serving
        .iter()
        .rev()
        .take(serving.len().saturating_sub(size))
    {
        p.nodes[*i].leaving_at = Some(leave_at);
    }
    for n in serving.len()..size {
        let (ad, subnet, fds) = placements
            .get(n % placements.len().max(1))
            .cloned()
            .unwrap_or_else(|| {
                (
                    ads.first().cloned().unwrap_or_default(),
                    String::new(),
                    Vec::new(),
                )
            });
        let fd = if fds.is_empty() {
            catalog::FAULT_DOMAINS[(n / placements.len().max(1)) % 3].to_string()
        } else {
            fds[n % fds.len()].clone()
        };
        let ip = st.allocate_ip(&subnet);
        let id = format!("ocid1.instance.oc1.{region_key}.{}", super::unique());
        p.nodes.push(Node {
            id,
            name: ip.clone(),
            availability_domain: ad,
            fault_domain: fd,
            subnet,
            private_ip: ip,
            version: p.version.clone(),
            leaving_at: None,
            time_created: now_rfc3339(),
        });
    }
}

impl WorkloadClusters for Oke {
    fn started(&self, key: &str, id: &str, result: &anyhow::Result<WorkloadEndpoint>) -> bool {
        let mut st = self.lock();
        let Some(c) = st
            .clusters
            .get_mut(key)
            .filter(|c| c.workload_id == id && !c.going())
        else {
            return false;
        };
        match result {
            Ok(ep) => {
                tracing::info!(cluster = %c.name, server = %ep.server, "workload API server ready");
                c.endpoint = Some(ep.clone());
                c.nodes_dirty = true;
                true
            }
            Err(e) => {
                c.life = Life::Failed;
                c.details = "The control plane failed to start".into();
                let busy = c.busy.take();
                if let Some(w) = busy.and_then(|b| st.work_requests.get_mut(&b)) {
                    w.fail(OciError::internal(format!(
                        "The control plane failed to start: {e}"
                    )));
                }
                false
            }
        }
    }

    fn nodes(&self, key: &str) -> Option<(String, Vec<NodeSpec>)> {
        let st = self.lock();
        let c = st.clusters.get(key)?;
        let mut nodes = Vec::new();
        for p in st.pools.values().filter(|p| p.cluster == *key) {
            let labels = labels_of(p);
            for n in &p.nodes {
                let mut l: BTreeMap<String, String> = labels.clone();
                l.insert("name".into(), p.name.clone());
                l.insert("node.kubernetes.io/instance-type".into(), p.shape.clone());
                l.insert(
                    "topology.kubernetes.io/region".into(),
                    self.config.region.clone(),
                );
                l.insert(
                    "topology.kubernetes.io/zone".into(),
                    n.availability_domain
                        .split_once(':')
                        .map_or(n.availability_domain.as_str(), |(_, z)| z)
                        .to_string(),
                );
                l.insert(
                    "oci.oraclecloud.com/fault-domain".into(),
                    n.fault_domain.clone(),
                );
                l.insert(
                    "oke.oraclecloud.com/node.info.private_subnet".into(),
                    "true".into(),
                );
                nodes.push(NodeSpec {
                    name: n.name.clone(),
                    provider_id: provider_id(&n.id),
                    labels: l,
                    taints: Vec::new(),
                    kubelet_version: Some(n.version.clone()),
                });
            }
        }
        Some((c.workload_id.clone(), nodes))
    }

    fn nodes_failed(&self, key: &str) {
        if let Some(c) = self.lock().clusters.get_mut(key) {
            c.nodes_dirty = true;
        }
    }
}
