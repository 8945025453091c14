//! The EKS emulator driven by the AWS SDK for Rust (`aws-sdk-eks`), in-process on a loopback port,
//! without workload servers or moto: every emulated operation round-trips through the SDK's own
//! serializers and parsers, resources move through their lifecycles with short delays, the cloud's
//! rules answer with the exception names the SDK reports, and injected faults look to the SDK like
//! the real service's throttling, server errors, slow answers and dropped connections.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};
use test_support::eventually_true;

use aws_sdk_eks::Client;
use aws_sdk_eks::config::retry::RetryConfig;
use aws_sdk_eks::config::{Builder, Credentials, Region};
use aws_sdk_eks::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_eks::types::{
    AccessScope, AccessScopeType, AddonStatus, ClusterStatus, ConfigStatus,
    CreateAccessConfigRequest, IdentityProviderConfig, LogSetup, LogType, Logging,
    NodegroupScalingConfig, NodegroupStatus, OidcIdentityProviderConfigRequest, Taint, TaintEffect,
    UpdateLabelsPayload, UpdateParamType, UpdateStatus, UpdateTaintsPayload, UpdateType,
    VpcConfigRequest,
};
use aws_sigv4::http_request::{
    SignableBody, SignableRequest, SignatureLocation, SigningSettings, sign,
};
use aws_sigv4::sign::v4;
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use emulators::eks::{EksConfig, ServerHandle, serve_eks};
use emulators::kit::faults::{FaultKind, FaultRule, Trigger};
use emulators::kit::{Delays, Timing};

const REGION: &str = "us-west-2";
const ACCOUNT: &str = "123456789012";
const AKID: &str = "AKIAEKSAPITEST000001";
const SECRET: &str = "eks-api-test-secret/aaaaaaaaaaaaaaaaaaaaaaa";
const AKID2: &str = "AKIAEKSAPITEST000002";
const SECRET2: &str = "eks-api-test-secret/bbbbbbbbbbbbbbbbbbbbbbb";
const ROLE: &str = "arn:aws:iam::123456789012:role/eks-cluster";
const NODE_ROLE: &str = "arn:aws:iam::123456789012:role/eks-node";

fn fast() -> Timing {
    Timing {
        cluster: Delays::uniform(0.3),
        pool: Delays::uniform(0.2),
        addon: Delays::uniform(0.1),
        instance_shutdown: 0.3,
    }
}

async fn start(timing: Timing) -> ServerHandle {
    let mut config = EksConfig::new(REGION, ACCOUNT);
    config.credentials = vec![(AKID.into(), SECRET.into()), (AKID2.into(), SECRET2.into())];
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    serve_eks(config, timing, listener).await.unwrap()
}

