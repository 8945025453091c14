//! The EKS provider end to end, through real Cluster API core: the real management plane, moto,
//! the EKS emulator with real workload API servers, and the `provider-aws` binary.
//!
//! Each test starts its own local default and drives it the way a user would: YAML from the real
//! `clusterctl generate cluster`, edits of the objects, and nothing else.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::collections::BTreeMap;
use std::time::Duration;

use aws_sdk_eks::types::{UpdateType, VpcConfigRequest};
use demo::env::{ACCESS_KEY_ID, EnvOptions, Environment, REGION, SECRET_ACCESS_KEY};
use demo::progress::{Snapshot, Tracker};
use k8s_openapi::api::core::v1::{Node, Secret};
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams,
};
use serde_json::{Value, json};

fn resource(group: &str, version: &str, kind: &str) -> ApiResource {
    ApiResource::from_gvk(&GroupVersionKind::gvk(group, version, kind))
}

fn api(
    client: &kube::Client,
    ns: &str,
    group: &str,
    version: &str,
    kind: &str,
) -> Api<DynamicObject> {
    Api::namespaced_with(client.clone(), ns, &resource(group, version, kind))
}

fn clusters(c: &kube::Client, ns: &str) -> Api<DynamicObject> {
    api(c, ns, "cluster.x-k8s.io", "v1beta2", "Cluster")
}
fn control_planes(c: &kube::Client, ns: &str) -> Api<DynamicObject> {
    api(
        c,
        ns,
        "controlplane.cluster.x-k8s.io",
        "v1alpha1",
        "EKSControlPlane",
    )
}
fn machine_pools(c: &kube::Client, ns: &str) -> Api<DynamicObject> {
    api(c, ns, "cluster.x-k8s.io", "v1beta2", "MachinePool")
}
fn eks_machine_pools(c: &kube::Client, ns: &str) -> Api<DynamicObject> {
    api(
        c,
        ns,
        "infrastructure.cluster.x-k8s.io",
        "v1alpha1",
        "EKSMachinePool",
    )
}

fn sdk_http() -> aws_sdk_eks::config::SharedHttpClient {
    aws_smithy_http_client::Builder::new()
        .tls_provider(aws_smithy_http_client::tls::Provider::Rustls(
            aws_smithy_http_client::tls::rustls_provider::CryptoMode::Ring,
        ))
        .build_https()
}

fn eks_sdk(env: &Environment) -> aws_sdk_eks::Client {
    env.eks().unwrap().eks_client()
}

fn ec2_sdk(env: &Environment) -> aws_sdk_ec2::Client {
    aws_sdk_ec2::Client::from_conf(
        aws_sdk_ec2::config::Builder::new()
            .behavior_version_latest()
            .endpoint_url(env.eks().unwrap().moto.url())
            .region(aws_sdk_ec2::config::Region::new(REGION))
            .credentials_provider(aws_sdk_ec2::config::Credentials::new(
                ACCESS_KEY_ID,
                SECRET_ACCESS_KEY,
                None,
                None,
                "test",
            ))
            .http_client(sdk_http())
            .build(),
    )
}

async fn namespace(client: &kube::Client, name: &str) {
    test_support::create_namespace(client, name).await;
}

