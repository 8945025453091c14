//! OKE's side of the InfraMachinePool role: one OKE managed node pool, its nodes compute
//! instances placed in the pool's availability domains. Everything else (observe order, the
//! MachinePool write-back, `spec.providerIDList`, plan, status, conditions, requeue, cleanup
//! policy) is the generic reconciler's ([`provider_runtime::machine_pool`]).
//!
//! A node pool is found by name in its cluster (names are not unique in OCI: only one tagged as
//! ours is used) and read whole with its nodes, whose instance OCIDs are the provider IDs OKE
//! writes on its Nodes (a `DELETING` node included until it is gone). Changes are
//! UpdateNodePool calls of the fields that differ, answered with a work request. Node cycling
//! is on, so a version or shape change replaces the nodes within `spec.update`'s surge and
//! unavailability. OKE's cluster autoscaler is an add-on in the cluster, not a pool setting:
//! with `spec.scaling` the provider leaves the size to it and only keeps it within the bounds.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use contract::api::{
    MachinePoolSpecCommon, MachinePoolStatusCommon, Operation, RequestOverridesStatus,
};
use contract::capi::MachinePool;
use contract::conditions::Reason;
use contract::idempotency::OCI_RETRY_TOKEN;
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

use super::{Named, Seen, find_named, offered_version, tags_of};
use crate::api::{CniType, OKECluster, OKEControlPlane, OKEMachinePool, OKEMachinePoolStatus};
use crate::oci::{Call, Oci, Service, q};
use crate::scope::{self, Infra, Shared};

/// The value this provider writes into `cluster.x-k8s.io/replicas-managed-by`.
pub const REPLICAS_MANAGER: &str = "oke";

/// Memory per OCPU of a flexible shape when the spec names none (OCI's default).
const MEMORY_PER_OCPU: i32 = 16;

/// The OKEMachinePool reconciler: the generic one over OKE.
pub fn reconciler(shared: Arc<Shared>) -> MachinePoolReconciler<OkeMachinePool> {
    MachinePoolReconciler::new(scope::PROVIDER, OkeMachinePool { shared })
}

impl ManagedMachinePool for OKEMachinePool {
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
        self.status.as_ref()?.node_pool_id.as_deref()
    }
}

/// OKE, for the generic InfraMachinePool reconciler.
pub struct OkeMachinePool {
    shared: Arc<Shared>,
}

/// Where the pool lives and how to reach it.
pub struct PoolScope {
    oci: Oci,
    calls: CloudCalls,
    infra: Infra,
    cluster: String,
    cluster_id: String,
    cni: CniType,
    control_plane_version: Option<KubeVersion>,
    nodes: OnceLock<Vec<(String, InstanceLife)>>,
    seen: OnceLock<Seen>,
    recorded: Option<String>,
    owner: contract::ownership::Owner,
}

/// The spec in OKE's terms.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolShape {
    /// `nodeShape`.
    pub shape: String,
    /// `nodeShapeConfig` of a flexible shape: `(ocpus, memoryInGBs)`.
    pub flex: Option<(i32, i32)>,
    /// The boot volume, GB.
    pub boot_volume_gb: Option<i32>,
    /// The image OCID (`None`: the newest Oracle Linux platform image).
    pub image: Option<String>,
    /// `initialNodeLabels`, by key.
    pub labels: BTreeMap<String, String>,
    /// Preemptible capacity.
    pub spot: bool,
    /// `(maximumSurge, maximumUnavailable)` of node cycling.
    pub cycling: (String, String),
    /// The nodes' subnet (`None`: the cluster's).
    pub subnet: Option<String>,
    /// Pods per node with VCN-native pod networking.
    pub max_pods: Option<i32>,
    /// An SSH public key.
    pub ssh_key: Option<String>,
}

fn invalid(message: impl Into<String>) -> ProviderError {
    ProviderError::terminal(Reason::InvalidSpec, message)
}

fn surge_text(v: Option<&IntOrString>, default: &str) -> String {
    match v {
        None => default.to_string(),
        Some(IntOrString::Int(n)) => n.to_string(),
        Some(IntOrString::String(s)) => s.clone(),
    }
}

