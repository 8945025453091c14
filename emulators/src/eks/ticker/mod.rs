//! The ticker: completes due lifecycle transitions and runs their side effects in spawned tasks,
//! never inside a request — workload API servers start and stop, node instances are launched and
//! terminated (in moto when configured), and each cluster's Nodes are kept equal to its instances.
//!
//! This module holds the tick itself (the transitions under the state lock) and the effects it
//! starts; [`clusters`] runs the clusters' effects (security group, workload API server),
//! [`nodes`] the nodegroups' (instances launched and terminated, Nodes written).

mod clusters;
mod nodes;

use std::sync::Arc;

use tokio::time::Instant;

use super::addons::apply_addon_change;
use super::nodegroups::apply_nodegroup_change;
use super::state::{Change, Cluster, Nodegroup, Status, UpdateStatus};
use super::{Eks, epoch_now};

/// A side effect to run outside the state lock.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Effect {
    /// Provision a creating cluster: its security group (with moto), its workload API server
    /// (with workload servers).
    Provision { cluster: String, id: String },
    /// Delete a deleting cluster's security group (with moto), then let the deletion complete.
    DeleteClusterGroup { cluster: String, group: String },
    /// Stop a deleted cluster's workload API server.
    StopWorkload { id: String },
    /// Bring a nodegroup's instances to its target.
    Reconcile { cluster: String, nodegroup: String },
    /// Rewrite a cluster's Nodes from its instances.
    SyncNodes { cluster: String },
}

impl Eks {
    /// One tick: completes due transitions and starts their side effects.
    pub(super) fn tick(self: &Arc<Self>) {
        let now = Instant::now();
        let workload = self.config.workload.is_some();
        let moto = self.ec2.is_some();
        let mut effects = Vec::new();
        {
            let mut st = self.lock();
            let mut gone_clusters = Vec::new();
            for cluster in st.clusters.values_mut() {
                if (workload || moto)
                    && !cluster.start_requested
                    && *cluster.life.state() == Status::Creating
                {
                    cluster.start_requested = true;
                    effects.push(Effect::Provision {
                        cluster: cluster.name.clone(),
                        id: cluster.workload_id.clone(),
                    });
                }
                if moto
                    && *cluster.life.state() == Status::Deleting
                    && cluster.life.due(now)
                    && !cluster.group_leaving
                    && !cluster.cluster_security_group.is_empty()
                {
                    // The cluster is gone only once its security group is.
                    cluster.group_leaving = true;
                    cluster.life.hold();
                    effects.push(Effect::DeleteClusterGroup {
                        cluster: cluster.name.clone(),
                        group: cluster.cluster_security_group.clone(),
                    });
                }
                tick_nodegroups(cluster, now, workload, &mut effects);
                tick_addons(cluster, now);
                let was_creating = *cluster.life.state() == Status::Creating;
                match cluster.life.advance(now) {
                    Some(Status::Active) => {
                        if was_creating {
                            self.kit()
                                .milestones
                                .record(format!("cluster/{}", cluster.name), "ACTIVE");
                        }
                        complete_cluster_update(cluster);
                    }
                    Some(Status::Gone) => gone_clusters.push(cluster.name.clone()),
                    _ => {}
                }
            }
            for name in gone_clusters {
                if let Some(c) = st.clusters.remove(&name) {
                    tracing::info!(cluster = %name, "cluster deleted");
                    if workload {
                        effects.push(Effect::StopWorkload { id: c.workload_id });
                    }
                }
            }
        }
        for effect in effects {
            let eks = Arc::clone(self);
            tokio::spawn(async move { eks.run(effect).await });
        }
    }

    async fn run(self: Arc<Self>, effect: Effect) {
        match effect {
            Effect::Provision { cluster, id } => {
                if self.make_cluster_group(&cluster).await {
                    self.start_workload(&cluster, &id).await;
                }
            }
            Effect::DeleteClusterGroup { cluster, group } => {
                self.delete_cluster_group(&cluster, &group).await;
            }
            Effect::StopWorkload { id } => {
                if let Some(w) = &self.config.workload {
                    w.stop_cluster(&id).await;
                }
            }
            Effect::Reconcile { cluster, nodegroup } => self.reconcile(&cluster, &nodegroup).await,
            Effect::SyncNodes { cluster } => self.sync_nodes(&cluster).await,
        }
    }
}

