//! `demo [--cloud eks|gke|aks|oke|both|all]`: the whole flow on the local default — a real
//! management plane, the emulated clouds (EKS: moto for EC2 and our EKS emulator; GKE: our GKE
//! emulator; AKS: our ARM and Entra ID emulator; OKE: our Container Engine and Core Services
//! emulator, every request signed; each with real workload API servers), their providers, and
//! one managed cluster per cloud
//! created from the provider's cluster template with the real clusterctl, shown as its
//! conditions change; then, if asked, upgraded, scaled and deleted. `demo eks …` is the same as
//! `demo --cloud eks …`.

use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use demo::env::{Cloud, EnvOptions, Environment};
use demo::progress::{Snapshot, Tracker};
use k8s_openapi::api::core::v1::{Namespace, Node, Secret};
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch,
    PatchParams, PostParams,
};
use serde_json::json;

#[derive(Parser)]
#[command(
    name = "demo",
    about = "Cluster API managed Kubernetes on the local default"
)]
struct Cli {
    /// `eks` (the default, as `demo eks`).
    #[command(subcommand)]
    cloud: Option<Legacy>,
    #[command(flatten)]
    demo: DemoArgs,
}

#[derive(Subcommand)]
enum Legacy {
    /// Amazon EKS (emulated): the same as `--cloud eks`.
    Eks(DemoArgs),
}

/// Which clouds the demo runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Clouds {
    /// Amazon EKS: moto, the EKS emulator, provider-aws.
    Eks,
    /// Google GKE: the GKE emulator, provider-gcp.
    Gke,
    /// Azure AKS: the AKS emulator (ARM and Entra ID), provider-azure.
    Aks,
    /// Oracle OKE: the OKE emulator (Container Engine, Core Services; signed requests),
    /// provider-oci.
    Oke,
    /// EKS and GKE, from one management plane: one cluster on each, from the same template
    /// shape.
    Both,
    /// EKS, GKE, AKS and OKE, from one management plane.
    All,
}

#[derive(Args, Clone)]
struct DemoArgs {
    /// The clouds: eks, gke, aks, oke, both (eks and gke) or all.
    #[arg(long, value_enum, default_value = "eks")]
    cloud: Clouds,
    /// The Cluster's name.
    #[arg(long, default_value = "demo")]
    name: String,
    /// The namespace it lives in.
    #[arg(long, default_value = "demo")]
    namespace: String,
    /// Kubernetes version to create.
    #[arg(long, default_value = "v1.31.0")]
    version: String,
    /// Worker nodes.
    #[arg(long, default_value_t = 2)]
    workers: u32,
    /// Seconds the emulated EKS takes per cluster operation (EKS itself takes ~15 minutes).
    #[arg(long, default_value_t = 8.0)]
    cluster_delay: f64,
    /// Seconds per node-group operation.
    #[arg(long, default_value_t = 4.0)]
    pool_delay: f64,
    /// Then upgrade to this version (one minor at a time, control plane first).
    #[arg(long)]
    upgrade_to: Option<String>,
    /// Then scale the node pool to this many nodes.
    #[arg(long)]
    scale: Option<u32>,
    /// Then delete the cluster and show that nothing is left.
    #[arg(long)]
    delete: bool,
    /// Keep everything running at the end until Ctrl-C.
    #[arg(long)]
    keep: bool,
}

#[tokio::main]
async fn main() -> Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "warn,kube_client=off".into()),
        )
        .init();
    let cli = Cli::parse();
    let args = match cli.cloud {
        Some(Legacy::Eks(args)) => DemoArgs {
            cloud: Clouds::Eks,
            ..args
        },
        None => cli.demo,
    };
    demo(args).await
}

fn clouds(c: Clouds) -> Vec<Cloud> {
    match c {
        Clouds::Eks => vec![Cloud::Eks],
        Clouds::Gke => vec![Cloud::Gke],
        Clouds::Aks => vec![Cloud::Aks],
        Clouds::Oke => vec![Cloud::Oke],
        Clouds::Both => vec![Cloud::Eks, Cloud::Gke],
        Clouds::All => vec![Cloud::Eks, Cloud::Gke, Cloud::Aks, Cloud::Oke],
    }
}

