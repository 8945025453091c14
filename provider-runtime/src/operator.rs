//! The entry point a provider's `main` calls.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use contract::capi::{Cluster, MachinePool};
use futures::FutureExt;
use futures::future::BoxFuture;
use kube::api::ListParams;
use kube::runtime::events::{Recorder, Reporter};

use crate::control_plane::{ControlPlaneCloud, ControlPlaneReconciler};
use crate::flags::CommonArgs;
use crate::health::{Health, LeaderState, Servers};
use crate::infra_cluster::{InfraClusterCloud, InfraClusterReconciler};
use crate::leader::{self, LeaseConfig};
use crate::machine_pool::{MachinePoolCloud, MachinePoolReconciler};
use crate::metrics::Metrics;
use crate::reconcile::{self, Env, KindController, ProviderObject, Reconciler, Role};
use crate::shutdown::Stop;
use crate::telemetry;
use crate::watches::{SharedWatch, cluster_relevance, machine_pool_relevance};

/// Who the provider is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProviderSpec {
    /// Short provider name (`eks`, `aks`, `gke`, `oke`). It names the server-side-apply field
    /// manager and the event reporter, prefixes the finalizers (`<name>.<group>/finalizer`) and
    /// the default Lease (`<name>-provider-leader`), and labels the metrics.
    pub name: &'static str,
}

impl ProviderSpec {
    /// A provider called `name`.
    pub const fn new(name: &'static str) -> Self {
        Self { name }
    }
}

/// A provider process: its flags, its kinds and their reconcilers.
///
/// ```no_run
/// # use provider_runtime::{Operator, ProviderSpec, CommonArgs};
/// # async fn example(args: CommonArgs) -> anyhow::Result<()> {
/// Operator::new(ProviderSpec::new("eks"), args)
///     // .controller::<EksCluster, _>(ClusterReconciler::new(cloud.clone()))
///     // .controller::<EksControlPlane, _>(ControlPlaneReconciler::new(cloud.clone()))
///     // .controller::<EksMachinePool, _>(PoolReconciler::new(cloud))
///     .run()
///     .await
/// # }
/// ```
pub struct Operator {
    spec: ProviderSpec,
    args: CommonArgs,
    metrics: Metrics,
    controllers: Vec<Box<dyn KindController>>,
}

