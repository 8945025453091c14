//! The toy cloud's wire types, shared by its server and its client.

use serde::{Deserialize, Serialize};

/// Who a cloud cluster belongs to (the Cluster API cluster it serves); both empty when it
/// belongs to no Cluster (made outside Cluster API, or let go with `deletionPolicy: Orphan`).
/// `PUT /clusters/{name}/tags` replaces them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tags {
    /// Namespace of the Cluster.
    pub namespace: String,
    /// Name of the Cluster.
    pub cluster: String,
}

impl Tags {
    /// No owner.
    pub fn none() -> Self {
        Tags {
            namespace: String::new(),
            cluster: String::new(),
        }
    }

    /// Whether the cluster belongs to no Cluster.
    pub fn is_none(&self) -> bool {
        self.namespace.is_empty() && self.cluster.is_empty()
    }
}

/// Where a cluster's API server listens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Endpoint {
    /// Host name or IP.
    pub host: String,
    /// Port.
    pub port: u16,
}

/// `POST /clusters`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CreateCluster {
    /// Cluster name, unique in the cloud.
    pub name: String,
    /// Kubernetes version (`v1.31.0`).
    pub version: String,
    /// Owner tags.
    pub tags: Tags,
}

/// `PATCH /clusters/{name}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct UpdateCluster {
    /// New Kubernetes version.
    pub version: String,
}

/// A cloud cluster.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cluster {
    /// Name.
    pub name: String,
    /// Owner tags.
    pub tags: Tags,
    /// Current Kubernetes version.
    pub version: String,
    /// `CREATING`, `ACTIVE`, `UPDATING` or `DELETING`.
    pub status: String,
    /// Set once the API server is up.
    pub endpoint: Option<Endpoint>,
}

/// `POST /networks`: the network a Cluster's cloud cluster lives in.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CreateNetwork {
    /// Network name, unique in the cloud.
    pub name: String,
    /// Owner tags.
    pub tags: Tags,
}

/// A network.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Network {
    /// Name.
    pub name: String,
    /// Owner tags.
    pub tags: Tags,
}

/// One resource the cloud holds, as `GET /inventory` lists it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InventoryItem {
    /// `toy:cluster`, `toy:pool` or `toy:network`.
    pub kind: String,
    /// The cloud's id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// The resource it lives in (a pool's cluster).
    pub parent: String,
    /// `<namespace>/<cluster>` of its owner tags.
    pub owner: Option<String>,
    /// Its state.
    pub state: String,
}

/// `GET /inventory`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Inventory {
    /// Every resource the cloud holds.
    pub resources: Vec<InventoryItem>,
}

/// `POST /clusters/{name}/pools`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreatePool {
    /// Pool name, unique in its cluster.
    pub name: String,
    /// Desired number of instances.
    pub desired_size: u32,
}

/// `PATCH /clusters/{name}/pools/{pool}` and the outside scale `POST /pools/{ns}/{cluster}/{pool}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScalePool {
    /// Desired number of instances.
    pub desired_size: u32,
}

/// One instance of a pool.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Instance {
    /// Instance id.
    pub id: String,
    /// What the instance's Node carries in `spec.providerID`.
    pub provider_id: String,
    /// `PENDING`, `RUNNING` or `TERMINATING`.
    pub state: String,
}

/// A node pool.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pool {
    /// Name.
    pub name: String,
    /// Cloud cluster it belongs to.
    pub cluster: String,
    /// Desired number of instances.
    pub desired_size: u32,
    /// `CREATING`, `ACTIVE`, `UPDATING` (converging to the desired size) or `DELETING`.
    pub status: String,
    /// Every instance that exists, in any state.
    pub instances: Vec<Instance>,
}

/// Error body.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ErrorBody {
    /// What went wrong.
    pub error: String,
}

/// Every operation the cloud counts in `emulator_calls_total`.
pub const OPERATIONS: [&str; 16] = [
    "CreateCluster",
    "DescribeCluster",
    "ListClusters",
    "UpdateCluster",
    "DeleteCluster",
    "TagCluster",
    "GetCredentials",
    "CreatePool",
    "DescribePool",
    "ListPools",
    "UpdatePool",
    "DeletePool",
    "OutsideScale",
    "CreateNetwork",
    "DescribeNetwork",
    "DeleteNetwork",
];
