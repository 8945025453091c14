//! The GKECluster on the generic InfraCluster reconciler ([`provider_runtime::infra_cluster`]):
//! the cluster's project, region, zones and network.
//!
//! What is GKE's here:
//! - **validate** ([`network_mode`], pure): a brought network (a VPC network and one
//!   subnetwork, by name) or a created one (the nodes' block, default 10.0.0.0/20, and the
//!   Pods and Services ranges);
//! - **brought network**: two reads (the network, the subnetwork with its secondary ranges),
//!   nothing written, ever;
//! - **created network**: three Compute services walked forwards (a custom-mode VPC network, a
//!   subnetwork with the Pods and Services ranges, a Cloud Router with Cloud NAT for private
//!   nodes); Compute resources carry no labels, so the ownership tag is written into each one's
//!   `description` and read back from it; deletion walks them backwards, deleting only what is
//!   ours.
//!
//! The shared status, `NetworkReady`, the deletion policy and when to look again are the
//! kernel's.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use contract::api::{ClusterSpecCommon, InfraClusterStatusCommon};
use contract::cidr;
use contract::conditions::Reason;
use contract::naming::{self, NameLimits};
use contract::ownership::{Owner, Ownership};
use google_cloud_compute_v1::model as gce;
use kube::ResourceExt;
use provider_runtime::CloudCalls;
use provider_runtime::infra_cluster::{
    InfraClusterCloud, InfraClusterReconciler, ManagedInfraCluster, NetworkMode, NetworkReport,
};
use provider_runtime::walker::{self, Builds, Progress, Removal, Service, TearsDown, Timing};
use provider_runtime::{Cleanup, PassContext, ProviderError};

use crate::api::{GKECluster, GKEClusterSpec, GKEClusterStatus, GKENetworkStatus};
use crate::cloud::{Clients, Failure, absent_if_not_found, counted};
use crate::scope::{self, Infra, Shared};

/// The default block of a created network's nodes.
pub const DEFAULT_NODES_CIDR: &str = "10.0.0.0/20";
/// The default Pods range of a created subnetwork.
pub const DEFAULT_PODS_CIDR: &str = "10.4.0.0/14";
/// The default Services range of a created subnetwork.
pub const DEFAULT_SERVICES_CIDR: &str = "10.8.0.0/20";

/// The longest pause after a write before the next look.
const SETTLE: Duration = Duration::from_secs(3);

/// Compute resource names the provider derives (a suffix follows): Compute allows 63.
const BASE_NAME: NameLimits = NameLimits {
    what: "Compute Engine resource name",
    max_len: 50,
    ..naming::GKE_CLUSTER
};

/// The last segment of a name or self link (`…/networks/n` → `n`).
pub fn last_segment(reference: &str) -> &str {
    reference
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(reference)
}

/// The GKECluster reconciler.
pub fn reconciler(shared: Arc<Shared>) -> InfraClusterReconciler<GkeInfraCluster> {
    InfraClusterReconciler::new(scope::PROVIDER, GkeInfraCluster { shared })
}

impl ManagedInfraCluster for GKECluster {
    fn spec_common(&self) -> &ClusterSpecCommon {
        &self.spec.common
    }

    fn status_common(&self) -> Option<&InfraClusterStatusCommon> {
        self.status.as_ref().map(|s| &s.common)
    }
}

/// GKE's network, for the generic InfraCluster reconciler.
pub struct GkeInfraCluster {
    shared: Arc<Shared>,
}

impl GkeInfraCluster {
    fn timing(&self) -> Timing {
        Timing {
            settle: self.shared.poll_interval.min(SETTLE),
            poll: self.shared.poll_interval,
        }
    }
}

/// A network to create: the subnetwork's three blocks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreatedNetwork {
    /// The nodes' primary range.
    pub nodes: String,
    /// The Pods range.
    pub pods: String,
    /// The Services range.
    pub services: String,
}

