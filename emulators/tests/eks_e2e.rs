//! The EKS emulator end to end, beside moto, with real workload API servers: what the provider
//! will rely on, driven through the AWS SDK for Rust and a real Kubernetes client.
//!
//! moto holds the VPC, subnets and the node instances (the emulator launches them there, tagged
//! as EKS tags them); each ACTIVE cluster is a real kube-apiserver that accepts only an EKS token
//! minted for it, and shows one Ready Node per instance with the provider ID the AWS
//! cloud-controller-manager would write.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;

use std::sync::Arc;
use std::time::{Duration, SystemTime};
use test_support::eventually_true;

use aws_sdk_ec2::types::{Filter, ResourceType, Tag, TagSpecification};
use aws_sdk_eks::types::{
    ClusterStatus, NodegroupScalingConfig, NodegroupStatus, VpcConfigRequest,
};
use common::{AKID, Mint, SECRET};
use emulators::eks::ec2::Ec2;
use emulators::eks::{EksConfig, serve_eks};
use emulators::kit::workload::WorkloadServers;
use emulators::kit::{Delays, Timing};
use emulators::moto::Moto;
use k8s_openapi::api::core::v1::{Namespace, Node};
use kube::api::{Api, ListParams};

const REGION: &str = "us-west-2";

fn http_client() -> aws_sdk_eks::config::SharedHttpClient {
    aws_smithy_http_client::Builder::new()
        .tls_provider(aws_smithy_http_client::tls::Provider::Rustls(
            aws_smithy_http_client::tls::rustls_provider::CryptoMode::Ring,
        ))
        .build_https()
}

fn credentials() -> aws_sdk_eks::config::Credentials {
    aws_sdk_eks::config::Credentials::new(AKID, SECRET, None, None, "test")
}

fn eks_client(url: &str) -> aws_sdk_eks::Client {
    let config = aws_sdk_eks::config::Builder::new()
        .behavior_version_latest()
        .endpoint_url(url)
        .region(aws_sdk_eks::config::Region::new(REGION))
        .credentials_provider(credentials())
        .http_client(http_client())
        .build();
    aws_sdk_eks::Client::from_conf(config)
}

fn ec2_client(url: &str) -> aws_sdk_ec2::Client {
    let config = aws_sdk_ec2::config::Builder::new()
        .behavior_version_latest()
        .endpoint_url(url)
        .region(aws_sdk_ec2::config::Region::new(REGION))
        .credentials_provider(credentials())
        .http_client(http_client())
        .build();
    aws_sdk_ec2::Client::from_conf(config)
}

async fn kube_client(
    server: &str,
    ca_pem: &str,
    token: &str,
    dir: &std::path::Path,
) -> kube::Client {
    let path = dir.join(format!("kubeconfig-{}", token.len() ^ server.len()));
    testbed::write_kubeconfig(
        &path,
        server,
        ca_pem,
        &testbed::KubeconfigAuth::Token(token.to_string()),
    )
    .unwrap();
    testbed::client_from(&path).await.unwrap()
}

async fn instances(
    ec2: &aws_sdk_ec2::Client,
    cluster: &str,
    nodegroup: &str,
) -> Vec<(String, String)> {
    let out = ec2
        .describe_instances()
        .filters(
            Filter::builder()
                .name("tag:eks:cluster-name")
                .values(cluster)
                .build(),
        )
        .filters(
            Filter::builder()
                .name("tag:eks:nodegroup-name")
                .values(nodegroup)
                .build(),
        )
        .filters(
            Filter::builder()
                .name("instance-state-name")
                .values("pending")
                .values("running")
                .build(),
        )
        .send()
        .await
        .unwrap();
    let mut ids: Vec<(String, String)> = out
        .reservations()
        .iter()
        .flat_map(|r| r.instances())
        .map(|i| {
            let az = i
                .placement()
                .and_then(|p| p.availability_zone())
                .unwrap_or_default()
                .to_string();
            (i.instance_id().unwrap_or_default().to_string(), az)
        })
        .collect();
    ids.sort();
    ids
}

