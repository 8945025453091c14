//! The emulated subscription's resources: resource groups, managed clusters with their agent
//! pools (each a virtual machine scale set of instances in the cluster's node resource group),
//! virtual networks with subnets, and the asynchronous operations changing them.

use std::collections::BTreeMap;

use serde_json::Value;
use tokio::time::Instant;

use super::arm::ArmError;
use crate::kit::workload::WorkloadEndpoint;

/// `provisioningState`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provisioning {
    /// Being created.
    Creating,
    /// Being changed.
    Updating,
    /// Changing its Kubernetes version.
    Upgrading,
    /// Changing its node count.
    Scaling,
    /// Being deleted.
    Deleting,
    /// At rest.
    Succeeded,
    /// The last operation failed.
    Failed,
    /// The last operation was canceled.
    Canceled,
}

impl Provisioning {
    /// The wire word.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Creating => "Creating",
            Self::Updating => "Updating",
            Self::Upgrading => "Upgrading",
            Self::Scaling => "Scaling",
            Self::Deleting => "Deleting",
            Self::Succeeded => "Succeeded",
            Self::Failed => "Failed",
            Self::Canceled => "Canceled",
        }
    }

    /// Whether an operation is running.
    pub fn busy(self) -> bool {
        !matches!(self, Self::Succeeded | Self::Failed | Self::Canceled)
    }
}

/// One scale-set instance.
#[derive(Debug, Clone)]
pub struct Vm {
    /// The scale set's instance id (`0`, `1`, …).
    pub instance_id: u32,
    /// Its availability zone, if the pool has zones.
    pub zone: Option<String>,
    /// The Kubernetes version its kubelet runs.
    pub version: String,
    /// When it is gone, once chosen for removal (scale-down, upgrade, deletion).
    pub leaving_at: Option<Instant>,
}

/// An agent pool.
#[derive(Debug, Clone)]
pub struct Pool {
    /// Its name.
    pub name: String,
    /// Its properties as last PUT (without the read-only ones).
    pub props: Value,
    /// `currentOrchestratorVersion`.
    pub current: String,
    /// `provisioningState`.
    pub state: Provisioning,
    /// The ETag.
    pub etag: String,
    /// Eight digits naming its scale set, `aks-<pool>-<digits>-vmss`.
    pub digits: String,
    /// Its instances, leaving ones included.
    pub vms: Vec<Vm>,
    /// The next instance id.
    pub next_id: u32,
}

impl Pool {
    /// `count`.
    pub fn count(&self) -> u32 {
        self.props["count"].as_u64().unwrap_or(0) as u32
    }

    /// `vmSize`.
    pub fn vm_size(&self) -> &str {
        self.props["vmSize"]
            .as_str()
            .unwrap_or(super::catalog::DEFAULT_VM_SIZE)
    }

    /// `mode`: `System` or `User`.
    pub fn is_system(&self) -> bool {
        self.props["mode"]
            .as_str()
            .is_some_and(|m| m.eq_ignore_ascii_case("System"))
    }

    /// The scale set's name.
    pub fn vmss(&self) -> String {
        format!("aks-{}-{}-vmss", self.name, self.digits)
    }

    /// The computer (and Node) name of an instance: the scale set's name and six base-36
    /// digits of its id.
    pub fn computer_name(&self, id: u32) -> String {
        let mut digits = String::new();
        let mut n = id;
        for _ in 0..6 {
            digits.insert(0, char::from_digit(n % 36, 36).unwrap_or('0'));
            n /= 36;
        }
        format!("{}{digits}", self.vmss())
    }

    /// Instances not leaving.
    pub fn serving(&self) -> impl Iterator<Item = &Vm> {
        self.vms.iter().filter(|v| v.leaving_at.is_none())
    }
}

/// A managed cluster.
#[derive(Debug, Clone)]
pub struct Cluster {
    /// Its subscription.
    pub subscription: String,
    /// Its resource group, as created.
    pub group: String,
    /// Its name.
    pub name: String,
    /// Its location.
    pub location: String,
    /// `tags`.
    pub tags: Value,
    /// `sku`.
    pub sku: Value,
    /// `identity`.
    pub identity: Value,
    /// Its properties as last PUT, without agent pools and read-only fields.
    pub props: Value,
    /// `currentKubernetesVersion`.
    pub current: String,
    /// `provisioningState`.
    pub state: Provisioning,
    /// The ETag.
    pub etag: String,
    /// Agent pools, in creation order.
    pub pools: Vec<Pool>,
    /// `nodeResourceGroup`.
    pub node_group: String,
    /// `fqdn`.
    pub fqdn: String,
    /// The running operation's id, which blocks every other change.
    pub busy: Option<String>,
    /// The principal (object id) that created it: cluster admin on its API server.
    pub creator: String,
    /// The static admin token of `listClusterAdminCredential` (local accounts).
    pub admin_token: String,
    /// The workload API server's id.
    pub workload_id: String,
    /// Whether its workload API server was asked to start.
    pub start_requested: bool,
    /// The workload API server, once it runs.
    pub endpoint: Option<WorkloadEndpoint>,
    /// Whether the Nodes must be rewritten from the instances.
    pub nodes_dirty: bool,
}

