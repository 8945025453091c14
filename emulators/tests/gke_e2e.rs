//! The GKE emulator with real workload API servers: each RUNNING cluster is a kube-apiserver
//! reached at the cluster's `endpoint` with the CA from `masterAuth`, accepting only OAuth access
//! tokens the emulator's token endpoint issued for an account of the cluster's project, and
//! showing one Ready Node per node-pool instance with the provider ID GKE's kubelets write.

#![allow(clippy::unwrap_used, clippy::expect_used, deprecated)]

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use emulators::gke::auth::{CLOUD_PLATFORM, JWT_BEARER};
use emulators::gke::{GkeConfig, ServiceAccountKey, serve_gke};
use emulators::kit::workload::WorkloadServers;
use emulators::kit::{Delays, Timing};
use google_cloud_container_v1::client::ClusterManager;
use google_cloud_container_v1::model::{self, Cluster, NodePool};
use k8s_openapi::api::core::v1::{Namespace, Node};
use kube::api::{Api, ListParams};
use serde_json::{Value, json};
use test_support::eventually_true;

const PROJECT: &str = "capi-gke-e2e";
const ZONE: &str = "europe-west4-b";

/// Exchanges a signed assertion at the token URI, as Google's OAuth clients do.
async fn access_token(key: &ServiceAccountKey) -> (u16, Value) {
    access_token_for(key, &key.token_uri).await
}

/// The same with another `aud` claim.
async fn access_token_for(key: &ServiceAccountKey, aud: &str) -> (u16, Value) {
    let now = jiff::Timestamp::now().as_second();
    let assertion = key
        .sign_jwt(&json!({
            "iss": key.client_email, "scope": CLOUD_PLATFORM, "aud": aud,
            "iat": now, "exp": now + 3600,
        }))
        .unwrap();
    let response = emulators::kit::http_client(std::time::Duration::from_secs(30))
        .post(&key.token_uri)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!(
            "grant_type={}&assertion={assertion}",
            JWT_BEARER.replace(':', "%3A")
        ))
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (
        status,
        serde_json::from_str(&response.text().await.unwrap()).unwrap(),
    )
}

async fn kube_client(
    server: &str,
    ca_pem: &str,
    token: &str,
    dir: &std::path::Path,
) -> kube::Client {
    let path = dir.join(format!("kubeconfig-{}", kit_hex()));
    testbed::write_kubeconfig(
        &path,
        server,
        ca_pem,
        &testbed::KubeconfigAuth::Token(token.to_string()),
    )
    .unwrap();
    testbed::client_from(&path).await.unwrap()
}

fn kit_hex() -> String {
    emulators::kit::random_hex(4)
}

