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

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use emulators::eks::ec2::Ec2;
use emulators::eks::outside::{self, EksApi, ScaleRequest};
use emulators::eks::{EksConfig, serve_eks};
use emulators::kit::workload::WorkloadServers;
use emulators::kit::{Delays, Timing};
use emulators::moto::Moto;

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

#[derive(Debug, Args)]
struct EksArgs {
    /// Port to listen on (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// The region served.
    #[arg(long, default_value = "us-west-2")]
    region: String,
    /// The account in ARNs.
    #[arg(long, default_value = "123456789012")]
    account_id: String,
    /// `ACCESS_KEY_ID:SECRET` accepted for SigV4 (repeatable); default from AWS_ACCESS_KEY_ID and
    /// AWS_SECRET_ACCESS_KEY. Without any, requests are not checked.
    #[arg(long = "credential", value_name = "AKID:SECRET")]
    credentials: Vec<String>,
    /// moto's EC2 endpoint, where node instances are launched (e.g. http://127.0.0.1:5000).
    #[arg(long, conflicts_with = "moto")]
    ec2_endpoint: Option<String>,
    /// Start moto (pinned; installed into a cached virtualenv on first use, `MOTO_SERVER`
    /// overrides) and launch node instances there; its URL is printed as `EC2_ENDPOINT=`. It is
    /// stopped with the emulator.
    #[arg(long)]
    moto: bool,
    /// Back every cluster with a real kube-apiserver (assets from TESTBED_ASSETS or built once).
    #[arg(long)]
    workload_servers: bool,
    /// What the cloud API publishes as each cluster's endpoint: the workload API server
    /// (`reachable`), or a private address the management cluster cannot reach (`private`: a
    /// port that accepts and never answers; needs --workload-servers).
    #[arg(long, value_enum, default_value_t = Endpoints::Reachable)]
    endpoints: Endpoints,
    /// Directory for the workload servers' certificates and logs and moto's log (default: a new
    /// temporary one).
    #[arg(long)]
    workload_dir: Option<PathBuf>,
    /// Seconds a cluster accepts an EKS token after its `X-Amz-Date` (EKS: 900). Shorter lets a
    /// test watch a provider refresh its tokens.
    #[arg(long, default_value_t = 900, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    token_ttl: u64,
    /// Clusters the account may have (EKS: 100); one more fails with
    /// ResourceLimitExceededException.
    #[arg(long, default_value_t = emulators::eks::CLUSTER_QUOTA)]
    cluster_quota: usize,
    /// An STS endpoint (`http://127.0.0.1:5000`) EKS tokens may be presigned for besides AWS's
    /// own hosts (repeatable): a client whose STS calls go to a local STS, moto, presigns its
    /// tokens for it. With --moto, moto's URL is accepted without this.
    #[arg(long = "sts-endpoint", value_name = "URL")]
    sts_endpoints: Vec<String>,
    /// Seconds a cluster takes to create, update and delete.
    #[arg(long, default_value_t = 2.0)]
    cluster_delay: f64,
    /// Seconds a nodegroup takes to create, update and delete.
    #[arg(long, default_value_t = 1.0)]
    pool_delay: f64,
    /// Seconds an add-on (or other small sub-resource) takes to create, update and delete.
    #[arg(long, default_value_t = 0.5)]
    addon_delay: f64,
    /// Seconds a node instance removed by a scale-in or a deletion stays shutting down (its Node
    /// and provider ID still there) before it is terminated.
    #[arg(long, default_value_t = 2.0)]
    instance_shutdown: f64,
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

fn credentials(args: &EksArgs) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for c in &args.credentials {
        let Some((k, s)) = c.split_once(':') else {
            bail!("--credential takes ACCESS_KEY_ID:SECRET")
        };
        out.push((k.to_string(), s.to_string()));
    }
    if out.is_empty()
        && let (Ok(k), Ok(s)) = (
            std::env::var("AWS_ACCESS_KEY_ID"),
            std::env::var("AWS_SECRET_ACCESS_KEY"),
        )
        && !k.is_empty()
    {
        out.push((k, s));
    }
    Ok(out)
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

async fn run_eks(args: EksArgs) -> Result<()> {
    // Signals are caught from here on: a SIGTERM while moto or the workload servers start still
    // stops them (their processes are killed when dropped).
    let signal = wait_for_signal();
    tokio::pin!(signal);
    let started = tokio::select! {
        started = start_eks(&args) => started?,
        () = &mut signal => {
            tracing::info!("stopped while starting");
            return Ok(());
        }
    };
    let Started { handle, moto } = started;
    {
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "listening on {}", handle.url())?;
        writeln!(stdout, "EKS_ENDPOINT={}", handle.url())?;
        if let Some(moto) = &moto {
            writeln!(stdout, "EC2_ENDPOINT={}", moto.url())?;
        }
        writeln!(stdout, "AWS_REGION={}", args.region)?;
        writeln!(stdout, "ready")?;
        stdout.flush()?;
    }
    tracing::info!(url = %handle.url(), region = %args.region, "EKS emulator serving");

    signal.await;
    tracing::info!("shutting down");
    handle.shutdown().await;
    if let Some(moto) = moto {
        moto.stop().await;
    }
    Ok(())
}

/// What `emulator eks` runs.
struct Started {
    handle: emulators::eks::ServerHandle,
    moto: Option<Moto>,
}

async fn start_eks(args: &EksArgs) -> Result<Started> {
    let (listener, base) = listen(&args.host, args.port).await?;
    let dir = match &args.workload_dir {
        Some(d) => d.clone(),
        None => std::env::temp_dir().join(format!("eks-emulator-{}", std::process::id())),
    };

    let moto = if args.moto {
        let moto = Moto::start(&dir.join("moto"))
            .await
            .context("starting moto")?;
        tracing::info!(url = %moto.url(), "moto serving EC2, IAM and STS");
        Some(moto)
    } else {
        None
    };

    let mut config = EksConfig::new(&args.region, &args.account_id);
    config.credentials = credentials(args)?;
    config.ec2_endpoint = match &moto {
        Some(m) => Some(m.url().to_string()),
        None => args.ec2_endpoint.clone(),
    };
    config.token_lifetime = jiff::SignedDuration::from_secs(i64::try_from(args.token_ttl)?);
    config.cluster_quota = args.cluster_quota;
    config.sts_endpoints = args.sts_endpoints.clone();
    config
        .sts_endpoints
        .extend(moto.as_ref().map(|m| m.url().to_string()));
    check_endpoints(args.workload_servers, args.endpoints)?;
    if args.workload_servers {
        config.workload = Some(workload_servers(dir, &base, args.endpoints).await?);
    }
    let timing = Timing {
        cluster: Delays::uniform(args.cluster_delay),
        pool: Delays::uniform(args.pool_delay),
        addon: Delays::uniform(args.addon_delay),
        instance_shutdown: args.instance_shutdown,
    };
    let handle = serve_eks(config, timing, listener).await?;
    Ok(Started { handle, moto })
}

