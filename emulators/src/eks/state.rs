//! The emulated account's EKS resources and their JSON as the service returns them.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use super::catalog;
use crate::kit::Lifecycle;

/// Tags of a resource.
pub type Tags = BTreeMap<String, String>;

/// Every status an EKS resource can be in, plus `Gone` (deleted; the resource disappears).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// `CREATING`.
    Creating,
    /// `ACTIVE`.
    Active,
    /// `UPDATING`.
    Updating,
    /// `DELETING`.
    Deleting,
    /// `FAILED` (clusters).
    Failed,
    /// `CREATE_FAILED` (nodegroups, add-ons).
    CreateFailed,
    /// `DELETE_FAILED` (nodegroups, add-ons).
    DeleteFailed,
    /// `DEGRADED` (nodegroups, add-ons).
    Degraded,
    /// Deleted: removed at the next tick.
    Gone,
}

impl Status {
    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Creating => "CREATING",
            Status::Active => "ACTIVE",
            Status::Updating => "UPDATING",
            Status::Deleting | Status::Gone => "DELETING",
            Status::Failed => "FAILED",
            Status::CreateFailed => "CREATE_FAILED",
            Status::DeleteFailed => "DELETE_FAILED",
            Status::Degraded => "DEGRADED",
        }
    }
}

/// `UpdateStatus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateStatus {
    /// `InProgress`.
    InProgress,
    /// `Successful`.
    Successful,
    /// `Failed`.
    Failed,
}

impl UpdateStatus {
    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            UpdateStatus::InProgress => "InProgress",
            UpdateStatus::Successful => "Successful",
            UpdateStatus::Failed => "Failed",
        }
    }
}

/// What an update changes once it completes.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// Cluster Kubernetes version.
    ClusterVersion(String),
    /// Endpoint access (the merged result).
    Endpoint {
        /// `endpointPublicAccess`.
        public: bool,
        /// `endpointPrivateAccess`.
        private: bool,
        /// `publicAccessCidrs`.
        cidrs: Vec<String>,
    },
    /// Subnets and security groups.
    Vpc {
        /// New subnets, if given.
        subnets: Option<Vec<String>>,
        /// New security groups, if given.
        security_groups: Option<Vec<String>>,
    },
    /// The set of enabled log types.
    Logging(BTreeSet<String>),
    /// `accessConfig.authenticationMode`.
    AuthenticationMode(String),
    /// `upgradePolicy.supportType`.
    UpgradePolicy(String),
    /// An identity provider config becomes active.
    AssociateIdp(String),
    /// An identity provider config goes away.
    DisassociateIdp(String),
    /// Nodegroup configuration.
    NodegroupConfig(Box<NodegroupConfigChange>),
    /// Nodegroup version / release.
    NodegroupVersion {
        /// Kubernetes minor.
        version: String,
        /// AMI release version.
        release: String,
    },
    /// Add-on version and settings.
    Addon {
        /// New version.
        version: String,
        /// New service account role, if given.
        service_account_role: Option<String>,
        /// New configuration values, if given.
        configuration_values: Option<String>,
    },
}

/// The parts of UpdateNodegroupConfig.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NodegroupConfigChange {
    /// New scaling, merged with the current one.
    pub scaling: Option<Scaling>,
    /// Labels to add or update.
    pub labels_add: BTreeMap<String, String>,
    /// Label keys to remove.
    pub labels_remove: Vec<String>,
    /// Taints to add or update (by key and effect).
    pub taints_add: Vec<Taint>,
    /// Taints to remove.
    pub taints_remove: Vec<Taint>,
    /// New `updateConfig`.
    pub update_config: Option<Value>,
}