impl std::fmt::Debug for Operator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Operator")
            .field("spec", &self.spec)
            .field("args", &self.args)
            .field(
                "kinds",
                &self
                    .controllers
                    .iter()
                    .map(|c| c.kind())
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl Operator {
    /// A provider with no kinds yet.
    pub fn new(spec: ProviderSpec, args: CommonArgs) -> Self {
        Self {
            metrics: Metrics::new(spec.name),
            spec,
            args,
            controllers: Vec::new(),
        }
    }

    /// Registers the reconciler of kind `K` (one per kind).
    pub fn controller<K: ProviderObject, R: Reconciler<K>>(mut self, reconciler: R) -> Self {
        self.controllers
            .push(reconcile::controller::<K, R>(reconciler));
        self
    }

    /// The metrics registry.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Runs until SIGTERM or Ctrl-C, with a client from the environment (in-cluster config or
    /// kubeconfig). Logging is set up from the flags first.
    ///
    /// # Errors
    /// When no client can be built, a listener cannot bind, or the leader lease is lost.
    pub async fn run(self) -> anyhow::Result<()> {
        telemetry::init(self.args.log_format, self.args.verbose);
        let client = kube::Client::try_default().await?;
        self.run_with(client, shutdown_signal()).await
    }

    /// Runs with `client` until `shutdown` resolves (tests use this to run in-process).
    ///
    /// In order: logging, the metrics and health listeners, the start-up check that every
    /// CRD is installed (readiness stays false until it passes; it is retried), then the
    /// controllers — under leader election when `--leader-elect` is set.
    ///
    /// # Errors
    /// When a listener cannot bind or the leader lease is lost.
    pub async fn run_with(
        self,
        client: kube::Client,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()> {
        let Self {
            spec,
            args,
            metrics,
            controllers,
        } = self;
        telemetry::init(args.log_format, args.verbose);
        let stop = Stop::new();
        {
            let stop = stop.clone();
            tokio::spawn(async move {
                shutdown.await;
                stop.trigger();
            });
        }

        let health = Health::new();
        let servers = Servers::bind(
            args.health_probe_bind_address,
            args.metrics_bind_address,
            health.clone(),
            metrics.clone(),
        )
        .await?;
        tracing::info!(provider = spec.name, addresses = ?servers.local_addrs(), "serving health and metrics");
        let server_task = tokio::spawn(servers.serve(stop.wait()));

        let env = Arc::new(Env {
            recorder: Recorder::new(
                client.clone(),
                Reporter {
                    controller: spec.name.to_owned(),
                    instance: std::env::var("HOSTNAME").ok().filter(|h| !h.is_empty()),
                },
            ),
            client: client.clone(),
            provider: spec.name,
            namespace: args.watch_namespace().map(str::to_owned),
            watch_filter: args.watch_filter().map(str::to_owned),
            concurrency: args.concurrency,
            sync_period: args.sync_period,
            calls: crate::CloudCalls::new(metrics.call_counter()),
            metrics: metrics.clone(),
            holds: crate::pacing::retry::Holds::default(),
        });

        let result = async {
            if !wait_for_crds(&env, &controllers, &stop).await {
                return Ok(());
            }
            health.set_crds_installed(true);
            if args.leader_elect {
                let config = LeaseConfig::resolve(
                    spec.name,
                    args.leader_elect_namespace.as_deref(),
                    args.leader_elect_lease_name.as_deref(),
                    client.default_namespace(),
                );
                leader::run_while_leading(
                    client.clone(),
                    config,
                    health.clone(),
                    metrics.clone(),
                    stop.clone(),
                    |work_stop| run_controllers(env.clone(), controllers, work_stop),
                )
                .await
            } else {
                health.set_leader(LeaderState::Disabled);
                metrics.set_leader(true);
                run_controllers(env.clone(), controllers, stop.clone()).await
            }
        }
        .await;

        stop.trigger();
        match tokio::time::timeout(Duration::from_secs(5), server_task).await {
            Ok(Ok(Err(error))) => tracing::warn!(%error, "health/metrics server failed"),
            Ok(Err(error)) => tracing::warn!(%error, "health/metrics server task failed"),
            Err(_) => tracing::warn!("health/metrics server did not stop in time"),
            Ok(Ok(Ok(()))) => {}
        }
        tracing::info!(provider = spec.name, "stopped");
        result
    }
}

/// Waits until every needed CRD answers a list; `false` when stopped first.
async fn wait_for_crds(env: &Env, controllers: &[Box<dyn KindController>], stop: &Stop) -> bool {
    let needs_pools = controllers
        .iter()
        .any(|c| c.role() == Role::InfraMachinePool);
    let mut delay = Duration::from_secs(1);
    loop {
        let mut checks: Vec<(String, BoxFuture<'static, Result<(), kube::Error>>)> = Vec::new();
        let clusters = env.api::<Cluster>();
        checks.push((
            "Cluster".into(),
            async move {
                clusters
                    .list_metadata(&ListParams::default().limit(1))
                    .await
                    .map(|_| ())
            }
            .boxed(),
        ));
        if needs_pools {
            let pools = env.api::<MachinePool>();
            checks.push((
                "MachinePool".into(),
                async move {
                    pools
                        .list_metadata(&ListParams::default().limit(1))
                        .await
                        .map(|_| ())
                }
                .boxed(),
            ));
        }
        for c in controllers {
            checks.push((c.kind(), c.check_installed(env)));
        }
        let mut missing = Vec::new();
        for (kind, check) in checks {
            if let Err(error) = check.await {
                missing.push(format!("{kind} ({error})"));
            }
        }
        if missing.is_empty() {
            tracing::info!("all CRDs installed");
            return true;
        }
        tracing::warn!(missing = %missing.join(", "), "waiting for CRDs to be installed and readable");
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            () = stop.wait() => return false,
        }
        delay = (delay * 2).min(Duration::from_secs(30));
    }
}

/// Runs every registered controller over the shared Cluster (and MachinePool) caches until
/// `stop` fires.
async fn run_controllers(
    env: Arc<Env>,
    controllers: Vec<Box<dyn KindController>>,
    stop: Stop,
) -> anyhow::Result<()> {
    let mut clusters = SharedWatch::<Cluster>::new(env.api::<Cluster>(), cluster_relevance);
    let needs_pools = controllers
        .iter()
        .any(|c| c.role() == Role::InfraMachinePool);
    let mut pools = needs_pools
        .then(|| SharedWatch::<MachinePool>::new(env.api::<MachinePool>(), machine_pool_relevance));
    let kinds: Vec<String> = controllers.iter().map(|c| c.kind()).collect();
    let running: Vec<_> = controllers
        .into_iter()
        .map(|c| c.start(env.clone(), &mut clusters, pools.as_mut(), stop.clone()))
        .collect();

    let cluster_store = clusters.store();
    let pool_store = pools.as_ref().map(|p| p.store());
    let mut drivers = vec![tokio::spawn(clusters.run())];
    if let Some(pools) = pools {
        drivers.push(tokio::spawn(pools.run()));
    }
    let caches_ready = async {
        let _ = cluster_store.wait_until_ready().await;
        if let Some(store) = pool_store {
            let _ = store.wait_until_ready().await;
        }
    };
    let ready = tokio::select! {
        () = caches_ready => true,
        () = stop.wait() => false,
    };
    if ready {
        tracing::info!(kinds = %kinds.join(", "), "caches synced; controllers running");
        futures::future::join_all(running).await;
    }
    for d in drivers {
        d.abort();
    }
    Ok(())
}

/// Resolves on SIGTERM (Kubernetes stopping the Pod), SIGINT (Ctrl-C) or SIGHUP (the terminal
/// a local run was started from went away).
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
        ) {
            (Ok(mut term), Ok(mut hup)) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                    _ = hup.recv() => {}
                }
            }
            _ => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
    tracing::info!("shutdown requested");
}

/// Runs the provider `name` ([`ProviderSpec`]) until SIGTERM or Ctrl-C ([`Operator::run`]):
/// its three reconcilers, each made by `roles` (the InfraCluster's, the ControlPlane's, the
/// MachinePool's) from the provider's `shared` state, which they share.
///
/// # Errors
/// As [`Operator::run`].
pub async fn serve<S, I, P, M>(
    name: &'static str,
    args: CommonArgs,
    shared: S,
    roles: (
        impl FnOnce(Arc<S>) -> InfraClusterReconciler<I>,
        impl FnOnce(Arc<S>) -> ControlPlaneReconciler<P>,
        impl FnOnce(Arc<S>) -> MachinePoolReconciler<M>,
    ),
) -> anyhow::Result<()>
where
    I: InfraClusterCloud,
    P: ControlPlaneCloud,
    M: MachinePoolCloud,
{
    let (cluster, control_plane, machine_pool) = roles;
    let shared = Arc::new(shared);
    Operator::new(ProviderSpec::new(name), args)
        .controller::<I::Object, _>(cluster(shared.clone()))
        .controller::<P::Object, _>(control_plane(shared.clone()))
        .controller::<M::Object, _>(machine_pool(shared))
        .run()
        .await
}
