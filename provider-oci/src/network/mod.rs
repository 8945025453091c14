//! The cluster's OCI network, as an ordered list of services.
//!
//! A created network is laid out as OKE's quick create lays one out. It is seven services, each
//! one kind of Core Services resource in its own module, walked in the order below to build and
//! in reverse to tear down:
//!
//! | service | builds | needs |
//! | --- | --- | --- |
//! | [`vcn`] | the VCN, over the spec's block | |
//! | [`internet_gateway`] | an internet gateway | VCN |
//! | [`nat_gateway`] | a NAT gateway | VCN |
//! | [`service_gateway`] | a service gateway to the region's Oracle Services Network | VCN |
//! | [`route_tables`] | a public route table (to the internet gateway) and a private one (to the NAT gateway, and to the Oracle Services Network through the service gateway) | the three gateways |
//! | [`security_lists`] | the endpoint's security list and the nodes' | VCN |
//! | [`subnets`] | the endpoint subnet and the load balancers' (public), the nodes' (private) | route tables, security lists |
//!
//! In a build turn a service looks for each of its resources and creates the one that is
//! missing. A resource is ready once OCI reports it AVAILABLE; the first of a service's
//! resources that is not ready ends the service's turn. Every create carries the resource's
//! display name and the cluster's ownership tags in the request itself, and an
//! `opc-retry-token` derived from the object's UID, the operation and the name, so a create
//! repeated after a crash does not make a second resource.
//!
//! OCI names are not unique. Each resource is found by its display name in the compartment (and
//! in the VCN, for what lives in one), and only one tagged as ours is used. A live resource of
//! that name that is not ours stops the pass with `NameConflict`: networks are never adopted,
//! and bringing a network by OCID ([`bring_your_own`]) is how a cluster uses one it did not
//! create.
//!
//! Tear-down first finds our VCN: the one a created network recorded in the status, else the
//! one of our name tagged as ours. It then walks the services backwards; each deletes at most
//! one resource of ours per turn, and the walk stops at the first service that still has
//! something left. Without our VCN nothing of ours can be inside one, so only the VCN's own
//! service looks further. A resource of our name that is not ours is left alone.

pub mod bring_your_own;
pub mod internet_gateway;
pub mod nat_gateway;
pub mod route_tables;
pub mod security_lists;
pub mod service_gateway;
pub mod subnets;
pub mod vcn;

use std::collections::BTreeMap;
use std::marker::PhantomData;

use contract::api::{NetworkStatus, SubnetStatus};
use contract::conditions::{ConditionType, DesiredCondition, Reason};
use contract::idempotency::{self, OCI_RETRY_TOKEN};
use contract::naming::{self, NameLimits};
use contract::ownership::{Owner, Ownership};
use provider_runtime::infra_cluster::SeenNetwork;
use provider_runtime::walker::{self, Builds, Progress, Removal, TearsDown, Walk};
use provider_runtime::{CloudCalls, CloudError, ProviderError};
use reqwest::Method;
use serde_json::{Value, json};

use crate::api::{OKECluster, OKEClusterObserved};
use crate::client::answers::NetworkResource;
use crate::client::{Call, Oci, Service as Api, q};
use crate::reconcile::cluster::CreatedNetwork;
use crate::scope::Infra;

/// Display names the provider derives (a suffix such as `-endpoint-security` follows).
const BASE_NAME: NameLimits = NameLimits {
    what: "OCI display name",
    max_len: 200,
    punctuation: "-_",
    first: naming::FirstChar::Letter,
    must_end_alphanumeric: true,
    lowercase: false,
};

/// The OCI client of one pass, with where the network lives.
pub struct Network {
    /// The OCI client.
    pub(crate) oci: Oci,
    /// The pass's record of cloud calls.
    pub(crate) calls: CloudCalls,
    /// The compartment, region, availability domains, tags and brought network.
    pub(crate) infra: Infra,
    /// The OKECluster's UID, the seed of retry tokens.
    pub(crate) uid: String,
    /// The VCN a created network recorded in the status.
    pub(crate) recorded_vcn: Option<String>,
}

/// One kind of Core Services resource the network is made of, read as `T`.
#[derive(Debug)]
struct Kind<T> {
    collection: &'static str,
    noun: &'static str,
    list: &'static str,
    create: &'static str,
    delete: &'static str,
    update: &'static str,
    in_vcn: bool,
    answer: PhantomData<fn() -> T>,
}

