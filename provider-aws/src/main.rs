//! `provider-aws`: the Cluster API provider for Amazon EKS (clusterctl name `eks`).

use std::time::Duration;

use clap::Parser;
use provider_aws::reconcile::{cluster as ic, control_plane as cp, machine_pool as mp};
use provider_aws::scope::{PROVIDER, Shared};
use provider_runtime::flags::parse_duration;
use provider_runtime::pacing::Pacing;
use provider_runtime::{CommonArgs, serve};

/// Reconciles EKSCluster, EKSControlPlane and EKSMachinePool for Cluster API.
#[derive(Parser)]
#[command(name = "provider-aws", version)]
struct Cli {
    #[command(flatten)]
    common: CommonArgs,
    /// How soon to look at a cluster again while AWS is creating, updating or deleting it.
    #[arg(long, env = "EKS_POLL_INTERVAL", default_value = "30s", value_parser = parse_duration)]
    poll_interval: Duration,
    /// How long the workload cluster accepts an EKS token (EKS: 15m); the kubeconfig Secret's
    /// token is replaced when a third of it is left. Change it only for an emulator whose tokens
    /// live shorter.
    #[arg(long, env = "EKS_TOKEN_LIFETIME", default_value = "15m", value_parser = parse_token_lifetime)]
    token_lifetime: Duration,
}

/// A duration of at least three seconds (the refresh comes a third of it before expiry, and
/// tokens are dated to the second).
fn parse_token_lifetime(s: &str) -> Result<Duration, String> {
    let lifetime = parse_duration(s)?;
    if lifetime < Duration::from_secs(3) {
        return Err(format!("{s:?} is too short: at least 3s"));
    }
    Ok(lifetime)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let pacing = Pacing::from_flags(cli.poll_interval, &cli.common, cli.token_lifetime);
    let shared = Shared {
        pacing,
        ..Shared::default()
    };
    let roles = (ic::reconciler, cp::reconciler, mp::reconciler);
    serve(PROVIDER, cli.common, shared, roles).await
}
