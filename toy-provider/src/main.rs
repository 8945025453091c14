//! `toy-provider`: release, cloud, run, outside-scale.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use toy_provider::breaks::{Break, Breaks};
use toy_provider::cloud::{self, CloudOptions};
use toy_provider::cloud_client::CloudClient;
use toy_provider::controller::{self, RunOptions};
use toy_provider::release;

#[derive(Debug, Parser)]
#[command(
    name = "toy-provider",
    about = "A breakable toy managed-Kubernetes provider and its toy cloud"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Write the clusterctl release (metadata.yaml, infrastructure-components.yaml, templates).
    Release {
        /// Folder to write into.
        dir: PathBuf,
        /// Break the release (repeatable; comma lists allowed).
        #[arg(long = "break", value_name = "BREAK")]
        breaks: Vec<String>,
    },
    /// Serve the toy cloud; prints TOY_CLOUD=<url> and `ready`.
    Cloud {
        /// Port on 127.0.0.1 (0: any free port).
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// Kubeconfig of the API server every toy cluster stands for (its Nodes go there).
        #[arg(long)]
        workload_kubeconfig: PathBuf,
    },
    /// Run the controller against the cluster in KUBECONFIG.
    Run {
        /// Base URL of the toy cloud.
        #[arg(long)]
        cloud: String,
        /// Reconcile only objects labelled cluster.x-k8s.io/watch-filter=<value>.
        #[arg(long)]
        watch_filter: Option<String>,
        /// Watch only this namespace (empty: all).
        #[arg(long)]
        namespace: Option<String>,
        /// Break the controller (repeatable; comma lists allowed; also env TOY_BREAK).
        #[arg(long = "break", value_name = "BREAK")]
        breaks: Vec<String>,
        /// Milliseconds between passes.
        #[arg(long, default_value_t = 500)]
        interval_ms: u64,
    },
    /// Change a pool's size the way the cloud's autoscaler would. Reads CLUSTER_NAMESPACE,
    /// CLUSTER_NAME, POOL_NAME and REPLICAS from the environment.
    OutsideScale {
        /// Base URL of the toy cloud.
        #[arg(long)]
        cloud: String,
    },
    /// The user kubeconfig's exec plugin: prints a client.authentication.k8s.io/v1 ExecCredential
    /// with the cluster's credential, fetched from the cloud when asked (never stored).
    Token {
        /// Base URL of the toy cloud.
        #[arg(long)]
        cloud: String,
        /// The cloud cluster.
        #[arg(long)]
        cluster: String,
    },
    /// List the breaks and the checks each should make fail.
    Breaks,
}

fn env(name: &str) -> Result<String> {
    std::env::var(name).with_context(|| format!("environment variable {name} is not set"))
}

fn breaks_with_env(mut items: Vec<String>) -> Result<Breaks> {
    if let Ok(v) = std::env::var("TOY_BREAK") {
        items.push(v);
    }
    Breaks::parse(items)
}

#[tokio::main]
async fn main() -> Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    match Cli::parse().command {
        Command::Release { dir, breaks } => {
            let breaks = Breaks::parse(breaks)?;
            release::write(&dir, &breaks)?;
            println!("{}", dir.display());
        }
        Command::Cloud {
            port,
            workload_kubeconfig,
        } => {
            cloud::serve(CloudOptions {
                port,
                workload_kubeconfig,
            })
            .await?;
        }
        Command::Run {
            cloud,
            watch_filter,
            namespace,
            breaks,
            interval_ms,
        } => {
            controller::run(RunOptions {
                cloud,
                // The release defaults both to " " (clusterctl rejects empty defaults).
                watch_filter: watch_filter
                    .map(|v| v.trim().to_string())
                    .filter(|v| !v.is_empty()),
                namespace: namespace
                    .map(|v| v.trim().to_string())
                    .filter(|v| !v.is_empty()),
                breaks: breaks_with_env(breaks)?,
                interval: Duration::from_millis(interval_ms),
            })
            .await?;
        }
        Command::OutsideScale { cloud } => {
            let replicas: u32 = env("REPLICAS")?
                .trim()
                .parse()
                .context("REPLICAS is not a number")?;
            let pool = CloudClient::new(&cloud)?
                .outside_scale(
                    &env("CLUSTER_NAMESPACE")?,
                    &env("CLUSTER_NAME")?,
                    &env("POOL_NAME")?,
                    replicas,
                )
                .await?;
            println!("pool {} desired size {}", pool.name, pool.desired_size);
        }
        Command::Token { cloud, cluster } => {
            let text = CloudClient::new(&cloud)?.credentials(&cluster).await?;
            let doc: serde_json::Value = serde_saphyr::from_str(&text)?;
            let user = &doc["users"][0]["user"];
            let credential = serde_json::json!({
                "apiVersion": "client.authentication.k8s.io/v1",
                "kind": "ExecCredential",
                "status": {
                    "clientCertificateData": decode_pem(&user["client-certificate-data"])?,
                    "clientKeyData": decode_pem(&user["client-key-data"])?,
                },
            });
            println!("{credential}");
        }
        Command::Breaks => {
            for b in Break::ALL {
                let what = if b.is_release() { "release" } else { "run" };
                println!("{:<28} {:<8} {}", b.name(), what, b.checks());
            }
        }
    }
    Ok(())
}

/// A kubeconfig's base64 `*-data` field as PEM text.
fn decode_pem(field: &serde_json::Value) -> Result<String> {
    use base64::Engine as _;
    let data = field
        .as_str()
        .context("the cloud's kubeconfig has no client certificate and key")?;
    let bytes = base64::engine::general_purpose::STANDARD.decode(data)?;
    Ok(String::from_utf8(bytes)?)
}