/// The spec in OKE's terms (pure).
///
/// # Errors
/// A message naming the field.
pub fn pool_shape(obj: &OKEMachinePool) -> Result<PoolShape, String> {
    let c = &obj.spec.common;
    let o = &obj.spec.oke;
    if !c.taints.is_empty() {
        return Err(
            "spec.taints is not supported on OKE: managed node pools have no taints API".into(),
        );
    }
    if c.subnet_ids.len() > 1 {
        return Err("spec.subnetIDs takes one subnet on OKE".into());
    }
    let flexible = c.machine_type.ends_with(".Flex");
    let flex = match (flexible, o.ocpus) {
        (true, Some(ocpus)) => Some((ocpus, o.memory_gb.unwrap_or(ocpus * MEMORY_PER_OCPU))),
        (true, None) => {
            return Err(format!(
                "spec.oke.ocpus is required for the flexible shape {}",
                c.machine_type
            ));
        }
        (false, Some(_)) => {
            return Err(format!(
                "spec.oke.ocpus is only for flexible shapes; {} is fixed",
                c.machine_type
            ));
        }
        (false, None) => None,
    };
    let update = c.update.as_ref();
    Ok(PoolShape {
        shape: c.machine_type.clone(),
        flex,
        boot_volume_gb: c.disk_size_gb,
        image: c.image.clone(),
        labels: c.labels.clone(),
        spot: c.spot,
        cycling: (
            surge_text(update.and_then(|u| u.max_surge.as_ref()), "1"),
            surge_text(update.and_then(|u| u.max_unavailable.as_ref()), "0"),
        ),
        subnet: c.subnet_ids.first().cloned(),
        max_pods: o.max_pods_per_node,
        ssh_key: o.ssh_public_key.clone(),
    })
}

/// What OKE says about a pool.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PoolView {
    /// `nodeConfigDetails.size`.
    pub size: Option<i32>,
    /// `initialNodeLabels`, by key.
    pub labels: BTreeMap<String, String>,
    /// `nodeShape`.
    pub shape: String,
    /// `nodeShapeConfig` `(ocpus, memoryInGBs)`.
    pub flex: Option<(i32, i32)>,
    /// `nodePoolCyclingDetails` `(maximumSurge, maximumUnavailable)`, when cycling is on.
    pub cycling: Option<(String, String)>,
}

fn labels_of(v: &Value) -> BTreeMap<String, String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|l| {
            Some((
                l["key"].as_str()?.to_string(),
                l["value"].as_str().unwrap_or_default().to_string(),
            ))
        })
        .collect()
}

fn view(p: &Value) -> PoolView {
    let int = |v: &Value| v.as_f64().map(|f| f.round() as i32);
    PoolView {
        size: p["nodeConfigDetails"]["size"]
            .as_i64()
            .and_then(|n| i32::try_from(n).ok()),
        labels: labels_of(&p["initialNodeLabels"]),
        shape: p["nodeShape"].as_str().unwrap_or_default().to_string(),
        flex: int(&p["nodeShapeConfig"]["ocpus"]).map(|o| {
            (
                o,
                int(&p["nodeShapeConfig"]["memoryInGBs"]).unwrap_or(o * MEMORY_PER_OCPU),
            )
        }),
        cycling: (p["nodePoolCyclingDetails"]["isNodeCyclingEnabled"] == true).then(|| {
            let s = |k: &str| {
                p["nodePoolCyclingDetails"][k]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            };
            (s("maximumSurge"), s("maximumUnavailable"))
        }),
    }
}

/// One difference, one UpdateNodePool.
#[derive(Debug, Clone, PartialEq)]
pub enum PoolChange {
    /// The size.
    Size(i32),
    /// Labels, shape and node cycling: the fields that differ.
    Settings {
        /// New labels.
        labels: Option<BTreeMap<String, String>>,
        /// New shape and its flexible configuration.
        shape: Option<(String, Option<(i32, i32)>)>,
        /// New node cycling.
        cycling: Option<(String, String)>,
    },
}