fn tick_nodegroups(cluster: &mut Cluster, now: Instant, workload: bool, effects: &mut Vec<Effect>) {
    let mut gone = Vec::new();
    for n in cluster.nodegroups.values_mut() {
        if n.life.due(now) && !n.applied && !n.reconciling {
            n.applied = true;
            let reconcile = match *n.life.state() {
                Status::Creating => serving(n) != n.scaling.desired,
                Status::Deleting => {
                    if n.instances.is_empty() {
                        // No pass in flight and nothing left: a hold a pass left goes too.
                        n.life.release();
                    }
                    !n.instances.is_empty()
                }
                Status::Updating => {
                    let change = n.pending_update().map(|u| u.change.clone());
                    let resize = change
                        .as_ref()
                        .is_some_and(|c| apply_nodegroup_change(n, c));
                    resize || serving(n) != n.scaling.desired
                }
                _ => false,
            };
            if reconcile {
                n.life.hold();
                n.reconciling = true;
                effects.push(Effect::Reconcile {
                    cluster: cluster.name.clone(),
                    nodegroup: n.name.clone(),
                });
            } else if workload && *n.life.state() == Status::Updating {
                effects.push(Effect::SyncNodes {
                    cluster: cluster.name.clone(),
                });
            }
        }
        match n.life.advance(now) {
            Some(Status::Active) => {
                n.applied = false;
                n.modified_at = epoch_now();
                if let Some(id) = n.pending.take()
                    && let Some(u) = n.updates.iter_mut().find(|u| u.id == id)
                {
                    u.status = UpdateStatus::Successful;
                }
            }
            Some(Status::Gone) => gone.push(n.name.clone()),
            _ => {}
        }
    }
    for name in gone {
        cluster.nodegroups.remove(&name);
        tracing::info!(cluster = %cluster.name, nodegroup = %name, "nodegroup deleted");
        if workload {
            effects.push(Effect::SyncNodes {
                cluster: cluster.name.clone(),
            });
        }
    }
}

fn tick_addons(cluster: &mut Cluster, now: Instant) {
    let mut gone = Vec::new();
    for a in cluster.addons.values_mut() {
        match a.life.advance(now) {
            Some(Status::Active) => {
                if let Some(id) = a.pending.take() {
                    let change = a
                        .updates
                        .iter()
                        .find(|u| u.id == id)
                        .map(|u| u.change.clone());
                    if let Some(change) = change {
                        apply_addon_change(a, &change);
                    }
                    if let Some(u) = a.updates.iter_mut().find(|u| u.id == id) {
                        u.status = UpdateStatus::Successful;
                    }
                }
            }
            Some(Status::Gone) => gone.push(a.name.clone()),
            _ => {}
        }
    }
    for name in gone {
        cluster.addons.remove(&name);
    }
}

/// Applies the cluster's completed update and marks it successful.
fn complete_cluster_update(cluster: &mut Cluster) {
    let Some(id) = cluster.pending.take() else {
        return;
    };
    let Some(change) = cluster
        .updates
        .iter()
        .find(|u| u.id == id)
        .map(|u| u.change.clone())
    else {
        return;
    };
    match change {
        Change::ClusterVersion(v) => {
            cluster.version = v;
            cluster.platform_version = "eks.1".into();
        }
        Change::Endpoint {
            public,
            private,
            cidrs,
        } => {
            cluster.public_access = public;
            cluster.private_access = private;
            cluster.public_cidrs = cidrs;
        }
        Change::Vpc {
            subnets,
            security_groups,
        } => {
            if let Some(s) = subnets {
                cluster.subnets = s;
            }
            if let Some(s) = security_groups {
                cluster.security_groups = s;
            }
        }
        Change::Logging(l) => cluster.logging = l,
        Change::AuthenticationMode(m) => cluster.authentication_mode = m,
        Change::UpgradePolicy(s) => cluster.support_type = s,
        Change::AssociateIdp(n) => {
            if let Some(i) = cluster.idps.get_mut(&n) {
                i.status = Status::Active;
            }
        }
        Change::DisassociateIdp(n) => {
            cluster.idps.remove(&n);
        }
        Change::NodegroupConfig(_) | Change::NodegroupVersion { .. } | Change::Addon { .. } => {}
    }
    if let Some(u) = cluster.updates.iter_mut().find(|u| u.id == id) {
        u.status = UpdateStatus::Successful;
    }
    tracing::info!(cluster = %cluster.name, update = %id, "cluster update completed");
}

/// The instances that count toward the nodegroup's size (shutting-down ones do not).
fn serving(n: &Nodegroup) -> i64 {
    n.instances.iter().filter(|i| !i.shutting_down).count() as i64
}
