//! What the EKS API tests share: the in-process server, SDK clients, the error code of a failed
//! call, cluster and nodegroup creation, and waits for their states and instances.

use std::collections::BTreeMap;
use std::time::Duration;
use test_support::eventually_true;

use aws_sdk_eks::Client;
use aws_sdk_eks::config::retry::RetryConfig;
use aws_sdk_eks::config::{Builder, Credentials, Region};
use aws_sdk_eks::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_eks::types::{
    ClusterStatus, NodegroupScalingConfig, NodegroupStatus, VpcConfigRequest,
};
use emulators::eks::{EksConfig, ServerHandle, serve_eks};
use emulators::kit::{Delays, Timing};

pub(crate) const REGION: &str = "us-west-2";
pub(crate) const ACCOUNT: &str = "123456789012";
pub(crate) const AKID: &str = "AKIAEKSAPITEST000001";
pub(crate) const SECRET: &str = "eks-api-test-secret/aaaaaaaaaaaaaaaaaaaaaaa";
pub(crate) const AKID2: &str = "AKIAEKSAPITEST000002";
pub(crate) const SECRET2: &str = "eks-api-test-secret/bbbbbbbbbbbbbbbbbbbbbbb";
pub(crate) const ROLE: &str = "arn:aws:iam::123456789012:role/eks-cluster";
pub(crate) const NODE_ROLE: &str = "arn:aws:iam::123456789012:role/eks-node";

pub(crate) fn fast() -> Timing {
    Timing {
        cluster: Delays::uniform(0.3),
        pool: Delays::uniform(0.2),
        addon: Delays::uniform(0.1),
        instance_shutdown: 0.3,
    }
}

pub(crate) async fn start(timing: Timing) -> ServerHandle {
    let mut config = EksConfig::new(REGION, ACCOUNT);
    config.credentials = vec![(AKID.into(), SECRET.into()), (AKID2.into(), SECRET2.into())];
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    serve_eks(config, timing, listener).await.unwrap()
}

pub(crate) fn client_as(url: &str, akid: &str, secret: &str, retry: RetryConfig) -> Client {
    let conf = Builder::new()
        .behavior_version_latest()
        .endpoint_url(url)
        .region(Region::new(REGION))
        .credentials_provider(Credentials::new(akid, secret, None, None, "test"))
        .http_client(aws_smithy_http_client::Builder::new().build_http())
        .retry_config(retry)
        .build();
    Client::from_conf(conf)
}

/// A client without retries: every fault reaches the test.
pub(crate) fn client(url: &str) -> Client {
    client_as(url, AKID, SECRET, RetryConfig::disabled())
}

pub(crate) fn code<E: ProvideErrorMetadata + std::fmt::Debug, R: std::fmt::Debug>(
    r: Result<impl std::fmt::Debug, SdkError<E, R>>,
) -> String {
    match r {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => e
            .code()
            .unwrap_or_else(|| panic!("no error code in {e:?}"))
            .to_string(),
    }
}

pub(crate) fn message<E: ProvideErrorMetadata + std::fmt::Debug, R: std::fmt::Debug>(
    r: Result<impl std::fmt::Debug, SdkError<E, R>>,
) -> String {
    match r {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => e.message().unwrap_or_default().to_string(),
    }
}

pub(crate) fn vpc() -> VpcConfigRequest {
    VpcConfigRequest::builder()
        .subnet_ids("subnet-0aaa")
        .subnet_ids("subnet-0bbb")
        .build()
}

pub(crate) async fn create_cluster(
    c: &Client,
    name: &str,
    version: &str,
) -> aws_sdk_eks::types::Cluster {
    c.create_cluster()
        .name(name)
        .version(version)
        .role_arn(ROLE)
        .resources_vpc_config(vpc())
        .send()
        .await
        .unwrap()
        .cluster
        .unwrap()
}

pub(crate) async fn cluster_status(c: &Client, name: &str) -> Option<ClusterStatus> {
    c.describe_cluster()
        .name(name)
        .send()
        .await
        .ok()
        .and_then(|o| o.cluster)
        .and_then(|c| c.status)
}

pub(crate) async fn wait_cluster(c: &Client, name: &str, status: ClusterStatus) {
    eventually_true(
        &format!("cluster {name} {status:?}"),
        Duration::from_secs(15),
        || async { cluster_status(c, name).await == Some(status.clone()) },
    )
    .await;
}

pub(crate) async fn wait_cluster_gone(c: &Client, name: &str) {
    eventually_true(
        &format!("cluster {name} gone"),
        Duration::from_secs(15),
        || async {
            c.describe_cluster()
                .name(name)
                .send()
                .await
                .err()
                .and_then(|e| e.code().map(str::to_string))
                == Some("ResourceNotFoundException".into())
        },
    )
    .await;
}

pub(crate) async fn nodegroup_status(
    c: &Client,
    cluster: &str,
    ng: &str,
) -> Option<NodegroupStatus> {
    c.describe_nodegroup()
        .cluster_name(cluster)
        .nodegroup_name(ng)
        .send()
        .await
        .ok()
        .and_then(|o| o.nodegroup)
        .and_then(|n| n.status)
}

pub(crate) async fn wait_nodegroup(c: &Client, cluster: &str, ng: &str, status: NodegroupStatus) {
    eventually_true(
        &format!("nodegroup {ng} {status:?}"),
        Duration::from_secs(15),
        || async { nodegroup_status(c, cluster, ng).await == Some(status.clone()) },
    )
    .await;
}

pub(crate) async fn active_cluster(c: &Client, name: &str, version: &str) {
    create_cluster(c, name, version).await;
    wait_cluster(c, name, ClusterStatus::Active).await;
}

pub(crate) async fn create_nodegroup(c: &Client, cluster: &str, ng: &str, desired: i32) {
    c.create_nodegroup()
        .cluster_name(cluster)
        .nodegroup_name(ng)
        .node_role(NODE_ROLE)
        .subnets("subnet-0aaa")
        .subnets("subnet-0bbb")
        .scaling_config(
            NodegroupScalingConfig::builder()
                .min_size(1)
                .max_size(5)
                .desired_size(desired)
                .build(),
        )
        .send()
        .await
        .unwrap();
}

/// The instances that count toward the nodegroup's size (shutting-down ones left out).
pub(crate) fn instance_ids(s: &ServerHandle, cluster: &str, ng: &str) -> Vec<String> {
    s.eks().with_state(|st| {
        st.clusters
            .get(cluster)
            .and_then(|c| c.nodegroups.get(ng))
            .map(|n| {
                n.instances
                    .iter()
                    .filter(|i| !i.shutting_down)
                    .map(|i| i.id.clone())
                    .collect()
            })
            .unwrap_or_default()
    })
}

/// `GET /_emulator/instances`: provider ID → state.
pub(crate) async fn listed_instances(s: &ServerHandle) -> BTreeMap<String, String> {
    let text = emulators::kit::http_client(std::time::Duration::from_secs(30))
        .get(format!("{}/_emulator/instances", s.url()))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let body: serde_json::Value = serde_json::from_str(&text).unwrap();
    body["instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["providerID"].as_str().unwrap().to_string(),
                i["state"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}
