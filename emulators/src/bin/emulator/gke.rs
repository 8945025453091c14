//! `emulator gke` (the GKE and Compute Engine emulator, with its OAuth token endpoint) and the GKE
//! changes made from outside Cluster API: `gke-network`, `gke-scale` and `gke-delete`.

use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use emulators::kit::{Delays, Timing};

use crate::{
    Endpoints, check_endpoints, listen, pem_secret_line, wait_for_signal, workload_servers,
    write_private,
};

#[derive(Debug, Args)]
pub(crate) struct GkeArgs {
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
    /// Write the CA behind the certificate of Google's host names (served through the proxy
    /// printed as `HTTPS_PROXY=`) to FILE; printed as `SSL_CERT_FILE=`, the trust bundle a Go
    /// client such as CAPG needs.
    #[arg(long, value_name = "FILE")]
    write_ca: Option<PathBuf>,
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

pub(crate) async fn run_gke(args: GkeArgs) -> Result<()> {
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
        writeln!(stdout, "HTTPS_PROXY={}", server.proxy_url())?;
        if let Some(path) = &args.write_ca {
            std::fs::write(path, server.ca_pem())
                .with_context(|| format!("writing {}", path.display()))?;
            writeln!(stdout, "SSL_CERT_FILE={}", path.display())?;
        }
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

#[derive(Debug, Args)]
pub(crate) struct GkeNetworkArgs {
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
pub(crate) struct GkeScaleArgs {
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
pub(crate) struct GkeDeleteArgs {
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

pub(crate) async fn run_gke_delete(args: GkeDeleteArgs) -> Result<()> {
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

pub(crate) async fn run_gke_network(args: GkeNetworkArgs) -> Result<()> {
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

pub(crate) async fn run_gke_scale(args: GkeScaleArgs) -> Result<()> {
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
