//! `emulator-footprint`: the EKS emulator's resident memory and start-up time, with 100 clusters
//! (workload API servers off) and with 3 clusters (on). Build the emulator first; the one
//! measured is the `emulator` binary next to this one, or the one `--emulator` names:
//!
//!     cargo build -p emulators --bin emulator && cargo build -p demo --bin emulator-footprint
//!     $CARGO_TARGET_DIR/debug/emulator-footprint --out target/bench
//!
//! Writes `<out>/emulator-footprint.json` and prints it. Numbers, not checks: a figure is
//! reported, never compared with a target.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use aws_sdk_eks::types::{ClusterStatus, VpcConfigRequest};
use clap::Parser;
use demo::env::{ACCESS_KEY_ID, REGION, SECRET_ACCESS_KEY};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Child;

/// How long the clusters of one run may take to be ACTIVE.
const ACTIVE_TIMEOUT: Duration = Duration::from_secs(300);

#[derive(Parser)]
#[command(
    name = "emulator-footprint",
    about = "The EKS emulator's memory and start-up time with 100 clusters, and with 3 backed by workload API servers"
)]
struct Args {
    /// Where the JSON goes.
    #[arg(long, default_value = "target/bench")]
    out: PathBuf,
    /// The emulator binary measured (default: `emulator` next to this executable).
    #[arg(long)]
    emulator: Option<PathBuf>,
}

#[tokio::main]
async fn main() -> Result<()> {
    let args = Args::parse();
    let emulator = match args.emulator {
        Some(path) => path,
        None => emulator_next_to_this()?,
    };
    let results = vec![
        measure(&emulator, 100, false).await?,
        measure(&emulator, 3, true).await?,
    ];
    let text = serde_json::to_string_pretty(&results)?;
    println!("{text}");
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let path = args.out.join("emulator-footprint.json");
    std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    eprintln!("emulator-footprint: wrote {}", path.display());
    Ok(())
}

/// The `emulator` binary in this executable's directory (`target/<profile>/`).
fn emulator_next_to_this() -> Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let candidate = exe.with_file_name("emulator");
    if candidate.is_file() {
        return Ok(candidate);
    }
    bail!(
        "emulator binary not found next to {}; build it with `cargo build -p emulators --bin emulator` or name it with --emulator",
        exe.display()
    )
}

/// One run: starts the EKS emulator (zero provisioning delay, workload API servers if
/// `workload`), creates `clusters` clusters, waits until all are ACTIVE, and reports the time
/// to listening, the idle RSS, the time to all ACTIVE and the RSS then (the emulator's own, and
/// with its workload API servers and their etcd).
async fn measure(emulator: &Path, clusters: usize, workload: bool) -> Result<serde_json::Value> {
    let started = Instant::now();
    let (mut child, url) = start_emulator(emulator, workload).await?;
    let startup = started.elapsed();
    let pid = child.id().context("the emulator has no pid")?;
    let idle_rss = rss_kib(pid);

    let eks = eks_client(&url);
    let create_start = Instant::now();
    let outcome = create_and_wait(&eks, clusters, create_start).await;
    let all_active = create_start.elapsed();
    let emulator_rss = rss_kib(pid);
    let tree_rss = tree_rss_kib(pid);
    testbed::process::terminate(&mut child, Duration::from_secs(30)).await;
    outcome?;
    Ok(serde_json::json!({
        "clusters": clusters,
        "workload_servers": workload,
        "startup_to_listening_ms": startup.as_millis(),
        "idle_rss_mib": kib_to_mib(idle_rss),
        "create_to_all_active_ms": all_active.as_millis(),
        "emulator_rss_mib": kib_to_mib(emulator_rss),
        "emulator_and_workload_servers_rss_mib": kib_to_mib(tree_rss),
    }))
}

