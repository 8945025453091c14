//! The emulated project's resources: GKE clusters with their node pools and instances, the
//! operations that change them, and the Compute Engine networks, subnetworks and routers.

use std::collections::BTreeMap;

use serde_json::Value;
use tokio::time::Instant;

use super::error::GoogleError;
use crate::kit::workload::WorkloadEndpoint;

/// A cluster's or node pool's status (GKE's `Status` enums share these names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Being created.
    Provisioning,
    /// Serving.
    Running,
    /// A node pool serving with an error (quota, stockout).
    RunningWithError,
    /// Being changed.
    Reconciling,
    /// Being deleted.
    Stopping,
    /// Failed.
    Error,
}

impl Status {
    /// The enum's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Provisioning => "PROVISIONING",
            Self::Running => "RUNNING",
            Self::RunningWithError => "RUNNING_WITH_ERROR",
            Self::Reconciling => "RECONCILING",
            Self::Stopping => "STOPPING",
            Self::Error => "ERROR",
        }
    }
}

/// One VM of a node pool.
#[derive(Debug, Clone)]
pub struct Instance {
    /// `gke-<cluster>-<pool>-<hash>-<4 chars>`; also the Node's name.
    pub name: String,
    /// Its zone.
    pub zone: String,
    /// Compute's numeric id.
    pub id: u64,
    /// The GKE version its kubelet runs.
    pub version: String,
    /// When it is gone, once the cloud chose to remove it (scale-in, upgrade, deletion).
    pub leaving_at: Option<Instant>,
}

/// A node pool.
#[derive(Debug, Clone)]
pub struct NodePool {
    /// Its name.
    pub name: String,
    /// The pool as created and updated (config, autoscaling, management, upgradeSettings, …),
    /// without the fields the service sets.
    pub spec: Value,
    /// The GKE version.
    pub version: String,
    /// Status.
    pub status: Status,
    /// Why it is in error.
    pub status_message: String,
    /// Nodes per zone (what `setSize` sets; the pool's `initialNodeCount` stays as created).
    pub per_zone: u32,
    /// Its zones.
    pub zones: Vec<String>,
    /// Its instances, leaving ones included.
    pub instances: Vec<Instance>,
    /// Eight hex digits naming its instance groups.
    pub hash: String,
    /// RFC 3339.
    pub create_time: String,
}

impl NodePool {
    /// Instances that are not leaving.
    pub fn serving(&self) -> impl Iterator<Item = &Instance> {
        self.instances.iter().filter(|i| i.leaving_at.is_none())
    }

    /// The instance group manager of `zone`: `gke-<cluster>-<pool>-<hash>-grp`.
    pub fn group_name(&self, cluster: &str, zone: &str) -> String {
        format!("{}-grp", self.base_name(cluster, zone))
    }

    /// What instance names in `zone` start with.
    pub fn base_name(&self, cluster: &str, zone: &str) -> String {
        let index = self.zones.iter().position(|z| z == zone).unwrap_or(0);
        let cut = |s: &str, n: usize| s.chars().take(n).collect::<String>();
        format!(
            "gke-{}-{}-{}{}",
            cut(cluster, 20).trim_end_matches('-'),
            cut(&self.name, 15).trim_end_matches('-'),
            &self.hash[..7],
            index
        )
    }
}

/// A GKE cluster.
#[derive(Debug, Clone)]
pub struct Cluster {
    /// Its project.
    pub project: String,
    /// Its location (region or zone).
    pub location: String,
    /// Its name.
    pub name: String,
    /// GKE's 32-hex id.
    pub id: String,
    /// The cluster as created and updated, without node pools and the fields the service sets.
    pub spec: Value,
    /// Status.
    pub status: Status,
    /// Why it is in error.
    pub status_message: String,
    /// `currentMasterVersion`.
    pub version: String,
    /// `initialClusterVersion`.
    pub initial_version: String,
    /// `resourceLabels`.
    pub labels: BTreeMap<String, String>,
    /// Node pools, in creation order.
    pub pools: Vec<NodePool>,
    /// Zones of its nodes.
    pub zones: Vec<String>,
    /// RFC 3339.
    pub create_time: String,
    /// The running operation, which blocks every other change.
    pub busy: Option<String>,
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
    /// The pool of that name.
    pub fn pool(&self, name: &str) -> Option<&NodePool> {
        self.pools.iter().find(|p| p.name == name)
    }

    /// The pool of that name, to change.
    pub fn pool_mut(&mut self, name: &str) -> Option<&mut NodePool> {
        self.pools.iter_mut().find(|p| p.name == name)
    }

    /// The region it lives in.
    pub fn region(&self) -> &str {
        region_of(&self.location)
    }
}

/// The region of a location (`us-central1-a` → `us-central1`).
pub fn region_of(location: &str) -> &str {
    match location.rsplit_once('-') {
        Some((region, zone)) if zone.len() == 1 && region.contains('-') => region,
        _ => location,
    }
}

