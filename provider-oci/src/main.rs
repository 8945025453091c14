//! `provider-oci`: the Cluster API provider for Oracle Container Engine for Kubernetes
//! (clusterctl name `oke`).

use std::time::Duration;

use clap::Parser;
use provider_oci::reconcile::{cluster as ic, control_plane as cp, machine_pool as mp};
use provider_oci::scope::{PROVIDER, Shared};
use provider_runtime::flags::parse_duration;
use provider_runtime::pacing::Pacing;
use provider_runtime::{CommonArgs, serve};

/// Reconciles OKECluster, OKEControlPlane and OKEMachinePool for Cluster API.
#[derive(Parser)]
#[command(name = "provider-oci", version)]
struct Cli {
    #[command(flatten)]
    common: CommonArgs,
    /// How soon to look at a cluster again while OKE runs a work request on it.
    #[arg(long, env = "OKE_POLL_INTERVAL", default_value = "15s", value_parser = parse_duration)]
    poll_interval: Duration,
    /// How long a cluster accepts the kubeconfig Secret's token after its date (OCI: its five
    /// minutes of clock skew); the token is replaced when a third of it is left. Change it only
    /// for an emulator that accepts tokens for less.
    #[arg(long, env = "OKE_TOKEN_LIFETIME", default_value = "5m", value_parser = parse_duration)]
    token_lifetime: Duration,
    /// One endpoint for Container Engine, Core Services and Identity (an emulator); default
    /// OCI's public endpoints of each region.
    #[arg(long, env = "OCI_ENDPOINT")]
    oci_endpoint: Option<String>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let mut shared = Shared::new(cli.oci_endpoint.as_deref());
    shared.pacing = Pacing::from_flags(cli.poll_interval, &cli.common, cli.token_lifetime);
    let roles = (ic::reconciler, cp::reconciler, mp::reconciler);
    serve(PROVIDER, cli.common, shared, roles).await
}
