//! `kubectl managed` (installed as `kubectl-managed` on the PATH, kubectl finds it as a plugin).

use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use kubectl_managed::kube_api::Cluster;
use kubectl_managed::migrate::{self, Options};

/// The managed-Kubernetes providers' kubectl plugin.
#[derive(Parser, Debug)]
#[command(name = "kubectl managed", version, about)]
struct Cli {
    /// The kubeconfig of the management cluster (default: $KUBECONFIG, then ~/.kube/config).
    #[arg(long, global = true, env = "KUBECONFIG")]
    kubeconfig: Option<std::path::PathBuf>,
    /// The kubeconfig context to use (default: its current context).
    #[arg(long, global = true)]
    context: Option<String>,
    /// The Cluster's namespace.
    #[arg(short, long, global = true, default_value = "default")]
    namespace: String,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Move a Cluster from CAPA, CAPZ, CAPG or CAPOCI to our provider for the same cloud,
    /// adopting the same cloud resources: nothing is created, deleted or recreated.
    ///
    /// Without flags: pause, write our objects, point the Cluster at them and show our
    /// provider's plans (nothing written in the cloud). Run again with --accept to adopt and
    /// finish, or with --rollback to go back.
    Migrate {
        /// The Cluster.
        cluster: String,
        /// Print the objects that would be written and what becomes of every field; change
        /// nothing.
        #[arg(long)]
        dry_run: bool,
        /// Accept the plans: our providers tag the resources as theirs, then the peer's objects
        /// are removed (their cloud resources untouched).
        #[arg(long, conflicts_with = "rollback")]
        accept: bool,
        /// Put the Cluster back on the peer's objects (any time before the move finished).
        #[arg(long)]
        rollback: bool,
        /// How long to wait for our providers at each step.
        #[arg(long, default_value = "10m", value_parser = parse_duration)]
        timeout: Duration,
        /// The cloud region, when the peer's objects name none (CAPOCI's template leaves it to
        /// its controller's default region).
        #[arg(long)]
        region: Option<String>,
    },
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    let (number, unit) = text.split_at(
        text.find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len()),
    );
    let n: u64 = number
        .parse()
        .map_err(|_| format!("not a duration: {text} (e.g. 90s, 10m)"))?;
    match unit {
        "s" | "" => Ok(Duration::from_secs(n)),
        "m" => Ok(Duration::from_secs(n * 60)),
        "h" => Ok(Duration::from_secs(n * 3600)),
        _ => Err(format!("not a duration: {text} (e.g. 90s, 10m)")),
    }
}

#[tokio::main]
async fn main() {
    let cli = Cli::parse();
    if let Err(e) = run(cli).await {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

async fn run(cli: Cli) -> Result<()> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let options = kube::config::KubeConfigOptions {
        context: cli.context.clone(),
        ..Default::default()
    };
    let config = match &cli.kubeconfig {
        Some(path) => {
            let file = kube::config::Kubeconfig::read_from(path)
                .with_context(|| format!("reading {}", path.display()))?;
            kube::Config::from_custom_kubeconfig(file, &options).await?
        }
        None => kube::Config::from_kubeconfig(&options).await?,
    };
    let client = kube::Client::try_from(config)?;
    let mc = Cluster::connect(client, &cli.namespace).await?;
    match cli.command {
        Command::Migrate {
            cluster,
            dry_run,
            accept,
            rollback,
            timeout,
            region,
        } => {
            let options = Options {
                dry_run,
                accept,
                timeout,
                region,
            };
            if rollback {
                migrate::rollback(&mc, &cluster, &options).await
            } else {
                migrate::migrate(&mc, &cluster, &options).await
            }
        }
    }
}
