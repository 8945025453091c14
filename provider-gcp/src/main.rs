//! `provider-gcp`: the Cluster API provider for Google Kubernetes Engine (clusterctl name `gke`).

use std::time::Duration;

use clap::Parser;
use provider_gcp::client::Endpoints;
use provider_gcp::reconcile::{cluster as ic, control_plane as cp, machine_pool as mp};
use provider_gcp::scope::{PROVIDER, Shared};
use provider_runtime::flags::parse_duration;
use provider_runtime::pacing::Pacing;
use provider_runtime::{CommonArgs, serve};

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
    let cli = Cli::parse();
    let endpoints = Endpoints {
        container: cli.container_endpoint.filter(|e| !e.trim().is_empty()),
        compute: cli.compute_endpoint.filter(|e| !e.trim().is_empty()),
    };
    let mut shared = Shared::new(endpoints);
    shared.pacing = Pacing::from_flags(cli.poll_interval, &cli.common, cli.token_lifetime);
    let roles = (ic::reconciler, cp::reconciler, mp::reconciler);
    serve(PROVIDER, cli.common, shared, roles).await
}
