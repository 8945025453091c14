//! The OKECluster on the generic InfraCluster reconciler ([`provider_runtime::infra_cluster`]):
//! the cluster's compartment, region, availability domains and network.
//!
//! What is OKE's here:
//! - **validate** ([`network_mode`], pure): a brought network (a VCN and its subnets, by OCID) or
//!   a created one (the VCN's block, default 10.0.0.0/16: the endpoint subnet is its first
//!   quarter, the load balancers' its second, the nodes' its second half);
//! - **brought network**: reads of the VCN and its subnets, nothing written, ever;
//! - **created network**: seven services walked forwards, as OKE's quick create lays a network
//!   out: the VCN, an internet gateway, a NAT gateway, a service gateway to the Oracle Services
//!   Network, a public and a private route table, security lists for the endpoint and the
//!   nodes, then the endpoint, load-balancer and node subnets; each created with an
//!   `opc-retry-token` and tagged as ours; deletion walks them backwards, deleting only what is
//!   ours.
//!
//! OCI names are not unique: each resource is found by its display name in the compartment (and
//! VCN), and only one tagged as ours is used. The shared status, `NetworkReady`, the deletion
//! policy and when to look again are the kernel's.

use std::sync::Arc;
use std::time::Duration;

use contract::api::{ClusterSpecCommon, InfraClusterStatusCommon};
use contract::cidr;
use contract::conditions::Reason;
use contract::idempotency::{self, OCI_RETRY_TOKEN};
use contract::naming::{self, NameLimits};
use contract::ownership::{Owner, Ownership};
use kube::ResourceExt;
use provider_runtime::CloudCalls;
use provider_runtime::infra_cluster::{
    InfraClusterCloud, InfraClusterReconciler, ManagedInfraCluster, NetworkMode, NetworkReport,
};
use provider_runtime::walker::{self, Builds, Progress, Removal, Service, TearsDown, Timing};
use provider_runtime::{Cleanup, CloudError, PassContext, ProviderError};
use reqwest::Method;
use serde_json::{Value, json};

use super::tags_of;
use crate::api::{OKECluster, OKEClusterSpec, OKEClusterStatus, OKENetworkStatus};
use crate::oci::{Call, Oci, Service as Api, q};
use crate::scope::{self, Infra, Shared};

/// The default block of a created VCN.
pub const DEFAULT_VCN_CIDR: &str = "10.0.0.0/16";

/// The longest pause after a write before the next look.
const SETTLE: Duration = Duration::from_secs(3);

/// Display names the provider derives (a suffix such as `-endpoint-sl` follows).
const BASE_NAME: NameLimits = NameLimits {
    what: "OCI display name",
    max_len: 200,
    punctuation: "-_",
    first: naming::FirstChar::Letter,
    must_end_alphanumeric: true,
    lowercase: false,
};

/// The OKECluster reconciler.
pub fn reconciler(shared: Arc<Shared>) -> InfraClusterReconciler<OkeInfraCluster> {
    InfraClusterReconciler::new(scope::PROVIDER, OkeInfraCluster { shared })
}

impl ManagedInfraCluster for OKECluster {
    fn spec_common(&self) -> &ClusterSpecCommon {
        &self.spec.common
    }

    fn status_common(&self) -> Option<&InfraClusterStatusCommon> {
        self.status.as_ref().map(|s| &s.common)
    }
}

/// OKE's network, for the generic InfraCluster reconciler.
pub struct OkeInfraCluster {
    shared: Arc<Shared>,
}

impl OkeInfraCluster {
    fn timing(&self) -> Timing {
        Timing {
            settle: self.shared.poll_interval.min(SETTLE),
            poll: self.shared.poll_interval,
        }
    }
}

/// A network to create: the VCN's block and its three subnets'.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreatedNetwork {
    /// The VCN's block.
    pub vcn: String,
    /// The API endpoint's subnet (public).
    pub endpoint: String,
    /// The Service load balancers' subnet (public).
    pub lb: String,
    /// The nodes' subnet (private).
    pub nodes: String,
}

