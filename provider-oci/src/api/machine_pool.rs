use contract::api::MachinePoolSpecCommon;

/// One OKE managed node pool. Count, version and availability domains come from the owning
/// MachinePool (its failure domains are availability domains, e.g. `Uocm:US-ASHBURN-AD-1`;
/// default every one of the cluster's). `machineType` is the node shape; a flexible shape
/// (`VM.Standard.E4.Flex`) takes `oke.ocpus` and `oke.memoryGB`.
#[provider_runtime::kind]
#[x_kube(validation = contract::naming::OKE_NODE_POOL.cel_validation("cloudName", "spec.cloudName"))]
pub struct OKEMachinePoolSpec {
    /// Shape, boot volume, image, labels, scaling, spot, update, as on every cloud.
    #[serde(flatten)]
    pub common: MachinePoolSpecCommon,
    /// What only OKE has.
    #[serde(default)]
    pub oke: OKEMachinePoolOptions,
}

/// OKE-only node-pool options.
#[provider_runtime::block]
pub struct OKEMachinePoolOptions {
    /// OCPUs per node of a flexible shape.
    #[schemars(range(min = 1, max = 128))]
    pub ocpus: Option<i32>,
    /// Memory per node of a flexible shape, GB (default as OCI: 16 per OCPU).
    #[serde(default, rename = "memoryGB", skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 2048))]
    pub memory_gb: Option<i32>,
    /// Pods per node with VCN-native pod networking (OKE default 31). Immutable.
    #[schemars(range(min = 1, max = 110))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("spec.oke.maxPodsPerNode is immutable on OKE"))]
    pub max_pods_per_node: Option<i32>,
    /// An SSH public key put on every node.
    #[schemars(length(min = 1, max = 16384))]
    pub ssh_public_key: Option<String>,
    /// A JSON merge patch applied to the body of the CreateNodePool request. The user's
    /// responsibility; fields the provider manages win.
    #[schemars(schema_with = "contract::crd::free_form_object")]
    pub request_overrides: Option<serde_json::Value>,
}
