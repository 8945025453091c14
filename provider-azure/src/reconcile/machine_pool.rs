//! AKS's side of the InfraMachinePool role: one AKS agent pool, its nodes one virtual machine
//! scale set in the cluster's node resource group. Everything else (observe order, the
//! MachinePool write-back, `spec.providerIDList`, plan, status, conditions, requeue, cleanup
//! policy) is the generic reconciler's ([`provider_runtime::machine_pool`]).
//!
//! An agent pool is one ARM resource: every change is a PUT of its properties as last read with
//! the desired fields set, guarded by its `eTag`, answered with an `Azure-AsyncOperation` to
//! track. Its provider IDs are its scale set's instances (a `Deleting` one included until it is
//! gone), written as AKS's cloud provider writes them (the node resource group in lower case).

use std::collections::BTreeMap;
use std::sync::Arc;

use contract::api::{
    MachinePoolSpecCommon, MachinePoolStatusCommon, Operation, RequestOverridesStatus, TaintEffect,
};
use contract::capi::MachinePool;
use contract::conditions::Reason;
use contract::idempotency::ARM_UNSENT_TOKEN;
use contract::naming;
use contract::plan::{CloudStep, Lifecycle, OperationState};
use contract::scaling::{InstanceLife, ScalingIntent, provider_id_list};
use contract::version::KubeVersion;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::ResourceExt;
use provider_runtime::cluster_objects;
use provider_runtime::machine_pool::Deletion;
use provider_runtime::machine_pool::{
    Creation, Located, MachinePoolCloud, MachinePoolProfile, MachinePoolReconciler,
    ManagedMachinePool, ManagedPool, PoolCall, PoolCreated,
};
use provider_runtime::{CloudCalls, CloudError, ClusterRef, ProviderError};
use reqwest::Method;
use serde_json::{Value, json};

use super::{aks_version, last_segment};
use crate::api::{AKSCluster, AKSControlPlane, AKSMachinePool, AKSMachinePoolStatus, PoolMode};
use crate::arm::{self, Arm};
use crate::scope::{self, Infra, Shared};

/// The value this provider writes into `cluster.x-k8s.io/replicas-managed-by`.
pub const REPLICAS_MANAGER: &str = "aks";

/// Pool properties ARM sets; left out of a PUT.
const READ_ONLY: &[&str] = &[
    "name",
    "provisioningState",
    "powerState",
    "currentOrchestratorVersion",
    "nodeImageVersion",
    "eTag",
];

/// The AKSMachinePool reconciler: the generic one over AKS.
pub fn reconciler(shared: Arc<Shared>) -> MachinePoolReconciler<AksMachinePool> {
    MachinePoolReconciler::new(scope::PROVIDER, AksMachinePool { shared })
}

impl ManagedMachinePool for AKSMachinePool {
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

/// AKS, for the generic InfraMachinePool reconciler.
pub struct AksMachinePool {
    shared: Arc<Shared>,
}

/// Where the pool lives and how to reach it.
pub struct PoolScope {
    arm: Arm,
    calls: CloudCalls,
    infra: Infra,
    cluster: String,
    control_plane_version: Option<KubeVersion>,
}

impl PoolScope {
    fn cluster_path(&self) -> String {
        format!(
            "{}/providers/Microsoft.ContainerService/managedClusters/{}",
            self.arm.group_path(&self.infra.resource_group),
            self.cluster
        )
    }

    fn pool_path(&self, name: &str) -> String {
        format!("{}/agentPools/{name}", self.cluster_path())
    }
}

/// The spec in AKS's terms.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolShape {
    /// VM size.
    pub vm_size: String,
    /// OS disk, GB.
    pub disk_size_gb: Option<i32>,
    /// OS SKU.
    pub os_sku: Option<String>,
    /// Kubernetes labels.
    pub labels: BTreeMap<String, String>,
    /// Taints as AKS writes them (`key=value:Effect`), sorted.
    pub taints: Vec<String>,
    /// Spot capacity.
    pub spot: bool,
    /// `(maxSurge, maxUnavailable)` as AKS takes them (`"1"`, `"33%"`).
    pub upgrade: (Option<String>, Option<String>),
    /// System or User.
    pub mode: &'static str,
    /// Pods per node.
    pub max_pods: Option<i32>,
    /// The pool's own subnet.
    pub subnet: Option<String>,
}