/// Validates the network part of the spec (pure).
///
/// # Errors
/// A sentence naming the field.
pub fn network_mode(spec: &OKEClusterSpec) -> Result<NetworkMode<CreatedNetwork>, String> {
    let network = spec.common.network.clone().unwrap_or_default();
    if network.is_bring_your_own() {
        if network.id.is_none() {
            return Err(
                "spec.network.id must name the VCN (its OCID) of the brought subnets on OKE".into(),
            );
        }
        if network.subnet_ids.is_empty() {
            return Err(
                "spec.network.subnetIDs must name the nodes' subnets (their OCIDs) on OKE".into(),
            );
        }
        return Ok(NetworkMode::Brought);
    }
    let vcn = network
        .cidr_block
        .unwrap_or_else(|| DEFAULT_VCN_CIDR.into());
    let (base, prefix) = cidr::parse("spec.network.cidrBlock", &vcn, DEFAULT_VCN_CIDR)?;
    if !(16..=24).contains(&prefix) {
        return Err(format!(
            "spec.network.cidrBlock {vcn} must be from /16 to /24 on OKE"
        ));
    }
    let size = 1u32 << (32 - u32::from(prefix));
    Ok(NetworkMode::Create(CreatedNetwork {
        endpoint: cidr::block(base, 0, prefix + 2),
        lb: cidr::block(base, size / 4, prefix + 2),
        nodes: cidr::block(base, size / 2, prefix + 1),
        vcn,
    }))
}

/// The OCI client of one pass, with where the network lives.
pub struct Network {
    oci: Oci,
    calls: CloudCalls,
    infra: Infra,
    uid: String,
    /// The VCN a created network recorded in the status.
    recorded_vcn: Option<String>,
}

/// One kind of Core Services resource the network is made of.
#[derive(Clone, Copy, Debug)]
struct Kind {
    collection: &'static str,
    noun: &'static str,
    list: &'static str,
    create: &'static str,
    delete: &'static str,
    in_vcn: bool,
}

const VCN: Kind = Kind {
    collection: "vcns",
    noun: "VCN",
    list: "ListVcns",
    create: "CreateVcn",
    delete: "DeleteVcn",
    in_vcn: false,
};
const INTERNET_GATEWAY: Kind = Kind {
    collection: "internetGateways",
    noun: "internet gateway",
    list: "ListInternetGateways",
    create: "CreateInternetGateway",
    delete: "DeleteInternetGateway",
    in_vcn: true,
};
const NAT_GATEWAY: Kind = Kind {
    collection: "natGateways",
    noun: "NAT gateway",
    list: "ListNatGateways",
    create: "CreateNatGateway",
    delete: "DeleteNatGateway",
    in_vcn: true,
};
const SERVICE_GATEWAY: Kind = Kind {
    collection: "serviceGateways",
    noun: "service gateway",
    list: "ListServiceGateways",
    create: "CreateServiceGateway",
    delete: "DeleteServiceGateway",
    in_vcn: true,
};
const ROUTE_TABLE: Kind = Kind {
    collection: "routeTables",
    noun: "route table",
    list: "ListRouteTables",
    create: "CreateRouteTable",
    delete: "DeleteRouteTable",
    in_vcn: true,
};
const SECURITY_LIST: Kind = Kind {
    collection: "securityLists",
    noun: "security list",
    list: "ListSecurityLists",
    create: "CreateSecurityList",
    delete: "DeleteSecurityList",
    in_vcn: true,
};
const SUBNET: Kind = Kind {
    collection: "subnets",
    noun: "subnet",
    list: "ListSubnets",
    create: "CreateSubnet",
    delete: "DeleteSubnet",
    in_vcn: true,
};

fn state(v: &Value) -> &str {
    v["lifecycleState"].as_str().unwrap_or_default()
}

fn gone(v: &Value) -> bool {
    matches!(state(v), "TERMINATED" | "TERMINATING")
}

fn id(v: &Value) -> String {
    v["id"].as_str().unwrap_or_default().to_string()
}

/// One build or tear-down pass over a created network.
struct NetworkScope<'a> {
    net: &'a Network,
    owner: &'a Owner,
    base: String,
    plan: Option<&'a CreatedNetwork>,
    /// On tear-down: our VCN, looked up once per pass (`None`: nothing of ours can be left in one).
    vcn: Option<String>,
}

/// What a look for one resource found.
enum Found {
    /// Ours, live.
    Ours(Value),
    /// Ours, being deleted.
    Going,
    /// None.
    None,
}