async fn until(
    env: &mut Environment,
    ns: &str,
    what: &str,
    timeout_s: u64,
    done: impl Fn(&Snapshot) -> bool,
) -> Snapshot {
    let client = env.plane.client().await.unwrap();
    let mut tracker = Tracker::default();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(timeout_s);
    loop {
        if let Err(e) = env.ensure_provider_running() {
            panic!("{e:#}");
        }
        let s = tracker.poll(&client, ns).await.unwrap();
        if done(&s) {
            return s;
        }
        if tokio::time::Instant::now() > deadline {
            let log = testbed::process::tail(&env.provider_log(), 60);
            panic!("timed out waiting for {what}; last snapshot {s:?}\nprovider log:\n{log}");
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

async fn workload_client(client: &kube::Client, ns: &str, cluster: &str) -> kube::Client {
    let secret = Api::<Secret>::namespaced(client.clone(), ns)
        .get(&format!("{cluster}-kubeconfig"))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kubeconfig");
    std::fs::write(&path, &secret.data.unwrap()["value"].0).unwrap();
    testbed::client_from(&path).await.unwrap()
}

/// The provider IDs of the Nodes in the workload cluster, sorted.
async fn node_provider_ids(workload: &kube::Client) -> Vec<String> {
    let mut ids: Vec<String> = Api::<Node>::all(workload.clone())
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|n| n.spec.and_then(|s| s.provider_id))
        .collect();
    ids.sort();
    ids
}

fn strings(v: &Value) -> Vec<String> {
    let mut out: Vec<String> = v
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect();
    out.sort();
    out
}

/// A second MachinePool + EKSMachinePool for the cluster.
fn second_pool(cluster: &str, version: &str, replicas: u32, scaling: Option<(u32, u32)>) -> String {
    let scaling = scaling
        .map(|(min, max)| format!("\n  scaling:\n    minReplicas: {min}\n    maxReplicas: {max}"))
        .unwrap_or_default();
    format!(
        r#"apiVersion: cluster.x-k8s.io/v1beta2
kind: MachinePool
metadata:
  name: {cluster}-pool-1
spec:
  clusterName: {cluster}
  replicas: {replicas}
  template:
    spec:
      clusterName: {cluster}
      version: {version}
      bootstrap:
        dataSecretName: ""
      infrastructureRef:
        apiGroup: infrastructure.cluster.x-k8s.io
        kind: EKSMachinePool
        name: {cluster}-pool-1
---
apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
kind: EKSMachinePool
metadata:
  name: {cluster}-pool-1
spec:
  machineType: m5.large
  labels:
    pool: one
  taints:
  - key: dedicated
    value: batch
    effect: NoSchedule{scaling}
  eks:
    nodeRoleARN: arn:aws:iam::123456789012:role/eks-nodes
"#
    )
}

#[tokio::test]
async fn a_cluster_from_the_template_is_provisioned_upgraded_stepwise_scaled_paused_and_deleted_in_order()
 {
    let mut env = Environment::start(EnvOptions::default()).await.unwrap();
    let client = env.plane.client().await.unwrap();
    let ns = "e2e";
    namespace(&client, ns).await;

    // Created from the provider's template with the real clusterctl, plus a second, autoscaled pool.
    let yaml = env
        .generate_cluster("alpha", ns, "v1.31.0", 2)
        .await
        .unwrap();
    env.apply_yaml(&yaml, ns).await.unwrap();
    env.apply_yaml(&second_pool("alpha", "v1.31.0", 1, Some((1, 4))), ns)
        .await
        .unwrap();
    until(
        &mut env,
        ns,
        "Provisioned with both pools' nodes",
        300,
        Snapshot::settled,
    )
    .await;

    // The Cluster's endpoint is the control plane's; the kubeconfig reaches the workload API
    // server; each pool's providerIDList matches its Nodes and core's nodeRefs.
    let cluster = clusters(&client, ns).get("alpha").await.unwrap();
    let cp = control_planes(&client, ns).get("alpha").await.unwrap();
    assert_eq!(
        cluster.data["spec"]["controlPlaneEndpoint"],
        cp.data["spec"]["controlPlaneEndpoint"]
    );
    assert_eq!(cp.data["status"]["externalManagedControlPlane"], true);
    let workload = workload_client(&client, ns, "alpha").await;
    let mut all_ids = Vec::new();
    for pool in ["alpha-pool-0", "alpha-pool-1"] {
        let infra = eks_machine_pools(&client, ns).get(pool).await.unwrap();
        let mp = machine_pools(&client, ns).get(pool).await.unwrap();
        let ids = strings(&infra.data["spec"]["providerIDList"]);
        assert_eq!(
            ids.len() as i64,
            mp.data["spec"]["replicas"].as_i64().unwrap(),
            "{pool}"
        );
        assert_eq!(infra.data["status"]["ready"], true);
        assert_eq!(infra.data["status"]["initialization"]["provisioned"], true);
        assert_eq!(
            mp.data["status"]["nodeRefs"].as_array().map(Vec::len),
            Some(ids.len()),
            "{pool} nodeRefs"
        );
        all_ids.extend(ids);
    }
    all_ids.sort();
    assert_eq!(node_provider_ids(&workload).await, all_ids);

    // Pause: a spec change makes no cloud write and the Paused condition turns True.
    clusters(&client, ns)
        .patch(
            "alpha",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"paused": true}})),
        )
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    env.eks().unwrap().server.kit().calls.reset();
    machine_pools(&client, ns)
        .patch(
            "alpha-pool-0",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 3}})),
        )
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(6)).await;
    let while_paused: u64 = env
        .eks()
        .unwrap()
        .server
        .kit()
        .calls
        .snapshot()
        .values()
        .flat_map(|m| m.values())
        .sum();
    assert_eq!(
        while_paused,
        0,
        "EKS calls while paused: {:?}",
        env.eks().unwrap().server.kit().calls.snapshot()
    );
    let paused = eks_machine_pools(&client, ns)
        .get("alpha-pool-0")
        .await
        .unwrap();
    let paused_cond = paused.data["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Paused")
        .cloned();
    assert_eq!(
        paused_cond.map(|c| c["status"].clone()),
        Some(json!("True"))
    );
    // Unpausing applies the pending change.
    clusters(&client, ns)
        .patch(
            "alpha",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"paused": false}})),
        )
        .await
        .unwrap();
    until(&mut env, ns, "the unpaused scale-up to 3", 180, |s| {
        s.settled() && s.pools.get("alpha-pool-0").map(|p| p.0) == Some(3)
    })
    .await;

    // The autoscaler owns pool-1: an outside change of its size is written back to the MachinePool.
    let eks = eks_sdk(&env);
    let ng_name = eks_machine_pools(&client, ns)
        .get("alpha-pool-1")
        .await
        .unwrap()
        .metadata
        .name
        .unwrap();
    let nodegroups = eks
        .list_nodegroups()
        .cluster_name(
            cp.data["status"]["cloudID"]
                .as_str()
                .and_then(|a| a.rsplit('/').next())
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let ng = nodegroups
        .nodegroups()
        .iter()
        .find(|n| n.contains(&ng_name) || n.ends_with("pool-1"))
        .cloned()
        .expect("pool-1's node group");
    let eks_name = cp.data["status"]["cloudID"]
        .as_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap()
        .to_string();
    eks.update_nodegroup_config()
        .cluster_name(&eks_name)
        .nodegroup_name(&ng)
        .scaling_config(
            aws_sdk_eks::types::NodegroupScalingConfig::builder()
                .min_size(1)
                .max_size(4)
                .desired_size(2)
                .build(),
        )
        .send()
        .await
        .unwrap();
    until(
        &mut env,
        ns,
        "the outside scale change written back",
        180,
        |s| s.settled() && s.pools.get("alpha-pool-1").map(|p| p.0) == Some(2),
    )
    .await;
    let mp1 = machine_pools(&client, ns)
        .get("alpha-pool-1")
        .await
        .unwrap();
    assert!(
        mp1.metadata
            .annotations
            .unwrap_or_default()
            .contains_key("cluster.x-k8s.io/replicas-managed-by")
    );

    // Upgrade across two minors: the control plane steps 1.31 → 1.32 → 1.33, then the pools.
    control_planes(&client, ns)
        .patch(
            "alpha",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"version": "v1.33.0"}})),
        )
        .await
        .unwrap();
    for pool in ["alpha-pool-0", "alpha-pool-1"] {
        machine_pools(&client, ns)
            .patch(
                pool,
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"template": {"spec": {"version": "v1.33.0"}}}})),
            )
            .await
            .unwrap();
    }
    until(&mut env, ns, "the upgrade to 1.33", 400, |s| {
        s.upgraded_to("v1.33.0")
    })
    .await;
    let updates = eks.list_updates().name(&eks_name).send().await.unwrap();
    let mut versions = Vec::new();
    for id in updates.update_ids() {
        let u = eks
            .describe_update()
            .name(&eks_name)
            .update_id(id)
            .send()
            .await
            .unwrap()
            .update
            .unwrap();
        if u.r#type() == Some(&UpdateType::VersionUpdate) {
            let v = u
                .params()
                .iter()
                .find(|p| p.r#type().map(|t| t.as_str()) == Some("Version"))
                .and_then(|p| p.value())
                .unwrap_or_default()
                .to_string();
            versions.push((u.created_at().map(|t| t.secs()).unwrap_or(0), v));
        }
    }
    versions.sort();
    let versions: Vec<String> = versions.into_iter().map(|(_, v)| v).collect();
    assert_eq!(
        versions,
        vec!["1.32".to_string(), "1.33".to_string()],
        "control plane version steps"
    );
    let ng0 = eks
        .describe_nodegroup()
        .cluster_name(&eks_name)
        .nodegroup_name(&ng)
        .send()
        .await
        .unwrap();
    assert_eq!(ng0.nodegroup().unwrap().version(), Some("1.33"));

    // Delete: pools first, then the control plane, then the network; nothing left in the emulator or moto.
    clusters(&client, ns)
        .delete("alpha", &DeleteParams::default())
        .await
        .unwrap();
    until(&mut env, ns, "every object gone", 400, |s| !s.any_left).await;
    assert!(
        eks.list_clusters()
            .send()
            .await
            .unwrap()
            .clusters()
            .is_empty(),
        "EKS clusters left"
    );
    let ec2 = ec2_sdk(&env);
    let running = ec2
        .describe_instances()
        .filters(
            aws_sdk_ec2::types::Filter::builder()
                .name("instance-state-name")
                .values("pending")
                .values("running")
                .build(),
        )
        .send()
        .await
        .unwrap();
    assert!(
        running
            .reservations()
            .iter()
            .all(|r| r.instances().is_empty()),
        "instances left in moto"
    );
    let vpcs = ec2
        .describe_vpcs()
        .filters(
            aws_sdk_ec2::types::Filter::builder()
                .name("tag-key")
                .values("capi-managed-eks")
                .build(),
        )
        .send()
        .await
        .unwrap();
    assert!(vpcs.vpcs().is_empty(), "our VPC left in moto");
    env.stop().await;
}