fn invalid(message: impl Into<String>) -> ProviderError {
    ProviderError::terminal(Reason::InvalidSpec, message)
}

fn effect(e: TaintEffect) -> &'static str {
    match e {
        TaintEffect::NoSchedule => "NoSchedule",
        TaintEffect::PreferNoSchedule => "PreferNoSchedule",
        TaintEffect::NoExecute => "NoExecute",
    }
}

fn int_or_percent(v: &Option<IntOrString>) -> Option<String> {
    match v {
        None => None,
        Some(IntOrString::Int(n)) => Some(n.to_string()),
        Some(IntOrString::String(s)) => Some(s.clone()),
    }
}

/// The spec in AKS's terms (pure).
///
/// # Errors
/// A message naming the field.
pub fn pool_shape(obj: &AKSMachinePool) -> Result<PoolShape, String> {
    let c = &obj.spec.common;
    if c.subnet_ids.len() > 1 {
        return Err("spec.subnetIDs takes one subnet on AKS (an agent pool's vnetSubnetID)".into());
    }
    let mut taints: Vec<String> = c
        .taints
        .iter()
        .map(|t| match t.value.as_deref().filter(|v| !v.is_empty()) {
            Some(v) => format!("{}={v}:{}", t.key, effect(t.effect)),
            None => format!("{}:{}", t.key, effect(t.effect)),
        })
        .collect();
    taints.sort();
    let upgrade = c
        .update
        .as_ref()
        .map(|u| {
            (
                int_or_percent(&u.max_surge),
                int_or_percent(&u.max_unavailable),
            )
        })
        .unwrap_or_default();
    Ok(PoolShape {
        vm_size: c.machine_type.clone(),
        disk_size_gb: c.disk_size_gb,
        os_sku: c.image.clone(),
        labels: c.labels.clone(),
        taints,
        spot: c.spot,
        upgrade,
        mode: match obj.spec.aks.mode {
            PoolMode::User => "User",
            PoolMode::System => "System",
        },
        max_pods: obj.spec.aks.max_pods,
        subnet: c.subnet_ids.first().cloned(),
    })
}

/// What AKS says about a pool.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PoolView {
    /// Its properties as read: the body of the next PUT.
    pub props: Value,
    /// Its ETag.
    pub etag: String,
    /// `count`.
    pub count: Option<i32>,
    /// Autoscaling `(minCount, maxCount)`, when on.
    pub autoscaling: Option<(i32, i32)>,
    /// `nodeLabels`.
    pub labels: BTreeMap<String, String>,
    /// `nodeTaints`, sorted.
    pub taints: Vec<String>,
    /// `mode`.
    pub mode: String,
    /// `upgradeSettings` `(maxSurge, maxUnavailable)`.
    pub upgrade: (Option<String>, Option<String>),
}