impl NetworkScope<'_> {
    fn name(&self, suffix: &str) -> String {
        format!("{}-{suffix}", self.base)
    }

    fn tags(&self) -> Value {
        json!(self.owner.tags(&self.net.infra.additional_tags))
    }

    /// The resource of `kind` named `name` in the compartment (and `vcn`), if ours.
    async fn find(
        &self,
        kind: Kind,
        name: &str,
        vcn: Option<&str>,
    ) -> Result<Found, ProviderError> {
        let n = self.net;
        let mut path = format!(
            "/{}?compartmentId={}",
            kind.collection,
            q(&n.infra.compartment)
        );
        if let Some(v) = vcn.filter(|_| kind.in_vcn) {
            path.push_str(&format!("&vcnId={}", q(v)));
        }
        if kind.collection != "serviceGateways" {
            path.push_str(&format!("&displayName={}", q(name)));
        }
        let listed = n.oci.list(&n.calls, kind.list, Api::Core, &path).await?;
        let named: Vec<&Value> = listed.iter().filter(|r| r["displayName"] == name).collect();
        if let Some(live) = named.iter().find(|r| !gone(r)) {
            return match self.owner.decide(&tags_of(live), false) {
                Ownership::Ours => Ok(Found::Ours((*live).clone())),
                Ownership::Adopt | Ownership::Conflict(_) => Err(ProviderError::terminal(
                    Reason::NameConflict,
                    format!(
                        "the {} {name} ({}) already exists in compartment {} and was not created for this cluster; nothing was changed. Delete or rename it, or bring the network by OCID instead (spec.network.id and spec.network.subnetIDs)",
                        kind.noun,
                        id(live),
                        n.infra.compartment
                    ),
                )),
            };
        }
        Ok(named
            .iter()
            .find(|r| state(r) == "TERMINATING" && self.owner.owns(&tags_of(r)))
            .map_or(Found::None, |_| Found::Going))
    }

    /// Creates a resource of `kind` named `name` with `body` (compartment, name and tags added).
    async fn create(
        &self,
        kind: Kind,
        name: &str,
        mut body: Value,
    ) -> Result<Progress, ProviderError> {
        let n = self.net;
        body["compartmentId"] = json!(n.infra.compartment);
        body["displayName"] = json!(name);
        body["freeformTags"] = self.tags();
        let token = idempotency::token(&OCI_RETRY_TOKEN, kind.create, &n.uid, &[name]);
        let path = format!("/{}", kind.collection);
        let call = Call::send(kind.create, Api::Core, &Method::POST, &path, Some(&body))
            .retry_token(&token);
        match n.oci.call(&n.calls, call).await {
            Ok(_) => Ok(Progress::creating(format!(
                "creating the {} {name}",
                kind.noun
            ))),
            Err(f) if matches!(f.error, CloudError::InUse(_)) => Ok(Progress::waiting(format!(
                "the {} {name} is being changed: {}",
                kind.noun, f.error
            ))),
            Err(f) => Err(f.into()),
        }
    }

    /// Looks for one resource; creates it when missing. `Ready` once it is AVAILABLE.
    async fn ensure(
        &self,
        kind: Kind,
        suffix: &str,
        vcn: Option<&str>,
        body: impl FnOnce() -> Value,
    ) -> Result<(Progress, Option<Value>), ProviderError> {
        let name = self.name(suffix);
        match self.find(kind, &name, vcn).await? {
            Found::Ours(v) => {
                let progress = if state(&v) == "AVAILABLE" {
                    Progress::Ready
                } else {
                    Progress::waiting(format!("the {} {name} is {}", kind.noun, state(&v)))
                };
                Ok((progress, Some(v)))
            }
            Found::Going => Ok((
                Progress::waiting(format!("the {} {name} is still being deleted", kind.noun)),
                None,
            )),
            Found::None => Ok((self.create(kind, &name, body()).await?, None)),
        }
    }

    /// Deletes one of ours; `Gone` when none is left.
    async fn remove(
        &self,
        kind: Kind,
        suffix: &str,
        vcn: Option<&str>,
    ) -> Result<Removal, ProviderError> {
        let name = self.name(suffix);
        let found = match self.find(kind, &name, vcn).await {
            Ok(f) => f,
            // A same-named resource of someone else's is not ours to delete.
            Err(ProviderError::Terminal {
                reason: Reason::NameConflict,
                ..
            }) => return Ok(Removal::Gone),
            Err(e) => return Err(e),
        };
        match found {
            Found::None => Ok(Removal::Gone),
            Found::Going => Ok(Removal::waiting(format!(
                "the {} {name} is being deleted",
                kind.noun
            ))),
            Found::Ours(v) => self.delete(kind, &name, &id(&v)).await,
        }
    }

    /// Deletes one of ours, `name`, by its OCID.
    async fn delete(&self, kind: Kind, name: &str, id: &str) -> Result<Removal, ProviderError> {
        let n = self.net;
        let path = format!("/{}/{id}", kind.collection);
        let call = Call::send(kind.delete, Api::Core, &Method::DELETE, &path, None);
        match n.oci.call(&n.calls, call).await {
            Ok(_) => Ok(Removal::deleting(format!(
                "deleting the {} {name}",
                kind.noun
            ))),
            Err(f) if f.error.is_not_found() => Ok(Removal::Gone),
            Err(f) if matches!(f.error, CloudError::InUse(_)) => Ok(Removal::waiting(format!(
                "the {} {name} is still in use: {}",
                kind.noun, f.error
            ))),
            Err(f) => Err(f.into()),
        }
    }
}

