//! `conformance`: run the management-plane test bed, or the demo on it.

use std::time::Duration;

use anyhow::Result;
use clap::{Parser, Subcommand};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, ListParams};
use testbed::{ManagementPlane, Options};

#[derive(Parser)]
#[command(
    name = "conformance",
    version,
    about = "Conformance suite and test bed for Cluster API managed-Kubernetes providers"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Start the real management plane (etcd, kube-apiserver, kube-controller-manager, Cluster API
    /// core) on loopback, print its kubeconfig path, and keep it running until Ctrl-C.
    Testbed {
        /// Do not start Cluster API core (plain Kubernetes only).
        #[arg(long)]
        no_capi: bool,
    },
    /// Start the management plane, prove each component works by using it, show the Cluster API
    /// objects on it, and keep running until Ctrl-C (or exit at once with --exit).
    Demo {
        /// Stop after showing the objects instead of waiting for Ctrl-C.
        #[arg(long)]
        exit: bool,
    },
}

#[tokio::main]
async fn main() -> Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .init();
    match Cli::parse().command {
        Command::Testbed { no_capi } => testbed(no_capi).await,
        Command::Demo { exit } => demo(exit).await,
    }
}

async fn start(capi: bool) -> Result<ManagementPlane> {
    eprintln!(
        "Starting the management plane (the first run builds it from Go modules; later runs take seconds)..."
    );
    let started = std::time::Instant::now();
    let plane = ManagementPlane::start(Options {
        capi,
        ..Options::default()
    })
    .await?;
    eprintln!(
        "Management plane up in {:.1}s: {}",
        started.elapsed().as_secs_f64(),
        plane.server()
    );
    Ok(plane)
}

async fn testbed(no_capi: bool) -> Result<()> {
    let plane = start(!no_capi).await?;
    println!("{}", plane.kubeconfig_path().display());
    eprintln!("export KUBECONFIG={}", plane.kubeconfig_path().display());
    eprintln!("logs: {}", plane.log_dir().display());
    eprintln!("Versions:\n{}", plane.assets().versions());
    eprintln!("Press Ctrl-C to stop.");
    tokio::signal::ctrl_c().await?;
    plane.stop().await;
    Ok(())
}

async fn demo(exit: bool) -> Result<()> {
    let plane = start(true).await?;
    println!("\nPinned versions:\n{}", plane.assets().versions());
    println!("Proving each component by using it:");
    let checks = conformance::bed_check::run(&plane, "demo", Duration::from_secs(60)).await?;
    let mut failed = 0;
    for check in &checks {
        let (mark, detail) = match &check.outcome {
            Ok(observed) => ("ok  ", observed.as_str()),
            Err(why) => {
                failed += 1;
                ("FAIL", why.as_str())
            }
        };
        println!(
            "  [{mark}] {} {} ({})\n         {detail}",
            check.id, check.statement, check.component
        );
    }
    let client = plane.client().await?;
    println!("\nCluster API objects in namespace demo:");
    for (kind, version) in [("Cluster", "v1beta2"), ("MachinePool", "v1beta2")] {
        let ar = ApiResource::from_gvk(&GroupVersionKind::gvk("cluster.x-k8s.io", version, kind));
        let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), "demo", &ar);
        for obj in api.list(&ListParams::default()).await? {
            let phase = obj.data["status"]["phase"].as_str().unwrap_or("-");
            let endpoint = &obj.data["spec"]["controlPlaneEndpoint"];
            let detail = match endpoint["host"].as_str() {
                Some(host) => format!("  endpoint={host}:{}", endpoint["port"]),
                None => String::new(),
            };
            let deleting = if obj.metadata.deletion_timestamp.is_some() {
                "  (deleting)"
            } else {
                ""
            };
            println!(
                "  {kind}/{}  phase={phase}{detail}{deleting}",
                obj.metadata.name.unwrap_or_default()
            );
        }
    }
    println!("\nkubeconfig: {}", plane.kubeconfig_path().display());
    if !exit {
        println!("Press Ctrl-C to stop.");
        tokio::signal::ctrl_c().await?;
    }
    plane.stop().await;
    if failed > 0 {
        anyhow::bail!("{failed} check(s) failed");
    }
    Ok(())
}
