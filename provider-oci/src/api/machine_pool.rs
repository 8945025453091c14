use contract::api::MachinePoolSpecCommon;

/// One OKE managed node pool. Count, version and availability domains come from the owning
/// MachinePool (its failure domains are availability domains, e.g. `Uocm:US-ASHBURN-AD-1`;
/// default every one of the cluster's). `machineType` is the node shape; a flexible shape
/// (`VM.Standard.E4.Flex`) takes `oke.ocpus` and `oke.memoryGB`.
#[provider_runtime::kind]
#[x_kube(
    validation = Rule::new("!has(self.taints) || size(self.taints) == 0")
        .message("spec.taints is not supported on OKE: OKE managed node pools have no taints API (only initial node labels); taint the nodes from inside the cluster, or use labels"),
    validation = Rule::new("!has(self.subnetIDs) || self.subnetIDs.all(s, s.startsWith('ocid1.subnet.'))")
        .message("spec.subnetIDs must hold subnet OCIDs on OKE (ocid1.subnet.oc1.<region>.…)"),
    validation = Rule::new("!has(self.subnetIDs) || size(self.subnetIDs) <= 1")
        .message("spec.subnetIDs takes one subnet on OKE (the nodes' subnet of every placement)"),
    validation = Rule::new("!has(self.diskSizeGB) || (self.diskSizeGB >= 50 && self.diskSizeGB <= 32768)")
        .message("spec.diskSizeGB must be from 50 to 32768 on OKE (the boot volume)"),
    validation = Rule::new("!has(self.image) || self.image.startsWith('ocid1.image.')")
        .message("spec.image must be an image OCID on OKE (ocid1.image.oc1.<region>.…); leave it empty for the newest Oracle Linux platform image"),
    validation = Rule::new("!self.machineType.endsWith('.Flex') || (has(self.oke) && has(self.oke.ocpus))")
        .message("spec.oke.ocpus is required for a flexible shape (spec.machineType ending in .Flex) on OKE"),
    validation = Rule::new("self.machineType.endsWith('.Flex') || !has(self.oke) || (!has(self.oke.ocpus) && !has(self.oke.memoryGB))")
        .message("spec.oke.ocpus and spec.oke.memoryGB are only for flexible shapes (spec.machineType ending in .Flex) on OKE"),
    validation = Rule::new("(has(self.spot) && self.spot) == (has(oldSelf.spot) && oldSelf.spot)")
        .message("spec.spot is immutable on OKE node pools (preemptible capacity); create a new OKEMachinePool instead"),
    validation = Rule::new("!has(self.update) || !has(self.update.maxSurge) || type(self.update.maxSurge) == int || self.update.maxSurge.matches('^[0-9]+%$')")
        .message("spec.update.maxSurge must be a number of nodes or a percentage such as 25% on OKE"),
    validation = Rule::new("!has(self.update) || !has(self.update.maxUnavailable) || type(self.update.maxUnavailable) == int || self.update.maxUnavailable.matches('^[0-9]+%$')")
        .message("spec.update.maxUnavailable must be a number of nodes or a percentage on OKE"),
    validation = contract::naming::OKE_NODE_POOL.cel_validation("cloudName", "spec.cloudName"),
)]
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