/// Validates the network part of the spec (pure).
///
/// # Errors
/// A sentence naming the field.
pub fn network_mode(spec: &GKEClusterSpec) -> Result<NetworkMode<CreatedNetwork>, String> {
    let network = spec.common.network.clone().unwrap_or_default();
    if network.is_bring_your_own() {
        if network.id.is_none() {
            return Err(
                "spec.network.id (the VPC network) must be set with spec.network.subnetIDs on GKE"
                    .into(),
            );
        }
        if network.subnet_ids.len() != 1 {
            return Err(format!(
                "spec.network.subnetIDs must name exactly one subnetwork of {} on GKE, not {}",
                spec.common.region,
                network.subnet_ids.len()
            ));
        }
        return Ok(NetworkMode::Brought);
    }
    let nodes = network
        .cidr_block
        .unwrap_or_else(|| DEFAULT_NODES_CIDR.into());
    let range = |given: &Option<String>, default: &str| {
        given
            .clone()
            .filter(|r| r.contains('/'))
            .unwrap_or_else(|| default.to_string())
    };
    let pods = range(&spec.gke.pods_range, DEFAULT_PODS_CIDR);
    let services = range(&spec.gke.services_range, DEFAULT_SERVICES_CIDR);
    let blocks = [
        (
            "spec.network.cidrBlock",
            cidr::parse("spec.network.cidrBlock", &nodes, "10.0.0.0/20")?,
        ),
        (
            "spec.gke.podsRange",
            cidr::parse("spec.gke.podsRange", &pods, "10.0.0.0/20")?,
        ),
        (
            "spec.gke.servicesRange",
            cidr::parse("spec.gke.servicesRange", &services, "10.0.0.0/20")?,
        ),
    ];
    if !(8..=24).contains(&blocks[0].1.1) {
        return Err(format!(
            "spec.network.cidrBlock {nodes} must be from /8 to /24"
        ));
    }
    for (i, (a_field, a)) in blocks.iter().enumerate() {
        for (b_field, b) in &blocks[i + 1..] {
            if cidr::overlap(*a, *b) {
                return Err(format!(
                    "{a_field} and {b_field} overlap; give them separate blocks"
                ));
            }
        }
    }
    Ok(NetworkMode::Create(CreatedNetwork {
        nodes,
        pods,
        services,
    }))
}

/// The Compute clients of one pass, with the project and region.
pub struct Compute {
    clients: Clients,
    calls: CloudCalls,
    project: String,
    region: String,
}

const SERVICE: &str = "compute";

/// The ownership tag, as written into a Compute resource's description.
fn description(owner: &Owner) -> String {
    let (key, value) = owner.tag();
    format!(
        "Created by the Cluster API GKE provider for {}/{}. {key}={value}",
        owner.namespace(),
        owner.cluster()
    )
}

/// The tags a description carries (the ownership tag, when it has one).
fn tags_of(description: Option<&str>, owner: &Owner) -> BTreeMap<String, String> {
    let (key, _) = owner.tag();
    let marker = format!("{key}=");
    description
        .and_then(|d| d.split_whitespace().find_map(|w| w.strip_prefix(&marker)))
        .map(|value| BTreeMap::from([(key, value.to_string())]))
        .unwrap_or_default()
}

/// The names of a created network's resources.
#[derive(Clone, Debug)]
struct Names {
    network: String,
    subnetwork: String,
    router: String,
    nat: String,
}

impl Names {
    fn new(owner: &Owner) -> Self {
        let base = naming::derive_cloud_name(owner.namespace(), owner.cluster(), &BASE_NAME);
        Self {
            network: base.clone(),
            subnetwork: format!("{base}-nodes"),
            router: format!("{base}-router"),
            nat: format!("{base}-nat"),
        }
    }
}

/// One build or tear-down pass over a created network.
struct NetworkScope<'a> {
    compute: &'a Compute,
    owner: &'a Owner,
    names: Names,
    plan: Option<&'a CreatedNetwork>,
}