/// The first difference (pure): the size first, then the settings.
pub fn pool_change(
    view: &PoolView,
    shape: &PoolShape,
    scaling: ScalingIntent,
) -> Option<PoolChange> {
    let size = view.size.unwrap_or(0);
    match scaling {
        ScalingIntent::Fixed { replicas } if size != replicas => {
            return Some(PoolChange::Size(replicas));
        }
        // The autoscaler owns the size; it is only kept within the bounds.
        ScalingIntent::Autoscaled { min, max, .. } if size < min || size > max => {
            return Some(PoolChange::Size(size.clamp(min, max)));
        }
        _ => {}
    }
    let labels = (view.labels != shape.labels).then(|| shape.labels.clone());
    let new_shape = (view.shape != shape.shape || view.flex != shape.flex)
        .then(|| (shape.shape.clone(), shape.flex));
    let cycling = (view.cycling.as_ref() != Some(&shape.cycling)).then(|| shape.cycling.clone());
    if labels.is_none() && new_shape.is_none() && cycling.is_none() {
        return None;
    }
    Some(PoolChange::Settings {
        labels,
        shape: new_shape,
        cycling,
    })
}

fn label_list(labels: &BTreeMap<String, String>) -> Value {
    json!(
        labels
            .iter()
            .map(|(k, v)| json!({ "key": k, "value": v }))
            .collect::<Vec<_>>()
    )
}

fn cycling_body((surge, unavailable): &(String, String)) -> Value {
    json!({ "isNodeCyclingEnabled": true, "maximumSurge": surge, "maximumUnavailable": unavailable })
}

fn shape_config((ocpus, memory): (i32, i32)) -> Value {
    json!({ "ocpus": ocpus, "memoryInGBs": memory })
}

/// The body of UpdateNodePool for `change` (pure).
fn update_body(change: &PoolChange) -> Value {
    match change {
        PoolChange::Size(n) => json!({ "nodeConfigDetails": { "size": n } }),
        PoolChange::Settings {
            labels,
            shape,
            cycling,
        } => {
            let mut body = json!({});
            if let Some(l) = labels {
                body["initialNodeLabels"] = label_list(l);
            }
            if let Some((s, flex)) = shape {
                body["nodeShape"] = json!(s);
                if let Some(f) = flex {
                    body["nodeShapeConfig"] = shape_config(*f);
                }
            }
            if let Some(c) = cycling {
                body["nodePoolCyclingDetails"] = cycling_body(c);
            }
            body
        }
    }
}

/// OKE's node-pool lifecycleState in the shared terms.
pub fn lifecycle(state: &str) -> Lifecycle {
    match state {
        "CREATING" => Lifecycle::Creating,
        "ACTIVE" => Lifecycle::Running,
        "UPDATING" => Lifecycle::Updating,
        "NEEDS_ATTENTION" => Lifecycle::Degraded,
        "DELETING" => Lifecycle::Deleting,
        "FAILED" => Lifecycle::Failed,
        other => Lifecycle::Other(other.to_string()),
    }
}

/// The pool's name: `spec.cloudName`, else the object's name within OKE's limits (names are
/// unique within the cluster's namespace, so within the cluster).
pub fn pool_name(obj: &OKEMachinePool) -> Result<String, ProviderError> {
    match obj.spec.common.cloud_name.as_deref() {
        Some(given) => naming::OKE_NODE_POOL
            .check(given)
            .map(|()| given.to_string())
            .map_err(|e| invalid(format!("spec.cloudName: {e}"))),
        None => Ok(naming::derive_child_name(
            &obj.name_any(),
            &naming::OKE_NODE_POOL,
        )),
    }
}