#[tokio::test]
async fn a_cluster_with_only_a_control_plane_on_a_brought_network_and_a_name_taken_by_someone_else()
{
    let mut env = Environment::start(EnvOptions::default()).await.unwrap();
    let client = env.plane.client().await.unwrap();
    let ns = "byo";
    namespace(&client, ns).await;

    // A network the user owns, in moto.
    let ec2 = ec2_sdk(&env);
    let vpc = ec2
        .create_vpc()
        .cidr_block("10.20.0.0/16")
        .send()
        .await
        .unwrap()
        .vpc
        .unwrap()
        .vpc_id
        .unwrap();
    let mut subnets = Vec::new();
    for (cidr, az) in [
        ("10.20.1.0/24", "us-west-2a"),
        ("10.20.2.0/24", "us-west-2b"),
    ] {
        let s = ec2
            .create_subnet()
            .vpc_id(&vpc)
            .cidr_block(cidr)
            .availability_zone(az)
            .send()
            .await
            .unwrap();
        subnets.push(s.subnet.unwrap().subnet_id.unwrap());
    }

    // Someone else's EKS cluster under the name ours would get.
    let eks = eks_sdk(&env);
    eks.create_cluster()
        .name("taken")
        .role_arn("arn:aws:iam::123456789012:role/eks")
        .resources_vpc_config(
            VpcConfigRequest::builder()
                .set_subnet_ids(Some(subnets.clone()))
                .build(),
        )
        .tags("team", "someone-else")
        .send()
        .await
        .unwrap();

    let objects = |name: &str, cloud_name: &str| {
        format!(
            r#"apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata:
  name: {name}
spec:
  controlPlaneRef:
    apiGroup: controlplane.cluster.x-k8s.io
    kind: EKSControlPlane
    name: {name}
---
apiVersion: controlplane.cluster.x-k8s.io/v1alpha1
kind: EKSControlPlane
metadata:
  name: {name}
spec:
  version: v1.31.0
  cloudName: {cloud_name}
  infrastructure:
    region: {REGION}
    network:
      id: {vpc}
      subnetIDs: [{}, {}]
  eks:
    roleARN: arn:aws:iam::123456789012:role/eks-cluster
"#,
            subnets[0], subnets[1]
        )
    };
    env.apply_yaml(&objects("mine", "mine-on-byo"), ns)
        .await
        .unwrap();
    env.apply_yaml(&objects("squatter", "taken"), ns)
        .await
        .unwrap();

    // Ours reaches Provisioned with only a controlPlaneRef.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(240);
    loop {
        let c = clusters(&client, ns).get("mine").await.unwrap();
        if c.data["status"]["phase"] == "Provisioned"
            && c.data["status"]["initialization"]["controlPlaneInitialized"] == true
        {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "mine not Provisioned: {:?}",
            c.data["status"]
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }

    // The other gets NameConflict and the cloud cluster is not touched.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    loop {
        let cp = control_planes(&client, ns).get("squatter").await.unwrap();
        let ready = cp.data["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["type"] == "Ready")
            .cloned();
        if ready.as_ref().map(|r| r["reason"].clone()) == Some(json!("NameConflict")) {
            assert_eq!(ready.unwrap()["status"], "False");
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no NameConflict: {:?}",
            cp.data["status"]
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let theirs = eks
        .describe_cluster()
        .name("taken")
        .send()
        .await
        .unwrap()
        .cluster
        .unwrap();
    let tags: BTreeMap<String, String> = theirs
        .tags()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .collect();
    assert_eq!(tags.get("team").map(String::as_str), Some("someone-else"));
    assert!(
        !tags.keys().any(|k| k.starts_with("capi-managed")),
        "their cluster was tagged: {tags:?}"
    );

    // Deleting our objects deletes our EKS cluster and leaves theirs and the user's network alone.
    for name in ["mine", "squatter"] {
        clusters(&client, ns)
            .delete(name, &DeleteParams::default())
            .await
            .unwrap();
    }
    until(&mut env, ns, "both Clusters gone", 300, |s| !s.any_left).await;
    let left: Vec<String> = eks
        .list_clusters()
        .send()
        .await
        .unwrap()
        .clusters()
        .to_vec();
    assert_eq!(left, vec!["taken".to_string()]);
    assert_eq!(
        ec2.describe_subnets()
            .subnet_ids(&subnets[0])
            .send()
            .await
            .unwrap()
            .subnets()
            .len(),
        1,
        "user's subnet deleted"
    );
    env.stop().await;
}
