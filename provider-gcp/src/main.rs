//! `provider-gcp`: the Cluster API provider for Google Kubernetes Engine (clusterctl name `gke`).

use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use provider_gcp::api::{GKECluster, GKEControlPlane, GKEMachinePool};
use provider_gcp::client::{Endpoints, install_crypto};
use provider_gcp::reconcile::{cluster, control_plane, machine_pool};
use provider_gcp::scope::{PROVIDER, Shared};
use provider_runtime::flags::parse_duration;
use provider_runtime::{CommonArgs, Operator, ProviderSpec};

/// Reconciles GKECluster, GKEControlPlane and GKEMachinePool for Cluster API.
#[derive(Parser)]
#[command(name = "provider-gcp", version)]
struct Cli {
    #[command(flatten)]
    common: CommonArgs,
    /// How soon to look at a cluster again while GKE runs an operation on it.
    #[arg(long, env = "GKE_POLL_INTERVAL", default_value = "15s", value_parser = parse_duration)]
    poll_interval: Duration,
    /// How long the workload cluster accepts an access token (Google: 1h); the kubeconfig
    /// Secret's token is replaced when a third of it is left. Change it only for an emulator
    /// whose tokens live shorter.
    #[arg(long, env = "GKE_TOKEN_LIFETIME", default_value = "1h", value_parser = parse_duration)]
    token_lifetime: Duration,
    /// The Kubernetes Engine endpoint (default Google's); for emulators.
    #[arg(long, env = "GKE_CONTAINER_ENDPOINT")]
    container_endpoint: Option<String>,
    /// The Compute Engine endpoint (default Google's); for emulators.
    #[arg(long, env = "GKE_COMPUTE_ENDPOINT")]
    compute_endpoint: Option<String>,
}

/// Stack of each runtime thread. Google's generated request types are large (a `Cluster` is
/// several kilobytes, copied by value through its builders), and a debug build's frames overflow
/// tokio's default 2 MiB.
const THREAD_STACK: usize = 16 * 1024 * 1024;

fn main() -> anyhow::Result<()> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(THREAD_STACK)
        .build()?
        .block_on(run())
}

async fn run() -> anyhow::Result<()> {
    install_crypto();
    let cli = Cli::parse();
    let endpoints = Endpoints {
        container: cli.container_endpoint.filter(|e| !e.trim().is_empty()),
        compute: cli.compute_endpoint.filter(|e| !e.trim().is_empty()),
    };
    let shared = Arc::new(Shared {
        poll_interval: cli.poll_interval,
        rest_interval: cli.common.rest_interval,
        token_lifetime: cli.token_lifetime,
        ..Shared::new(endpoints)
    });
    Operator::new(ProviderSpec::new(PROVIDER), cli.common)
        .controller::<GKECluster, _>(cluster::reconciler(shared.clone()))
        .controller::<GKEControlPlane, _>(control_plane::reconciler(shared.clone()))
        .controller::<GKEMachinePool, _>(machine_pool::reconciler(shared))
        .run()
        .await
}