#[derive(Debug, Args)]
struct GkeArgs {
    /// Port to listen on (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// The project of the key `--write-key` writes.
    #[arg(long, default_value = "capi-emulated")]
    project: String,
    /// A service-account key file to trust (repeatable). With none and no `--write-key`,
    /// callers are not checked.
    #[arg(long = "trust-key", value_name = "FILE")]
    trust_keys: Vec<PathBuf>,
    /// Generate a service-account key for `--project` whose `token_uri` is this emulator, trust
    /// it, and write it to FILE (mode 0600); printed as `GOOGLE_APPLICATION_CREDENTIALS=`.
    #[arg(long, value_name = "FILE")]
    write_key: Option<PathBuf>,
    /// Also print one line of the written key's private key as `GCP_KEY_SECRET=` (a string the
    /// fault suite searches everything the provider emits for).
    #[arg(long)]
    print_key_secret: bool,
    /// Back every cluster with a real kube-apiserver (assets from TESTBED_ASSETS or built once).
    #[arg(long)]
    workload_servers: bool,
    /// What the cloud API publishes as each cluster's endpoint: the workload API server
    /// (`reachable`), or a private address the management cluster cannot reach (`private`: a
    /// port that accepts and never answers; needs --workload-servers).
    #[arg(long, value_enum, default_value_t = Endpoints::Reachable)]
    endpoints: Endpoints,
    /// Directory for the workload servers' certificates and logs (default: a new temporary one).
    #[arg(long)]
    workload_dir: Option<PathBuf>,
    /// Seconds an access token from the token endpoint lives (Google: 3600).
    #[arg(long, default_value_t = 3600, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    token_ttl: u64,
    /// Clusters a project may have per location (GKE: 50).
    #[arg(long, default_value_t = emulators::gke::CLUSTER_QUOTA)]
    cluster_quota: usize,
    /// vCPUs a project may run per region (Compute Engine's CPUS quota).
    #[arg(long, default_value_t = emulators::gke::CPU_QUOTA)]
    cpu_quota: u32,
    /// Seconds a cluster operation takes (create, upgrade, update, delete).
    #[arg(long, default_value_t = 2.0)]
    cluster_delay: f64,
    /// Seconds a node-pool operation takes.
    #[arg(long, default_value_t = 1.0)]
    pool_delay: f64,
    /// Seconds a small operation takes (labels, autoscaling, Compute resources).
    #[arg(long, default_value_t = 0.5)]
    addon_delay: f64,
    /// Seconds an instance removed by a resize, an upgrade or a deletion stays shutting down (its
    /// Node and provider ID still there) before it is gone.
    #[arg(long, default_value_t = 2.0)]
    instance_shutdown: f64,
}

async fn run_gke(args: GkeArgs) -> Result<()> {
    let signal = wait_for_signal();
    tokio::pin!(signal);
    let server = tokio::select! {
        started = start_gke(&args) => started?,
        () = &mut signal => {
            tracing::info!("stopped while starting");
            return Ok(());
        }
    };
    {
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "listening on {}", server.url())?;
        writeln!(stdout, "GKE_ENDPOINT={}", server.url())?;
        if let Some(path) = &args.write_key {
            writeln!(stdout, "GOOGLE_APPLICATION_CREDENTIALS={}", path.display())?;
            if args.print_key_secret {
                writeln!(stdout, "GCP_KEY_SECRET={}", key_secret(path)?)?;
            }
        }
        writeln!(stdout, "GCP_PROJECT={}", args.project)?;
        writeln!(stdout, "ready")?;
        stdout.flush()?;
    }
    tracing::info!(url = %server.url(), project = %args.project, "GKE emulator serving");
    signal.await;
    tracing::info!("shutting down");
    server.shutdown().await;
    Ok(())
}

/// One line of the written key's private key (64 base64 characters no other text holds): what
/// the fault suite searches the provider's output for.
fn key_secret(path: &std::path::Path) -> Result<String> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let key: serde_json::Value = serde_json::from_str(&text)?;
    pem_secret_line(
        key["private_key"]
            .as_str()
            .context("the written key has no private key")?,
    )
}

/// A line of a PEM private key's base64 body (long enough that no other text holds it).
fn pem_secret_line(pem: &str) -> Result<String> {
    pem.lines()
        .find(|l| !l.starts_with("-----") && l.len() >= 40)
        .map(str::to_string)
        .context("no private key in the PEM")
}

