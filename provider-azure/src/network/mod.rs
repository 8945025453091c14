//! The cluster's Azure network, as an ordered list of Azure Resource Manager services.
//!
//! A created network is the resource group the cluster lives in and, inside it, a virtual
//! network with one subnet for the nodes. Each is one ARM resource kind in its own module,
//! walked in the order [`Service`] lists them to build and in reverse to tear down:
//!
//! | service | builds | needs |
//! | --- | --- | --- |
//! | [`resource_group`] | the resource group: used as it is when it exists, created and tagged as ours when it does not | |
//! | [`virtual_network`] | the virtual network (default block [`DEFAULT_VNET_CIDR`]) with the nodes' subnet [`SUBNET`] (the block's first /16), tagged as ours | resource group |
//!
//! Every service reads its resource by ARM path once per pass. A resource group or virtual
//! network that Azure is still deleting makes the service wait. A missing resource is created
//! with the user's additional tags and the cluster's ownership tag; a virtual network that
//! exists is ready once Azure reports it provisioned with the nodes' subnet.
//!
//! Ownership is found by the cluster's ownership tag in a resource's tags. A resource group
//! that exists without it is used but never deleted. A virtual network with the provider's name
//! ([`vnet_name`]) without it is not ours: the pass stops with `NameConflict` and nothing is
//! changed. Networks are never adopted: bringing a subnet by id ([`bring_your_own`]) is how a
//! cluster uses a network it did not create.
//!
//! Tear-down walks the services backwards, each deleting only what carries the cluster's
//! ownership tag. The virtual network goes first. The resource group goes only once no managed
//! cluster is left in it. A resource that is gone counts as removed; one still being deleted or
//! still in use leaves the step pending until the next look.

pub mod bring_your_own;
pub mod resource_group;
pub mod virtual_network;

use contract::api::{NetworkStatus, SubnetStatus};
use contract::naming::{self, NameLimits};
use contract::ownership::Owner;
use provider_runtime::infra_cluster::SeenNetwork;
use provider_runtime::walker::{self, Builds, Progress, Removal, TearsDown};
use provider_runtime::{CloudCalls, CloudError, ProviderError};
use serde_json::{Value, json};

use crate::api::{AKSCluster, AKSClusterObserved};
use crate::client::{self, Arm};
use crate::reconcile::cluster::CreatedNetwork;
use crate::scope::Infra;

/// The default address space of a created virtual network (AKS's own default).
pub const DEFAULT_VNET_CIDR: &str = "10.224.0.0/12";

/// The nodes' subnet of a created network.
pub const SUBNET: &str = "nodes";

/// Virtual network names the provider derives (`-vnet` follows): Azure allows 64.
const BASE_NAME: NameLimits = NameLimits {
    what: "Azure virtual network name",
    max_len: 59,
    punctuation: "-_.",
    first: naming::FirstChar::Alphanumeric,
    must_end_alphanumeric: true,
    lowercase: false,
};

/// The ARM client of one pass, with where the network lives.
pub struct Network {
    /// The ARM client.
    pub arm: Arm,
    /// Counts and paces the provider's cloud calls.
    pub calls: CloudCalls,
    /// The subscription, resource group, location, zones and tags the spec names.
    pub infra: Infra,
}

/// The name of a created virtual network: `<namespace>-<cluster>-vnet`, the base made valid
/// for Azure.
pub fn vnet_name(owner: &Owner) -> String {
    format!(
        "{}-vnet",
        naming::derive_cloud_name(owner.namespace(), owner.cluster(), &BASE_NAME)
    )
}

/// One build or tear-down pass over a created network.
pub struct Scope<'a> {
    /// The ARM client and where the network lives.
    pub net: &'a Network,
    /// Whose network it is.
    pub owner: &'a Owner,
    /// The virtual network's name.
    pub vnet: String,
    /// The network to build; `None` while tearing down.
    pub plan: Option<&'a CreatedNetwork>,
}