impl NetworkScope<'_> {
    fn network_url(&self) -> String {
        format!(
            "projects/{}/global/networks/{}",
            self.compute.project, self.names.network
        )
    }

    /// What to do with a found resource of ours, or not ours.
    fn check(
        &self,
        what: &str,
        name: &str,
        description: Option<&str>,
    ) -> Result<(), ProviderError> {
        match self.owner.decide(&tags_of(description, self.owner), false) {
            Ownership::Ours => Ok(()),
            Ownership::Adopt | Ownership::Conflict(_) => Err(ProviderError::terminal(
                Reason::NameConflict,
                format!(
                    "the {what} {name} already exists in project {} and was not created for this cluster; nothing was changed. Delete or rename it, or bring the network by name instead (spec.network.id)",
                    self.compute.project
                ),
            )),
        }
    }
}

/// What the walk found or made.
#[derive(Debug, Default)]
struct Built {
    network: bool,
    subnet_cidr: Option<String>,
}

/// The created network's services, in build order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NetworkService {
    Network,
    Subnetwork,
    Router,
}

impl Service for NetworkService {
    const ORDER: &'static [Self] = &[Self::Network, Self::Subnetwork, Self::Router];

    fn label(self) -> &'static str {
        match self {
            Self::Network => "VPC network",
            Self::Subnetwork => "Subnetwork",
            Self::Router => "Cloud NAT",
        }
    }
}

/// A create that Compute answered ALREADY_EXISTS to is one still being made (or made by a pass
/// that did not see it yet): wait for it.
fn created_or_pending(
    result: Result<gce::Operation, Failure>,
    what: &str,
) -> Result<Progress, ProviderError> {
    match result {
        Ok(_) => Ok(Progress::creating(format!("creating the {what}"))),
        Err(f) if f.already_exists => Ok(Progress::waiting(format!("the {what} is being created"))),
        Err(f) => Err(f.into()),
    }
}