/// What the walk found or made.
#[derive(Debug, Default)]
struct Built {
    vcn: Option<String>,
    internet_gateway: Option<String>,
    nat_gateway: Option<String>,
    service_gateway: Option<String>,
    services_cidr: Option<String>,
    public_routes: Option<String>,
    private_routes: Option<String>,
    endpoint_list: Option<String>,
    nodes_list: Option<String>,
    endpoint_subnet: Option<String>,
    lb_subnet: Option<String>,
    nodes_subnet: Option<String>,
}

/// The created network's services, in build order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NetworkService {
    Vcn,
    InternetGateway,
    NatGateway,
    ServiceGateway,
    RouteTables,
    SecurityLists,
    Subnets,
}

impl Service for NetworkService {
    const ORDER: &'static [Self] = &[
        Self::Vcn,
        Self::InternetGateway,
        Self::NatGateway,
        Self::ServiceGateway,
        Self::RouteTables,
        Self::SecurityLists,
        Self::Subnets,
    ];

    fn label(self) -> &'static str {
        match self {
            Self::Vcn => "VCN",
            Self::InternetGateway => "Internet gateway",
            Self::NatGateway => "NAT gateway",
            Self::ServiceGateway => "Service gateway",
            Self::RouteTables => "Route tables",
            Self::SecurityLists => "Security lists",
            Self::Subnets => "Subnets",
        }
    }
}

/// Runs `ensure` for several resources of one service in order: the first that is not ready
/// ends the turn.
macro_rules! each_ready {
    ($progress:expr) => {{
        let (progress, found) = $progress;
        if progress != Progress::Ready {
            return Ok(progress);
        }
        found.as_ref().map(id)
    }};
}

fn all_tcp(port: u16) -> Value {
    json!({ "destinationPortRange": { "min": port, "max": port } })
}

