//! EKSMachinePool against the real management plane (kube-apiserver, Cluster API core v1.14),
//! moto (EC2) and the EKS emulator with workload API servers: the node group is created, its
//! instances become `spec.providerIDList` and core's nodeRefs, it scales 2 → 3 → 1, an
//! autoscaled pool's outside change is written back to the MachinePool, and deletion removes the
//! node group and terminates its instances, also for a pool deleted after its Cluster.
//!
//! The provider reads its AWS endpoints from `AWS_ENDPOINT_URL` / `AWS_ENDPOINT_URL_EKS`, so the
//! test body runs as a child process beside moto (see `support::run_in_child_with_moto`).
//!
//! The EKS cluster and its EKSControlPlane are made by the test (the cluster through the SDK, the
//! control plane object with an initialized status and a kubeconfig Secret), so this exercises
//! the machine-pool reconciler alone.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod support;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use aws_sdk_ec2::types::Filter;
use aws_sdk_eks::types::{NodegroupScalingConfig, VpcConfigRequest};
use contract::api::ApiEndpoint;
use contract::capi::{MachinePool, REPLICAS_MANAGED_BY_ANNOTATION};
use emulators::eks::EksConfig;
use emulators::kit::{Delays, Timing};
use k8s_openapi::api::core::v1::{Node, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Resource, ResourceExt};
use provider_aws::api::{EKSControlPlane, EKSMachinePool};
use provider_aws::client::{AwsCredentials, Clients};
use provider_aws::reconcile::machine_pool;
use provider_aws::scope::Shared;
use serde_json::{Value, json};
use support::{condition, eventually};

const TEST: &str = "an_eks_machine_pool_creates_scales_autoscales_and_deletes_its_node_group";
const CHILD: &str = "EKS_MACHINE_POOL_TEST_CHILD";
const PORT_VAR: &str = "EKS_MACHINE_POOL_TEST_EKS_PORT";
const REGION: &str = "us-west-2";
const ACCOUNT: &str = "123456789012";
const ACCESS_KEY: &str = "AKIDMACHINEPOOLTEST0";
const SECRET_KEY: &str = "machine-pool-test-secret-key";
const NS: &str = "pools";
const CLUSTER: &str = "prod";
const EKS_NAME: &str = "pools-prod";
const POOL: &str = "workers";
const NODEGROUP: &str = "pools-workers";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_eks_machine_pool_creates_scales_autoscales_and_deletes_its_node_group() {
    if support::is_child(CHILD) {
        child().await;
    } else {
        // The child serves the EKS emulator on this port.
        let eks_port = support::free_port();
        let env = [
            (PORT_VAR, eks_port.to_string()),
            (
                "AWS_ENDPOINT_URL_EKS",
                format!("http://127.0.0.1:{eks_port}"),
            ),
        ];
        support::run_in_child_with_moto(TEST, CHILD, "eks-machine-pool-test", &env).await;
    }
}

/// The provider IDs of the node group's instances that moto does not list as terminated.
async fn moto_provider_ids(clients: &Clients) -> BTreeSet<String> {
    let out = clients
        .ec2
        .describe_instances()
        .filters(
            Filter::builder()
                .name("tag:eks:cluster-name")
                .values(EKS_NAME)
                .build(),
        )
        .filters(
            Filter::builder()
                .name("tag:eks:nodegroup-name")
                .values(NODEGROUP)
                .build(),
        )
        .send()
        .await
        .unwrap();
    out.reservations()
        .iter()
        .flat_map(|r| r.instances())
        .filter(|i| i.state().and_then(|s| s.name()).map(|n| n.as_str()) != Some("terminated"))
        .map(|i| {
            let zone = i
                .placement()
                .and_then(|p| p.availability_zone())
                .unwrap_or_default();
            format!("aws:///{zone}/{}", i.instance_id().unwrap_or_default())
        })
        .collect()
}

async fn node_provider_ids(workload: &kube::Client) -> BTreeSet<String> {
    Api::<Node>::all(workload.clone())
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|n| n.spec.and_then(|s| s.provider_id))
        .collect()
}