fn view(props: &Value, etag: &str) -> PoolView {
    let int = |v: &Value| v.as_i64().and_then(|n| i32::try_from(n).ok());
    let mut taints: Vec<String> = props["nodeTaints"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t.as_str().map(String::from))
        .collect();
    taints.sort();
    let s = |v: &Value| v.as_str().map(String::from);
    PoolView {
        props: props.clone(),
        etag: etag.to_string(),
        count: int(&props["count"]),
        autoscaling: (props["enableAutoScaling"] == true).then(|| {
            (
                int(&props["minCount"]).unwrap_or(0),
                int(&props["maxCount"]).unwrap_or(0),
            )
        }),
        labels: props["nodeLabels"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
            .collect(),
        taints,
        mode: props["mode"].as_str().unwrap_or("User").to_string(),
        upgrade: (
            s(&props["upgradeSettings"]["maxSurge"]),
            s(&props["upgradeSettings"]["maxUnavailable"]),
        ),
    }
}

/// One difference, one PUT of the pool.
#[derive(Debug, Clone, PartialEq)]
pub enum PoolChange {
    /// Autoscaling on between these bounds, or off (`None`).
    Autoscaling(Option<(i32, i32)>),
    /// The count.
    Count(i32),
    /// Labels, taints, mode and upgrade settings.
    Settings {
        /// New labels, when they differ.
        labels: Option<BTreeMap<String, String>>,
        /// New taints, when they differ.
        taints: Option<Vec<String>>,
        /// New mode, when it differs.
        mode: Option<&'static str>,
        /// New upgrade settings, when they differ.
        upgrade: Option<(Option<String>, Option<String>)>,
    },
}

/// The first difference (pure): the count's owner first, then the count, then the settings.
pub fn pool_change(
    view: &PoolView,
    shape: &PoolShape,
    scaling: ScalingIntent,
) -> Option<PoolChange> {
    match scaling {
        ScalingIntent::Autoscaled { min, max, .. } => {
            if view.autoscaling != Some((min, max)) {
                return Some(PoolChange::Autoscaling(Some((min, max))));
            }
        }
        ScalingIntent::Fixed { replicas } => {
            if view.autoscaling.is_some() {
                return Some(PoolChange::Autoscaling(None));
            }
            if view.count != Some(replicas) {
                return Some(PoolChange::Count(replicas));
            }
        }
    }
    let labels = (view.labels != shape.labels).then(|| shape.labels.clone());
    let taints = (view.taints != shape.taints).then(|| shape.taints.clone());
    let mode = (!view.mode.eq_ignore_ascii_case(shape.mode)).then_some(shape.mode);
    let wanted_upgrade = (
        shape.upgrade.0.clone().or_else(|| view.upgrade.0.clone()),
        shape.upgrade.1.clone().or_else(|| view.upgrade.1.clone()),
    );
    let upgrade = (wanted_upgrade != view.upgrade).then_some(wanted_upgrade);
    if labels.is_none() && taints.is_none() && mode.is_none() && upgrade.is_none() {
        return None;
    }
    Some(PoolChange::Settings {
        labels,
        taints,
        mode,
        upgrade,
    })
}

/// Applies a change to a pool's properties (pure).
fn changed(props: &Value, change: &PoolChange) -> Value {
    let mut p = props.clone();
    if let Some(o) = p.as_object_mut() {
        for f in READ_ONLY {
            o.remove(*f);
        }
    }
    match change {
        PoolChange::Autoscaling(Some((min, max))) => {
            p["enableAutoScaling"] = json!(true);
            p["minCount"] = json!(min);
            p["maxCount"] = json!(max);
            let count = p["count"]
                .as_i64()
                .unwrap_or(i64::from(*min))
                .clamp(i64::from(*min), i64::from(*max));
            p["count"] = json!(count);
        }
        PoolChange::Autoscaling(None) => {
            p["enableAutoScaling"] = json!(false);
            if let Some(o) = p.as_object_mut() {
                o.remove("minCount");
                o.remove("maxCount");
            }
        }
        PoolChange::Count(n) => p["count"] = json!(n),
        PoolChange::Settings {
            labels,
            taints,
            mode,
            upgrade,
        } => {
            if let Some(l) = labels {
                p["nodeLabels"] = json!(l);
            }
            if let Some(t) = taints {
                p["nodeTaints"] = json!(t);
            }
            if let Some(m) = mode {
                p["mode"] = json!(m);
            }
            if let Some((surge, unavailable)) = upgrade {
                if let Some(s) = surge {
                    p["upgradeSettings"]["maxSurge"] = json!(s);
                }
                if let Some(u) = unavailable {
                    p["upgradeSettings"]["maxUnavailable"] = json!(u);
                }
            }
        }
    }
    p
}

fn lifecycle(state: &str) -> Lifecycle {
    match state {
        "Creating" => Lifecycle::Creating,
        "Succeeded" | "Canceled" => Lifecycle::Running,
        "Updating" | "Upgrading" | "Scaling" | "Starting" | "Stopping" => Lifecycle::Updating,
        "Deleting" => Lifecycle::Deleting,
        "Failed" => Lifecycle::Failed,
        other => Lifecycle::Other(other.to_string()),
    }
}

/// The pool's name: `spec.cloudName`, else derived from the object's name (unique within the
/// cluster's namespace, so within the cluster).
pub fn pool_name(obj: &AKSMachinePool) -> Result<String, ProviderError> {
    match obj.spec.common.cloud_name.as_deref() {
        Some(given) => naming::AKS_AGENT_POOL
            .check(given)
            .map(|()| given.to_string())
            .map_err(|e| invalid(format!("spec.cloudName: {e}"))),
        None => Ok(naming::derive_child_name(
            &obj.name_any(),
            &naming::AKS_AGENT_POOL,
        )),
    }
}

/// `azure://` and the instance's ARM id, its resource group in lower case (as AKS's cloud
/// provider writes `spec.providerID`).
pub fn provider_id(vm_id: &str) -> String {
    let parts: Vec<&str> = vm_id.split('/').collect();
    let fixed: Vec<String> = parts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if i > 0 && parts[i - 1].eq_ignore_ascii_case("resourceGroups") {
                p.to_ascii_lowercase()
            } else {
                (*p).to_string()
            }
        })
        .collect();
    format!("azure://{}", fixed.join("/"))
}

