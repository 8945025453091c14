//! `emulator aks` (AKS behind ARM, with Entra ID's token endpoint) and the AKS changes made from
//! outside Cluster API: `aks-network`, `aks-scale` and `aks-delete`.

use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Args;
use emulators::kit::{Delays, Timing};

use crate::{Endpoints, check_endpoints, listen, wait_for_signal, workload_servers};

#[derive(Debug, Args)]
pub(crate) struct AksArgs {
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

pub(crate) async fn run_aks(args: AksArgs) -> Result<()> {
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
pub(crate) struct AksNetworkArgs {
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

pub(crate) async fn run_aks_network(args: AksNetworkArgs) -> Result<()> {
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
pub(crate) struct AksScaleArgs {
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

pub(crate) async fn run_aks_scale(args: AksScaleArgs) -> Result<()> {
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
pub(crate) struct AksDeleteArgs {
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

pub(crate) async fn run_aks_delete(args: AksDeleteArgs) -> Result<()> {
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
