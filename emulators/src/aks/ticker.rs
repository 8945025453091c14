//! The ticker: completes asynchronous operations when due and applies what they do; launches
//! and removes scale-set instances (a removed instance stays `Deleting` for the kit's
//! `instanceShutdown` window first); starts and stops workload API servers and keeps each
//! cluster's Nodes equal to its instances, in spawned tasks, never inside a request.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::http::StatusCode;
use tokio::time::Instant;

use super::arm::{ArmError, str_of};
use super::catalog;
use super::managed::{quota_error, shutdown_window};
use super::state::{Cluster, Effect, OpStatus, Pool, Provisioning, State, Target, Vm};
use super::{Aks, now_rfc3339, provider_id};
use crate::kit::workload::{self, NodeSpec, WorkloadClusters, WorkloadEndpoint};

/// A side effect run outside the state lock.
#[derive(Debug)]
enum Task {
    StartWorkload { key: String, id: String },
    StopWorkload { id: String },
    SyncNodes { key: String },
}

/// Brings a pool to `count` serving instances: new ones are launched across its zones, surplus
/// ones (newest first) start leaving.
fn scale(p: &mut Pool, count: u32, leave_at: Instant) {
    let zones: Vec<String> = p.props["availabilityZones"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|z| z.as_str().map(String::from))
        .collect();
    let serving: Vec<usize> = p
        .vms
        .iter()
        .enumerate()
        .filter(|(_, v)| v.leaving_at.is_none())
        .map(|(i, _)| i)
        .collect();
    let have = serving.len() as u32;
    for i in serving
        .iter()
        .rev()
        .take(have.saturating_sub(count) as usize)
    {
        p.vms[*i].leaving_at = Some(leave_at);
    }
    for n in have..count {
        let id = p.next_id;
        p.next_id += 1;
        let zone = (!zones.is_empty()).then(|| zones[n as usize % zones.len()].clone());
        p.vms.push(Vm {
            instance_id: id,
            zone,
            version: p.current.clone(),
            leaving_at: None,
        });
    }
}

