//! GKE's side of the InfraMachinePool role: one GKE node pool, its nodes in one managed
//! instance group per zone. Everything else (observe order, the MachinePool write-back,
//! `spec.providerIDList`, plan, status, conditions, requeue, cleanup policy) is the generic
//! reconciler's ([`provider_runtime::machine_pool`]).
//!
//! GKE sizes a pool per zone: `MachinePool.spec.replicas` (and spec.scaling's bounds) are divided
//! by the pool's zones and must divide evenly. The pool's size is its instance groups' target
//! sizes (GKE's NodePool keeps only the count it was created with); its provider IDs are the
//! groups' managed instances, a deleting one included until it is gone.

use std::collections::BTreeMap;
use std::sync::Arc;

use contract::api::{
    MachinePoolSpecCommon, MachinePoolStatusCommon, Operation, RequestOverridesStatus, TaintEffect,
};
use contract::capi::MachinePool;
use contract::conditions::Reason;
use contract::idempotency::GKE_UNSENT_TOKEN;
use contract::naming;
use contract::plan::{CloudStep, Lifecycle, OperationState};
use contract::scaling::{InstanceLife, ScalingIntent, provider_id_list};
use contract::version::KubeVersion;
use google_cloud_container_v1::model as gke;
use google_cloud_gax::paginator::ItemPaginator as _;
use kube::ResourceExt;
use provider_runtime::cluster_objects;
use provider_runtime::machine_pool::Deletion;
use provider_runtime::machine_pool::{
    Creation, Located, MachinePoolCloud, MachinePoolProfile, MachinePoolReconciler,
    ManagedMachinePool, ManagedPool, PoolCall, PoolCreated,
};
use provider_runtime::{CloudCalls, ClusterRef, ProviderError};

use super::control_plane::get_operation;
use crate::api::{GKECluster, GKEControlPlane, GKEMachinePool, GKEMachinePoolStatus};
use crate::cloud::{Clients, absent_if_not_found, counted};
use crate::scope::{self, Infra, Shared};

/// The value this provider writes into `cluster.x-k8s.io/replicas-managed-by`.
pub const REPLICAS_MANAGER: &str = "gke";

const SERVICE: &str = "container";

/// The Compute method that lists a pool's instances (counted, and held by its `Retry-After`).
const LIST_MANAGED_INSTANCES: &str = "instanceGroupManagers.listManagedInstances";

/// The GKEMachinePool reconciler: the generic one over GKE.
pub fn reconciler(shared: Arc<Shared>) -> MachinePoolReconciler<GkeMachinePool> {
    MachinePoolReconciler::new(scope::PROVIDER, GkeMachinePool { shared })
}

impl ManagedMachinePool for GKEMachinePool {
    fn spec_common(&self) -> &MachinePoolSpecCommon {
        &self.spec.common
    }

    fn status_common(&self) -> Option<&MachinePoolStatusCommon> {
        self.status.as_ref().map(|s| &s.common)
    }

    fn request_overrides_status(&self) -> Option<&RequestOverridesStatus> {
        self.status.as_ref()?.request_overrides.as_ref()
    }

    fn cloud_id(&self) -> Option<&str> {
        None
    }
}

/// GKE, for the generic InfraMachinePool reconciler.
pub struct GkeMachinePool {
    shared: Arc<Shared>,
}

/// Where the pool lives and how to reach it.
pub struct PoolScope {
    clients: Clients,
    calls: CloudCalls,
    infra: Infra,
    gke_cluster: String,
    control_plane_version: Option<KubeVersion>,
}

impl PoolScope {
    fn parent(&self) -> String {
        format!(
            "projects/{}/locations/{}",
            self.infra.project, self.infra.region
        )
    }

    fn cluster_path(&self) -> String {
        format!("{}/clusters/{}", self.parent(), self.gke_cluster)
    }

    fn pool_path(&self, name: &str) -> String {
        format!("{}/nodePools/{name}", self.cluster_path())
    }
}