fn client_as(url: &str, akid: &str, secret: &str, retry: RetryConfig) -> Client {
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
fn client(url: &str) -> Client {
    client_as(url, AKID, SECRET, RetryConfig::disabled())
}

fn code<E: ProvideErrorMetadata + std::fmt::Debug, R: std::fmt::Debug>(
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

fn message<E: ProvideErrorMetadata + std::fmt::Debug, R: std::fmt::Debug>(
    r: Result<impl std::fmt::Debug, SdkError<E, R>>,
) -> String {
    match r {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => e.message().unwrap_or_default().to_string(),
    }
}

fn vpc() -> VpcConfigRequest {
    VpcConfigRequest::builder()
        .subnet_ids("subnet-0aaa")
        .subnet_ids("subnet-0bbb")
        .build()
}

async fn create_cluster(c: &Client, name: &str, version: &str) -> aws_sdk_eks::types::Cluster {
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

async fn cluster_status(c: &Client, name: &str) -> Option<ClusterStatus> {
    c.describe_cluster()
        .name(name)
        .send()
        .await
        .ok()
        .and_then(|o| o.cluster)
        .and_then(|c| c.status)
}

async fn wait_cluster(c: &Client, name: &str, status: ClusterStatus) {
    eventually_true(
        &format!("cluster {name} {status:?}"),
        Duration::from_secs(15),
        || async { cluster_status(c, name).await == Some(status.clone()) },
    )
    .await;
}

async fn wait_cluster_gone(c: &Client, name: &str) {
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

async fn nodegroup_status(c: &Client, cluster: &str, ng: &str) -> Option<NodegroupStatus> {
    c.describe_nodegroup()
        .cluster_name(cluster)
        .nodegroup_name(ng)
        .send()
        .await
        .ok()
        .and_then(|o| o.nodegroup)
        .and_then(|n| n.status)
}

async fn wait_nodegroup(c: &Client, cluster: &str, ng: &str, status: NodegroupStatus) {
    eventually_true(
        &format!("nodegroup {ng} {status:?}"),
        Duration::from_secs(15),
        || async { nodegroup_status(c, cluster, ng).await == Some(status.clone()) },
    )
    .await;
}

async fn active_cluster(c: &Client, name: &str, version: &str) {
    create_cluster(c, name, version).await;
    wait_cluster(c, name, ClusterStatus::Active).await;
}

async fn create_nodegroup(c: &Client, cluster: &str, ng: &str, desired: i32) {
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
fn instance_ids(s: &ServerHandle, cluster: &str, ng: &str) -> Vec<String> {
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
async fn listed_instances(s: &ServerHandle) -> BTreeMap<String, String> {
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

#[tokio::test]
async fn a_scale_in_completes_while_its_instance_shuts_down_and_a_deletion_waits_for_it() {
    let s = start(Timing {
        instance_shutdown: 2.0,
        ..fast()
    })
    .await;
    let c = client(s.url());
    active_cluster(&c, "window", "1.31").await;
    create_nodegroup(&c, "window", "ng", 2).await;
    wait_nodegroup(&c, "window", "ng", NodegroupStatus::Active).await;
    let before = listed_instances(&s).await;
    assert_eq!(before.len(), 2, "{before:?}");
    assert!(before.values().all(|st| st == "running"), "{before:?}");
    assert!(
        before.keys().all(|id| id.starts_with("aws:///")),
        "{before:?}"
    );

    let update = c
        .update_nodegroup_config()
        .cluster_name("window")
        .nodegroup_name("ng")
        .scaling_config(
            NodegroupScalingConfig::builder()
                .min_size(1)
                .max_size(5)
                .desired_size(1)
                .build(),
        )
        .send()
        .await
        .unwrap()
        .update
        .unwrap();
    let id = update.id().unwrap().to_string();
    eventually_true("the scale-in update", Duration::from_secs(15), || async {
        c.describe_update()
            .name("window")
            .update_id(&id)
            .nodegroup_name("ng")
            .send()
            .await
            .unwrap()
            .update
            .and_then(|u| u.status)
            == Some(UpdateStatus::Successful)
    })
    .await;
    // The update is done and the nodegroup ACTIVE at its new size, while the instance it chose
    // to remove is still shutting down: a provider ID may not leave the list yet.
    assert_eq!(
        nodegroup_status(&c, "window", "ng").await,
        Some(NodegroupStatus::Active)
    );
    let during = listed_instances(&s).await;
    assert_eq!(during.len(), 2, "{during:?}");
    assert_eq!(
        during.values().filter(|st| *st == "shutting-down").count(),
        1,
        "{during:?}"
    );
    eventually_true(
        "the shutting-down instance to be gone",
        Duration::from_secs(10),
        || async { listed_instances(&s).await.len() == 1 },
    )
    .await;

    // A deletion: the nodegroup stays DELETING until its last instance has shut down.
    c.delete_nodegroup()
        .cluster_name("window")
        .nodegroup_name("ng")
        .send()
        .await
        .unwrap();
    eventually_true(
        "the instance to shut down",
        Duration::from_secs(10),
        || async {
            listed_instances(&s)
                .await
                .values()
                .any(|st| st == "shutting-down")
        },
    )
    .await;
    assert_eq!(
        nodegroup_status(&c, "window", "ng").await,
        Some(NodegroupStatus::Deleting),
        "a nodegroup with an instance still shutting down is not gone"
    );
    eventually_true(
        "the nodegroup to be gone",
        Duration::from_secs(10),
        || async { nodegroup_status(&c, "window", "ng").await.is_none() },
    )
    .await;
    assert!(listed_instances(&s).await.is_empty());
}

#[tokio::test]
async fn a_cluster_round_trips_and_goes_from_creating_to_active_only_after_its_delay() {
    let s = start(Timing {
        cluster: Delays::uniform(0.6),
        ..fast()
    })
    .await;
    let c = client(s.url());
    let before = SystemTime::now();
    let created = c
        .create_cluster()
        .name("demo")
        .version("1.31")
        .role_arn(ROLE)
        .resources_vpc_config(
            VpcConfigRequest::builder()
                .subnet_ids("subnet-0aaa")
                .subnet_ids("subnet-0bbb")
                .security_group_ids("sg-0123")
                .endpoint_public_access(true)
                .endpoint_private_access(true)
                .public_access_cidrs("203.0.113.0/24")
                .build(),
        )
        .logging(
            Logging::builder()
                .cluster_logging(
                    LogSetup::builder()
                        .types(LogType::Api)
                        .types(LogType::Audit)
                        .enabled(true)
                        .build(),
                )
                .build(),
        )
        .access_config(
            CreateAccessConfigRequest::builder()
                .authentication_mode("API".into())
                .build(),
        )
        .tags("owner", "capi")
        .send()
        .await
        .unwrap()
        .cluster
        .unwrap();
    assert_eq!(created.name(), Some("demo"));
    assert_eq!(
        created.arn(),
        Some("arn:aws:eks:us-west-2:123456789012:cluster/demo")
    );
    assert_eq!(created.version(), Some("1.31"));
    assert_eq!(created.role_arn(), Some(ROLE));
    assert_eq!(created.status(), Some(&ClusterStatus::Creating));
    assert_eq!(created.platform_version(), Some("eks.1"));
    assert!(
        created
            .client_request_token()
            .is_some_and(|t| !t.is_empty()),
        "the SDK sends a token and EKS echoes it"
    );
    let vpc = created.resources_vpc_config().unwrap();
    assert_eq!(vpc.subnet_ids(), ["subnet-0aaa", "subnet-0bbb"]);
    assert_eq!(vpc.security_group_ids(), ["sg-0123"]);
    assert!(vpc.endpoint_public_access() && vpc.endpoint_private_access());
    assert_eq!(vpc.public_access_cidrs(), ["203.0.113.0/24"]);
    assert!(vpc.cluster_security_group_id().unwrap().starts_with("sg-"));
    assert!(vpc.vpc_id().unwrap().starts_with("vpc-"));
    let logging = created.logging().unwrap().cluster_logging();
    let enabled: Vec<&LogType> = logging
        .iter()
        .filter(|l| l.enabled() == Some(true))
        .flat_map(|l| l.types())
        .collect();
    assert_eq!(enabled, [&LogType::Api, &LogType::Audit]);
    assert_eq!(
        created.tags().unwrap().get("owner").map(String::as_str),
        Some("capi")
    );
    let access = created.access_config().unwrap();
    assert_eq!(
        access.authentication_mode().map(|m| m.as_str()),
        Some("API")
    );
    assert_eq!(
        access.bootstrap_cluster_creator_admin_permissions(),
        Some(true)
    );
    assert_eq!(
        created
            .kubernetes_network_config()
            .unwrap()
            .service_ipv4_cidr(),
        Some("10.100.0.0/16")
    );
    let issuer = created
        .identity()
        .unwrap()
        .oidc()
        .unwrap()
        .issuer()
        .unwrap()
        .to_string();
    let id = issuer
        .strip_prefix("https://oidc.eks.us-west-2.amazonaws.com/id/")
        .unwrap();
    assert!(
        id.len() == 32
            && id
                .chars()
                .all(|ch| ch.is_ascii_hexdigit() && !ch.is_ascii_lowercase()),
        "{issuer}"
    );
    let at = SystemTime::try_from(*created.created_at().unwrap()).unwrap();
    assert!(
        at + Duration::from_secs(5) >= before && at <= SystemTime::now() + Duration::from_secs(5)
    );
    assert_eq!(created.endpoint(), None, "no endpoint while creating");

    let described = c
        .describe_cluster()
        .name("demo")
        .send()
        .await
        .unwrap()
        .cluster
        .unwrap();
    assert_eq!(described.status(), Some(&ClusterStatus::Creating));
    assert_eq!(described.created_at(), created.created_at());
    assert_eq!(described.identity(), created.identity());
    assert_eq!(c.list_clusters().send().await.unwrap().clusters(), ["demo"]);

    wait_cluster(&c, "demo", ClusterStatus::Active).await;
    assert!(
        before.elapsed().unwrap() >= Duration::from_millis(550),
        "ACTIVE only after the create delay"
    );
    let active = c
        .describe_cluster()
        .name("demo")
        .send()
        .await
        .unwrap()
        .cluster
        .unwrap();
    assert_eq!(
        active.endpoint(),
        Some(format!("https://{id}.gr7.us-west-2.eks.amazonaws.com").as_str())
    );
    let ca = STANDARD
        .decode(active.certificate_authority().unwrap().data().unwrap())
        .unwrap();
    assert!(
        String::from_utf8(ca)
            .unwrap()
            .starts_with("-----BEGIN CERTIFICATE-----")
    );

    c.delete_cluster().name("demo").send().await.unwrap();
    assert_eq!(
        cluster_status(&c, "demo").await,
        Some(ClusterStatus::Deleting)
    );
    wait_cluster_gone(&c, "demo").await;
    assert!(
        c.list_clusters()
            .send()
            .await
            .unwrap()
            .clusters()
            .is_empty()
    );
    s.shutdown().await;
}

#[tokio::test]
async fn the_rules_users_trip_on_answer_with_the_eks_exceptions() {
    let s = start(fast()).await;
    let c = client(s.url());
    let bad_name = c
        .create_cluster()
        .name("-bad")
        .role_arn(ROLE)
        .resources_vpc_config(vpc())
        .send()
        .await;
    assert_eq!(code(bad_name), "InvalidParameterException");
    let long = c
        .create_cluster()
        .name("a".repeat(101))
        .role_arn(ROLE)
        .resources_vpc_config(vpc())
        .send()
        .await;
    assert_eq!(code(long), "InvalidParameterException");
    assert_eq!(
        code(
            c.create_cluster()
                .name("norole")
                .resources_vpc_config(vpc())
                .send()
                .await
        ),
        "InvalidParameterException"
    );
    let one_subnet = c
        .create_cluster()
        .name("one")
        .role_arn(ROLE)
        .resources_vpc_config(
            VpcConfigRequest::builder()
                .subnet_ids("subnet-0aaa")
                .build(),
        )
        .send()
        .await;
    assert_eq!(
        message(one_subnet),
        "Subnets specified must be in at least two different AZs"
    );
    let old = c
        .create_cluster()
        .name("old")
        .version("1.20")
        .role_arn(ROLE)
        .resources_vpc_config(vpc())
        .send()
        .await;
    assert_eq!(code(old), "InvalidParameterException");

    let created = c
        .create_cluster()
        .name("a".repeat(100))
        .role_arn(ROLE)
        .resources_vpc_config(vpc())
        .send()
        .await
        .unwrap();
    assert_eq!(
        created.cluster().unwrap().version(),
        Some("1.34"),
        "the newest supported version is the default"
    );
    create_cluster(&c, "dup", "1.31").await;
    let again = c
        .create_cluster()
        .name("dup")
        .version("1.31")
        .role_arn(ROLE)
        .resources_vpc_config(vpc())
        .send()
        .await;
    let err = again.unwrap_err();
    assert_eq!(err.code(), Some("ResourceInUseException"));
    assert!(
        err.as_service_error()
            .unwrap()
            .is_resource_in_use_exception()
    );
    assert_eq!(err.message(), Some("Cluster already exists with name: dup"));

    let missing = c.describe_cluster().name("nope").send().await.unwrap_err();
    assert!(
        missing
            .as_service_error()
            .unwrap()
            .is_resource_not_found_exception()
    );
    assert_eq!(missing.message(), Some("No cluster found for name: nope."));
    assert_eq!(missing.raw_response().unwrap().status().as_u16(), 404);
    assert_eq!(
        missing
            .raw_response()
            .unwrap()
            .headers()
            .get("x-amzn-errortype"),
        Some("ResourceNotFoundException")
    );

    // A nodegroup only on an ACTIVE cluster.
    let early = c
        .create_nodegroup()
        .cluster_name("dup")
        .nodegroup_name("ng")
        .node_role(NODE_ROLE)
        .subnets("subnet-0aaa")
        .send()
        .await;
    assert_eq!(message(early), "Cluster 'dup' is not in ACTIVE status");
    wait_cluster(&c, "dup", ClusterStatus::Active).await;
    let ng = |name: &str, min: i32, desired: i32, max: i32| {
        c.create_nodegroup()
            .cluster_name("dup")
            .nodegroup_name(name)
            .node_role(NODE_ROLE)
            .subnets("subnet-0aaa")
            .scaling_config(
                NodegroupScalingConfig::builder()
                    .min_size(min)
                    .desired_size(desired)
                    .max_size(max)
                    .build(),
            )
            .send()
    };
    assert_eq!(
        message(ng("ng", 3, 2, 5).await),
        "Minimum capacity 3 can't be greater than desired size 2"
    );
    assert_eq!(code(ng("ng", 1, 6, 5).await), "InvalidParameterException");
    assert_eq!(code(ng("ng", 0, 0, 0).await), "InvalidParameterException");
    assert_eq!(
        code(ng(&"n".repeat(64), 1, 1, 1).await),
        "InvalidParameterException"
    );
    let bad_taint = c
        .create_nodegroup()
        .cluster_name("dup")
        .nodegroup_name("tainted")
        .node_role(NODE_ROLE)
        .subnets("subnet-0aaa")
        .taints(
            Taint::builder()
                .key("k")
                .effect(TaintEffect::from("NO_WAY"))
                .build(),
        )
        .send()
        .await;
    assert_eq!(code(bad_taint), "InvalidParameterException");
    let ahead = c
        .create_nodegroup()
        .cluster_name("dup")
        .nodegroup_name("ahead")
        .node_role(NODE_ROLE)
        .subnets("subnet-0aaa")
        .version("1.32")
        .send()
        .await;
    assert_eq!(code(ahead), "InvalidParameterException");
    ng(&"n".repeat(63), 1, 1, 1).await.unwrap();
    assert_eq!(
        code(ng(&"n".repeat(63), 1, 1, 1).await),
        "ResourceInUseException"
    );
    let missing_ng = c
        .describe_nodegroup()
        .cluster_name("dup")
        .nodegroup_name("ghost")
        .send()
        .await;
    assert_eq!(message(missing_ng), "No node group found for name: ghost.");
    s.shutdown().await;
}

#[tokio::test]
async fn cluster_versions_step_one_minor_at_a_time_and_one_update_runs_at_once() {
    let s = start(fast()).await;
    let c = client(s.url());
    let creating = create_cluster(&c, "up", "1.30").await;
    assert_eq!(creating.version(), Some("1.30"));
    assert_eq!(
        code(
            c.update_cluster_version()
                .name("up")
                .version("1.31")
                .send()
                .await
        ),
        "ResourceInUseException"
    );
    wait_cluster(&c, "up", ClusterStatus::Active).await;

    let skip = c
        .update_cluster_version()
        .name("up")
        .version("1.32")
        .send()
        .await;
    let err = skip.unwrap_err();
    assert!(
        err.as_service_error()
            .unwrap()
            .is_invalid_parameter_exception()
    );
    assert_eq!(
        err.message(),
        Some("Unsupported Kubernetes minor version update from 1.30 to 1.32")
    );
    assert_eq!(
        code(
            c.update_cluster_version()
                .name("up")
                .version("1.29")
                .send()
                .await
        ),
        "InvalidParameterException"
    );

    let update = c
        .update_cluster_version()
        .name("up")
        .version("1.31")
        .send()
        .await
        .unwrap()
        .update
        .unwrap();
    assert_eq!(update.status(), Some(&UpdateStatus::InProgress));
    assert_eq!(update.r#type(), Some(&UpdateType::VersionUpdate));
    let version_param = update
        .params()
        .iter()
        .find(|p| p.r#type() == Some(&UpdateParamType::Version))
        .unwrap();
    assert_eq!(version_param.value(), Some("1.31"));
    let during = c
        .describe_cluster()
        .name("up")
        .send()
        .await
        .unwrap()
        .cluster
        .unwrap();
    assert_eq!(during.status(), Some(&ClusterStatus::Updating));
    assert_eq!(
        during.version(),
        Some("1.30"),
        "the version changes when the update completes"
    );

    let second = c
        .update_cluster_version()
        .name("up")
        .version("1.31")
        .send()
        .await
        .unwrap_err();
    assert!(
        second
            .as_service_error()
            .unwrap()
            .is_resource_in_use_exception()
    );
    let id = update.id().unwrap().to_string();
    assert!(
        second.message().unwrap().contains(&id),
        "{:?}",
        second.message()
    );
    let logging = Logging::builder()
        .cluster_logging(
            LogSetup::builder()
                .types(LogType::Audit)
                .enabled(true)
                .build(),
        )
        .build();
    assert_eq!(
        code(
            c.update_cluster_config()
                .name("up")
                .logging(logging)
                .send()
                .await
        ),
        "ResourceInUseException"
    );

    eventually_true(
        "the version update to succeed",
        Duration::from_secs(15),
        || async {
            let u = c
                .describe_update()
                .name("up")
                .update_id(&id)
                .send()
                .await
                .unwrap()
                .update
                .unwrap();
            u.status() == Some(&UpdateStatus::Successful)
        },
    )
    .await;
    let after = c
        .describe_cluster()
        .name("up")
        .send()
        .await
        .unwrap()
        .cluster
        .unwrap();
    assert_eq!(
        (after.version(), after.status()),
        (Some("1.31"), Some(&ClusterStatus::Active))
    );
    assert_eq!(
        c.list_updates()
            .name("up")
            .send()
            .await
            .unwrap()
            .update_ids(),
        [id.as_str()]
    );
    assert_eq!(
        code(
            c.describe_update()
                .name("up")
                .update_id("nope")
                .send()
                .await
        ),
        "ResourceNotFoundException"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn update_cluster_config_merges_and_its_updates_are_listed() {
    let s = start(fast()).await;
    let c = client(s.url());
    c.create_cluster()
        .name("cfg")
        .role_arn(ROLE)
        .resources_vpc_config(
            VpcConfigRequest::builder()
                .subnet_ids("subnet-0aaa")
                .subnet_ids("subnet-0bbb")
                .endpoint_private_access(true)
                .public_access_cidrs("198.51.100.0/24")
                .build(),
        )
        .send()
        .await
        .unwrap();
    wait_cluster(&c, "cfg", ClusterStatus::Active).await;

    let empty = c.update_cluster_config().name("cfg").send().await;
    assert_eq!(code(empty), "InvalidParameterException");
    let both = c
        .update_cluster_config()
        .name("cfg")
        .logging(
            Logging::builder()
                .cluster_logging(
                    LogSetup::builder()
                        .types(LogType::Api)
                        .enabled(true)
                        .build(),
                )
                .build(),
        )
        .resources_vpc_config(
            VpcConfigRequest::builder()
                .endpoint_public_access(false)
                .build(),
        )
        .send()
        .await;
    assert_eq!(message(both), "Only one type of update can be allowed.");
    let nothing = c
        .update_cluster_config()
        .name("cfg")
        .logging(
            Logging::builder()
                .cluster_logging(
                    LogSetup::builder()
                        .types(LogType::Api)
                        .enabled(false)
                        .build(),
                )
                .build(),
        )
        .send()
        .await;
    assert_eq!(
        message(nothing),
        "No changes needed for the logging config provided"
    );

    let logging = c
        .update_cluster_config()
        .name("cfg")
        .logging(
            Logging::builder()
                .cluster_logging(
                    LogSetup::builder()
                        .types(LogType::Api)
                        .types(LogType::Scheduler)
                        .enabled(true)
                        .build(),
                )
                .build(),
        )
        .send()
        .await
        .unwrap()
        .update
        .unwrap();
    assert_eq!(logging.r#type(), Some(&UpdateType::LoggingUpdate));
    assert_eq!(
        logging.params()[0].r#type(),
        Some(&UpdateParamType::ClusterLogging)
    );
    assert_eq!(
        cluster_status(&c, "cfg").await,
        Some(ClusterStatus::Updating)
    );
    wait_cluster(&c, "cfg", ClusterStatus::Active).await;
    let cluster = c
        .describe_cluster()
        .name("cfg")
        .send()
        .await
        .unwrap()
        .cluster
        .unwrap();
    let vpc = cluster.resources_vpc_config().unwrap();
    assert!(
        vpc.endpoint_public_access() && vpc.endpoint_private_access(),
        "endpoint access untouched by a logging update"
    );
    assert_eq!(vpc.public_access_cidrs(), ["198.51.100.0/24"]);
    let enabled: Vec<&LogType> = cluster
        .logging()
        .unwrap()
        .cluster_logging()
        .iter()
        .filter(|l| l.enabled() == Some(true))
        .flat_map(|l| l.types())
        .collect();
    assert_eq!(enabled, [&LogType::Api, &LogType::Scheduler]);

    let same = c
        .update_cluster_config()
        .name("cfg")
        .resources_vpc_config(
            VpcConfigRequest::builder()
                .endpoint_private_access(true)
                .build(),
        )
        .send()
        .await;
    assert!(message(same).starts_with("Cluster is already at the desired configuration"));
    let none = c
        .update_cluster_config()
        .name("cfg")
        .resources_vpc_config(
            VpcConfigRequest::builder()
                .endpoint_public_access(false)
                .endpoint_private_access(false)
                .build(),
        )
        .send()
        .await;
    assert_eq!(code(none), "InvalidParameterException");
    let endpoint = c
        .update_cluster_config()
        .name("cfg")
        .resources_vpc_config(
            VpcConfigRequest::builder()
                .endpoint_public_access(false)
                .build(),
        )
        .send()
        .await
        .unwrap()
        .update
        .unwrap();
    assert_eq!(endpoint.r#type(), Some(&UpdateType::EndpointAccessUpdate));
    let id = endpoint.id().unwrap().to_string();
    eventually_true("the endpoint update", Duration::from_secs(15), || async {
        c.describe_update()
            .name("cfg")
            .update_id(&id)
            .send()
            .await
            .unwrap()
            .update
            .unwrap()
            .status()
            == Some(&UpdateStatus::Successful)
    })
    .await;
    let cluster = c
        .describe_cluster()
        .name("cfg")
        .send()
        .await
        .unwrap()
        .cluster
        .unwrap();
    let vpc = cluster.resources_vpc_config().unwrap();
    assert!(!vpc.endpoint_public_access() && vpc.endpoint_private_access());
    assert_eq!(
        vpc.public_access_cidrs(),
        ["198.51.100.0/24"],
        "unspecified fields are unchanged"
    );
    let enabled = cluster
        .logging()
        .unwrap()
        .cluster_logging()
        .iter()
        .filter(|l| l.enabled() == Some(true))
        .count();
    assert_eq!(enabled, 1, "logging untouched by an endpoint update");

    let ids = c
        .list_updates()
        .name("cfg")
        .send()
        .await
        .unwrap()
        .update_ids()
        .to_vec();
    assert_eq!(ids, [logging.id().unwrap().to_string(), id.clone()]);
    let page = c
        .list_updates()
        .name("cfg")
        .max_results(1)
        .send()
        .await
        .unwrap();
    assert_eq!(page.update_ids(), [logging.id().unwrap()]);
    let rest = c
        .list_updates()
        .name("cfg")
        .max_results(1)
        .next_token(page.next_token().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(
        (rest.update_ids(), rest.next_token()),
        ([id.clone()].as_slice(), None)
    );

    let auth = c
        .update_cluster_config()
        .name("cfg")
        .access_config(
            aws_sdk_eks::types::UpdateAccessConfigRequest::builder()
                .authentication_mode("API".into())
                .build(),
        )
        .send()
        .await
        .unwrap()
        .update
        .unwrap();
    assert_eq!(auth.r#type(), Some(&UpdateType::AccessConfigUpdate));
    wait_cluster(&c, "cfg", ClusterStatus::Active).await;
    let back = c
        .update_cluster_config()
        .name("cfg")
        .access_config(
            aws_sdk_eks::types::UpdateAccessConfigRequest::builder()
                .authentication_mode("CONFIG_MAP".into())
                .build(),
        )
        .send()
        .await;
    assert_eq!(code(back), "InvalidParameterException");
    s.shutdown().await;
}

#[tokio::test]
async fn nodegroups_scale_relabel_upgrade_and_block_cluster_deletion() {
    let s = start(fast()).await;
    let c = client(s.url());
    active_cluster(&c, "pools", "1.30").await;
    let created = c
        .create_nodegroup()
        .cluster_name("pools")
        .nodegroup_name("workers")
        .node_role(NODE_ROLE)
        .subnets("subnet-0aaa")
        .subnets("subnet-0bbb")
        .instance_types("m5.large")
        .scaling_config(
            NodegroupScalingConfig::builder()
                .min_size(1)
                .max_size(4)
                .desired_size(2)
                .build(),
        )
        .labels("tier", "web")
        .labels("stale", "yes")
        .taints(
            Taint::builder()
                .key("dedicated")
                .value("web")
                .effect(TaintEffect::NoSchedule)
                .build(),
        )
        .tags("team", "platform")
        .send()
        .await
        .unwrap()
        .nodegroup
        .unwrap();
    assert_eq!(created.status(), Some(&NodegroupStatus::Creating));
    assert_eq!(
        created.version(),
        Some("1.30"),
        "the cluster's version when none is given"
    );
    assert!(created.release_version().unwrap().starts_with("1.30."));
    let arn = created.nodegroup_arn().unwrap();
    assert!(
        arn.starts_with("arn:aws:eks:us-west-2:123456789012:nodegroup/pools/workers/"),
        "{arn}"
    );
    assert_eq!(created.instance_types(), ["m5.large"]);
    assert_eq!(
        created.capacity_type().map(|t| t.as_str()),
        Some("ON_DEMAND")
    );
    assert_eq!(created.taints()[0].effect(), Some(&TaintEffect::NoSchedule));
    assert_eq!(
        created.labels().unwrap().get("tier").map(String::as_str),
        Some("web")
    );
    assert_eq!(created.scaling_config().unwrap().desired_size(), Some(2));
    assert!(
        created.resources().unwrap().auto_scaling_groups()[0]
            .name()
            .unwrap()
            .starts_with("eks-workers-")
    );

    wait_nodegroup(&c, "pools", "workers", NodegroupStatus::Active).await;
    let ids = instance_ids(&s, "pools", "workers");
    assert_eq!(
        ids.len(),
        2,
        "an ACTIVE nodegroup has desiredSize instances"
    );
    assert!(
        ids.iter().all(|i| i.len() == 19 && i.starts_with("i-")),
        "{ids:?}"
    );

    let lopsided = c
        .update_nodegroup_config()
        .cluster_name("pools")
        .nodegroup_name("workers")
        .scaling_config(NodegroupScalingConfig::builder().min_size(3).build())
        .send()
        .await;
    assert_eq!(
        message(lopsided),
        "Minimum capacity 3 can't be greater than desired size 2"
    );

    let update = c
        .update_nodegroup_config()
        .cluster_name("pools")
        .nodegroup_name("workers")
        .scaling_config(NodegroupScalingConfig::builder().desired_size(3).build())
        .labels(
            UpdateLabelsPayload::builder()
                .add_or_update_labels("zone-pinned", "true")
                .remove_labels("stale")
                .build(),
        )
        .taints(
            UpdateTaintsPayload::builder()
                .add_or_update_taints(
                    Taint::builder()
                        .key("gpu")
                        .effect(TaintEffect::PreferNoSchedule)
                        .build(),
                )
                .remove_taints(
                    Taint::builder()
                        .key("dedicated")
                        .value("web")
                        .effect(TaintEffect::NoSchedule)
                        .build(),
                )
                .build(),
        )
        .send()
        .await
        .unwrap()
        .update
        .unwrap();
    assert_eq!(update.r#type(), Some(&UpdateType::ConfigUpdate));
    let desired = update
        .params()
        .iter()
        .find(|p| p.r#type() == Some(&UpdateParamType::DesiredSize))
        .unwrap();
    assert_eq!(desired.value(), Some("3"));
    assert_eq!(
        nodegroup_status(&c, "pools", "workers").await,
        Some(NodegroupStatus::Updating)
    );
    let busy = c
        .update_nodegroup_config()
        .cluster_name("pools")
        .nodegroup_name("workers")
        .scaling_config(NodegroupScalingConfig::builder().desired_size(1).build())
        .send()
        .await;
    assert_eq!(code(busy), "ResourceInUseException");
    let id = update.id().unwrap().to_string();
    let listed = c
        .list_updates()
        .name("pools")
        .nodegroup_name("workers")
        .send()
        .await
        .unwrap();
    assert_eq!(listed.update_ids(), [id.as_str()]);
    assert!(
        c.list_updates()
            .name("pools")
            .send()
            .await
            .unwrap()
            .update_ids()
            .is_empty(),
        "nodegroup updates are not cluster updates"
    );
    assert_eq!(
        code(
            c.describe_update()
                .name("pools")
                .update_id(&id)
                .send()
                .await
        ),
        "ResourceNotFoundException"
    );
    eventually_true(
        "the nodegroup config update",
        Duration::from_secs(15),
        || async {
            let u = c
                .describe_update()
                .name("pools")
                .update_id(&id)
                .nodegroup_name("workers")
                .send()
                .await
                .unwrap()
                .update
                .unwrap();
            u.status() == Some(&UpdateStatus::Successful)
        },
    )
    .await;
    let ng = c
        .describe_nodegroup()
        .cluster_name("pools")
        .nodegroup_name("workers")
        .send()
        .await
        .unwrap()
        .nodegroup
        .unwrap();
    assert_eq!(ng.status(), Some(&NodegroupStatus::Active));
    assert_eq!(ng.scaling_config().unwrap().desired_size(), Some(3));
    assert_eq!(
        ng.scaling_config().unwrap().min_size(),
        Some(1),
        "merged with the current scaling"
    );
    let labels = ng.labels().unwrap();
    assert_eq!(
        (
            labels.get("zone-pinned").map(String::as_str),
            labels.get("stale")
        ),
        (Some("true"), None)
    );
    assert_eq!(ng.taints().len(), 1);
    assert_eq!(ng.taints()[0].key(), Some("gpu"));
    let scaled = instance_ids(&s, "pools", "workers");
    assert_eq!(scaled.len(), 3);
    assert!(
        ids.iter().all(|i| scaled.contains(i)),
        "scaling out keeps the existing instances"
    );

    // Versions: never ahead of the cluster; the cluster waits for its nodegroups.
    let ahead = c
        .update_nodegroup_version()
        .cluster_name("pools")
        .nodegroup_name("workers")
        .version("1.31")
        .send()
        .await;
    assert_eq!(code(ahead), "InvalidParameterException");
    c.update_cluster_version()
        .name("pools")
        .version("1.31")
        .send()
        .await
        .unwrap();
    wait_cluster(&c, "pools", ClusterStatus::Active).await;
    let blocked = c
        .update_cluster_version()
        .name("pools")
        .version("1.32")
        .send()
        .await;
    assert!(
        message(blocked)
            .starts_with("Nodegroups workers must be updated to match cluster version 1.31")
    );
    let upgrade = c
        .update_nodegroup_version()
        .cluster_name("pools")
        .nodegroup_name("workers")
        .send()
        .await
        .unwrap()
        .update
        .unwrap();
    assert_eq!(upgrade.r#type(), Some(&UpdateType::VersionUpdate));
    let version = upgrade
        .params()
        .iter()
        .find(|p| p.r#type() == Some(&UpdateParamType::Version))
        .unwrap();
    assert_eq!(
        version.value(),
        Some("1.31"),
        "the cluster's version when none is given"
    );
    wait_nodegroup(&c, "pools", "workers", NodegroupStatus::Active).await;
    eventually_true(
        "the nodegroup version update",
        Duration::from_secs(15),
        || async {
            let ng = c
                .describe_nodegroup()
                .cluster_name("pools")
                .nodegroup_name("workers")
                .send()
                .await
                .unwrap()
                .nodegroup
                .unwrap();
            ng.version() == Some("1.31")
        },
    )
    .await;
    let replaced = instance_ids(&s, "pools", "workers");
    assert_eq!(replaced.len(), 3);
    assert!(
        replaced.iter().all(|i| !scaled.contains(i)),
        "a version update replaces the instances"
    );

    // Paging and deletion order.
    create_nodegroup(&c, "pools", "batch", 1).await;
    let page = c
        .list_nodegroups()
        .cluster_name("pools")
        .max_results(1)
        .send()
        .await
        .unwrap();
    assert_eq!(page.nodegroups(), ["batch"]);
    let rest = c
        .list_nodegroups()
        .cluster_name("pools")
        .next_token(page.next_token().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(rest.nodegroups(), ["workers"]);
    let refused = c.delete_cluster().name("pools").send().await.unwrap_err();
    assert_eq!(refused.code(), Some("ResourceInUseException"));
    assert_eq!(refused.message(), Some("Cluster has nodegroups attached"));
    for ng in ["batch", "workers"] {
        let deleting = c
            .delete_nodegroup()
            .cluster_name("pools")
            .nodegroup_name(ng)
            .send()
            .await
            .unwrap()
            .nodegroup
            .unwrap();
        assert_eq!(deleting.status(), Some(&NodegroupStatus::Deleting));
    }
    eventually_true("the nodegroups to go", Duration::from_secs(15), || async {
        c.list_nodegroups()
            .cluster_name("pools")
            .send()
            .await
            .unwrap()
            .nodegroups()
            .is_empty()
    })
    .await;
    c.delete_cluster().name("pools").send().await.unwrap();
    wait_cluster_gone(&c, "pools").await;
    s.shutdown().await;
}

#[tokio::test]
async fn addons_install_update_and_delete_from_a_catalog_per_kubernetes_minor() {
    let s = start(fast()).await;
    let c = client(s.url());
    let versions = c
        .describe_addon_versions()
        .kubernetes_version("1.31")
        .addon_name("kube-proxy")
        .send()
        .await
        .unwrap();
    let info = &versions.addons()[0];
    assert_eq!(
        (info.addon_name(), info.r#type(), info.owner()),
        (Some("kube-proxy"), Some("networking"), Some("aws"))
    );
    let v = &info.addon_versions()[0];
    assert_eq!(v.addon_version(), Some("v1.31.13-eksbuild.2"));
    assert_eq!(v.compatibilities()[0].cluster_version(), Some("1.31"));
    assert!(v.compatibilities()[0].default_version());
    let all = c
        .describe_addon_versions()
        .kubernetes_version("1.33")
        .send()
        .await
        .unwrap();
    let names: Vec<&str> = all.addons().iter().filter_map(|a| a.addon_name()).collect();
    assert_eq!(
        names,
        ["vpc-cni", "coredns", "kube-proxy", "aws-ebs-csi-driver"]
    );
    let paged = c
        .describe_addon_versions()
        .max_results(2)
        .send()
        .await
        .unwrap();
    assert_eq!(paged.addons().len(), 2);
    assert!(paged.next_token().is_some());

    active_cluster(&c, "adds", "1.31").await;
    let addon = c
        .create_addon()
        .cluster_name("adds")
        .addon_name("coredns")
        .tags("a", "b")
        .send()
        .await
        .unwrap()
        .addon
        .unwrap();
    assert_eq!(addon.status(), Some(&AddonStatus::Creating));
    assert_eq!(
        addon.addon_version(),
        Some("v1.11.4-eksbuild.14"),
        "the default for 1.31"
    );
    assert!(
        addon
            .addon_arn()
            .unwrap()
            .starts_with("arn:aws:eks:us-west-2:123456789012:addon/adds/coredns/")
    );
    assert_eq!(
        code(
            c.create_addon()
                .cluster_name("adds")
                .addon_name("coredns")
                .send()
                .await
        ),
        "ResourceInUseException"
    );
    assert_eq!(
        message(
            c.create_addon()
                .cluster_name("adds")
                .addon_name("not-an-addon")
                .send()
                .await
        ),
        "Addon specified is not supported"
    );
    let wrong = c
        .create_addon()
        .cluster_name("adds")
        .addon_name("kube-proxy")
        .addon_version("v1.33.5-eksbuild.2")
        .send()
        .await;
    assert_eq!(message(wrong), "Addon version specified is not supported");
    assert_eq!(
        code(
            c.describe_addon()
                .cluster_name("adds")
                .addon_name("vpc-cni")
                .send()
                .await
        ),
        "ResourceNotFoundException"
    );
    eventually_true("coredns ACTIVE", Duration::from_secs(15), || async {
        c.describe_addon()
            .cluster_name("adds")
            .addon_name("coredns")
            .send()
            .await
            .unwrap()
            .addon
            .unwrap()
            .status()
            == Some(&AddonStatus::Active)
    })
    .await;

    let update = c
        .update_addon()
        .cluster_name("adds")
        .addon_name("coredns")
        .addon_version("v1.11.3-eksbuild.2")
        .resolve_conflicts("OVERWRITE".into())
        .send()
        .await
        .unwrap()
        .update
        .unwrap();
    assert_eq!(update.r#type(), Some(&UpdateType::AddonUpdate));
    assert_eq!(
        code(
            c.update_addon()
                .cluster_name("adds")
                .addon_name("coredns")
                .send()
                .await
        ),
        "ResourceInUseException"
    );
    let id = update.id().unwrap().to_string();
    assert_eq!(
        c.list_updates()
            .name("adds")
            .addon_name("coredns")
            .send()
            .await
            .unwrap()
            .update_ids(),
        [id.as_str()]
    );
    eventually_true("the add-on update", Duration::from_secs(15), || async {
        let u = c
            .describe_update()
            .name("adds")
            .update_id(&id)
            .addon_name("coredns")
            .send()
            .await
            .unwrap()
            .update
            .unwrap();
        u.status() == Some(&UpdateStatus::Successful)
    })
    .await;
    let updated = c
        .describe_addon()
        .cluster_name("adds")
        .addon_name("coredns")
        .send()
        .await
        .unwrap()
        .addon
        .unwrap();
    assert_eq!(updated.addon_version(), Some("v1.11.3-eksbuild.2"));
    c.create_addon()
        .cluster_name("adds")
        .addon_name("vpc-cni")
        .send()
        .await
        .unwrap();
    assert_eq!(
        c.list_addons()
            .cluster_name("adds")
            .send()
            .await
            .unwrap()
            .addons(),
        ["coredns", "vpc-cni"]
    );
    let deleting = c
        .delete_addon()
        .cluster_name("adds")
        .addon_name("coredns")
        .send()
        .await
        .unwrap()
        .addon
        .unwrap();
    assert_eq!(deleting.status(), Some(&AddonStatus::Deleting));
    eventually_true("coredns gone", Duration::from_secs(15), || async {
        c.list_addons()
            .cluster_name("adds")
            .send()
            .await
            .unwrap()
            .addons()
            == ["vpc-cni"]
    })
    .await;
    s.shutdown().await;
}

#[tokio::test]
async fn access_entries_and_oidc_identity_providers_round_trip() {
    let s = start(fast()).await;
    let c = client(s.url());
    active_cluster(&c, "auth", "1.32").await;
    let role = "arn:aws:iam::123456789012:role/ops";
    let entry = c
        .create_access_entry()
        .cluster_name("auth")
        .principal_arn(role)
        .kubernetes_groups("ops-team")
        .tags("k", "v")
        .send()
        .await
        .unwrap()
        .access_entry
        .unwrap();
    assert_eq!(entry.principal_arn(), Some(role));
    assert_eq!(entry.kubernetes_groups(), ["ops-team"]);
    assert_eq!(
        entry.username(),
        Some("arn:aws:sts::123456789012:assumed-role/ops/{{SessionName}}")
    );
    assert_eq!(entry.r#type(), Some("STANDARD"));
    assert!(entry.access_entry_arn().unwrap().starts_with(
        "arn:aws:eks:us-west-2:123456789012:access-entry/auth/role/123456789012/ops/"
    ));
    assert_eq!(
        code(
            c.create_access_entry()
                .cluster_name("auth")
                .principal_arn(role)
                .send()
                .await
        ),
        "ResourceInUseException"
    );
    let bad = c
        .create_access_entry()
        .cluster_name("auth")
        .principal_arn("arn:aws:iam::1:role/x")
        .send()
        .await;
    assert_eq!(
        message(bad),
        "The specified principalArn is invalid: invalid principal."
    );
    let masters = c
        .create_access_entry()
        .cluster_name("auth")
        .principal_arn("arn:aws:iam::123456789012:user/x")
        .kubernetes_groups("system:masters")
        .send()
        .await;
    assert_eq!(code(masters), "InvalidParameterException");
    let described = c
        .describe_access_entry()
        .cluster_name("auth")
        .principal_arn(role)
        .send()
        .await
        .unwrap()
        .access_entry
        .unwrap();
    assert_eq!(described, entry);
    assert_eq!(
        c.list_access_entries()
            .cluster_name("auth")
            .send()
            .await
            .unwrap()
            .access_entries(),
        [role]
    );
    let associated = c
        .associate_access_policy()
        .cluster_name("auth")
        .principal_arn(role)
        .policy_arn("arn:aws:eks::aws:cluster-access-policy/AmazonEKSViewPolicy")
        .access_scope(
            AccessScope::builder()
                .r#type(AccessScopeType::Namespace)
                .namespaces("apps")
                .build(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(associated.principal_arn(), Some(role));
    let policy = associated.associated_access_policy().unwrap();
    assert_eq!(policy.access_scope().unwrap().namespaces(), ["apps"]);
    let filtered = c
        .list_access_entries()
        .cluster_name("auth")
        .associated_policy_arn("arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy")
        .send()
        .await
        .unwrap();
    assert!(filtered.access_entries().is_empty());
    c.delete_access_entry()
        .cluster_name("auth")
        .principal_arn(role)
        .send()
        .await
        .unwrap();
    let gone = c
        .describe_access_entry()
        .cluster_name("auth")
        .principal_arn(role)
        .send()
        .await;
    assert!(message(gone).starts_with("The specified principalArn could not be found."));

    let oidc = OidcIdentityProviderConfigRequest::builder()
        .identity_provider_config_name("dex")
        .issuer_url("https://dex.example.com")
        .client_id("kubernetes")
        .username_claim("email")
        .groups_claim("groups")
        .required_claims("hd", "example.com")
        .build()
        .unwrap();
    let assoc = c
        .associate_identity_provider_config()
        .cluster_name("auth")
        .oidc(oidc.clone())
        .tags("idp", "dex")
        .send()
        .await
        .unwrap();
    let update = assoc.update().unwrap();
    assert_eq!(
        update.r#type(),
        Some(&UpdateType::AssociateIdentityProviderConfig)
    );
    assert_eq!(
        assoc.tags().unwrap().get("idp").map(String::as_str),
        Some("dex")
    );
    assert_eq!(
        cluster_status(&c, "auth").await,
        Some(ClusterStatus::Updating)
    );
    let reference = IdentityProviderConfig::builder()
        .r#type("oidc")
        .name("dex")
        .build()
        .unwrap();
    let creating = c
        .describe_identity_provider_config()
        .cluster_name("auth")
        .identity_provider_config(reference.clone())
        .send()
        .await
        .unwrap();
    let config = creating.identity_provider_config().unwrap().oidc().unwrap();
    assert_eq!(config.status(), Some(&ConfigStatus::Creating));
    assert_eq!(config.issuer_url(), Some("https://dex.example.com"));
    assert_eq!(
        config
            .required_claims()
            .unwrap()
            .get("hd")
            .map(String::as_str),
        Some("example.com")
    );
    wait_cluster(&c, "auth", ClusterStatus::Active).await;
    let active = c
        .describe_identity_provider_config()
        .cluster_name("auth")
        .identity_provider_config(reference.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(
        active
            .identity_provider_config()
            .unwrap()
            .oidc()
            .unwrap()
            .status(),
        Some(&ConfigStatus::Active)
    );
    let listed = c
        .list_identity_provider_configs()
        .cluster_name("auth")
        .send()
        .await
        .unwrap();
    assert_eq!(
        listed.identity_provider_configs(),
        std::slice::from_ref(&reference)
    );
    let dis = c
        .disassociate_identity_provider_config()
        .cluster_name("auth")
        .identity_provider_config(reference.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(
        dis.update().unwrap().r#type(),
        Some(&UpdateType::DisassociateIdentityProviderConfig)
    );
    wait_cluster(&c, "auth", ClusterStatus::Active).await;
    assert!(
        c.list_identity_provider_configs()
            .cluster_name("auth")
            .send()
            .await
            .unwrap()
            .identity_provider_configs()
            .is_empty()
    );
    let missing = c
        .describe_identity_provider_config()
        .cluster_name("auth")
        .identity_provider_config(reference)
        .send()
        .await;
    assert_eq!(code(missing), "ResourceNotFoundException");
    s.shutdown().await;
}

#[tokio::test]
async fn tags_work_on_cluster_nodegroup_and_addon_arns() {
    let s = start(fast()).await;
    let c = client(s.url());
    active_cluster(&c, "tagged", "1.33").await;
    create_nodegroup(&c, "tagged", "ng", 1).await;
    let addon = c
        .create_addon()
        .cluster_name("tagged")
        .addon_name("vpc-cni")
        .send()
        .await
        .unwrap()
        .addon
        .unwrap();
    let ng = c
        .describe_nodegroup()
        .cluster_name("tagged")
        .nodegroup_name("ng")
        .send()
        .await
        .unwrap()
        .nodegroup
        .unwrap();
    let arns = [
        "arn:aws:eks:us-west-2:123456789012:cluster/tagged".to_string(),
        ng.nodegroup_arn().unwrap().to_string(),
        addon.addon_arn().unwrap().to_string(),
    ];
    for arn in &arns {
        c.tag_resource()
            .resource_arn(arn)
            .tags("env", "test")
            .tags("owner", "me")
            .send()
            .await
            .unwrap();
        c.untag_resource()
            .resource_arn(arn)
            .tag_keys("owner")
            .send()
            .await
            .unwrap();
        let tags = c
            .list_tags_for_resource()
            .resource_arn(arn)
            .send()
            .await
            .unwrap();
        assert_eq!(tags.tags().unwrap().len(), 1, "{arn}");
        assert_eq!(
            tags.tags().unwrap().get("env").map(String::as_str),
            Some("test")
        );
    }
    let described = c
        .describe_cluster()
        .name("tagged")
        .send()
        .await
        .unwrap()
        .cluster
        .unwrap();
    assert_eq!(
        described.tags().unwrap().get("env").map(String::as_str),
        Some("test")
    );
    let unknown = c
        .list_tags_for_resource()
        .resource_arn("arn:aws:eks:us-west-2:123456789012:cluster/nope")
        .send()
        .await;
    assert_eq!(code(unknown), "NotFoundException");
    let malformed = c
        .tag_resource()
        .resource_arn("not-an-arn")
        .tags("a", "b")
        .send()
        .await;
    assert_eq!(code(malformed), "BadRequestException");
    let reserved = c
        .tag_resource()
        .resource_arn(&arns[0])
        .tags("aws:x", "b")
        .send()
        .await;
    assert_eq!(code(reserved), "BadRequestException");
    s.shutdown().await;
}

#[tokio::test]
async fn a_client_request_token_replays_the_same_cluster_and_nodegroup() {
    let s = start(fast()).await;
    let c = client(s.url());
    let send = |token: &str, version: &str| {
        c.create_cluster()
            .name("idem")
            .version(version)
            .role_arn(ROLE)
            .resources_vpc_config(vpc())
            .client_request_token(token)
            .send()
    };
    let first = send("token-1", "1.31").await.unwrap().cluster.unwrap();
    let second = send("token-1", "1.31").await.unwrap().cluster.unwrap();
    assert_eq!(first.arn(), second.arn());
    assert_eq!(first.created_at(), second.created_at());
    assert_eq!(
        first.identity(),
        second.identity(),
        "the same cluster, not a second one"
    );
    assert_eq!(c.list_clusters().send().await.unwrap().clusters(), ["idem"]);
    let created = s.eks().with_state(|st| st.clusters.len());
    assert_eq!(created, 1);
    assert_eq!(
        code(send("token-1", "1.32").await),
        "InvalidParameterException"
    );
    assert_eq!(
        code(send("token-2", "1.31").await),
        "ResourceInUseException"
    );
    let calls = s.kit().calls.snapshot();
    assert_eq!(calls["CreateCluster"].get("ok"), Some(&2));
    assert_eq!(calls["CreateCluster"].get("error"), Some(&2));

    wait_cluster(&c, "idem", ClusterStatus::Active).await;
    let ng = |token: &str| {
        c.create_nodegroup()
            .cluster_name("idem")
            .nodegroup_name("ng")
            .node_role(NODE_ROLE)
            .subnets("subnet-0aaa")
            .client_request_token(token)
            .send()
    };
    let a = ng("ng-token").await.unwrap().nodegroup.unwrap();
    let b = ng("ng-token").await.unwrap().nodegroup.unwrap();
    assert_eq!(a.nodegroup_arn(), b.nodegroup_arn());
    let update = |token: &str, desired: i32| {
        c.update_nodegroup_config()
            .cluster_name("idem")
            .nodegroup_name("ng")
            .scaling_config(
                NodegroupScalingConfig::builder()
                    .desired_size(desired)
                    .build(),
            )
            .client_request_token(token)
            .send()
    };
    wait_nodegroup(&c, "idem", "ng", NodegroupStatus::Active).await;
    let u1 = update("u-token", 1).await.unwrap().update.unwrap();
    let u2 = update("u-token", 1).await.unwrap().update.unwrap();
    assert_eq!(u1.id(), u2.id(), "a replayed update is the same update");
    assert_eq!(
        code(update("u-token", 2).await),
        "InvalidParameterException"
    );
    s.shutdown().await;
}

fn rule(operation: &str, fault: FaultKind, count: u32) -> FaultRule {
    FaultRule {
        operation: operation.into(),
        fault,
        trigger: Trigger::Count(count),
    }
}

#[tokio::test]
async fn injected_faults_look_like_the_service_failing() {
    let s = start(fast()).await;
    let c = client(s.url());
    let kit = s.kit();

    // Throttling: 429, ThrottlingException, Retry-After.
    kit.faults.add(rule(
        "ListClusters",
        FaultKind::Throttle {
            retry_after_seconds: 7,
        },
        1,
    ));
    let throttled = c.list_clusters().send().await.unwrap_err();
    assert_eq!(throttled.code(), Some("ThrottlingException"));
    let raw = throttled.raw_response().unwrap();
    assert_eq!(raw.status().as_u16(), 429);
    assert_eq!(raw.headers().get("retry-after"), Some("7"));
    c.list_clusters().send().await.unwrap();

    // Server errors, per operation and count-limited.
    kit.faults.add(rule(
        "DescribeCluster",
        FaultKind::ServerError { status: 500 },
        2,
    ));
    kit.faults.add(rule(
        "ListNodegroups",
        FaultKind::ServerError { status: 503 },
        1,
    ));
    c.list_clusters().send().await.unwrap();
    for _ in 0..2 {
        let e = c.describe_cluster().name("x").send().await.unwrap_err();
        assert_eq!(e.code(), Some("ServerException"));
        assert_eq!(e.raw_response().unwrap().status().as_u16(), 500);
    }
    assert_eq!(
        code(c.describe_cluster().name("x").send().await),
        "ResourceNotFoundException",
        "the rule was spent"
    );
    let unavailable = c
        .list_nodegroups()
        .cluster_name("x")
        .send()
        .await
        .unwrap_err();
    assert_eq!(unavailable.code(), Some("ServiceUnavailableException"));
    assert_eq!(unavailable.raw_response().unwrap().status().as_u16(), 503);

    // Latency: slow, then served.
    kit.faults
        .add(rule("ListClusters", FaultKind::Latency { millis: 400 }, 1));
    let t = std::time::Instant::now();
    c.list_clusters().send().await.unwrap();
    assert!(t.elapsed() >= Duration::from_millis(400));

    // A dropped connection: the SDK reports a transport failure, not a service error.
    kit.faults.add(rule("ListAddons", FaultKind::Drop, 1));
    let dropped = c.list_addons().cluster_name("x").send().await.unwrap_err();
    assert!(
        matches!(
            dropped,
            SdkError::DispatchFailure(_) | SdkError::ResponseError(_)
        ),
        "expected a transport failure, got {dropped:?}"
    );

    let calls = kit.calls.snapshot();
    assert_eq!(calls["ListClusters"].get("fault"), Some(&1));
    assert_eq!(calls["ListClusters"].get("ok"), Some(&3));
    assert_eq!(calls["DescribeCluster"].get("fault"), Some(&2));
    assert_eq!(calls["DescribeCluster"].get("error"), Some(&1));
    assert_eq!(calls["ListAddons"].get("fault"), Some(&1));
    s.shutdown().await;
}

#[tokio::test]
async fn with_retries_the_sdk_recovers_from_a_single_503_and_a_throttle() {
    let s = start(fast()).await;
    let c = client_as(
        s.url(),
        AKID,
        SECRET,
        RetryConfig::standard()
            .with_max_attempts(3)
            .with_initial_backoff(Duration::from_millis(10)),
    );
    // Over the control endpoint, as an out-of-process test would.
    let http = emulators::kit::http_client(std::time::Duration::from_secs(30));
    let added = http
        .post(format!("{}/_emulator/faults", s.url()))
        .header("content-type", "application/json")
        .body(r#"{"operation":"ListClusters","fault":{"kind":"serverError","status":503},"trigger":{"count":1}}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(added.status().as_u16(), 204);
    c.list_clusters().send().await.unwrap();
    s.kit().faults.add(rule(
        "ListClusters",
        FaultKind::Throttle {
            retry_after_seconds: 1,
        },
        1,
    ));
    c.list_clusters().send().await.unwrap();
    let calls = s.kit().calls.snapshot();
    assert_eq!(calls["ListClusters"].get("fault"), Some(&2));
    assert_eq!(calls["ListClusters"].get("ok"), Some(&2));
    s.shutdown().await;
}

#[tokio::test]
async fn metrics_count_calls_and_every_error_is_json_with_an_error_type() {
    let s = start(fast()).await;
    let c = client(s.url());
    create_cluster(&c, "m", "1.34").await;
    let _ = c.describe_cluster().name("missing").send().await;
    let http = emulators::kit::http_client(std::time::Duration::from_secs(30));
    let metrics = http
        .get(format!("{}/metrics", s.url()))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains(
            r#"emulator_calls_total{cloud="eks",operation="CreateCluster",outcome="ok"} 1"#
        ),
        "{metrics}"
    );
    assert!(
        metrics.contains(
            r#"emulator_calls_total{cloud="eks",operation="DescribeCluster",outcome="error"} 1"#
        ),
        "{metrics}"
    );

    // Unsigned, unknown-path and wrongly signed requests: JSON errors with x-amzn-ErrorType.
    let unsigned = http
        .get(format!("{}/clusters", s.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(unsigned.status().as_u16(), 403);
    assert_eq!(
        unsigned.headers()["x-amzn-errortype"],
        "MissingAuthenticationTokenException"
    );
    let body: serde_json::Value = serde_json::from_str(&unsigned.text().await.unwrap()).unwrap();
    assert!(body["message"].is_string());
    let unknown = http
        .get(format!("{}/no/such/path", s.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status().as_u16(), 404);
    assert!(unknown.headers().contains_key("x-amzn-errortype"));
    let body: serde_json::Value = serde_json::from_str(&unknown.text().await.unwrap()).unwrap();
    assert!(body["message"].is_string());
    let wrong_secret = client_as(s.url(), AKID, "not-the-secret", RetryConfig::disabled());
    assert_eq!(
        code(wrong_secret.list_clusters().send().await),
        "InvalidSignatureException"
    );
    let stranger = client_as(
        s.url(),
        "AKIAUNKNOWN000000000",
        "x",
        RetryConfig::disabled(),
    );
    assert_eq!(
        code(stranger.list_clusters().send().await),
        "UnrecognizedClientException"
    );
    s.shutdown().await;
}

/// A token as `aws eks get-token` mints it, presigned with the AWS SDK's own SigV4 signer.
fn token(akid: &str, secret: &str, cluster: &str) -> String {
    let identity = Credentials::new(akid, secret, None, None, "test").into();
    let mut settings = SigningSettings::default();
    settings.signature_location = SignatureLocation::QueryParams;
    settings.expires_in = Some(Duration::from_secs(60));
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(REGION)
        .name("sts")
        .time(SystemTime::now())
        .settings(settings)
        .build()
        .unwrap()
        .into();
    let url = "https://sts.us-west-2.amazonaws.com/?Action=GetCallerIdentity&Version=2011-06-15";
    let signable = SignableRequest::new(
        "GET",
        url,
        [("x-k8s-aws-id", cluster)].into_iter(),
        SignableBody::Bytes(&[]),
    )
    .unwrap();
    let (instructions, _) = sign(signable, &params).unwrap().into_parts();
    let mut request = axum::http::Request::get(url).body(()).unwrap();
    instructions.apply_to_request_http1x(&mut request);
    format!(
        "k8s-aws-v1.{}",
        URL_SAFE_NO_PAD.encode(request.uri().to_string())
    )
}

async fn review(s: &ServerHandle, id: &str, token: &str) -> serde_json::Value {
    let body = serde_json::json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}});
    let response = emulators::kit::http_client(std::time::Duration::from_secs(30))
        .post(format!("{}/_emulator/tokenreview/{id}", s.url()))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let body: serde_json::Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    body["status"].clone()
}

#[tokio::test]
async fn tokens_authenticate_the_creator_and_principals_with_access_entries() {
    let s = start(fast()).await;
    let c = client(s.url());
    active_cluster(&c, "tok", "1.34").await;
    let id = s
        .eks()
        .with_state(|st| st.clusters["tok"].workload_id.clone());

    let creator = review(&s, &id, &token(AKID, SECRET, "tok")).await;
    assert_eq!(creator["authenticated"], true);
    assert_eq!(creator["user"]["username"], "kubernetes-admin");
    assert_eq!(
        creator["user"]["groups"],
        serde_json::json!(["system:masters"])
    );

    let other_cluster = review(&s, &id, &token(AKID, SECRET, "another")).await;
    assert_eq!(other_cluster["authenticated"], false);
    let stranger = review(&s, &id, &token(AKID2, SECRET2, "tok")).await;
    assert_eq!(
        stranger["authenticated"], false,
        "no access entry, not the creator"
    );

    let principal = format!("arn:aws:iam::123456789012:user/{AKID2}");
    c.create_access_entry()
        .cluster_name("tok")
        .principal_arn(&principal)
        .kubernetes_groups("devs")
        .send()
        .await
        .unwrap();
    let entry = review(&s, &id, &token(AKID2, SECRET2, "tok")).await;
    assert_eq!(entry["authenticated"], true);
    assert_eq!(entry["user"]["username"], principal.as_str());
    assert_eq!(entry["user"]["groups"], serde_json::json!(["devs"]));
    c.associate_access_policy()
        .cluster_name("tok")
        .principal_arn(&principal)
        .policy_arn("arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy")
        .access_scope(
            AccessScope::builder()
                .r#type(AccessScopeType::Cluster)
                .build(),
        )
        .send()
        .await
        .unwrap();
    let admin = review(&s, &id, &token(AKID2, SECRET2, "tok")).await;
    assert_eq!(
        admin["user"]["groups"],
        serde_json::json!(["devs", "system:masters"])
    );

    // Without bootstrap admin permissions the creator is nobody special.
    c.create_cluster()
        .name("nobootstrap")
        .role_arn(ROLE)
        .resources_vpc_config(vpc())
        .access_config(
            CreateAccessConfigRequest::builder()
                .bootstrap_cluster_creator_admin_permissions(false)
                .build(),
        )
        .send()
        .await
        .unwrap();
    let id2 = s
        .eks()
        .with_state(|st| st.clusters["nobootstrap"].workload_id.clone());
    assert_eq!(
        review(&s, &id2, &token(AKID, SECRET, "nobootstrap")).await["authenticated"],
        false
    );
    s.shutdown().await;
}

#[tokio::test]
async fn a_configured_token_lifetime_expires_tokens_after_it_not_after_fifteen_minutes() {
    let mut config = EksConfig::new(REGION, ACCOUNT);
    config.credentials = vec![(AKID.into(), SECRET.into())];
    config.token_lifetime = jiff::SignedDuration::from_secs(2);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let s = serve_eks(config, fast(), listener).await.unwrap();
    let c = client(s.url());
    active_cluster(&c, "ttl", "1.34").await;
    let id = s
        .eks()
        .with_state(|st| st.clusters["ttl"].workload_id.clone());

    let t = token(AKID, SECRET, "ttl");
    assert_eq!(review(&s, &id, &t).await["authenticated"], true);
    // The clock, moved by hand: good up to two seconds after X-Amz-Date (whole seconds).
    let now = jiff::Timestamp::now();
    assert!(s.eks().authenticate(&id, &t, now).is_ok());
    let expired = s
        .eks()
        .authenticate(&id, &t, now + jiff::SignedDuration::from_secs(4))
        .unwrap_err();
    assert!(expired.contains("expired"), "{expired}");
    assert!(expired.contains("2s after X-Amz-Date"), "{expired}");

    // And the real clock, through the token webhook workload API servers call.
    tokio::time::sleep(Duration::from_millis(3100)).await;
    let late = review(&s, &id, &t).await;
    assert_eq!(late["authenticated"], false);
    assert!(
        late["error"].as_str().unwrap().contains("expired"),
        "{late}"
    );
    let fresh = token(AKID, SECRET, "ttl");
    assert_eq!(review(&s, &id, &fresh).await["authenticated"], true);
    s.shutdown().await;
}

#[tokio::test]
async fn an_outside_scale_finds_the_pool_by_the_providers_tags_and_waits_for_the_update() {
    use emulators::eks::outside::{EksApi, ScaleRequest, scale_pool};

    let s = start(fast()).await;
    let c = client(s.url());
    let owner = |value: &str| {
        std::collections::HashMap::from([("capi-managed-eks".to_string(), value.to_string())])
    };
    // Ours (as the provider names and tags them), and a decoy tagged for another cluster.
    for (name, tag) in [("ns1-c1", "ns1_c1"), ("ns1-c2", "ns1_c2")] {
        c.create_cluster()
            .name(name)
            .version("1.34")
            .role_arn(ROLE)
            .resources_vpc_config(vpc())
            .set_tags(Some(owner(tag)))
            .send()
            .await
            .unwrap();
    }
    wait_cluster(&c, "ns1-c1", ClusterStatus::Active).await;
    c.create_nodegroup()
        .cluster_name("ns1-c1")
        .nodegroup_name("ns1-c1-pool-0")
        .node_role(NODE_ROLE)
        .subnets("subnet-0aaa")
        .subnets("subnet-0bbb")
        .scaling_config(
            NodegroupScalingConfig::builder()
                .min_size(0)
                .max_size(2)
                .desired_size(2)
                .build(),
        )
        .set_tags(Some(owner("ns1_c1")))
        .send()
        .await
        .unwrap();

    // Still CREATING: the resize waits for the node group, then for its update.
    let api = EksApi::new(s.url(), REGION, Some((AKID.into(), SECRET.into())));
    let request = ScaleRequest {
        namespace: "ns1".into(),
        cluster: "c1".into(),
        pool: "c1-pool-0".into(),
        nodegroup: None,
        replicas: 3,
    };
    let scaled = scale_pool(&api, &request, Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(
        (scaled.cluster.as_str(), scaled.nodegroup.as_str()),
        ("ns1-c1", "ns1-c1-pool-0")
    );
    assert_eq!((scaled.from, scaled.to), (2, 3));
    let ng = c
        .describe_nodegroup()
        .cluster_name("ns1-c1")
        .nodegroup_name("ns1-c1-pool-0")
        .send()
        .await
        .unwrap()
        .nodegroup
        .unwrap();
    let scaling = ng.scaling_config.unwrap();
    assert_eq!(
        (scaling.min_size, scaling.desired_size, scaling.max_size),
        (Some(0), Some(3), Some(3)),
        "the maximum moved with the desired size, the minimum did not"
    );
    assert_eq!(ng.status, Some(NodegroupStatus::Active));

    // The same size again changes nothing.
    let again = scale_pool(&api, &request, Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!((again.from, again.to), (3, 3));

    // A pool that does not exist, a cluster nobody owns, a caller EKS does not know.
    let missing = ScaleRequest {
        pool: "c1-pool-9".into(),
        ..request.clone()
    };
    let e = scale_pool(&api, &missing, Duration::from_secs(5))
        .await
        .unwrap_err();
    assert!(
        e.to_string().contains("no node group ns1-c1-pool-9"),
        "{e:#}"
    );
    let unowned = ScaleRequest {
        cluster: "c3".into(),
        ..request.clone()
    };
    let e = scale_pool(&api, &unowned, Duration::from_secs(5))
        .await
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("no EKS cluster is tagged capi-managed-eks=ns1_c3"),
        "{e:#}"
    );
    let stranger = EksApi::new(s.url(), REGION, Some((AKID.into(), "wrong".into())));
    let e = scale_pool(&stranger, &request, Duration::from_secs(5))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("InvalidSignatureException"), "{e:#}");
    s.shutdown().await;
}

#[tokio::test]
async fn a_node_group_of_an_instance_type_ec2_does_not_have_fails_with_its_health_issue() {
    let s = start(fast()).await;
    let c = client(s.url());
    active_cluster(&c, "types", "1.31").await;
    c.create_nodegroup()
        .cluster_name("types")
        .nodegroup_name("huge")
        .node_role(NODE_ROLE)
        .subnets("subnet-0aaa")
        .subnets("subnet-0bbb")
        .instance_types("m5.huge")
        .scaling_config(
            NodegroupScalingConfig::builder()
                .min_size(1)
                .max_size(2)
                .desired_size(1)
                .build(),
        )
        .send()
        .await
        .expect("EKS accepts the request; the launch fails later, as in EKS");
    wait_nodegroup(&c, "types", "huge", NodegroupStatus::CreateFailed).await;
    let ng = c
        .describe_nodegroup()
        .cluster_name("types")
        .nodegroup_name("huge")
        .send()
        .await
        .unwrap()
        .nodegroup
        .unwrap();
    let issues = ng.health().map(|h| h.issues()).unwrap_or_default();
    assert_eq!(issues.len(), 1, "{issues:?}");
    let issue = &issues[0];
    assert_eq!(
        issue.code().map(|c| c.as_str()),
        Some("NodeCreationFailure")
    );
    assert!(
        issue
            .message()
            .is_some_and(|m| m.contains("The instance type 'm5.huge' does not exist")),
        "{issue:?}"
    );
    assert!(instance_ids(&s, "types", "huge").is_empty());
    // A type EC2 has launches as before.
    create_nodegroup(&c, "types", "fine", 1).await;
    wait_nodegroup(&c, "types", "fine", NodegroupStatus::Active).await;
    s.shutdown().await;
}

#[tokio::test]
async fn a_create_beyond_the_accounts_cluster_quota_fails_as_eks_fails_it() {
    let mut config = EksConfig::new(REGION, ACCOUNT);
    config.credentials = vec![(AKID.into(), SECRET.into())];
    config.cluster_quota = 1;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let server = serve_eks(config, fast(), listener).await.unwrap();
    let c = client(server.url());
    create_cluster(&c, "first", "1.31").await;
    let second = c
        .create_cluster()
        .name("second")
        .version("1.31")
        .role_arn(ROLE)
        .resources_vpc_config(vpc())
        .send()
        .await;
    let err = second.unwrap_err();
    assert_eq!(err.code(), Some("ResourceLimitExceededException"));
    assert_eq!(err.message(), Some("Cluster limit exceeded for account."));
    // The quota counts clusters, not attempts: once the first is gone, the second fits.
    c.delete_cluster().name("first").send().await.unwrap();
    wait_cluster_gone(&c, "first").await;
    create_cluster(&c, "second", "1.31").await;
}