/// The pool's availability domains: the MachinePool's failure domains, else the cluster's.
fn pool_domains(machine_pool: &MachinePool, infra: &Infra) -> Result<Vec<String>, String> {
    let wanted = &machine_pool.spec.failure_domains;
    if wanted.is_empty() {
        return Ok(infra.availability_domains.clone());
    }
    for ad in wanted {
        if !infra.availability_domains.contains(ad) {
            return Err(format!(
                "MachinePool.spec.failureDomains names {ad}, which is not one of the cluster's availability domains ({})",
                infra.availability_domains.join(", ")
            ));
        }
    }
    Ok(wanted.clone())
}

impl OkeMachinePool {
    /// The OCID of the cluster: the control plane's recorded one, else the one of that name
    /// tagged as ours.
    async fn cluster_id(
        &self,
        oci: &Oci,
        calls: &CloudCalls,
        cp: &OKEControlPlane,
        infra: &Infra,
        name: &str,
        cluster: &ClusterRef<'_>,
    ) -> Result<Option<String>, ProviderError> {
        if let Some(id) = cp.status.as_ref().and_then(|s| s.common.cloud_id.clone()) {
            return Ok(Some(id));
        }
        let owner = scope::owner(&cp.namespace().unwrap_or_default(), &cluster.name());
        let listed = oci
            .list(
                calls,
                "ListClusters",
                Service::ContainerEngine,
                &format!(
                    "/clusters?compartmentId={}&name={}",
                    q(&infra.compartment),
                    q(name)
                ),
            )
            .await?;
        Ok(listed
            .iter()
            .find(|c| c["lifecycleState"] != "DELETED" && owner.owns(&tags_of(c)))
            .and_then(|c| c["id"].as_str().map(String::from)))
    }

    /// The pool: by the OCID recorded in the status, else by name in the cluster (ours first).
    async fn find(
        &self,
        scope: &PoolScope,
        name: &str,
    ) -> Result<Option<(Value, Seen)>, ProviderError> {
        let named = Named {
            get: "GetNodePool",
            list: "ListNodePools",
            collection: "/nodePools",
            filter: format!(
                "compartmentId={}&clusterId={}&name={}",
                q(&scope.infra.compartment),
                q(&scope.cluster_id),
                q(name)
            ),
            name,
            recorded: scope.recorded.as_deref(),
        };
        find_named(&scope.oci, &scope.calls, &named, &scope.owner).await
    }

    /// The pool as this pass's look saw it (the kernel looks before it changes anything).
    fn seen<'s>(&self, scope: &'s PoolScope, name: &str) -> Result<&'s Seen, ProviderError> {
        scope
            .seen
            .get()
            .ok_or_else(|| CloudError::NotFound(format!("node pool {name} is gone")).into())
    }

    /// What OKE offers node pools of the cluster (versions, images).
    async fn options(&self, scope: &PoolScope) -> Result<Value, ProviderError> {
        let path = format!(
            "/nodePoolOptions/{}?compartmentId={}",
            scope.cluster_id,
            q(&scope.infra.compartment)
        );
        let (options, _) = scope
            .oci
            .get(
                &scope.calls,
                "GetNodePoolOptions",
                Service::ContainerEngine,
                &path,
            )
            .await?
            .ok_or_else(|| CloudError::NotFound("OKE's node pool options".into()))?;
        Ok(options)
    }

    /// UpdateNodePool of the pool seen this pass (its ETag as `if-match`); the work request.
    async fn change(
        &self,
        scope: &PoolScope,
        seen: &Seen,
        path: &str,
        body: &Value,
    ) -> Result<String, ProviderError> {
        let request = Call::send(
            "UpdateNodePool",
            Service::ContainerEngine,
            &Method::PUT,
            path,
            Some(body),
        )
        .if_match(seen.etag.as_deref());
        let answer = scope.oci.call(&scope.calls, request).await?;
        Ok(answer.work_request.unwrap_or_default())
    }

    /// The exact version OKE offers node pools of the cluster for `want`.
    fn version_in(
        &self,
        scope: &PoolScope,
        options: &Value,
        want: &KubeVersion,
    ) -> Result<String, ProviderError> {
        offered_version(options, want).map_err(|offered| {
            invalid(format!(
                "OKE offers node pools of cluster {} no version {want}; it offers {offered}",
                scope.cluster,
            ))
        })
    }
}