/// The spec in GKE's terms.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolShape {
    /// Machine type.
    pub machine_type: String,
    /// Boot disk, GB.
    pub disk_size_gb: Option<i32>,
    /// Image type.
    pub image_type: Option<String>,
    /// Kubernetes labels.
    pub labels: BTreeMap<String, String>,
    /// Taints as GKE writes them.
    pub taints: Vec<(String, String, gke::node_taint::Effect)>,
    /// Spot capacity.
    pub spot: bool,
    /// `(maxSurge, maxUnavailable)`.
    pub upgrade: Option<(i32, i32)>,
    /// The nodes' service account.
    pub service_account: Option<String>,
}

fn invalid(message: impl Into<String>) -> ProviderError {
    ProviderError::terminal(Reason::InvalidSpec, message)
}

fn effect(e: TaintEffect) -> gke::node_taint::Effect {
    match e {
        TaintEffect::NoSchedule => gke::node_taint::Effect::NoSchedule,
        TaintEffect::PreferNoSchedule => gke::node_taint::Effect::PreferNoSchedule,
        TaintEffect::NoExecute => gke::node_taint::Effect::NoExecute,
    }
}

/// The spec in GKE's terms (pure).
///
/// # Errors
/// A message naming the field.
pub fn pool_shape(obj: &GKEMachinePool) -> Result<PoolShape, String> {
    let c = &obj.spec.common;
    let int = |v: &Option<k8s_openapi::apimachinery::pkg::util::intstr::IntOrString>,
               field: &str| match v {
        None => Ok(None),
        Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(n)) if *n >= 0 => {
            Ok(Some(*n))
        }
        Some(_) => Err(format!(
            "{field} must be a non-negative number of nodes on GKE"
        )),
    };
    let upgrade = match &c.update {
        None => None,
        Some(u) => {
            let surge = int(&u.max_surge, "spec.update.maxSurge")?;
            let unavailable = int(&u.max_unavailable, "spec.update.maxUnavailable")?;
            let (s, n) = (surge.unwrap_or(1), unavailable.unwrap_or(0));
            if s == 0 && n == 0 {
                return Err(
                    "spec.update.maxSurge and spec.update.maxUnavailable cannot both be 0 on GKE"
                        .into(),
                );
            }
            Some((s, n))
        }
    };
    if !c.subnet_ids.is_empty() {
        return Err("spec.subnetIDs is not supported on GKE: a node pool's nodes live in the cluster's subnetwork".into());
    }
    let mut taints: Vec<_> = c
        .taints
        .iter()
        .map(|t| {
            (
                t.key.clone(),
                t.value.clone().unwrap_or_default(),
                effect(t.effect),
            )
        })
        .collect();
    taints.sort_by(|a, b| (&a.0, a.2.value()).cmp(&(&b.0, b.2.value())));
    Ok(PoolShape {
        machine_type: c.machine_type.clone(),
        disk_size_gb: c.disk_size_gb,
        image_type: c.image.clone(),
        labels: c.labels.clone(),
        taints,
        spot: c.spot,
        upgrade,
        service_account: obj.spec.gke.service_account.clone(),
    })
}

/// What GKE says about a pool.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PoolView {
    /// Its self link.
    pub self_link: String,
    /// Its zones.
    pub zones: Vec<String>,
    /// Its instance groups.
    pub groups: Vec<String>,
    /// Nodes per zone, from the instance groups' target sizes.
    pub per_zone: Option<i32>,
    /// Autoscaling `(min, max)` per zone, when on.
    pub autoscaling: Option<(i32, i32)>,
    /// Kubernetes labels.
    pub labels: BTreeMap<String, String>,
    /// Taints.
    pub taints: Vec<(String, String, gke::node_taint::Effect)>,
    /// `(maxSurge, maxUnavailable)`.
    pub upgrade: (i32, i32),
}

