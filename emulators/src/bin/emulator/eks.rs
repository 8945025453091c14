//! `emulator eks` (the EKS emulator, with moto when asked) and the EKS and EC2 changes made from
//! outside Cluster API: `eks-scale`, `eks-delete` and `aws-network`.

use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Args;
use emulators::eks::ec2::Ec2;
use emulators::eks::outside::{self, EksApi, ScaleRequest};
use emulators::eks::{EksConfig, serve_eks};
use emulators::kit::{Delays, Timing};
use emulators::moto::Moto;

use crate::{Endpoints, check_endpoints, listen, wait_for_signal, workload_servers};

#[derive(Debug, Args)]
pub(crate) struct EksArgs {
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

pub(crate) async fn run_eks(args: EksArgs) -> Result<()> {
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
pub(crate) struct EksDeleteArgs {
    #[command(flatten)]
    target: EksPoolArgs,
    /// Delete the whole EKS cluster (its node groups first, as EKS demands) instead of the
    /// pool's node group.
    #[arg(long)]
    whole_cluster: bool,
}

#[derive(Debug, Args)]
pub(crate) struct EksScaleArgs {
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

pub(crate) async fn run_eks_scale(args: EksScaleArgs) -> Result<()> {
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

pub(crate) async fn run_eks_delete(args: EksDeleteArgs) -> Result<()> {
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
pub(crate) struct AwsNetworkArgs {
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

pub(crate) async fn run_aws_network(args: AwsNetworkArgs) -> Result<()> {
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