#[tokio::test]
async fn a_running_cluster_is_reachable_with_an_access_token_of_its_project_and_shows_its_nodes() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let assets = tokio::task::spawn_blocking(testbed::Assets::locate)
        .await
        .unwrap()
        .unwrap();
    let workload = Arc::new(
        WorkloadServers::new(
            assets,
            dir.path().join("workload"),
            format!("{url}/_emulator/tokenreview"),
        )
        .unwrap(),
    );
    let key = ServiceAccountKey::generate(
        PROJECT,
        &format!("capg@{PROJECT}.iam.gserviceaccount.com"),
        &format!("{url}/token"),
    )
    .unwrap();
    let other = ServiceAccountKey::generate(
        "someone-else",
        "x@someone-else.iam.gserviceaccount.com",
        &format!("{url}/token"),
    )
    .unwrap();
    let config = GkeConfig {
        keys: vec![key.clone(), other.clone()],
        workload: Some(workload),
        ..GkeConfig::default()
    };
    let timing = Timing {
        cluster: Delays::uniform(0.5),
        pool: Delays::uniform(0.3),
        addon: Delays::uniform(0.2),
        instance_shutdown: 0.5,
    };
    let server = serve_gke(config, timing, listener).await.unwrap();
    let client = ClusterManager::builder()
        .with_endpoint(server.url())
        .with_credentials(
            google_cloud_auth::credentials::service_account::Builder::new(key.to_json())
                .build()
                .unwrap(),
        )
        .build()
        .await
        .unwrap();
    let parent = format!("projects/{PROJECT}/locations/{ZONE}");
    let name = format!("{parent}/clusters/e2e");
    client
        .create_cluster()
        .set_parent(&parent)
        .set_cluster(
            Cluster::new()
                .set_name("e2e")
                .set_node_pools([NodePool::new()
                    .set_name("workers")
                    .set_initial_node_count(2)]),
        )
        .send()
        .await
        .unwrap();
    let mut cluster = None;
    for _ in 0..600 {
        let c = client.get_cluster().set_name(&name).send().await.unwrap();
        if c.status == model::cluster::Status::Running {
            cluster = Some(c);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let cluster = cluster.expect("the cluster runs within a minute");
    assert!(
        cluster.endpoint.starts_with("127.0.0.1:"),
        "{}",
        cluster.endpoint
    );
    let ca = String::from_utf8(
        base64::engine::general_purpose::STANDARD
            .decode(&cluster.master_auth.as_ref().unwrap().cluster_ca_certificate)
            .unwrap(),
    )
    .unwrap();
    let endpoints = cluster.control_plane_endpoints_config.as_ref().unwrap();
    assert!(
        endpoints
            .dns_endpoint_config
            .as_ref()
            .unwrap()
            .endpoint
            .ends_with(".europe-west4.gke.goog")
    );
    let server_url = format!("https://{}", cluster.endpoint);

    let (status, token) = access_token(&key).await;
    assert_eq!(status, 200, "{token}");
    assert_eq!(token["token_type"], "Bearer");
    let token = token["access_token"].as_str().unwrap().to_string();
    let kube = kube_client(&server_url, &ca, &token, dir.path()).await;
    let nodes: Api<Node> = Api::all(kube.clone());
    eventually_true(
        "two Ready Nodes with GKE provider IDs",
        Duration::from_secs(60),
        || {
            let nodes = nodes.clone();
            async move {
                let Ok(list) = nodes.list(&ListParams::default()).await else {
                    return false;
                };
                list.items.len() == 2
                    && list.items.iter().all(|n| {
                        let id = n
                            .spec
                            .as_ref()
                            .and_then(|s| s.provider_id.clone())
                            .unwrap_or_default();
                        let name = n.metadata.name.clone().unwrap_or_default();
                        id == format!("gce://{PROJECT}/{ZONE}/{name}")
                            && n.metadata
                                .labels
                                .as_ref()
                                .and_then(|l| l.get("cloud.google.com/gke-nodepool"))
                                .map(String::as_str)
                                == Some("workers")
                    })
            }
        },
    )
    .await;
    // The token is the cluster's admin (IAM's container.admin, emulated as system:masters).
    Api::<Namespace>::all(kube)
        .list(&ListParams::default())
        .await
        .unwrap();

    // A self-signed JWT (what the Rust auth library sends to Google APIs), a token of another
    // project, and a made-up token are all refused by the cluster.
    let now = jiff::Timestamp::now().as_second();
    let jwt = key
        .sign_jwt(&json!({ "iss": key.client_email, "sub": key.client_email, "scope": CLOUD_PLATFORM, "iat": now, "exp": now + 600 }))
        .unwrap();
    let (_, foreign) = access_token(&other).await;
    for refused in [
        jwt,
        foreign["access_token"].as_str().unwrap().to_string(),
        "ya29.made-up".to_string(),
    ] {
        let kube = kube_client(&server_url, &ca, &refused, dir.path()).await;
        let e = Api::<Node>::all(kube)
            .list(&ListParams::default())
            .await
            .unwrap_err();
        assert!(matches!(&e, kube::Error::Api(s) if s.code == 401), "{e:?}");
    }

    // A bad assertion gets OAuth's error.
    let (status, body) = access_token_for(&key, "https://oauth2.googleapis.com/token").await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant")),
        "{body}"
    );
    server.shutdown().await;
}
