//! The ticker: completes due lifecycle transitions and runs their side effects in spawned tasks,
//! never inside a request — workload API servers start and stop, node instances are launched and
//! terminated (in moto when configured), and each cluster's Nodes are kept equal to its instances.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::json;
use tokio::time::Instant;

use super::addons::apply_addon_change;
use super::catalog;
use super::nodegroups::apply_nodegroup_change;
use super::state::{Change, Cluster, Instance, Nodegroup, Status, UpdateStatus};
use super::{Eks, epoch_now, lower_hex};
use crate::kit::Delays;
use crate::kit::workload::NodeSpec;

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

/// What a reconcile has to do, decided under the lock.
#[derive(Debug)]
struct Plan {
    /// Planned for a deletion (the target is zero).
    deleting: bool,
    terminate: Vec<String>,
    launch: Vec<String>,
    instance_type: String,
    tags: Vec<(String, String)>,
    version: String,
    taken_names: BTreeSet<String>,
    /// The nodegroup's Auto Scaling group (in moto when configured).
    group: Group,
}

/// A nodegroup's Auto Scaling group, as a reconcile needs it.
#[derive(Debug)]
struct Group {
    name: String,
    /// Whether it was created in moto.
    exists: bool,
    subnets: Vec<String>,
    /// The nodegroup's maximum size.
    max: i64,
    /// Instances the nodegroup holds now (shutting-down ones included).
    held: usize,
    /// The tags EKS puts on a nodegroup's group (and nothing else: a client that keeps the
    /// group's tags to EKS's list removes any other).
    tags: Vec<(String, String)>,
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

    /// Makes the cluster security group in moto (a no-op without EC2); false when the cluster
    /// failed or went meanwhile.
    async fn make_cluster_group(&self, cluster: &str) -> bool {
        let Some(ec2) = &self.ec2 else {
            return true;
        };
        let Some(vpc) = ({
            let st = self.lock();
            st.clusters.get(cluster).map(|c| c.vpc_id.clone())
        }) else {
            return false;
        };
        let name = format!("eks-cluster-sg-{cluster}-{}", lower_hex(10));
        let tags = [
            ("aws:eks:cluster-name".to_string(), cluster.to_string()),
            ("Name".to_string(), name.clone()),
            (
                format!("kubernetes.io/cluster/{cluster}"),
                "owned".to_string(),
            ),
        ];
        let made = ec2
            .create_security_group(
                &vpc,
                &name,
                "EKS created security group applied to ENI that is attached to EKS Control Plane master nodes, as well as any managed workloads.",
                &tags,
            )
            .await;
        // Some(kept) when the cluster is still creating; None when it failed or went meanwhile.
        let orphan = {
            let mut st = self.lock();
            match st
                .clusters
                .get_mut(cluster)
                .filter(|c| *c.life.state() == Status::Creating)
            {
                None => made.ok().map(Err),
                Some(c) => Some(Ok(match made {
                    Ok(id) => {
                        c.cluster_security_group = id;
                        if self.config.workload.is_none() {
                            c.life.release();
                        }
                        true
                    }
                    Err(e) => {
                        tracing::error!(cluster, error = %e, "cluster security group could not be made");
                        c.life.set(Status::Failed);
                        c.issues.push(json!({
                            "code": "Ec2SecurityGroupNotFound",
                            "message": format!("The cluster security group could not be created: {e}"),
                            "resourceIds": [cluster],
                        }));
                        false
                    }
                })),
            }
        };
        match orphan {
            Some(Ok(kept)) => kept,
            Some(Err(id)) => {
                // Deleted while it was made.
                if let Err(e) = ec2.delete_security_group(&id).await {
                    tracing::warn!(cluster, group = %id, error = %e, "cluster security group could not be deleted");
                }
                false
            }
            None => false,
        }
    }

    /// Deletes the cluster security group, then lets the cluster's deletion complete (a group
    /// still in use is tried again a few times; one that stays is left, and logged).
    async fn delete_cluster_group(&self, cluster: &str, group: &str) {
        if let Some(ec2) = &self.ec2 {
            let mut attempt = 0;
            loop {
                match ec2.delete_security_group(group).await {
                    Ok(()) => break,
                    Err(e) if attempt < 5 => {
                        attempt += 1;
                        tracing::debug!(cluster, group, error = %e, "cluster security group not deleted yet");
                        tokio::time::sleep(std::time::Duration::from_secs(2)).await;
                    }
                    Err(e) => {
                        tracing::warn!(cluster, group, error = %e, "cluster security group could not be deleted");
                        break;
                    }
                }
            }
        }
        let mut st = self.lock();
        if let Some(c) = st.clusters.get_mut(cluster) {
            c.cluster_security_group.clear();
            c.life.release();
        }
    }

