//! `bench`: the performance benchmark of a provider, figures P1–P12 (module docs of
//! `demo::bench`): ours on EKS, GKE or OKE, or the Go peer a user would otherwise pick there
//! (CAPA, CAPG, CAPOCI). Build release binaries first, so the provider measured is the one users
//! run:
//!
//!     cargo build --release -p provider-aws -p demo
//!     target/release/bench --sizes 100,200,400 --rest-seconds 600
//!     target/release/bench --cloud gke --byo-network --workload-servers --sizes 5
//!     target/release/bench --provider capg --sizes 5
//!
//! Writes `<out>/<stem>-bench.json`, `<stem>-rss.svg` and `<stem>-time.svg` (stem: `eks`,
//! `eks-byo`, `capa`, `gke`, `capg`, `oke`, `capoci`) and prints the JSON; with `--runs N`, each
//! run's under `<out>/run-<k>/` and the medians in `<out>`.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use clap::Parser;
use demo::bench::Subject;

#[derive(Parser)]
#[command(
    name = "bench",
    about = "P1–P12 of the performance benchmark for our EKS, GKE or OKE provider, or for the Go peer there (CAPA, CAPG, CAPOCI)"
)]
struct Args {
    /// Cumulative cluster counts, comma-separated (each size adds clusters up to it, applied at
    /// once).
    #[arg(long, value_delimiter = ',', default_values_t = [10, 25])]
    sizes: Vec<usize>,
    /// Seconds the settled clusters are watched at rest (P7, P8, P10; 0 leaves them out).
    #[arg(long, default_value_t = 600)]
    rest_seconds: u64,
    /// The provider's --poll-interval (its default: 30s).
    #[arg(long, default_value = "30s")]
    poll_interval: String,
    /// Skip P3 (kube-apiserver restarted, peak memory across the relist).
    #[arg(long)]
    no_relist: bool,
    /// Skip P9 (the first size again with 10 % of the emulator's answers 429 + Retry-After).
    #[arg(long)]
    no_throttled: bool,
    /// P5: clusters created at once, each kept CREATING by the emulator (0 skips P5).
    #[arg(long, default_value_t = 10)]
    active_clusters: usize,
    /// P5: seconds each stays CREATING.
    #[arg(long, default_value_t = 60)]
    active_delay_seconds: u64,
    /// P6: clusters created at once, each kept CREATING for --delayed-seconds (0 skips P6;
    /// the target's P6 is 200 for 840 s).
    #[arg(long, default_value_t = 0)]
    delayed_clusters: usize,
    /// P6: seconds each stays CREATING.
    #[arg(long, default_value_t = 840)]
    delayed_seconds: u64,
    /// Runs of the whole benchmark, each in a fresh environment: with more than one, each run's
    /// files go to `<out>/run-<k>/` and `<out>` gets the medians (and each figure's range).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
    runs: u16,
    /// Seconds one size may take to be ready.
    #[arg(long, default_value_t = 3600)]
    timeout_seconds: u64,
    /// Where the JSON and plots go.
    #[arg(long, default_value = "target/bench")]
    out: PathBuf,
    /// The provider measured: ours (on `--cloud`), or a Go peer built once from its released
    /// Go module and run unpatched, always on a network brought by the user: Cluster API
    /// Provider AWS v2.13.0 (`capa`, EKS; `testbed/build-capa.sh`, `CAPA_ASSETS`), GCP v1.13.1
    /// (`capg`, GKE; `testbed/build-capg.sh`, `CAPG_ASSETS`), for OCI v0.24.0 (`capoci`, OKE;
    /// `testbed/build-capoci.sh`, `CAPOCI_ASSETS`).
    #[arg(long, value_enum, default_value_t = Provider::Ours)]
    provider: Provider,
    /// The cloud of our provider (a peer implies its own).
    #[arg(long, value_enum)]
    cloud: Option<CloudArg>,
    /// Clusters on a network the user brings (made beforehand: a VPC and subnets in moto, a
    /// GKE network and subnetwork, an OKE VCN and subnets), the scenario the peers run.
    #[arg(long)]
    byo_network: bool,
    /// Back every cluster with a real workload API server (~260 MiB each; always on for the
    /// peers: CAPA reaches into every workload cluster).
    #[arg(long)]
    workload_servers: bool,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Provider {
    Ours,
    Capa,
    Capg,
    Capoci,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum CloudArg {
    Eks,
    Gke,
    Oke,
}

/// What `--provider` and `--cloud` name together.
fn subject(provider: Provider, cloud: Option<CloudArg>) -> Result<Subject> {
    use demo::env::EksProvider;
    let (subject, own) = match (provider, cloud.unwrap_or(CloudArg::Eks)) {
        (Provider::Ours, CloudArg::Eks) => (Subject::Eks(EksProvider::Ours), CloudArg::Eks),
        (Provider::Ours, CloudArg::Gke) => (Subject::Gke, CloudArg::Gke),
        (Provider::Ours, CloudArg::Oke) => (Subject::Oke, CloudArg::Oke),
        (Provider::Capa, _) => (Subject::Eks(EksProvider::Capa), CloudArg::Eks),
        (Provider::Capg, _) => (Subject::Capg, CloudArg::Gke),
        (Provider::Capoci, _) => (Subject::Capoci, CloudArg::Oke),
    };
    if cloud.is_some_and(|c| c != own) {
        anyhow::bail!("--cloud names another cloud than the peer's: leave it out for a peer");
    }
    Ok(subject)
}

#[tokio::main]
async fn main() -> Result<()> {
    let args = Args::parse();
    let options = demo::bench::BenchOptions {
        sizes: args.sizes,
        rest: Duration::from_secs(args.rest_seconds),
        poll_interval: args.poll_interval,
        relist: !args.no_relist,
        throttled: !args.no_throttled,
        active_clusters: args.active_clusters,
        active_delay: Duration::from_secs(args.active_delay_seconds),
        delayed_clusters: args.delayed_clusters,
        delayed_for: Duration::from_secs(args.delayed_seconds),
        timeout: Duration::from_secs(args.timeout_seconds),
        out: args.out.clone(),
        subject: subject(args.provider, args.cloud)?,
        byo_network: args.byo_network,
        workload_servers: args.workload_servers,
    };
    let report = match args.runs {
        1 => demo::bench::run(&options).await?,
        runs => demo::bench::run_many(&options, usize::from(runs)).await?,
    };
    println!("{}", serde_json::to_string_pretty(&report)?);
    eprintln!(
        "bench: wrote {}",
        args.out
            .join(format!(
                "{}-bench.json",
                report["provider"].as_str().unwrap_or("eks")
            ))
            .display()
    );
    Ok(())
}
