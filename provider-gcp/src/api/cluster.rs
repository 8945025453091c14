use contract::api::ClusterSpecCommon;

/// Where the cluster's Google Cloud resources live: project, region, network (created from a
/// CIDR or brought by name), credentials and labels. Never sets a control-plane endpoint: the
/// GKEControlPlane owns it.
///
/// The network is either brought (`network.id`: a VPC network name or self link, and
/// `network.subnetIDs`: one subnetwork of the region with secondary ranges for Pods and
/// Services, named by `gke.podsRange` and `gke.servicesRange`; the provider only reads them) or
/// created (`network.cidrBlock`, default 10.0.0.0/20 for the nodes): a custom-mode VPC network,
/// one subnetwork with a Pods and a Services range, and a Cloud Router with Cloud NAT so private
/// nodes reach the internet, all labelled or named as this cluster's and deleted with it.
#[provider_runtime::kind(
    column("Project", "string", ".spec.gke.project"),
    column("Region", "string", ".spec.region")
)]
#[derive(Default)]
pub struct GKEClusterSpec {
    /// Region, network, identity and labels, as on every cloud.
    #[serde(flatten)]
    pub common: ClusterSpecCommon,
    /// What only GKE has.
    pub gke: GKEClusterOptions,
}

/// GKE-only infrastructure options.
#[provider_runtime::block]
pub struct GKEClusterOptions {
    /// The Google Cloud project (its id, e.g. my-project-123456). Immutable.
    #[schemars(length(min = 6, max = 30))]
    #[x_kube(validation = Rule::new("self.matches('^[a-z][a-z0-9-]{4,28}[a-z0-9]$')").message("spec.gke.project must be a Google Cloud project id: 6 to 30 lowercase letters, digits and hyphens, starting with a letter"))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("spec.gke.project is immutable"))]
    pub project: String,
    /// The zones nodes may run in (the failure domains), e.g. [us-central1-a, us-central1-b].
    /// Default: the region's zones a, b and c. Immutable.
    #[schemars(length(max = 8), inner(length(min = 3, max = 64)))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("spec.gke.zones is immutable"))]
    pub zones: Vec<String>,
    /// The subnetwork's secondary range for Pods: its name in a brought subnetwork (default
    /// `pods`), or its CIDR in a created one (default 10.4.0.0/14).
    #[schemars(length(min = 1, max = 63))]
    pub pods_range: Option<String>,
    /// The subnetwork's secondary range for Services: its name in a brought subnetwork (default
    /// `services`), or its CIDR in a created one (default 10.8.0.0/20).
    #[schemars(length(min = 1, max = 63))]
    pub services_range: Option<String>,
}

/// What only GKE reports of the network: the secondary ranges and the Cloud Router.
#[provider_runtime::block]
pub struct GKEClusterObserved {
    /// The subnetwork's secondary range for Pods.
    pub pods_range_name: Option<String>,
    /// The subnetwork's secondary range for Services.
    pub services_range_name: Option<String>,
    /// The Cloud Router carrying the NAT of a created network.
    pub router: Option<String>,
}
