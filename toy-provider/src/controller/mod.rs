//! The toy's controller: every half second it lists its three kinds (and the Clusters and
//! MachinePools they belong to) and reconciles each object once.
//!
//! Deliberately simple (no watches, no work queue): it is a test fixture, and what it must get
//! right is the contract, which each reconciler follows unless a [`Break`] says otherwise.

mod control_plane;
mod infra_cluster;
mod machine_pool;
pub mod meta;

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use anyhow::Result;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, ListParams};
use serde_json::Map;

use crate::breaks::{Break, Breaks};
use crate::cloud_client::CloudClient;
use crate::{CP_GROUP, INFRA_GROUP, VERSION};
use meta::Cond;

/// Options of `toy-provider run`.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Base URL of the toy cloud.
    pub cloud: String,
    /// Reconcile only objects labelled `cluster.x-k8s.io/watch-filter=<value>`.
    pub watch_filter: Option<String>,
    /// Watch only this namespace.
    pub namespace: Option<String>,
    /// Deliberate defects.
    pub breaks: Breaks,
    /// Time between passes.
    pub interval: Duration,
}

/// The API resources the controller reads and writes.
#[derive(Debug, Clone)]
pub struct Kinds {
    /// ToyCluster.
    pub toy_cluster: ApiResource,
    /// ToyControlPlane.
    pub toy_control_plane: ApiResource,
    /// ToyMachinePool.
    pub toy_machine_pool: ApiResource,
    /// Cluster API Cluster.
    pub cluster: ApiResource,
    /// Cluster API MachinePool.
    pub machine_pool: ApiResource,
}

impl Default for Kinds {
    fn default() -> Self {
        let ar = |group: &str, version: &str, kind: &str, plural: &str| {
            ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural)
        };
        Self {
            toy_cluster: ar(INFRA_GROUP, VERSION, "ToyCluster", "toyclusters"),
            toy_control_plane: ar(CP_GROUP, VERSION, "ToyControlPlane", "toycontrolplanes"),
            toy_machine_pool: ar(INFRA_GROUP, VERSION, "ToyMachinePool", "toymachinepools"),
            cluster: ar("cluster.x-k8s.io", "v1beta2", "Cluster", "clusters"),
            machine_pool: ar("cluster.x-k8s.io", "v1beta2", "MachinePool", "machinepools"),
        }
    }
}

/// Objects of one kind by namespace and name.
pub type Index = HashMap<(String, String), DynamicObject>;

/// What one pass read.
#[derive(Debug, Default)]
pub struct Indexes {
    /// Clusters.
    pub clusters: Index,
    /// MachinePools.
    pub machine_pools: Index,
    /// ToyControlPlanes.
    pub control_planes: Index,
}

fn index(items: Vec<DynamicObject>) -> Index {
    items
        .into_iter()
        .map(|o| ((meta::namespace(&o), meta::name(&o)), o))
        .collect()
}

/// Shared by the reconcilers.
pub struct Ctx {
    /// Management cluster client.
    pub client: kube::Client,
    /// Toy cloud client.
    pub cloud: CloudClient,
    /// Resources.
    pub kinds: Kinds,
    /// Options.
    pub options: RunOptions,
    /// When each ToyControlPlane (by uid) was first seen initialized (for `secret-late`).
    pub initialized_at: Mutex<HashMap<String, std::time::Instant>>,
}

impl Ctx {
    /// Whether a break is in force.
    pub fn broken(&self, b: Break) -> bool {
        self.options.breaks.has(b)
    }

    /// A namespaced API of `resource`.
    pub fn api(&self, resource: &ApiResource, ns: &str) -> Api<DynamicObject> {
        Api::namespaced_with(self.client.clone(), ns, resource)
    }

    async fn list(&self, resource: &ApiResource) -> Result<Vec<DynamicObject>> {
        let api: Api<DynamicObject> = match &self.options.namespace {
            Some(ns) => Api::namespaced_with(self.client.clone(), ns, resource),
            None => Api::all_with(self.client.clone(), resource),
        };
        Ok(api.list(&ListParams::default()).await?.items)
    }

    /// Whether the watch filter lets the object through (and clusterctl is not deleting it as
    /// the source of a move).
    fn in_scope(&self, obj: &DynamicObject) -> bool {
        if meta::has_annotation(obj, meta::DELETE_FOR_MOVE_ANNOTATION) {
            return false;
        }
        if self.broken(Break::IgnoreWatchFilter) {
            return true;
        }
        match self.options.watch_filter.as_deref() {
            None | Some("") => true,
            Some(v) => meta::label(obj, meta::WATCH_FILTER_LABEL) == Some(v),
        }
    }

    /// Whether to treat the object as paused (no change, no cloud call).
    pub fn pause(&self, obj: &DynamicObject, cluster: Option<&DynamicObject>) -> bool {
        meta::paused(obj, cluster) && !self.broken(Break::IgnorePause)
    }