async fn start_gke(args: &GkeArgs) -> Result<emulators::gke::GkeServer> {
    use emulators::gke::{GkeConfig, ServiceAccountKey, serve_gke};
    let (listener, base) = listen(&args.host, args.port).await?;
    let dir = match &args.workload_dir {
        Some(d) => d.clone(),
        None => std::env::temp_dir().join(format!("gke-emulator-{}", std::process::id())),
    };
    let mut config = GkeConfig::default();
    for path in &args.trust_keys {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        config.keys.push(
            ServiceAccountKey::parse(&text)
                .with_context(|| format!("reading {}", path.display()))?,
        );
    }
    if let Some(path) = &args.write_key {
        let email = format!("capi-provider@{}.iam.gserviceaccount.com", args.project);
        let key = ServiceAccountKey::generate(&args.project, &email, &format!("{base}/token"))?;
        write_private(path, &serde_json::to_string_pretty(&key.to_json())?)?;
        config.keys.push(key);
    }
    config.token_lifetime = Duration::from_secs(args.token_ttl);
    config.cluster_quota = args.cluster_quota;
    config.cpu_quota = args.cpu_quota;
    check_endpoints(args.workload_servers, args.endpoints)?;
    if args.workload_servers {
        config.workload = Some(workload_servers(dir, &base, args.endpoints).await?);
    }
    let timing = Timing {
        cluster: Delays::uniform(args.cluster_delay),
        pool: Delays::uniform(args.pool_delay),
        addon: Delays::uniform(args.addon_delay),
        instance_shutdown: args.instance_shutdown,
    };
    serve_gke(config, timing, listener).await
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

/// Which pool of which Cluster API cluster, on which EKS API, signed how: what `eks-scale` and
/// `eks-delete` share.
#[derive(Debug, Args)]
struct EksPoolArgs {
    /// The EKS emulator's URL.
    #[arg(long, env = "EKS_ENDPOINT")]
    url: String,
    /// The region the emulator serves (signs the requests).
    #[arg(long, env = "AWS_REGION", default_value = "us-west-2")]
    region: String,
    /// The Cluster API cluster's namespace.
    #[arg(long, env = "CLUSTER_NAMESPACE")]
    cluster_namespace: String,
    /// The Cluster API cluster's name.
    #[arg(long, env = "CLUSTER_NAME")]
    cluster_name: String,
    /// The pool: the EKSMachinePool's name.
    #[arg(long, env = "POOL_NAME")]
    pool: String,
    /// Access key id to sign with (none: unsigned, for an emulator that checks none).
    #[arg(long, env = "AWS_ACCESS_KEY_ID", hide_env_values = true)]
    access_key_id: Option<String>,
    /// Its secret.
    #[arg(long, env = "AWS_SECRET_ACCESS_KEY", hide_env_values = true)]
    secret_access_key: Option<String>,
    /// Seconds to keep trying while the node group is busy, and to wait for the change.
    #[arg(long, default_value_t = 120)]
    timeout: u64,
}

impl EksPoolArgs {
    /// The EKS API client, signing as the arguments say.
    fn api(&self) -> Result<EksApi> {
        let keys = signing_keys(self.access_key_id.clone(), self.secret_access_key.clone())?;
        Ok(EksApi::new(&self.url, &self.region, keys))
    }
}

#[derive(Debug, Args)]
struct EksDeleteArgs {
    #[command(flatten)]
    target: EksPoolArgs,
    /// Delete the whole EKS cluster (its node groups first, as EKS demands) instead of the
    /// pool's node group.
    #[arg(long)]
    whole_cluster: bool,
}

#[derive(Debug, Args)]
struct EksScaleArgs {
    #[command(flatten)]
    target: EksPoolArgs,
    /// The node group's name when it is not the one the provider derives (`spec.cloudName`).
    #[arg(long)]
    nodegroup: Option<String>,
    /// The desired size wanted.
    #[arg(long, env = "REPLICAS")]
    replicas: i64,
}

/// The key pair to sign with: both given, or neither (unsigned, for an emulator that checks none).
fn signing_keys(
    access_key_id: Option<String>,
    secret_access_key: Option<String>,
) -> Result<Option<(String, String)>> {
    Ok(match (access_key_id, secret_access_key) {
        (Some(k), Some(s)) if !k.is_empty() => Some((k, s)),
        (Some(k), None) if !k.is_empty() => {
            bail!("--access-key-id without --secret-access-key (AWS_SECRET_ACCESS_KEY)")
        }
        _ => None,
    })
}

async fn run_eks_scale(args: EksScaleArgs) -> Result<()> {
    let api = args.target.api()?;
    let request = ScaleRequest {
        namespace: args.target.cluster_namespace,
        cluster: args.target.cluster_name,
        pool: args.target.pool,
        nodegroup: args.nodegroup,
        replicas: args.replicas,
    };
    let scaled = outside::scale_pool(&api, &request, Duration::from_secs(args.target.timeout))
        .await
        .with_context(|| {
            format!(
                "resizing pool {} of {}/{} to {}",
                request.pool, request.namespace, request.cluster, request.replicas
            )
        })?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "EKS_CLUSTER={}", scaled.cluster)?;
    writeln!(stdout, "EKS_NODEGROUP={}", scaled.nodegroup)?;
    writeln!(
        stdout,
        "node group {} of EKS cluster {}: desired size {} -> {}",
        scaled.nodegroup, scaled.cluster, scaled.from, scaled.to
    )?;
    stdout.flush()?;
    Ok(())
}

async fn run_eks_delete(args: EksDeleteArgs) -> Result<()> {
    let EksDeleteArgs {
        target: args,
        whole_cluster,
    } = args;
    let api = args.api()?;
    if whole_cluster {
        let cluster = outside::delete_cluster(
            &api,
            &args.cluster_namespace,
            &args.cluster_name,
            Duration::from_secs(args.timeout),
        )
        .await
        .with_context(|| {
            format!(
                "deleting the EKS cluster of {}/{}",
                args.cluster_namespace, args.cluster_name
            )
        })?;
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "EKS cluster {cluster} and its node groups deleted")?;
        stdout.flush()?;
        return Ok(());
    }
    let (cluster, nodegroup) = outside::delete_pool(
        &api,
        &args.cluster_namespace,
        &args.cluster_name,
        &args.pool,
        Duration::from_secs(args.timeout),
    )
    .await
    .with_context(|| {
        format!(
            "deleting the node group of pool {} of {}/{}",
            args.pool, args.cluster_namespace, args.cluster_name
        )
    })?;
    let mut stdout = std::io::stdout().lock();
    writeln!(
        stdout,
        "node group {nodegroup} of EKS cluster {cluster} deleted"
    )?;
    stdout.flush()?;
    Ok(())
}

#[derive(Debug, Args)]
struct AwsNetworkArgs {
    /// EC2's URL (moto's, e.g. `EC2_ENDPOINT`).
    #[arg(long, env = "EC2_ENDPOINT")]
    ec2_url: String,
    /// The region.
    #[arg(long, env = "AWS_REGION", default_value = "us-west-2")]
    region: String,
    /// The two zones, as suffixes of the region.
    #[arg(long, num_args = 2, default_values = ["a", "b"])]
    zones: Vec<String>,
    /// The VPC's `Name` tag (the subnets get `<name>-<zone>`).
    #[arg(long, default_value = "byo-network")]
    name: String,
    /// The second octet of the VPC's block `10.<octet>.0.0/16`.
    #[arg(long, default_value_t = 90)]
    octet: u8,
    /// The access key id in the credential scope (moto takes the account from it).
    #[arg(
        long,
        env = "AWS_ACCESS_KEY_ID",
        hide_env_values = true,
        default_value = "AKIAEMULATOREKS00000"
    )]
    access_key_id: String,
}

async fn run_aws_network(args: AwsNetworkArgs) -> Result<()> {
    let ec2 = Ec2::new(&args.ec2_url, &args.region, &args.access_key_id);
    let zones: Vec<String> = args
        .zones
        .iter()
        .map(|z| format!("{}{z}", args.region))
        .collect();
    let network = outside::create_network(&ec2, &args.name, args.octet, &zones)
        .await
        .context("creating the network in EC2")?;
    let ids: Vec<&str> = network.subnets.iter().map(|(id, _)| id.as_str()).collect();
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "AWS_VPC_ID={}", network.vpc)?;
    for (letter, id) in ["A", "B"].iter().zip(&ids) {
        writeln!(stdout, "AWS_SUBNET_ID_{letter}={id}")?;
    }
    writeln!(stdout, "AWS_SUBNET_IDS=[{}]", ids.join(", "))?;
    stdout.flush()?;
    Ok(())
}