/// Waits until the pool has settled at `replicas` (C47) with IDs matching moto and the Nodes.
async fn settled_at(
    replicas: i32,
    pools: &Api<EKSMachinePool>,
    machine_pools: &Api<MachinePool>,
    clients: &Clients,
    workload: &kube::Client,
) -> EKSMachinePool {
    let pool = eventually(
        &format!("the pool to settle at {replicas} nodes"),
        Duration::from_secs(120),
        || async {
            let p = pools.get(POOL).await.ok()?;
            let mp = machine_pools.get(POOL).await.ok()?;
            let ids = &p.spec.common.provider_id_list;
            let status = p.status.as_ref()?;
            let ready = condition(&p, "Ready").is_some_and(|c| c.status == "True");
            let n = usize::try_from(replicas).unwrap();
            (ready
                && ids.len() == n
                && status.common.replicas == Some(replicas)
                && mp.spec.replicas == Some(replicas))
            .then_some(p)
        },
    )
    .await;
    let ids: BTreeSet<String> = pool.spec.common.provider_id_list.iter().cloned().collect();
    eventually(
        "moto's instances to match providerIDList",
        Duration::from_secs(30),
        || async { (moto_provider_ids(clients).await == ids).then_some(()) },
    )
    .await;
    eventually(
        "the workload Nodes to match providerIDList",
        Duration::from_secs(30),
        || async { (node_provider_ids(workload).await == ids).then_some(()) },
    )
    .await;
    eventually(
        "core's nodeRefs to list every Node",
        Duration::from_secs(90),
        || async {
            let mp = machine_pools.get(POOL).await.ok()?;
            (mp.status.as_ref()?.node_refs.len() == ids.len()).then_some(())
        },
    )
    .await;
    pool
}

