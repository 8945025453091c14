use contract::api::MachinePoolSpecCommon;

/// One GKE node pool. Count, version and zones come from the owning MachinePool: GKE sizes a
/// pool per zone, so `MachinePool.spec.replicas` (and spec.scaling's bounds) must divide evenly
/// over the pool's zones (MachinePool.spec.failureDomains, default the first zone of the
/// GKECluster).
#[provider_runtime::kind]
#[x_kube(
    validation = Rule::new("!has(self.subnetIDs) || size(self.subnetIDs) == 0")
        .message("spec.subnetIDs is not supported on GKE: a node pool's nodes live in the cluster's subnetwork"),
    validation = Rule::new("!has(self.update) || !has(self.update.maxSurge) || type(self.update.maxSurge) == int")
        .message("spec.update.maxSurge must be a number of nodes on GKE, not a percentage"),
    validation = Rule::new("!has(self.update) || !has(self.update.maxUnavailable) || type(self.update.maxUnavailable) == int")
        .message("spec.update.maxUnavailable must be a number of nodes on GKE, not a percentage"),
    validation = Rule::new("!has(self.update) || (has(self.update.maxSurge) && self.update.maxSurge != 0) || (has(self.update.maxUnavailable) && self.update.maxUnavailable != 0) || (!has(self.update.maxSurge) && !has(self.update.maxUnavailable))")
        .message("spec.update.maxSurge and spec.update.maxUnavailable cannot both be 0 on GKE"),
    validation = Rule::new("(has(self.spot) && self.spot) == (has(oldSelf.spot) && oldSelf.spot)")
        .message("spec.spot is immutable on GKE; create a new GKEMachinePool instead"),
    validation = Rule::new("has(self.diskSizeGB) == has(oldSelf.diskSizeGB) && (!has(self.diskSizeGB) || self.diskSizeGB == oldSelf.diskSizeGB)")
        .message("spec.diskSizeGB is immutable on GKE node pools here; create a new GKEMachinePool instead"),
    validation = Rule::new("!has(self.diskSizeGB) || self.diskSizeGB >= 10")
        .message("spec.diskSizeGB must be at least 10 on GKE"),
    validation = Rule::new("self.machineType == oldSelf.machineType")
        .message("spec.machineType is immutable on GKE node pools here; create a new GKEMachinePool instead"),
    validation = Rule::new("!has(self.image) || self.image in ['COS_CONTAINERD', 'UBUNTU_CONTAINERD']")
        .message("spec.image is the GKE node image type on GKE: COS_CONTAINERD or UBUNTU_CONTAINERD"),
    validation = contract::naming::GKE_NODE_POOL.cel_validation("cloudName", "spec.cloudName"),
)]
pub struct GKEMachinePoolSpec {
    /// Machine type, disk, image, labels, taints, scaling, spot, update, as on every cloud.
    #[serde(flatten)]
    pub common: MachinePoolSpecCommon,
    /// What only GKE has.
    #[serde(default)]
    pub gke: GKEMachinePoolOptions,
}

/// GKE-only node-pool options.
#[provider_runtime::block]
pub struct GKEMachinePoolOptions {
    /// The service account the nodes run as (an email); default the project's Compute Engine
    /// default service account. Immutable.
    #[schemars(length(min = 3, max = 254))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("spec.gke.serviceAccount is immutable on GKE"))]
    pub service_account: Option<String>,
    /// Let GKE repair unhealthy nodes. Default true.
    pub auto_repair: Option<bool>,
    /// A JSON merge patch applied to the NodePool body of GKE CreateNodePool requests. The
    /// user's responsibility; fields the provider manages win.
    #[schemars(schema_with = "contract::crd::free_form_object")]
    pub request_overrides: Option<serde_json::Value>,
}

/// What GKE reports of a node pool beyond the shared status.
#[provider_runtime::block]
pub struct GKEMachinePoolObserved {
    /// The node pool's instance groups, one per zone.
    pub instance_groups: Vec<String>,
}
