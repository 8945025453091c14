//! The harness the provider's integration tests share: polling, a test body run as a child
//! process beside moto, namespace and credential setup, the EKS emulator with workload API
//! servers, and the provider run in-process.
//!
//! The provider reads its AWS endpoints from `AWS_ENDPOINT_URL` (and `AWS_ENDPOINT_URL_EKS`),
//! which a test cannot set in its own process without `unsafe`; so a test that needs them starts
//! moto, then runs itself again as a child process with the variables set (see
//! [`run_in_child_with_moto`]), and the child does the work.

#![allow(dead_code)] // each test binary uses its own part of the harness
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::path::PathBuf;
use std::sync::Arc;

use clap::Parser;
use emulators::eks::{EksConfig, ServerHandle, serve_eks};
use emulators::kit::Timing;
use emulators::kit::workload::WorkloadServers;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::Api;
use kube::api::PostParams;
use provider_aws::scope::PROVIDER;
use provider_runtime::{CommonArgs, Operator, ProviderObject, ProviderSpec};
use serde_json::json;

pub use test_support::eventually;

/// A local port that was free a moment ago, outside the ephemeral range
/// ([`testbed::process::free_port`]).
pub fn free_port() -> u16 {
    testbed::process::free_port().unwrap()
}

/// The object's condition of type `type_`, if it has one.
pub fn condition<'a, K: ProviderObject>(object: &'a K, type_: &str) -> Option<&'a Condition> {
    contract::conditions::find_condition(object.conditions(), type_)
}

/// Whether this process is the child that runs the test body (`child_var` is set).
pub fn is_child(child_var: &str) -> bool {
    std::env::var_os(child_var).is_some()
}

/// The parent's side: starts moto (logging under a scratch directory named after `scratch`),
/// runs the test `test` of this binary again as a child process with `child_var` set, moto's URL
/// as `AWS_ENDPOINT_URL`, and `env` besides; fails if the child fails.
pub async fn run_in_child_with_moto(
    test: &str,
    child_var: &str,
    scratch: &str,
    env: &[(&str, String)],
) {
    let dir = std::env::temp_dir().join(format!("{scratch}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let moto = emulators::moto::Moto::start(&dir)
        .await
        .expect("moto starts");
    let status = tokio::process::Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(child_var, "1")
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .env("AWS_ENDPOINT_URL", moto.url())
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .status()
        .await
        .unwrap();
    moto.stop().await;
    assert!(
        status.success(),
        "the test body (run as a child process) failed: {status}"
    );
}

/// Creates an untagged VPC with the block `cidr`; returns its id.
pub async fn create_vpc(ec2: &aws_sdk_ec2::Client, cidr: &str) -> String {
    let out = ec2.create_vpc().cidr_block(cidr).send().await.unwrap();
    out.vpc().and_then(|v| v.vpc_id()).unwrap().to_string()
}

/// Creates an untagged subnet of `vpc` with the block `cidr` in `zone`; returns its id.
pub async fn create_subnet(ec2: &aws_sdk_ec2::Client, vpc: &str, cidr: &str, zone: &str) -> String {
    let out = ec2
        .create_subnet()
        .vpc_id(vpc)
        .cidr_block(cidr)
        .availability_zone(zone)
        .send()
        .await
        .unwrap();
    out.subnet()
        .and_then(|s| s.subnet_id())
        .unwrap()
        .to_string()
}

/// Creates the namespace `ns`.
pub async fn create_namespace(client: &kube::Client, ns: &str) {
    test_support::create_namespace(client, ns).await;
}

/// Creates the Secret `name` in `ns` holding the AWS access key, as `identityRef` reads it.
pub async fn create_credentials_secret(
    client: &kube::Client,
    ns: &str,
    name: &str,
    access_key_id: &str,
    secret_access_key: &str,
) {
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": ns},
        "stringData": {"AccessKeyID": access_key_id, "SecretAccessKey": secret_access_key},
    }))
    .unwrap();
    Api::<Secret>::namespaced(client.clone(), ns)
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
}

/// Serves the EKS emulator on `listener`, with real workload API servers (kept under
/// `workload_dir`) that accept the emulator's tokens.
pub async fn serve_eks_with_workloads(
    plane: &testbed::ManagementPlane,
    listener: tokio::net::TcpListener,
    workload_dir: PathBuf,
    mut config: EksConfig,
    timing: Timing,
) -> ServerHandle {
    let port = listener.local_addr().unwrap().port();
    let servers = WorkloadServers::new(
        plane.assets().clone(),
        workload_dir,
        format!("http://127.0.0.1:{port}/_emulator/tokenreview"),
    )
    .unwrap();
    config.workload = Some(Arc::new(servers));
    serve_eks(config, timing, listener).await.unwrap()
}

/// A client for the cluster a kubeconfig (YAML) describes.
pub async fn client_from_kubeconfig(yaml: &str) -> kube::Client {
    let kubeconfig = kube::config::Kubeconfig::from_yaml(yaml).unwrap();
    let config = kube::Config::from_custom_kubeconfig(
        kubeconfig,
        &kube::config::KubeConfigOptions::default(),
    )
    .await
    .unwrap();
    kube::Client::try_from(config).unwrap()
}

/// The provider, in-process, with the common `flags` and the reconcilers `register` adds; returns
/// its stop switch and its task.
pub fn spawn_provider(
    client: &kube::Client,
    flags: &[String],
    register: impl FnOnce(Operator) -> Operator,
) -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<anyhow::Result<()>>,
) {
    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        common: CommonArgs,
    }
    let args =
        Cli::parse_from(std::iter::once("provider-aws").chain(flags.iter().map(String::as_str)))
            .common;
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(
        register(Operator::new(ProviderSpec::new(PROVIDER), args)).run_with(
            client.clone(),
            async move {
                let _ = stop_rx.await;
            },
        ),
    );
    (stop_tx, task)
}
