//! The instances' Nodes in the workload cluster: registered once an instance runs (as a kubelet
//! would), kept Ready by a heartbeat, removed once the instance has stopped; and the record of
//! which instances still have a Node, which a stopped instance needs gone before it leaves.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use tokio::time::Instant;

use super::lifecycle::stopped;
use super::{Cloud, InstanceState, NODE_LABEL, State, provider_id};

/// Field manager of the cloud's writes to the workload cluster.
const MANAGER: &str = "toy-cloud";
const HEARTBEAT: Duration = Duration::from_secs(10);

/// A Node the cloud wants registered.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct WantedNode {
    name: String,
    provider_id: String,
    version: String,
    cluster: String,
    pool: String,
    instance: String,
}

/// Node names are DNS subdomains: keep `[a-z0-9.-]`.
fn node_name(namespace: &str, pool: &str, id: &str) -> String {
    format!("toy-{namespace}-{pool}-{id}")
        .to_lowercase()
        .chars()
        .map(|ch| {
            if ch.is_ascii_alphanumeric() || ch == '-' || ch == '.' {
                ch
            } else {
                '-'
            }
        })
        .collect()
}

/// Nodes of RUNNING instances and of TERMINATING ones that have not stopped yet.
pub(super) fn wanted_nodes(state: &State, now: Instant) -> BTreeMap<String, WantedNode> {
    let mut out = BTreeMap::new();
    for (cluster, c) in &state.clusters {
        for (pool, p) in &c.pools {
            for i in &p.instances {
                if i.state == InstanceState::Pending || stopped(i, now) {
                    continue;
                }
                let name = node_name(&c.tags.namespace, pool, &i.id);
                out.insert(
                    name.clone(),
                    WantedNode {
                        name,
                        provider_id: provider_id(&c.tags, pool, &i.id),
                        version: c.version.clone(),
                        cluster: cluster.clone(),
                        pool: pool.clone(),
                        instance: i.id.clone(),
                    },
                );
            }
        }
    }
    out
}

fn now_rfc3339() -> String {
    jiff::Timestamp::now()
        .round(jiff::Unit::Second)
        .unwrap_or_else(|_| jiff::Timestamp::now())
        .to_string()
}

fn ready_status(version: &str, transition: bool) -> Value {
    let now = now_rfc3339();
    let mut ready = json!({
        "type": "Ready",
        "status": "True",
        "reason": "KubeletReady",
        "message": "toy instance is running",
        "lastHeartbeatTime": now,
    });
    if transition {
        ready["lastTransitionTime"] = now.into();
        return json!({"status": {
            "conditions": [ready],
            "nodeInfo": {
                "kubeletVersion": version,
                "kubeProxyVersion": "",
                "containerRuntimeVersion": "toy://1.0",
                "operatingSystem": "linux",
                "architecture": "amd64",
                "osImage": "Toy OS",
                "kernelVersion": "toy",
                "machineID": "",
                "systemUUID": "",
                "bootID": "",
            },
        }});
    }
    json!({"status": {"conditions": [ready]}})
}

async fn register_node(nodes: &Api<Node>, want: &WantedNode) -> Result<()> {
    let node: Node = serde_json::from_value(json!({
        "metadata": {
            "name": want.name,
            "labels": {
                NODE_LABEL: "true",
                "kubernetes.io/hostname": want.name,
                "toy.cluster.x-k8s.io/pool": want.pool,
            },
        },
        "spec": {"providerID": want.provider_id},
    }))?;
    match nodes.create(&PostParams::default(), &node).await {
        Ok(_) => {}
        Err(kube::Error::Api(e)) if e.code == 409 => {}
        Err(e) => return Err(e.into()),
    }
    let params = PatchParams {
        field_manager: Some(MANAGER.into()),
        ..PatchParams::default()
    };
    nodes
        .patch_status(
            &want.name,
            &params,
            &Patch::Strategic(ready_status(&want.version, true)),
        )
        .await?;
    Ok(())
}