/// One EKS `Update`.
#[derive(Debug, Clone)]
pub struct Update {
    /// The update id.
    pub id: String,
    /// `UpdateType`.
    pub kind: &'static str,
    /// `params`: `(UpdateParamType, value)`.
    pub params: Vec<(&'static str, String)>,
    /// Status.
    pub status: UpdateStatus,
    /// Epoch seconds.
    pub created_at: f64,
    /// `errors`.
    pub errors: Vec<Value>,
    /// What it changes.
    pub change: Change,
}

impl Update {
    /// A new in-progress update.
    pub fn new(
        kind: &'static str,
        params: Vec<(&'static str, String)>,
        change: Change,
        now: f64,
    ) -> Self {
        Self {
            id: super::uuid(),
            kind,
            params,
            status: UpdateStatus::InProgress,
            created_at: now,
            errors: Vec::new(),
            change,
        }
    }

    /// The `Update` JSON.
    pub fn json(&self) -> Value {
        let params: Vec<Value> = self
            .params
            .iter()
            .map(|(t, v)| json!({"type": t, "value": v}))
            .collect();
        json!({
            "id": self.id,
            "status": self.status.as_str(),
            "type": self.kind,
            "params": params,
            "createdAt": self.created_at,
            "errors": self.errors,
        })
    }
}

/// Nodegroup scaling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scaling {
    /// `minSize`.
    pub min: i64,
    /// `maxSize`.
    pub max: i64,
    /// `desiredSize`.
    pub desired: i64,
}

/// A nodegroup taint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Taint {
    /// Key.
    pub key: String,
    /// Value.
    pub value: Option<String>,
    /// `NO_SCHEDULE`, `NO_EXECUTE` or `PREFER_NO_SCHEDULE`.
    pub effect: String,
}

impl Taint {
    /// The `Taint` JSON.
    pub fn json(&self) -> Value {
        let mut t = json!({"key": self.key, "effect": self.effect});
        if let Some(v) = &self.value {
            t["value"] = json!(v);
        }
        t
    }

    /// The Kubernetes effect name.
    pub fn kubernetes_effect(&self) -> &'static str {
        match self.effect.as_str() {
            "NO_EXECUTE" => "NoExecute",
            "PREFER_NO_SCHEDULE" => "PreferNoSchedule",
            _ => "NoSchedule",
        }
    }
}

/// A node instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instance {
    /// `i-…`.
    pub id: String,
    /// Availability zone.
    pub az: String,
    /// Private DNS name (the Node's name).
    pub private_dns: String,
    /// Subnet.
    pub subnet: String,
    /// The nodegroup version it was launched with.
    pub version: String,
    /// Chosen for removal and still shutting down: it has left the nodegroup's count but its Node
    /// and its provider ID remain until it is terminated.
    pub shutting_down: bool,
}

impl Instance {
    /// `aws:///<zone>/<id>`, as EKS's kubelet writes it into `Node.spec.providerID`.
    pub fn provider_id(&self) -> String {
        format!("aws:///{}/{}", self.az, self.id)
    }
}

/// An EKS cluster.
#[derive(Debug)]
pub struct Cluster {
    /// Name.
    pub name: String,
    /// ARN.
    pub arn: String,
    /// Id of its workload API server (unique across re-creations of the same name).
    pub workload_id: String,
    /// Epoch seconds.
    pub created_at: f64,
    /// Kubernetes minor.
    pub version: String,
    /// `eks.N`.
    pub platform_version: String,
    /// `roleArn`.
    pub role_arn: String,
    /// Subnets.
    pub subnets: Vec<String>,
    /// Additional security groups.
    pub security_groups: Vec<String>,
    /// The cluster security group EKS creates (in moto, with an EC2 endpoint: empty until the
    /// cluster's provisioning made it, and again once its deletion removed it).
    pub cluster_security_group: String,
    /// Whether the deletion of the cluster security group was started.
    pub group_leaving: bool,
    /// VPC id.
    pub vpc_id: String,
    /// `endpointPublicAccess`.
    pub public_access: bool,
    /// `endpointPrivateAccess`.
    pub private_access: bool,
    /// `publicAccessCidrs`.
    pub public_cidrs: Vec<String>,
    /// `kubernetesNetworkConfig` as returned.
    pub network: Value,
    /// Enabled log types.
    pub logging: BTreeSet<String>,
    /// `accessConfig.authenticationMode`.
    pub authentication_mode: String,
    /// `accessConfig.bootstrapClusterCreatorAdminPermissions`.
    pub bootstrap_admin: bool,
    /// `upgradePolicy.supportType`.
    pub support_type: String,
    /// Fields echoed as given (`encryptionConfig`, `zonalShiftConfig`, …).
    pub echoed: Map<String, Value>,
    /// Tags.
    pub tags: Tags,
    /// The create request's token.
    pub client_request_token: Option<String>,
    /// API server URL, once known.
    pub endpoint: Option<String>,
    /// Base64 CA bundle, once known.
    pub ca_data: Option<String>,
    /// The 32-hex id in the endpoint and OIDC issuer.
    pub oidc_id: String,
    /// Status and transition.
    pub life: Lifecycle<Status>,
    /// The access key id that created it.
    pub creator: Option<String>,
    /// Whether its workload API server was asked to start.
    pub start_requested: bool,
    /// Cluster-level updates, oldest first.
    pub updates: Vec<Update>,
    /// The update in progress.
    pub pending: Option<String>,
    /// `health.issues`.
    pub issues: Vec<Value>,
    /// Nodegroups by name.
    pub nodegroups: BTreeMap<String, Nodegroup>,
    /// Add-ons by name.
    pub addons: BTreeMap<String, Addon>,
    /// Access entries by principal ARN.
    pub access_entries: BTreeMap<String, AccessEntry>,
    /// OIDC identity provider configs by name.
    pub idps: BTreeMap<String, IdentityProvider>,
}