impl Builds<NetworkScope<'_>, Built> for NetworkService {
    async fn reconcile(
        self,
        s: &NetworkScope<'_>,
        built: &mut Built,
    ) -> Result<Progress, ProviderError> {
        let Some(plan) = s.plan else {
            return Ok(Progress::Blocked("no network to build".into()));
        };
        if self != NetworkService::Vcn && built.vcn.is_none() {
            return Ok(Progress::Blocked("waiting for the VCN".into()));
        }
        let vcn = built.vcn.clone();
        let vcn = vcn.as_deref();
        match self {
            NetworkService::Vcn => {
                built.vcn = each_ready!(
                    s.ensure(VCN, "vcn", None, || json!({ "cidrBlocks": [plan.vcn] }))
                        .await?
                );
            }
            NetworkService::InternetGateway => {
                built.internet_gateway = each_ready!(
                    s.ensure(
                        INTERNET_GATEWAY,
                        "igw",
                        vcn,
                        || json!({ "vcnId": vcn, "isEnabled": true })
                    )
                    .await?
                );
            }
            NetworkService::NatGateway => {
                built.nat_gateway = each_ready!(
                    s.ensure(NAT_GATEWAY, "nat", vcn, || json!({ "vcnId": vcn }))
                        .await?
                );
            }
            NetworkService::ServiceGateway => {
                let n = s.net;
                let services = n
                    .oci
                    .list(&n.calls, "ListServices", Api::Core, "/services")
                    .await?;
                let Some(all) = services.iter().find(|v| {
                    v["cidrBlock"]
                        .as_str()
                        .is_some_and(|c| c.ends_with("-services-in-oracle-services-network"))
                }) else {
                    return Ok(Progress::Blocked(format!(
                        "OCI lists no \"All Services In Oracle Services Network\" in {}",
                        n.infra.region
                    )));
                };
                built.services_cidr = all["cidrBlock"].as_str().map(String::from);
                let service = id(all);
                built.service_gateway = each_ready!(
                    s.ensure(
                        SERVICE_GATEWAY,
                        "sgw",
                        vcn,
                        || json!({ "vcnId": vcn, "services": [{ "serviceId": service }] })
                    )
                    .await?
                );
            }
            NetworkService::RouteTables => {
                let (Some(igw), Some(nat), Some(sgw), Some(osn)) = (
                    &built.internet_gateway,
                    &built.nat_gateway,
                    &built.service_gateway,
                    &built.services_cidr,
                ) else {
                    return Ok(Progress::Blocked("waiting for the gateways".into()));
                };
                built.public_routes = each_ready!(
                    s.ensure(ROUTE_TABLE, "public-routes", vcn, || json!({
                        "vcnId": vcn,
                        "routeRules": [{ "destination": "0.0.0.0/0", "destinationType": "CIDR_BLOCK", "networkEntityId": igw, "description": "to the internet" }],
                    }))
                    .await?
                );
                built.private_routes = each_ready!(
                    s.ensure(ROUTE_TABLE, "private-routes", vcn, || json!({
                        "vcnId": vcn,
                        "routeRules": [
                            { "destination": "0.0.0.0/0", "destinationType": "CIDR_BLOCK", "networkEntityId": nat, "description": "to the internet through NAT" },
                            { "destination": osn, "destinationType": "SERVICE_CIDR_BLOCK", "networkEntityId": sgw, "description": "to the Oracle Services Network" },
                        ],
                    }))
                    .await?
                );
            }
            NetworkService::SecurityLists => {
                built.endpoint_list = each_ready!(
                    s.ensure(SECURITY_LIST, "endpoint-security", vcn, || json!({
                        "vcnId": vcn,
                        "ingressSecurityRules": [
                            { "protocol": "6", "source": "0.0.0.0/0", "isStateless": false, "tcpOptions": all_tcp(6443), "description": "Kubernetes API" },
                            { "protocol": "6", "source": plan.vcn, "isStateless": false, "tcpOptions": all_tcp(12250), "description": "nodes to the control plane" },
                        ],
                        "egressSecurityRules": [{ "protocol": "all", "destination": "0.0.0.0/0", "isStateless": false }],
                    }))
                    .await?
                );
                built.nodes_list = each_ready!(
                    s.ensure(SECURITY_LIST, "nodes-security", vcn, || json!({
                        "vcnId": vcn,
                        "ingressSecurityRules": [{ "protocol": "all", "source": plan.vcn, "isStateless": false, "description": "within the VCN" }],
                        "egressSecurityRules": [{ "protocol": "all", "destination": "0.0.0.0/0", "isStateless": false }],
                    }))
                    .await?
                );
            }
            NetworkService::Subnets => {
                let (Some(public), Some(private), Some(endpoint_list), Some(nodes_list)) = (
                    &built.public_routes,
                    &built.private_routes,
                    &built.endpoint_list,
                    &built.nodes_list,
                ) else {
                    return Ok(Progress::Blocked(
                        "waiting for the route tables and security lists".into(),
                    ));
                };
                let subnet = |cidr: &str, routes: &str, list: &str, private: bool| {
                    json!({
                        "vcnId": vcn,
                        "cidrBlock": cidr,
                        "routeTableId": routes,
                        "securityListIds": [list],
                        "prohibitPublicIpOnVnic": private,
                    })
                };
                built.endpoint_subnet = each_ready!(
                    s.ensure(SUBNET, "endpoint", vcn, || subnet(
                        &plan.endpoint,
                        public,
                        endpoint_list,
                        false
                    ))
                    .await?
                );
                built.lb_subnet = each_ready!(
                    s.ensure(SUBNET, "load-balancers", vcn, || subnet(
                        &plan.lb, public, nodes_list, false
                    ))
                    .await?
                );
                built.nodes_subnet = each_ready!(
                    s.ensure(SUBNET, "nodes", vcn, || subnet(
                        &plan.nodes,
                        private,
                        nodes_list,
                        true
                    ))
                    .await?
                );
            }
        }
        Ok(Progress::Ready)
    }
}