#[derive(Debug, Args)]
struct GkeNetworkArgs {
    /// The GKE emulator's URL.
    #[arg(long, env = "GKE_ENDPOINT")]
    url: String,
    /// The service-account key to call with.
    #[arg(long, env = "GOOGLE_APPLICATION_CREDENTIALS")]
    key: Option<PathBuf>,
    /// The project.
    #[arg(long, env = "GCP_PROJECT")]
    project: String,
    /// The region of the subnetwork.
    #[arg(long, default_value = "us-central1")]
    region: String,
    /// The network's name.
    #[arg(long, default_value = "brought-vpc")]
    name: String,
    /// The second octet of the subnetwork's 10.x.0.0/20 (Pods and Services take the next two).
    #[arg(long, default_value_t = 90)]
    octet: u8,
}

#[derive(Debug, Args)]
struct GkeScaleArgs {
    /// The GKE emulator's URL.
    #[arg(long, env = "GKE_ENDPOINT")]
    url: String,
    /// The service-account key to call with.
    #[arg(long, env = "GOOGLE_APPLICATION_CREDENTIALS")]
    key: Option<PathBuf>,
    /// The project.
    #[arg(long, env = "GCP_PROJECT")]
    project: String,
    /// The cluster's location (its region).
    #[arg(long, default_value = "us-central1")]
    location: String,
    /// The Cluster API cluster's namespace.
    #[arg(long, env = "CLUSTER_NAMESPACE")]
    cluster_namespace: String,
    /// The Cluster API cluster's name.
    #[arg(long, env = "CLUSTER_NAME")]
    cluster_name: String,
    /// The pool: the GKEMachinePool's name.
    #[arg(long, env = "POOL_NAME")]
    pool: String,
    /// The node pool's name when it is not the one the provider derives (`spec.cloudName`).
    #[arg(long)]
    node_pool: Option<String>,
    /// The node count wanted (all zones).
    #[arg(long, env = "REPLICAS")]
    replicas: i64,
    /// Seconds to wait for GKE (other operations may run first).
    #[arg(long, default_value_t = 120)]
    timeout: u64,
}

#[derive(Debug, Args)]
struct GkeDeleteArgs {
    /// The GKE emulator's URL.
    #[arg(long, env = "GKE_ENDPOINT")]
    url: String,
    /// The service-account key to call with.
    #[arg(long, env = "GOOGLE_APPLICATION_CREDENTIALS")]
    key: Option<PathBuf>,
    /// The project.
    #[arg(long, env = "GCP_PROJECT")]
    project: String,
    /// The cluster's location (its region).
    #[arg(long, default_value = "us-central1")]
    location: String,
    /// The Cluster API cluster's namespace.
    #[arg(long, env = "CLUSTER_NAMESPACE")]
    cluster_namespace: String,
    /// The Cluster API cluster's name.
    #[arg(long, env = "CLUSTER_NAME")]
    cluster_name: String,
    /// The pool: the GKEMachinePool's name.
    #[arg(long, env = "POOL_NAME")]
    pool: String,
    /// The node pool's name when it is not the one the provider derives (`spec.cloudName`).
    #[arg(long)]
    node_pool: Option<String>,
    /// Delete the whole GKE cluster instead of the pool's node pool.
    #[arg(long)]
    whole_cluster: bool,
    /// Seconds to wait for GKE (other operations may run first).
    #[arg(long, default_value_t = 120)]
    timeout: u64,
}

async fn run_gke_delete(args: GkeDeleteArgs) -> Result<()> {
    use emulators::gke::outside::{DeleteRequest, GoogleApi, delete};
    let api = GoogleApi::new(&args.url, read_key(args.key.as_ref())?);
    let pool = (!args.whole_cluster).then(|| {
        args.node_pool.clone().unwrap_or_else(|| {
            contract::naming::derive_cloud_name(
                &args.cluster_namespace,
                &args.pool,
                &contract::naming::GKE_NODE_POOL,
            )
        })
    });
    let request = DeleteRequest {
        project: args.project,
        location: args.location,
        namespace: args.cluster_namespace,
        cluster: args.cluster_name,
        pool,
    };
    let cluster = delete(&api, &request, Duration::from_secs(args.timeout))
        .await
        .with_context(|| {
            format!(
                "deleting {} of {}/{}",
                request
                    .pool
                    .as_deref()
                    .map_or("the GKE cluster".to_string(), |p| format!("node pool {p}")),
                request.namespace,
                request.cluster
            )
        })?;
    let mut stdout = std::io::stdout().lock();
    match &request.pool {
        Some(pool) => writeln!(stdout, "node pool {pool} of GKE cluster {cluster} deleted")?,
        None => writeln!(stdout, "GKE cluster {cluster} deleted")?,
    }
    stdout.flush()?;
    Ok(())
}

fn read_key(path: Option<&PathBuf>) -> Result<Option<emulators::gke::ServiceAccountKey>> {
    path.filter(|p| !p.as_os_str().is_empty())
        .map(|p| {
            let text =
                std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
            emulators::gke::ServiceAccountKey::parse(&text)
        })
        .transpose()
}

async fn run_gke_network(args: GkeNetworkArgs) -> Result<()> {
    use emulators::gke::outside::{GoogleApi, create_network};
    let api = GoogleApi::new(&args.url, read_key(args.key.as_ref())?);
    let network = create_network(&api, &args.project, &args.region, &args.name, args.octet)
        .await
        .context("creating the network in the GKE emulator's Compute Engine")?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "GCP_NETWORK={}", network.network)?;
    writeln!(stdout, "GCP_SUBNETWORK={}", network.subnetwork)?;
    stdout.flush()?;
    Ok(())
}

