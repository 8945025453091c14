//! Container Engine's answers (API 20180222).

use std::collections::BTreeMap;

use serde::Deserialize;

use super::{Tags, tags_of};

/// A cluster, as GetCluster answers it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cluster {
    /// The OCID (beyond the SDK: every change of the cluster names it).
    pub id: String,
    /// `CREATING`, `ACTIVE`, `FAILED`, `DELETING`, `DELETED`, `UPDATING` (beyond the SDK: the
    /// lifecycle is decided on).
    pub lifecycle_state: String,
    /// The Kubernetes version of the control plane (beyond the SDK: upgrades are decided on it).
    pub kubernetes_version: String,
    /// `BASIC_CLUSTER` or `ENHANCED_CLUSTER` (beyond the SDK: read as basic, an enhanced cluster
    /// would be asked to become enhanced again).
    #[serde(rename = "type")]
    pub cluster_type: String,
    /// Where the API endpoint is (beyond the SDK: read as private, a public endpoint would be
    /// asked for again).
    pub endpoint_config: ClusterEndpointConfig,
    /// The VCN; absent, none is reported.
    pub vcn_id: Option<String>,
    /// The cluster's options; absent, OIDC discovery is off.
    pub options: Option<ClusterCreateOptions>,
    /// The endpoints; absent (a cluster still being created), there are none yet.
    pub endpoints: Option<ClusterEndpoints>,
    /// The versions it may be upgraded to; absent, none.
    pub available_kubernetes_upgrades: Option<Vec<String>>,
    /// Freeform tags.
    pub freeform_tags: Tags,
}

/// A cluster's endpoint settings.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterEndpointConfig {
    /// Whether the endpoint has a public IP (beyond the SDK, for the reason of
    /// [`Cluster::endpoint_config`]).
    pub is_public_ip_enabled: bool,
}

/// A cluster's options (only the part the provider reads).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterCreateOptions {
    /// OIDC discovery; absent, it is off.
    pub open_id_connect_discovery: Option<OpenIdConnectDiscovery>,
}

/// A cluster's OIDC discovery.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenIdConnectDiscovery {
    /// Whether it is on; absent, it is off.
    pub is_open_id_connect_discovery_enabled: Option<bool>,
}

/// A cluster's endpoints, each `host:port`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterEndpoints {
    /// The public endpoint, when there is one.
    pub public_endpoint: Option<String>,
    /// The private endpoint, when there is one.
    pub private_endpoint: Option<String>,
}

/// One cluster of ListClusters.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterSummary {
    /// The OCID (beyond the SDK: the cluster is read by it).
    pub id: String,
    /// The name (beyond the SDK: without it, a cluster of ours would not be found by name and a
    /// second one would be made).
    pub name: String,
    /// The lifecycle state (beyond the SDK: a `DELETED` cluster is passed over).
    pub lifecycle_state: String,
    /// Freeform tags.
    pub freeform_tags: Tags,
}

/// What GetClusterOptions answers.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterOptions {
    /// The versions OKE offers (beyond the SDK: without them, a valid version would be refused
    /// as not offered).
    pub kubernetes_versions: Vec<String>,
}

/// A node pool, as GetNodePool answers it (with its nodes).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodePool {
    /// The OCID (beyond the SDK: every change of the pool names it).
    pub id: String,
    /// The lifecycle state (beyond the SDK: the lifecycle is decided on).
    pub lifecycle_state: String,
    /// The shape (beyond the SDK: read as another, the pool would be asked to change shape).
    pub node_shape: String,
    /// Its size and placements (beyond the SDK: read as none, the pool would be resized).
    pub node_config_details: NodePoolNodeConfigDetails,
    /// The Kubernetes version of the nodes; absent, none is reported.
    pub kubernetes_version: Option<String>,
    /// The labels the nodes start with; absent (OCI leaves out an empty list), none.
    pub initial_node_labels: Option<Vec<KeyValue>>,
    /// A flexible shape's configuration; absent, the shape is not flexible.
    pub node_shape_config: Option<NodeShapeConfig>,
    /// Node cycling; absent, it is off.
    pub node_pool_cycling_details: Option<NodePoolCyclingDetails>,
    /// The nodes; absent, none.
    pub nodes: Option<Vec<Node>>,
    /// Why the pool is in its state; absent, no reason is given.
    pub lifecycle_details: Option<String>,
    /// Freeform tags.
    pub freeform_tags: Tags,
}

/// A node pool's size and placement.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodePoolNodeConfigDetails {
    /// The number of nodes (beyond the SDK, for the reason of [`NodePool::node_config_details`]).
    pub size: i32,
}