impl Cluster {
    /// The pool of that name (case-insensitive).
    pub fn pool(&self, name: &str) -> Option<&Pool> {
        self.pools
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(name))
    }

    /// The pool of that name, to change.
    pub fn pool_mut(&mut self, name: &str) -> Option<&mut Pool> {
        self.pools
            .iter_mut()
            .find(|p| p.name.eq_ignore_ascii_case(name))
    }

    /// Whether local accounts (the static admin credential) are off.
    pub fn local_accounts_disabled(&self) -> bool {
        self.props["disableLocalAccounts"] == true
    }

    /// The ARM id.
    pub fn id(&self) -> String {
        format!(
            "/subscriptions/{}/resourcegroups/{}/providers/Microsoft.ContainerService/managedClusters/{}",
            self.subscription, self.group, self.name
        )
    }
}

/// A resource group.
#[derive(Debug, Clone)]
pub struct Group {
    /// Its subscription.
    pub subscription: String,
    /// Its name, as created.
    pub name: String,
    /// Its location.
    pub location: String,
    /// `tags`.
    pub tags: Value,
    /// `managedBy` (a node resource group names its cluster).
    pub managed_by: Option<String>,
    /// Whether it is being deleted.
    pub deleting: bool,
}

/// A virtual network with its subnets.
#[derive(Debug, Clone)]
pub struct Vnet {
    /// Its subscription.
    pub subscription: String,
    /// Its resource group.
    pub group: String,
    /// Its name.
    pub name: String,
    /// Its location.
    pub location: String,
    /// `tags`.
    pub tags: Value,
    /// `properties.addressSpace.addressPrefixes`.
    pub prefixes: Vec<String>,
    /// Subnets: name → `addressPrefix`.
    pub subnets: BTreeMap<String, String>,
    /// `provisioningState`.
    pub state: Provisioning,
    /// The ETag.
    pub etag: String,
    /// `resourceGuid`.
    pub guid: String,
}

impl Vnet {
    /// The ARM id.
    pub fn id(&self) -> String {
        format!(
            "/subscriptions/{}/resourceGroups/{}/providers/Microsoft.Network/virtualNetworks/{}",
            self.subscription, self.group, self.name
        )
    }
}

/// What an operation does when it completes.
#[derive(Debug, Clone)]
pub enum Effect {
    /// The cluster runs: its pools' instances are launched.
    CreateCluster,
    /// The control plane runs `currentKubernetesVersion` = this.
    UpgradeCluster(String),
    /// The cluster's change is done.
    UpdateCluster,
    /// The cluster and its node resource group are gone.
    DeleteCluster,
    /// The pool has its count, version and settings.
    PutPool(String),
    /// The pool is gone.
    DeletePool(String),
    /// The network's change is done.
    PutVnet,
    /// The network is gone.
    DeleteVnet,
    /// The group and everything in it are gone.
    DeleteGroup,
}

/// What an operation works on (keys of [`State`]'s maps).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A cluster.
    Cluster(String),
    /// A virtual network.
    Vnet(String),
    /// A resource group.
    Group(String),
}

/// An operation's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpStatus {
    /// Running.
    InProgress,
    /// Done.
    Succeeded,
    /// Failed with an error.
    Failed,
    /// Replaced by another.
    Canceled,
}

impl OpStatus {
    /// The wire word.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InProgress => "InProgress",
            Self::Succeeded => "Succeeded",
            Self::Failed => "Failed",
            Self::Canceled => "Canceled",
        }
    }
}

/// An asynchronous operation.
#[derive(Debug, Clone)]
pub struct Operation {
    /// Its id (a GUID).
    pub id: String,
    /// Its subscription.
    pub subscription: String,
    /// The resource provider (`Microsoft.ContainerService`, `Microsoft.Network`).
    pub namespace: &'static str,
    /// Its location.
    pub location: String,
    /// What it works on.
    pub target: Target,
    /// Status.
    pub status: OpStatus,
    /// RFC 3339.
    pub start_time: String,
    /// RFC 3339, once done.
    pub end_time: Option<String>,
    /// When it may complete.
    pub done_at: Instant,
    /// How it failed.
    pub error: Option<ArmError>,
    /// What it does when it completes; taken then.
    pub effect: Option<Effect>,
    /// The state word it reports while running (`Creating`, `Upgrading`, …).
    pub kind: Provisioning,
}

/// Everything the subscription holds. Keys are lower case (ARM names are case-insensitive).
#[derive(Debug, Default)]
pub struct State {
    /// Groups by `sub/group`.
    pub groups: BTreeMap<String, Group>,
    /// Clusters by `sub/group/name`.
    pub clusters: BTreeMap<String, Cluster>,
    /// Virtual networks by `sub/group/name`.
    pub vnets: BTreeMap<String, Vnet>,
    /// Operations by id (finished ones are kept).
    pub operations: BTreeMap<String, Operation>,
}

/// A lower-case key of its parts.
pub fn key(parts: &[&str]) -> String {
    parts.join("/").to_ascii_lowercase()
}

impl State {
    /// The node resource group's cluster, if `group` is one.
    pub fn cluster_of_node_group(&self, subscription: &str, group: &str) -> Option<&Cluster> {
        self.clusters.values().find(|c| {
            c.subscription.eq_ignore_ascii_case(subscription)
                && c.node_group.eq_ignore_ascii_case(group)
        })
    }

    /// vCPUs the subscription's instances use in `location` (leaving ones still count).
    pub fn vcpus_used(&self, subscription: &str, location: &str) -> u32 {
        self.clusters
            .values()
            .filter(|c| {
                c.subscription.eq_ignore_ascii_case(subscription)
                    && c.location.eq_ignore_ascii_case(location)
            })
            .flat_map(|c| c.pools.iter())
            .map(|p| super::catalog::vm_size(p.vm_size()).map_or(2, |s| s.0) * p.vms.len() as u32)
            .sum()
    }
}
