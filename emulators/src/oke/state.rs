//! The emulated tenancy's resources: Core Services networking (VCNs with their subnets,
//! gateways, route tables and security lists), OKE clusters and node pools (each node a compute
//! instance), and the work requests changing them.

use std::collections::BTreeMap;

use serde_json::Value;
use tokio::time::Instant;

use super::error::OciError;
use super::now_rfc3339;
use crate::kit::workload::WorkloadEndpoint;

/// The kinds of Core Services resources emulated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CoreKind {
    /// `Vcn`.
    Vcn,
    /// `Subnet`.
    Subnet,
    /// `InternetGateway`.
    InternetGateway,
    /// `NatGateway`.
    NatGateway,
    /// `ServiceGateway`.
    ServiceGateway,
    /// `RouteTable`.
    RouteTable,
    /// `SecurityList`.
    SecurityList,
}

impl CoreKind {
    /// Every kind, in the order a VCN's contents are listed.
    pub const ALL: [CoreKind; 7] = [
        CoreKind::Vcn,
        CoreKind::Subnet,
        CoreKind::InternetGateway,
        CoreKind::NatGateway,
        CoreKind::ServiceGateway,
        CoreKind::RouteTable,
        CoreKind::SecurityList,
    ];

    /// The path segment (`vcns`, `subnets`, …).
    pub fn collection(self) -> &'static str {
        match self {
            CoreKind::Vcn => "vcns",
            CoreKind::Subnet => "subnets",
            CoreKind::InternetGateway => "internetGateways",
            CoreKind::NatGateway => "natGateways",
            CoreKind::ServiceGateway => "serviceGateways",
            CoreKind::RouteTable => "routeTables",
            CoreKind::SecurityList => "securityLists",
        }
    }

    /// The kind of a path segment.
    pub fn of_collection(segment: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.collection() == segment)
    }

    /// The API's name (`Vcn`, `InternetGateway`, …), as operation ids use it.
    pub fn name(self) -> &'static str {
        match self {
            CoreKind::Vcn => "Vcn",
            CoreKind::Subnet => "Subnet",
            CoreKind::InternetGateway => "InternetGateway",
            CoreKind::NatGateway => "NatGateway",
            CoreKind::ServiceGateway => "ServiceGateway",
            CoreKind::RouteTable => "RouteTable",
            CoreKind::SecurityList => "SecurityList",
        }
    }

    /// The OCID's resource type (`vcn`, `internetgateway`, …).
    pub fn ocid_type(self) -> &'static str {
        match self {
            CoreKind::Vcn => "vcn",
            CoreKind::Subnet => "subnet",
            CoreKind::InternetGateway => "internetgateway",
            CoreKind::NatGateway => "natgateway",
            CoreKind::ServiceGateway => "servicegateway",
            CoreKind::RouteTable => "routetable",
            CoreKind::SecurityList => "securitylist",
        }
    }
}

/// One Core Services resource: its wire body as the API returns it (with `lifecycleState`),
/// and when its pending transition completes.
#[derive(Debug, Clone)]
pub struct CoreResource {
    /// Its kind.
    pub kind: CoreKind,
    /// The body as `Get…` answers it.
    pub body: Value,
    /// The ETag.
    pub etag: String,
    /// When a PROVISIONING or TERMINATING resource moves on.
    pub due: Option<Instant>,
    /// When a TERMINATED resource stops being listed.
    pub forget_at: Option<Instant>,
}

impl CoreResource {
    /// Its OCID.
    pub fn id(&self) -> &str {
        self.body["id"].as_str().unwrap_or_default()
    }

    /// `lifecycleState`.
    pub fn state(&self) -> &str {
        self.body["lifecycleState"].as_str().unwrap_or_default()
    }

    /// `vcnId` (a VCN's own id for a VCN).
    pub fn vcn(&self) -> &str {
        match self.kind {
            CoreKind::Vcn => self.id(),
            _ => self.body["vcnId"].as_str().unwrap_or_default(),
        }
    }