/// A key and its value (a node label).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyValue {
    /// The key; a label without one is no label.
    pub key: Option<String>,
    /// The value; absent, empty.
    pub value: Option<String>,
}

/// A flexible shape's processors and memory.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeShapeConfig {
    /// OCPUs; absent, the shape is not flexible.
    pub ocpus: Option<f64>,
    /// Memory in GB; absent, OCI's default for the OCPUs.
    #[serde(rename = "memoryInGBs")]
    pub memory_in_gbs: Option<f64>,
}

/// A node pool's node cycling.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodePoolCyclingDetails {
    /// Whether it is on; absent, it is off.
    pub is_node_cycling_enabled: Option<bool>,
    /// How many nodes may be added while cycling; needed when cycling is on.
    pub maximum_surge: Option<String>,
    /// How many nodes may be away while cycling; needed when cycling is on.
    pub maximum_unavailable: Option<String>,
}

/// One node of a node pool.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Node {
    /// The instance's OCID (beyond the SDK: it is the node's provider ID; a node without one
    /// would look gone).
    pub id: String,
    /// The node's name; absent, none is shown.
    pub name: Option<String>,
    /// The lifecycle state; absent, the node is taken as present.
    pub lifecycle_state: Option<String>,
    /// Why the node failed, when it did.
    pub node_error: Option<NodeError>,
}

/// A node's error.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeError {
    /// OCI's error code.
    pub code: String,
    /// OCI's message.
    pub message: String,
}

/// One node pool of ListNodePools.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodePoolSummary {
    /// The OCID (beyond the SDK: the pool is read by it).
    pub id: String,
    /// The name (beyond the SDK, for the reason of [`ClusterSummary::name`]).
    pub name: String,
    /// The lifecycle state (beyond the SDK: a `DELETED` pool is passed over).
    pub lifecycle_state: String,
    /// Freeform tags.
    pub freeform_tags: Tags,
}

/// What GetNodePoolOptions answers.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodePoolOptions {
    /// The versions OKE offers (beyond the SDK, for the reason of
    /// [`ClusterOptions::kubernetes_versions`]).
    pub kubernetes_versions: Vec<String>,
    /// The images OKE offers; needed only to choose one when the spec names none.
    pub sources: Option<Vec<NodeSourceOption>>,
}

/// One image source OKE offers node pools.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeSourceOption {
    /// `IMAGE` (the kind of source; beyond the SDK's shared fields, but the discriminator of the
    /// SDK's polymorphic model, always sent).
    pub source_type: String,
    /// The image's name; a source without one is not chosen.
    pub source_name: Option<String>,
    /// The image's OCID; a source without one is not chosen.
    pub image_id: Option<String>,
}

/// A work request, as GetWorkRequest answers it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkRequest {
    /// `ACCEPTED`, `IN_PROGRESS`, `FAILED`, `SUCCEEDED`, `CANCELING`, `CANCELED` (beyond the SDK:
    /// the tracked change's outcome is decided on it).
    pub status: String,
    /// Its compartment; absent, its errors are not listed.
    pub compartment_id: Option<String>,
}

/// One error of ListWorkRequestErrors.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkRequestError {
    /// OCI's error code.
    pub code: String,
    /// OCI's message.
    pub message: String,
    /// When it happened (RFC 3339).
    pub timestamp: String,
}

/// What every Container Engine resource the provider reads whole gives: its OCID, lifecycle
/// state and freeform tags.
pub trait EngineResource: serde::de::DeserializeOwned {
    /// The OCID.
    fn id(&self) -> &str;
    /// The lifecycle state.
    fn lifecycle_state(&self) -> &str;
    /// The freeform tags.
    fn tags(&self) -> BTreeMap<String, String>;
}

/// A Container Engine resource as its list gives it: also its name.
pub trait EngineSummary: EngineResource {
    /// The name.
    fn name(&self) -> &str;
}

macro_rules! engine_resource {
    ($($t:ty),*) => {$(
        impl EngineResource for $t {
            fn id(&self) -> &str {
                &self.id
            }
            fn lifecycle_state(&self) -> &str {
                &self.lifecycle_state
            }
            fn tags(&self) -> BTreeMap<String, String> {
                tags_of(&self.freeform_tags)
            }
        }
    )*};
}

engine_resource!(Cluster, ClusterSummary, NodePool, NodePoolSummary);

impl EngineSummary for ClusterSummary {
    fn name(&self) -> &str {
        &self.name
    }
}

impl EngineSummary for NodePoolSummary {
    fn name(&self) -> &str {
        &self.name
    }
}