impl Scope<'_> {
    /// The resource group's ARM path.
    pub fn group_path(&self) -> String {
        self.net.arm.group_path(&self.net.infra.resource_group)
    }

    /// The virtual network's ARM path.
    pub fn vnet_path(&self) -> String {
        format!(
            "{}/providers/Microsoft.Network/virtualNetworks/{}",
            self.group_path(),
            self.vnet
        )
    }

    /// The tags of every created resource: the user's additional tags and the ownership tag.
    pub fn tags(&self) -> Value {
        let mut tags = self.net.infra.additional_tags.clone();
        let (k, v) = self.owner.tag();
        tags.insert(k, v);
        json!(tags)
    }
}

/// What the walk found or made.
#[derive(Debug, Default)]
pub struct Built {
    /// The resource group carries the cluster's ownership tag.
    pub group_ours: bool,
    /// The resource group exists.
    pub group: bool,
    /// The nodes' subnet's ARM id, once the virtual network has it.
    pub subnet_id: Option<String>,
    /// The nodes' subnet's block, as Azure reports it.
    pub subnet_cidr: Option<String>,
}

/// What the result of a tear-down turn's delete call means for `what` (a resource named in
/// messages): accepted, it is being deleted; not found, it is gone; in use, the step waits;
/// any other error fails the turn.
fn after_delete(
    result: Result<client::Answer, client::Failure>,
    what: String,
) -> Result<Removal, ProviderError> {
    match result {
        Ok(_) => Ok(Removal::deleting(format!("deleting the {what}"))),
        Err(f) if f.error.is_not_found() => Ok(Removal::Gone),
        Err(f) if matches!(f.error, CloudError::InUse(_)) => Ok(Removal::waiting(format!(
            "the {what} is still in use: {}",
            f.error
        ))),
        Err(f) => Err(f.into()),
    }
}

/// The created network's services, in build order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Service {
    /// [`resource_group`].
    ResourceGroup,
    /// [`virtual_network`].
    VirtualNetwork,
}

impl walker::Service for Service {
    const ORDER: &'static [Self] = &[Self::ResourceGroup, Self::VirtualNetwork];

    fn label(self) -> &'static str {
        match self {
            Self::ResourceGroup => "Resource group",
            Self::VirtualNetwork => "Virtual network",
        }
    }
}

impl Builds<Scope<'_>, Built> for Service {
    async fn reconcile(self, s: &Scope<'_>, built: &mut Built) -> Result<Progress, ProviderError> {
        let Some(plan) = s.plan else {
            return Ok(Progress::Blocked("no network to build".into()));
        };
        match self {
            Service::ResourceGroup => resource_group::reconcile(s, built).await,
            Service::VirtualNetwork => virtual_network::reconcile(s, plan, built).await,
        }
    }
}

impl TearsDown<Scope<'_>> for Service {
    async fn delete(self, s: &Scope<'_>) -> Result<Removal, ProviderError> {
        match self {
            Service::VirtualNetwork => virtual_network::delete(s).await,
            Service::ResourceGroup => resource_group::delete(s).await,
        }
    }
}

/// The Azure network as the provider reads and fills it: the shared part of the status
/// ([`NetworkStatus`]: the virtual network and the nodes' subnet) and what only AKS reports
/// ([`AKSClusterObserved`]) in one struct.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AzureNetwork {
    /// The resource group.
    pub resource_group: Option<String>,
    /// Whether the provider created the resource group (and so deletes it).
    pub resource_group_managed: bool,
    /// The virtual network's resource ID.
    pub virtual_network: Option<String>,
    /// The virtual network's address space, when known.
    pub network_cidr: Option<String>,
    /// The nodes' subnet's resource ID.
    pub subnet: Option<String>,
    /// The subnet's block.
    pub cidr_block: Option<String>,
    /// The availability zones in use (the failure domains).
    pub zones: Vec<String>,
    /// Whether the provider created the network (and so deletes it) or the user brought it.
    pub managed: bool,
}