    /// `compartmentId`.
    pub fn compartment(&self) -> &str {
        self.body["compartmentId"].as_str().unwrap_or_default()
    }

    /// Whether it is gone or going.
    pub fn terminating(&self) -> bool {
        matches!(self.state(), "TERMINATING" | "TERMINATED")
    }
}

/// A cluster's or node pool's `lifecycleState`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Life {
    /// Being created.
    Creating,
    /// At rest.
    Active,
    /// Being changed.
    Updating,
    /// Being deleted.
    Deleting,
    /// Gone (still readable for a while).
    Deleted,
    /// Its last work request failed.
    Failed,
    /// A node pool whose nodes are not all healthy.
    NeedsAttention,
}

impl Life {
    /// The wire word.
    pub fn as_str(self) -> &'static str {
        match self {
            Life::Creating => "CREATING",
            Life::Active => "ACTIVE",
            Life::Updating => "UPDATING",
            Life::Deleting => "DELETING",
            Life::Deleted => "DELETED",
            Life::Failed => "FAILED",
            Life::NeedsAttention => "NEEDS_ATTENTION",
        }
    }
}

/// An OKE cluster.
#[derive(Debug, Clone)]
pub struct Cluster {
    /// Its OCID.
    pub id: String,
    /// `name`.
    pub name: String,
    /// `compartmentId`.
    pub compartment: String,
    /// `vcnId`.
    pub vcn: String,
    /// `kubernetesVersion`.
    pub version: String,
    /// `endpointConfig` as created or updated.
    pub endpoint_config: Value,
    /// `options`.
    pub options: Value,
    /// `freeformTags`.
    pub freeform_tags: Value,
    /// `definedTags`.
    pub defined_tags: Value,
    /// `kmsKeyId`.
    pub kms_key: Option<String>,
    /// `type`: `BASIC_CLUSTER` or `ENHANCED_CLUSTER`.
    pub cluster_type: String,
    /// `clusterPodNetworkOptions`.
    pub pod_network: Value,
    /// `imagePolicyConfig`.
    pub image_policy: Value,
    /// `lifecycleState`.
    pub life: Life,
    /// `lifecycleDetails`.
    pub details: String,
    /// `metadata`.
    pub metadata: Value,
    /// The ETag.
    pub etag: String,
    /// The running work request, which blocks every other change of the cluster.
    pub busy: Option<String>,
    /// The user who created it: cluster admin on its API server.
    pub creator: String,
    /// The private endpoint's address in its endpoint subnet.
    pub private_ip: String,
    /// The workload API server's id.
    pub workload_id: String,
    /// Whether its workload API server was asked to start.
    pub start_requested: bool,
    /// The workload API server, once it runs.
    pub endpoint: Option<WorkloadEndpoint>,
    /// Whether the Nodes must be rewritten from the instances.
    pub nodes_dirty: bool,
    /// When a DELETED cluster stops being readable.
    pub forget_at: Option<Instant>,
}

impl Cluster {
    /// Whether it is deleted or being deleted.
    pub fn going(&self) -> bool {
        matches!(self.life, Life::Deleting | Life::Deleted)
    }
}

/// A node of a node pool (a compute instance).
#[derive(Debug, Clone)]
pub struct Node {
    /// The instance OCID.
    pub id: String,
    /// Its name (OKE names nodes by their private IP).
    pub name: String,
    /// Its availability domain.
    pub availability_domain: String,
    /// Its fault domain.
    pub fault_domain: String,
    /// Its subnet.
    pub subnet: String,
    /// Its private IP.
    pub private_ip: String,
    /// The Kubernetes version its kubelet runs.
    pub version: String,
    /// When it is gone, once chosen for removal (scale-down, cycling, deletion).
    pub leaving_at: Option<Instant>,
    /// When it was launched (RFC 3339).
    pub time_created: String,
}

