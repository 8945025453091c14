//! The cluster's GCP network, as an ordered list of Compute Engine services.
//!
//! A created network is a custom-mode VPC network, one subnetwork in the cluster's region (the
//! nodes' block, with one secondary range for Pods and one for Services) and a Cloud Router with
//! Cloud NAT, so that private nodes reach the internet. Each is one Compute resource kind in its
//! own module, walked in the order [`Service`] lists them to build and in reverse to tear down:
//!
//! | service | builds | needs |
//! | --- | --- | --- |
//! | [`vpc`] | the VPC network, in custom mode (it makes no subnetworks of its own) | |
//! | [`subnetwork`] | the nodes' subnetwork with Private Google Access and the Pods and Services ranges | VPC network |
//! | [`router`] | a Cloud Router with Cloud NAT, its addresses allocated by Google, for every range of every subnetwork | VPC network |
//!
//! Every service reads its resource by name ([`Names`]) once per pass. A resource that is there
//! and ours is ready. A missing one is created; a create that Compute answers with
//! ALREADY_EXISTS is one still being made, so the service waits for it.
//!
//! Compute resources carry no labels, so the cluster's ownership tag is written into each
//! resource's `description` when it is created and read back from it. A resource with the
//! provider's name that does not carry this cluster's ownership tag is not ours: the pass stops
//! with `NameConflict` and nothing is changed. Networks are never adopted: bringing a network by
//! name ([`bring_your_own`]) is how a cluster uses one it did not create.
//!
//! Tear-down walks the services backwards. Each finds its resource by name and deletes it only
//! when its description carries this cluster's ownership tag; a resource that is gone, or is not
//! ours, counts as removed. A resource still in use (the GKE cluster is still being deleted)
//! leaves the step pending until the next look.

pub mod bring_your_own;
pub mod router;
pub mod subnetwork;
pub mod vpc;

use std::collections::BTreeMap;

use contract::api::{NetworkStatus, SubnetStatus};
use contract::conditions::Reason;
use contract::naming::{self, NameLimits};
use contract::ownership::{Owner, Ownership};
use google_cloud_compute_v1::model as gce;
use provider_runtime::infra_cluster::SeenNetwork;
use provider_runtime::walker::{self, Builds, Progress, Removal, TearsDown};
use provider_runtime::{CloudCalls, ProviderError};

use crate::api::{GKECluster, GKEClusterObserved};
use crate::client::{Clients, Failure};
use crate::reconcile::cluster::CreatedNetwork;

/// The default block of a created network's nodes.
pub const DEFAULT_NODES_CIDR: &str = "10.0.0.0/20";
/// The default Pods range of a created subnetwork.
pub const DEFAULT_PODS_CIDR: &str = "10.4.0.0/14";
/// The default Services range of a created subnetwork.
pub const DEFAULT_SERVICES_CIDR: &str = "10.8.0.0/20";

/// Compute resource names the provider derives (a suffix follows): Compute allows 63.
const BASE_NAME: NameLimits = NameLimits {
    what: "Compute Engine resource name",
    max_len: 50,
    ..naming::GKE_CLUSTER
};

/// The service name under which Compute calls are counted.
const SERVICE: &str = "compute";

/// The last segment of a name or self link (`…/networks/n` → `n`).
pub fn last_segment(reference: &str) -> &str {
    reference
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(reference)
}

/// The Compute clients of one pass, with the project and region.
pub struct Compute {
    clients: Clients,
    calls: CloudCalls,
    project: String,
    region: String,
}

impl Compute {
    /// The clients of `project`, working in `region`, with the pass's call accounting.
    pub fn new(clients: Clients, calls: CloudCalls, project: String, region: String) -> Self {
        Self {
            clients,
            calls,
            project,
            region,
        }
    }
}

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
pub struct Names {
    /// The VPC network.
    pub network: String,
    /// The nodes' subnetwork.
    pub subnetwork: String,
    /// The Cloud Router.
    pub router: String,
    /// The Cloud NAT on the router.
    pub nat: String,
}

impl Names {
    /// The names of `owner`'s network, derived from its namespace and cluster name.
    pub fn new(owner: &Owner) -> Self {
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
pub struct Scope<'a> {
    /// The pass's Compute clients.
    pub compute: &'a Compute,
    /// Whose network it is.
    pub owner: &'a Owner,
    /// The resources' names.
    pub names: Names,
    /// The network to build; `None` while tearing down.
    pub plan: Option<&'a CreatedNetwork>,
}

impl Scope<'_> {
    /// The VPC network's partial URL, as a subnetwork or router names its network.
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

    /// Whether a resource with this description carries this cluster's ownership tag.
    fn owns(&self, description: Option<&str>) -> bool {
        self.owner.owns(&tags_of(description, self.owner))
    }
}