    /// The Paused condition to add to a pass's conditions (none with `no-paused-condition`).
    pub fn paused_condition(
        &self,
        obj: &DynamicObject,
        cluster: Option<&DynamicObject>,
    ) -> Option<Cond> {
        if self.broken(Break::NoPausedCondition) {
            return None;
        }
        Some(if meta::paused(obj, cluster) {
            Cond::new("Paused", true, "Paused", "reconciliation is paused")
        } else {
            Cond::new("Paused", false, "NotPaused", "")
        })
    }

    /// Writes conditions (plus Paused) and the given status fields.
    pub async fn write_status(
        &self,
        api: &Api<DynamicObject>,
        obj: &DynamicObject,
        cluster: Option<&DynamicObject>,
        mut fields: Map<String, serde_json::Value>,
        mut conds: Vec<Cond>,
        generation: i64,
    ) -> Result<bool> {
        if self.broken(Break::NoAvailableCondition) {
            conds.retain(|c| c.type_ != "Available");
        }
        conds.extend(self.paused_condition(obj, cluster));
        if !conds.is_empty() {
            fields.insert(
                "conditions".into(),
                meta::conditions(
                    meta::at(obj, "/status/conditions"),
                    &conds,
                    generation,
                    &meta::now(),
                ),
            );
        }
        if fields.is_empty() {
            return Ok(false);
        }
        meta::patch_status(api, obj, fields).await
    }

    /// A paused pass: only the Paused condition.
    pub async fn report_paused(
        &self,
        api: &Api<DynamicObject>,
        obj: &DynamicObject,
        cluster: Option<&DynamicObject>,
    ) -> Result<()> {
        self.write_status(
            api,
            obj,
            cluster,
            Map::new(),
            Vec::new(),
            meta::generation(obj),
        )
        .await?;
        Ok(())
    }

    /// Adds the finalizer first thing, or (with `late-finalizer`) only once the object already
    /// reported its provisioned/initialized flag.
    pub async fn ensure_finalizer(
        &self,
        api: &Api<DynamicObject>,
        obj: &DynamicObject,
        flag: &str,
    ) -> Result<()> {
        if meta::has_finalizer(obj) {
            return Ok(());
        }
        if self.broken(Break::LateFinalizer) && !meta::bool_at(obj, flag) {
            return Ok(());
        }
        meta::add_finalizer(api, obj).await
    }
}

/// Runs the controller until the process is stopped.
///
/// # Errors
/// When no Kubernetes client can be built or the cloud URL is unusable.
pub async fn run(options: RunOptions) -> Result<()> {
    let client = kube::Client::try_default().await?;
    let ctx = Ctx {
        client,
        cloud: CloudClient::new(&options.cloud)?,
        kinds: Kinds::default(),
        initialized_at: Mutex::new(HashMap::new()),
        options,
    };
    let breaks: Vec<&str> = ctx.options.breaks.iter().map(Break::name).collect();
    tracing::info!(
        cloud = %ctx.options.cloud,
        watch_filter = ?ctx.options.watch_filter,
        namespace = ?ctx.options.namespace,
        breaks = %breaks.join(","),
        "toy provider running"
    );
    loop {
        if let Err(e) = pass(&ctx).await {
            tracing::warn!(error = %format!("{e:#}"), "pass failed");
        }
        tokio::time::sleep(ctx.options.interval).await;
    }
}

async fn list_or_warn(ctx: &Ctx, resource: &ApiResource) -> Vec<DynamicObject> {
    match ctx.list(resource).await {
        Ok(items) => items,
        Err(e) => {
            tracing::warn!(kind = %resource.kind, error = %format!("{e:#}"), "listing");
            Vec::new()
        }
    }
}

fn report(kind: &str, obj: &DynamicObject, result: Result<()>) {
    if let Err(e) = result {
        tracing::warn!(
            kind,
            namespace = %meta::namespace(obj),
            name = %meta::name(obj),
            error = %format!("{e:#}"),
            "reconcile failed"
        );
    }
}

/// One pass over every object.
async fn pass(ctx: &Ctx) -> Result<()> {
    let idx = Indexes {
        clusters: index(ctx.list(&ctx.kinds.cluster).await?),
        machine_pools: index(ctx.list(&ctx.kinds.machine_pool).await?),
        control_planes: index(list_or_warn(ctx, &ctx.kinds.toy_control_plane).await),
    };
    for obj in list_or_warn(ctx, &ctx.kinds.toy_cluster).await {
        if ctx.in_scope(&obj) {
            report(
                "ToyCluster",
                &obj,
                infra_cluster::reconcile(ctx, &obj, &idx).await,
            );
        }
    }
    let mut cps: Vec<&DynamicObject> = idx.control_planes.values().collect();
    cps.sort_by_key(|o| (meta::namespace(o), meta::name(o)));
    for obj in cps {
        if ctx.in_scope(obj) {
            report(
                "ToyControlPlane",
                obj,
                control_plane::reconcile(ctx, obj, &idx).await,
            );
        }
    }
    for obj in list_or_warn(ctx, &ctx.kinds.toy_machine_pool).await {
        if ctx.in_scope(&obj) {
            report(
                "ToyMachinePool",
                &obj,
                machine_pool::reconcile(ctx, &obj, &idx).await,
            );
        }
    }
    Ok(())
}