async fn run_gke_scale(args: GkeScaleArgs) -> Result<()> {
    use emulators::gke::outside::{GoogleApi, ScaleRequest, scale_pool};
    let api = GoogleApi::new(&args.url, read_key(args.key.as_ref())?);
    let pool = args.node_pool.clone().unwrap_or_else(|| {
        contract::naming::derive_cloud_name(
            &args.cluster_namespace,
            &args.pool,
            &contract::naming::GKE_NODE_POOL,
        )
    });
    let request = ScaleRequest {
        project: args.project,
        location: args.location,
        namespace: args.cluster_namespace,
        cluster: args.cluster_name,
        pool,
        replicas: args.replicas,
    };
    let scaled = scale_pool(&api, &request, Duration::from_secs(args.timeout))
        .await
        .with_context(|| {
            format!(
                "resizing node pool {} of {}/{} to {}",
                request.pool, request.namespace, request.cluster, request.replicas
            )
        })?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "GKE_CLUSTER={}", scaled.cluster)?;
    writeln!(
        stdout,
        "node pool {} of GKE cluster {}: {} -> {} nodes per zone",
        request.pool, scaled.cluster, scaled.from, scaled.to
    )?;
    stdout.flush()?;
    Ok(())
}

#[derive(Debug, Args)]
struct AksArgs {
    /// Port to listen on (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// The Entra tenant id.
    #[arg(long, default_value = emulators::aks::TENANT)]
    tenant: String,
    /// The subscription served.
    #[arg(long, default_value = emulators::aks::SUBSCRIPTION)]
    subscription: String,
    /// A service principal `CLIENT_ID:SECRET` that may get tokens (repeatable).
    #[arg(long = "principal", value_name = "CLIENT_ID:SECRET")]
    principals: Vec<String>,
    /// A service principal with a federated credential, `CLIENT_ID|ISSUER|SUBJECT`
    /// (workload identity; repeatable).
    #[arg(long = "federated", value_name = "CLIENT_ID|ISSUER|SUBJECT")]
    federated: Vec<String>,
    /// Make a service principal with a random secret and print it as `AZURE_CLIENT_ID=` and
    /// `AZURE_CLIENT_SECRET=`. With no principal at all, any client id gets a token.
    #[arg(long)]
    generate_principal: bool,
    /// Back every cluster with a real kube-apiserver (assets from TESTBED_ASSETS or built once).
    #[arg(long)]
    workload_servers: bool,
    /// What the cloud API publishes as each cluster's endpoint: the workload API server
    /// (`reachable`), or a private address the management cluster cannot reach (`private`: a
    /// port that accepts and never answers; needs --workload-servers).
    #[arg(long, value_enum, default_value_t = Endpoints::Reachable)]
    endpoints: Endpoints,
    /// Directory for the workload servers' certificates and logs (default: a new temporary one).
    #[arg(long)]
    workload_dir: Option<PathBuf>,
    /// Seconds an Entra token lives (Entra: 3600–5400).
    #[arg(long, default_value_t = 3600, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    token_ttl: u64,
    /// vCPUs the subscription may run per location.
    #[arg(long, default_value_t = emulators::aks::VCPU_QUOTA)]
    vcpu_quota: u32,
    /// Count ARM's request buckets without answering 429.
    #[arg(long)]
    no_throttle: bool,
    /// Seconds a cluster operation takes (create, upgrade, update, delete).
    #[arg(long, default_value_t = 2.0)]
    cluster_delay: f64,
    /// Seconds an agent-pool operation takes.
    #[arg(long, default_value_t = 1.0)]
    pool_delay: f64,
    /// Seconds a small operation takes (tags, networks).
    #[arg(long, default_value_t = 0.5)]
    addon_delay: f64,
    /// Seconds an instance removed by a scale-down, an upgrade or a deletion stays `Deleting`
    /// (its Node and provider ID still there) before it is gone.
    #[arg(long, default_value_t = 2.0)]
    instance_shutdown: f64,
}

async fn run_aks(args: AksArgs) -> Result<()> {
    use emulators::aks::{AksConfig, Principal, serve_aks};
    let (listener, base) = listen(&args.host, args.port).await?;
    let mut config = AksConfig {
        tenant: args.tenant.clone(),
        subscription: args.subscription.clone(),
        token_lifetime: Duration::from_secs(args.token_ttl),
        vcpu_quota: args.vcpu_quota,
        throttle: !args.no_throttle,
        ..AksConfig::default()
    };
    let oid = |client: &str| format!("oid-{client}");
    for p in &args.principals {
        let (id, secret) = p
            .split_once(':')
            .context("--principal takes CLIENT_ID:SECRET")?;
        config.principals.push(Principal {
            client_id: id.into(),
            secret: Some(secret.into()),
            federated: None,
            object_id: oid(id),
        });
    }
    for f in &args.federated {
        let mut parts = f.splitn(3, '|');
        let (Some(id), Some(issuer), Some(subject)) = (parts.next(), parts.next(), parts.next())
        else {
            bail!("--federated takes CLIENT_ID|ISSUER|SUBJECT");
        };
        config.principals.push(Principal {
            client_id: id.into(),
            secret: None,
            federated: Some((issuer.into(), subject.into())),
            object_id: oid(id),
        });
    }
    let generated = args.generate_principal.then(|| {
        let id = emulators::aks::entra::uuid_like();
        let secret = emulators::kit::random_hex(20);
        config.principals.push(Principal {
            client_id: id.clone(),
            secret: Some(secret.clone()),
            federated: None,
            object_id: oid(&id),
        });
        (id, secret)
    });
    check_endpoints(args.workload_servers, args.endpoints)?;
    if args.workload_servers {
        let dir = match &args.workload_dir {
            Some(d) => d.clone(),
            None => std::env::temp_dir().join(format!("aks-emulator-{}", std::process::id())),
        };
        config.workload = Some(workload_servers(dir, &base, args.endpoints).await?);
    }
    let timing = Timing {
        cluster: Delays::uniform(args.cluster_delay),
        pool: Delays::uniform(args.pool_delay),
        addon: Delays::uniform(args.addon_delay),
        instance_shutdown: args.instance_shutdown,
    };
    let signal = wait_for_signal();
    tokio::pin!(signal);
    let server = tokio::select! {
        started = serve_aks(config, timing, listener) => started?,
        () = &mut signal => return Ok(()),
    };
    {
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "listening on {}", server.url())?;
        writeln!(stdout, "AKS_ENDPOINT={}", server.url())?;
        writeln!(stdout, "AZURE_AUTHORITY_HOST={}", server.url())?;
        writeln!(stdout, "AZURE_TENANT_ID={}", args.tenant)?;
        writeln!(stdout, "AZURE_SUBSCRIPTION_ID={}", args.subscription)?;
        if let Some((id, secret)) = &generated {
            writeln!(stdout, "AZURE_CLIENT_ID={id}")?;
            writeln!(stdout, "AZURE_CLIENT_SECRET={secret}")?;
        }
        writeln!(stdout, "ready")?;
        stdout.flush()?;
    }
    tracing::info!(url = %server.url(), subscription = %args.subscription, "AKS emulator serving");
    signal.await;
    server.shutdown().await;
    Ok(())
}