impl NetworkScope<'_> {
    /// Deletes the VCN recorded in the status (read by its OCID, so OCI's TERMINATED answer
    /// confirms it is gone); `None` when none is recorded.
    async fn remove_recorded_vcn(&self) -> Result<Option<Removal>, ProviderError> {
        let n = self.net;
        let Some(id) = &n.recorded_vcn else {
            return Ok(None);
        };
        let path = format!("/vcns/{id}");
        let Some((v, _)) = n.oci.get(&n.calls, "GetVcn", Api::Core, &path).await? else {
            return Ok(Some(Removal::Gone));
        };
        let name = v["displayName"].as_str().unwrap_or(id);
        Ok(Some(match state(&v) {
            "TERMINATED" => Removal::Gone,
            "TERMINATING" => Removal::waiting(format!("the VCN {name} is being deleted")),
            _ if !self.owner.owns(&tags_of(&v)) => Removal::Gone,
            _ => self.delete(VCN, name, id).await?,
        }))
    }
}

impl TearsDown<NetworkScope<'_>> for NetworkService {
    async fn delete(self, s: &NetworkScope<'_>) -> Result<Removal, ProviderError> {
        if self == NetworkService::Vcn
            && let Some(removal) = s.remove_recorded_vcn().await?
        {
            return Ok(removal);
        }
        let Some(vcn) = s.vcn.as_deref() else {
            // Without our VCN nothing of ours can be inside it.
            return match self {
                NetworkService::Vcn => s.remove(VCN, "vcn", None).await,
                _ => Ok(Removal::Gone),
            };
        };
        let vcn = Some(vcn);
        let sequence: &[(Kind, &str)] = match self {
            NetworkService::Subnets => &[
                (SUBNET, "nodes"),
                (SUBNET, "load-balancers"),
                (SUBNET, "endpoint"),
            ],
            NetworkService::SecurityLists => &[
                (SECURITY_LIST, "nodes-security"),
                (SECURITY_LIST, "endpoint-security"),
            ],
            NetworkService::RouteTables => &[
                (ROUTE_TABLE, "private-routes"),
                (ROUTE_TABLE, "public-routes"),
            ],
            NetworkService::ServiceGateway => &[(SERVICE_GATEWAY, "sgw")],
            NetworkService::NatGateway => &[(NAT_GATEWAY, "nat")],
            NetworkService::InternetGateway => &[(INTERNET_GATEWAY, "igw")],
            NetworkService::Vcn => &[(VCN, "vcn")],
        };
        for (kind, suffix) in sequence {
            match s.remove(*kind, suffix, vcn).await? {
                Removal::Gone => {}
                pending => return Ok(pending),
            }
        }
        Ok(Removal::Gone)
    }
}

impl InfraClusterCloud for OkeInfraCluster {
    type Object = OKECluster;
    type Clients = Network;
    type Plan = CreatedNetwork;
    type Network = OKENetworkStatus;
    type Status = OKEClusterStatus;

