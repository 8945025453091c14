use contract::api::MachinePoolSpecCommon;

/// One GKE node pool. Count, version and zones come from the owning MachinePool: GKE sizes a
/// pool per zone, so `MachinePool.spec.replicas` (and spec.scaling's bounds) must divide evenly
/// over the pool's zones (MachinePool.spec.failureDomains, default the first zone of the
/// GKECluster).
#[provider_runtime::kind]
#[x_kube(validation = contract::naming::GKE_NODE_POOL.cel_validation("cloudName", "spec.cloudName"))]
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