    async fn start_workload(&self, cluster: &str, id: &str) {
        let Some(w) = &self.config.workload else {
            return;
        };
        let result = w.start_cluster(id).await;
        let keep = {
            let mut st = self.lock();
            let c = st
                .clusters
                .get_mut(cluster)
                .filter(|c| c.workload_id == id && *c.life.state() == Status::Creating);
            match (c, &result) {
                (Some(c), Ok(ep)) => {
                    c.endpoint = Some(ep.server.clone());
                    c.ca_data = Some(STANDARD.encode(&ep.ca_pem));
                    c.life.release();
                    tracing::info!(cluster, server = %ep.server, "workload API server ready");
                    true
                }
                (Some(c), Err(e)) => {
                    tracing::error!(cluster, error = %format!("{e:#}"), "workload API server failed to start");
                    c.life.set(Status::Failed);
                    c.issues.push(json!({
                        "code": "InternalFailure",
                        "message": format!("The control plane failed to start: {e}"),
                        "resourceIds": [cluster],
                    }));
                    false
                }
                (None, _) => false,
            }
        };
        if !keep && result.is_ok() {
            // Deleted while it started.
            w.stop_cluster(id).await;
        }
    }

    async fn reconcile(&self, cluster: &str, nodegroup: &str) {
        let plan = {
            let st = self.lock();
            st.clusters
                .get(cluster)
                .and_then(|c| c.nodegroups.get(nodegroup).map(|n| plan(c, n)))
        };
        let Some(plan) = plan else { return };
        let (launched, mut error) = self.launch(&plan, cluster, nodegroup).await;
        // The group holds the instances before the nodegroup reports them (a client reads the
        // provider IDs from the group once the nodegroup is ACTIVE), and exists even empty.
        let mut group_made = plan.group.exists;
        if let (Some(ec2), None, false) = (&self.ec2, &error, plan.deleting) {
            match fill_group(ec2, &plan, &launched).await {
                Ok(()) => group_made = true,
                Err(e) => {
                    error = Some(format!(
                        "Auto Scaling group {} of {cluster}/{nodegroup}: {e}",
                        plan.group.name
                    ));
                }
            }
        }
        let leaving = {
            let mut st = self.lock();
            let Some(n) = st.nodegroup_mut(cluster, nodegroup) else {
                return;
            };
            // A deletion that came while this pass launched holds the nodegroup itself
            // (`delete_nodegroup`); its own pass terminates what is left.
            let deleting_now = *n.life.state() == Status::Deleting;
            n.group_made |= group_made;
            n.instances.extend(launched);
            n.reconciling = false;
            if let Some(e) = error {
                // Nothing goes when the launch failed first.
                tracing::warn!(cluster, nodegroup, error = %e, "nodegroup instances could not be reconciled");
                fail_nodegroup(n, &e);
                None
            } else {
                n.replace = false;
                for i in &mut n.instances {
                    if plan.terminate.contains(&i.id) {
                        i.shutting_down = true;
                    }
                }
                // A scale-in completes while its instances shut down, as an Auto Scaling group's
                // does; a deletion completes only once every instance is gone.
                if !deleting_now {
                    n.life.release();
                }
                let ids: Vec<String> = n
                    .instances
                    .iter()
                    .filter(|i| {
                        i.shutting_down && (plan.deleting || plan.terminate.contains(&i.id))
                    })
                    .map(|i| i.id.clone())
                    .collect();
                Some((ids, plan.deleting))
            }
        };
        self.sync_nodes(cluster).await;
        if let Some((ids, deleting)) = leaving
            && (deleting || !ids.is_empty())
        {
            self.shut_down(cluster, nodegroup, ids, deleting).await;
        }
    }

