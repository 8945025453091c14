use contract::api::ClusterSpecCommon;

/// Where the cluster's OCI resources live: compartment, region, availability domains, the
/// network (created from a CIDR or brought by OCID), credentials and tags. Never sets a
/// control-plane endpoint: the OKEControlPlane owns it.
///
/// The network is either brought (`network.id`: the VCN's OCID; `network.subnetIDs`: the nodes'
/// subnets; `oke.endpointSubnetID`: the API endpoint's subnet, default the first of
/// `subnetIDs`; the provider only reads them) or created (`network.cidrBlock`, default
/// 10.0.0.0/16) the way OKE's own quick create lays it out: a VCN with an internet gateway, a
/// NAT gateway and a service gateway, a public and a private route table, security lists for the
/// endpoint and the nodes, a public endpoint subnet, a public load-balancer subnet and a private
/// node subnet, every one tagged as this cluster's and deleted with it.
#[provider_runtime::kind(column("Region", "string", ".spec.region"))]
#[derive(Default)]
pub struct OKEClusterSpec {
    /// Region (`spec.region`, e.g. us-ashburn-1), network, identity and tags, as on every cloud.
    #[serde(flatten)]
    pub common: ClusterSpecCommon,
    /// What only OKE has.
    pub oke: OKEClusterOptions,
}

/// OKE-only infrastructure options.
#[provider_runtime::block]
pub struct OKEClusterOptions {
    /// The compartment everything is created in (its OCID). Immutable.
    #[serde(rename = "compartmentID")]
    #[schemars(length(min = 1, max = 255))]
    #[x_kube(validation = Rule::new("self.startsWith('ocid1.compartment.') || self.startsWith('ocid1.tenancy.')").message("spec.oke.compartmentID must be a compartment OCID (ocid1.compartment.oc1..…) or the tenancy's (its root compartment)"))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("spec.oke.compartmentID is immutable"))]
    pub compartment_id: String,
    /// The availability domains nodes may run in (the failure domains), e.g.
    /// `Uocm:US-ASHBURN-AD-1`. Default: every availability domain of the region. Immutable.
    #[schemars(length(max = 3), inner(length(min = 1, max = 64)))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("spec.oke.availabilityDomains is immutable"))]
    pub availability_domains: Vec<String>,
    /// With a brought network: the subnet of the Kubernetes API endpoint (its OCID). Default: the
    /// first of spec.network.subnetIDs. Immutable.
    #[serde(
        default,
        rename = "endpointSubnetID",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(length(min = 1, max = 255))]
    #[x_kube(validation = Rule::new("self.startsWith('ocid1.subnet.')").message("spec.oke.endpointSubnetID must be a subnet OCID (ocid1.subnet.oc1.<region>.…)"))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("spec.oke.endpointSubnetID is immutable"))]
    pub endpoint_subnet_id: Option<String>,
    /// With a brought network: the subnets of the cluster's Service load balancers. Immutable.
    #[serde(
        default,
        rename = "serviceLBSubnetIDs",
        skip_serializing_if = "Vec::is_empty"
    )]
    #[schemars(length(max = 2), inner(length(min = 1, max = 255)))]
    #[x_kube(validation = Rule::new("self.all(s, s.startsWith('ocid1.subnet.'))").message("spec.oke.serviceLBSubnetIDs must hold subnet OCIDs"))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("spec.oke.serviceLBSubnetIDs is immutable"))]
    pub service_lb_subnet_ids: Vec<String>,
}

/// What only OKE reports of the network: the role of each subnet.
#[provider_runtime::block]
pub struct OKEClusterObserved {
    /// The API endpoint's subnet.
    #[serde(
        default,
        rename = "endpointSubnetID",
        skip_serializing_if = "Option::is_none"
    )]
    pub endpoint_subnet_id: Option<String>,
    /// The nodes' subnets.
    #[serde(
        default,
        rename = "nodeSubnetIDs",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub node_subnet_ids: Vec<String>,
    /// The Service load balancers' subnets.
    #[serde(
        default,
        rename = "serviceLBSubnetIDs",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub service_lb_subnet_ids: Vec<String>,
}