/// Node names of stopped instances that still count as having a Node.
pub(super) fn stopped_nodes(state: &State, now: Instant) -> Vec<String> {
    let mut out = Vec::new();
    for c in state.clusters.values() {
        for (pool, p) in &c.pools {
            for i in &p.instances {
                if i.has_node && stopped(i, now) {
                    out.push(node_name(&c.tags.namespace, pool, &i.id));
                }
            }
        }
    }
    out
}

/// Records whether instances have a Node (by Node name).
fn mark_nodes(cloud: &Cloud, names: &BTreeSet<String>, has_node: bool) {
    if names.is_empty() {
        return;
    }
    let mut state = cloud.state();
    for c in state.clusters.values_mut() {
        let namespace = c.tags.namespace.clone();
        for (pool, p) in &mut c.pools {
            for i in &mut p.instances {
                if names.contains(&node_name(&namespace, pool, &i.id)) {
                    i.has_node = has_node;
                }
            }
        }
    }
}

/// Keeps the workload's Nodes equal to the running instances, and their heartbeats fresh.
pub(super) async fn node_loop(cloud: Arc<Cloud>, client: kube::Client) {
    let nodes: Api<Node> = Api::all(client);
    let mut tick = tokio::time::interval(Duration::from_millis(300));
    let mut last_beat = Instant::now();
    let mut registered: BTreeSet<String> = BTreeSet::new();
    loop {
        tick.tick().await;
        let wanted = wanted_nodes(&cloud.state(), Instant::now());
        let existing = match nodes
            .list(&ListParams::default().labels(&format!("{NODE_LABEL}=true")))
            .await
        {
            Ok(list) => list
                .items
                .into_iter()
                .filter_map(|n| n.metadata.name)
                .collect::<BTreeSet<String>>(),
            Err(e) => {
                tracing::warn!(error = %e, "listing workload Nodes");
                continue;
            }
        };
        // Register each instance's Node once (a Node someone else deletes stays deleted).
        let mut added = BTreeSet::new();
        for (name, want) in &wanted {
            if registered.contains(name) {
                continue;
            }
            match register_node(&nodes, want).await {
                Ok(()) => {
                    added.insert(name.clone());
                    tracing::info!(node = %name, provider_id = %want.provider_id, "registered Node");
                }
                Err(e) => tracing::warn!(node = %name, error = %e, "registering Node"),
            }
        }
        mark_nodes(&cloud, &added, true);
        registered.extend(added);
        let mut present = existing.clone();
        for name in existing.difference(&wanted.keys().cloned().collect()) {
            match nodes.delete(name, &DeleteParams::default()).await {
                Ok(_) => {
                    present.remove(name);
                    tracing::info!(node = %name, "removed the Node of a stopped instance");
                }
                Err(kube::Error::Api(e)) if e.code == 404 => {
                    present.remove(name);
                }
                Err(e) => tracing::warn!(node = %name, error = %e, "deleting Node"),
            }
        }
        registered.retain(|n| wanted.contains_key(n));
        // Stopped instances whose Node is gone may now leave the API.
        let gone: BTreeSet<String> = stopped_nodes(&cloud.state(), Instant::now())
            .into_iter()
            .filter(|n| !present.contains(n))
            .collect();
        mark_nodes(&cloud, &gone, false);
        if last_beat.elapsed() >= HEARTBEAT {
            last_beat = Instant::now();
            let params = PatchParams {
                field_manager: Some(MANAGER.into()),
                ..PatchParams::default()
            };
            for want in wanted.values() {
                if let Err(e) = nodes
                    .patch_status(
                        &want.name,
                        &params,
                        &Patch::Strategic(ready_status(&want.version, false)),
                    )
                    .await
                {
                    tracing::debug!(node = %want.name, error = %e, "Node heartbeat");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_names_are_dns_subdomains() {
        assert_eq!(node_name("NS", "p_0", "i-1"), "toy-ns-p-0-i-1");
    }
}