    /// Lets `ids` shut down for the window in force, then terminates them; the pass of a
    /// deletion (`deleting`) releases the nodegroup once no instance is left.
    async fn shut_down(&self, cluster: &str, nodegroup: &str, ids: Vec<String>, deleting: bool) {
        tokio::time::sleep(Delays::duration(self.timing().instance_shutdown)).await;
        // Out of the emulator's list before EC2 terminates them, so the list never names an
        // instance that is already gone (the conformance suite judges C51 by it).
        let (removed, group): (Vec<Instance>, Option<String>) = {
            let mut st = self.lock();
            st.nodegroup_mut(cluster, nodegroup)
                .map(|n| {
                    let (gone, kept) = std::mem::take(&mut n.instances)
                        .into_iter()
                        .partition(|i| ids.contains(&i.id));
                    n.instances = kept;
                    (gone, n.group_made.then(|| n.asg_name.clone()))
                })
                .unwrap_or_default()
        };
        let result = match &self.ec2 {
            Some(ec2) => {
                // Out of the group first, so the group never replaces what is terminated.
                let detached = match &group {
                    Some(g) => ec2.detach_instances(g, &ids).await.map_err(|e| {
                        format!("DetachInstances from {g} for {cluster}/{nodegroup} failed: {e}")
                    }),
                    None => Ok(()),
                };
                match detached {
                    Ok(()) => ec2.terminate_instances(&ids).await.map_err(|e| {
                        format!("TerminateInstances for {cluster}/{nodegroup} failed: {e}")
                    }),
                    Err(e) => Err(e),
                }
            }
            None => Ok(()),
        };
        let mut group_to_delete = None;
        {
            let mut st = self.lock();
            let Some(n) = st.nodegroup_mut(cluster, nodegroup) else {
                return;
            };
            if let Err(e) = &result {
                tracing::warn!(cluster, nodegroup, error = %e, "nodegroup instances could not be terminated");
                n.instances.extend(removed.into_iter().map(|i| Instance {
                    shutting_down: false,
                    ..i
                }));
                if deleting {
                    fail_nodegroup(n, e);
                } else {
                    n.issues.push(json!({"code": "NodeTerminationFailure", "message": e, "resourceIds": [n.asg_name]}));
                }
            } else if deleting {
                if !n.instances.is_empty() {
                    // Something was launched meanwhile: another pass terminates it.
                    n.applied = false;
                } else if n.group_made && self.ec2.is_some() {
                    group_to_delete = Some(n.asg_name.clone());
                } else {
                    n.life.release();
                }
            }
        }
        if let (Some(g), Some(ec2)) = (group_to_delete, &self.ec2) {
            // The group goes with the nodegroup: the nodegroup is gone only after it.
            let deleted = ec2.delete_auto_scaling_group(&g).await;
            let mut st = self.lock();
            if let Some(n) = st.nodegroup_mut(cluster, nodegroup) {
                match deleted {
                    Ok(()) => {
                        n.group_made = false;
                        n.life.release();
                    }
                    Err(e) => {
                        let e = format!(
                            "DeleteAutoScalingGroup {g} for {cluster}/{nodegroup} failed: {e}"
                        );
                        tracing::warn!(cluster, nodegroup, error = %e, "nodegroup's Auto Scaling group could not be deleted");
                        fail_nodegroup(n, &e);
                    }
                }
            }
        }
        self.sync_nodes(cluster).await;
    }

    /// Launches what `plan` says; returns what was launched and the first error.
    async fn launch(
        &self,
        plan: &Plan,
        cluster: &str,
        nodegroup: &str,
    ) -> (Vec<Instance>, Option<String>) {
        let Some(ec2) = &self.ec2 else {
            // Without moto, refuse an instance type EC2 does not have, as RunInstances would.
            if !plan.launch.is_empty() && !catalog::instance_type_exists(&plan.instance_type) {
                let refused = super::ec2::Ec2Error {
                    action: "RunInstances".into(),
                    code: Some("InvalidInstanceType.NotFound".into()),
                    message: format!("The instance type '{}' does not exist", plan.instance_type),
                };
                return (
                    Vec::new(),
                    Some(format!(
                        "RunInstances for {cluster}/{nodegroup} failed: {refused}"
                    )),
                );
            }
            let mut names = plan.taken_names.clone();
            let launched = plan
                .launch
                .iter()
                .map(|subnet| {
                    let az = subnet_zone(&self.config.region, subnet);
                    let mut dns = private_dns(&self.config.region);
                    while names.contains(&dns) {
                        dns = private_dns(&self.config.region);
                    }
                    names.insert(dns.clone());
                    Instance {
                        id: format!("i-{}", lower_hex(17)),
                        az,
                        private_dns: dns,
                        subnet: subnet.clone(),
                        version: plan.version.clone(),
                        shutting_down: false,
                    }
                })
                .collect();
            return (launched, None);
        };
        let mut launched = Vec::new();
        let mut per_subnet: BTreeMap<&String, usize> = BTreeMap::new();
        for s in &plan.launch {
            *per_subnet.entry(s).or_default() += 1;
        }
        for (subnet, count) in per_subnet {
            match ec2
                .run_instances(count, &plan.instance_type, subnet, &plan.tags)
                .await
            {
                Ok(got) => launched.extend(got.into_iter().map(|l| Instance {
                    id: l.id,
                    az: if l.az.is_empty() {
                        subnet_zone(&self.config.region, subnet)
                    } else {
                        l.az
                    },
                    private_dns: if l.private_dns.is_empty() {
                        private_dns(&self.config.region)
                    } else {
                        l.private_dns
                    },
                    subnet: l.subnet,
                    version: plan.version.clone(),
                    shutting_down: false,
                })),
                Err(e) => {
                    return (
                        launched,
                        Some(format!(
                            "RunInstances for {cluster}/{nodegroup} failed: {e}"
                        )),
                    );
                }
            }
        }
        (launched, None)
    }

