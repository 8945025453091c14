//! `emulator oke` (Container Engine and the Core Services networking, OCI-signed) and the OKE
//! changes made from outside Cluster API: `oke-network`, `oke-scale` and `oke-delete`.

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
pub(crate) struct OkeArgs {
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

pub(crate) async fn run_oke(args: OkeArgs) -> Result<()> {
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
pub(crate) struct OkeNetworkArgs {
    #[command(flatten)]
    caller: OciCaller,
    /// The VCN's display name.
    #[arg(long, default_value = "brought-vcn")]
    name: String,
    /// The second octet of the VCN's 10.x.0.0/16.
    #[arg(long, default_value_t = 90)]
    octet: u8,
}

pub(crate) async fn run_oke_network(args: OkeNetworkArgs) -> Result<()> {
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
pub(crate) struct OkeScaleArgs {
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

pub(crate) async fn run_oke_scale(args: OkeScaleArgs) -> Result<()> {
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
pub(crate) struct OkeDeleteArgs {
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

pub(crate) async fn run_oke_delete(args: OkeDeleteArgs) -> Result<()> {
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
