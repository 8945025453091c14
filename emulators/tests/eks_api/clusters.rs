//! Clusters: their round trip and lifecycle, the rules users trip on, a client request token
//! replayed, and the account's cluster quota.

use std::time::{Duration, SystemTime};

use aws_sdk_eks::error::ProvideErrorMetadata;
use aws_sdk_eks::types::{
    ClusterStatus, CreateAccessConfigRequest, LogSetup, LogType, Logging, NodegroupScalingConfig,
    NodegroupStatus, Taint, TaintEffect, VpcConfigRequest,
};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use emulators::eks::{EksConfig, serve_eks};
use emulators::kit::{Delays, Timing};

use crate::support::*;

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