impl Builds<NetworkScope<'_>, Built> for NetworkService {
    async fn reconcile(
        self,
        s: &NetworkScope<'_>,
        built: &mut Built,
    ) -> Result<Progress, ProviderError> {
        let c = s.compute;
        let Some(plan) = s.plan else {
            return Ok(Progress::Blocked("no network to build".into()));
        };
        match self {
            NetworkService::Network => {
                let found = absent_if_not_found(
                    counted(
                        &c.calls,
                        SERVICE,
                        "networks.get",
                        c.clients
                            .networks
                            .get()
                            .set_project(&c.project)
                            .set_network(&s.names.network)
                            .send(),
                    )
                    .await,
                )?;
                if let Some(n) = found {
                    s.check("VPC network", &s.names.network, n.description.as_deref())?;
                    built.network = true;
                    return Ok(Progress::Ready);
                }
                let body = gce::Network::new()
                    .set_name(&s.names.network)
                    .set_auto_create_subnetworks(false)
                    .set_description(description(s.owner));
                created_or_pending(
                    counted(
                        &c.calls,
                        SERVICE,
                        "networks.insert",
                        c.clients
                            .networks
                            .insert()
                            .set_project(&c.project)
                            .set_body(body)
                            .send(),
                    )
                    .await,
                    "VPC network",
                )
            }
            NetworkService::Subnetwork => {
                if !built.network {
                    return Ok(Progress::Blocked("waiting for the VPC network".into()));
                }
                let found = absent_if_not_found(
                    counted(
                        &c.calls,
                        SERVICE,
                        "subnetworks.get",
                        c.clients
                            .subnetworks
                            .get()
                            .set_project(&c.project)
                            .set_region(&c.region)
                            .set_subnetwork(&s.names.subnetwork)
                            .send(),
                    )
                    .await,
                )?;
                if let Some(sub) = found {
                    s.check(
                        "subnetwork",
                        &s.names.subnetwork,
                        sub.description.as_deref(),
                    )?;
                    built.subnet_cidr = sub.ip_cidr_range.clone();
                    return Ok(Progress::Ready);
                }
                let body = gce::Subnetwork::new()
                    .set_name(&s.names.subnetwork)
                    .set_network(s.network_url())
                    .set_ip_cidr_range(&plan.nodes)
                    .set_private_ip_google_access(true)
                    .set_description(description(s.owner))
                    .set_secondary_ip_ranges([
                        gce::SubnetworkSecondaryRange::new()
                            .set_range_name(scope::DEFAULT_PODS_RANGE)
                            .set_ip_cidr_range(&plan.pods),
                        gce::SubnetworkSecondaryRange::new()
                            .set_range_name(scope::DEFAULT_SERVICES_RANGE)
                            .set_ip_cidr_range(&plan.services),
                    ]);
                created_or_pending(
                    counted(
                        &c.calls,
                        SERVICE,
                        "subnetworks.insert",
                        c.clients
                            .subnetworks
                            .insert()
                            .set_project(&c.project)
                            .set_region(&c.region)
                            .set_body(body)
                            .send(),
                    )
                    .await,
                    "subnetwork",
                )
            }
            NetworkService::Router => {
                let found = absent_if_not_found(
                    counted(
                        &c.calls,
                        SERVICE,
                        "routers.get",
                        c.clients
                            .routers
                            .get()
                            .set_project(&c.project)
                            .set_region(&c.region)
                            .set_router(&s.names.router)
                            .send(),
                    )
                    .await,
                )?;
                if let Some(r) = found {
                    s.check("Cloud Router", &s.names.router, r.description.as_deref())?;
                    return Ok(Progress::Ready);
                }
                let body = gce::Router::new()
                    .set_name(&s.names.router)
                    .set_network(s.network_url())
                    .set_description(description(s.owner))
                    .set_nats([gce::RouterNat::new()
                        .set_name(&s.names.nat)
                        .set_nat_ip_allocate_option(gce::router_nat::NatIpAllocateOption::AutoOnly)
                        .set_source_subnetwork_ip_ranges_to_nat(
                            gce::router_nat::SourceSubnetworkIpRangesToNat::AllSubnetworksAllIpRanges,
                        )]);
                created_or_pending(
                    counted(
                        &c.calls,
                        SERVICE,
                        "routers.insert",
                        c.clients
                            .routers
                            .insert()
                            .set_project(&c.project)
                            .set_region(&c.region)
                            .set_body(body)
                            .send(),
                    )
                    .await,
                    "Cloud Router with its NAT",
                )
            }
        }
    }
}