/// The pool's zones: the MachinePool's failure domains (AKS availability zones), else the
/// cluster's.
fn pool_zones(machine_pool: &MachinePool, infra: &Infra) -> Result<Vec<String>, String> {
    let wanted = &machine_pool.spec.failure_domains;
    if wanted.is_empty() {
        return Ok(infra.zones.clone());
    }
    for zone in wanted {
        if !infra.zones.contains(zone) {
            return Err(format!(
                "MachinePool.spec.failureDomains names {zone}, which is not one of the cluster's availability zones ({})",
                infra.zones.join(", ")
            ));
        }
    }
    Ok(wanted.clone())
}

impl MachinePoolCloud for AksMachinePool {
    type Object = AKSMachinePool;
    type Spec = PoolShape;
    type Scope = PoolScope;
    type Detail = PoolView;
    type Change = PoolChange;
    type Status = AKSMachinePoolStatus;

    fn profile(&self) -> MachinePoolProfile {
        MachinePoolProfile {
            cloud: "AKS",
            noun: "agent pool",
            replicas_manager: REPLICAS_MANAGER,
            token_limits: &ARM_UNSENT_TOKEN,
            poll: self.shared.poll_interval,
            rest: self.shared.rest_interval,
        }
    }

    fn validate(&self, obj: &AKSMachinePool) -> Result<PoolShape, ProviderError> {
        pool_shape(obj).map_err(invalid)
    }

    fn name(&self, obj: &AKSMachinePool) -> Result<String, ProviderError> {
        pool_name(obj)
    }