impl<T> Clone for Kind<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Kind<T> {}

/// Whether a resource is deleted or being deleted.
fn gone(v: &impl NetworkResource) -> bool {
    matches!(v.lifecycle_state(), "TERMINATED" | "TERMINATING")
}

/// One build or tear-down pass over a created network.
pub struct Scope<'a> {
    net: &'a Network,
    owner: &'a Owner,
    base: String,
    plan: Option<&'a CreatedNetwork>,
    /// On tear-down: our VCN, looked up once per pass (`None`: nothing of ours can be left in one).
    vcn: Option<String>,
}

/// What a look for one resource found.
enum Found<T> {
    /// Ours, live.
    Ours(T),
    /// Ours, being deleted.
    Going,
    /// None.
    None,
}

impl<'a> Scope<'a> {
    /// A pass over `owner`'s network: a build pass with the network to create (`plan`), a
    /// tear-down pass without one.
    pub fn new(net: &'a Network, owner: &'a Owner, plan: Option<&'a CreatedNetwork>) -> Self {
        Self {
            net,
            owner,
            base: naming::derive_cloud_name(owner.namespace(), owner.cluster(), &BASE_NAME),
            plan,
            vcn: None,
        }
    }
}

impl Scope<'_> {
    /// The display name of one of the network's resources.
    fn name(&self, suffix: &str) -> String {
        format!("{}-{suffix}", self.base)
    }

    /// The freeform tags every resource carries.
    fn tags(&self) -> Value {
        json!(self.owner.tags(&self.net.infra.additional_tags))
    }

    /// The list call of `kind` in the compartment (and in `vcn`, for a kind that lives in one).
    fn list_path<T>(&self, kind: Kind<T>, vcn: Option<&str>) -> String {
        let mut path = format!(
            "/{}?compartmentId={}",
            kind.collection,
            q(&self.net.infra.compartment)
        );
        if let Some(v) = vcn.filter(|_| kind.in_vcn) {
            path.push_str(&format!("&vcnId={}", q(v)));
        }
        path
    }

    /// The resource of `kind` named `name` in the compartment (and `vcn`), if ours.
    async fn find<T: NetworkResource>(
        &self,
        kind: Kind<T>,
        name: &str,
        vcn: Option<&str>,
    ) -> Result<Found<T>, ProviderError> {
        let n = self.net;
        let mut path = self.list_path(kind, vcn);
        if kind.collection != "serviceGateways" {
            path.push_str(&format!("&displayName={}", q(name)));
        }
        let listed: Vec<T> = n.oci.list_of(&n.calls, kind.list, Api::Core, &path).await?;
        let named: Vec<&T> = listed.iter().filter(|r| r.display_name() == name).collect();
        if let Some(live) = named.iter().find(|r| !gone(**r)) {
            return match self.owner.decide(&live.tags(), false) {
                Ownership::Ours => Ok(Found::Ours((*live).clone())),
                Ownership::Adopt | Ownership::Conflict(_) => Err(ProviderError::terminal(
                    Reason::NameConflict,
                    format!(
                        "the {} {name} ({}) already exists in compartment {} and was not created for this cluster; nothing was changed. Delete or rename it, or bring the network by OCID instead (spec.network.id and spec.network.subnetIDs)",
                        kind.noun,
                        live.id(),
                        n.infra.compartment
                    ),
                )),
            };
        }
        Ok(named
            .iter()
            .find(|r| r.lifecycle_state() == "TERMINATING" && self.owner.owns(&r.tags()))
            .map_or(Found::None, |_| Found::Going))
    }

    /// Creates a resource of `kind` named `name` with `body` (compartment, name and tags added).
    async fn create<T>(
        &self,
        kind: Kind<T>,
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
    async fn ensure<T: NetworkResource>(
        &self,
        kind: Kind<T>,
        suffix: &str,
        vcn: Option<&str>,
        body: impl FnOnce() -> Value,
    ) -> Result<(Progress, Option<T>), ProviderError> {
        let name = self.name(suffix);
        match self.find(kind, &name, vcn).await? {
            Found::Ours(v) => {
                let state = v.lifecycle_state();
                let progress = if state == "AVAILABLE" {
                    Progress::Ready
                } else {
                    Progress::waiting(format!("the {} {name} is {state}", kind.noun))
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
    async fn remove<T: NetworkResource>(
        &self,
        kind: Kind<T>,
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
            Found::Ours(v) => self.delete(kind, &name, v.id()).await,
        }
    }

    /// Deletes, in `sequence`'s order, the resources of ours inside our VCN: the first one not
    /// yet gone ends the turn. `Gone` without our VCN: nothing of ours can be inside it.
    async fn remove_in_vcn<T: NetworkResource>(
        &self,
        sequence: &[(Kind<T>, &str)],
    ) -> Result<Removal, ProviderError> {
        let Some(vcn) = self.vcn.as_deref() else {
            return Ok(Removal::Gone);
        };
        for (kind, suffix) in sequence {
            match self.remove(*kind, suffix, Some(vcn)).await? {
                Removal::Gone => {}
                pending => return Ok(pending),
            }
        }
        Ok(Removal::Gone)
    }

    /// Deletes one of ours, `name`, by its OCID.
    async fn delete<T>(
        &self,
        kind: Kind<T>,
        name: &str,
        id: &str,
    ) -> Result<Removal, ProviderError> {
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

/// Takes the result of one [`Scope::ensure`] in a service with several resources: a resource
/// that is not ready ends the service's turn with its progress; a ready one gives its OCID.
macro_rules! each_ready {
    ($progress:expr) => {{
        let (progress, found) = $progress;
        if progress != Progress::Ready {
            return Ok(progress);
        }
        found
            .as_ref()
            .map(|r| $crate::client::answers::NetworkResource::id(r).to_string())
    }};
}
use each_ready;

/// What the walk found or made: each service's OCIDs, read by the services after it.
#[derive(Debug, Default)]
pub struct Built {
    /// The VCN.
    pub vcn: Option<String>,
    /// The internet gateway.
    pub internet_gateway: Option<String>,
    /// The NAT gateway.
    pub nat_gateway: Option<String>,
    /// The service gateway.
    pub service_gateway: Option<String>,
    /// The Oracle Services Network's service CIDR label, the private routes' destination.
    pub services_cidr: Option<String>,
    /// The public route table.
    pub public_routes: Option<String>,
    /// The private route table.
    pub private_routes: Option<String>,
    /// The endpoint's security list.
    pub endpoint_list: Option<String>,
    /// The nodes' security list.
    pub nodes_list: Option<String>,
    /// The endpoint subnet.
    pub endpoint_subnet: Option<String>,
    /// The load balancers' subnet.
    pub lb_subnet: Option<String>,
    /// The nodes' subnet.
    pub nodes_subnet: Option<String>,
}

impl Built {
    /// The network status this describes, for the network `plan` over `availability_domains`.
    pub fn status(&self, plan: &CreatedNetwork, availability_domains: &[String]) -> OciNetwork {
        OciNetwork {
            vcn_id: self.vcn.clone(),
            cidr_block: Some(plan.vcn.clone()),
            endpoint_subnet_id: self.endpoint_subnet.clone(),
            node_subnet_ids: self.nodes_subnet.iter().cloned().collect(),
            service_lb_subnet_ids: self.lb_subnet.iter().cloned().collect(),
            endpoint_subnet_public: true,
            subnet_blocks: [
                (&self.endpoint_subnet, &plan.endpoint),
                (&self.nodes_subnet, &plan.nodes),
                (&self.lb_subnet, &plan.lb),
            ]
            .into_iter()
            .filter_map(|(id, block)| Some((id.clone()?, block.clone())))
            .collect(),
            availability_domains: availability_domains.to_vec(),
            managed: true,
        }
    }
}

/// The created network's services, in build order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Service {
    /// [`vcn`].
    Vcn,
    /// [`internet_gateway`].
    InternetGateway,
    /// [`nat_gateway`].
    NatGateway,
    /// [`service_gateway`].
    ServiceGateway,
    /// [`route_tables`].
    RouteTables,
    /// [`security_lists`].
    SecurityLists,
    /// [`subnets`].
    Subnets,
}

impl walker::Service for Service {
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

impl Builds<Scope<'_>, Built> for Service {
    async fn reconcile(self, s: &Scope<'_>, built: &mut Built) -> Result<Progress, ProviderError> {
        let Some(plan) = s.plan else {
            return Ok(Progress::Blocked("no network to build".into()));
        };
        if self != Service::Vcn && built.vcn.is_none() {
            return Ok(Progress::Blocked("waiting for the VCN".into()));
        }
        match self {
            Service::Vcn => vcn::reconcile(s, plan, built).await,
            Service::InternetGateway => internet_gateway::reconcile(s, built).await,
            Service::NatGateway => nat_gateway::reconcile(s, built).await,
            Service::ServiceGateway => service_gateway::reconcile(s, built).await,
            Service::RouteTables => route_tables::reconcile(s, built).await,
            Service::SecurityLists => security_lists::reconcile(s, plan, built).await,
            Service::Subnets => subnets::reconcile(s, plan, built).await,
        }
    }
}

impl TearsDown<Scope<'_>> for Service {
    async fn delete(self, s: &Scope<'_>) -> Result<Removal, ProviderError> {
        match self {
            Service::Vcn => vcn::delete(s).await,
            Service::InternetGateway => internet_gateway::delete(s).await,
            Service::NatGateway => nat_gateway::delete(s).await,
            Service::ServiceGateway => service_gateway::delete(s).await,
            Service::RouteTables => route_tables::delete(s).await,
            Service::SecurityLists => security_lists::delete(s).await,
            Service::Subnets => subnets::delete(s).await,
        }
    }
}

/// The `NetworkReady` condition of a build walk over the network `plan`: each service
/// contributes its part.
pub fn condition(
    outcome: &Walk<Service, Built>,
    scope: &Scope<'_>,
    plan: &CreatedNetwork,
) -> DesiredCondition {
    outcome.condition(ConditionType::NetworkReady, |_| {
        format!(
            "VCN {} ({}) with its gateways, route tables, security lists and endpoint, load-balancer and node subnets ready in {}",
            scope.name("vcn"),
            plan.vcn,
            scope.net.infra.availability_domains.join(", ")
        )
    })
}

impl Scope<'_> {
    /// Removes our ownership tag from every live resource of `kind` in the compartment (inside
    /// `vcn` for a kind that lives in one) that carries it: UpdateX with its freeform tags less
    /// ours (OCI replaces the whole map).
    async fn untag_all<T: NetworkResource>(
        &self,
        kind: Kind<T>,
        vcn: Option<&str>,
    ) -> Result<(), ProviderError> {
        let n = self.net;
        let path = self.list_path(kind, vcn);
        let listed: Vec<T> = n.oci.list_of(&n.calls, kind.list, Api::Core, &path).await?;
        let (key, _) = self.owner.tag();
        for r in listed
            .iter()
            .filter(|r| !gone(*r) && self.owner.owns(&r.tags()))
        {
            let mut tags = r.tags();
            tags.remove(&key);
            let path = format!("/{}/{}", kind.collection, r.id());
            let body = json!({ "freeformTags": tags });
            let call = Call::send(kind.update, Api::Core, &Method::PUT, &path, Some(&body));
            n.oci.call(&n.calls, call).await?;
        }
        Ok(())
    }
}

/// Leaves our network in place for `spec.deletionPolicy: Orphan`: every resource inside our VCN,
/// then the VCN, loses our ownership tag.
pub async fn release(mut scope: Scope<'_>) -> Result<(), ProviderError> {
    scope.vcn = vcn::find_ours(&scope).await?;
    let Some(vcn) = scope.vcn.clone() else {
        return Ok(());
    };
    let inside = Some(vcn.as_str());
    scope.untag_all(subnets::SUBNET, inside).await?;
    scope.untag_all(route_tables::ROUTE_TABLE, inside).await?;
    scope
        .untag_all(security_lists::SECURITY_LIST, inside)
        .await?;
    scope.untag_all(nat_gateway::NAT_GATEWAY, inside).await?;
    scope
        .untag_all(service_gateway::SERVICE_GATEWAY, inside)
        .await?;
    scope
        .untag_all(internet_gateway::INTERNET_GATEWAY, inside)
        .await?;
    scope.untag_all(vcn::VCN, None).await
}

/// Finds our VCN, then walks the services backwards, each deleting at most one resource, and
/// stops at the first that still has something left.
pub async fn tear_down(mut scope: Scope<'_>) -> Result<Removal, ProviderError> {
    scope.vcn = vcn::find_ours(&scope).await?;
    walker::tear_down::<Service, _>(&scope).await
}

/// The OCI network as the provider reads and fills it: the shared part of the status
/// ([`NetworkStatus`]: the VCN and its subnets) and what only OKE reports
/// ([`OKEClusterObserved`]: each subnet's role) in one struct.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OciNetwork {
    /// The VCN's OCID.
    pub vcn_id: Option<String>,
    /// The VCN's block.
    pub cidr_block: Option<String>,
    /// The API endpoint's subnet.
    pub endpoint_subnet_id: Option<String>,
    /// The nodes' subnets.
    pub node_subnet_ids: Vec<String>,
    /// The Service load balancers' subnets.
    pub service_lb_subnet_ids: Vec<String>,
    /// Whether the endpoint subnet is public (a public API endpoint needs one).
    pub endpoint_subnet_public: bool,
    /// Each subnet's block, by OCID.
    pub subnet_blocks: BTreeMap<String, String>,
    /// The availability domains in use (the failure domains).
    pub availability_domains: Vec<String>,
    /// Whether the provider created the network (and so deletes it) or the user brought it.
    pub managed: bool,
}

impl OciNetwork {
    /// The network as the status reports it: the shared shape (the VCN, its regional subnets
    /// serving every availability domain in use) and the `oke` block.
    pub fn seen(self) -> SeenNetwork<OKEClusterObserved> {
        let subnet = |id: &String, public: bool| SubnetStatus {
            id: id.clone(),
            cidr_block: self.subnet_blocks.get(id).cloned(),
            zones: self.availability_domains.clone(),
            public,
        };
        let mut subnets: Vec<SubnetStatus> = Vec::new();
        let roles = (self.endpoint_subnet_id.iter())
            .map(|id| subnet(id, self.endpoint_subnet_public))
            .chain(self.node_subnet_ids.iter().map(|id| subnet(id, false)))
            // The Service load balancers' subnets are public: they carry public load balancers.
            .chain(self.service_lb_subnet_ids.iter().map(|id| subnet(id, true)));
        // A brought subnet may serve more than one role: it is listed once, as its first role
        // (the endpoint's first) says.
        for s in roles {
            if !subnets.iter().any(|known| known.id == s.id) {
                subnets.push(s);
            }
        }
        SeenNetwork {
            shared: NetworkStatus {
                id: self.vcn_id.unwrap_or_default(),
                cidr_block: self.cidr_block,
                managed: self.managed,
                subnets,
            },
            own: OKEClusterObserved {
                endpoint_subnet_id: self.endpoint_subnet_id,
                node_subnet_ids: self.node_subnet_ids,
                service_lb_subnet_ids: self.service_lb_subnet_ids,
            },
        }
    }

    /// The network the OKECluster's status describes, if any.
    pub fn of(cluster: &OKECluster) -> Option<Self> {
        let status = cluster.status.as_ref()?;
        let shared = status.common.network.as_ref()?;
        let own = status.oke.clone().unwrap_or_default();
        let endpoint_subnet_public = shared
            .subnets
            .iter()
            .find(|s| Some(&s.id) == own.endpoint_subnet_id.as_ref())
            .is_some_and(|s| s.public);
        Some(Self {
            vcn_id: Some(shared.id.clone()).filter(|id| !id.is_empty()),
            cidr_block: shared.cidr_block.clone(),
            endpoint_subnet_id: own.endpoint_subnet_id,
            node_subnet_ids: own.node_subnet_ids,
            service_lb_subnet_ids: own.service_lb_subnet_ids,
            endpoint_subnet_public,
            subnet_blocks: shared
                .subnets
                .iter()
                .filter_map(|s| Some((s.id.clone(), s.cidr_block.clone()?)))
                .collect(),
            availability_domains: shared.zones().into_iter().map(String::from).collect(),
            managed: shared.managed,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod seen_tests {
    use super::*;

    #[test]
    fn a_subnet_serving_several_roles_is_listed_once_as_its_first_role_says() {
        let network = OciNetwork {
            vcn_id: Some("ocid1.vcn.a".into()),
            endpoint_subnet_id: Some("ocid1.subnet.shared".into()),
            node_subnet_ids: vec!["ocid1.subnet.shared".into(), "ocid1.subnet.nodes".into()],
            service_lb_subnet_ids: vec!["ocid1.subnet.nodes".into()],
            endpoint_subnet_public: false,
            availability_domains: vec!["AD-1".into()],
            ..OciNetwork::default()
        };
        let seen = network.seen();
        let listed: Vec<(&str, bool)> = seen
            .shared
            .subnets
            .iter()
            .map(|s| (s.id.as_str(), s.public))
            .collect();
        assert_eq!(
            listed,
            [
                ("ocid1.subnet.shared", false),
                ("ocid1.subnet.nodes", false)
            ]
        );
        assert_eq!(seen.own.node_subnet_ids.len(), 2, "the roles keep every id");
    }
}