impl TearsDown<NetworkScope<'_>> for NetworkService {
    async fn delete(self, s: &NetworkScope<'_>) -> Result<Removal, ProviderError> {
        let c = s.compute;
        let ours = |description: Option<&str>| s.owner.owns(&tags_of(description, s.owner));
        let deleted = |result: Result<gce::Operation, Failure>, what: &str| match result {
            Ok(_) => Ok(Removal::deleting(format!("deleting the {what}"))),
            Err(f) if f.error.is_not_found() => Ok(Removal::Gone),
            // Still used (the GKE cluster is being deleted): wait.
            Err(f)
                if matches!(
                    f.error,
                    provider_runtime::CloudError::Invalid { .. }
                        | provider_runtime::CloudError::InUse(_)
                ) =>
            {
                Ok(Removal::waiting(format!(
                    "the {what} is still in use: {}",
                    provider_runtime::ProviderError::from(f)
                )))
            }
            Err(f) => Err(f.into()),
        };
        match self {
            NetworkService::Router => {
                let found = absent_if_not_found(
                    counted(
                        &c.calls,
                        SERVICE,
                        "routers.get",
                        c.clients
                            .routers
                            .get()
                            .set_project(&c.project)
                            .set_region(&c.region)
                            .set_router(&s.names.router)
                            .send(),
                    )
                    .await,
                )?;
                match found {
                    Some(r) if ours(r.description.as_deref()) => deleted(
                        counted(
                            &c.calls,
                            SERVICE,
                            "routers.delete",
                            c.clients
                                .routers
                                .delete()
                                .set_project(&c.project)
                                .set_region(&c.region)
                                .set_router(&s.names.router)
                                .send(),
                        )
                        .await,
                        "Cloud Router",
                    ),
                    _ => Ok(Removal::Gone),
                }
            }
            NetworkService::Subnetwork => {
                let found = absent_if_not_found(
                    counted(
                        &c.calls,
                        SERVICE,
                        "subnetworks.get",
                        c.clients
                            .subnetworks
                            .get()
                            .set_project(&c.project)
                            .set_region(&c.region)
                            .set_subnetwork(&s.names.subnetwork)
                            .send(),
                    )
                    .await,
                )?;
                match found {
                    Some(sub) if ours(sub.description.as_deref()) => deleted(
                        counted(
                            &c.calls,
                            SERVICE,
                            "subnetworks.delete",
                            c.clients
                                .subnetworks
                                .delete()
                                .set_project(&c.project)
                                .set_region(&c.region)
                                .set_subnetwork(&s.names.subnetwork)
                                .send(),
                        )
                        .await,
                        "subnetwork",
                    ),
                    _ => Ok(Removal::Gone),
                }
            }
            NetworkService::Network => {
                let found = absent_if_not_found(
                    counted(
                        &c.calls,
                        SERVICE,
                        "networks.get",
                        c.clients
                            .networks
                            .get()
                            .set_project(&c.project)
                            .set_network(&s.names.network)
                            .send(),
                    )
                    .await,
                )?;
                match found {
                    Some(n) if ours(n.description.as_deref()) => deleted(
                        counted(
                            &c.calls,
                            SERVICE,
                            "networks.delete",
                            c.clients
                                .networks
                                .delete()
                                .set_project(&c.project)
                                .set_network(&s.names.network)
                                .send(),
                        )
                        .await,
                        "VPC network",
                    ),
                    _ => Ok(Removal::Gone),
                }
            }
        }
    }
}

impl InfraClusterCloud for GkeInfraCluster {
    type Object = GKECluster;
    type Clients = Compute;
    type Plan = CreatedNetwork;
    type Network = GKENetworkStatus;
    type Status = GKEClusterStatus;