    async fn locate(
        &self,
        obj: &AKSMachinePool,
        cluster: ClusterRef<'_>,
        client: &kube::Client,
        calls: &CloudCalls,
        require_initialized: bool,
    ) -> Result<Located<PoolScope>, ProviderError> {
        let namespace = obj.namespace().unwrap_or_default();
        let place = match cluster_objects::pool_place::<AKSControlPlane, AKSCluster, _, Infra>(
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
        let arm = scope::arm_for(&self.shared, client, &namespace, &infra).await?;
        Ok(Located::Found(PoolScope {
            arm,
            calls: calls.clone(),
            cluster: scope::aks_cluster_name(&cp, &cluster.name()),
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
        format!("{name} (in AKS cluster {})", scope.cluster)
    }

    async fn describe(
        &self,
        scope: &PoolScope,
        name: &str,
    ) -> Result<Option<ManagedPool<PoolView>>, ProviderError> {
        let Some(pool) = scope
            .arm
            .get(
                &scope.calls,
                "AgentPools_Get",
                &scope.pool_path(name),
                arm::CONTAINER,
            )
            .await?
        else {
            return Ok(None);
        };
        let props = &pool["properties"];
        let state = props["provisioningState"]
            .as_str()
            .unwrap_or("Unknown")
            .to_string();
        let detail = view(
            props,
            pool["eTag"]
                .as_str()
                .or_else(|| props["eTag"].as_str())
                .unwrap_or_default(),
        );
        Ok(Some(ManagedPool {
            id: pool["id"].as_str().unwrap_or_default().to_string(),
            lifecycle: lifecycle(&state),
            issues: if state == "Failed" {
                vec![format!("agent pool {name} is in provisioning state Failed")]
            } else {
                Vec::new()
            },
            state,
            version: props["currentOrchestratorVersion"]
                .as_str()
                .map(String::from)
                .filter(|v| !v.is_empty()),
            tags: props["tags"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect(),
            desired_size: detail.count,
            detail,
        }))
    }

    async fn operation_state(
        &self,
        scope: &PoolScope,
        _name: &str,
        operation: &Operation,
    ) -> Result<Option<OperationState>, ProviderError> {
        scope.arm.operation_state(&scope.calls, &operation.id).await
    }

    async fn provider_ids(
        &self,
        scope: &PoolScope,
        name: &str,
    ) -> Result<Vec<String>, ProviderError> {
        let Some(cluster) = scope
            .arm
            .get(
                &scope.calls,
                "ManagedClusters_Get",
                &scope.cluster_path(),
                arm::CONTAINER,
            )
            .await?
        else {
            return Ok(Vec::new());
        };
        let Some(node_group) = cluster["properties"]["nodeResourceGroup"]
            .as_str()
            .filter(|g| !g.is_empty())
        else {
            return Ok(Vec::new());
        };
        let sets_path = format!(
            "{}/providers/Microsoft.Compute/virtualMachineScaleSets",
            scope.arm.group_path(node_group)
        );
        let sets = match scope
            .arm
            .list(
                &scope.calls,
                "VirtualMachineScaleSets_List",
                &sets_path,
                arm::COMPUTE,
            )
            .await
        {
            Ok(s) => s,
            Err(f) if f.error.is_not_found() => return Ok(Vec::new()),
            Err(f) => return Err(f.into()),
        };
        let mut ids = Vec::new();
        for set in sets
            .iter()
            .filter(|s| s["tags"]["aks-managed-poolName"] == name)
        {
            let vmss = set["name"].as_str().unwrap_or_default();
            let vms = match scope
                .arm
                .list(
                    &scope.calls,
                    "VirtualMachineScaleSetVMs_List",
                    &format!("{sets_path}/{vmss}/virtualMachines"),
                    arm::COMPUTE,
                )
                .await
            {
                Ok(v) => v,
                Err(f) if f.error.is_not_found() => continue,
                Err(f) => return Err(f.into()),
            };
            ids.extend(
                vms.iter()
                    .filter_map(|vm| vm["id"].as_str())
                    .map(provider_id),
            );
        }
        Ok(provider_id_list(
            ids.iter().map(|id| (id.as_str(), InstanceLife::Present)),
        ))
    }

    fn diff(
        &self,
        call: &PoolCall<'_, AKSMachinePool, PoolShape>,
        pool: &ManagedPool<PoolView>,
    ) -> CloudStep<PoolChange> {
        match pool_change(&pool.detail, call.spec, call.scaling) {
            Some(change) => CloudStep::Change(change),
            None => CloudStep::Nothing,
        }
    }

    fn describe_change(
        &self,
        change: &PoolChange,
        _pool: Option<&ManagedPool<PoolView>>,
    ) -> String {
        match change {
            PoolChange::Autoscaling(Some((min, max))) => {
                format!("turning the cluster autoscaler on between {min} and {max} nodes")
            }
            PoolChange::Autoscaling(None) => "turning the cluster autoscaler off".into(),
            PoolChange::Count(n) => format!("scaling to {n} nodes"),
            PoolChange::Settings { .. } => {
                "updating labels, taints, mode or upgrade settings".into()
            }
        }
    }

    async fn create(
        &self,
        scope: &PoolScope,
        call: &PoolCall<'_, AKSMachinePool, PoolShape>,
        version: Option<&KubeVersion>,
    ) -> Result<Creation<PoolView>, ProviderError> {
        let zones = pool_zones(call.machine_pool, &scope.infra).map_err(invalid)?;
        let shape = call.spec;
        let mut props = json!({
            "count": call.scaling.initial_count(),
            "vmSize": shape.vm_size,
            "osType": "Linux",
            "type": "VirtualMachineScaleSets",
            "mode": shape.mode,
            "nodeLabels": shape.labels,
            "nodeTaints": shape.taints,
            "availabilityZones": zones,
            "tags": call.request.tags,
        });
        if let Some(v) = version {
            props["orchestratorVersion"] = json!(aks_version(v));
        }
        if let Some(d) = shape.disk_size_gb {
            props["osDiskSizeGB"] = json!(d);
        }
        if let Some(os) = &shape.os_sku {
            props["osSKU"] = json!(os);
        }
        if let Some(m) = shape.max_pods {
            props["maxPods"] = json!(m);
        }
        if let Some(s) = shape
            .subnet
            .as_ref()
            .or(Some(&scope.infra.subnet).filter(|s| !s.is_empty()))
        {
            props["vnetSubnetID"] = json!(s);
        }
        if shape.spot {
            props["scaleSetPriority"] = json!("Spot");
            props["scaleSetEvictionPolicy"] = json!("Delete");
            props["spotMaxPrice"] = json!(-1);
        }
        if let Some(s) = &shape.upgrade.0 {
            props["upgradeSettings"]["maxSurge"] = json!(s);
        }
        if let Some(u) = &shape.upgrade.1 {
            props["upgradeSettings"]["maxUnavailable"] = json!(u);
        }
        if let ScalingIntent::Autoscaled { min, max, .. } = call.scaling {
            props["enableAutoScaling"] = json!(true);
            props["minCount"] = json!(min);
            props["maxCount"] = json!(max);
        }
        let mut body = json!({ "properties": props });
        let patch = contract::overrides::effective(call.obj.spec.aks.request_overrides.as_ref());
        if let Some(patch) = patch {
            body = super::overridden(&body, patch)?;
        }
        // Only a pool that does not exist is created: `If-None-Match: *` is not sent (AKS
        // ignores it), but describe found none this pass.
        let result = scope
            .arm
            .call(
                &scope.calls,
                "AgentPools_CreateOrUpdate",
                Method::PUT,
                &scope.pool_path(call.name),
                arm::CONTAINER,
                Some(&body),
                None,
            )
            .await;
        match result {
            Ok(answer) => Ok(Creation::Started(Box::new(PoolCreated {
                id: arm::tracked(&answer)
                    .unwrap_or_else(|| answer.body["id"].as_str().unwrap_or_default().to_string()),
                overrides: patch
                    .map(|_| call.request.overrides_applied("AgentPools_CreateOrUpdate")),
                pool: None,
            }))),
            Err(f) if matches!(f.error, CloudError::InUse(_)) => {
                Ok(Creation::Exists(f.error.to_string()))
            }
            Err(f) => Err(f.into()),
        }
    }

    async fn tag(
        &self,
        scope: &PoolScope,
        id: &str,
        tags: &BTreeMap<String, String>,
    ) -> Result<(), ProviderError> {
        let name = last_segment(id).to_string();
        let Some(pool) = self.describe(scope, &name).await? else {
            return Err(CloudError::NotFound(format!("agent pool {name} is gone")).into());
        };
        let mut props = changed(
            &pool.detail.props,
            &PoolChange::Settings {
                labels: None,
                taints: None,
                mode: None,
                upgrade: None,
            },
        );
        let mut merged = pool.tags.clone();
        merged.extend(tags.clone());
        props["tags"] = json!(merged);
        scope
            .arm
            .call(
                &scope.calls,
                "AgentPools_CreateOrUpdate",
                Method::PUT,
                &scope.pool_path(&name),
                arm::CONTAINER,
                Some(&json!({ "properties": props })),
                Some(&pool.detail.etag),
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
        let Some(pool) = self.describe(scope, name).await? else {
            return Err(CloudError::NotFound(format!("agent pool {name} is gone")).into());
        };
        let mut props = changed(
            &pool.detail.props,
            &PoolChange::Settings {
                labels: None,
                taints: None,
                mode: None,
                upgrade: None,
            },
        );
        props["orchestratorVersion"] = json!(aks_version(to));
        let answer = scope
            .arm
            .call(
                &scope.calls,
                "AgentPools_CreateOrUpdate",
                Method::PUT,
                &scope.pool_path(name),
                arm::CONTAINER,
                Some(&json!({ "properties": props })),
                Some(&pool.detail.etag),
            )
            .await?;
        Ok(arm::tracked(&answer).unwrap_or_default())
    }

    async fn update(
        &self,
        scope: &PoolScope,
        name: &str,
        change: &PoolChange,
    ) -> Result<String, ProviderError> {
        let Some(pool) = self.describe(scope, name).await? else {
            return Err(CloudError::NotFound(format!("agent pool {name} is gone")).into());
        };
        let props = changed(&pool.detail.props, change);
        let answer = scope
            .arm
            .call(
                &scope.calls,
                "AgentPools_CreateOrUpdate",
                Method::PUT,
                &scope.pool_path(name),
                arm::CONTAINER,
                Some(&json!({ "properties": props })),
                Some(&pool.detail.etag),
            )
            .await?;
        Ok(arm::tracked(&answer).unwrap_or_default())
    }

    async fn delete(&self, scope: &PoolScope, name: &str) -> Result<Deletion, ProviderError> {
        match scope
            .arm
            .call(
                &scope.calls,
                "AgentPools_Delete",
                Method::DELETE,
                &scope.pool_path(name),
                arm::CONTAINER,
                None,
                None,
            )
            .await
        {
            Ok(a) if a.status == 204 => Ok(Deletion::Gone),
            Ok(_) => Ok(Deletion::Started),
            Err(f) => Deletion::after(Err(f.error)),
        }
    }

    fn status(
        &self,
        common: MachinePoolStatusCommon,
        request_overrides: Option<RequestOverridesStatus>,
        _pool: Option<&ManagedPool<PoolView>>,
        name: &str,
    ) -> AKSMachinePoolStatus {
        AKSMachinePoolStatus {
            common,
            observed_generation: None,
            agent_pool_name: Some(name.to_string()),
            request_overrides,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn shape() -> PoolShape {
        PoolShape {
            vm_size: "Standard_D2s_v5".into(),
            disk_size_gb: None,
            os_sku: None,
            labels: BTreeMap::new(),
            taints: Vec::new(),
            spot: false,
            upgrade: (None, None),
            mode: "User",
            max_pods: None,
            subnet: None,
        }
    }

    fn at(count: i32) -> PoolView {
        PoolView {
            count: Some(count),
            mode: "User".into(),
            ..PoolView::default()
        }
    }

    #[test]
    fn the_count_s_owner_comes_first_then_the_count_then_settings() {
        let fixed = |replicas| ScalingIntent::Fixed { replicas };
        assert_eq!(
            pool_change(&at(1), &shape(), fixed(3)),
            Some(PoolChange::Count(3))
        );
        assert_eq!(pool_change(&at(3), &shape(), fixed(3)), None);
        let auto = ScalingIntent::Autoscaled {
            min: 1,
            max: 4,
            initial: 2,
        };
        assert_eq!(
            pool_change(&at(2), &shape(), auto),
            Some(PoolChange::Autoscaling(Some((1, 4))))
        );
        let mut on = at(2);
        on.autoscaling = Some((1, 4));
        assert_eq!(pool_change(&on, &shape(), auto), None);
        assert_eq!(
            pool_change(&on, &shape(), fixed(2)),
            Some(PoolChange::Autoscaling(None))
        );
        let mut tainted = shape();
        tainted.taints = vec!["dedicated=gpu:NoSchedule".into()];
        assert!(matches!(
            pool_change(&at(2), &tainted, fixed(2)),
            Some(PoolChange::Settings {
                taints: Some(_),
                labels: None,
                ..
            })
        ));
    }

    #[test]
    fn a_change_is_the_pool_as_read_with_the_field_set_and_nothing_arm_sets() {
        let props = json!({"count": 1, "vmSize": "Standard_D2s_v5", "provisioningState": "Succeeded", "currentOrchestratorVersion": "1.32.7", "eTag": "x"});
        let p = changed(&props, &PoolChange::Count(3));
        assert_eq!(p["count"], 3);
        assert_eq!(p["vmSize"], "Standard_D2s_v5");
        assert!(p["provisioningState"].is_null() && p["eTag"].is_null());
        let a = changed(&props, &PoolChange::Autoscaling(Some((2, 5))));
        assert_eq!(
            (a["enableAutoScaling"].as_bool(), a["count"].as_i64()),
            (Some(true), Some(2))
        );
    }

    #[test]
    fn provider_ids_are_written_as_aks_writes_them() {
        assert_eq!(
            provider_id(
                "/subscriptions/s/resourceGroups/MC_rg_c_eastus/providers/Microsoft.Compute/virtualMachineScaleSets/aks-pool-1-vmss/virtualMachines/3"
            ),
            "azure:///subscriptions/s/resourceGroups/mc_rg_c_eastus/providers/Microsoft.Compute/virtualMachineScaleSets/aks-pool-1-vmss/virtualMachines/3"
        );
    }
}
