//! The nodegroups' side effects: a reconcile plans under the lock, then launches and terminates
//! instances (in moto when configured) and the Auto Scaling group holding them, and the
//! cluster's Nodes are written to match its instances.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::json;

use crate::eks::catalog;
use crate::eks::state::{Cluster, Instance, Nodegroup, Status, UpdateStatus};
use crate::eks::{Eks, lower_hex};
use crate::kit::Delays;
use crate::kit::workload::NodeSpec;

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
    pub(super) async fn reconcile(&self, cluster: &str, nodegroup: &str) {
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
                let refused = crate::eks::ec2::Ec2Error {
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
    pub(super) async fn sync_nodes(&self, cluster: &str) {
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
    ec2: &crate::eks::ec2::Ec2,
    plan: &Plan,
    launched: &[Instance],
) -> Result<(), crate::eks::ec2::Ec2Error> {
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