async fn child() {
    let eks_port: u16 = std::env::var(PORT_VAR).unwrap().parse().unwrap();
    let moto_url = std::env::var("AWS_ENDPOINT_URL").unwrap();

    let plane = testbed::ManagementPlane::start(testbed::Options::default())
        .await
        .expect("management plane starts");
    let client = plane.client().await.unwrap();
    plane
        .install_crds(&provider_aws::api::crds())
        .await
        .expect("provider CRDs install");

    // The EKS emulator, with real workload API servers and node instances in moto.
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", eks_port))
        .await
        .unwrap();
    let mut config = EksConfig::new(REGION, ACCOUNT);
    config.credentials = vec![(ACCESS_KEY.into(), SECRET_KEY.into())];
    config.ec2_endpoint = Some(moto_url);
    let timing = Timing {
        cluster: Delays::uniform(1.0),
        pool: Delays::uniform(0.5),
        addon: Delays::uniform(0.2),
        instance_shutdown: 1.0,
    };
    let emulator = support::serve_eks_with_workloads(
        &plane,
        listener,
        plane.dir().join("workload"),
        config,
        timing,
    )
    .await;

    // The network (moto) and the EKS cluster, as the control plane reconciler would leave them.
    let credentials = AwsCredentials::new(ACCESS_KEY, SECRET_KEY, None);
    let aws = Clients::new(REGION, credentials.clone()).await;
    let vpc_id = support::create_vpc(&aws.ec2, "10.0.0.0/16").await;
    let subnets = vec![
        support::create_subnet(&aws.ec2, &vpc_id, "10.0.1.0/24", "us-west-2a").await,
        support::create_subnet(&aws.ec2, &vpc_id, "10.0.2.0/24", "us-west-2b").await,
    ];
    aws.eks
        .create_cluster()
        .name(EKS_NAME)
        .version("1.31")
        .role_arn(format!("arn:aws:iam::{ACCOUNT}:role/eks-cluster"))
        .resources_vpc_config(
            VpcConfigRequest::builder()
                .set_subnet_ids(Some(subnets.clone()))
                .build(),
        )
        .send()
        .await
        .unwrap();
    let eks_cluster = eventually(
        "the EKS cluster to be ACTIVE",
        Duration::from_secs(120),
        || async {
            let c = aws
                .eks
                .describe_cluster()
                .name(EKS_NAME)
                .send()
                .await
                .ok()?
                .cluster()?
                .clone();
            (c.status().map(|s| s.as_str()) == Some("ACTIVE")).then_some(c)
        },
    )
    .await;
    let server = eks_cluster.endpoint().unwrap().to_string();
    let (host, port) = server
        .trim_start_matches("https://")
        .rsplit_once(':')
        .unwrap();
    let endpoint = ApiEndpoint {
        host: host.to_string(),
        port: port.parse().unwrap(),
    };
    let ca_pem = base64_decode(
        eks_cluster
            .certificate_authority()
            .and_then(|c| c.data())
            .unwrap(),
    );
    let token = provider_aws::client::token::mint(
        &credentials,
        REGION,
        EKS_NAME,
        SystemTime::now(),
        provider_aws::client::token::TOKEN_LIFETIME,
    )
    .unwrap();

    // The management objects.
    support::create_namespace(&client, NS).await;
    support::create_credentials_secret(&client, NS, "aws-credentials", ACCESS_KEY, SECRET_KEY)
        .await;
    let secrets: Api<Secret> = Api::namespaced(client.clone(), NS);
    let cps: Api<EKSControlPlane> = Api::namespaced(client.clone(), NS);
    let cp = cps
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "apiVersion": "controlplane.cluster.x-k8s.io/v1alpha1",
                "kind": "EKSControlPlane",
                "metadata": {"name": "prod-cp"},
                "spec": {
                    "version": "v1.31",
                    "cloudName": EKS_NAME,
                    "controlPlaneEndpoint": {"host": endpoint.host, "port": endpoint.port},
                    "infrastructure": {
                        "region": REGION,
                        "network": {"subnetIDs": subnets},
                        "identityRef": {"kind": "Secret", "name": "aws-credentials"},
                    },
                    "eks": {"roleARN": format!("arn:aws:iam::{ACCOUNT}:role/eks-cluster")},
                },
            }))
            .unwrap(),
        )
        .await
        .expect("EKSControlPlane");
    cps.patch_status(
        "prod-cp",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {
            "initialization": {"controlPlaneInitialized": true},
            "initialized": true,
            "ready": true,
            "externalManagedControlPlane": true,
            "version": "v1.31.13",
        }})),
    )
    .await
    .expect("control plane status");
    let owner = OwnerReference {
        api_version: EKSControlPlane::api_version(&()).into_owned(),
        kind: EKSControlPlane::kind(&()).into_owned(),
        name: cp.name_any(),
        uid: cp.uid().unwrap(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    };
    secrets
        .create(
            &PostParams::default(),
            &contract::kubeconfig::cluster_kubeconfig_secret(
                CLUSTER,
                NS,
                owner,
                &endpoint,
                &ca_pem,
                &token.token,
            ),
        )
        .await
        .expect("kubeconfig Secret");
    let workload = support::client_from_kubeconfig(
        &contract::kubeconfig::cluster_kubeconfig(CLUSTER, &endpoint, &ca_pem, &token.token)
            .to_yaml(),
    )
    .await;
    Api::<kube::api::DynamicObject>::namespaced_with(client.clone(), NS, &cluster_resource())
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "apiVersion": "cluster.x-k8s.io/v1beta2",
                "kind": "Cluster",
                "metadata": {"name": CLUSTER},
                "spec": {"controlPlaneRef": {"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "EKSControlPlane", "name": "prod-cp"}},
            }))
            .unwrap(),
        )
        .await
        .expect("Cluster");

    // Admission: EKS has no surge.
    let pools: Api<EKSMachinePool> = Api::namespaced(client.clone(), NS);
    let surge = pools
        .create(
            &PostParams::default(),
            &pool_object("surging", json!({"update": {"maxSurge": 1}})),
        )
        .await;
    let message = surge.expect_err("maxSurge is rejected").to_string();
    assert!(
        message.contains("spec.update.maxSurge") && message.contains("EKS"),
        "{message}"
    );

    // The provider, in-process, polling every second.
    let shared = Arc::new(Shared {
        poll_interval: Duration::from_secs(1),
        rest_interval: Duration::from_secs(2),
        ..Shared::default()
    });
    let (stop_tx, provider) = support::spawn_provider(
        &client,
        &[
            "--health-probe-bind-address=0".into(),
            "--metrics-bind-address=0".into(),
        ],
        |operator| operator.controller::<EKSMachinePool, _>(machine_pool::reconciler(shared)),
    );

    pools
        .create(
            &PostParams::default(),
            &pool_object(
                POOL,
                json!({
                    "labels": {"role": "worker"},
                    "eks": {
                        "nodeRoleARN": format!("arn:aws:iam::{ACCOUNT}:role/eks-nodes"),
                        // A field no typed field covers, and one the provider manages (ignored).
                        "requestOverrides": {"nodeRepairConfig": {"enabled": true}, "scalingConfig": {"desiredSize": 7}},
                    },
                }),
            ),
        )
        .await
        .expect("EKSMachinePool");
    let machine_pools: Api<MachinePool> = Api::namespaced(client.clone(), NS);
    create_machine_pool(&client, POOL, 2).await;

    // Created: two nodes whose IDs are moto's instances and the workload's Nodes.
    let pool = settled_at(2, &pools, &machine_pools, &aws, &workload).await;
    assert!(
        pool.owner_references()
            .iter()
            .any(|o| o.kind == "MachinePool" && o.name == POOL && o.controller == Some(true)),
        "C13: the MachinePool is the controller owner"
    );
    assert_eq!(
        pool.labels()
            .get("cluster.x-k8s.io/cluster-name")
            .map(String::as_str),
        Some(CLUSTER)
    );
    let status = pool.status.clone().unwrap();
    assert!(status.common.ready, "status.ready");
    assert_eq!(
        status
            .common
            .initialization
            .as_ref()
            .and_then(|i| i.provisioned),
        Some(true),
        "initialization.provisioned"
    );
    assert_eq!(status.common.version.as_deref(), Some("v1.31"));
    assert_eq!(status.common.cloud_name.as_deref(), Some(NODEGROUP));
    assert!(
        status
            .common
            .cloud_id
            .as_deref()
            .is_some_and(|a| a.contains(NODEGROUP)),
        "{status:?}"
    );
    assert_eq!(status.common.operation, None, "nothing in flight at rest");
    let upgrading = condition(&pool, "Upgrading").expect("Upgrading condition");
    assert_eq!(
        (upgrading.status.as_str(), upgrading.reason.as_str()),
        ("False", "UpToDate")
    );
    assert!(
        pool.finalizers().iter().any(|f| f.starts_with("eks.")),
        "finalizer: {:?}",
        pool.finalizers()
    );
    let ng = aws
        .eks
        .describe_nodegroup()
        .cluster_name(EKS_NAME)
        .nodegroup_name(NODEGROUP)
        .send()
        .await
        .unwrap();
    let ng = ng.nodegroup().unwrap();
    assert_eq!(
        ng.tags()
            .and_then(|t| t.get("capi-managed-eks"))
            .map(String::as_str),
        Some("pools_prod"),
        "ownership tag"
    );
    assert_eq!(
        ng.labels().and_then(|l| l.get("role")).map(String::as_str),
        Some("worker")
    );
    assert_eq!(
        ng.node_repair_config().and_then(|r| r.enabled()),
        Some(true),
        "requestOverrides reached CreateNodegroup (and the request was still signed correctly)"
    );
    assert_eq!(
        ng.scaling_config().and_then(|s| s.desired_size()),
        Some(2),
        "the provider's fields win over requestOverrides"
    );
    let applied = status.request_overrides.as_ref();
    assert_eq!(
        applied.map(|a| a.operation.as_str()),
        Some("CreateNodegroup"),
        "status shows which request carried the overrides, as the control plane's does"
    );
    assert!(applied.and_then(|a| a.generation).is_some());
    let mp = machine_pools.get(POOL).await.unwrap();
    assert_eq!(
        mp.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Running"),
        "MachinePool phase"
    );

    // At rest: reads only, and the object stays still.
    emulator.kit().calls.reset();
    let before = pools.get(POOL).await.unwrap().resource_version();
    tokio::time::sleep(Duration::from_secs(6)).await;
    let calls = emulator.kit().calls.snapshot();
    let writes: Vec<&String> = calls
        .keys()
        .filter(|op| !op.starts_with("Describe") && !op.starts_with("List"))
        .collect();
    assert!(writes.is_empty(), "EKS writes at rest: {calls:?}");
    assert!(
        calls.contains_key("DescribeNodegroup"),
        "the pass keeps looking: {calls:?}"
    );
    assert_eq!(
        pools.get(POOL).await.unwrap().resource_version(),
        before,
        "no status write at rest"
    );

    // Scale 2 → 3 → 1 through the MachinePool.
    for replicas in [3, 1] {
        machine_pools
            .patch(
                POOL,
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"replicas": replicas}})),
            )
            .await
            .unwrap();
        settled_at(replicas, &pools, &machine_pools, &aws, &workload).await;
    }

    // Autoscaled: the MachinePool is annotated and an outside change is written back (C50).
    pools
        .patch(
            POOL,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"scaling": {"minReplicas": 1, "maxReplicas": 4}}})),
        )
        .await
        .unwrap();
    eventually(
        "the MachinePool to be annotated replicas-managed-by",
        Duration::from_secs(30),
        || async {
            let mp = machine_pools.get(POOL).await.ok()?;
            mp.annotations()
                .get(REPLICAS_MANAGED_BY_ANNOTATION)
                .filter(|v| !v.is_empty())
                .map(|_| ())
        },
    )
    .await;
    eventually(
        "the node group bounds to follow spec.scaling",
        Duration::from_secs(30),
        || async {
            let out = aws
                .eks
                .describe_nodegroup()
                .cluster_name(EKS_NAME)
                .nodegroup_name(NODEGROUP)
                .send()
                .await
                .ok()?;
            let ng = out.nodegroup()?;
            let s = ng.scaling_config()?;
            (s.min_size() == Some(1)
                && s.max_size() == Some(4)
                && ng.status().map(|s| s.as_str()) == Some("ACTIVE"))
            .then_some(())
        },
    )
    .await;
    aws.eks
        .update_nodegroup_config()
        .cluster_name(EKS_NAME)
        .nodegroup_name(NODEGROUP)
        .scaling_config(NodegroupScalingConfig::builder().desired_size(3).build())
        .send()
        .await
        .expect("an outside scale change (as an autoscaler would make)");
    settled_at(3, &pools, &machine_pools, &aws, &workload).await;
    let ng = aws
        .eks
        .describe_nodegroup()
        .cluster_name(EKS_NAME)
        .nodegroup_name(NODEGROUP)
        .send()
        .await
        .unwrap();
    assert_eq!(
        ng.nodegroup()
            .and_then(|n| n.scaling_config())
            .and_then(|s| s.desired_size()),
        Some(3),
        "the provider did not push back"
    );

    // Deletion: the node group goes and its instances are terminated.
    Api::<kube::api::DynamicObject>::namespaced_with(client.clone(), NS, &machine_pool_resource())
        .delete(POOL, &DeleteParams::default())
        .await
        .unwrap();
    eventually(
        "the EKSMachinePool to be gone",
        Duration::from_secs(120),
        || async { pools.get_opt(POOL).await.ok()?.is_none().then_some(()) },
    )
    .await;
    let gone = aws
        .eks
        .describe_nodegroup()
        .cluster_name(EKS_NAME)
        .nodegroup_name(NODEGROUP)
        .send()
        .await;
    assert!(gone.is_err(), "the node group is deleted");
    assert!(
        moto_provider_ids(&aws).await.is_empty(),
        "every instance is terminated in moto"
    );

    // A node group of the wanted name that is not ours: NameConflict, and deleting the pool
    // leaves it alone.
    let foreign_name = "pools-foreign";
    aws.eks
        .create_nodegroup()
        .cluster_name(EKS_NAME)
        .nodegroup_name(foreign_name)
        .node_role(format!("arn:aws:iam::{ACCOUNT}:role/someone-elses-nodes"))
        .set_subnets(Some(subnets.clone()))
        .scaling_config(
            NodegroupScalingConfig::builder()
                .min_size(0)
                .max_size(1)
                .desired_size(1)
                .build(),
        )
        .send()
        .await
        .expect("someone else's node group");
    pools
        .create(&PostParams::default(), &pool_object("foreign", json!({})))
        .await
        .unwrap();
    create_machine_pool(&client, "foreign", 1).await;
    let conflicted = eventually("a NameConflict", Duration::from_secs(60), || async {
        let p = pools.get("foreign").await.ok()?;
        condition(&p, "Ready")
            .filter(|c| c.reason == "NameConflict")
            .map(|c| (c.clone(), p.clone()))
    })
    .await;
    assert!(
        conflicted.0.message.contains("spec.adopt"),
        "{}",
        conflicted.0.message
    );
    assert!(
        conflicted.1.spec.common.provider_id_list.is_empty(),
        "someone else's instances are not published"
    );
    Api::<kube::api::DynamicObject>::namespaced_with(client.clone(), NS, &machine_pool_resource())
        .delete("foreign", &DeleteParams::default())
        .await
        .unwrap();
    eventually(
        "the conflicting EKSMachinePool to be gone",
        Duration::from_secs(60),
        || async { pools.get_opt("foreign").await.ok()?.is_none().then_some(()) },
    )
    .await;
    let kept = aws
        .eks
        .describe_nodegroup()
        .cluster_name(EKS_NAME)
        .nodegroup_name(foreign_name)
        .send()
        .await
        .unwrap();
    assert_ne!(
        kept.nodegroup()
            .and_then(|n| n.status())
            .map(|s| s.as_str()),
        Some("DELETING"),
        "a node group that is not ours is never deleted"
    );

    // An instance type EC2 does not have: EKS takes the node group, its launch fails
    // (CREATE_FAILED with a health issue), and the pool says so in Ready with EKS's message,
    // looking again at the poll interval rather than in a hot loop.
    pools
        .create(
            &PostParams::default(),
            &pool_object("huge", json!({"machineType": "m5.huge"})),
        )
        .await
        .unwrap();
    create_machine_pool(&client, "huge", 1).await;
    let failed = eventually(
        "the failed node group reported",
        Duration::from_secs(90),
        || async {
            let p = pools.get("huge").await.ok()?;
            condition(&p, "Ready")
                .filter(|c| c.status == "False" && c.reason == "CloudError")
                .filter(|c| c.message.contains("does not exist"))
                .cloned()
        },
    )
    .await;
    assert!(
        failed.message.contains("CREATE_FAILED") && failed.message.contains("m5.huge"),
        "{}",
        failed.message
    );
    emulator.kit().calls.reset();
    let before = pools.get("huge").await.unwrap().resource_version();
    tokio::time::sleep(Duration::from_secs(5)).await;
    let calls = emulator.kit().calls.snapshot();
    let describes: u64 = calls
        .get("DescribeNodegroup")
        .map(|by_outcome| by_outcome.values().sum())
        .unwrap_or(0);
    // Two pools polled about once a second (1 s poll, 2 s rest) for 5 s; a hot loop is hundreds.
    assert!(
        describes <= 20,
        "{describes} DescribeNodegroup calls in 5 s: {calls:?}"
    );
    assert!(
        !calls.contains_key("CreateNodegroup"),
        "a failed node group is not created again: {calls:?}"
    );
    assert_eq!(
        pools.get("huge").await.unwrap().resource_version(),
        before,
        "a failed pool's status stays still"
    );
    Api::<kube::api::DynamicObject>::namespaced_with(client.clone(), NS, &machine_pool_resource())
        .delete("huge", &DeleteParams::default())
        .await
        .unwrap();
    eventually(
        "the failed EKSMachinePool to be gone",
        Duration::from_secs(60),
        || async { pools.get_opt("huge").await.ok()?.is_none().then_some(()) },
    )
    .await;

    // A pool deleted after its Cluster: its MachinePool goes and leaves it behind, then the
    // Cluster goes; deleting the pool then finds its EKS cluster through the objects labelled
    // with the Cluster's name (the one cleanup policy) and removes its node group.
    pools
        .create(&PostParams::default(), &pool_object("orphan", json!({})))
        .await
        .unwrap();
    create_machine_pool(&client, "orphan", 1).await;
    eventually(
        "the orphan pool's node",
        Duration::from_secs(90),
        || async {
            let p = pools.get("orphan").await.ok()?;
            (p.spec.common.provider_id_list.len() == 1).then_some(())
        },
    )
    .await;
    // Core would delete the pool with its MachinePool: pause it there, delete the MachinePool
    // leaving its dependents, and drop core's finalizer, so the MachinePool goes alone.
    let machine_pools_api = Api::<kube::api::DynamicObject>::namespaced_with(
        client.clone(),
        NS,
        &machine_pool_resource(),
    );
    machine_pools_api
        .patch(
            "orphan",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {"cluster.x-k8s.io/paused": ""}}})),
        )
        .await
        .unwrap();
    machine_pools_api
        .delete("orphan", &DeleteParams::orphan())
        .await
        .unwrap();
    orphaned(&machine_pools_api, "orphan").await;
    machine_pools_api
        .patch(
            "orphan",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .unwrap();
    let clusters =
        Api::<kube::api::DynamicObject>::namespaced_with(client.clone(), NS, &cluster_resource());
    // The Cluster goes without core deleting its control plane first (paused, orphan-deleted,
    // finalizer dropped), as after a forced removal: the EKSControlPlane, labelled with the
    // Cluster's name, is what is left to find the EKS cluster by.
    clusters
        .patch(
            CLUSTER,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"paused": true}})),
        )
        .await
        .unwrap();
    clusters
        .delete(CLUSTER, &DeleteParams::orphan())
        .await
        .unwrap();
    orphaned(&clusters, CLUSTER).await;
    clusters
        .patch(
            CLUSTER,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .unwrap();
    eventually(
        "the Cluster to be gone",
        Duration::from_secs(90),
        || async {
            let gone = clusters.get_opt(CLUSTER).await.ok()?.is_none();
            let orphaned = pools
                .get("orphan")
                .await
                .ok()?
                .owner_references()
                .iter()
                .all(|o| o.kind != "MachinePool");
            (gone && orphaned).then_some(())
        },
    )
    .await;
    let control_planes: Api<EKSControlPlane> = Api::namespaced(client.clone(), NS);
    let cp = control_planes.get_opt("prod-cp").await.unwrap();
    assert!(
        cp.is_some_and(|cp| cp.metadata.deletion_timestamp.is_none()),
        "the control plane outlives the Cluster here"
    );
    pools
        .delete("orphan", &DeleteParams::default())
        .await
        .unwrap();
    eventually(
        "the orphan EKSMachinePool to be gone",
        Duration::from_secs(90),
        || async { pools.get_opt("orphan").await.ok()?.is_none().then_some(()) },
    )
    .await;
    let left = aws
        .eks
        .describe_nodegroup()
        .cluster_name(EKS_NAME)
        .nodegroup_name("pools-orphan")
        .send()
        .await;
    let code = left
        .as_ref()
        .err()
        .and_then(aws_sdk_eks::error::ProvideErrorMetadata::code);
    assert_eq!(
        code,
        Some("ResourceNotFoundException"),
        "the node group of a pool deleted after its Cluster is deleted: {left:?}"
    );
    aws.eks
        .describe_cluster()
        .name(EKS_NAME)
        .send()
        .await
        .expect("the EKS cluster itself is still there");

    let _ = stop_tx.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), provider).await;
    emulator.shutdown().await;
    plane.stop().await;
}

