//! `provider-azure`: the Cluster API provider for Azure Kubernetes Service (clusterctl name
//! `aks`).

use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use provider_azure::api::{AKSCluster, AKSControlPlane, AKSMachinePool};
use provider_azure::client::{DEFAULT_ENDPOINT, install_crypto};
use provider_azure::reconcile::{cluster, control_plane, machine_pool};
use provider_azure::scope::{PROVIDER, Shared};
use provider_runtime::flags::parse_duration;
use provider_runtime::{CommonArgs, Operator, ProviderSpec};

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
    install_crypto();
    let cli = Cli::parse();
    let shared = Arc::new(Shared {
        poll_interval: cli.poll_interval,
        rest_interval: cli.common.rest_interval,
        token_lifetime: cli.token_lifetime,
        ..Shared::new(cli.arm_endpoint.trim())
    });
    Operator::new(ProviderSpec::new(PROVIDER), cli.common)
        .controller::<AKSCluster, _>(cluster::reconciler(shared.clone()))
        .controller::<AKSControlPlane, _>(control_plane::reconciler(shared.clone()))
        .controller::<AKSMachinePool, _>(machine_pool::reconciler(shared))
        .run()
        .await
}