impl Aks {
    /// One tick.
    pub(super) fn tick(self: &Arc<Self>) {
        let now = Instant::now();
        let workload = self.config.workload.is_some();
        let leave_at = now + shutdown_window(self);
        let mut tasks = Vec::new();
        {
            let mut st = self.lock();
            for (key, c) in &mut st.clusters {
                if workload && !c.start_requested && c.state == Provisioning::Creating {
                    c.start_requested = true;
                    tasks.push(Task::StartWorkload {
                        key: key.clone(),
                        id: c.workload_id.clone(),
                    });
                }
            }
            let due: Vec<String> = st
                .operations
                .values()
                .filter(|o| o.status == OpStatus::InProgress && now >= o.done_at)
                .map(|o| o.id.clone())
                .collect();
            for id in due {
                let Some(mut op) = st.operations.remove(&id) else {
                    continue;
                };
                let waiting = match (&op.target, &op.effect) {
                    (Target::Cluster(k), Some(Effect::CreateCluster)) => {
                        workload && st.clusters.get(k).is_some_and(|c| c.endpoint.is_none())
                    }
                    _ => false,
                };
                if !waiting {
                    if let Some(effect) = op.effect.take() {
                        match self.apply(&mut st, &op.target, effect, leave_at, &mut tasks) {
                            Ok(()) => op.status = OpStatus::Succeeded,
                            Err(e) => {
                                tracing::info!(operation = %op.id, error = %e.message, "operation failed");
                                op.status = OpStatus::Failed;
                                op.error = Some(e);
                            }
                        }
                    } else {
                        op.status = OpStatus::Succeeded;
                    }
                    op.end_time = Some(now_rfc3339());
                    if let Target::Cluster(k) = &op.target
                        && let Some(c) = st.clusters.get_mut(k)
                        && c.busy.as_deref() == Some(op.id.as_str())
                    {
                        c.busy = None;
                    }
                }
                st.operations.insert(id, op);
            }
            for (key, c) in &mut st.clusters {
                for p in &mut c.pools {
                    let before = p.vms.len();
                    p.vms.retain(|v| v.leaving_at.is_none_or(|at| at > now));
                    if p.vms.len() != before {
                        c.nodes_dirty = true;
                    }
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
            let aks = Arc::clone(self);
            tokio::spawn(async move { aks.run(task).await });
        }
    }

    /// What a completed operation does.
    fn apply(
        &self,
        st: &mut State,
        target: &Target,
        effect: Effect,
        leave_at: Instant,
        tasks: &mut Vec<Task>,
    ) -> Result<(), ArmError> {
        let key = match target {
            Target::Cluster(k) | Target::Vnet(k) | Target::Group(k) => k.clone(),
        };
        match effect {
            Effect::PutVnet => {
                if let Some(n) = st.vnets.get_mut(&key) {
                    n.state = Provisioning::Succeeded;
                }
                return Ok(());
            }
            Effect::DeleteVnet => {
                st.vnets.remove(&key);
                return Ok(());
            }
            Effect::DeleteGroup => {
                let Some(g) = st.groups.remove(&key) else {
                    return Ok(());
                };
                let inside = |sub: &str, group: &str| {
                    sub.eq_ignore_ascii_case(&g.subscription) && group.eq_ignore_ascii_case(&g.name)
                };
                st.vnets.retain(|_, n| !inside(&n.subscription, &n.group));
                let gone: Vec<String> = st
                    .clusters
                    .iter()
                    .filter(|(_, c)| inside(&c.subscription, &c.group))
                    .map(|(k, _)| k.clone())
                    .collect();
                for k in gone {
                    if let Some(c) = st.clusters.remove(&k) {
                        st.groups
                            .remove(&super::state::key(&[&c.subscription, &c.node_group]));
                        if c.start_requested {
                            tasks.push(Task::StopWorkload { id: c.workload_id });
                        }
                    }
                }
                return Ok(());
            }
            Effect::DeleteCluster => {
                if let Some(c) = st.clusters.remove(&key) {
                    tracing::info!(cluster = %c.name, "managed cluster deleted");
                    st.groups
                        .remove(&super::state::key(&[&c.subscription, &c.node_group]));
                    if c.start_requested {
                        tasks.push(Task::StopWorkload { id: c.workload_id });
                    }
                }
                return Ok(());
            }
            _ => {}
        }
        let limit = self.config.vcpu_quota;
        let (sub, location) = match st.clusters.get(&key) {
            Some(c) => (c.subscription.clone(), c.location.clone()),
            None => return Ok(()),
        };
        let used = st.vcpus_used(&sub, &location);
        let Some(c) = st.clusters.get_mut(&key) else {
            return Ok(());
        };
        let vcpus = |p: &Pool| catalog::vm_size(p.vm_size()).map_or(2, |s| s.0);
        let result = match effect {
            Effect::CreateCluster => {
                let needed: u32 = c.pools.iter().map(|p| vcpus(p) * p.count()).sum();
                if used + needed > limit {
                    // Another cluster took the quota since the preflight check.
                    let e = quota_error(&location, limit, used, needed);
                    c.state = Provisioning::Failed;
                    for p in &mut c.pools {
                        p.state = Provisioning::Failed;
                    }
                    return Err(e);
                }
                for p in &mut c.pools {
                    let n = p.count();
                    scale(p, n, leave_at);
                    p.state = Provisioning::Succeeded;
                }
                c.state = Provisioning::Succeeded;
                Ok(())
            }
            Effect::UpgradeCluster(v) => {
                c.current = v;
                c.state = Provisioning::Succeeded;
                Ok(())
            }
            Effect::UpdateCluster => {
                c.state = Provisioning::Succeeded;
                Ok(())
            }
            Effect::PutPool(name) => {
                let Some(p) = c.pool_mut(&name) else {
                    return Ok(());
                };
                let wanted = catalog::resolve(str_of(&p.props, "orchestratorVersion"))
                    .unwrap_or(&p.current)
                    .to_string();
                let extra = vcpus(p) * p.count().saturating_sub(p.serving().count() as u32);
                if used + extra > limit {
                    p.state = Provisioning::Failed;
                    return Err(quota_error(&location, limit, used, extra));
                }
                if wanted != p.current {
                    // A surge upgrade: every instance is replaced by one at the new version.
                    p.current = wanted;
                    for v in &mut p.vms {
                        v.leaving_at.get_or_insert(leave_at);
                    }
                }
                let n = p.count();
                scale(p, n, leave_at);
                p.state = Provisioning::Succeeded;
                Ok(())
            }
            Effect::DeletePool(name) => {
                c.pools.retain(|p| !p.name.eq_ignore_ascii_case(&name));
                Ok(())
            }
            Effect::DeleteCluster | Effect::PutVnet | Effect::DeleteVnet | Effect::DeleteGroup => {
                Ok(())
            }
        };
        c.etag = super::arm::new_etag();
        c.nodes_dirty = true;
        result
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

impl WorkloadClusters for Aks {
    fn started(&self, key: &str, id: &str, result: &anyhow::Result<WorkloadEndpoint>) -> bool {
        let mut st = self.lock();
        let busy = st
            .clusters
            .get(key)
            .filter(|c| c.workload_id == id)
            .and_then(|c| c.busy.clone());
        let Some(c) = st.clusters.get_mut(key).filter(|c| c.workload_id == id) else {
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
                let error = ArmError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "InternalOperationError",
                    format!("The control plane failed to start: {e}"),
                );
                c.state = Provisioning::Failed;
                c.busy = None;
                if let Some(op) = busy.and_then(|b| st.operations.get_mut(&b)) {
                    op.status = OpStatus::Failed;
                    op.end_time = Some(now_rfc3339());
                    op.effect = None;
                    op.error = Some(error);
                }
                false
            }
        }
    }

    fn nodes(&self, key: &str) -> Option<(String, Vec<NodeSpec>)> {
        self.lock()
            .clusters
            .get(key)
            .map(|c| (c.workload_id.clone(), node_specs(c)))
    }

    fn nodes_failed(&self, key: &str) {
        if let Some(c) = self.lock().clusters.get_mut(key) {
            c.nodes_dirty = true;
        }
    }
}

/// The Nodes a cluster's instances register, as AKS's kubelets and cloud provider write them.
fn node_specs(c: &Cluster) -> Vec<NodeSpec> {
    let mut nodes = Vec::new();
    for p in &c.pools {
        for v in &p.vms {
            let mut labels: BTreeMap<String, String> = p.props["nodeLabels"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect();
            labels.insert("agentpool".into(), p.name.clone());
            labels.insert("kubernetes.azure.com/agentpool".into(), p.name.clone());
            labels.insert(
                "kubernetes.azure.com/mode".into(),
                if p.is_system() { "system" } else { "user" }.into(),
            );
            labels.insert("kubernetes.azure.com/cluster".into(), c.node_group.clone());
            labels.insert(
                "node.kubernetes.io/instance-type".into(),
                p.vm_size().into(),
            );
            labels.insert("topology.kubernetes.io/region".into(), c.location.clone());
            labels.insert(
                "topology.kubernetes.io/zone".into(),
                v.zone
                    .as_ref()
                    .map_or_else(|| "0".to_string(), |z| format!("{}-{z}", c.location)),
            );
            let taints = p.props["nodeTaints"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|t| {
                    let (kv, effect) = t.as_str()?.rsplit_once(':')?;
                    let (k, val) = kv.split_once('=').unwrap_or((kv, ""));
                    Some((k.to_string(), val.to_string(), effect.to_string()))
                })
                .collect();
            nodes.push(NodeSpec {
                name: p.computer_name(v.instance_id),
                provider_id: provider_id(&c.subscription, &c.node_group, &p.vmss(), v.instance_id),
                labels,
                taints,
                kubelet_version: Some(format!("v{}", v.version)),
            });
        }
    }
    nodes
}