/// Waits until the garbage collector has let `name`'s dependents go (the `orphan` finalizer of
/// an orphaning delete is gone), so dropping the other finalizers cannot take them with it.
async fn orphaned(api: &Api<kube::api::DynamicObject>, name: &str) {
    eventually(
        "the dependents orphaned",
        Duration::from_secs(60),
        || async {
            let obj = api.get_opt(name).await.ok()??;
            (!obj.finalizers().iter().any(|f| f == "orphan")).then_some(())
        },
    )
    .await;
}

async fn create_machine_pool(client: &kube::Client, name: &str, replicas: i32) {
    Api::<kube::api::DynamicObject>::namespaced_with(client.clone(), NS, &machine_pool_resource())
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "apiVersion": "cluster.x-k8s.io/v1beta2",
                "kind": "MachinePool",
                "metadata": {"name": name},
                "spec": {
                    "clusterName": CLUSTER,
                    "replicas": replicas,
                    "template": {"spec": {
                        "clusterName": CLUSTER,
                        "version": "v1.31.13",
                        "bootstrap": {"dataSecretName": ""},
                        "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "EKSMachinePool", "name": name},
                    }},
                },
            }))
            .unwrap(),
        )
        .await
        .expect("MachinePool");
}

fn pool_object(name: &str, extra: Value) -> EKSMachinePool {
    let mut spec = json!({
        "machineType": "t3.medium",
        "eks": {"nodeRoleARN": format!("arn:aws:iam::{ACCOUNT}:role/eks-nodes")},
    });
    if let (Some(s), Some(e)) = (spec.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            s.insert(k.clone(), v.clone());
        }
    }
    serde_json::from_value(json!({
        "apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1",
        "kind": "EKSMachinePool",
        "metadata": {"name": name},
        "spec": spec,
    }))
    .unwrap()
}

fn cluster_resource() -> kube::api::ApiResource {
    kube::api::ApiResource::erase::<contract::capi::Cluster>(&())
}

fn machine_pool_resource() -> kube::api::ApiResource {
    kube::api::ApiResource::erase::<MachinePool>(&())
}

fn base64_decode(data: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap()
}
