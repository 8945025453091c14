//! `conformance`: judge a provider (`run`), run the management-plane test bed, or the demo on it.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use clap::{Parser, Subcommand};
use conformance::checks::CheckId;
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

/// What `run`, `faults` and `private` share: what to keep, and the profile's variables.
#[derive(clap::Args)]
struct RunDirArgs {
    /// Keep the run directory (logs, kubeconfigs, the local repository) even when all pass.
    #[arg(long)]
    keep: bool,
    /// Never keep the run directory or the planes, even when something fails.
    #[arg(long, conflicts_with = "keep")]
    discard: bool,
    /// A variable for the profile's ${NAME} expansion (repeatable), e.g. --set TOY_BREAK=x.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
}

#[derive(Subcommand)]
enum Command {
    /// Judge a provider against every contract check (C01…C65) on real management planes with
    /// real Cluster API core and clusterctl. Prints a table, optionally writes JUnit XML, and exits
    /// non-zero when any check fails. The profile says where the release is and how to start the
    /// provider and its cloud emulator (see conformance/PROFILE.md).
    Run {
        /// The provider's profile (YAML).
        #[arg(long)]
        profile: PathBuf,
        /// Write JUnit XML here.
        #[arg(long)]
        junit: Option<PathBuf>,
        /// Judge only these checks, comma-separated (e.g. C28,C31); only the steps they need run.
        #[arg(long, value_delimiter = ',')]
        only: Option<Vec<String>>,
        #[command(flatten)]
        run_dir: RunDirArgs,
    },
    /// Drive a provider through a cluster's create, upgrade, scale and delete while injecting
    /// faults (SIGKILLs at seeded points, kube-apiserver restart and etcd compaction, cloud 429s,
    /// 503s, dropped connections and slow answers, a pool deleted behind its back), with the
    /// provider running under its generated RBAC and most verbose logs; judge every reliability
    /// oracle and the security checks. Exits non-zero when any oracle fails.
    Faults {
        /// The provider's profile (YAML; the `faults:` block says what the emulator offers).
        #[arg(long)]
        profile: PathBuf,
        /// Seed of the kill plan (the same seed gives the same plan).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// SIGKILLs in all, spread over create, upgrade, scale and delete.
        #[arg(long, default_value_t = 20)]
        kills: u32,
        /// How long the settled cluster's resourceVersions must stay still, seconds.
        #[arg(long, default_value_t = 120)]
        still: u64,
        /// Write the figures and findings as JSON here.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Run the provider with the admin kubeconfig instead of its ServiceAccount's.
        #[arg(long)]
        as_admin: bool,
        #[command(flatten)]
        run_dir: RunDirArgs,
    },
    /// Drive a private-only cluster (its endpoint out of the management cluster's reach: the
    /// profile's `faults.privateVars`) through create, upgrade, scale and delete: the provider
    /// must manage it from the cloud API alone and say in its pools' NodesVisible condition what
    /// Cluster API core cannot see. Exits non-zero when any oracle fails.
    Private {
        /// The provider's profile (YAML).
        #[arg(long)]
        profile: PathBuf,
        /// Write the steps and findings as JSON here.
        #[arg(long)]
        json: Option<PathBuf>,
        #[command(flatten)]
        run_dir: RunDirArgs,
    },
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
    // Errors only by default, on stderr (stdout is the report). kube's client logs every failed
    // request at error level; the requests that fail are returned and judged, and the fault
    // run's proxy forwards through such a client while kube-apiserver is down on purpose.
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("error,kube_client=off"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
    match Cli::parse().command {
        Command::Run {
            profile,
            junit,
            only,
            run_dir,
        } => {
            run(
                profile,
                junit,
                only,
                run_dir.keep,
                run_dir.discard,
                run_dir.set,
            )
            .await
        }
        Command::Faults {
            profile,
            seed,
            kills,
            still,
            json,
            as_admin,
            run_dir,
        } => {
            let options = conformance::faults::FaultOptions {
                profile,
                seed,
                kills,
                still: Duration::from_secs(still),
                keep: run_dir.keep,
                discard: run_dir.discard,
                vars: assignments(run_dir.set)?,
                as_admin,
            };
            faults(options, json).await
        }
        Command::Private {
            profile,
            json,
            run_dir,
        } => {
            let options = conformance::faults::private::PrivateOptions {
                profile,
                keep: run_dir.keep,
                discard: run_dir.discard,
                vars: assignments(run_dir.set)?,
            };
            private(options, json).await
        }
        Command::Testbed { no_capi } => testbed(no_capi).await,
        Command::Demo { exit } => demo(exit).await,
    }
}

async fn run(
    profile: PathBuf,
    junit: Option<PathBuf>,
    only: Option<Vec<String>>,
    keep: bool,
    discard: bool,
    set: Vec<String>,
) -> Result<()> {
    let vars = assignments(set)?;
    let only = only
        .map(|ids| {
            ids.iter()
                .map(|id| {
                    let id = id.trim().to_uppercase();
                    id.parse::<CheckId>().map_err(|_| {
                        anyhow::anyhow!("--only names {id}, which is not a check (C01…C65)")
                    })
                })
                .collect::<Result<Vec<_>>>()
        })
        .transpose()?;
    let report = conformance::run::run(conformance::run::RunOptions {
        profile,
        only: only.clone(),
        keep,
        vars,
        discard,
    })
    .await?;
    let rows = report.results.rows(only.as_deref());
    println!(
        "Conformance of provider {} ({:.0}s)",
        report.provider,
        report.elapsed.as_secs_f64()
    );
    print!("{}", conformance::report::table(&rows));
    if let Some(path) = junit {
        std::fs::write(
            &path,
            conformance::report::junit(&report.provider, &rows, report.elapsed),
        )?;
        println!("JUnit XML: {}", path.display());
    }
    let failed: Vec<_> = rows
        .iter()
        .filter(|(_, o)| o.is_fail())
        .map(|(c, _)| c.id.as_str())
        .collect();
    if let Some(why) = &report.stopped {
        println!("Logs and kubeconfigs: {}", report.dir.display());
        anyhow::bail!("the run stopped before judging every check: {why}");
    }
    if !failed.is_empty() {
        println!("Logs and kubeconfigs: {}", report.dir.display());
        anyhow::bail!("{} check(s) failed: {}", failed.len(), failed.join(", "));
    }
    Ok(())
}

fn assignments(set: Vec<String>) -> Result<Vec<(String, String)>> {
    let mut vars = Vec::new();
    for s in set {
        let Some((k, v)) = s.split_once('=') else {
            anyhow::bail!("--set takes NAME=VALUE, got {s:?}");
        };
        vars.push((k.to_string(), v.to_string()));
    }
    Ok(vars)
}

async fn faults(options: conformance::faults::FaultOptions, json: Option<PathBuf>) -> Result<()> {
    let report = conformance::faults::run(options).await?;
    print!("{}", conformance::faults::table(&report));
    if let Some(path) = json {
        std::fs::write(&path, serde_json::to_string_pretty(&report)?)?;
        println!("JSON: {}", path.display());
    }
    if let Some(why) = &report.stopped {
        println!("Logs and kubeconfigs: {}", report.dir.display());
        anyhow::bail!("the fault run stopped early: {why}");
    }
    if !report.findings.is_empty() {
        println!("Logs and kubeconfigs: {}", report.dir.display());
        anyhow::bail!("{} oracle(s) failed", report.findings.len());
    }
    Ok(())
}

async fn private(
    options: conformance::faults::private::PrivateOptions,
    json: Option<PathBuf>,
) -> Result<()> {
    let report = conformance::faults::private::run(options).await?;
    print!("{}", conformance::faults::private::table(&report));
    if let Some(path) = json {
        std::fs::write(&path, serde_json::to_string_pretty(&report)?)?;
        println!("JSON: {}", path.display());
    }
    if let Some(why) = &report.stopped {
        println!("Logs and kubeconfigs: {}", report.dir.display());
        anyhow::bail!("the private-cluster run stopped early: {why}");
    }
    if !report.findings.is_empty() {
        println!("Logs and kubeconfigs: {}", report.dir.display());
        anyhow::bail!("{} oracle(s) failed", report.findings.len());
    }
    Ok(())
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
    eprintln!("Press Ctrl-C to stop (SIGTERM and SIGHUP stop it too).");
    testbed::process::stop_signal().await;
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
        testbed::process::stop_signal().await;
    }
    plane.stop().await;
    if failed > 0 {
        anyhow::bail!("{failed} check(s) failed");
    }
    Ok(())
}