async fn demo(args: DemoArgs) -> Result<()> {
    let clouds = clouds(args.cloud);
    let parts: Vec<&str> = clouds
        .iter()
        .map(|c| match c {
            Cloud::Eks => "moto, the EKS emulator, provider-aws",
            Cloud::Gke => "the GKE emulator, provider-gcp",
            Cloud::Aks => "the AKS emulator, provider-azure",
            Cloud::Oke => "the OKE emulator, provider-oci",
        })
        .collect();
    println!(
        "Starting the local default: management plane (etcd, kube-apiserver, kube-controller-manager, Cluster API core), {} ...",
        parts.join("; ")
    );
    let options = EnvOptions {
        cluster_delay: args.cluster_delay,
        pool_delay: args.pool_delay,
        poll_interval: "2s",
        clouds: clouds.clone(),
        ..EnvOptions::default()
    };
    let mut env = Environment::start(options).await?;
    println!(
        "  management plane: {}  (KUBECONFIG={})",
        env.plane.server(),
        env.plane.kubeconfig_path().display()
    );
    if let Some(eks) = env.eks() {
        println!(
            "  moto: {}   EKS emulator: {}",
            eks.moto.url(),
            eks.server.url()
        );
    }
    if let Some(gke) = env.gke() {
        println!(
            "  GKE emulator: {}   (project {}, key {})",
            gke.server.url(),
            demo::env::GCP_PROJECT,
            gke.key_file.display()
        );
    }
    if let Some(aks) = env.aks() {
        println!(
            "  AKS emulator (ARM and Entra ID): {}   (subscription {})",
            aks.server.url(),
            emulators::aks::SUBSCRIPTION
        );
    }
    if let Some(oke) = env.oke() {
        println!(
            "  OKE emulator (Container Engine, Core Services, Identity): {}   (compartment {}, key {})",
            oke.server.url(),
            emulators::oke::COMPARTMENT,
            oke.key_file.display()
        );
    }
    println!("  logs: {}", env.dir().join("logs").display());
    // A signal stops the demo in order: the processes it started go with the environment.
    let result = tokio::select! {
        result = run(&mut env, &args) => result,
        () = testbed::process::stop_signal() => Err(anyhow::anyhow!("stopped by a signal")),
    };
    if let Err(e) = &result {
        println!(
            "\nThe demo stopped: {e:#}\nprovider log: {}",
            env.provider_log().display()
        );
        let _ = env.plane.keep();
    }
    if args.keep && result.is_ok() {
        println!("\nEverything keeps running; press Ctrl-C to stop.");
        testbed::process::stop_signal().await;
    }
    env.stop().await;
    result
}

/// The cluster of `cloud` in a demo of `clouds`: the demo's name, suffixed with the cloud when
/// both run.
fn cluster_name(args: &DemoArgs, cloud: Cloud, clouds: &[Cloud]) -> String {
    if clouds.len() > 1 {
        format!("{}-{}", args.name, cloud.kind_prefix().to_ascii_lowercase())
    } else {
        args.name.clone()
    }
}

async fn run(env: &mut Environment, args: &DemoArgs) -> Result<()> {
    let clouds = env.clouds();
    let client = env.plane.client().await?;
    let namespaces: Api<Namespace> = Api::all(client.clone());
    if namespaces.get_opt(&args.namespace).await?.is_none() {
        namespaces
            .create(
                &PostParams::default(),
                &serde_json::from_value(json!({"metadata": {"name": args.namespace}}))?,
            )
            .await?;
    }
    for cloud in &clouds {
        let name = cluster_name(args, *cloud, &clouds);
        println!(
            "\n$ clusterctl generate cluster {name} --from {}/templates/cluster-template.yaml --kubernetes-version {} --worker-machine-count {} --target-namespace {}",
            cloud.binary(),
            args.version,
            args.workers,
            args.namespace
        );
        let yaml = env
            .generate(*cloud, &name, &args.namespace, &args.version, args.workers)
            .await?;
        for obj in env.apply_yaml(&yaml, &args.namespace).await? {
            let kind = obj.types.map(|t| t.kind).unwrap_or_default();
            println!("  applied {kind}/{}", obj.metadata.name.unwrap_or_default());
        }
    }
    println!("\nProgress (object, condition, status, reason, message):");
    let prefixes: Vec<&'static str> = clouds.iter().map(|c| c.kind_prefix()).collect();
    let mut tracker = Tracker::for_clouds(&prefixes);
    wait(
        env,
        &client,
        &args.namespace,
        &mut tracker,
        Duration::from_secs(600),
        "the cluster to be provisioned with its nodes",
        Snapshot::settled,
    )
    .await?;
    for cloud in &clouds {
        show_nodes(
            &client,
            &args.namespace,
            &cluster_name(args, *cloud, &clouds),
        )
        .await?;
    }

    if let Some(target) = &args.upgrade_to {
        println!(
            "\nUpgrading to {target}: control plane first, one minor at a time, then the node pool."
        );
        for cloud in &clouds {
            let name = cluster_name(args, *cloud, &clouds);
            patch(
                &client,
                &args.namespace,
                "controlplane.cluster.x-k8s.io",
                "v1alpha1",
                &format!("{}ControlPlane", cloud.kind_prefix()),
                &name,
                json!({"spec": {"version": target}}),
            )
            .await?;
            patch(
                &client,
                &args.namespace,
                "cluster.x-k8s.io",
                "v1beta2",
                "MachinePool",
                &format!("{name}-pool-0"),
                json!({"spec": {"template": {"spec": {"version": target}}}}),
            )
            .await?;
        }
        wait(
            env,
            &client,
            &args.namespace,
            &mut tracker,
            Duration::from_secs(900),
            "the upgrade",
            |s| s.upgraded_to(target),
        )
        .await?;
        for cloud in &clouds {
            show_nodes(
                &client,
                &args.namespace,
                &cluster_name(args, *cloud, &clouds),
            )
            .await?;
        }
    }
    if let Some(count) = args.scale {
        println!("\nScaling the node pool to {count}.");
        for cloud in &clouds {
            patch(
                &client,
                &args.namespace,
                "cluster.x-k8s.io",
                "v1beta2",
                "MachinePool",
                &format!("{}-pool-0", cluster_name(args, *cloud, &clouds)),
                json!({"spec": {"replicas": count}}),
            )
            .await?;
        }
        wait(
            env,
            &client,
            &args.namespace,
            &mut tracker,
            Duration::from_secs(600),
            "the new size",
            |s| {
                s.settled()
                    && s.pools
                        .values()
                        .all(|(desired, _, _)| *desired == i64::from(count))
            },
        )
        .await?;
        for cloud in &clouds {
            show_nodes(
                &client,
                &args.namespace,
                &cluster_name(args, *cloud, &clouds),
            )
            .await?;
        }
    }
    if args.delete {
        println!(
            "\nDeleting the Cluster: node pools first, then the control plane, then the network."
        );
        let resource = ApiResource::from_gvk(&GroupVersionKind::gvk(
            "cluster.x-k8s.io",
            "v1beta2",
            "Cluster",
        ));
        for cloud in &clouds {
            Api::<DynamicObject>::namespaced_with(client.clone(), &args.namespace, &resource)
                .delete(
                    &cluster_name(args, *cloud, &clouds),
                    &DeleteParams::default(),
                )
                .await?;
        }
        wait(
            env,
            &client,
            &args.namespace,
            &mut tracker,
            Duration::from_secs(900),
            "every object to be gone",
            |s| !s.any_left,
        )
        .await?;
        println!(
            "All gone: the emulators hold {} workload API servers.",
            env.workload_servers_running()
        );
        if let Some(oke) = env.oke() {
            println!(
                "  OKE holds {} clusters, node pools or network resources.",
                oke.server.oke().held()
            );
        }
    }
    Ok(())
}

