//! A Cluster made by the real CAPA (v2.13.0, built from its Go module, unpatched) on the EKS
//! emulator and moto is moved to ours with `kubectl managed migrate`, as a user would run it,
//! and proven from the cloud's side: the same cluster and node group (ARN, creation time), no
//! create or delete call while moving, the workload API answering through the Cluster's
//! kubeconfig Secret the whole time, and our provider then upgrading, scaling and deleting it.
//! A second Cluster's move is killed half-way, resumed, and rolled back: it is CAPA's again, and
//! CAPA manages it. Our provider is killed while it adopts: nothing is done twice.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Output;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use demo::env::{Cloud, EksProvider, EnvOptions, Environment, REGION};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use serde_json::{Value, json};
use support::{condition, eventually};
use tokio::io::AsyncBufReadExt;

const NS: &str = "migrate";
const VERSION: &str = "v1.31";

fn api(client: &kube::Client, group: &str, version: &str, kind: &str) -> Api<DynamicObject> {
    support::api(client, NS, group, version, kind)
}

fn clusters(c: &kube::Client) -> Api<DynamicObject> {
    api(c, "cluster.x-k8s.io", "v1beta2", "Cluster")
}
fn machine_pools(c: &kube::Client) -> Api<DynamicObject> {
    api(c, "cluster.x-k8s.io", "v1beta2", "MachinePool")
}
fn capa_control_planes(c: &kube::Client) -> Api<DynamicObject> {
    api(
        c,
        "controlplane.cluster.x-k8s.io",
        "v1beta2",
        "AWSManagedControlPlane",
    )
}
fn capa_pools(c: &kube::Client) -> Api<DynamicObject> {
    api(
        c,
        "infrastructure.cluster.x-k8s.io",
        "v1beta2",
        "AWSManagedMachinePool",
    )
}
fn our_control_planes(c: &kube::Client) -> Api<DynamicObject> {
    api(
        c,
        "controlplane.cluster.x-k8s.io",
        "v1alpha1",
        "EKSControlPlane",
    )
}
fn our_pools(c: &kube::Client) -> Api<DynamicObject> {
    api(
        c,
        "infrastructure.cluster.x-k8s.io",
        "v1alpha1",
        "EKSMachinePool",
    )
}

/// The EKS cluster and node group as the emulator has them: ARN, creation time, version, tags.
#[derive(Debug, Clone, PartialEq)]
struct InCloud {
    cluster_arn: String,
    cluster_created: String,
    version: String,
    tags: BTreeMap<String, String>,
    nodegroup_arn: String,
    nodegroup_created: String,
    nodegroup_version: String,
    desired: i32,
}

