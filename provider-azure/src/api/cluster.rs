use contract::api::ClusterSpecCommon;

/// Where the cluster's Azure resources live: subscription, resource group, location, network
/// (created from a CIDR or brought by id), credentials and tags. Never sets a control-plane
/// endpoint: the AKSControlPlane owns it.
///
/// The resource group (`aks.resourceGroup`) is used as it is when it exists, and created (tagged
/// as this cluster's, and deleted with it) when it does not. The network is either brought
/// (`network.subnetIDs`: one subnet's ARM id, `network.id` its virtual network's; the provider
/// only reads them) or created (`network.cidrBlock`, default 10.224.0.0/12): a virtual network
/// with one subnet for the nodes, tagged as this cluster's and deleted with it.
#[provider_runtime::kind(
    column("ResourceGroup", "string", ".spec.aks.resourceGroup"),
    column("Location", "string", ".spec.region")
)]
#[derive(Default)]
pub struct AKSClusterSpec {
    /// Location (`spec.region`, e.g. eastus), network, identity and tags, as on every cloud.
    #[serde(flatten)]
    pub common: ClusterSpecCommon,
    /// What only AKS has.
    pub aks: AKSClusterOptions,
}

/// AKS-only infrastructure options.
#[provider_runtime::block]
pub struct AKSClusterOptions {
    /// The Azure subscription (its GUID). Immutable.
    #[serde(rename = "subscriptionID")]
    #[schemars(length(min = 36, max = 36))]
    #[x_kube(validation = Rule::new("self.matches('^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$')").message("spec.aks.subscriptionID must be an Azure subscription id (a GUID such as 00000000-0000-0000-0000-000000000000)"))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("spec.aks.subscriptionID is immutable"))]
    pub subscription_id: String,
    /// The resource group of the managed cluster and the network: used when it exists, created
    /// (and deleted with the cluster) when it does not. Default, with a brought network: the
    /// subnet's resource group. Immutable.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = 90))]
    #[x_kube(validation = Rule::new("self.matches('^[-\\\\w._()]*[-\\\\w_()]$')").message("spec.aks.resourceGroup must be 1 to 90 letters, digits, '-', '_', '.', '(' or ')', not ending in '.'"))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("spec.aks.resourceGroup is immutable"))]
    pub resource_group: String,
    /// The availability zones nodes may run in (the failure domains), among "1", "2" and
    /// "3". Default all three. Immutable.
    #[schemars(length(max = 3))]
    #[x_kube(validation = Rule::new("self.all(z, z in ['1', '2', '3'])").message("spec.aks.zones are Azure availability zones: \"1\", \"2\" or \"3\""))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("spec.aks.zones is immutable"))]
    pub zones: Vec<String>,
}

/// What only AKS reports of the network: the resource group.
#[provider_runtime::block]
pub struct AKSClusterObserved {
    /// The resource group of the cluster and the network.
    pub resource_group: Option<String>,
    /// Whether the provider created the resource group (and so deletes it).
    #[serde(default)]
    pub resource_group_managed: bool,
}