/// Starts `emulator eks` with zero delays and the bench's credential; returns it once it says
/// where it listens, with that URL.
async fn start_emulator(emulator: &Path, workload: bool) -> Result<(Child, String)> {
    let credential = format!("{ACCESS_KEY_ID}:{SECRET_ACCESS_KEY}");
    let mut command = testbed::process::command(emulator);
    command
        .args(["eks", "--cluster-delay", "0", "--pool-delay", "0"])
        .args(["--credential", credential.as_str()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if workload {
        command.arg("--workload-servers");
    }
    let mut child = command
        .spawn()
        .with_context(|| format!("starting {}", emulator.display()))?;
    let stdout = child.stdout.take().context("the emulator's stdout")?;
    let mut stdout = BufReader::new(stdout);
    let mut line = String::new();
    stdout.read_line(&mut line).await?;
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .with_context(|| format!("the emulator's first line: {line:?}"))?
        .to_string();
    // The rest of its output is read and dropped: a closed pipe would fail its next line.
    tokio::spawn(async move { tokio::io::copy(&mut stdout, &mut tokio::io::sink()).await });
    Ok((child, url))
}

/// An EKS client of the emulator at `url`, signing as the bench's credential.
fn eks_client(url: &str) -> aws_sdk_eks::Client {
    let config = aws_sdk_eks::config::Builder::new()
        .behavior_version_latest()
        .endpoint_url(url)
        .region(aws_sdk_eks::config::Region::new(REGION))
        .credentials_provider(aws_sdk_eks::config::Credentials::new(
            ACCESS_KEY_ID,
            SECRET_ACCESS_KEY,
            None,
            None,
            "bench",
        ))
        .http_client(
            aws_smithy_http_client::Builder::new()
                .tls_provider(aws_smithy_http_client::tls::Provider::Rustls(
                    aws_smithy_http_client::tls::rustls_provider::CryptoMode::Ring,
                ))
                .build_https(),
        )
        .build();
    aws_sdk_eks::Client::from_conf(config)
}

/// Creates the clusters `bench-0` … and polls every 200 ms until all are ACTIVE (an error past
/// [`ACTIVE_TIMEOUT`] after `since`).
async fn create_and_wait(eks: &aws_sdk_eks::Client, clusters: usize, since: Instant) -> Result<()> {
    for i in 0..clusters {
        eks.create_cluster()
            .name(format!("bench-{i}"))
            .role_arn("arn:aws:iam::123456789012:role/eks")
            .resources_vpc_config(
                VpcConfigRequest::builder()
                    .subnet_ids("subnet-a")
                    .subnet_ids("subnet-b")
                    .build(),
            )
            .send()
            .await
            .with_context(|| format!("CreateCluster bench-{i}"))?;
    }
    loop {
        if active(eks, clusters).await? == clusters {
            return Ok(());
        }
        if since.elapsed() >= ACTIVE_TIMEOUT {
            bail!("clusters not ACTIVE in {ACTIVE_TIMEOUT:?}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// How many of `bench-0` … `bench-<clusters - 1>` are ACTIVE.
async fn active(eks: &aws_sdk_eks::Client, clusters: usize) -> Result<usize> {
    let mut active = 0;
    for i in 0..clusters {
        let c = eks
            .describe_cluster()
            .name(format!("bench-{i}"))
            .send()
            .await
            .with_context(|| format!("DescribeCluster bench-{i}"))?;
        if c.cluster().and_then(|c| c.status()) == Some(&ClusterStatus::Active) {
            active += 1;
        }
    }
    Ok(active)
}

/// Resident memory of `pid` in KiB (`VmRSS`), 0 if it cannot be read.
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            l.strip_prefix("VmRSS:")
                .map(|v| v.trim().trim_end_matches(" kB").trim().parse().unwrap_or(0))
        })
        .unwrap_or(0)
}

/// RSS of `pid` and of every descendant (the workload kube-apiservers and their etcd).
fn tree_rss_kib(pid: u32) -> u64 {
    rss_kib(pid) + children(pid).into_iter().map(tree_rss_kib).sum::<u64>()
}

/// The processes whose parent is `pid`.
fn children(pid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_string_lossy().parse::<u32>().ok())
        .filter(|child| parent(*child) == Some(pid))
        .collect()
}

/// The parent of `pid`, from `/proc/<pid>/stat` (the field after the state, past the name's
/// closing parenthesis).
fn parent(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')')
        .next()
        .and_then(|rest| rest.split_whitespace().nth(1))
        .and_then(|p| p.parse().ok())
}

/// KiB as MiB.
fn kib_to_mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}