async fn in_cloud(eks: &aws_sdk_eks::Client, cluster: &str, nodegroup: &str) -> Option<InCloud> {
    let c = eks.describe_cluster().name(cluster).send().await.ok()?;
    let c = c.cluster()?;
    let ng = eks
        .describe_nodegroup()
        .cluster_name(cluster)
        .nodegroup_name(nodegroup)
        .send()
        .await
        .ok()?;
    let ng = ng.nodegroup()?;
    Some(InCloud {
        cluster_arn: c.arn()?.to_string(),
        cluster_created: format!("{:?}", c.created_at()?),
        version: c.version()?.to_string(),
        tags: c
            .tags()
            .map(|t| t.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default(),
        nodegroup_arn: ng.nodegroup_arn()?.to_string(),
        nodegroup_created: format!("{:?}", ng.created_at()?),
        nodegroup_version: ng.version()?.to_string(),
        desired: ng.scaling_config()?.desired_size()?,
    })
}

/// Create and delete calls the EKS emulator answered, by operation.
fn lifecycle_calls(env: &Environment) -> BTreeMap<String, u64> {
    env.eks_kit()
        .unwrap()
        .calls
        .snapshot()
        .into_iter()
        .filter(|(op, _)| op.starts_with("Create") || op.starts_with("Delete"))
        .map(|(op, outcomes)| (op, outcomes.values().sum()))
        .collect()
}

/// Asks the workload API server for its version through the Cluster's `<name>-kubeconfig`
/// Secret, read afresh each time, twice a second until `stop`; counts answers and failures.
fn watch_workload(
    client: kube::Client,
    name: &str,
    stop: Arc<AtomicBool>,
) -> tokio::task::JoinHandle<(u64, Vec<String>)> {
    let secret = format!("{name}-kubeconfig");
    tokio::spawn(async move {
        let secrets: Api<Secret> = Api::namespaced(client, NS);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kubeconfig");
        let (mut answered, mut failures) = (0, Vec::new());
        while !stop.load(Ordering::Relaxed) {
            let outcome = async {
                let s = secrets
                    .get(&secret)
                    .await
                    .map_err(|e| format!("Secret: {e}"))?;
                let value = s
                    .data
                    .and_then(|d| d.get("value").cloned())
                    .ok_or("no value")?;
                std::fs::write(&path, &value.0).map_err(|e| e.to_string())?;
                let workload = testbed::client_from(&path)
                    .await
                    .map_err(|e| e.to_string())?;
                workload
                    .apiserver_version()
                    .await
                    .map(|_| ())
                    .map_err(|e| format!("workload API: {e}"))
            }
            .await;
            match outcome {
                Ok(()) => answered += 1,
                Err(e) => failures.push(e),
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        (answered, failures)
    })
}

fn kubectl_managed(kubeconfig: &Path, args: &[&str]) -> tokio::process::Command {
    support::migrate(kubeconfig, NS, args)
}

async fn run(kubeconfig: &Path, args: &[&str]) -> Output {
    support::run(kubeconfig, NS, args).await
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn annotated_paused(obj: &DynamicObject) -> bool {
    obj.metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key("cluster.x-k8s.io/paused"))
}

/// Waits for CAPA to have the cluster and its node group up, as its own status says.
async fn made_by_capa(client: &kube::Client, name: &str) {
    let (cps, pools) = (capa_control_planes(client), capa_pools(client));
    eventually(
        &format!("CAPA's {name} ready"),
        Duration::from_secs(600),
        || async {
            let cp = cps.get(&format!("{name}-control-plane")).await.ok()?;
            let pool = pools.get(&format!("{name}-pool-0")).await.ok()?;
            let secret = Api::<Secret>::namespaced(client.clone(), NS)
                .get(&format!("{name}-kubeconfig"))
                .await
                .ok()?;
            (cp.data["status"]["ready"] == true && pool.data["status"]["ready"] == true)
                .then_some(secret)
        },
    )
    .await;
}

#[tokio::test]
async fn a_capa_cluster_moves_to_ours_without_anything_recreated_and_a_move_rolls_back() {
    let mut env = Environment::start(EnvOptions {
        eks_provider: EksProvider::CapaThenOurs,
        ..EnvOptions::default()
    })
    .await
    .unwrap();
    let client = env.plane.client().await.unwrap();
    let kubeconfig = env.plane.kubeconfig_path().to_path_buf();
    test_support::create_namespace(&client, NS).await;
    let aws = env.eks().unwrap().brought.clone().unwrap();
    let sdk = env.eks().unwrap().eks_client();

    // CAPA makes two clusters, each with one node.
    for name in ["moved", "rolled"] {
        let yaml = demo::peer::cluster_yaml(name, NS, &format!("{VERSION}.0"), 1, REGION, &aws);
        env.apply_yaml(&yaml, NS).await.unwrap();
    }
    for name in ["moved", "rolled"] {
        made_by_capa(&client, name).await;
    }
    let (cluster_name, nodegroup_name) = (
        format!("{NS}_moved-control-plane"),
        format!("{NS}_moved-pool-0"),
    );
    let before = in_cloud(&sdk, &cluster_name, &nodegroup_name)
        .await
        .unwrap();
    let capa_tag = "sigs.k8s.io/cluster-api-provider-aws/cluster/";
    assert!(
        before.tags.keys().any(|k| k.starts_with(capa_tag)),
        "CAPA tagged its cluster: {:?}",
        before.tags
    );

    // A dry run prints the objects and the notes and changes nothing.
    let dry = run(&kubeconfig, &["moved", "--dry-run"]).await;
    assert!(dry.status.success());
    let text = stdout(&dry);
    for expected in [
        "kind: EKSControlPlane",
        "kind: EKSCluster",
        "kind: EKSMachinePool",
        "cloudName: migrate_moved-control-plane",
        "spec.eksClusterName",
        "spec.roleName",
        "Nothing was changed (dry run)",
    ] {
        assert!(text.contains(expected), "{expected} in:\n{text}");
    }
    let cluster = clusters(&client).get("moved").await.unwrap();
    assert_eq!(
        cluster.data["spec"]["controlPlaneRef"]["kind"],
        "AWSManagedControlPlane"
    );
    assert!(
        our_control_planes(&client)
            .get_opt("moved-control-plane")
            .await
            .unwrap()
            .is_none()
    );

    let stop = Arc::new(AtomicBool::new(false));
    let watcher = watch_workload(client.clone(), "moved", stop.clone());
    let calls_before = lifecycle_calls(&env);

    // The move, up to the plans: the Cluster on ours, CAPA's objects paused, nothing tagged.
    let planned = run(&kubeconfig, &["moved"]).await;
    assert!(planned.status.success());
    let text = stdout(&planned);
    assert!(
        text.contains("EKSControlPlane moved-control-plane: Planned (arn:aws:eks:"),
        "{text}"
    );
    assert!(
        text.contains("EKSMachinePool moved-pool-0: Planned"),
        "{text}"
    );
    assert!(text.contains("--accept"), "{text}");
    let cluster = clusters(&client).get("moved").await.unwrap();
    assert_eq!(
        cluster.data["spec"]["controlPlaneRef"]["kind"],
        "EKSControlPlane"
    );
    assert_eq!(
        cluster.data["spec"]["infrastructureRef"]["kind"],
        "EKSCluster"
    );
    let mp = machine_pools(&client).get("moved-pool-0").await.unwrap();
    assert_eq!(
        mp.data["spec"]["template"]["spec"]["infrastructureRef"]["kind"],
        "EKSMachinePool"
    );
    assert!(annotated_paused(
        &capa_control_planes(&client)
            .get("moved-control-plane")
            .await
            .unwrap()
    ));
    let ours_key = contract::naming::ownership_tag("eks", NS, "moved").0;
    let planned_cloud = in_cloud(&sdk, &cluster_name, &nodegroup_name)
        .await
        .unwrap();
    assert!(
        !planned_cloud.tags.contains_key(&ours_key),
        "a plan tags nothing"
    );

    // Accepting, with our provider killed while it adopts: restarted, it finishes the job.
    let mut accepting = kubectl_managed(&kubeconfig, &["moved", "--accept"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(accepting.stdout.take().unwrap()).lines();
    let mut printed = String::new();
    while let Some(line) = lines.next_line().await.unwrap() {
        printed.push_str(&line);
        printed.push('\n');
        if line.contains("accepted the plans") {
            env.restart_provider(Cloud::Eks).await.unwrap();
        }
    }
    let status = accepting.wait().await.unwrap();
    eprintln!("$ kubectl managed migrate moved --accept\n{printed}");
    assert!(status.success(), "{printed}");
    assert!(printed.contains("is managed by eks now"), "{printed}");

    // CAPA's objects are gone; the Cluster, its Secret and its pool are ours.
    assert!(
        capa_control_planes(&client)
            .get_opt("moved-control-plane")
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        capa_pools(&client)
            .get_opt("moved-pool-0")
            .await
            .unwrap()
            .is_none()
    );
    let secret = Api::<Secret>::namespaced(client.clone(), NS)
        .get("moved-kubeconfig")
        .await
        .unwrap();
    let owners = secret.metadata.owner_references.unwrap_or_default();
    assert!(
        owners
            .iter()
            .any(|o| o.kind == "EKSControlPlane" && o.controller == Some(true)),
        "{owners:?}"
    );
    assert!(
        !owners.iter().any(|o| o.kind == "AWSManagedControlPlane"),
        "{owners:?}"
    );
    let cluster = clusters(&client).get("moved").await.unwrap();
    assert!(
        cluster
            .metadata
            .annotations
            .unwrap_or_default()
            .keys()
            .all(|k| !k.starts_with("migration.")),
        "the record is gone"
    );

    // The same cluster and node group in EKS, now ours, and nothing made or deleted meanwhile.
    let after = in_cloud(&sdk, &cluster_name, &nodegroup_name)
        .await
        .unwrap();
    assert_eq!(after.cluster_arn, before.cluster_arn);
    assert_eq!(after.cluster_created, before.cluster_created);
    assert_eq!(after.nodegroup_arn, before.nodegroup_arn);
    assert_eq!(after.nodegroup_created, before.nodegroup_created);
    assert_eq!(
        after.tags.get(&ours_key).map(String::as_str),
        Some(&*format!("{NS}_moved"))
    );
    assert_eq!(
        lifecycle_calls(&env),
        calls_before,
        "no create or delete call while moving"
    );
    stop.store(true, Ordering::Relaxed);
    let (answered, failures) = watcher.await.unwrap();
    assert!(
        answered > 10,
        "the workload API was asked throughout ({answered} answers)"
    );
    assert!(
        failures.is_empty(),
        "the workload API answered throughout: {failures:?}"
    );

    // Ours manages it: upgrade, scale, delete.
    let merge = |v: Value| Patch::Merge(v);
    our_control_planes(&client)
        .patch(
            "moved-control-plane",
            &PatchParams::default(),
            &merge(json!({"spec": {"version": "v1.32"}})),
        )
        .await
        .unwrap();
    eventually(
        "the control plane upgraded by ours",
        Duration::from_secs(180),
        || async {
            let c = in_cloud(&sdk, &cluster_name, &nodegroup_name).await?;
            (c.version == "1.32").then_some(())
        },
    )
    .await;
    machine_pools(&client)
        .patch(
            "moved-pool-0",
            &PatchParams::default(),
            &merge(json!({"spec": {"replicas": 2, "template": {"spec": {"version": "v1.32.0"}}}})),
        )
        .await
        .unwrap();
    eventually(
        "the node group upgraded and scaled by ours",
        Duration::from_secs(180),
        || async {
            let c = in_cloud(&sdk, &cluster_name, &nodegroup_name).await?;
            (c.nodegroup_version == "1.32" && c.desired == 2).then_some(())
        },
    )
    .await;
    eventually(
        "the pool Ready with its two nodes",
        Duration::from_secs(120),
        || async {
            let pool = our_pools(&client).get("moved-pool-0").await.ok()?;
            (condition(&pool, "Ready")?["status"] == "True").then_some(())
        },
    )
    .await;
    clusters(&client)
        .delete("moved", &Default::default())
        .await
        .unwrap();
    eventually(
        "the cluster deleted by ours",
        Duration::from_secs(300),
        || async {
            let gone = sdk
                .describe_cluster()
                .name(&cluster_name)
                .send()
                .await
                .is_err();
            let object_gone = clusters(&client).get_opt("moved").await.ok()?.is_none();
            (gone && object_gone).then_some(())
        },
    )
    .await;

    // The second Cluster: the move is killed half-way, then rolled back.
    let rolled_before = in_cloud(
        &sdk,
        &format!("{NS}_rolled-control-plane"),
        &format!("{NS}_rolled-pool-0"),
    )
    .await
    .unwrap();
    let mut killed = kubectl_managed(&kubeconfig, &["rolled"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(killed.stdout.take().unwrap()).lines();
    while let Some(line) = lines.next_line().await.unwrap() {
        if line.contains("created EKSControlPlane") {
            killed.kill().await.unwrap();
            break;
        }
    }
    let _ = killed.wait().await;
    let half = clusters(&client).get("rolled").await.unwrap();
    assert_eq!(half.data["spec"]["paused"], true, "killed after the pause");
    // Run again, it goes on from where it stopped, to the plans; then it is rolled back.
    let resumed = run(&kubeconfig, &["rolled"]).await;
    assert!(resumed.status.success());
    let text = stdout(&resumed);
    assert!(text.contains("going on from where it stopped"), "{text}");
    assert!(
        text.contains("kept the existing EKSControlPlane rolled-control-plane"),
        "{text}"
    );
    assert!(
        text.contains("EKSMachinePool rolled-pool-0: Planned"),
        "{text}"
    );
    let back = run(&kubeconfig, &["rolled", "--rollback"]).await;
    assert!(back.status.success());
    let cluster = clusters(&client).get("rolled").await.unwrap();
    assert_eq!(
        cluster.data["spec"]["controlPlaneRef"]["kind"],
        "AWSManagedControlPlane"
    );
    assert_ne!(cluster.data["spec"]["paused"], true);
    assert!(
        our_control_planes(&client)
            .get_opt("rolled-control-plane")
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        our_pools(&client)
            .get_opt("rolled-pool-0")
            .await
            .unwrap()
            .is_none()
    );
    let capa_cp = capa_control_planes(&client)
        .get("rolled-control-plane")
        .await
        .unwrap();
    assert!(!annotated_paused(&capa_cp));
    let secret = Api::<Secret>::namespaced(client.clone(), NS)
        .get("rolled-kubeconfig")
        .await
        .unwrap();
    assert!(
        secret
            .metadata
            .owner_references
            .unwrap_or_default()
            .iter()
            .any(|o| o.kind == "AWSManagedControlPlane" && o.controller == Some(true)),
        "CAPA owns its Secret again"
    );
    // CAPA manages it again: it scales the node group.
    machine_pools(&client)
        .patch(
            "rolled-pool-0",
            &PatchParams::default(),
            &merge(json!({"spec": {"replicas": 2}})),
        )
        .await
        .unwrap();
    let rolled_after = eventually(
        "CAPA scaling the rolled-back cluster",
        Duration::from_secs(300),
        || async {
            let c = in_cloud(
                &sdk,
                &format!("{NS}_rolled-control-plane"),
                &format!("{NS}_rolled-pool-0"),
            )
            .await?;
            (c.desired == 2).then_some(c)
        },
    )
    .await;
    assert_eq!(rolled_after.cluster_arn, rolled_before.cluster_arn);
    assert_eq!(rolled_after.nodegroup_arn, rolled_before.nodegroup_arn);
    assert!(
        !rolled_after
            .tags
            .contains_key(&contract::naming::ownership_tag("eks", NS, "rolled").0),
        "never tagged as ours"
    );

    env.stop().await;
}