/// The pool's zones: the MachinePool's failure domains, else the infrastructure's first zone.
///
/// # Errors
/// A failure domain GKE cannot place the pool in.
fn pool_zones(machine_pool: &MachinePool, infra: &Infra) -> Result<Vec<String>, String> {
    let wanted = &machine_pool.spec.failure_domains;
    if wanted.is_empty() {
        return Ok(infra.zones.first().cloned().into_iter().collect());
    }
    for zone in wanted {
        if !infra.zones.contains(zone) {
            return Err(format!(
                "MachinePool.spec.failureDomains names {zone}, which is not one of the cluster's zones ({})",
                infra.zones.join(", ")
            ));
        }
    }
    Ok(wanted.clone())
}

/// `count` nodes over `zones` zones, per zone.
fn per_zone(count: i32, zones: usize, what: &str) -> Result<i32, String> {
    let zones = i32::try_from(zones.max(1)).unwrap_or(1);
    if count % zones != 0 {
        return Err(format!(
            "{what} {count} cannot be spread evenly over the node pool's {zones} zones: GKE sizes a node pool per zone; use a multiple of {zones}"
        ));
    }
    Ok(count / zones)
}

/// One difference, one GKE call.
#[derive(Debug, Clone, PartialEq)]
pub enum PoolChange {
    /// Autoscaling on with per-zone bounds, or off (`None`).
    Autoscaling(Option<(i32, i32)>),
    /// `setSize` to nodes per zone.
    Size(i32),
    /// Labels, taints and upgrade settings in one `UpdateNodePool`.
    Settings {
        /// New labels, when they differ.
        labels: Option<BTreeMap<String, String>>,
        /// New taints, when they differ.
        taints: Option<Vec<(String, String, gke::node_taint::Effect)>>,
        /// New upgrade settings, when they differ.
        upgrade: Option<(i32, i32)>,
    },
}

/// The first difference (pure): the count's owner first, then the count, then the settings.
pub fn pool_change(
    view: &PoolView,
    shape: &PoolShape,
    scaling: ScalingIntent,
) -> Result<Option<PoolChange>, String> {
    let zones = view.zones.len();
    match scaling {
        ScalingIntent::Autoscaled { min, max, .. } => {
            let want = (
                per_zone(min, zones, "spec.scaling.minReplicas")?,
                per_zone(max, zones, "spec.scaling.maxReplicas")?,
            );
            if view.autoscaling != Some(want) {
                return Ok(Some(PoolChange::Autoscaling(Some(want))));
            }
        }
        ScalingIntent::Fixed { replicas } => {
            if view.autoscaling.is_some() {
                return Ok(Some(PoolChange::Autoscaling(None)));
            }
            let want = per_zone(replicas, zones, "MachinePool.spec.replicas")?;
            if view.per_zone != Some(want) {
                return Ok(Some(PoolChange::Size(want)));
            }
        }
    }
    let labels = (view.labels != shape.labels).then(|| shape.labels.clone());
    let taints = (view.taints != shape.taints).then(|| shape.taints.clone());
    let upgrade = shape.upgrade.filter(|u| *u != view.upgrade);
    if labels.is_none() && taints.is_none() && upgrade.is_none() {
        return Ok(None);
    }
    Ok(Some(PoolChange::Settings {
        labels,
        taints,
        upgrade,
    }))
}

fn node_taints(taints: &[(String, String, gke::node_taint::Effect)]) -> gke::NodeTaints {
    gke::NodeTaints::new().set_taints(taints.iter().map(|(k, v, e)| {
        gke::NodeTaint::new()
            .set_key(k)
            .set_value(v)
            .set_effect(e.clone())
    }))
}

/// The pool's name: `spec.cloudName`, else derived from the namespace and the object's name.
fn pool_name(obj: &GKEMachinePool) -> Result<String, ProviderError> {
    naming::cloud_name(
        obj.spec.common.cloud_name.as_deref(),
        &obj.namespace().unwrap_or_default(),
        &obj.name_any(),
        &naming::GKE_NODE_POOL,
    )
    .map_err(invalid)
}