    fn kind(&self) -> &'static str {
        "OKECluster"
    }

    fn mode(&self, obj: &OKECluster) -> Result<NetworkMode<CreatedNetwork>, String> {
        network_mode(&obj.spec)
    }

    async fn connect(
        &self,
        obj: &OKECluster,
        client: &kube::Client,
        calls: &CloudCalls,
    ) -> Result<Network, ProviderError> {
        let mut infra = Infra::from_spec(&obj.spec);
        let oci = scope::oci_for(
            &self.shared,
            client,
            &obj.namespace().unwrap_or_default(),
            &infra,
        )
        .await?;
        let region_ads = self
            .shared
            .availability_domains(&oci, calls, &infra.compartment)
            .await?;
        if infra.availability_domains.is_empty() {
            infra.availability_domains = region_ads;
        } else if let Some(unknown) = infra
            .availability_domains
            .iter()
            .find(|a| !region_ads.contains(a))
        {
            return Err(ProviderError::terminal(
                Reason::InvalidSpec,
                format!(
                    "spec.oke.availabilityDomains names {unknown}, which is not an availability domain of {} ({})",
                    infra.region,
                    region_ads.join(", ")
                ),
            ));
        }
        Ok(Network {
            oci,
            calls: calls.clone(),
            infra,
            uid: obj.uid().unwrap_or_default(),
            recorded_vcn: obj
                .status
                .as_ref()
                .and_then(|s| s.network.as_ref())
                .filter(|n| n.managed)
                .and_then(|n| n.vcn_id.clone()),
        })
    }

    async fn observe_brought(
        &self,
        _obj: &OKECluster,
        n: &Network,
    ) -> NetworkReport<OKENetworkStatus> {
        let invalid =
            |m: String| NetworkReport::failed(ProviderError::terminal(Reason::InvalidSpec, m));
        let get = |collection: &'static str, op: &'static str, id: &str| {
            let path = format!("/{collection}/{id}");
            async move { n.oci.get(&n.calls, op, Api::Core, &path).await }
        };
        let vcn = match get("vcns", "GetVcn", &n.infra.vcn).await {
            Err(f) => return NetworkReport::failed(f.into()),
            Ok(Some((v, _))) if !gone(&v) => v,
            Ok(_) => {
                return invalid(format!(
                    "the VCN {} (spec.network.id) does not exist; create it, or let the provider create the network (spec.network.cidrBlock)",
                    n.infra.vcn
                ));
            }
        };
        let mut subnets = vec![(n.infra.endpoint_subnet.clone(), "spec.oke.endpointSubnetID")];
        subnets.extend(
            n.infra
                .node_subnets
                .iter()
                .map(|s| (s.clone(), "spec.network.subnetIDs")),
        );
        subnets.extend(
            n.infra
                .lb_subnets
                .iter()
                .map(|s| (s.clone(), "spec.oke.serviceLBSubnetIDs")),
        );
        let mut endpoint_public = false;
        for (i, (subnet, field)) in subnets.iter().enumerate() {
            let s = match get("subnets", "GetSubnet", subnet).await {
                Err(f) => return NetworkReport::failed(f.into()),
                Ok(Some((s, _))) if !gone(&s) => s,
                Ok(_) => return invalid(format!("the subnet {subnet} ({field}) does not exist")),
            };
            if s["vcnId"] != vcn["id"] {
                return invalid(format!(
                    "the subnet {subnet} ({field}) is in VCN {}, not in {} (spec.network.id)",
                    s["vcnId"].as_str().unwrap_or_default(),
                    n.infra.vcn
                ));
            }
            if i == 0 {
                endpoint_public = s["prohibitPublicIpOnVnic"] != true;
            }
        }
        let status = OKENetworkStatus {
            vcn_id: Some(n.infra.vcn.clone()),
            cidr_block: vcn["cidrBlock"].as_str().map(String::from),
            endpoint_subnet_id: Some(n.infra.endpoint_subnet.clone()),
            node_subnet_ids: n.infra.node_subnets.clone(),
            service_lb_subnet_ids: n.infra.lb_subnets.clone(),
            endpoint_subnet_public: endpoint_public,
            availability_domains: n.infra.availability_domains.clone(),
            managed: false,
        };
        let message = format!(
            "using the brought VCN {} with {} node subnet(s) in {}",
            vcn["displayName"].as_str().unwrap_or(&n.infra.vcn),
            n.infra.node_subnets.len(),
            n.infra.availability_domains.join(", ")
        );
        NetworkReport::ready(status, message, self.shared.rest_interval)
    }

    async fn build(
        &self,
        _obj: &OKECluster,
        _ctx: &PassContext,
        net: &Network,
        owner: Owner,
        plan: CreatedNetwork,
    ) -> Result<NetworkReport<OKENetworkStatus>, ProviderError> {
        let scope = NetworkScope {
            net,
            owner: &owner,
            base: naming::derive_cloud_name(owner.namespace(), owner.cluster(), &BASE_NAME),
            plan: Some(&plan),
            vcn: None,
        };
        let walk = walker::build::<NetworkService, _, Built>(&scope).await;
        let b = &walk.built;
        let status = OKENetworkStatus {
            vcn_id: b.vcn.clone(),
            cidr_block: Some(plan.vcn.clone()),
            endpoint_subnet_id: b.endpoint_subnet.clone(),
            node_subnet_ids: b.nodes_subnet.iter().cloned().collect(),
            service_lb_subnet_ids: b.lb_subnet.iter().cloned().collect(),
            endpoint_subnet_public: true,
            availability_domains: net.infra.availability_domains.clone(),
            managed: true,
        };
        let condition = walk.condition(contract::conditions::ConditionType::NetworkReady, |_| {
            format!(
                "VCN {} ({}) with its gateways, route tables, security lists and endpoint, load-balancer and node subnets ready in {}",
                scope.name("vcn"),
                plan.vcn,
                net.infra.availability_domains.join(", ")
            )
        });
        Ok(NetworkReport {
            network: Some(status),
            complete: walk.complete(),
            condition,
            requeue: walk.requeue(self.timing(), self.shared.rest_interval),
            error: walk.error.map(|(_, e)| e),
        })
    }

    async fn tear_down(
        &self,
        _obj: &OKECluster,
        net: &Network,
        owner: Owner,
    ) -> Result<Cleanup, ProviderError> {
        let mut scope = NetworkScope {
            net,
            owner: &owner,
            base: naming::derive_cloud_name(owner.namespace(), owner.cluster(), &BASE_NAME),
            plan: None,
            vcn: None,
        };
        scope.vcn = match &net.recorded_vcn {
            Some(id) => Some(id.clone()),
            None => match scope.find(VCN, &scope.name("vcn"), None).await {
                Ok(Found::Ours(v)) => Some(id(&v)),
                Ok(Found::Going | Found::None) => None,
                // A same-named VCN of someone else's holds nothing of ours.
                Err(ProviderError::Terminal {
                    reason: Reason::NameConflict,
                    ..
                }) => None,
                Err(e) => return Err(e),
            },
        };
        let removal = walker::tear_down::<NetworkService, _>(&scope).await?;
        Ok(removal.cleanup(self.timing()))
    }

    fn network_status<'o>(&self, obj: &'o OKECluster) -> Option<&'o OKENetworkStatus> {
        obj.status.as_ref()?.network.as_ref()
    }

    fn zones<'n>(&self, network: &'n OKENetworkStatus) -> Vec<&'n str> {
        network
            .availability_domains
            .iter()
            .map(String::as_str)
            .collect()
    }

    fn status(
        &self,
        common: InfraClusterStatusCommon,
        network: Option<OKENetworkStatus>,
    ) -> OKEClusterStatus {
        OKEClusterStatus {
            common,
            network,
            ..OKEClusterStatus::default()
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use contract::api::NetworkSpec;

    use super::*;
    use crate::api::OKEClusterOptions;

    fn spec(network: Option<NetworkSpec>) -> OKEClusterSpec {
        OKEClusterSpec {
            common: ClusterSpecCommon {
                region: "us-ashburn-1".into(),
                network,
                ..ClusterSpecCommon::default()
            },
            oke: OKEClusterOptions {
                compartment_id: "ocid1.compartment.oc1..c".into(),
                ..OKEClusterOptions::default()
            },
        }
    }

    #[test]
    fn a_created_network_splits_its_block_into_endpoint_load_balancer_and_node_subnets() {
        assert_eq!(
            network_mode(&spec(None)),
            Ok(NetworkMode::Create(CreatedNetwork {
                vcn: DEFAULT_VCN_CIDR.into(),
                endpoint: "10.0.0.0/18".into(),
                lb: "10.0.64.0/18".into(),
                nodes: "10.0.128.0/17".into(),
            }))
        );
        let small = network_mode(&spec(Some(NetworkSpec {
            cidr_block: Some("10.1.2.0/24".into()),
            ..NetworkSpec::default()
        })));
        assert_eq!(
            small,
            Ok(NetworkMode::Create(CreatedNetwork {
                vcn: "10.1.2.0/24".into(),
                endpoint: "10.1.2.0/26".into(),
                lb: "10.1.2.64/26".into(),
                nodes: "10.1.2.128/25".into(),
            }))
        );
        assert!(
            network_mode(&spec(Some(NetworkSpec {
                cidr_block: Some("10.0.0.0/8".into()),
                ..NetworkSpec::default()
            })))
            .unwrap_err()
            .contains("/16 to /24")
        );
    }

    #[test]
    fn a_brought_network_needs_its_vcn_and_node_subnets() {
        let only_subnets = network_mode(&spec(Some(NetworkSpec {
            subnet_ids: vec!["ocid1.subnet.oc1.iad.a".into()],
            ..NetworkSpec::default()
        })));
        assert!(only_subnets.unwrap_err().contains("spec.network.id"));
        assert_eq!(
            network_mode(&spec(Some(NetworkSpec {
                id: Some("ocid1.vcn.oc1.iad.v".into()),
                subnet_ids: vec!["ocid1.subnet.oc1.iad.a".into()],
                ..NetworkSpec::default()
            }))),
            Ok(NetworkMode::Brought)
        );
    }
}
