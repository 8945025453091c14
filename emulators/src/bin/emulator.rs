//! `emulator <cloud> …`: runs one cloud's emulator on loopback until SIGTERM or Ctrl-C.
//!
//! The first line on stdout is `listening on http://127.0.0.1:<port>` (tests parse it); logs go to
//! stderr (`RUST_LOG` filters them).

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use emulators::eks::{EksConfig, serve_eks};
use emulators::kit::workload::WorkloadServers;
use emulators::kit::{Delays, Timing};
use std::io::Write as _;

#[derive(Debug, Parser)]
#[command(
    name = "emulator",
    about = "Local clouds speaking each cloud's real wire protocol"
)]
struct Cli {
    #[command(subcommand)]
    cloud: Cloud,
}

#[derive(Debug, Subcommand)]
enum Cloud {
    /// Amazon EKS (REST-JSON, as the AWS SDKs send it).
    Eks(EksArgs),
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
    #[arg(long)]
    ec2_endpoint: Option<String>,
    /// Back every cluster with a real kube-apiserver (assets from TESTBED_ASSETS or built once).
    #[arg(long)]
    workload_servers: bool,
    /// Directory for the workload servers' certificates and logs (default: a new temporary one).
    #[arg(long)]
    workload_dir: Option<PathBuf>,
    /// Seconds a cluster takes to create, update and delete.
    #[arg(long, default_value_t = 2.0)]
    cluster_delay: f64,
    /// Seconds a nodegroup takes to create, update and delete.
    #[arg(long, default_value_t = 1.0)]
    pool_delay: f64,
    /// Seconds an add-on (or other small sub-resource) takes to create, update and delete.
    #[arg(long, default_value_t = 0.5)]
    addon_delay: f64,
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
    match Cli::parse().cloud {
        Cloud::Eks(args) => run_eks(args).await,
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

async fn run_eks(args: EksArgs) -> Result<()> {
    let listener = tokio::net::TcpListener::bind((args.host.as_str(), args.port))
        .await
        .with_context(|| format!("binding {}:{}", args.host, args.port))?;
    let port = listener.local_addr()?.port();
    let host = if args.host == "0.0.0.0" {
        "127.0.0.1"
    } else {
        args.host.as_str()
    };
    let base = format!("http://{host}:{port}");

    let mut config = EksConfig::new(&args.region, &args.account_id);
    config.credentials = credentials(&args)?;
    config.ec2_endpoint = args.ec2_endpoint.clone();
    if args.workload_servers {
        let assets =
            testbed::Assets::locate().context("locating the workload API server binaries")?;
        let dir = match &args.workload_dir {
            Some(d) => d.clone(),
            None => std::env::temp_dir().join(format!("eks-emulator-{}", std::process::id())),
        };
        let servers = WorkloadServers::new(assets, dir, format!("{base}/_emulator/tokenreview"))?;
        config.workload = Some(Arc::new(servers));
    }
    let timing = Timing {
        cluster: Delays::uniform(args.cluster_delay),
        pool: Delays::uniform(args.pool_delay),
        addon: Delays::uniform(args.addon_delay),
    };
    let handle = serve_eks(config, timing, listener).await?;

    {
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "listening on {}", handle.url())?;
        stdout.flush()?;
    }
    tracing::info!(url = %handle.url(), region = %args.region, "EKS emulator serving");

    wait_for_signal().await;
    tracing::info!("shutting down");
    handle.shutdown().await;
    Ok(())
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