impl GkeMachinePool {
    async fn group_size(&self, scope: &PoolScope, url: &str) -> Result<Option<i32>, ProviderError> {
        let (zone, name) = group_of(url);
        let group = absent_if_not_found(
            counted(
                &scope.calls,
                "compute",
                "instanceGroupManagers.get",
                scope
                    .clients
                    .groups
                    .get()
                    .set_project(&scope.infra.project)
                    .set_zone(zone)
                    .set_instance_group_manager(name)
                    .send(),
            )
            .await,
        )?;
        Ok(group.and_then(|g| g.target_size))
    }
}

/// `(zone, name)` of an instance group manager URL.
fn group_of(url: &str) -> (&str, &str) {
    let mut parts = url.rsplit('/');
    let name = parts.next().unwrap_or_default();
    let _ = parts.next();
    let zone = parts.next().unwrap_or_default();
    (zone, name)
}

fn view(pool: &gke::NodePool) -> PoolView {
    let config = pool.config.clone().unwrap_or_default();
    let mut taints: Vec<_> = config
        .taints
        .iter()
        .map(|t| (t.key.clone(), t.value.clone(), t.effect.clone()))
        .collect();
    taints.sort_by(|a, b| (&a.0, a.2.value()).cmp(&(&b.0, b.2.value())));
    PoolView {
        self_link: pool.self_link.clone(),
        zones: pool.locations.clone(),
        groups: pool.instance_group_urls.clone(),
        per_zone: None,
        autoscaling: pool
            .autoscaling
            .as_ref()
            .filter(|a| a.enabled)
            .map(|a| (a.min_node_count, a.max_node_count)),
        labels: config
            .labels
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        taints,
        upgrade: pool
            .upgrade_settings
            .as_ref()
            .map_or((1, 0), |u| (u.max_surge, u.max_unavailable)),
    }
}

fn lifecycle(status: &gke::node_pool::Status) -> Lifecycle {
    use gke::node_pool::Status;
    match status {
        Status::Provisioning => Lifecycle::Creating,
        Status::Running => Lifecycle::Running,
        Status::RunningWithError => Lifecycle::Degraded,
        Status::Reconciling => Lifecycle::Updating,
        Status::Stopping => Lifecycle::Deleting,
        Status::Error => Lifecycle::Failed,
        other => Lifecycle::Other(other.name().unwrap_or("UNKNOWN").to_string()),
    }
}

impl MachinePoolCloud for GkeMachinePool {
    type Object = GKEMachinePool;
    type Spec = PoolShape;
    type Scope = PoolScope;
    type Detail = PoolView;
    type Change = PoolChange;
    type Status = GKEMachinePoolStatus;

    fn profile(&self) -> MachinePoolProfile {
        MachinePoolProfile {
            cloud: "GKE",
            noun: "node pool",
            replicas_manager: REPLICAS_MANAGER,
            token_limits: &GKE_UNSENT_TOKEN,
            poll: self.shared.poll_interval,
            rest: self.shared.rest_interval,
        }
    }

    fn validate(&self, obj: &GKEMachinePool) -> Result<PoolShape, ProviderError> {
        pool_shape(obj).map_err(invalid)
    }

    fn name(&self, obj: &GKEMachinePool) -> Result<String, ProviderError> {
        pool_name(obj)
    }

    async fn locate(
        &self,
        obj: &GKEMachinePool,
        cluster: ClusterRef<'_>,
        client: &kube::Client,
        calls: &CloudCalls,
        require_initialized: bool,
    ) -> Result<Located<PoolScope>, ProviderError> {
        let namespace = obj.namespace().unwrap_or_default();
        let place = match cluster_objects::pool_place::<GKEControlPlane, GKECluster, _, Infra>(
            client,
            cluster,
            require_initialized,
            |cp| cp.spec.infrastructure.as_ref(),
        )
        .await?
        {
            Located::NotYet(why) => return Ok(Located::NotYet(why)),
            Located::Found(place) => place,
        };
        let (cp, control_plane_version) = (place.control_plane, place.version);
        let infra = place.infra;
        let clients = scope::clients_for(&self.shared, client, &namespace, &infra).await?;
        Ok(Located::Found(PoolScope {
            clients,
            calls: calls.clone(),
            gke_cluster: scope::gke_cluster_name(&cp, &cluster.name()),
            infra,
            control_plane_version,
        }))
    }