async fn wait(
    env: &mut Environment,
    client: &kube::Client,
    namespace: &str,
    tracker: &mut Tracker,
    timeout: Duration,
    what: &str,
    done: impl Fn(&Snapshot) -> bool,
) -> Result<()> {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        env.ensure_provider_running()?;
        let snapshot = tracker.poll(client, namespace).await?;
        if done(&snapshot) {
            return Ok(());
        }
        if tokio::time::Instant::now() > deadline {
            bail!("timed out after {timeout:?} waiting for {what}");
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

async fn patch(
    client: &kube::Client,
    namespace: &str,
    group: &str,
    version: &str,
    kind: &str,
    name: &str,
    body: serde_json::Value,
) -> Result<()> {
    let resource = ApiResource::from_gvk(&GroupVersionKind::gvk(group, version, kind));
    Api::<DynamicObject>::namespaced_with(client.clone(), namespace, &resource)
        .patch(name, &PatchParams::default(), &Patch::Merge(body))
        .await
        .with_context(|| format!("patching {kind}/{name}"))?;
    Ok(())
}

/// `kubectl get nodes` through the cluster's own kubeconfig Secret.
async fn show_nodes(client: &kube::Client, namespace: &str, cluster: &str) -> Result<()> {
    let secrets: Api<Secret> = Api::namespaced(client.clone(), namespace);
    let secret = secrets.get(&format!("{cluster}-kubeconfig")).await?;
    let bytes = secret
        .data
        .as_ref()
        .and_then(|d| d.get("value"))
        .context("kubeconfig Secret without data.value")?;
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("kubeconfig");
    std::fs::write(&path, &bytes.0)?;
    let workload = testbed::client_from(&path).await?;
    let nodes = Api::<Node>::all(workload)
        .list(&ListParams::default())
        .await?;
    println!(
        "\n$ kubectl --kubeconfig <(kubectl get secret {cluster}-kubeconfig -o jsonpath='{{.data.value}}' | base64 -d) get nodes"
    );
    println!(
        "{:<44} {:<8} {:<10} PROVIDER-ID",
        "NAME", "STATUS", "VERSION"
    );
    for node in nodes {
        let ready = node
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .and_then(|c| c.iter().find(|c| c.type_ == "Ready"))
            .map(|c| c.status == "True");
        println!(
            "{:<44} {:<8} {:<10} {}",
            node.metadata.name.unwrap_or_default(),
            if ready == Some(true) {
                "Ready"
            } else {
                "NotReady"
            },
            node.status
                .and_then(|s| s.node_info)
                .map(|i| i.kubelet_version)
                .unwrap_or_default(),
            node.spec.and_then(|s| s.provider_id).unwrap_or_default()
        );
    }
    Ok(())
}