/// An OKE node pool.
#[derive(Debug, Clone)]
pub struct NodePool {
    /// Its OCID.
    pub id: String,
    /// `clusterId`.
    pub cluster: String,
    /// `compartmentId`.
    pub compartment: String,
    /// `name`.
    pub name: String,
    /// `kubernetesVersion`.
    pub version: String,
    /// `nodeShape`.
    pub shape: String,
    /// `nodeShapeConfig`.
    pub shape_config: Value,
    /// `nodeSourceDetails`.
    pub source: Value,
    /// `initialNodeLabels`.
    pub labels: Value,
    /// `nodeConfigDetails` (its `size` is the pool's size).
    pub node_config: Value,
    /// `nodeMetadata`.
    pub node_metadata: Value,
    /// `sshPublicKey`.
    pub ssh_key: Option<String>,
    /// `nodeEvictionNodePoolSettings`.
    pub eviction: Value,
    /// `nodePoolCyclingDetails`.
    pub cycling: Value,
    /// `freeformTags`.
    pub freeform_tags: Value,
    /// `definedTags`.
    pub defined_tags: Value,
    /// `lifecycleState`.
    pub life: Life,
    /// `lifecycleDetails`.
    pub details: String,
    /// The ETag.
    pub etag: String,
    /// The running work request.
    pub busy: Option<String>,
    /// Its nodes, leaving ones included.
    pub nodes: Vec<Node>,
    /// When a DELETED pool stops being readable.
    pub forget_at: Option<Instant>,
}

impl NodePool {
    /// `nodeConfigDetails.size`.
    pub fn size(&self) -> u32 {
        self.node_config["size"]
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(0)
    }

    /// Nodes not leaving.
    pub fn serving(&self) -> impl Iterator<Item = &Node> {
        self.nodes.iter().filter(|n| n.leaving_at.is_none())
    }

    /// OCPUs one node uses.
    pub fn ocpus_per_node(&self) -> u32 {
        match super::catalog::shape(&self.shape) {
            Some(s) if s.flexible => self.shape_config["ocpus"]
                .as_f64()
                .map_or(1, |o| o.ceil() as u32),
            Some(s) => s.ocpus,
            None => 1,
        }
    }
}

/// What a work request does when it completes.
#[derive(Debug, Clone)]
pub enum Effect {
    /// The cluster is ACTIVE.
    CreateCluster,
    /// The cluster runs this version.
    UpgradeCluster(String),
    /// The cluster's change (options, tags, endpoint) is done.
    UpdateCluster,
    /// The cluster and its node pools are gone.
    DeleteCluster,
    /// The pool's nodes are launched.
    CreatePool,
    /// The pool has its size, version and settings.
    UpdatePool,
    /// The pool is gone.
    DeletePool,
}

/// A work request's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WrStatus {
    /// Accepted, not started.
    Accepted,
    /// Running.
    InProgress,
    /// Done.
    Succeeded,
    /// Failed, with errors.
    Failed,
}

impl WrStatus {
    /// The wire word.
    pub fn as_str(self) -> &'static str {
        match self {
            WrStatus::Accepted => "ACCEPTED",
            WrStatus::InProgress => "IN_PROGRESS",
            WrStatus::Succeeded => "SUCCEEDED",
            WrStatus::Failed => "FAILED",
        }
    }
}

