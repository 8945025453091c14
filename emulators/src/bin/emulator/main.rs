//! `emulator <cloud> …`: runs one cloud's emulator on loopback until SIGTERM or Ctrl-C; and the
//! changes a cloud sees from outside Cluster API (`emulator eks-scale`, `emulator aws-network`).
//!
//! `emulator eks` prints on stdout, in this order:
//!
//! ```text
//! listening on http://127.0.0.1:<port>     (the first line; tests parse it)
//! EKS_ENDPOINT=http://127.0.0.1:<port>
//! EC2_ENDPOINT=http://127.0.0.1:<moto port> (with --moto: moto serves EC2, IAM and STS)
//! AWS_REGION=<region>
//! ready
//! ```
//!
//! `NAME=VALUE` lines and the final `ready` are the start-up protocol of the conformance suite
//! (`conformance/PROFILE.md`). Logs go to stderr (`RUST_LOG` filters them).
//!
//! Each cloud's subcommands live in its module ([`eks`], [`gke`], [`aks`], [`oke`]); this one
//! parses the command line and holds what their start-ups share.

mod aks;
mod eks;
mod gke;
mod oke;

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use emulators::kit::workload::WorkloadServers;

use aks::{
    AksArgs, AksDeleteArgs, AksNetworkArgs, AksScaleArgs, run_aks, run_aks_delete, run_aks_network,
    run_aks_scale,
};
use eks::{
    AwsNetworkArgs, EksArgs, EksDeleteArgs, EksScaleArgs, run_aws_network, run_eks, run_eks_delete,
    run_eks_scale,
};
use gke::{
    GkeArgs, GkeDeleteArgs, GkeNetworkArgs, GkeScaleArgs, run_gke, run_gke_delete, run_gke_network,
    run_gke_scale,
};
use oke::{
    OkeArgs, OkeDeleteArgs, OkeNetworkArgs, OkeScaleArgs, run_oke, run_oke_delete, run_oke_network,
    run_oke_scale,
};

#[derive(Debug, Parser)]
#[command(
    name = "emulator",
    about = "Local clouds speaking each cloud's real wire protocol"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Amazon EKS (REST-JSON, as the AWS SDKs send it).
    Eks(EksArgs),
    /// Google Kubernetes Engine and the Compute Engine subset (REST/JSON, as Google's Rust
    /// clients send them), with the OAuth token endpoint.
    Gke(GkeArgs),
    /// Azure Kubernetes Service behind Azure Resource Manager (api-version 2026-08-01), with
    /// the resource groups, virtual networks and scale sets it needs and Entra ID's token
    /// endpoint.
    Aks(AksArgs),
    /// Creates a resource group with a virtual network and one subnet in the AKS emulator: a
    /// network to bring. Prints `AZURE_VNET_GROUP=`, `AZURE_VNET=` and `AZURE_SUBNET_ID=`.
    AksNetwork(AksNetworkArgs),
    /// Resizes a Cluster API pool's AKS agent pool as AKS's cluster autoscaler would (a PUT of
    /// its count, bypassing Cluster API) and waits for it to succeed.
    AksScale(AksScaleArgs),
    /// Deletes a Cluster API pool's AKS agent pool behind the provider's back, as a user would,
    /// and waits until it is gone (the fault suite's `outsideDelete`); with `--whole-cluster`,
    /// the managed cluster (`outsideDeleteCluster`).
    AksDelete(AksDeleteArgs),
    /// Resizes a Cluster API pool's EKS node group as the cloud's autoscaler would (through
    /// UpdateNodegroupConfig, bypassing Cluster API) and waits for the update to complete.
    EksScale(EksScaleArgs),
    /// Delete a pool's node group through the EKS API behind the provider's back, as a user
    /// would, and wait until EKS no longer lists it (the fault suite's `outsideDelete`); with
    /// `--whole-cluster`, the EKS cluster, its node groups first (`outsideDeleteCluster`).
    EksDelete(EksDeleteArgs),
    /// Creates a VPC with one subnet in each of two zones in EC2 (moto): a network to bring.
    /// Prints `AWS_VPC_ID=`, `AWS_SUBNET_ID_A=`, `AWS_SUBNET_ID_B=` and `AWS_SUBNET_IDS=[a, b]`.
    AwsNetwork(AwsNetworkArgs),
    /// Creates a VPC network with one subnetwork (ranges `pods` and `services`) in the GKE
    /// emulator's Compute Engine: a network to bring. Prints `GCP_NETWORK=` and
    /// `GCP_SUBNETWORK=`.
    GkeNetwork(GkeNetworkArgs),
    /// Resizes a Cluster API pool's GKE node pool as GKE's autoscaler would (setSize, bypassing
    /// Cluster API) and waits for the operation.
    GkeScale(GkeScaleArgs),
    /// Deletes a Cluster API pool's GKE node pool behind the provider's back, as a user would,
    /// and waits for the operation (the fault suite's `outsideDelete`); with `--whole-cluster`,
    /// the GKE cluster (`outsideDeleteCluster`).
    GkeDelete(GkeDeleteArgs),
    /// Oracle Container Engine for Kubernetes (API 20180222) and the Core Services networking
    /// it needs (API 20160918), every request checked against OCI's request signatures.
    Oke(OkeArgs),
    /// Creates a VCN with gateways, route tables and three subnets in the OKE emulator: a
    /// network to bring. Prints `OCI_VCN_ID=`, `OCI_ENDPOINT_SUBNET_ID=`, `OCI_NODE_SUBNET_ID=`
    /// and `OCI_LB_SUBNET_ID=`.
    OkeNetwork(OkeNetworkArgs),
    /// Resizes a Cluster API pool's OKE node pool as OKE's cluster autoscaler would (an
    /// UpdateNodePool of its size, bypassing Cluster API) and waits for the work request.
    OkeScale(OkeScaleArgs),
    /// Deletes a Cluster API pool's OKE node pool behind the provider's back, as a user would,
    /// and waits for the work request (the fault suite's `outsideDelete`); with
    /// `--whole-cluster`, the OKE cluster (`outsideDeleteCluster`).
    OkeDelete(OkeDeleteArgs),
}