    fn control_plane_version(&self, scope: &PoolScope) -> Option<KubeVersion> {
        scope.control_plane_version
    }

    fn additional_tags<'s>(&self, scope: &'s PoolScope) -> &'s BTreeMap<String, String> {
        &scope.infra.additional_tags
    }

    fn place(&self, scope: &PoolScope, name: &str) -> String {
        format!("{name} (in GKE cluster {})", scope.gke_cluster)
    }

    async fn describe(
        &self,
        scope: &PoolScope,
        name: &str,
    ) -> Result<Option<ManagedPool<PoolView>>, ProviderError> {
        let found = absent_if_not_found(
            counted(
                &scope.calls,
                SERVICE,
                "GetNodePool",
                scope
                    .clients
                    .container
                    .get_node_pool()
                    .set_name(scope.pool_path(name))
                    .send(),
            )
            .await,
        )?;
        let Some(pool) = found else { return Ok(None) };
        let mut detail = view(&pool);
        let mut sizes = Vec::new();
        for url in &detail.groups {
            sizes.push(self.group_size(scope, url).await?);
        }
        // Every zone has the same count (setSize sizes each); a group not listed yet counts none.
        detail.per_zone = sizes
            .iter()
            .flatten()
            .copied()
            .max()
            .or(sizes.is_empty().then_some(0));
        let total = detail
            .per_zone
            .map(|n| n * i32::try_from(detail.zones.len().max(1)).unwrap_or(1));
        let mut issues = Vec::new();
        issues.extend(
            pool.conditions
                .iter()
                .map(|c| c.message.clone())
                .filter(|m| !m.is_empty()),
        );
        let tags = pool
            .config
            .as_ref()
            .map(|c| {
                c.resource_labels
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default();
        Ok(Some(ManagedPool {
            id: pool.self_link.clone(),
            lifecycle: lifecycle(&pool.status),
            state: pool.status.name().unwrap_or("UNKNOWN").to_string(),
            version: Some(
                pool.version
                    .split("-gke.")
                    .next()
                    .unwrap_or_default()
                    .to_string(),
            )
            .filter(|v| !v.is_empty()),
            tags,
            issues,
            desired_size: total,
            detail,
        }))
    }

    async fn operation_state(
        &self,
        scope: &PoolScope,
        _name: &str,
        operation: &Operation,
    ) -> Result<Option<OperationState>, ProviderError> {
        get_operation(&scope.clients, &scope.calls, &scope.parent(), &operation.id).await
    }

    async fn provider_ids(
        &self,
        scope: &PoolScope,
        name: &str,
    ) -> Result<Vec<String>, ProviderError> {
        let Some(pool) = absent_if_not_found(
            counted(
                &scope.calls,
                SERVICE,
                "GetNodePool",
                scope
                    .clients
                    .container
                    .get_node_pool()
                    .set_name(scope.pool_path(name))
                    .send(),
            )
            .await,
        )?
        else {
            return Ok(Vec::new());
        };
        let mut ids = Vec::new();
        for url in &pool.instance_group_urls {
            let (zone, group) = group_of(url);
            let sent = scope.calls.admit("compute", LIST_MANAGED_INSTANCES)?;
            let mut items = scope
                .clients
                .groups
                .list_managed_instances()
                .set_project(&scope.infra.project)
                .set_zone(zone)
                .set_instance_group_manager(group)
                .by_item();
            let listed = loop {
                match items.next().await {
                    None => break Ok(()),
                    Some(Ok(item)) => {
                        if let Some(instance) = item.instance.as_deref() {
                            let instance_name = instance.rsplit('/').next().unwrap_or_default();
                            ids.push(format!(
                                "gce://{}/{zone}/{instance_name}",
                                scope.infra.project
                            ));
                        }
                    }
                    Some(Err(e)) => break Err(crate::cloud::classify(&e)),
                }
            };
            // One listing, counted once (a group gone counted a failure and a success before).
            sent.answered(LIST_MANAGED_INSTANCES, listed.as_ref().copied());
            match listed {
                Err(failure) if !failure.is_not_found() => return Err(failure.into()),
                _ => {}
            }
        }
        Ok(provider_id_list(
            ids.iter().map(|id| (id.as_str(), InstanceLife::Present)),
        ))
    }

    fn diff(
        &self,
        call: &PoolCall<'_, GKEMachinePool, PoolShape>,
        pool: &ManagedPool<PoolView>,
    ) -> CloudStep<PoolChange> {
        match pool_change(&pool.detail, call.spec, call.scaling) {
            Ok(Some(change)) => CloudStep::Change(change),
            Ok(None) => CloudStep::Nothing,
            Err(message) => CloudStep::Invalid(message),
        }
    }

    fn describe_change(
        &self,
        change: &PoolChange,
        _pool: Option<&ManagedPool<PoolView>>,
    ) -> String {
        match change {
            PoolChange::Autoscaling(Some((min, max))) => {
                format!("turning autoscaling on between {min} and {max} nodes per zone")
            }
            PoolChange::Autoscaling(None) => "turning autoscaling off".into(),
            PoolChange::Size(n) => format!("resizing to {n} nodes per zone"),
            PoolChange::Settings { .. } => "updating labels, taints or upgrade settings".into(),
        }
    }

    async fn create(
        &self,
        scope: &PoolScope,
        call: &PoolCall<'_, GKEMachinePool, PoolShape>,
        version: Option<&KubeVersion>,
    ) -> Result<Creation<PoolView>, ProviderError> {
        let zones = pool_zones(call.machine_pool, &scope.infra).map_err(invalid)?;
        let shape = call.spec;
        let count = per_zone(
            call.scaling.initial_count(),
            zones.len(),
            "MachinePool.spec.replicas",
        )
        .map_err(invalid)?;
        let mut config = gke::NodeConfig::new()
            .set_machine_type(&shape.machine_type)
            .set_labels(shape.labels.clone())
            .set_taints(node_taints(&shape.taints).taints)
            .set_spot(shape.spot)
            .set_resource_labels(call.request.tags.clone());
        if let Some(disk) = shape.disk_size_gb {
            config = config.set_disk_size_gb(disk);
        }
        if let Some(image) = &shape.image_type {
            config = config.set_image_type(image);
        }
        if let Some(account) = &shape.service_account {
            config = config.set_service_account(account);
        }
        let mut pool = gke::NodePool::new()
            .set_name(call.name)
            .set_initial_node_count(count)
            .set_locations(zones.clone())
            .set_config(config)
            .set_management(
                gke::NodeManagement::new()
                    .set_auto_repair(true)
                    .set_auto_upgrade(false),
            );
        if let Some(v) = version {
            pool = pool.set_version(super::gke_version(v));
        }
        if let Some((surge, unavailable)) = shape.upgrade {
            pool = pool.set_upgrade_settings(
                gke::node_pool::UpgradeSettings::new()
                    .set_max_surge(surge)
                    .set_max_unavailable(unavailable),
            );
        }
        if let ScalingIntent::Autoscaled { min, max, .. } = call.scaling {
            let min = per_zone(min, zones.len(), "spec.scaling.minReplicas").map_err(invalid)?;
            let max = per_zone(max, zones.len(), "spec.scaling.maxReplicas").map_err(invalid)?;
            pool = pool.set_autoscaling(
                gke::NodePoolAutoscaling::new()
                    .set_enabled(true)
                    .set_min_node_count(min)
                    .set_max_node_count(max),
            );
        }
        let overrides = call.obj.spec.gke.request_overrides.as_ref();
        let patch = contract::overrides::effective(overrides);
        if let Some(patch) = patch {
            pool = super::overridden(&pool, patch)?;
        }
        let result = counted(
            &scope.calls,
            SERVICE,
            "CreateNodePool",
            scope
                .clients
                .container
                .create_node_pool()
                .set_parent(scope.cluster_path())
                .set_node_pool(pool)
                .send(),
        )
        .await;
        match result {
            Ok(op) => Ok(Creation::Started(Box::new(PoolCreated {
                id: op.name.clone(),
                overrides: patch.map(|_| call.request.overrides_applied("CreateNodePool")),
                pool: None,
            }))),
            Err(f) if f.already_exists => Ok(Creation::Exists(f.error.to_string())),
            Err(f) => Err(f.into()),
        }
    }

    async fn tag(
        &self,
        scope: &PoolScope,
        _id: &str,
        tags: &BTreeMap<String, String>,
    ) -> Result<(), ProviderError> {
        let name = self
            .describe_name(scope, _id)
            .ok_or_else(|| invalid("the node pool's name cannot be read from its id"))?;
        let labels = gke::ResourceLabels::new().set_labels(tags.clone());
        counted(
            &scope.calls,
            SERVICE,
            "UpdateNodePool",
            scope
                .clients
                .container
                .update_node_pool()
                .set_name(scope.pool_path(&name))
                .set_resource_labels(labels)
                .send(),
        )
        .await?;
        Ok(())
    }

    async fn upgrade(
        &self,
        scope: &PoolScope,
        name: &str,
        to: &KubeVersion,
    ) -> Result<String, ProviderError> {
        let op = counted(
            &scope.calls,
            SERVICE,
            "UpdateNodePool",
            scope
                .clients
                .container
                .update_node_pool()
                .set_name(scope.pool_path(name))
                .set_node_version(super::gke_version(to))
                .send(),
        )
        .await?;
        Ok(op.name)
    }

    async fn update(
        &self,
        scope: &PoolScope,
        name: &str,
        change: &PoolChange,
    ) -> Result<String, ProviderError> {
        let c = &scope.clients.container;
        let path = scope.pool_path(name);
        let op = match change {
            PoolChange::Autoscaling(bounds) => {
                let autoscaling = match bounds {
                    Some((min, max)) => gke::NodePoolAutoscaling::new()
                        .set_enabled(true)
                        .set_min_node_count(*min)
                        .set_max_node_count(*max),
                    None => gke::NodePoolAutoscaling::new().set_enabled(false),
                };
                counted(
                    &scope.calls,
                    SERVICE,
                    "SetNodePoolAutoscaling",
                    c.set_node_pool_autoscaling()
                        .set_name(&path)
                        .set_autoscaling(autoscaling)
                        .send(),
                )
                .await?
            }
            PoolChange::Size(n) => {
                counted(
                    &scope.calls,
                    SERVICE,
                    "SetNodePoolSize",
                    c.set_node_pool_size()
                        .set_name(&path)
                        .set_node_count(*n)
                        .send(),
                )
                .await?
            }
            PoolChange::Settings {
                labels,
                taints,
                upgrade,
            } => {
                let mut request = c.update_node_pool().set_name(&path);
                if let Some(labels) = labels {
                    request = request.set_labels(gke::NodeLabels::new().set_labels(labels.clone()));
                }
                if let Some(taints) = taints {
                    request = request.set_taints(node_taints(taints));
                }
                if let Some((surge, unavailable)) = upgrade {
                    request = request.set_upgrade_settings(
                        gke::node_pool::UpgradeSettings::new()
                            .set_max_surge(*surge)
                            .set_max_unavailable(*unavailable),
                    );
                }
                counted(&scope.calls, SERVICE, "UpdateNodePool", request.send()).await?
            }
        };
        Ok(op.name)
    }

    async fn delete(&self, scope: &PoolScope, name: &str) -> Result<Deletion, ProviderError> {
        match counted(
            &scope.calls,
            SERVICE,
            "DeleteNodePool",
            scope
                .clients
                .container
                .delete_node_pool()
                .set_name(scope.pool_path(name))
                .send(),
        )
        .await
        {
            Ok(_) => Ok(Deletion::Started),
            Err(f) => Deletion::after(Err(f.error)),
        }
    }

    fn status(
        &self,
        common: MachinePoolStatusCommon,
        request_overrides: Option<RequestOverridesStatus>,
        pool: Option<&ManagedPool<PoolView>>,
        name: &str,
    ) -> GKEMachinePoolStatus {
        GKEMachinePoolStatus {
            common,
            observed_generation: None,
            node_pool_name: Some(name.to_string()),
            instance_groups: pool.map(|p| p.detail.groups.clone()).unwrap_or_default(),
            request_overrides,
        }
    }
}

impl GkeMachinePool {
    /// The pool's name from its self link.
    fn describe_name(&self, _scope: &PoolScope, id: &str) -> Option<String> {
        id.rsplit_once("/nodePools/").map(|(_, n)| n.to_string())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn view_at(per_zone: i32, zones: usize) -> PoolView {
        PoolView {
            zones: (0..zones).map(|z| format!("z{z}")).collect(),
            per_zone: Some(per_zone),
            upgrade: (1, 0),
            ..PoolView::default()
        }
    }

    fn shape() -> PoolShape {
        PoolShape {
            machine_type: "e2-standard-2".into(),
            disk_size_gb: None,
            image_type: None,
            labels: BTreeMap::new(),
            taints: Vec::new(),
            spot: false,
            upgrade: None,
            service_account: None,
        }
    }

    #[test]
    fn replicas_are_divided_over_the_zones_and_must_divide() {
        let fixed = |replicas| ScalingIntent::Fixed { replicas };
        assert_eq!(
            pool_change(&view_at(1, 2), &shape(), fixed(4)),
            Ok(Some(PoolChange::Size(2)))
        );
        assert_eq!(pool_change(&view_at(2, 2), &shape(), fixed(4)), Ok(None));
        let e = pool_change(&view_at(1, 2), &shape(), fixed(3)).unwrap_err();
        assert!(
            e.contains("MachinePool.spec.replicas 3") && e.contains("multiple of 2"),
            "{e}"
        );
    }

    #[test]
    fn autoscaling_owns_the_count_and_settings_follow() {
        let auto = ScalingIntent::Autoscaled {
            min: 1,
            max: 3,
            initial: 2,
        };
        assert_eq!(
            pool_change(&view_at(2, 1), &shape(), auto),
            Ok(Some(PoolChange::Autoscaling(Some((1, 3)))))
        );
        let mut on = view_at(2, 1);
        on.autoscaling = Some((1, 3));
        assert_eq!(pool_change(&on, &shape(), auto), Ok(None));
        assert_eq!(
            pool_change(&on, &shape(), ScalingIntent::Fixed { replicas: 2 }),
            Ok(Some(PoolChange::Autoscaling(None)))
        );
        let mut labelled = shape();
        labelled.labels.insert("role".into(), "web".into());
        assert!(matches!(
            pool_change(
                &view_at(2, 1),
                &labelled,
                ScalingIntent::Fixed { replicas: 2 }
            ),
            Ok(Some(PoolChange::Settings {
                labels: Some(_),
                taints: None,
                upgrade: None
            }))
        ));
    }

    #[test]
    fn group_urls_name_their_zone() {
        assert_eq!(
            group_of(
                "https://www.googleapis.com/compute/v1/projects/p/zones/us-central1-a/instanceGroupManagers/gke-c-p-1234567-grp"
            ),
            ("us-central1-a", "gke-c-p-1234567-grp")
        );
    }
}