    fn kind(&self) -> &'static str {
        "GKECluster"
    }

    fn mode(&self, obj: &GKECluster) -> Result<NetworkMode<CreatedNetwork>, String> {
        network_mode(&obj.spec)
    }

    async fn connect(
        &self,
        obj: &GKECluster,
        client: &kube::Client,
        calls: &CloudCalls,
    ) -> Result<Compute, ProviderError> {
        let infra = Infra::from_spec(&obj.spec);
        let clients = scope::clients_for(
            &self.shared,
            client,
            &obj.namespace().unwrap_or_default(),
            &infra,
        )
        .await?;
        Ok(Compute {
            clients,
            calls: calls.clone(),
            project: infra.project,
            region: infra.region,
        })
    }

    async fn observe_brought(
        &self,
        obj: &GKECluster,
        c: &Compute,
    ) -> NetworkReport<GKENetworkStatus> {
        let infra = Infra::from_spec(&obj.spec);
        let invalid =
            |m: String| NetworkReport::failed(ProviderError::terminal(Reason::InvalidSpec, m));
        let network = match absent_if_not_found(
            counted(
                &c.calls,
                SERVICE,
                "networks.get",
                c.clients
                    .networks
                    .get()
                    .set_project(&c.project)
                    .set_network(&infra.network)
                    .send(),
            )
            .await,
        ) {
            Err(f) => return NetworkReport::failed(f.into()),
            Ok(None) => {
                return invalid(format!(
                    "the VPC network {} (spec.network.id) does not exist in project {}",
                    infra.network, c.project
                ));
            }
            Ok(Some(n)) => n,
        };
        let subnet = match absent_if_not_found(
            counted(
                &c.calls,
                SERVICE,
                "subnetworks.get",
                c.clients
                    .subnetworks
                    .get()
                    .set_project(&c.project)
                    .set_region(&c.region)
                    .set_subnetwork(&infra.subnetwork)
                    .send(),
            )
            .await,
        ) {
            Err(f) => return NetworkReport::failed(f.into()),
            Ok(None) => {
                return invalid(format!(
                    "the subnetwork {} (spec.network.subnetIDs) does not exist in {} of project {}",
                    infra.subnetwork, c.region, c.project
                ));
            }
            Ok(Some(s)) => s,
        };
        let owner_network = subnet
            .network
            .as_deref()
            .map(last_segment)
            .unwrap_or_default();
        if owner_network != network.name.as_deref().unwrap_or_default() {
            return invalid(format!(
                "the subnetwork {} belongs to the network {owner_network}, not {} (spec.network.id)",
                infra.subnetwork, infra.network
            ));
        }
        let ranges: Vec<&str> = subnet
            .secondary_ip_ranges
            .iter()
            .filter_map(|r| r.range_name.as_deref())
            .collect();
        for (range, field) in [
            (&infra.pods_range, "spec.gke.podsRange"),
            (&infra.services_range, "spec.gke.servicesRange"),
        ] {
            if !ranges.contains(&range.as_str()) {
                return invalid(format!(
                    "the subnetwork {} has no secondary range named {range} ({field}); GKE needs one for Pods and one for Services",
                    infra.subnetwork
                ));
            }
        }
        let status = GKENetworkStatus {
            network: Some(infra.network.clone()),
            subnetwork: Some(infra.subnetwork.clone()),
            cidr_block: subnet.ip_cidr_range.clone(),
            pods_range_name: Some(infra.pods_range.clone()),
            services_range_name: Some(infra.services_range.clone()),
            router: None,
            zones: infra.zones.clone(),
            managed: false,
        };
        let message = format!(
            "using the brought VPC network {} and subnetwork {} in {}",
            infra.network,
            infra.subnetwork,
            infra.zones.join(", ")
        );
        NetworkReport::ready(status, message, self.shared.rest_interval)
    }

    async fn build(
        &self,
        obj: &GKECluster,
        _ctx: &PassContext,
        compute: &Compute,
        owner: Owner,
        plan: CreatedNetwork,
    ) -> Result<NetworkReport<GKENetworkStatus>, ProviderError> {
        let infra = Infra::from_spec(&obj.spec);
        let names = Names::new(&owner);
        let scope = NetworkScope {
            compute,
            owner: &owner,
            names: names.clone(),
            plan: Some(&plan),
        };
        let timing = self.timing();
        let walk = walker::build::<NetworkService, _, Built>(&scope).await;
        let status = GKENetworkStatus {
            network: Some(names.network.clone()),
            subnetwork: Some(names.subnetwork.clone()),
            cidr_block: walk.built.subnet_cidr.clone().or(Some(plan.nodes.clone())),
            pods_range_name: Some(scope::DEFAULT_PODS_RANGE.into()),
            services_range_name: Some(scope::DEFAULT_SERVICES_RANGE.into()),
            router: Some(names.router.clone()),
            zones: infra.zones.clone(),
            managed: true,
        };
        let condition = walk.condition(contract::conditions::ConditionType::NetworkReady, |_| {
            format!(
                "VPC network {}, subnetwork {} ({}) and Cloud NAT {} ready in {}",
                names.network,
                names.subnetwork,
                plan.nodes,
                names.nat,
                infra.zones.join(", ")
            )
        });
        Ok(NetworkReport {
            network: Some(status),
            complete: walk.complete(),
            condition,
            requeue: walk.requeue(timing, self.shared.rest_interval),
            error: walk.error.map(|(_, e)| e),
        })
    }

    async fn tear_down(
        &self,
        _obj: &GKECluster,
        compute: &Compute,
        owner: Owner,
    ) -> Result<Cleanup, ProviderError> {
        let scope = NetworkScope {
            compute,
            owner: &owner,
            names: Names::new(&owner),
            plan: None,
        };
        let removal = walker::tear_down::<NetworkService, _>(&scope).await?;
        Ok(removal.cleanup(self.timing()))
    }

    fn network_status<'o>(&self, obj: &'o GKECluster) -> Option<&'o GKENetworkStatus> {
        obj.status.as_ref()?.network.as_ref()
    }

    fn zones<'n>(&self, network: &'n GKENetworkStatus) -> Vec<&'n str> {
        network.zones.iter().map(String::as_str).collect()
    }

    fn status(
        &self,
        common: InfraClusterStatusCommon,
        network: Option<GKENetworkStatus>,
    ) -> GKEClusterStatus {
        GKEClusterStatus {
            common,
            network,
            ..GKEClusterStatus::default()
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use contract::api::NetworkSpec;

    use super::*;
    use crate::api::GKEClusterOptions;

    fn spec(network: Option<NetworkSpec>) -> GKEClusterSpec {
        GKEClusterSpec {
            common: ClusterSpecCommon {
                region: "us-central1".into(),
                network,
                ..ClusterSpecCommon::default()
            },
            gke: GKEClusterOptions {
                project: "capi-project".into(),
                ..GKEClusterOptions::default()
            },
        }
    }

    #[test]
    fn no_network_means_a_created_one_with_the_default_ranges() {
        assert_eq!(
            network_mode(&spec(None)),
            Ok(NetworkMode::Create(CreatedNetwork {
                nodes: DEFAULT_NODES_CIDR.into(),
                pods: DEFAULT_PODS_CIDR.into(),
                services: DEFAULT_SERVICES_CIDR.into(),
            }))
        );
    }

    #[test]
    fn a_brought_network_needs_the_network_and_one_subnetwork() {
        let brought = |id: Option<&str>, subnets: &[&str]| {
            network_mode(&spec(Some(NetworkSpec {
                id: id.map(str::to_string),
                subnet_ids: subnets.iter().map(|s| s.to_string()).collect(),
                ..NetworkSpec::default()
            })))
        };
        assert_eq!(brought(Some("vpc"), &["nodes"]), Ok(NetworkMode::Brought));
        assert!(
            brought(None, &["nodes"])
                .unwrap_err()
                .starts_with("spec.network.id")
        );
        assert!(
            brought(Some("vpc"), &["a", "b"])
                .unwrap_err()
                .starts_with("spec.network.subnetIDs")
        );
    }

    #[test]
    fn overlapping_ranges_are_refused_naming_both_fields() {
        let mut s = spec(Some(NetworkSpec {
            cidr_block: Some("10.4.0.0/20".into()),
            ..NetworkSpec::default()
        }));
        let e = network_mode(&s).unwrap_err();
        assert!(
            e.contains("spec.network.cidrBlock") && e.contains("spec.gke.podsRange"),
            "{e}"
        );
        s.common.network = None;
        s.gke.services_range = Some("10.0.0.1/20".into());
        assert!(network_mode(&s).unwrap_err().contains("host bits"));
    }

    #[test]
    fn ownership_travels_in_the_description() {
        let owner = scope::owner("team-a", "prod");
        let d = description(&owner);
        assert!(owner.owns(&tags_of(Some(&d), &owner)), "{d}");
        let other = scope::owner("team-a", "dev");
        assert!(!other.owns(&tags_of(Some(&d), &other)));
        assert!(tags_of(None, &owner).is_empty());
        assert!(tags_of(Some("made by hand"), &owner).is_empty());
        assert_eq!(
            last_segment("https://www.googleapis.com/compute/v1/projects/p/global/networks/n"),
            "n"
        );
    }
}