/// The newest Oracle Linux platform image in `options` for the shape's processors (pure).
fn platform_image(options: &Value, shape: &str) -> Result<String, ProviderError> {
    let arm = shape.contains(".A1.") || shape.contains(".A2.");
    let mut platform: Vec<(&str, &str)> = options["sources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| Some((s["sourceName"].as_str()?, s["imageId"].as_str()?)))
        .filter(|(n, _)| {
            n.starts_with("Oracle-Linux-")
                && !n.contains("OKE")
                && !n.contains("GPU")
                && n.contains("aarch64") == arm
        })
        .collect();
    platform.sort();
    platform
            .last()
            .map(|(_, id)| (*id).to_string())
        .ok_or_else(|| {
            invalid(format!(
                "OKE offers no Oracle Linux platform image for {shape}; set spec.image to an image OCID"
            ))
        })
}

impl MachinePoolCloud for OkeMachinePool {
    type Object = OKEMachinePool;
    type Spec = PoolShape;
    type Scope = PoolScope;
    type Detail = PoolView;
    type Change = PoolChange;
    type Status = OKEMachinePoolStatus;

    fn profile(&self) -> MachinePoolProfile {
        MachinePoolProfile {
            cloud: "OKE",
            noun: "node pool",
            replicas_manager: REPLICAS_MANAGER,
            token_limits: &OCI_RETRY_TOKEN,
            poll: self.shared.poll_interval,
            rest: self.shared.rest_interval,
        }
    }

    fn validate(&self, obj: &OKEMachinePool) -> Result<PoolShape, ProviderError> {
        pool_shape(obj).map_err(invalid)
    }

    fn name(&self, obj: &OKEMachinePool) -> Result<String, ProviderError> {
        pool_name(obj)
    }

    async fn locate(
        &self,
        obj: &OKEMachinePool,
        cluster: ClusterRef<'_>,
        client: &kube::Client,
        calls: &CloudCalls,
        require_initialized: bool,
    ) -> Result<Located<PoolScope>, ProviderError> {
        let namespace = obj.namespace().unwrap_or_default();
        let place = match cluster_objects::pool_place::<OKEControlPlane, OKECluster, _, Infra>(
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
        let mut infra = place.infra;
        let oci = scope::oci_for(&self.shared, client, &namespace, &infra).await?;
        if infra.availability_domains.is_empty() {
            infra.availability_domains = self
                .shared
                .availability_domains(&oci, calls, &infra.compartment)
                .await?;
        }
        let name = scope::oke_cluster_name(&cp, &cluster.name());
        let Some(cluster_id) = self
            .cluster_id(&oci, calls, &cp, &infra, &name, &cluster)
            .await?
        else {
            return Ok(Located::NotYet(format!(
                "waiting for the OKE cluster {name} to exist"
            )));
        };
        Ok(Located::Found(PoolScope {
            oci,
            calls: calls.clone(),
            infra,
            cluster: name,
            cluster_id,
            cni: cp.spec.oke.cni_type,
            control_plane_version,
            nodes: OnceLock::new(),
            seen: OnceLock::new(),
            recorded: obj.cloud_id().map(String::from),
            owner: scope::owner(&namespace, &cluster.name()),
        }))
    }

    fn control_plane_version(&self, scope: &PoolScope) -> Option<KubeVersion> {
        scope.control_plane_version
    }

    fn additional_tags<'s>(&self, scope: &'s PoolScope) -> &'s BTreeMap<String, String> {
        &scope.infra.additional_tags
    }

    fn place(&self, scope: &PoolScope, name: &str) -> String {
        format!("{name} (in OKE cluster {})", scope.cluster)
    }

    async fn describe(
        &self,
        scope: &PoolScope,
        name: &str,
    ) -> Result<Option<ManagedPool<PoolView>>, ProviderError> {
        let Some((p, seen)) = self.find(scope, name).await? else {
            return Ok(None);
        };
        let state = p["lifecycleState"]
            .as_str()
            .unwrap_or("UNKNOWN")
            .to_string();
        let nodes = p["nodes"].as_array().cloned().unwrap_or_default();
        let _ = scope.nodes.set(
            nodes
                .iter()
                .filter_map(|n| {
                    let life = match n["lifecycleState"].as_str() {
                        Some("DELETED") => InstanceLife::Gone,
                        _ => InstanceLife::Present,
                    };
                    Some((n["id"].as_str()?.to_string(), life))
                })
                .collect(),
        );
        let mut issues: Vec<String> = nodes
            .iter()
            .filter_map(|n| {
                let e = &n["nodeError"];
                let message = e["message"].as_str()?;
                Some(format!(
                    "node {}: {}: {message}",
                    n["name"].as_str().unwrap_or_default(),
                    e["code"].as_str().unwrap_or("error")
                ))
            })
            .collect();
        if matches!(state.as_str(), "FAILED" | "NEEDS_ATTENTION") && issues.is_empty() {
            issues.push(format!(
                "node pool {name} is {state}: {}",
                p["lifecycleDetails"]
                    .as_str()
                    .filter(|d| !d.is_empty())
                    .unwrap_or("no details given")
            ));
        }
        let detail = view(&p);
        let (id, tags) = (seen.id.clone(), seen.tags.clone());
        let _ = scope.seen.set(seen);
        Ok(Some(ManagedPool {
            id,
            lifecycle: lifecycle(&state),
            issues,
            state,
            version: p["kubernetesVersion"]
                .as_str()
                .map(String::from)
                .filter(|v| !v.is_empty()),
            tags,
            desired_size: detail.size,
            detail,
        }))
    }

    async fn operation_state(
        &self,
        scope: &PoolScope,
        _name: &str,
        operation: &Operation,
    ) -> Result<Option<OperationState>, ProviderError> {
        scope
            .oci
            .work_request_state(&scope.calls, &operation.id)
            .await
    }

    async fn provider_ids(
        &self,
        scope: &PoolScope,
        name: &str,
    ) -> Result<Vec<String>, ProviderError> {
        if scope.nodes.get().is_none() {
            self.describe(scope, name).await?;
        }
        let nodes = scope.nodes.get().cloned().unwrap_or_default();
        Ok(provider_id_list(
            nodes.iter().map(|(id, life)| (id.as_str(), *life)),
        ))
    }

    fn diff(
        &self,
        call: &PoolCall<'_, OKEMachinePool, PoolShape>,
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
            PoolChange::Size(n) => format!("scaling to {n} nodes"),
            PoolChange::Settings { .. } => "updating labels, shape or node cycling".into(),
        }
    }

    async fn create(
        &self,
        scope: &PoolScope,
        call: &PoolCall<'_, OKEMachinePool, PoolShape>,
        version: Option<&KubeVersion>,
    ) -> Result<Creation<PoolView>, ProviderError> {
        let domains = pool_domains(call.machine_pool, &scope.infra).map_err(invalid)?;
        let shape = call.spec;
        let subnet = shape
            .subnet
            .clone()
            .or_else(|| scope.infra.node_subnets.first().cloned())
            .ok_or_else(|| {
                invalid("no subnet for the nodes: set spec.subnetIDs, or use an OKECluster")
            })?;
        let want = version
            .copied()
            .or(scope.control_plane_version)
            .ok_or_else(|| {
                invalid(
                    "no Kubernetes version for the node pool: the control plane reports none yet",
                )
            })?;
        let options = self.options(scope).await?;
        let exact = self.version_in(scope, &options, &want)?;
        let image = match &shape.image {
            Some(i) => i.clone(),
            None => platform_image(&options, &shape.shape)?,
        };
        let placements: Vec<Value> = domains
            .iter()
            .map(|ad| {
                let mut p = json!({ "availabilityDomain": ad, "subnetId": subnet });
                if shape.spot {
                    p["preemptibleNodeConfig"] = json!({ "preemptionAction": { "type": "TERMINATE", "isPreserveBootVolume": false } });
                }
                p
            })
            .collect();
        let pod_network = match scope.cni {
            CniType::VcnNative => {
                let mut d = json!({ "cniType": "OCI_VCN_IP_NATIVE", "podSubnetIds": [subnet] });
                if let Some(m) = shape.max_pods {
                    d["maxPodsPerNode"] = json!(m);
                }
                d
            }
            CniType::Flannel => json!({ "cniType": "FLANNEL_OVERLAY" }),
        };
        let mut body = json!({
            "compartmentId": scope.infra.compartment,
            "clusterId": scope.cluster_id,
            "name": call.name,
            "kubernetesVersion": exact,
            "nodeShape": shape.shape,
            "nodeSourceDetails": { "sourceType": "IMAGE", "imageId": image },
            "initialNodeLabels": label_list(&shape.labels),
            "nodeConfigDetails": {
                "size": call.scaling.initial_count(),
                "placementConfigs": placements,
                "freeformTags": call.request.tags,
                "nodePoolPodNetworkOptionDetails": pod_network,
            },
            "freeformTags": call.request.tags,
            "nodePoolCyclingDetails": cycling_body(&shape.cycling),
        });
        if let Some(f) = shape.flex {
            body["nodeShapeConfig"] = shape_config(f);
        }
        if let Some(gb) = shape.boot_volume_gb {
            body["nodeSourceDetails"]["bootVolumeSizeInGBs"] = json!(gb);
        }
        if let Some(k) = &shape.ssh_key {
            body["sshPublicKey"] = json!(k);
        }
        let patch = contract::overrides::effective(call.obj.spec.oke.request_overrides.as_ref());
        if let Some(patch) = patch {
            body = super::overridden(&body, patch)?;
        }
        let token = call.request.create_token("CreateNodePool");
        let request = Call::send(
            "CreateNodePool",
            Service::ContainerEngine,
            &Method::POST,
            "/nodePools",
            Some(&body),
        )
        .retry_token(&token);
        match scope.oci.call(&scope.calls, request).await {
            Ok(answer) => Ok(Creation::Started(Box::new(PoolCreated {
                id: answer.work_request.unwrap_or_default(),
                overrides: patch.map(|_| call.request.overrides_applied("CreateNodePool")),
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
        let Some(seen) = scope.seen.get().filter(|s| s.id == id) else {
            return Err(CloudError::NotFound(format!("node pool {id} is gone")).into());
        };
        let mut merged = seen.tags.clone();
        merged.extend(tags.clone());
        let path = format!("/nodePools/{id}");
        let body = json!({ "freeformTags": merged });
        self.change(scope, seen, &path, &body).await?;
        Ok(())
    }

    async fn upgrade(
        &self,
        scope: &PoolScope,
        name: &str,
        to: &KubeVersion,
    ) -> Result<String, ProviderError> {
        let seen = self.seen(scope, name)?;
        let options = self.options(scope).await?;
        let exact = self.version_in(scope, &options, to)?;
        let path = format!("/nodePools/{}", seen.id);
        self.change(scope, seen, &path, &json!({ "kubernetesVersion": exact }))
            .await
    }

    async fn update(
        &self,
        scope: &PoolScope,
        name: &str,
        change: &PoolChange,
    ) -> Result<String, ProviderError> {
        let seen = self.seen(scope, name)?;
        let path = format!("/nodePools/{}", seen.id);
        self.change(scope, seen, &path, &update_body(change)).await
    }

    async fn delete(&self, scope: &PoolScope, name: &str) -> Result<Deletion, ProviderError> {
        let Ok(seen) = self.seen(scope, name) else {
            return Ok(Deletion::Gone);
        };
        let path = format!("/nodePools/{}", seen.id);
        super::delete(&scope.oci, &scope.calls, "DeleteNodePool", &path).await
    }

    fn status(
        &self,
        common: MachinePoolStatusCommon,
        request_overrides: Option<RequestOverridesStatus>,
        pool: Option<&ManagedPool<PoolView>>,
        name: &str,
    ) -> OKEMachinePoolStatus {
        OKEMachinePoolStatus {
            common,
            observed_generation: None,
            node_pool_name: Some(name.to_string()),
            node_pool_id: pool.map(|p| p.id.clone()).filter(|id| !id.is_empty()),
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
            shape: "VM.Standard.E4.Flex".into(),
            flex: Some((1, 16)),
            boot_volume_gb: None,
            image: None,
            labels: BTreeMap::new(),
            spot: false,
            cycling: ("1".into(), "0".into()),
            subnet: None,
            max_pods: None,
            ssh_key: None,
        }
    }

    fn at(size: i32) -> PoolView {
        PoolView {
            size: Some(size),
            shape: "VM.Standard.E4.Flex".into(),
            flex: Some((1, 16)),
            cycling: Some(("1".into(), "0".into())),
            ..PoolView::default()
        }
    }

    #[test]
    fn the_size_comes_first_and_an_autoscaled_size_is_only_kept_within_bounds() {
        let fixed = |replicas| ScalingIntent::Fixed { replicas };
        assert_eq!(
            pool_change(&at(1), &shape(), fixed(3)),
            Some(PoolChange::Size(3))
        );
        assert_eq!(pool_change(&at(3), &shape(), fixed(3)), None);
        let auto = ScalingIntent::Autoscaled {
            min: 2,
            max: 4,
            initial: 2,
        };
        assert_eq!(pool_change(&at(3), &shape(), auto), None);
        assert_eq!(
            pool_change(&at(6), &shape(), auto),
            Some(PoolChange::Size(4))
        );
        assert_eq!(
            pool_change(&at(1), &shape(), auto),
            Some(PoolChange::Size(2))
        );
        let mut labelled = shape();
        labelled.labels.insert("team".into(), "a".into());
        assert!(matches!(
            pool_change(&at(3), &labelled, fixed(3)),
            Some(PoolChange::Settings {
                labels: Some(_),
                shape: None,
                cycling: None
            })
        ));
    }

    #[test]
    fn an_update_sends_only_what_differs() {
        let body = update_body(&PoolChange::Size(4));
        assert_eq!(body, json!({ "nodeConfigDetails": { "size": 4 } }));
        let body = update_body(&PoolChange::Settings {
            labels: None,
            shape: Some(("VM.Standard.E4.Flex".into(), Some((2, 32)))),
            cycling: None,
        });
        assert_eq!(
            body["nodeShapeConfig"],
            json!({ "ocpus": 2, "memoryInGBs": 32 })
        );
        assert!(body["initialNodeLabels"].is_null());
    }

    #[test]
    fn the_default_image_is_the_newest_oracle_linux_of_the_shape_s_processors() {
        let source = |name: &str, id: &str| json!({ "sourceType": "IMAGE", "sourceName": name, "imageId": id });
        let options = json!({ "sources": [
            source("Oracle-Linux-8.10-2025.01.01-0", "x86-old"),
            source("Oracle-Linux-8.10-2025.06.01-0", "x86-new"),
            source("Oracle-Linux-8.10-Gen2-GPU-2025.09.01-0", "gpu"),
            source("Oracle-Linux-8.10-2025.09.01-0-OKE-1.32.1", "oke"),
            source("Oracle-Linux-8.10-aarch64-2025.06.01-0", "arm"),
        ]});
        assert_eq!(
            platform_image(&options, "VM.Standard.E4.Flex").unwrap(),
            "x86-new"
        );
        assert_eq!(
            platform_image(&options, "VM.Standard.A1.Flex").unwrap(),
            "arm"
        );
        let none = platform_image(&json!({ "sources": [] }), "VM.Standard.E4.Flex").unwrap_err();
        assert!(none.to_string().contains("spec.image"), "{none}");
    }

    #[test]
    fn states_map_to_the_shared_lifecycle() {
        assert_eq!(lifecycle("NEEDS_ATTENTION"), Lifecycle::Degraded);
        assert_eq!(lifecycle("ACTIVE"), Lifecycle::Running);
        assert_eq!(lifecycle("INACTIVE"), Lifecycle::Other("INACTIVE".into()));
    }
}