impl Cluster {
    /// The `Cluster` JSON.
    pub fn json(&self, region: &str) -> Value {
        let status = *self.life.state();
        let mut logging = Vec::new();
        let enabled: Vec<&String> = self.logging.iter().collect();
        let disabled: Vec<&str> = [
            "api",
            "audit",
            "authenticator",
            "controllerManager",
            "scheduler",
        ]
        .into_iter()
        .filter(|t| !self.logging.contains(*t))
        .collect();
        if !enabled.is_empty() {
            logging.push(json!({"types": enabled, "enabled": true}));
        }
        if !disabled.is_empty() {
            logging.push(json!({"types": disabled, "enabled": false}));
        }
        let mut c = json!({
            "name": self.name,
            "arn": self.arn,
            "createdAt": self.created_at,
            "version": self.version,
            "roleArn": self.role_arn,
            "resourcesVpcConfig": {
                "subnetIds": self.subnets,
                "securityGroupIds": self.security_groups,
                "vpcId": self.vpc_id,
                "endpointPublicAccess": self.public_access,
                "endpointPrivateAccess": self.private_access,
                "publicAccessCidrs": self.public_cidrs,
            },
            "kubernetesNetworkConfig": self.network,
            "logging": {"clusterLogging": logging},
            "identity": {"oidc": {"issuer": format!("https://oidc.eks.{region}.amazonaws.com/id/{}", self.oidc_id)}},
            "status": status.as_str(),
            "certificateAuthority": {},
            "platformVersion": self.platform_version,
            "tags": self.tags,
            "health": {"issues": self.issues},
            "accessConfig": {
                "bootstrapClusterCreatorAdminPermissions": self.bootstrap_admin,
                "authenticationMode": self.authentication_mode,
            },
            "upgradePolicy": {"supportType": self.support_type},
        });
        if let Some(token) = &self.client_request_token {
            c["clientRequestToken"] = json!(token);
        }
        if !self.cluster_security_group.is_empty() {
            c["resourcesVpcConfig"]["clusterSecurityGroupId"] = json!(self.cluster_security_group);
        }
        // Like EKS, the endpoint and CA appear once the control plane is up.
        if status != Status::Creating {
            if let Some(endpoint) = &self.endpoint {
                c["endpoint"] = json!(endpoint);
            }
            if let Some(ca) = &self.ca_data {
                c["certificateAuthority"] = json!({"data": ca});
            }
        }
        if let Some(obj) = c.as_object_mut() {
            for (k, v) in &self.echoed {
                obj.insert(k.clone(), v.clone());
            }
        }
        c
    }

    /// The update in progress, if any.
    pub fn pending_update(&self) -> Option<&Update> {
        let id = self.pending.as_ref()?;
        self.updates.iter().find(|u| &u.id == id)
    }
}