/// What the walk found or made.
#[derive(Debug, Default)]
pub struct Built {
    /// The VPC network is there and ours.
    pub network: bool,
    /// The subnetwork's primary range, as Compute reports it.
    pub subnet_cidr: Option<String>,
}

/// The created network's services, in build order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Service {
    /// [`vpc`].
    Vpc,
    /// [`subnetwork`].
    Subnetwork,
    /// [`router`].
    Router,
}

impl walker::Service for Service {
    const ORDER: &'static [Self] = &[Self::Vpc, Self::Subnetwork, Self::Router];

    fn label(self) -> &'static str {
        match self {
            Self::Vpc => "VPC network",
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

/// What the answer to a delete means: deleting (look again), already gone, or still in use
/// (wait); any other error fails the turn.
fn after_delete(
    result: Result<gce::Operation, Failure>,
    what: &str,
) -> Result<Removal, ProviderError> {
    match result {
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
    }
}

impl Builds<Scope<'_>, Built> for Service {
    async fn reconcile(self, s: &Scope<'_>, built: &mut Built) -> Result<Progress, ProviderError> {
        let Some(plan) = s.plan else {
            return Ok(Progress::Blocked("no network to build".into()));
        };
        match self {
            Service::Vpc => vpc::reconcile(s, built).await,
            Service::Subnetwork => subnetwork::reconcile(s, plan, built).await,
            Service::Router => router::reconcile(s).await,
        }
    }
}

impl TearsDown<Scope<'_>> for Service {
    async fn delete(self, s: &Scope<'_>) -> Result<Removal, ProviderError> {
        match self {
            Service::Vpc => vpc::delete(s).await,
            Service::Subnetwork => subnetwork::delete(s).await,
            Service::Router => router::delete(s).await,
        }
    }
}

/// The Google Cloud network as the provider reads and fills it: the shared part of the status
/// ([`NetworkStatus`]: the VPC network and the nodes' subnetwork) and what only GKE reports
/// ([`GKEClusterObserved`]) in one struct.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GcpNetwork {
    /// The VPC network's name.
    pub network: Option<String>,
    /// The nodes' subnetwork's name.
    pub subnetwork: Option<String>,
    /// The subnetwork's primary range.
    pub cidr_block: Option<String>,
    /// The secondary range for Pods.
    pub pods_range_name: Option<String>,
    /// The secondary range for Services.
    pub services_range_name: Option<String>,
    /// The Cloud Router carrying the NAT of a created network.
    pub router: Option<String>,
    /// The zones in use (the failure domains).
    pub zones: Vec<String>,
    /// Whether the provider created the network (and so deletes it) or the user brought it.
    pub managed: bool,
}

impl GcpNetwork {
    /// The network as the status reports it: the shared shape (the VPC network by name, its
    /// one regional subnetwork serving every zone in use) and the `gke` block.
    pub fn seen(self) -> SeenNetwork<GKEClusterObserved> {
        SeenNetwork {
            shared: NetworkStatus {
                id: self.network.unwrap_or_default(),
                cidr_block: self.cidr_block.clone(),
                managed: self.managed,
                subnets: self
                    .subnetwork
                    .map(|id| SubnetStatus {
                        id,
                        cidr_block: self.cidr_block,
                        zones: self.zones,
                        // Nodes reach the internet through Cloud NAT, not addresses of their own.
                        public: false,
                    })
                    .into_iter()
                    .collect(),
            },
            own: GKEClusterObserved {
                pods_range_name: self.pods_range_name,
                services_range_name: self.services_range_name,
                router: self.router,
            },
        }
    }

    /// The network the GKECluster's status describes, if any.
    pub fn of(cluster: &GKECluster) -> Option<Self> {
        let status = cluster.status.as_ref()?;
        let shared = status.common.network.as_ref()?;
        let own = status.gke.clone().unwrap_or_default();
        let subnet = shared.subnets.first();
        Some(Self {
            network: Some(shared.id.clone()).filter(|id| !id.is_empty()),
            subnetwork: subnet.map(|s| s.id.clone()),
            cidr_block: subnet.and_then(|s| s.cidr_block.clone()),
            pods_range_name: own.pods_range_name,
            services_range_name: own.services_range_name,
            router: own.router,
            zones: subnet.map(|s| s.zones.clone()).unwrap_or_default(),
            managed: shared.managed,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::scope;

    #[test]
    fn ownership_travels_in_the_description() {
        let owner = Owner::new(scope::PROVIDER, "team-a", "prod");
        let d = description(&owner);
        assert!(owner.owns(&tags_of(Some(&d), &owner)), "{d}");
        let other = Owner::new(scope::PROVIDER, "team-a", "dev");
        assert!(!other.owns(&tags_of(Some(&d), &other)));
        assert!(tags_of(None, &owner).is_empty());
        assert!(tags_of(Some("made by hand"), &owner).is_empty());
        assert_eq!(
            last_segment("https://www.googleapis.com/compute/v1/projects/p/global/networks/n"),
            "n"
        );
    }
}