    /// Makes the cluster's Nodes equal to its instances (workload servers only).
    async fn sync_nodes(&self, cluster: &str) {
        let Some(w) = &self.config.workload else {
            return;
        };
        let _serial = self.node_sync.lock().await;
        let Some((id, specs)) = ({
            let st = self.lock();
            st.clusters
                .get(cluster)
                .filter(|c| {
                    c.endpoint.is_some()
                        && !matches!(c.life.state(), Status::Creating | Status::Failed)
                })
                .map(|c| (c.workload_id.clone(), node_specs(&self.config.region, c)))
        }) else {
            return;
        };
        if let Err(e) = w.set_nodes(&id, &specs).await {
            tracing::warn!(cluster, error = %format!("{e:#}"), "could not update the cluster's Nodes");
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

/// A reconcile failed: the nodegroup goes to its failed state and the update fails.
fn fail_nodegroup(n: &mut Nodegroup, error: &str) {
    let (code, status) = match *n.life.state() {
        Status::Creating => ("NodeCreationFailure", Status::CreateFailed),
        Status::Deleting => ("NodeTerminationFailure", Status::DeleteFailed),
        _ => ("AsgInstanceLaunchFailures", Status::Active),
    };
    n.issues
        .push(json!({"code": code, "message": error, "resourceIds": [n.asg_name]}));
    n.life.set(status);
    n.applied = false;
    if let Some(id) = n.pending.take()
        && let Some(u) = n.updates.iter_mut().find(|u| u.id == id)
    {
        u.status = UpdateStatus::Failed;
        u.errors.push(json!({"errorCode": "NodeCreationFailure", "errorMessage": error, "resourceIds": [n.name]}));
    }
}

/// The instances that count toward the nodegroup's size (shutting-down ones do not).
fn serving(n: &Nodegroup) -> i64 {
    n.instances.iter().filter(|i| !i.shutting_down).count() as i64
}

fn plan(c: &Cluster, n: &Nodegroup) -> Plan {
    let target = if *n.life.state() == Status::Deleting {
        0
    } else {
        usize::try_from(n.scaling.desired).unwrap_or(0)
    };
    let serving = n.instances.iter().filter(|i| !i.shutting_down);
    let (mut keep, mut terminate): (Vec<Instance>, Vec<String>) = if n.replace {
        (Vec::new(), serving.map(|i| i.id.clone()).collect())
    } else {
        (serving.cloned().collect(), Vec::new())
    };
    while keep.len() > target {
        // Scale in from the zone with the most instances, newest first.
        let mut per_zone: BTreeMap<&str, usize> = BTreeMap::new();
        for i in &keep {
            *per_zone.entry(i.az.as_str()).or_default() += 1;
        }
        let busiest = per_zone
            .iter()
            .max_by_key(|(_, n)| **n)
            .map(|(z, _)| z.to_string())
            .unwrap_or_default();
        let Some(pos) = keep.iter().rposition(|i| i.az == busiest) else {
            break;
        };
        terminate.push(keep.remove(pos).id);
    }
    let mut per_subnet: BTreeMap<String, usize> =
        n.subnets.iter().map(|s| (s.clone(), 0)).collect();
    for i in &keep {
        if let Some(count) = per_subnet.get_mut(&i.subnet) {
            *count += 1;
        }
    }
    let mut launch = Vec::new();
    for _ in keep.len()..target {
        let Some(subnet) = n
            .subnets
            .iter()
            .min_by_key(|s| per_subnet.get(*s).copied().unwrap_or(0))
            .cloned()
        else {
            break;
        };
        *per_subnet.entry(subnet.clone()).or_default() += 1;
        launch.push(subnet);
    }
    let taken_names = c
        .nodegroups
        .values()
        .flat_map(|n| n.instances.iter().map(|i| i.private_dns.clone()))
        .collect();
    Plan {
        deleting: *n.life.state() == Status::Deleting,
        terminate,
        launch,
        instance_type: n
            .instance_types
            .first()
            .cloned()
            .unwrap_or_else(|| "t3.medium".into()),
        tags: vec![
            ("eks:cluster-name".into(), c.name.clone()),
            ("eks:nodegroup-name".into(), n.name.clone()),
            (format!("kubernetes.io/cluster/{}", c.name), "owned".into()),
            ("aws:autoscaling:groupName".into(), n.asg_name.clone()),
        ],
        version: n.version.clone(),
        taken_names,
        group: Group {
            name: n.asg_name.clone(),
            exists: n.group_made,
            subnets: n.subnets.clone(),
            max: n.scaling.max,
            held: n.instances.len(),
            tags: vec![
                ("eks:cluster-name".into(), c.name.clone()),
                ("eks:nodegroup-name".into(), n.name.clone()),
                (
                    format!("k8s.io/cluster-autoscaler/{}", c.name),
                    "owned".into(),
                ),
                ("k8s.io/cluster-autoscaler/enabled".into(), "true".into()),
                (format!("kubernetes.io/cluster/{}", c.name), "owned".into()),
            ],
        },
    }
}

/// Makes the nodegroup's Auto Scaling group exist in moto and puts `launched` into it.
async fn fill_group(
    ec2: &super::ec2::Ec2,
    plan: &Plan,
    launched: &[Instance],
) -> Result<(), super::ec2::Ec2Error> {
    let g = &plan.group;
    if !g.exists {
        ec2.create_auto_scaling_group(&g.name, &plan.instance_type, &g.subnets, g.max, &g.tags)
            .await?;
    }
    let ids: Vec<String> = launched.iter().map(|i| i.id.clone()).collect();
    let held = i64::try_from(g.held + ids.len()).unwrap_or(i64::MAX);
    ec2.attach_instances(&g.name, &ids, g.max.max(held)).await
}

/// The Nodes of a cluster: one per instance of every nodegroup.
fn node_specs(region: &str, c: &Cluster) -> Vec<NodeSpec> {
    let mut specs = Vec::new();
    for n in c.nodegroups.values() {
        for i in &n.instances {
            let mut labels = n.labels.clone();
            labels.insert("eks.amazonaws.com/nodegroup".into(), n.name.clone());
            labels.insert(
                "eks.amazonaws.com/capacityType".into(),
                n.capacity_type.clone(),
            );
            labels.insert("topology.kubernetes.io/zone".into(), i.az.clone());
            labels.insert("topology.kubernetes.io/region".into(), region.to_string());
            labels.insert(
                "failure-domain.beta.kubernetes.io/zone".into(),
                i.az.clone(),
            );
            if let Some(t) = n.instance_types.first() {
                labels.insert("node.kubernetes.io/instance-type".into(), t.clone());
            }
            specs.push(NodeSpec {
                name: i.private_dns.clone(),
                provider_id: i.provider_id(),
                labels,
                taints: n
                    .taints
                    .iter()
                    .map(|t| {
                        (
                            t.key.clone(),
                            t.value.clone().unwrap_or_default(),
                            t.kubernetes_effect().to_string(),
                        )
                    })
                    .collect(),
                kubelet_version: Some(catalog::kubelet_version(&i.version)),
            });
        }
    }
    specs
}

/// The zone a subnet is in when no EC2 is there to say: spread by the subnet id.
fn subnet_zone(region: &str, subnet: &str) -> String {
    let sum: u32 = subnet.bytes().map(u32::from).sum();
    let letter = char::from(b'a' + u8::try_from(sum % 3).unwrap_or(0));
    format!("{region}{letter}")
}

fn private_dns(region: &str) -> String {
    let bytes = hex_bytes(2);
    let domain = if region == "us-east-1" {
        "ec2.internal".to_string()
    } else {
        format!("{region}.compute.internal")
    };
    format!("ip-10-0-{}-{}.{domain}", bytes[0], bytes[1].max(4))
}

fn hex_bytes(n: usize) -> Vec<u8> {
    hex::decode(crate::kit::random_hex(n)).unwrap_or_else(|_| vec![0; n])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_names_and_zones_look_like_ec2s() {
        let dns = private_dns("us-west-2");
        assert!(
            dns.starts_with("ip-10-0-") && dns.ends_with(".us-west-2.compute.internal"),
            "{dns}"
        );
        assert!(private_dns("us-east-1").ends_with(".ec2.internal"));
        let z = subnet_zone("us-west-2", "subnet-1");
        assert!(z.starts_with("us-west-2") && z.len() == "us-west-2a".len());
        assert_eq!(z, subnet_zone("us-west-2", "subnet-1"));
    }
}
