//! Every cloud from one management plane: an EKS, a GKE, an AKS and an OKE cluster made from the
//! same template shape (each provider's default flavor: a created network, the control plane, one pool
//! of two) in one bed, and their Cluster API objects compared field by field with EKS's. The
//! shared contract shows as the same condition types, reasons and message style, the same status
//! fields leaf by leaf, the same Secrets; they differ only in values and inside the cloud blocks
//! (`status.eks`, `status.gke`, …), with no exception. Then all four are deleted with
//! `deletionPolicy: Orphan`, and each cloud keeps what they owned, untagged.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use demo::env::{Cloud, EnvOptions, Environment};
use demo::progress::Tracker;
use k8s_openapi::api::core::v1::{Namespace, Node, Secret};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, ListParams, PostParams};
use serde_json::{Value, json};

const NS: &str = "two-clouds";

fn api(client: &kube::Client, group: &str, version: &str, kind: &str) -> Api<DynamicObject> {
    Api::namespaced_with(
        client.clone(),
        NS,
        &ApiResource::from_gvk(&GroupVersionKind::gvk(group, version, kind)),
    )
}

async fn get(client: &kube::Client, group: &str, version: &str, kind: &str, name: &str) -> Value {
    let obj = api(client, group, version, kind).get(name).await.unwrap();
    serde_json::to_value(obj).unwrap()
}

/// `(type, status, reason)` of every condition, and the messages.
fn conditions(obj: &Value) -> (BTreeSet<(String, String, String)>, Vec<String>) {
    let mut set = BTreeSet::new();
    let mut messages = Vec::new();
    for c in obj["status"]["conditions"].as_array().into_iter().flatten() {
        let s = |k: &str| c[k].as_str().unwrap_or_default().to_string();
        set.insert((s("type"), s("status"), s("reason")));
        messages.push(s("message"));
    }
    (set, messages)
}

/// Every leaf path of `status` (an array's items as `[]`), outside the cloud's own block
/// (`status.eks`, `status.gke`, …) and the conditions (compared on their own).
fn status_paths(obj: &Value, block: &str) -> BTreeSet<String> {
    fn walk(value: &Value, path: String, out: &mut BTreeSet<String>) {
        match value {
            Value::Object(map) if !map.is_empty() => {
                for (k, v) in map {
                    walk(v, format!("{path}.{k}"), out);
                }
            }
            Value::Array(items) if !items.is_empty() => {
                for v in items {
                    walk(v, format!("{path}[]"), out);
                }
            }
            _ => {
                out.insert(path);
            }
        }
    }
    let mut out = BTreeSet::new();
    for (k, v) in obj["status"].as_object().into_iter().flatten() {
        if k != block && k != "conditions" {
            walk(v, format!("status.{k}"), &mut out);
        }
    }
    out
}

fn shape_of_secret(s: &Secret) -> Value {
    json!({
        "type": s.type_,
        "labels": s.metadata.labels.as_ref().map(|l| l.keys().cloned().collect::<Vec<_>>()),
        "owner": s.metadata.owner_references.as_ref().map(|o| o.iter().map(|r| (r.kind.ends_with("ControlPlane"), r.controller)).collect::<Vec<_>>()),
        "data": s.data.as_ref().map(|d| d.keys().cloned().collect::<Vec<_>>()),
    })
}

/// The user kubeconfig's contexts (without the cluster's name) and the current one.
fn user_contexts(s: &Secret, cluster: &str) -> (Vec<String>, String) {
    let config = contract::kubeconfig::kubeconfig_from_secret(s).unwrap();
    let yaml: Value = serde_json::to_value(&config).unwrap();
    let strip = |n: &str| n.trim_start_matches(cluster).to_string();
    let contexts = yaml["contexts"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| strip(c["name"].as_str().unwrap_or_default()))
        .collect();
    (
        contexts,
        strip(yaml["current-context"].as_str().unwrap_or_default()),
    )
}