impl AzureNetwork {
    /// The network as the status reports it: the shared shape (the virtual network, its one
    /// regional subnet serving every zone in use) and the `aks` block.
    pub fn seen(self) -> SeenNetwork<AKSClusterObserved> {
        SeenNetwork {
            shared: NetworkStatus {
                id: self.virtual_network.unwrap_or_default(),
                cidr_block: self.network_cidr,
                managed: self.managed,
                subnets: self
                    .subnet
                    .map(|id| SubnetStatus {
                        id,
                        cidr_block: self.cidr_block,
                        zones: self.zones,
                        // Nodes reach the internet through the cluster's load balancer.
                        public: false,
                    })
                    .into_iter()
                    .collect(),
            },
            own: AKSClusterObserved {
                resource_group: self.resource_group,
                resource_group_managed: self.resource_group_managed,
            },
        }
    }

    /// The network the AKSCluster's status describes, if any.
    pub fn of(cluster: &AKSCluster) -> Option<Self> {
        let status = cluster.status.as_ref()?;
        let shared = status.common.network.as_ref()?;
        let own = status.aks.clone().unwrap_or_default();
        let subnet = shared.subnets.first();
        Some(Self {
            resource_group: own.resource_group,
            resource_group_managed: own.resource_group_managed,
            virtual_network: Some(shared.id.clone()).filter(|id| !id.is_empty()),
            network_cidr: shared.cidr_block.clone(),
            subnet: subnet.map(|s| s.id.clone()),
            cidr_block: subnet.and_then(|s| s.cidr_block.clone()),
            zones: subnet.map(|s| s.zones.clone()).unwrap_or_default(),
            managed: shared.managed,
        })
    }
}

/// Leaves our network in place for `spec.deletionPolicy: Orphan`: the virtual network, then the
/// resource group, loses our ownership tag where it carries it (each PUT back as read, its tags
/// less ours: ARM replaces the whole map).
pub async fn release(s: &Scope<'_>) -> Result<(), ProviderError> {
    let n = s.net;
    let (key, _) = s.owner.tag();
    let owned = |found: &Value| {
        let tags: std::collections::BTreeMap<String, String> =
            serde_json::from_value(found["tags"].clone()).unwrap_or_default();
        s.owner.owns(&tags)
    };
    let vnet = n
        .arm
        .get::<Value>(
            &n.calls,
            "VirtualNetworks_Get",
            &s.vnet_path(),
            client::NETWORK,
        )
        .await?;
    if let Some(mut v) = vnet.filter(|v| owned(v)) {
        if let Some(tags) = v["tags"].as_object_mut() {
            tags.remove(&key);
        }
        let subnets: Vec<Value> = v["properties"]["subnets"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|x| {
                json!({"name": x["name"], "properties": {"addressPrefix": x["properties"]["addressPrefix"]}})
            })
            .collect();
        let body = json!({
            "location": v["location"],
            "tags": v["tags"],
            "properties": {
                "addressSpace": v["properties"]["addressSpace"],
                "subnets": subnets,
            },
        });
        n.arm
            .call(
                &n.calls,
                "VirtualNetworks_CreateOrUpdate",
                reqwest::Method::PUT,
                &s.vnet_path(),
                client::NETWORK,
                Some(&body),
                None,
            )
            .await?;
    }
    let group = n
        .arm
        .get::<Value>(
            &n.calls,
            "ResourceGroups_Get",
            &s.group_path(),
            client::RESOURCES,
        )
        .await?;
    if let Some(mut g) = group.filter(|g| owned(g)) {
        if let Some(tags) = g["tags"].as_object_mut() {
            tags.remove(&key);
        }
        let body = json!({"location": g["location"], "tags": g["tags"]});
        n.arm
            .call(
                &n.calls,
                "ResourceGroups_CreateOrUpdate",
                reqwest::Method::PUT,
                &s.group_path(),
                client::RESOURCES,
                Some(&body),
                None,
            )
            .await?;
    }
    Ok(())
}