#[tokio::main]
async fn main() -> Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    match Cli::parse().command {
        Command::Eks(args) => run_eks(args).await,
        Command::Gke(args) => run_gke(args).await,
        Command::EksScale(args) => run_eks_scale(args).await,
        Command::EksDelete(args) => run_eks_delete(args).await,
        Command::AwsNetwork(args) => run_aws_network(args).await,
        Command::GkeNetwork(args) => run_gke_network(args).await,
        Command::Aks(args) => run_aks(args).await,
        Command::AksNetwork(args) => run_aks_network(args).await,
        Command::AksScale(args) => run_aks_scale(args).await,
        Command::AksDelete(args) => run_aks_delete(args).await,
        Command::GkeScale(args) => run_gke_scale(args).await,
        Command::GkeDelete(args) => run_gke_delete(args).await,
        Command::Oke(args) => run_oke(args).await,
        Command::OkeNetwork(args) => run_oke_network(args).await,
        Command::OkeScale(args) => run_oke_scale(args).await,
        Command::OkeDelete(args) => run_oke_delete(args).await,
    }
}

/// A listener on `host:port` (port 0: a free one) and the base URL clients reach it at (all
/// interfaces are reached on loopback).
async fn listen(host: &str, port: u16) -> Result<(tokio::net::TcpListener, String)> {
    let listener = tokio::net::TcpListener::bind((host, port))
        .await
        .with_context(|| format!("binding {host}:{port}"))?;
    let port = listener.local_addr()?.port();
    let host = if host == "0.0.0.0" { "127.0.0.1" } else { host };
    Ok((listener, format!("http://{host}:{port}")))
}

/// Real kube-apiservers behind the emulated clusters (assets from TESTBED_ASSETS or the cache),
/// their tokens reviewed by the emulator at `base`.
async fn workload_servers(
    dir: PathBuf,
    base: &str,
    endpoints: Endpoints,
) -> Result<Arc<WorkloadServers>> {
    let assets = tokio::task::spawn_blocking(testbed::Assets::locate)
        .await?
        .context("locating the workload API server binaries (TESTBED_ASSETS or the cache)")?;
    let servers = WorkloadServers::new(assets, dir, format!("{base}/_emulator/tokenreview"))?;
    Ok(Arc::new(match endpoints {
        Endpoints::Reachable => servers,
        Endpoints::Private => servers.private_endpoints()?,
    }))
}

/// `--endpoints`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Endpoints {
    /// The workload API server itself.
    Reachable,
    /// An address the management cluster cannot reach.
    Private,
}

/// Private endpoints are published in front of workload servers; without them there is nothing
/// to hide.
fn check_endpoints(workload_servers: bool, endpoints: Endpoints) -> Result<()> {
    if endpoints == Endpoints::Private && !workload_servers {
        anyhow::bail!("--endpoints=private needs --workload-servers");
    }
    Ok(())
}

/// A line of a PEM private key's base64 body (long enough that no other text holds it).
fn pem_secret_line(pem: &str) -> Result<String> {
    pem.lines()
        .find(|l| !l.starts_with("-----") && l.len() >= 40)
        .map(str::to_string)
        .context("no private key in the PEM")
}

/// Writes a file only its owner can read.
fn write_private(path: &std::path::Path, contents: &str) -> Result<()> {
    use std::os::unix::fs::OpenOptionsExt as _;
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("writing {}", path.display()))?;
    file.write_all(contents.as_bytes())
        .with_context(|| format!("writing {}", path.display()))
}

async fn wait_for_signal() {
    testbed::process::stop_signal().await;
}
