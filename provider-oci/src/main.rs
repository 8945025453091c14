//! `provider-oci`: the Cluster API provider for Oracle Container Engine for Kubernetes
//! (clusterctl name `oke`).

use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use provider_oci::api::{OKECluster, OKEControlPlane, OKEMachinePool};
use provider_oci::client::install_crypto;
use provider_oci::reconcile::{cluster, control_plane, machine_pool};
use provider_oci::scope::{PROVIDER, Shared};
use provider_runtime::flags::parse_duration;
use provider_runtime::{CommonArgs, Operator, ProviderSpec};

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
    install_crypto();
    let cli = Cli::parse();
    let shared = Arc::new(Shared {
        poll_interval: cli.poll_interval,
        rest_interval: cli.common.rest_interval,
        token_lifetime: cli.token_lifetime,
        ..Shared::new(cli.oci_endpoint.as_deref())
    });
    Operator::new(ProviderSpec::new(PROVIDER), cli.common)
        .controller::<OKECluster, _>(cluster::reconciler(shared.clone()))
        .controller::<OKEControlPlane, _>(control_plane::reconciler(shared.clone()))
        .controller::<OKEMachinePool, _>(machine_pool::reconciler(shared))
        .run()
        .await
}