#[tokio::test]
async fn a_cluster_with_a_node_group_is_reachable_with_its_token_and_shows_one_node_per_moto_instance()
 {
    let dir = tempfile::tempdir().unwrap();
    let moto = Moto::start(&dir.path().join("logs")).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let assets = tokio::task::spawn_blocking(testbed::Assets::locate)
        .await
        .unwrap()
        .unwrap();
    let workload = Arc::new(
        WorkloadServers::new(
            assets,
            dir.path().join("workload"),
            format!("http://127.0.0.1:{port}/_emulator/tokenreview"),
        )
        .unwrap(),
    );
    let config = EksConfig {
        region: REGION.into(),
        account_id: "123456789012".into(),
        credentials: vec![(AKID.into(), SECRET.into())],
        workload: Some(workload.clone()),
        ec2_endpoint: Some(moto.url().to_string()),
        token_lifetime: emulators::eks::token::TOKEN_LIFETIME,
        cluster_quota: emulators::eks::CLUSTER_QUOTA,
        sts_endpoints: Vec::new(),
    };
    let timing = Timing {
        cluster: Delays::uniform(0.5),
        pool: Delays::uniform(0.5),
        addon: Delays::uniform(0.2),
        instance_shutdown: 0.5,
    };
    let server = serve_eks(config, timing, listener).await.unwrap();
    let eks = eks_client(server.url());
    let ec2 = ec2_client(moto.url());

    // A VPC with two subnets in two zones, in moto.
    let vpc = ec2
        .create_vpc()
        .cidr_block("10.0.0.0/16")
        .send()
        .await
        .unwrap();
    let vpc_id = vpc.vpc().unwrap().vpc_id().unwrap().to_string();
    let mut subnets = Vec::new();
    for (cidr, az) in [("10.0.1.0/24", "us-west-2a"), ("10.0.2.0/24", "us-west-2b")] {
        let s = ec2
            .create_subnet()
            .vpc_id(&vpc_id)
            .cidr_block(cidr)
            .availability_zone(az)
            .tag_specifications(
                TagSpecification::builder()
                    .resource_type(ResourceType::Subnet)
                    .tags(Tag::builder().key("Name").value(az).build())
                    .build(),
            )
            .send()
            .await
            .unwrap();
        subnets.push(s.subnet().unwrap().subnet_id().unwrap().to_string());
    }

    // The cluster: CREATING at first, ACTIVE once its API server is up.
    let created = eks
        .create_cluster()
        .name("e2e")
        .version("1.31")
        .role_arn("arn:aws:iam::123456789012:role/eks")
        .resources_vpc_config(
            VpcConfigRequest::builder()
                .set_subnet_ids(Some(subnets.clone()))
                .build(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(
        created.cluster().unwrap().status(),
        Some(&ClusterStatus::Creating)
    );
    eventually_true(
        "the cluster to be ACTIVE",
        Duration::from_secs(90),
        || async {
            eks.describe_cluster()
                .name("e2e")
                .send()
                .await
                .unwrap()
                .cluster()
                .unwrap()
                .status()
                == Some(&ClusterStatus::Active)
        },
    )
    .await;
    let cluster = eks
        .describe_cluster()
        .name("e2e")
        .send()
        .await
        .unwrap()
        .cluster
        .unwrap();
    // The cluster security group EKS made is in moto, tagged with the cluster's name.
    let cluster_group = cluster
        .resources_vpc_config()
        .and_then(|v| v.cluster_security_group_id())
        .expect("a cluster security group id")
        .to_string();
    let groups = ec2
        .describe_security_groups()
        .group_ids(&cluster_group)
        .send()
        .await
        .unwrap();
    let group = &groups.security_groups()[0];
    assert_eq!(group.vpc_id(), Some(vpc_id.as_str()));
    assert!(
        group
            .tags()
            .iter()
            .any(|t| t.key() == Some("aws:eks:cluster-name") && t.value() == Some("e2e")),
        "tagged aws:eks:cluster-name=e2e: {:?}",
        group.tags()
    );
    let endpoint = cluster.endpoint().unwrap().to_string();
    let ca_pem = {
        use base64::Engine as _;
        let data = cluster.certificate_authority().unwrap().data().unwrap();
        String::from_utf8(
            base64::engine::general_purpose::STANDARD
                .decode(data)
                .unwrap(),
        )
        .unwrap()
    };

    // Its API server accepts a token minted for it, and refuses one for another cluster or signed
    // with the wrong secret.
    let good = Mint {
        cluster: "e2e",
        ..Mint::default()
    }
    .token();
    let client = kube_client(&endpoint, &ca_pem, &good, dir.path()).await;
    let namespaces: Api<Namespace> = Api::all(client.clone());
    assert!(
        namespaces
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .iter()
            .any(|n| n.metadata.name.as_deref() == Some("default"))
    );
    for (what, bad) in [
        (
            "another cluster's token",
            Mint {
                cluster: "other",
                ..Mint::default()
            }
            .token(),
        ),
        (
            "a token with the wrong secret",
            Mint {
                cluster: "e2e",
                secret: "wrong",
                ..Mint::default()
            }
            .token(),
        ),
        (
            "an expired token",
            Mint {
                cluster: "e2e",
                at: SystemTime::now() - Duration::from_secs(16 * 60),
                ..Mint::default()
            }
            .token(),
        ),
    ] {
        let refused = kube_client(&endpoint, &ca_pem, &bad, dir.path()).await;
        match Api::<Namespace>::all(refused)
            .list(&ListParams::default())
            .await
        {
            Err(kube::Error::Api(status)) => assert_eq!(status.code, 401, "{what}"),
            other => panic!("{what} was not refused with 401: {other:?}"),
        }
    }

    // A node group of two: two instances in moto, tagged as EKS tags them, and two Ready Nodes
    // whose provider IDs name those instances.
    eks.create_nodegroup()
        .cluster_name("e2e")
        .nodegroup_name("ng1")
        .node_role("arn:aws:iam::123456789012:role/nodes")
        .set_subnets(Some(subnets.clone()))
        .scaling_config(
            NodegroupScalingConfig::builder()
                .min_size(0)
                .max_size(3)
                .desired_size(2)
                .build(),
        )
        .send()
        .await
        .unwrap();
    eventually_true(
        "the node group to be ACTIVE",
        Duration::from_secs(90),
        || async {
            eks.describe_nodegroup()
                .cluster_name("e2e")
                .nodegroup_name("ng1")
                .send()
                .await
                .unwrap()
                .nodegroup()
                .unwrap()
                .status()
                == Some(&NodegroupStatus::Active)
        },
    )
    .await;
    let nodes: Api<Node> = Api::all(client.clone());
    let provider_ids = |list: Vec<(String, String)>| -> Vec<String> {
        let mut ids: Vec<String> = list
            .into_iter()
            .map(|(id, az)| format!("aws:///{az}/{id}"))
            .collect();
        ids.sort();
        ids
    };
    let node_ids = || async {
        let mut ids: Vec<String> = nodes
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .into_iter()
            .filter_map(|n| n.spec.and_then(|s| s.provider_id))
            .collect();
        ids.sort();
        ids
    };
    let launched = instances(&ec2, "e2e", "ng1").await;
    assert_eq!(launched.len(), 2, "two instances in moto");
    // The node group's Auto Scaling group holds exactly those instances, with EKS's tags only.
    let asg_name = eks
        .describe_nodegroup()
        .cluster_name("e2e")
        .nodegroup_name("ng1")
        .send()
        .await
        .unwrap()
        .nodegroup()
        .and_then(|n| n.resources())
        .and_then(|r| r.auto_scaling_groups().first())
        .and_then(|g| g.name())
        .expect("an Auto Scaling group name")
        .to_string();
    let autoscaling = Ec2::new(moto.url(), REGION, AKID);
    let in_group = || async {
        let mut held = autoscaling
            .describe_auto_scaling_group(&asg_name)
            .await
            .unwrap()
            .map(|g| g.instances)
            .unwrap_or_default();
        held.sort();
        held
    };
    let mut expected = launched.clone();
    expected.sort();
    assert_eq!(in_group().await, expected, "the group holds the instances");
    let group = autoscaling
        .describe_auto_scaling_group(&asg_name)
        .await
        .unwrap()
        .unwrap();
    let mut keys: Vec<&str> = group.tags.iter().map(|(k, _)| k.as_str()).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "eks:cluster-name",
            "eks:nodegroup-name",
            "k8s.io/cluster-autoscaler/e2e",
            "k8s.io/cluster-autoscaler/enabled",
            "kubernetes.io/cluster/e2e"
        ]
    );
    eventually_true(
        "two Nodes matching the instances",
        Duration::from_secs(90),
        || async { node_ids().await == provider_ids(instances(&ec2, "e2e", "ng1").await) },
    )
    .await;

    // Scaling to one terminates an instance and removes its Node.
    eks.update_nodegroup_config()
        .cluster_name("e2e")
        .nodegroup_name("ng1")
        .scaling_config(
            NodegroupScalingConfig::builder()
                .min_size(0)
                .max_size(3)
                .desired_size(1)
                .build(),
        )
        .send()
        .await
        .unwrap();
    eventually_true(
        "one instance and one Node",
        Duration::from_secs(90),
        || async {
            let now = instances(&ec2, "e2e", "ng1").await;
            now.len() == 1 && node_ids().await == provider_ids(now)
        },
    )
    .await;
    // The terminated one left the group first (the group does not replace it).
    let mut now = instances(&ec2, "e2e", "ng1").await;
    now.sort();
    assert_eq!(in_group().await, now, "the group holds the one left");

    // Deleting the node group terminates its instances; then the cluster can go.
    eks.delete_nodegroup()
        .cluster_name("e2e")
        .nodegroup_name("ng1")
        .send()
        .await
        .unwrap();
    eventually_true(
        "the node group to be gone",
        Duration::from_secs(90),
        || async {
            eks.describe_nodegroup()
                .cluster_name("e2e")
                .nodegroup_name("ng1")
                .send()
                .await
                .is_err()
        },
    )
    .await;
    assert!(
        instances(&ec2, "e2e", "ng1").await.is_empty(),
        "instances terminated in moto"
    );
    assert_eq!(
        autoscaling
            .describe_auto_scaling_group(&asg_name)
            .await
            .unwrap(),
        None,
        "the Auto Scaling group went with the node group"
    );
    eks.delete_cluster().name("e2e").send().await.unwrap();
    eventually_true(
        "the cluster to be gone",
        Duration::from_secs(90),
        || async {
            eks.list_clusters()
                .send()
                .await
                .unwrap()
                .clusters()
                .is_empty()
        },
    )
    .await;
    let left = ec2
        .describe_security_groups()
        .filters(
            Filter::builder()
                .name("group-id")
                .values(&cluster_group)
                .build(),
        )
        .send()
        .await
        .unwrap();
    assert!(
        left.security_groups().is_empty(),
        "the cluster security group went with the cluster"
    );
    eventually_true(
        "its API server to stop",
        Duration::from_secs(90),
        || async { workload.running().is_empty() },
    )
    .await;

    server.shutdown().await;
    workload.shutdown().await;
    moto.stop().await;
}