/// A managed nodegroup.
#[derive(Debug)]
pub struct Nodegroup {
    /// Name.
    pub name: String,
    /// ARN.
    pub arn: String,
    /// Epoch seconds.
    pub created_at: f64,
    /// Epoch seconds.
    pub modified_at: f64,
    /// Kubernetes minor.
    pub version: String,
    /// AMI release version.
    pub release_version: String,
    /// `amiType`.
    pub ami_type: String,
    /// `capacityType`.
    pub capacity_type: String,
    /// `instanceTypes`.
    pub instance_types: Vec<String>,
    /// `diskSize`.
    pub disk_size: i64,
    /// Subnets.
    pub subnets: Vec<String>,
    /// `nodeRole`.
    pub node_role: String,
    /// Kubernetes labels.
    pub labels: BTreeMap<String, String>,
    /// Kubernetes taints.
    pub taints: Vec<Taint>,
    /// Scaling.
    pub scaling: Scaling,
    /// `updateConfig`.
    pub update_config: Value,
    /// Echoed fields (`remoteAccess`, `launchTemplate`, …).
    pub echoed: Map<String, Value>,
    /// Tags.
    pub tags: Tags,
    /// The Auto Scaling group's name.
    pub asg_name: String,
    /// Whether its Auto Scaling group was made in moto (only with an EC2 endpoint).
    pub group_made: bool,
    /// Status and transition.
    pub life: Lifecycle<Status>,
    /// Updates, oldest first.
    pub updates: Vec<Update>,
    /// The update in progress.
    pub pending: Option<String>,
    /// Whether the due transition's side effects were started.
    pub applied: bool,
    /// Whether an instance reconcile runs.
    pub reconciling: bool,
    /// Replace every instance at the next reconcile (version update).
    pub replace: bool,
    /// Instances.
    pub instances: Vec<Instance>,
    /// `health.issues`.
    pub issues: Vec<Value>,
}

impl Nodegroup {
    /// The `Nodegroup` JSON.
    pub fn json(&self, cluster: &str) -> Value {
        let taints: Vec<Value> = self.taints.iter().map(Taint::json).collect();
        let mut n = json!({
            "nodegroupName": self.name,
            "nodegroupArn": self.arn,
            "clusterName": cluster,
            "version": self.version,
            "releaseVersion": self.release_version,
            "createdAt": self.created_at,
            "modifiedAt": self.modified_at,
            "status": self.life.state().as_str(),
            "capacityType": self.capacity_type,
            "scalingConfig": {"minSize": self.scaling.min, "maxSize": self.scaling.max, "desiredSize": self.scaling.desired},
            "instanceTypes": self.instance_types,
            "subnets": self.subnets,
            "amiType": self.ami_type,
            "nodeRole": self.node_role,
            "labels": self.labels,
            "taints": taints,
            "resources": {"autoScalingGroups": [{"name": self.asg_name}]},
            "diskSize": self.disk_size,
            "health": {"issues": self.issues},
            "updateConfig": self.update_config,
            "tags": self.tags,
        });
        if let Some(obj) = n.as_object_mut() {
            for (k, v) in &self.echoed {
                obj.insert(k.clone(), v.clone());
            }
        }
        n
    }

    /// The update in progress, if any.
    pub fn pending_update(&self) -> Option<&Update> {
        let id = self.pending.as_ref()?;
        self.updates.iter().find(|u| &u.id == id)
    }
}

/// An add-on.
#[derive(Debug)]
pub struct Addon {
    /// Name.
    pub name: String,
    /// ARN.
    pub arn: String,
    /// Version.
    pub version: String,
    /// `serviceAccountRoleArn`.
    pub service_account_role: Option<String>,
    /// `configurationValues`.
    pub configuration_values: Option<String>,
    /// Epoch seconds.
    pub created_at: f64,
    /// Epoch seconds.
    pub modified_at: f64,
    /// Status and transition.
    pub life: Lifecycle<Status>,
    /// Updates, oldest first.
    pub updates: Vec<Update>,
    /// The update in progress.
    pub pending: Option<String>,
    /// Tags.
    pub tags: Tags,
    /// Echoed fields (`podIdentityAssociations`, `namespaceConfig`).
    pub echoed: Map<String, Value>,
}