#[derive(Debug, Args)]
struct AzureCaller {
    /// The AKS emulator's URL (ARM and Entra).
    #[arg(long, env = "AKS_ENDPOINT")]
    url: String,
    /// The tenant.
    #[arg(long, env = "AZURE_TENANT_ID", default_value = emulators::aks::TENANT)]
    tenant: String,
    /// The subscription.
    #[arg(long, env = "AZURE_SUBSCRIPTION_ID", default_value = emulators::aks::SUBSCRIPTION)]
    subscription: String,
    /// The service principal to call as.
    #[arg(long, env = "AZURE_CLIENT_ID", default_value = "aks-emulator-cli")]
    client_id: String,
    /// Its secret.
    #[arg(
        long,
        env = "AZURE_CLIENT_SECRET",
        hide_env_values = true,
        default_value = ""
    )]
    client_secret: String,
}

impl AzureCaller {
    fn api(&self) -> emulators::aks::outside::ArmApi {
        emulators::aks::outside::ArmApi::new(
            &self.url,
            &self.tenant,
            &self.client_id,
            &self.client_secret,
            &self.subscription,
        )
    }
}

#[derive(Debug, Args)]
struct AksNetworkArgs {
    #[command(flatten)]
    caller: AzureCaller,
    /// The resource group to create.
    #[arg(long, default_value = "brought-network")]
    group: String,
    /// Its location.
    #[arg(long, default_value = "eastus")]
    location: String,
    /// The virtual network's name.
    #[arg(long, default_value = "brought-vnet")]
    name: String,
    /// The second octet of the network's 10.x.0.0/16.
    #[arg(long, default_value_t = 90)]
    octet: u8,
}

async fn run_aks_network(args: AksNetworkArgs) -> Result<()> {
    let api = args.caller.api();
    let n = emulators::aks::outside::create_network(
        &api,
        &args.group,
        &args.location,
        &args.name,
        args.octet,
    )
    .await
    .context("creating the network in the AKS emulator")?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "AZURE_VNET_GROUP={}", n.group)?;
    writeln!(stdout, "AZURE_VNET={}", n.vnet)?;
    writeln!(stdout, "AZURE_SUBNET_ID={}", n.subnet_id)?;
    stdout.flush()?;
    Ok(())
}

#[derive(Debug, Args)]
struct AksScaleArgs {
    #[command(flatten)]
    caller: AzureCaller,
    /// The Cluster API cluster's namespace.
    #[arg(long, env = "CLUSTER_NAMESPACE")]
    cluster_namespace: String,
    /// The Cluster API cluster's name.
    #[arg(long, env = "CLUSTER_NAME")]
    cluster_name: String,
    /// The pool: the AKSMachinePool's name.
    #[arg(long, env = "POOL_NAME")]
    pool: String,
    /// The agent pool's name when it is not the one the provider derives (`spec.cloudName`).
    #[arg(long)]
    agent_pool: Option<String>,
    /// The count wanted.
    #[arg(long, env = "REPLICAS")]
    replicas: i64,
    /// Seconds to wait for AKS.
    #[arg(long, default_value_t = 120)]
    timeout: u64,
}

async fn run_aks_scale(args: AksScaleArgs) -> Result<()> {
    use emulators::aks::outside::{ScaleRequest, scale_pool};
    let api = args.caller.api();
    let pool = args.agent_pool.clone().unwrap_or_else(|| {
        contract::naming::derive_child_name(&args.pool, &contract::naming::AKS_AGENT_POOL)
    });
    let request = ScaleRequest {
        namespace: args.cluster_namespace,
        cluster: args.cluster_name,
        pool,
        replicas: args.replicas,
    };
    let scaled = scale_pool(&api, &request, Duration::from_secs(args.timeout))
        .await
        .with_context(|| {
            format!(
                "resizing agent pool {} of {}/{} to {}",
                request.pool, request.namespace, request.cluster, request.replicas
            )
        })?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "AKS_CLUSTER={}", scaled.cluster)?;
    writeln!(
        stdout,
        "agent pool {} of AKS cluster {}: {} -> {} nodes",
        request.pool, scaled.cluster, scaled.from, scaled.to
    )?;
    stdout.flush()?;
    Ok(())
}

#[derive(Debug, Args)]
struct AksDeleteArgs {
    #[command(flatten)]
    caller: AzureCaller,
    /// The Cluster API cluster's namespace.
    #[arg(long, env = "CLUSTER_NAMESPACE")]
    cluster_namespace: String,
    /// The Cluster API cluster's name.
    #[arg(long, env = "CLUSTER_NAME")]
    cluster_name: String,
    /// The pool: the AKSMachinePool's name.
    #[arg(long, env = "POOL_NAME")]
    pool: String,
    /// The agent pool's name when it is not the one the provider derives (`spec.cloudName`).
    #[arg(long)]
    agent_pool: Option<String>,
    /// Delete the whole managed cluster instead of the pool's agent pool.
    #[arg(long)]
    whole_cluster: bool,
    /// Seconds to wait for AKS (other operations may run first).
    #[arg(long, default_value_t = 120)]
    timeout: u64,
}

async fn run_aks_delete(args: AksDeleteArgs) -> Result<()> {
    use emulators::aks::outside::{DeleteRequest, delete};
    let api = args.caller.api();
    let pool = (!args.whole_cluster).then(|| {
        args.agent_pool.clone().unwrap_or_else(|| {
            contract::naming::derive_child_name(&args.pool, &contract::naming::AKS_AGENT_POOL)
        })
    });
    let request = DeleteRequest {
        namespace: args.cluster_namespace,
        cluster: args.cluster_name,
        pool,
    };
    let cluster = delete(&api, &request, Duration::from_secs(args.timeout))
        .await
        .with_context(|| {
            format!(
                "deleting {} of {}/{}",
                request
                    .pool
                    .as_deref()
                    .map_or("the managed cluster".to_string(), |p| format!(
                        "agent pool {p}"
                    )),
                request.namespace,
                request.cluster
            )
        })?;
    let mut stdout = std::io::stdout().lock();
    match &request.pool {
        Some(pool) => writeln!(stdout, "agent pool {pool} of AKS cluster {cluster} deleted")?,
        None => writeln!(stdout, "AKS cluster {cluster} deleted")?,
    }
    stdout.flush()?;
    Ok(())
}

