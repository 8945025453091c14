//! The EKSControlPlane reconciler against the real management plane (kube-apiserver, Cluster API
//! core) and the EKS emulator with real workload API servers, in-process.
//!
//! One Cluster with only a `controlPlaneRef` (no EKSCluster: the control plane brings its own
//! region and subnets) goes through creation, a rest, an upgrade two minors ahead, and deletion.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use contract::capi::Cluster;
use contract::kubeconfig::kubeconfig_from_secret;
use emulators::eks::EksConfig;
use emulators::kit::{Delays, Timing};
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Api, ResourceExt};
use provider_aws::api::EKSControlPlane;
use provider_aws::client::Endpoints;
use provider_aws::reconcile::control_plane;
use provider_aws::scope::{ClientCache, Shared};
use provider_runtime::pacing::Pacing;
use serde_json::json;
use support::{condition, eventually, free_port};

const NS: &str = "eks-cp-it";
const CLUSTER: &str = "c1";
const CP: &str = "c1-control-plane";
const AKID: &str = "AKIAIOSFODNN7EXAMPLE";
const SECRET: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";

fn scratch_dir(name: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let dir = std::env::temp_dir().join(format!("eks-cp-it-{name}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn control_plane(version: &str) -> serde_json::Value {
    json!({
        "apiVersion": "controlplane.cluster.x-k8s.io/v1alpha1",
        "kind": "EKSControlPlane",
        "metadata": {"name": CP, "namespace": NS},
        "spec": {
            "version": version,
            "eks": {
                "roleARN": "arn:aws:iam::123456789012:role/eks-cluster",
                "requestOverrides": {"upgradePolicy": {"supportType": "STANDARD"}, "name": "not-the-provider-name"},
            },
            "infrastructure": {
                "region": "us-west-2",
                "network": {"subnetIDs": ["subnet-0aaa1111", "subnet-0bbb2222"]},
                "identityRef": {"kind": "Secret", "name": "aws-credentials"},
                "additionalTags": {"team": "platform"},
            },
        },
    })
}

fn cluster() -> serde_json::Value {
    json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "Cluster",
        "metadata": {"name": CLUSTER, "namespace": NS},
        "spec": {
            "controlPlaneRef": {"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "EKSControlPlane", "name": CP},
        },
    })
}

async fn client_from_kubeconfig_secret(secret: &Secret) -> kube::Client {
    let yaml = String::from_utf8(secret.data.as_ref().unwrap()["value"].0.clone()).unwrap();
    support::client_from_kubeconfig(&yaml).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_eks_control_plane_is_created_rests_upgrades_one_minor_at_a_time_and_is_deleted() {
    let plane = testbed::ManagementPlane::start(testbed::Options::default())
        .await
        .expect("management plane starts");
    let client = plane.client().await.expect("client");
    plane
        .install_crds(&provider_aws::api::crds())
        .await
        .expect("CRDs install");

    // The EKS emulator with real workload API servers, trusting our test credentials.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let mut config = EksConfig::new("us-west-2", "123456789012");
    config.credentials = vec![(AKID.into(), SECRET.into())];
    // One cluster per account: the second control plane below hits the quota.
    config.cluster_quota = 1;
    let timing = Timing {
        cluster: Delays::uniform(2.0),
        pool: Delays::uniform(1.0),
        addon: Delays::uniform(0.5),
        instance_shutdown: 1.0,
    };
    let emulator = support::serve_eks_with_workloads(
        &plane,
        listener,
        scratch_dir("workload"),
        config,
        timing,
    )
    .await;

    support::create_namespace(&client, NS).await;
    support::create_credentials_secret(&client, NS, "aws-credentials", AKID, SECRET).await;
    let secrets: Api<Secret> = Api::namespaced(client.clone(), NS);

    // The provider, in-process, polling every second.
    let shared = Arc::new(Shared {
        clients: ClientCache::with_endpoints(Endpoints {
            eks: Some(emulator.url().to_string()),
            ec2: None,
        }),
        pacing: Pacing {
            poll: Duration::from_secs(1),
            rest: Duration::from_secs(300),
            ..Shared::default().pacing
        },
    });
    let (stop_tx, provider) = support::spawn_provider(
        &client,
        &[
            format!("--health-probe-bind-address=127.0.0.1:{}", free_port()),
            format!("--metrics-bind-address=127.0.0.1:{}", free_port()),
        ],
        |operator| operator.controller::<EKSControlPlane, _>(control_plane::reconciler(shared)),
    );

    let cps: Api<EKSControlPlane> = Api::namespaced(client.clone(), NS);
    let clusters: Api<Cluster> = Api::namespaced(client.clone(), NS);
    cps.create(
        &PostParams::default(),
        &serde_json::from_value(control_plane("v1.30")).unwrap(),
    )
    .await
    .unwrap();
    clusters
        .create(
            &PostParams::default(),
            &serde_json::from_value(cluster()).unwrap(),
        )
        .await
        .unwrap();

    // Created: the Cluster is initialized with the control plane's endpoint.
    let initialized = eventually(
        "the Cluster reports controlPlaneInitialized",
        Duration::from_secs(240),
        || async {
            let c = clusters.get(CLUSTER).await.ok()?;
            c.control_plane_initialized().then_some(c)
        },
    )
    .await;
    let cp = cps.get(CP).await.unwrap();
    let status = cp.status.clone().expect("status");
    let endpoint = cp
        .spec
        .common
        .control_plane_endpoint
        .clone()
        .expect("the provider published the endpoint");
    assert_eq!(endpoint.host, "127.0.0.1");
    let cluster_endpoint = eventually(
        "the Cluster's endpoint",
        Duration::from_secs(30),
        || async {
            clusters
                .get(CLUSTER)
                .await
                .ok()?
                .spec
                .control_plane_endpoint
                .filter(|e| e.is_valid())
        },
    )
    .await;
    assert_eq!(
        (cluster_endpoint.host.as_str(), cluster_endpoint.port),
        (endpoint.host.as_str(), endpoint.port)
    );
    assert!(initialized.control_plane_initialized());
    assert!(
        status.common.initialized
            && status.common.ready
            && status.common.external_managed_control_plane
    );
    assert_eq!(status.common.version.as_deref(), Some("v1.30"));
    assert_eq!(status.common.versions[0].version, "v1.30");
    assert_eq!(
        status.common.endpoints.len(),
        1,
        "public only: {:?}",
        status.common.endpoints
    );
    let arn = status.common.cloud_id.clone().expect("cloudID");
    let eks_name = arn.rsplit('/').next().unwrap().to_string();
    let eks = status.eks.as_ref().expect("status.eks");
    assert_eq!(eks.platform_version.as_deref(), Some("eks.1"));
    assert!(eks.oidc_issuer_url.is_some());
    assert!(
        status
            .common
            .kubeconfig
            .as_ref()
            .and_then(|k| k.expires_at.as_ref())
            .is_some()
    );
    assert_eq!(
        status
            .request_overrides
            .as_ref()
            .map(|r| r.operation.as_str()),
        Some("CreateCluster")
    );
    for type_ in ["Ready", "Available", "KubeconfigReady"] {
        let c = condition(&cp, type_).unwrap_or_else(|| panic!("{type_} missing"));
        assert_eq!(c.status, "True", "{c:?}");
    }
    let upgrading = condition(&cp, "Upgrading").unwrap();
    assert_eq!(
        (upgrading.status.as_str(), upgrading.reason.as_str()),
        ("False", "UpToDate")
    );

    // In EKS: our name, our tags, the user's override where we set nothing.
    emulator.eks().with_state(|st| {
        let c = st.clusters.get(&eks_name).expect("the EKS cluster");
        assert_eq!(c.support_type, "STANDARD", "requestOverrides applied");
        assert_eq!(c.tags.get("team").map(String::as_str), Some("platform"));
        assert!(
            c.tags.keys().any(|k| k.starts_with("capi-managed-")),
            "{:?}",
            c.tags
        );
        assert_eq!(c.authentication_mode, "API");
    });

    // The kubeconfig Secret reaches the workload API server; the user one holds no credential.
    let kubeconfig = secrets.get(&format!("{CLUSTER}-kubeconfig")).await.unwrap();
    assert_eq!(kubeconfig.type_.as_deref(), Some("cluster.x-k8s.io/secret"));
    assert_eq!(
        kubeconfig
            .labels()
            .get("cluster.x-k8s.io/cluster-name")
            .map(String::as_str),
        Some(CLUSTER)
    );
    assert!(
        kubeconfig
            .owner_references()
            .iter()
            .any(|o| o.kind == "EKSControlPlane" && o.controller == Some(true))
    );
    let parsed = kubeconfig_from_secret(&kubeconfig).unwrap();
    assert_eq!(
        parsed.current_server(),
        Some(format!("https://{}:{}", endpoint.host, endpoint.port).as_str())
    );
    let workload = client_from_kubeconfig_secret(&kubeconfig).await;
    let namespaces = Api::<Namespace>::all(workload)
        .list(&ListParams::default())
        .await
        .expect("the workload API server answers");
    assert!(
        namespaces
            .items
            .iter()
            .any(|n| n.name_any() == "kube-system")
    );
    let user = kubeconfig_from_secret(
        &secrets
            .get(&format!("{CLUSTER}-user-kubeconfig"))
            .await
            .unwrap(),
    )
    .unwrap();
    assert!(!user.has_static_credential());
    assert_eq!(user.current_context, format!("{CLUSTER}-public"));
    let exec = user.current_user().and_then(|u| u.exec.clone()).unwrap();
    assert_eq!(
        exec.args,
        [
            "eks",
            "get-token",
            "--cluster-name",
            eks_name.as_str(),
            "--region",
            "us-west-2"
        ]
    );

    // At rest: nothing is written again (the Cluster's changes still trigger passes).
    let versions = || async {
        (
            cps.get(CP).await.unwrap().resource_version(),
            secrets
                .get(&format!("{CLUSTER}-kubeconfig"))
                .await
                .unwrap()
                .resource_version(),
            secrets
                .get(&format!("{CLUSTER}-user-kubeconfig"))
                .await
                .unwrap()
                .resource_version(),
        )
    };
    tokio::time::sleep(Duration::from_secs(3)).await;
    let before = versions().await;
    let calls_before = emulator.kit().calls.snapshot();
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(
        versions().await,
        before,
        "a resting control plane writes nothing"
    );
    let writes: Vec<String> = emulator
        .kit()
        .calls
        .snapshot()
        .into_iter()
        .filter(|(op, by)| {
            !op.starts_with("Describe")
                && !op.starts_with("List")
                && by != calls_before.get(op).unwrap_or(&Default::default())
        })
        .map(|(op, _)| op)
        .collect();
    assert!(writes.is_empty(), "no EKS writes at rest: {writes:?}");

    // What only EKS can judge fails as EKS fails it: the account's cluster quota, and a version
    // EKS does not offer (the CRD accepts any vMAJOR.MINOR). Each is a False condition with
    // EKS's message, and no hot loop: the object is not written again while nothing changes.
    for (name, version, reason, message) in [
        (
            "quota",
            "v1.30",
            "QuotaExceeded",
            "Cluster limit exceeded for account.",
        ),
        (
            "old",
            "v1.29",
            "InvalidSpec",
            "unsupported Kubernetes version",
        ),
    ] {
        let mut cp = control_plane(version);
        cp["metadata"]["name"] = json!(format!("{name}-control-plane"));
        cps.create(&PostParams::default(), &serde_json::from_value(cp).unwrap())
            .await
            .unwrap();
        let mut c = cluster();
        c["metadata"]["name"] = json!(name);
        c["spec"]["controlPlaneRef"]["name"] = json!(format!("{name}-control-plane"));
        clusters
            .create(&PostParams::default(), &serde_json::from_value(c).unwrap())
            .await
            .unwrap();
        let cp_name = format!("{name}-control-plane");
        let refused = eventually(
            &format!("{name}: Ready False {reason}"),
            Duration::from_secs(60),
            || async {
                let cp = cps.get(&cp_name).await.ok()?;
                let ready = condition(&cp, "Ready")?;
                (ready.status == "False" && ready.reason == reason).then_some(cp)
            },
        )
        .await;
        let ready = condition(&refused, "Ready").unwrap();
        assert!(ready.message.contains(message), "{name}: {}", ready.message);
        assert!(refused.status.as_ref().unwrap().common.cloud_id.is_none());
        tokio::time::sleep(Duration::from_secs(2)).await;
        let before = cps.get(&cp_name).await.unwrap().resource_version();
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert_eq!(
            cps.get(&cp_name).await.unwrap().resource_version(),
            before,
            "{name}: a refused control plane is not written again (poll interval 1s)"
        );
        clusters
            .delete(name, &DeleteParams::default())
            .await
            .unwrap();
        eventually(
            &format!("{name}: the refused control plane goes"),
            Duration::from_secs(60),
            || async { cps.get_opt(&cp_name).await.ok()?.is_none().then_some(()) },
        )
        .await;
    }
    emulator.eks().with_state(|st| {
        assert_eq!(st.clusters.len(), 1, "only c1 exists in EKS");
    });

    // Upgrade two minors ahead: EKS sees 1.31, then 1.32.
    cps.patch(
        CP,
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"version": "v1.32"}})),
    )
    .await
    .unwrap();
    let saw_upgrading = eventually("Upgrading=True", Duration::from_secs(30), || async {
        let cp = cps.get(CP).await.ok()?;
        let c = condition(&cp, "Upgrading")?;
        (c.status == "True" && c.reason == "Upgrading").then_some(c.message.clone())
    })
    .await;
    assert!(saw_upgrading.contains("v1.30"), "{saw_upgrading}");
    eventually(
        "the control plane runs v1.32",
        Duration::from_secs(120),
        || async {
            let cp = cps.get(CP).await.ok()?;
            let s = cp.status.as_ref()?;
            let up_to_date = condition(&cp, "Upgrading").is_some_and(|c| c.status == "False");
            (s.common.version.as_deref() == Some("v1.32")
                && up_to_date
                && s.common.operation.is_none())
            .then_some(())
        },
    )
    .await;
    let steps: Vec<String> = emulator.eks().with_state(|st| {
        st.clusters[&eks_name]
            .updates
            .iter()
            .filter(|u| u.kind == "VersionUpdate")
            .flat_map(|u| {
                u.params
                    .iter()
                    .filter(|(t, _)| *t == "Version")
                    .map(|(_, v)| v.clone())
            })
            .collect()
    });
    assert_eq!(steps, ["1.31", "1.32"], "one minor at a time");
    let cp = cps.get(CP).await.unwrap();
    assert_eq!(
        cp.status.as_ref().unwrap().common.versions[0].version,
        "v1.32"
    );

    // Deletion: deleting the Cluster deletes the control plane, which deletes the EKS cluster.
    clusters
        .delete(CLUSTER, &DeleteParams::default())
        .await
        .unwrap();
    eventually(
        "the EKSControlPlane is gone",
        Duration::from_secs(120),
        || async { cps.get_opt(CP).await.ok()?.is_none().then_some(()) },
    )
    .await;
    assert!(
        emulator
            .eks()
            .with_state(|st| !st.clusters.contains_key(&eks_name)),
        "the EKS cluster is deleted"
    );
    eventually("the Cluster is gone", Duration::from_secs(60), || async {
        clusters
            .get_opt(CLUSTER)
            .await
            .ok()?
            .is_none()
            .then_some(())
    })
    .await;

    let _ = stop_tx.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), provider).await;
    emulator.shutdown().await;
    plane.stop().await;
}