/// The clouds compared, EKS first: each other is held to EKS's shape.
const CLOUDS: [Cloud; 4] = [Cloud::Eks, Cloud::Gke, Cloud::Aks, Cloud::Oke];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eks_gke_aks_and_oke_clusters_from_the_same_template_shape_look_the_same_to_cluster_api() {
    let mut env = Environment::start(EnvOptions {
        clouds: CLOUDS.to_vec(),
        ..EnvOptions::default()
    })
    .await
    .unwrap();
    let client = env.plane.client().await.unwrap();
    Api::<Namespace>::all(client.clone())
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": NS}})).unwrap(),
        )
        .await
        .unwrap();
    let names: Vec<(Cloud, String)> = CLOUDS
        .iter()
        .map(|c| {
            (
                *c,
                format!("shape-{}", c.kind_prefix().to_ascii_lowercase()),
            )
        })
        .collect();
    let names: Vec<(Cloud, &str)> = names.iter().map(|(c, n)| (*c, n.as_str())).collect();
    let others: Vec<&str> = CLOUDS[1..].iter().map(|c| c.kind_prefix()).collect();
    for &(cloud, name) in &names {
        let yaml = env.generate(cloud, name, NS, "v1.31.0", 2).await.unwrap();
        env.apply_yaml(&yaml, NS).await.unwrap();
    }
    let mut tracker = Tracker::for_clouds(&CLOUDS.map(Cloud::kind_prefix)).silent();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(400);
    loop {
        if let Err(e) = env.ensure_provider_running() {
            panic!("{e:#}");
        }
        let snapshot = tracker.poll(&client, NS).await.unwrap();
        if snapshot.settled()
            && snapshot.cluster_phases.len() == CLOUDS.len()
            && snapshot.pools.len() == CLOUDS.len()
        {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the clusters were not settled in time: {snapshot:?}{}",
            CLOUDS
                .iter()
                .map(|c| format!(
                    "\n--- {}\n{}",
                    c.binary(),
                    testbed::process::tail(&env.log_of(*c), 30)
                ))
                .collect::<String>()
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    // Let the kernel's last writes land (the pools' provider IDs, the kubeconfig Secrets).
    tokio::time::sleep(Duration::from_secs(3)).await;

    let infra = "infrastructure.cluster.x-k8s.io";
    let cp = "controlplane.cluster.x-k8s.io";
    let core = "cluster.x-k8s.io";
    let mut by_cloud: BTreeMap<&str, BTreeMap<&str, Value>> = BTreeMap::new();
    for &(cloud, name) in &names {
        let prefix = cloud.kind_prefix();
        let mut objects = BTreeMap::new();
        objects.insert(
            "Cluster",
            get(&client, core, "v1beta2", "Cluster", name).await,
        );
        objects.insert(
            "MachinePool",
            get(
                &client,
                core,
                "v1beta2",
                "MachinePool",
                &format!("{name}-pool-0"),
            )
            .await,
        );
        objects.insert(
            "InfraCluster",
            get(
                &client,
                infra,
                "v1alpha1",
                &format!("{prefix}Cluster"),
                name,
            )
            .await,
        );
        objects.insert(
            "ControlPlane",
            get(
                &client,
                cp,
                "v1alpha1",
                &format!("{prefix}ControlPlane"),
                name,
            )
            .await,
        );
        objects.insert(
            "InfraMachinePool",
            get(
                &client,
                infra,
                "v1alpha1",
                &format!("{prefix}MachinePool"),
                &format!("{name}-pool-0"),
            )
            .await,
        );
        by_cloud.insert(prefix, objects);
    }
    let eks = &by_cloud["EKS"];
    let mut differences = Vec::new();
    for &other in &others {
        let theirs = &by_cloud[other];
        // The same condition types, statuses and reasons on every object, core's included;
        // messages in the same style (a sentence, capitalised, never empty).
        for role in [
            "Cluster",
            "MachinePool",
            "InfraCluster",
            "ControlPlane",
            "InfraMachinePool",
        ] {
            let (a, a_messages) = conditions(&eks[role]);
            let (b, b_messages) = conditions(&theirs[role]);
            if a != b {
                differences.push(format!("{role} conditions: EKS {a:?} vs {other} {b:?}"));
            }
            // Core writes its own messages; ours are sentences.
            if ["InfraCluster", "ControlPlane", "InfraMachinePool"].contains(&role) {
                for m in a_messages.iter().chain(&b_messages) {
                    if !m.is_empty() && !m.starts_with(|c: char| c.is_uppercase()) {
                        differences.push(format!(
                            "{role}: a condition message not written as a sentence: {m:?}"
                        ));
                    }
                }
            }
            // The same status fields, leaf by leaf, outside each cloud's own block.
            let a = status_paths(&eks[role], "eks");
            let b = status_paths(&theirs[role], &other.to_lowercase());
            for path in a.symmetric_difference(&b) {
                let has = if a.contains(path) { "EKS" } else { other };
                differences.push(format!("{role}: only {has} has {path}"));
            }
            // A message never changes a name's case ("Demo-demo-eks runs …").
            for m in a_messages.iter().chain(&b_messages) {
                for &(_, name) in &names {
                    let mut capitalised = name.to_string();
                    capitalised[..1].make_ascii_uppercase();
                    if m.contains(&capitalised) {
                        differences.push(format!("{role}: {m:?} changes the case of {name}"));
                    }
                }
            }
        }
        for (role, field) in [
            ("InfraCluster", "/status/ready"),
            ("InfraCluster", "/status/initialization"),
            ("ControlPlane", "/status/initialized"),
            ("ControlPlane", "/status/ready"),
            ("ControlPlane", "/status/externalManagedControlPlane"),
            ("ControlPlane", "/status/initialization"),
            ("InfraMachinePool", "/status/ready"),
            ("InfraMachinePool", "/status/replicas"),
            ("InfraMachinePool", "/status/initialization"),
            ("MachinePool", "/status/phase"),
            ("MachinePool", "/status/replicas"),
            ("Cluster", "/status/phase"),
            ("Cluster", "/status/initialization"),
        ] {
            let (a, b) = (eks[role].pointer(field), theirs[role].pointer(field));
            if a != b || a.is_none() {
                differences.push(format!("{role} {field}: EKS {a:?} vs {other} {b:?}"));
            }
        }
    }
    // The version, to the minor; the endpoint published the same way.
    for cloud in by_cloud.values() {
        let version = cloud["ControlPlane"]["status"]["version"]
            .as_str()
            .unwrap_or_default();
        if !version.starts_with("v1.31") {
            differences.push(format!("control plane version {version:?}"));
        }
        let ids = cloud["InfraMachinePool"]["spec"]["providerIDList"]
            .as_array()
            .map_or(0, Vec::len);
        if ids != 2 {
            differences.push(format!("providerIDList of {ids} entries"));
        }
        let endpoint = &cloud["ControlPlane"]["spec"]["controlPlaneEndpoint"];
        let published = cloud["ControlPlane"]["status"]["endpoints"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|e| e["name"] == "public")
            .cloned();
        if published.as_ref().map(|p| (&p["host"], &p["port"]))
            != Some((&endpoint["host"], &endpoint["port"]))
        {
            differences.push(format!(
                "controlPlaneEndpoint {endpoint} is not the public endpoint {published:?}"
            ));
        }
        if cloud["Cluster"]["spec"]["controlPlaneEndpoint"] != *endpoint {
            differences
                .push("Cluster.spec.controlPlaneEndpoint differs from the control plane's".into());
        }
    }

    // The same Secrets: shape, and the user kubeconfig's contexts per endpoint name.
    let secrets: Api<Secret> = Api::namespaced(client.clone(), NS);
    let mut shapes = Vec::new();
    for &(cloud, name) in &names {
        let contract_secret = secrets.get(&format!("{name}-kubeconfig")).await.unwrap();
        let user = secrets
            .get(&format!("{name}-user-kubeconfig"))
            .await
            .unwrap();
        let (contexts, current) = user_contexts(&user, name);
        shapes.push((
            shape_of_secret(&contract_secret),
            shape_of_secret(&user),
            current,
        ));
        assert!(
            contexts.contains(&"-public".to_string()),
            "{name}: {contexts:?}"
        );
        // The contract Secret reaches its cluster: two Ready nodes with the cloud's provider IDs.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kubeconfig");
        std::fs::write(&path, &contract_secret.data.as_ref().unwrap()["value"].0).unwrap();
        let workload = testbed::client_from(&path).await.unwrap();
        let nodes = Api::<Node>::all(workload)
            .list(&ListParams::default())
            .await
            .unwrap();
        let provider_ids: Vec<String> = nodes
            .items
            .iter()
            .filter_map(|n| n.spec.as_ref()?.provider_id.clone())
            .collect();
        let scheme = match cloud {
            Cloud::Eks => "aws:///",
            Cloud::Gke => "gce://",
            Cloud::Aks => "azure:///",
            // OKE's cloud controller writes the instance's OCID as it is.
            Cloud::Oke => "ocid1.instance.",
        };
        // The pool's two nodes are there (AKS adds its System pool's own).
        let pool_ids: Vec<String> =
            by_cloud[cloud.kind_prefix()]["InfraMachinePool"]["spec"]["providerIDList"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(String::from))
                .collect();
        assert!(
            pool_ids.len() == 2
                && pool_ids.iter().all(|p| provider_ids.contains(p))
                && provider_ids.iter().all(|p| p.starts_with(scheme)),
            "{name}: nodes {provider_ids:?}, the pool's {pool_ids:?}"
        );
    }
    for (i, other) in others.iter().enumerate() {
        if shapes[0] != shapes[i + 1] {
            differences.push(format!(
                "Secrets: EKS {:?} vs {other} {:?}",
                shapes[0],
                shapes[i + 1]
            ));
        }
    }
    assert!(
        differences.is_empty(),
        "clusters of the same shape differ beyond their cloud blocks:\n{}",
        differences.join("\n")
    );
    every_cloud_leaves_a_cluster_running_untagged_when_told_to(&env, &client, &names).await;
    env.stop().await;
}

/// What the cloud of `cloud` holds, from its emulator.
async fn inventory(env: &Environment, cloud: Cloud) -> Vec<emulators::kit::InventoryItem> {
    match cloud {
        Cloud::Eks => env
            .eks()
            .unwrap()
            .server
            .service()
            .inventory()
            .await
            .unwrap(),
        Cloud::Gke => env.gke().unwrap().server.service().inventory(),
        Cloud::Aks => env.aks().unwrap().server.service().inventory(),
        Cloud::Oke => env.oke().unwrap().server.service().inventory(),
    }
}

/// `spec.deletionPolicy: Orphan` on every provider object of the four clusters, then the
/// Clusters deleted: every cloud resource each owned is still there, and none carries its
/// ownership tag any more. Two kinds of marks stay by design: machines the cloud launched for a
/// pool (tagged by the cloud, not the provider), and GKE's Compute network resources (their
/// description, where GKE keeps the mark, cannot change).
async fn every_cloud_leaves_a_cluster_running_untagged_when_told_to(
    env: &Environment,
    client: &kube::Client,
    names: &[(Cloud, &str)],
) {
    let mut owned = Vec::new();
    for &(cloud, name) in names {
        let prefix = cloud.kind_prefix();
        for (group, kind) in [
            (
                "infrastructure.cluster.x-k8s.io",
                format!("{prefix}Cluster"),
            ),
            (
                "controlplane.cluster.x-k8s.io",
                format!("{prefix}ControlPlane"),
            ),
            (
                "infrastructure.cluster.x-k8s.io",
                format!("{prefix}MachinePool"),
            ),
        ] {
            let objects = api(client, group, "v1alpha1", &kind);
            let orphan = json!({"spec": {"deletionPolicy": "Orphan"}});
            for o in objects.list(&ListParams::default()).await.unwrap() {
                objects
                    .patch(
                        &o.metadata.name.unwrap_or_default(),
                        &kube::api::PatchParams::default(),
                        &kube::api::Patch::Merge(&orphan),
                    )
                    .await
                    .unwrap();
            }
        }
        let items = inventory(env, cloud).await;
        let tag = format!("{NS}_{name}");
        owned.push((
            cloud,
            tag.clone(),
            items
                .into_iter()
                .filter(|i| i.owner.as_deref() == Some(tag.as_str()))
                .collect::<Vec<_>>(),
        ));
    }
    let clusters = api(client, "cluster.x-k8s.io", "v1beta2", "Cluster");
    for &(_, name) in names {
        clusters
            .delete(name, &kube::api::DeleteParams::default())
            .await
            .unwrap();
    }
    test_support::eventually(
        "every Cluster to be gone",
        Duration::from_secs(300),
        || async {
            let left = clusters.list(&ListParams::default()).await.ok()?.items;
            left.is_empty().then_some(())
        },
    )
    .await;
    let mut problems = Vec::new();
    for (cloud, tag, before) in owned {
        assert!(!before.is_empty(), "{cloud:?} owned nothing before");
        let after = inventory(env, cloud).await;
        for item in &before {
            let Some(now) = after.iter().find(|i| i.id == item.id) else {
                problems.push(format!("{cloud:?}: {} {} is gone", item.kind, item.id));
                continue;
            };
            let machine = ["instance", "scaleset", "virtualmachine"]
                .iter()
                .any(|w| now.kind.to_ascii_lowercase().contains(w));
            let kept_by_gke = cloud == Cloud::Gke && now.kind.starts_with("compute:");
            if now.owner.as_deref() == Some(tag.as_str()) && !machine && !kept_by_gke {
                problems.push(format!(
                    "{cloud:?}: {} {} still carries {tag}",
                    now.kind, now.id
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
