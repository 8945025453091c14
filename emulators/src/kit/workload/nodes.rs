//! The Nodes of a workload API server, kept equal to the cloud's instances: created with their
//! provider ID, labels and taints, marked Ready with their kubelet version, and deleted when
//! their instance is gone.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use anyhow::{Context, Result, bail};
use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use serde_json::{Value, json};

use super::{FIELD_MANAGER, NodeSpec, WorkloadServers};

impl WorkloadServers {
    /// Makes the Nodes of `cluster_id` exactly `nodes`: missing ones are created with their
    /// provider ID, labels and taints, existing ones updated (a Node whose provider ID differs is
    /// replaced, as the field is immutable), every listed Node is marked `Ready` with its kubelet
    /// version through the status subresource, and Nodes not listed are deleted.
    ///
    /// # Errors
    /// When the cluster does not run, two specs share a name, or the API server refuses a write.
    pub async fn set_nodes(&self, cluster_id: &str, nodes: &[NodeSpec]) -> Result<()> {
        let (client, version) = self.running_parts(cluster_id)?;
        let mut names = BTreeSet::new();
        for node in nodes {
            if !names.insert(node.name.as_str()) {
                bail!("node {} is listed twice", node.name);
            }
        }
        let api: Api<Node> = Api::all(client);
        let existing: HashMap<String, Node> = api
            .list(&ListParams::default())
            .await
            .context("listing Nodes")?
            .items
            .into_iter()
            .filter_map(|n| n.metadata.name.clone().map(|name| (name, n)))
            .collect();
        let apply = PatchParams::apply(FIELD_MANAGER).force();
        let now = jiff::Timestamp::now()
            .strftime("%Y-%m-%dT%H:%M:%SZ")
            .to_string();

        for spec in nodes {
            let mut previous = existing.get(&spec.name);
            let old_provider_id = previous
                .and_then(|n| n.spec.as_ref())
                .and_then(|s| s.provider_id.as_deref());
            if old_provider_id.is_some_and(|p| p != spec.provider_id) {
                delete_node(&api, &spec.name).await?;
                previous = None;
            }
            api.patch(&spec.name, &apply, &Patch::Apply(node_object(spec)))
                .await
                .with_context(|| format!("applying Node {}", spec.name))?;
            let since = previous
                .and_then(ready_since)
                .unwrap_or_else(|| now.clone());
            let kubelet = spec.kubelet_version.as_deref().unwrap_or(&version);
            api.patch_status(
                &spec.name,
                &apply,
                &Patch::Apply(node_status(spec, kubelet, &now, &since)),
            )
            .await
            .with_context(|| format!("setting the status of Node {}", spec.name))?;
        }
        for name in existing.keys() {
            if !names.contains(name.as_str()) {
                delete_node(&api, name).await?;
            }
        }
        Ok(())
    }
}

fn node_object(spec: &NodeSpec) -> Value {
    let mut labels = BTreeMap::from([
        ("kubernetes.io/hostname".to_string(), spec.name.clone()),
        ("kubernetes.io/os".to_string(), "linux".to_string()),
        ("kubernetes.io/arch".to_string(), "amd64".to_string()),
    ]);
    labels.extend(spec.labels.clone());
    let taints: Vec<Value> = spec
        .taints
        .iter()
        .map(|(key, value, effect)| {
            let mut t = json!({ "key": key, "effect": effect });
            if !value.is_empty() {
                t["value"] = json!(value);
            }
            t
        })
        .collect();
    let mut node = json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": { "name": spec.name, "labels": labels },
        "spec": { "providerID": spec.provider_id },
    });
    if !taints.is_empty() {
        node["spec"]["taints"] = json!(taints);
    }
    node
}

fn node_status(spec: &NodeSpec, kubelet_version: &str, now: &str, ready_since: &str) -> Value {
    let arch = spec
        .labels
        .get("kubernetes.io/arch")
        .map_or("amd64", String::as_str);
    let id = stable_id(&spec.provider_id);
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": { "name": spec.name },
        "status": {
            "conditions": [{
                "type": "Ready",
                "status": "True",
                "reason": "KubeletReady",
                "message": "kubelet is posting ready status (emulated)",
                "lastHeartbeatTime": now,
                "lastTransitionTime": ready_since,
            }],
            "addresses": [{ "type": "Hostname", "address": spec.name }],
            "capacity": { "cpu": "2", "memory": "8Gi", "pods": "110" },
            "allocatable": { "cpu": "2", "memory": "8Gi", "pods": "110" },
            "nodeInfo": {
                "machineID": id,
                "systemUUID": id,
                "bootID": id,
                "kernelVersion": "6.1.0-emulated",
                "osImage": "Emulated Linux",
                "containerRuntimeVersion": "containerd://2.0.0",
                "kubeletVersion": kubelet_version,
                "operatingSystem": "linux",
                "architecture": arch,
            },
        },
    })
}

/// When an existing Node became Ready, to keep `lastTransitionTime` across updates.
fn ready_since(node: &Node) -> Option<String> {
    let conditions = node.status.as_ref()?.conditions.as_ref()?;
    let ready = conditions
        .iter()
        .find(|c| c.type_ == "Ready" && c.status == "True")?;
    let value = serde_json::to_value(ready.last_transition_time.as_ref()?).ok()?;
    value.as_str().map(str::to_string)
}

/// A hex id derived from the provider ID, stable across calls.
fn stable_id(provider_id: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, provider_id.as_bytes());
    hex::encode(&digest.as_ref()[..16])
}

async fn delete_node(api: &Api<Node>, name: &str) -> Result<()> {
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(e) => Err(anyhow::Error::new(e).context(format!("deleting Node {name}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_object_carries_kubelet_labels_unless_overridden_and_omits_empty_taint_values() {
        let spec = NodeSpec {
            name: "ip-10-0-1-23.us-west-2.compute.internal".into(),
            provider_id: "aws:///us-west-2a/i-0abc".into(),
            labels: BTreeMap::from([("kubernetes.io/arch".into(), "arm64".into())]),
            taints: vec![
                ("dedicated".into(), "gpu".into(), "NoSchedule".into()),
                ("spot".into(), String::new(), "PreferNoSchedule".into()),
            ],
            kubelet_version: None,
        };
        let node = node_object(&spec);
        assert_eq!(node["metadata"]["labels"]["kubernetes.io/arch"], "arm64");
        assert_eq!(
            node["metadata"]["labels"]["kubernetes.io/hostname"],
            spec.name.as_str()
        );
        assert_eq!(node["spec"]["providerID"], "aws:///us-west-2a/i-0abc");
        assert_eq!(node["spec"]["taints"][0]["value"], "gpu");
        assert!(node["spec"]["taints"][1].get("value").is_none());
        let status = node_status(
            &spec,
            "v1.33.1",
            "2025-01-01T00:00:00Z",
            "2024-12-31T00:00:00Z",
        );
        assert_eq!(status["status"]["nodeInfo"]["architecture"], "arm64");
        assert_eq!(status["status"]["nodeInfo"]["kubeletVersion"], "v1.33.1");
        assert_eq!(
            status["status"]["conditions"][0]["lastTransitionTime"],
            "2024-12-31T00:00:00Z"
        );
    }
}