#[derive(Debug, Args)]
struct OkeArgs {
    /// Port to listen on (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// The region served.
    #[arg(long, default_value = emulators::oke::REGION)]
    region: String,
    /// The tenancy OCID (its root compartment).
    #[arg(long, default_value = emulators::oke::TENANCY)]
    tenancy: String,
    /// A compartment besides the root one (repeatable; default one made up).
    #[arg(long = "compartment")]
    compartments: Vec<String>,
    /// An uploaded API signing key, `<tenancy>/<user>/<fingerprint>=<PEM file>` (a public key,
    /// or a private key whose public half is taken; repeatable).
    #[arg(long = "api-key", value_name = "KEY_ID=PEM_FILE")]
    api_keys: Vec<String>,
    /// Make a user with an API key (openssl), write its private key here (mode 0600) and print
    /// `OCI_USER_ID=`, `OCI_FINGERPRINT=` and `OCI_PRIVATE_KEY_PATH=`. Without any key, a
    /// request's signature is checked in form only.
    #[arg(long, value_name = "FILE")]
    generate_key: Option<PathBuf>,
    /// Also print one line of the generated private key as `OCI_KEY_SECRET=` (a string the fault
    /// suite searches everything the provider emits for).
    #[arg(long)]
    print_key_secret: bool,
    /// Back every cluster with a real kube-apiserver (assets from TESTBED_ASSETS or built once).
    #[arg(long)]
    workload_servers: bool,
    /// What the cloud API publishes as each cluster's endpoint: the workload API server
    /// (`reachable`), or a private address the management cluster cannot reach (`private`: a
    /// port that accepts and never answers; needs --workload-servers).
    #[arg(long, value_enum, default_value_t = Endpoints::Reachable)]
    endpoints: Endpoints,
    /// Directory for the workload servers' certificates and logs (default: a new temporary one).
    #[arg(long)]
    workload_dir: Option<PathBuf>,
    /// Seconds a cluster accepts a token of `oci ce cluster generate-token` after its date
    /// (OCI: the 300 s of clock skew).
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    token_ttl: u64,
    /// Clusters the tenancy may have.
    #[arg(long, default_value_t = emulators::oke::CLUSTER_LIMIT)]
    cluster_limit: usize,
    /// OCPUs node instances may use in the region.
    #[arg(long, default_value_t = emulators::oke::OCPU_LIMIT)]
    ocpu_limit: u32,
    /// Seconds a cluster work request takes (create, update, delete).
    #[arg(long, default_value_t = 2.0)]
    cluster_delay: f64,
    /// Seconds a node-pool work request takes.
    #[arg(long, default_value_t = 1.0)]
    pool_delay: f64,
    /// Seconds a Core Services resource takes to become AVAILABLE or TERMINATED.
    #[arg(long, default_value_t = 0.5)]
    addon_delay: f64,
    /// Seconds a node removed by a scale-down, a cycle or a deletion stays `DELETING` (its Node
    /// and provider ID still there) before it is gone.
    #[arg(long, default_value_t = 2.0)]
    instance_shutdown: f64,
}

async fn run_oke(args: OkeArgs) -> Result<()> {
    use emulators::oke::{OkeConfig, PublicKey, serve_oke};
    let (listener, base) = listen(&args.host, args.port).await?;
    let mut config = OkeConfig {
        region: args.region.clone(),
        tenancy: args.tenancy.clone(),
        token_lifetime: Duration::from_secs(args.token_ttl),
        cluster_limit: args.cluster_limit,
        ocpu_limit: args.ocpu_limit,
        ..OkeConfig::default()
    };
    if !args.compartments.is_empty() {
        config.compartments.clone_from(&args.compartments);
    }
    for k in &args.api_keys {
        let (id, file) = k
            .split_once('=')
            .context("--api-key takes <tenancy>/<user>/<fingerprint>=<PEM file>")?;
        let pem = std::fs::read_to_string(file).with_context(|| format!("reading {file}"))?;
        config.keys.push(PublicKey::from_pem(id, &pem)?);
    }
    let generated = match &args.generate_key {
        None => None,
        Some(path) => {
            let user = emulators::oke::global_ocid("user");
            let (pem, key) = emulators::oke::generate_api_key(&format!("{}/{user}", args.tenancy))?;
            write_private(path, &pem)?;
            let fingerprint = key.fingerprint();
            config.keys.push(key);
            Some((user, fingerprint, path.clone()))
        }
    };
    check_endpoints(args.workload_servers, args.endpoints)?;
    if args.workload_servers {
        let dir = match &args.workload_dir {
            Some(d) => d.clone(),
            None => std::env::temp_dir().join(format!("oke-emulator-{}", std::process::id())),
        };
        config.workload = Some(workload_servers(dir, &base, args.endpoints).await?);
    }
    let compartment = config.compartments.first().cloned().unwrap_or_default();
    let timing = Timing {
        cluster: Delays::uniform(args.cluster_delay),
        pool: Delays::uniform(args.pool_delay),
        addon: Delays::uniform(args.addon_delay),
        instance_shutdown: args.instance_shutdown,
    };
    let signal = wait_for_signal();
    tokio::pin!(signal);
    let server = tokio::select! {
        started = serve_oke(config, timing, listener) => started?,
        () = &mut signal => return Ok(()),
    };
    {
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "listening on {}", server.url())?;
        writeln!(stdout, "OKE_ENDPOINT={}", server.url())?;
        writeln!(stdout, "OCI_REGION={}", args.region)?;
        writeln!(stdout, "OCI_TENANCY_ID={}", args.tenancy)?;
        writeln!(stdout, "OCI_COMPARTMENT_ID={compartment}")?;
        if let Some((user, fingerprint, path)) = &generated {
            writeln!(stdout, "OCI_USER_ID={user}")?;
            writeln!(stdout, "OCI_FINGERPRINT={fingerprint}")?;
            writeln!(stdout, "OCI_PRIVATE_KEY_PATH={}", path.display())?;
            if args.print_key_secret {
                let pem = std::fs::read_to_string(path)
                    .with_context(|| format!("reading {}", path.display()))?;
                writeln!(stdout, "OCI_KEY_SECRET={}", pem_secret_line(&pem)?)?;
            }
        }
        writeln!(stdout, "ready")?;
        stdout.flush()?;
    }
    tracing::info!(url = %server.url(), region = %args.region, "OKE emulator serving");
    signal.await;
    server.shutdown().await;
    Ok(())
}

