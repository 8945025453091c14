//! Injected faults as the SDK sees the service failing, the SDK's retries recovering, and the
//! call metrics and JSON errors.

use std::time::Duration;

use aws_sdk_eks::config::retry::RetryConfig;
use aws_sdk_eks::error::{ProvideErrorMetadata, SdkError};
use emulators::kit::faults::{FaultKind, FaultRule, Trigger};

use crate::support::*;

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
