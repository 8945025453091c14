//! Cluster updates: versions one minor at a time, one update at once, and UpdateClusterConfig
//! merged and listed.

use std::time::Duration;
use test_support::eventually_true;

use aws_sdk_eks::error::ProvideErrorMetadata;
use aws_sdk_eks::types::{
    ClusterStatus, LogSetup, LogType, Logging, UpdateParamType, UpdateStatus, UpdateType,
    VpcConfigRequest,
};

use crate::support::*;

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
