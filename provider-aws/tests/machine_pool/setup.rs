//! The bed the scenario runs on: the management plane, the EKS emulator with workload API
//! servers, a network and an EKS cluster made through the SDK (as the control plane reconciler
//! would leave them), and the management objects a pool hangs from (an EKSControlPlane with an
//! initialized status, its kubeconfig Secret and a Cluster).

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use aws_sdk_eks::types::VpcConfigRequest;
use contract::api::ApiEndpoint;
use contract::capi::MachinePool;
use emulators::eks::{EksConfig, ServerHandle};
use emulators::kit::{Delays, Kit, Timing};
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, Resource, ResourceExt};
use provider_aws::api::{EKSControlPlane, EKSMachinePool};
use provider_aws::client::{AwsCredentials, Clients};
use serde_json::json;

use crate::helpers::{base64_decode, cluster_resource};
use crate::support::{self, eventually};
use crate::{ACCESS_KEY, ACCOUNT, CLUSTER, EKS_NAME, NS, PORT_VAR, REGION, SECRET_KEY};

/// What every phase works with: clients of the management plane, of AWS and of the workload
/// cluster, the APIs of the two pool kinds, the EKS cluster's subnets and the emulator's kit.
pub struct Ctx {
    /// The management plane.
    pub client: kube::Client,
    /// EKS and EC2, as the test's own AWS user.
    pub aws: Clients,
    /// The workload cluster (the EKS emulator's API server for the cluster).
    pub workload: kube::Client,
    /// EKSMachinePools in the test's namespace.
    pub pools: Api<EKSMachinePool>,
    /// Core's MachinePools in the test's namespace.
    pub machine_pools: Api<MachinePool>,
    /// The EKS cluster's subnets.
    pub subnets: Vec<String>,
    /// The EKS emulator's kit, for its call counters.
    pub kit: Arc<Kit>,
}

/// The processes the scenario runs against, stopped at its end.
pub struct Bed {
    plane: testbed::ManagementPlane,
    emulator: ServerHandle,
}

impl Bed {
    /// Stops the EKS emulator, then the management plane.
    pub async fn stop(self) {
        self.emulator.shutdown().await;
        self.plane.stop().await;
    }
}

/// The workload cluster's address, certificate authority and a token for it.
struct Access {
    /// Host and port of the API server.
    endpoint: ApiEndpoint,
    /// Its certificate authority, PEM.
    ca_pem: Vec<u8>,
    /// A token the workload API server accepts.
    token: String,
}

/// Starts the bed and makes everything a pool needs before the provider runs.
pub async fn start() -> (Bed, Ctx) {
    let plane = testbed::ManagementPlane::start(testbed::Options::default())
        .await
        .expect("management plane starts");
    let client = plane.client().await.unwrap();
    plane
        .install_crds(&provider_aws::api::crds())
        .await
        .expect("provider CRDs install");
    let emulator = start_emulator(&plane).await;

    // The network (moto) and the EKS cluster, as the control plane reconciler would leave them.
    let credentials = AwsCredentials::new(ACCESS_KEY, SECRET_KEY, None);
    let aws = Clients::new(REGION, credentials.clone()).await;
    let vpc_id = support::create_vpc(&aws.ec2, "10.0.0.0/16").await;
    let subnets = vec![
        support::create_subnet(&aws.ec2, &vpc_id, "10.0.1.0/24", "us-west-2a").await,
        support::create_subnet(&aws.ec2, &vpc_id, "10.0.2.0/24", "us-west-2b").await,
    ];
    let access = create_eks_cluster(&aws, &credentials, &subnets).await;

    let workload = create_management_objects(&client, &subnets, &access).await;
    let ctx = Ctx {
        pools: Api::namespaced(client.clone(), NS),
        machine_pools: Api::namespaced(client.clone(), NS),
        client,
        aws,
        workload,
        subnets,
        kit: emulator.kit().clone(),
    };
    (Bed { plane, emulator }, ctx)
}

/// The EKS emulator on the port the parent chose, with real workload API servers and node
/// instances in moto.
async fn start_emulator(plane: &testbed::ManagementPlane) -> ServerHandle {
    let eks_port: u16 = std::env::var(PORT_VAR).unwrap().parse().unwrap();
    let moto_url = std::env::var("AWS_ENDPOINT_URL").unwrap();
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
    support::serve_eks_with_workloads(
        plane,
        listener,
        plane.dir().join("workload"),
        config,
        timing,
    )
    .await
}

/// Creates the EKS cluster on `subnets`, waits until it is ACTIVE and returns how to reach its
/// API server.
async fn create_eks_cluster(
    aws: &Clients,
    credentials: &AwsCredentials,
    subnets: &[String],
) -> Access {
    aws.eks
        .create_cluster()
        .name(EKS_NAME)
        .version("1.31")
        .role_arn(format!("arn:aws:iam::{ACCOUNT}:role/eks-cluster"))
        .resources_vpc_config(
            VpcConfigRequest::builder()
                .set_subnet_ids(Some(subnets.to_vec()))
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
        credentials,
        REGION,
        EKS_NAME,
        SystemTime::now(),
        provider_aws::client::token::TOKEN_LIFETIME,
    )
    .unwrap();
    Access {
        endpoint,
        ca_pem,
        token: token.token,
    }
}

/// Creates the namespace, the credentials Secret, the EKSControlPlane (initialized), its
/// kubeconfig Secret and the Cluster; returns a client of the workload cluster.
async fn create_management_objects(
    client: &kube::Client,
    subnets: &[String],
    access: &Access,
) -> kube::Client {
    support::create_namespace(client, NS).await;
    support::create_credentials_secret(client, NS, "aws-credentials", ACCESS_KEY, SECRET_KEY).await;
    let owner = create_control_plane(client, subnets, &access.endpoint).await;
    let secrets: Api<Secret> = Api::namespaced(client.clone(), NS);
    secrets
        .create(
            &PostParams::default(),
            &contract::kubeconfig::cluster_kubeconfig_secret(
                CLUSTER,
                NS,
                owner,
                &access.endpoint,
                &access.ca_pem,
                &access.token,
            ),
        )
        .await
        .expect("kubeconfig Secret");
    let workload = support::client_from_kubeconfig(
        &contract::kubeconfig::cluster_kubeconfig(
            CLUSTER,
            &access.endpoint,
            &access.ca_pem,
            &access.token,
        )
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
    workload
}

/// Creates the EKSControlPlane `prod-cp` for the EKS cluster, marks it initialized and ready,
/// and returns an owner reference to it (for its kubeconfig Secret).
async fn create_control_plane(
    client: &kube::Client,
    subnets: &[String],
    endpoint: &ApiEndpoint,
) -> OwnerReference {
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
    OwnerReference {
        api_version: EKSControlPlane::api_version(&()).into_owned(),
        kind: EKSControlPlane::kind(&()).into_owned(),
        name: cp.name_any(),
        uid: cp.uid().unwrap(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}