impl Addon {
    /// The `Addon` JSON.
    pub fn json(&self, cluster: &str) -> Value {
        let mut a = json!({
            "addonName": self.name,
            "clusterName": cluster,
            "status": self.life.state().as_str(),
            "addonVersion": self.version,
            "health": {"issues": []},
            "addonArn": self.arn,
            "createdAt": self.created_at,
            "modifiedAt": self.modified_at,
            "tags": self.tags,
            "publisher": "eks",
            "owner": "aws",
        });
        if let Some(r) = &self.service_account_role {
            a["serviceAccountRoleArn"] = json!(r);
        }
        if let Some(c) = &self.configuration_values {
            a["configurationValues"] = json!(c);
        }
        if let Some(obj) = a.as_object_mut() {
            for (k, v) in &self.echoed {
                obj.insert(k.clone(), v.clone());
            }
        }
        a
    }

    /// The update in progress, if any.
    pub fn pending_update(&self) -> Option<&Update> {
        let id = self.pending.as_ref()?;
        self.updates.iter().find(|u| &u.id == id)
    }
}

/// An access policy associated with an access entry.
#[derive(Debug, Clone)]
pub struct AssociatedPolicy {
    /// `accessScope` as given.
    pub scope: Value,
    /// Epoch seconds.
    pub associated_at: f64,
    /// Epoch seconds.
    pub modified_at: f64,
}

/// An access entry.
#[derive(Debug)]
pub struct AccessEntry {
    /// IAM principal ARN.
    pub principal: String,
    /// ARN.
    pub arn: String,
    /// `kubernetesGroups`.
    pub groups: Vec<String>,
    /// `username` (may hold `{{SessionName}}`-style placeholders).
    pub username: String,
    /// `type`.
    pub kind: String,
    /// Epoch seconds.
    pub created_at: f64,
    /// Epoch seconds.
    pub modified_at: f64,
    /// Tags.
    pub tags: Tags,
    /// Associated policies by policy ARN.
    pub policies: BTreeMap<String, AssociatedPolicy>,
}

impl AccessEntry {
    /// The `AccessEntry` JSON.
    pub fn json(&self, cluster: &str) -> Value {
        json!({
            "clusterName": cluster,
            "principalArn": self.principal,
            "kubernetesGroups": self.groups,
            "accessEntryArn": self.arn,
            "createdAt": self.created_at,
            "modifiedAt": self.modified_at,
            "tags": self.tags,
            "username": self.username,
            "type": self.kind,
        })
    }
}

/// An OIDC identity provider config.
#[derive(Debug)]
pub struct IdentityProvider {
    /// Name.
    pub name: String,
    /// ARN.
    pub arn: String,
    /// The `oidc` request fields as given.
    pub oidc: Value,
    /// Tags.
    pub tags: Tags,
    /// `CREATING`, `ACTIVE` or `DELETING` (`Creating`, `Active`, `Deleting`).
    pub status: Status,
}

impl IdentityProvider {
    /// The `OidcIdentityProviderConfig` JSON.
    pub fn json(&self, cluster: &str) -> Value {
        let mut o = json!({
            "identityProviderConfigName": self.name,
            "identityProviderConfigArn": self.arn,
            "clusterName": cluster,
            "tags": self.tags,
            "status": self.status.as_str(),
        });
        for key in [
            "issuerUrl",
            "clientId",
            "usernameClaim",
            "usernamePrefix",
            "groupsClaim",
            "groupsPrefix",
            "requiredClaims",
        ] {
            if let Some(v) = self.oidc.get(key) {
                o[key] = v.clone();
            }
        }
        o
    }
}

/// Everything the emulated account holds.
#[derive(Debug, Default)]
pub struct State {
    /// Clusters by name.
    pub clusters: BTreeMap<String, Cluster>,
}

impl State {
    /// A cluster's nodegroup, to change.
    pub fn nodegroup_mut(&mut self, cluster: &str, nodegroup: &str) -> Option<&mut Nodegroup> {
        self.clusters
            .get_mut(cluster)
            .and_then(|c| c.nodegroups.get_mut(nodegroup))
    }
}

/// Checks a Kubernetes minor against the supported list.
pub fn supported(version: &str) -> bool {
    catalog::is_supported(version)
}