/// What an operation does when it completes.
#[derive(Debug, Clone)]
pub enum Effect {
    /// The cluster is created (its pools' instances launched).
    CreateCluster,
    /// The cluster is gone.
    DeleteCluster,
    /// The control plane runs this version.
    UpgradeMaster(String),
    /// One `ClusterUpdate` field family is applied (`desiredX`, value).
    UpdateCluster(String, Value),
    /// The cluster's labels are replaced.
    SetLabels(BTreeMap<String, String>),
    /// The pool's instances are launched.
    CreatePool(String),
    /// The pool is gone.
    DeletePool(String),
    /// Node-pool settings are merged into the pool (version, labels, taints, upgrade settings,
    /// …); a new version, machine type or image replaces every instance (a surge upgrade).
    UpdatePool(String, Value),
    /// The pool has this many nodes per zone.
    SetSize(String, u32),
    /// The pool's autoscaling is replaced.
    SetAutoscaling(String, Value),
    /// A Compute resource is created (`kind`, key, resource JSON).
    ComputeInsert(ComputeKind, String, Value),
    /// A Compute resource is replaced by its patched JSON.
    ComputePatch(ComputeKind, String, Value),
    /// A Compute resource is gone.
    ComputeDelete(ComputeKind, String),
}

/// The Compute resource kinds emulated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComputeKind {
    /// `global/networks`.
    Network,
    /// `regions/*/subnetworks`.
    Subnetwork,
    /// `regions/*/routers`.
    Router,
}

/// Where an operation lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// A Kubernetes Engine operation of a cluster (`projects/*/locations/*/operations/*`).
    Container {
        /// The cluster's key in [`State::clusters`].
        cluster: String,
    },
    /// A Compute operation: global (`None`), regional or zonal.
    Compute {
        /// `regions/<r>` or `zones/<z>`; `None` for global.
        place: Option<String>,
    },
}

/// An operation's progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpStatus {
    /// Accepted.
    Pending,
    /// Under way.
    Running,
    /// Finished, successfully or not.
    Done,
}

impl OpStatus {
    /// The enum's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "PENDING",
            Self::Running => "RUNNING",
            Self::Done => "DONE",
        }
    }
}

/// A long-running operation.
#[derive(Debug, Clone)]
pub struct Operation {
    /// `operation-<ms>-<hex>`.
    pub name: String,
    /// Its project.
    pub project: String,
    /// Its location (GKE) or place (Compute).
    pub location: String,
    /// GKE's `operationType` (`CREATE_CLUSTER`) or Compute's (`insert`).
    pub kind: &'static str,
    /// The target's self link.
    pub target_link: String,
    /// Where it lives.
    pub scope: Scope,
    /// Progress.
    pub status: OpStatus,
    /// RFC 3339.
    pub start_time: String,
    /// RFC 3339, once done.
    pub end_time: Option<String>,
    /// When it starts running.
    pub running_at: Instant,
    /// When it may complete.
    pub done_at: Instant,
    /// Kept from completing (a workload API server still starting).
    pub held: bool,
    /// How it failed.
    pub error: Option<GoogleError>,
    /// What it does when it completes; taken then.
    pub effect: Option<Effect>,
}

/// Everything the emulated projects hold.
#[derive(Debug, Default)]
pub struct State {
    /// Clusters by `project/location/name`.
    pub clusters: BTreeMap<String, Cluster>,
    /// Operations by name (finished ones are kept, as GKE lists them).
    pub operations: BTreeMap<String, Operation>,
    /// Compute resources by kind and key (`project/name` for networks,
    /// `project/region/name` for subnetworks and routers).
    pub networks: BTreeMap<String, Value>,
    /// Subnetworks.
    pub subnetworks: BTreeMap<String, Value>,
    /// Routers.
    pub routers: BTreeMap<String, Value>,
}

impl State {
    /// The map of a Compute kind.
    pub fn compute(&self, kind: ComputeKind) -> &BTreeMap<String, Value> {
        match kind {
            ComputeKind::Network => &self.networks,
            ComputeKind::Subnetwork => &self.subnetworks,
            ComputeKind::Router => &self.routers,
        }
    }

    /// The map of a Compute kind, to change.
    pub fn compute_mut(&mut self, kind: ComputeKind) -> &mut BTreeMap<String, Value> {
        match kind {
            ComputeKind::Network => &mut self.networks,
            ComputeKind::Subnetwork => &mut self.subnetworks,
            ComputeKind::Router => &mut self.routers,
        }
    }
}

/// The key of a cluster in [`State::clusters`].
pub fn cluster_key(project: &str, location: &str, name: &str) -> String {
    format!("{project}/{location}/{name}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_of_locations() {
        assert_eq!(region_of("us-central1-a"), "us-central1");
        assert_eq!(region_of("us-central1"), "us-central1");
        assert_eq!(region_of("europe-west4-b"), "europe-west4");
    }
}