/// A work request.
#[derive(Debug, Clone)]
pub struct WorkRequest {
    /// Its OCID.
    pub id: String,
    /// `operationType` (`CLUSTER_CREATE`, `NODEPOOL_UPDATE`, …).
    pub operation: &'static str,
    /// `status`.
    pub status: WrStatus,
    /// `compartmentId`.
    pub compartment: String,
    /// `(entityType, identifier)` of what it works on: `cluster` or `nodepool`.
    pub entity: (&'static str, String),
    /// The cluster it belongs to (for `ListWorkRequests?resourceId=`).
    pub cluster: String,
    /// `timeAccepted`, `timeStarted`, `timeFinished` (RFC 3339).
    pub times: [Option<String>; 3],
    /// When it starts running.
    pub start_at: Instant,
    /// When it may complete.
    pub done_at: Instant,
    /// What it does when it completes; taken then.
    pub effect: Option<Effect>,
    /// Its errors (`ListWorkRequestErrors`).
    pub errors: Vec<OciError>,
    /// Its log (`ListWorkRequestLogs`): `(timestamp, message)`.
    pub logs: Vec<(String, String)>,
}

impl WorkRequest {
    /// Ends it as failed with `error`, its effect dropped (a deletion it gave way to, a control
    /// plane that did not start, a change that could not be applied).
    pub fn fail(&mut self, error: OciError) {
        self.effect = None;
        self.status = WrStatus::Failed;
        self.times[2] = Some(now_rfc3339());
        self.logs.push((
            now_rfc3339(),
            format!("{} failed: {}", self.operation, error.message),
        ));
        self.errors.push(error);
    }
}

/// Everything the tenancy holds.
#[derive(Debug, Default)]
pub struct State {
    /// Core Services resources by OCID.
    pub core: BTreeMap<String, CoreResource>,
    /// Clusters by OCID.
    pub clusters: BTreeMap<String, Cluster>,
    /// Node pools by OCID.
    pub pools: BTreeMap<String, NodePool>,
    /// Work requests by OCID (finished ones are kept).
    pub work_requests: BTreeMap<String, WorkRequest>,
    /// Private addresses handed out, per subnet: the next host number.
    pub next_host: BTreeMap<String, u32>,
}

impl State {
    /// A live (not terminating) Core resource of `kind`.
    pub fn live(&self, kind: CoreKind, id: &str) -> Option<&CoreResource> {
        self.core
            .get(id)
            .filter(|r| r.kind == kind && !r.terminating())
    }

    /// The node pools of a cluster that are not deleted.
    pub fn pools_of<'a>(&'a self, cluster: &'a str) -> impl Iterator<Item = &'a NodePool> + 'a {
        self.pools
            .values()
            .filter(move |p| p.cluster == cluster && p.life != Life::Deleted)
    }

    /// OCPUs the tenancy's node instances use in the region (leaving ones still count).
    pub fn ocpus_used(&self) -> u32 {
        self.pools
            .values()
            .map(|p| p.ocpus_per_node() * p.nodes.len() as u32)
            .sum()
    }

    /// Whether anything live refers to the subnet (a cluster endpoint, a load-balancer subnet, a
    /// node pool placement); the referrer's name when so.
    pub fn subnet_user(&self, subnet: &str) -> Option<String> {
        for c in self.clusters.values().filter(|c| c.life != Life::Deleted) {
            let lb = c.options["serviceLbSubnetIds"]
                .as_array()
                .is_some_and(|a| a.iter().any(|s| s == subnet));
            if c.endpoint_config["subnetId"] == subnet || lb {
                return Some(format!("cluster {}", c.id));
            }
        }
        for p in self.pools.values().filter(|p| p.life != Life::Deleted) {
            let placed = p.node_config["placementConfigs"]
                .as_array()
                .is_some_and(|a| a.iter().any(|pc| pc["subnetId"] == subnet));
            if placed || p.nodes.iter().any(|n| n.subnet == subnet) {
                return Some(format!("node pool {}", p.id));
            }
        }
        None
    }

    /// The next private address in a subnet's block (`10.0.10.2`, …).
    pub fn allocate_ip(&mut self, subnet: &str) -> String {
        let cidr = self
            .core
            .get(subnet)
            .and_then(|s| s.body["cidrBlock"].as_str())
            .and_then(super::core::parse_cidr)
            .unwrap_or((u32::from(std::net::Ipv4Addr::new(10, 0, 0, 0)), 16));
        let next = self.next_host.entry(subnet.to_string()).or_insert(2);
        let size = 1u32 << (32 - u32::from(cidr.1)).min(31);
        let host = if *next + 1 >= size { 2 } else { *next };
        *next = host + 1;
        std::net::Ipv4Addr::from(cidr.0 + host).to_string()
    }
}