#[derive(Debug, Args)]
struct OciCaller {
    /// The OKE emulator's URL (Container Engine and Core Services).
    #[arg(long, env = "OKE_ENDPOINT")]
    url: String,
    /// The tenancy OCID.
    #[arg(long, env = "OCI_TENANCY_ID", default_value = emulators::oke::TENANCY)]
    tenancy: String,
    /// The user OCID of the API key.
    #[arg(
        long,
        env = "OCI_USER_ID",
        default_value = "ocid1.user.oc1..aaaaaaaaemulatorcli"
    )]
    user: String,
    /// The API key's fingerprint.
    #[arg(long, env = "OCI_FINGERPRINT", default_value = "00:00")]
    fingerprint: String,
    /// The API key's private key (PEM file); without it a throwaway key signs (accepted only by
    /// an emulator that checks no keys).
    #[arg(long, env = "OCI_PRIVATE_KEY_PATH")]
    key_file: Option<PathBuf>,
    /// The compartment to work in.
    #[arg(long, env = "OCI_COMPARTMENT_ID", default_value = emulators::oke::COMPARTMENT)]
    compartment: String,
}

impl OciCaller {
    fn api(&self) -> Result<emulators::oke::outside::OciApi> {
        let pem = match &self.key_file {
            Some(f) => {
                std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?
            }
            None => emulators::oke::generate_api_key("unchecked")?.0,
        };
        let key = oci_signer::ApiKey::from_pem(&pem, &self.tenancy, &self.user, &self.fingerprint)?;
        Ok(emulators::oke::outside::OciApi::new(&self.url, key))
    }
}

#[derive(Debug, Args)]
struct OkeNetworkArgs {
    #[command(flatten)]
    caller: OciCaller,
    /// The VCN's display name.
    #[arg(long, default_value = "brought-vcn")]
    name: String,
    /// The second octet of the VCN's 10.x.0.0/16.
    #[arg(long, default_value_t = 90)]
    octet: u8,
}

async fn run_oke_network(args: OkeNetworkArgs) -> Result<()> {
    let api = args.caller.api()?;
    let n = emulators::oke::outside::create_network(
        &api,
        &args.caller.compartment,
        &args.name,
        args.octet,
    )
    .await
    .context("creating the network in the OKE emulator")?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "OCI_VCN_ID={}", n.vcn)?;
    writeln!(stdout, "OCI_ENDPOINT_SUBNET_ID={}", n.endpoint_subnet)?;
    writeln!(stdout, "OCI_NODE_SUBNET_ID={}", n.node_subnet)?;
    writeln!(stdout, "OCI_LB_SUBNET_ID={}", n.lb_subnet)?;
    stdout.flush()?;
    Ok(())
}

#[derive(Debug, Args)]
struct OkeScaleArgs {
    #[command(flatten)]
    caller: OciCaller,
    /// The Cluster API cluster's namespace.
    #[arg(long, env = "CLUSTER_NAMESPACE")]
    cluster_namespace: String,
    /// The Cluster API cluster's name.
    #[arg(long, env = "CLUSTER_NAME")]
    cluster_name: String,
    /// The pool: the OKEMachinePool's name.
    #[arg(long, env = "POOL_NAME")]
    pool: String,
    /// The node pool's name when it is not the one the provider derives (`spec.cloudName`).
    #[arg(long)]
    node_pool: Option<String>,
    /// The size wanted.
    #[arg(long, env = "REPLICAS")]
    replicas: i64,
    /// Seconds to wait for OKE.
    #[arg(long, default_value_t = 120)]
    timeout: u64,
}

async fn run_oke_scale(args: OkeScaleArgs) -> Result<()> {
    use emulators::oke::outside::{ScaleRequest, scale_pool};
    let api = args.caller.api()?;
    let pool = args.node_pool.clone().unwrap_or_else(|| {
        contract::naming::derive_child_name(&args.pool, &contract::naming::OKE_NODE_POOL)
    });
    let request = ScaleRequest {
        compartment: args.caller.compartment.clone(),
        namespace: args.cluster_namespace,
        cluster: args.cluster_name,
        pool,
        replicas: args.replicas,
    };
    let scaled = scale_pool(&api, &request, Duration::from_secs(args.timeout))
        .await
        .with_context(|| {
            format!(
                "resizing node pool {} of {}/{} to {}",
                request.pool, request.namespace, request.cluster, request.replicas
            )
        })?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "OKE_CLUSTER={}", scaled.cluster)?;
    writeln!(
        stdout,
        "node pool {} of OKE cluster {}: {} -> {} nodes",
        request.pool, scaled.cluster, scaled.from, scaled.to
    )?;
    stdout.flush()?;
    Ok(())
}

#[derive(Debug, Args)]
struct OkeDeleteArgs {
    #[command(flatten)]
    caller: OciCaller,
    /// The Cluster API cluster's namespace.
    #[arg(long, env = "CLUSTER_NAMESPACE")]
    cluster_namespace: String,
    /// The Cluster API cluster's name.
    #[arg(long, env = "CLUSTER_NAME")]
    cluster_name: String,
    /// The pool: the OKEMachinePool's name.
    #[arg(long, env = "POOL_NAME")]
    pool: String,
    /// The node pool's name when it is not the one the provider derives (`spec.cloudName`).
    #[arg(long)]
    node_pool: Option<String>,
    /// Delete the whole OKE cluster instead of the pool's node pool.
    #[arg(long)]
    whole_cluster: bool,
    /// Seconds to wait for OKE (other work requests may run first).
    #[arg(long, default_value_t = 120)]
    timeout: u64,
}

async fn run_oke_delete(args: OkeDeleteArgs) -> Result<()> {
    use emulators::oke::outside::{DeleteRequest, delete};
    let api = args.caller.api()?;
    let pool = (!args.whole_cluster).then(|| {
        args.node_pool.clone().unwrap_or_else(|| {
            contract::naming::derive_child_name(&args.pool, &contract::naming::OKE_NODE_POOL)
        })
    });
    let request = DeleteRequest {
        compartment: args.caller.compartment.clone(),
        namespace: args.cluster_namespace,
        cluster: args.cluster_name,
        pool,
    };
    let cluster = delete(&api, &request, Duration::from_secs(args.timeout))
        .await
        .with_context(|| {
            format!(
                "deleting {} of {}/{}",
                request
                    .pool
                    .as_deref()
                    .map_or("the OKE cluster".to_string(), |p| format!("node pool {p}")),
                request.namespace,
                request.cluster
            )
        })?;
    let mut stdout = std::io::stdout().lock();
    match &request.pool {
        Some(pool) => writeln!(stdout, "node pool {pool} of OKE cluster {cluster} deleted")?,
        None => writeln!(stdout, "OKE cluster {cluster} deleted")?,
    }
    stdout.flush()?;
    Ok(())
}

async fn wait_for_signal() {
    testbed::process::stop_signal().await;
}
