//! `provider-azure`: the Cluster API provider for Azure Kubernetes Service (clusterctl name
//! `aks`).

use std::time::Duration;

use clap::Parser;
use provider_azure::client::DEFAULT_ENDPOINT;
use provider_azure::reconcile::{cluster as ic, control_plane as cp, machine_pool as mp};
use provider_azure::scope::{PROVIDER, Shared};
use provider_runtime::flags::parse_duration;
use provider_runtime::pacing::Pacing;
use provider_runtime::{CommonArgs, serve};

/// Reconciles AKSCluster, AKSControlPlane and AKSMachinePool for Cluster API.
#[derive(Parser)]
#[command(name = "provider-azure", version)]
struct Cli {
    #[command(flatten)]
    common: CommonArgs,
    /// How soon to look at a cluster again while AKS runs an operation on it.
    #[arg(long, env = "AKS_POLL_INTERVAL", default_value = "15s", value_parser = parse_duration)]
    poll_interval: Duration,
    /// How long the workload cluster accepts a Microsoft Entra token (Entra: about an hour);
    /// the kubeconfig Secret's token is replaced when a third of it is left. Change it only for
    /// an emulator whose tokens live shorter.
    #[arg(long, env = "AKS_TOKEN_LIFETIME", default_value = "1h", value_parser = parse_duration)]
    token_lifetime: Duration,
    /// Azure Resource Manager's endpoint (default Azure's public cloud); for emulators and
    /// sovereign clouds. Microsoft Entra ID's authority is AZURE_AUTHORITY_HOST.
    #[arg(long, env = "AKS_ARM_ENDPOINT", default_value = DEFAULT_ENDPOINT)]
    arm_endpoint: String,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let mut shared = Shared::new(cli.arm_endpoint.trim());
    shared.pacing = Pacing::from_flags(cli.poll_interval, &cli.common, cli.token_lifetime);
    let roles = (ic::reconciler, cp::reconciler, mp::reconciler);
    serve(PROVIDER, cli.common, shared, roles).await
}
