//! The blocks of an InfraCluster (`XCluster`): the region, the network the cluster runs in, the
//! credentials the provider uses, the tags put on every cloud resource, and the status
//! (milestones and failure domains) core reads.

use std::collections::BTreeMap;
use std::ops::{Deref, DerefMut};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::KubeSchema;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

use super::DeletionPolicy;
use super::is_false;
use crate::naming::OWNERSHIP_TAG_PREFIX;

/// Maximum number of entries in `additionalTags`.
pub const MAX_ADDITIONAL_TAGS: usize = 50;
/// Maximum length of an `additionalTags` key.
pub const MAX_TAG_KEY_LEN: usize = 128;
/// Maximum length of an `additionalTags` value.
pub const MAX_TAG_VALUE_LEN: usize = 256;

/// Where the provider's cloud credentials come from.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum IdentityKind {
    /// A Secret in the object's namespace, named by `name`.
    Secret,
    /// The controller's own identity (instance role, workload identity, …).
    Controller,
}

/// The credentials the provider uses for this cluster.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
#[x_kube(
    validation = Rule::new("self.kind != 'Secret' || (has(self.name) && size(self.name) > 0)")
        .message("spec.identityRef.name is required when spec.identityRef.kind is Secret"),
    validation = Rule::new("self.kind != 'Controller' || !has(self.name)")
        .message("spec.identityRef.name must be empty when spec.identityRef.kind is Controller"),
)]
pub struct IdentityRef {
    /// Secret: a Secret in this namespace holds the credentials. Controller: use the
    /// controller's own identity.
    pub kind: IdentityKind,
    /// The Secret's name (kind Secret only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 253))]
    pub name: Option<String>,
}

/// Tags added to every cloud resource the provider creates (AWS tags, Azure tags, GCP labels,
/// OCI freeform tags).
///
/// At most 50 entries, keys 1–128 characters, values up to 256; keys under the ownership tag
/// prefix are reserved for the provider. A cloud with tighter limits adds its own rules.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(transparent)]
pub struct AdditionalTags(pub BTreeMap<String, String>);

impl Deref for AdditionalTags {
    type Target = BTreeMap<String, String>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl DerefMut for AdditionalTags {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl AdditionalTags {
    /// Whether there are no tags (for `skip_serializing_if`).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl JsonSchema for AdditionalTags {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "AdditionalTags".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let key_rule = format!(
            "self.all(k, size(k) >= 1 && size(k) <= {MAX_TAG_KEY_LEN} && !k.startsWith('{OWNERSHIP_TAG_PREFIX}'))"
        );
        let key_message = format!(
            "spec.additionalTags keys must be 1 to {MAX_TAG_KEY_LEN} characters and must not start with {OWNERSHIP_TAG_PREFIX} (reserved for the provider's ownership tag)"
        );
        json_schema!({
            "description": "Tags added to every cloud resource the provider creates (AWS tags, Azure tags, GCP labels, OCI freeform tags). At most 50 entries; keys 1-128 characters, values up to 256.",
            "type": "object",
            "maxProperties": MAX_ADDITIONAL_TAGS,
            "additionalProperties": {"type": "string", "maxLength": MAX_TAG_VALUE_LEN},
            "x-kubernetes-validations": [{"rule": key_rule, "message": key_message}],
        })
    }
}

/// The network the cluster runs in: bring your own (ids) or let the provider create one (a CIDR).
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
#[x_kube(
    validation = Rule::new("!((has(self.id) || (has(self.subnetIDs) && size(self.subnetIDs) > 0)) && has(self.cidrBlock))")
        .message("spec.network: set either id/subnetIDs (bring your own network) or cidrBlock (the provider creates one), not both"),
    validation = Rule::new("self == oldSelf")
        .message("spec.network is immutable once set"),
)]
pub struct NetworkSpec {
    /// An existing network to use: AWS VPC ID, Azure VNet resource ID, GCP network name or
    /// self link, OCI VCN OCID.
    #[serde(default, rename = "id", skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    pub id: Option<String>,
    /// Existing subnets to use (cloud ids, resource IDs or self links).
    #[serde(default, rename = "subnetIDs", skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 32), inner(length(min = 1, max = 512)))]
    pub subnet_ids: Vec<String>,
    /// The CIDR block of a network the provider creates (with its subnets), e.g. 10.0.0.0/16.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 43))]
    #[x_kube(validation = Rule::new("isCIDR(self)")
        .message("spec.network.cidrBlock must be a CIDR block such as 10.0.0.0/16"))]
    pub cidr_block: Option<String>,
}

impl NetworkSpec {
    /// Whether the user brings an existing network (an id or subnet ids).
    pub fn is_bring_your_own(&self) -> bool {
        self.id.is_some() || !self.subnet_ids.is_empty()
    }
}

/// The spec fields every `XCluster` (InfraCluster) shares; flatten into the provider's spec.
///
/// The account scope (AKS subscription and resource group, GKE project, OKE compartment) is
/// cloud-specific and lives in the cloud's block.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ClusterSpecCommon {
    /// The cloud region (AWS region, Azure location, GCP region, OCI region).
    #[schemars(length(min = 1, max = 64))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("spec.region is immutable"))]
    pub region: String,
    /// The network: bring your own (ids) or a CIDR for the provider to create one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkSpec>,
    /// Where the credentials come from; absent means the controller's own identity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity_ref: Option<IdentityRef>,
    /// Tags added to every cloud resource the provider creates.
    #[serde(default, skip_serializing_if = "AdditionalTags::is_empty")]
    pub additional_tags: AdditionalTags,
    /// What deleting this object does to a network the provider created: `Delete` (default) or
    /// `Orphan` (leave it in place, our ownership tags removed where the cloud allows). A
    /// brought network is never deleted either way.
    #[serde(default, skip_serializing_if = "DeletionPolicy::is_delete")]
    pub deletion_policy: DeletionPolicy,
}

/// A failure domain (zone) the cloud offers (v1beta2 shape: an entry of a list).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FailureDomain {
    /// The zone's name, e.g. us-east-1a.
    #[schemars(length(min = 1, max = 256))]
    pub name: String,
    /// Whether the control plane may use this zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane: Option<bool>,
    /// Free-form attributes of the zone.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub attributes: BTreeMap<String, String>,
}

/// `status.initialization` of an InfraCluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InfraClusterInitialization {
    /// True once the base infrastructure (network, resource group, …) exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provisioned: Option<bool>,
}

/// The status fields every `XCluster` shares; flatten into the provider's status.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InfraClusterStatusCommon {
    /// Contract milestones: provisioned once the base infrastructure exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initialization: Option<InfraClusterInitialization>,
    /// v1beta1 contract: true once provisioned (kept for older Cluster API cores).
    #[serde(default, skip_serializing_if = "is_false")]
    pub ready: bool,
    /// The zones the cloud offers in the region.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100), extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"]))]
    pub failure_domains: Vec<FailureDomain>,
    /// The network in use, in the same shape on every cloud.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkStatus>,
    /// Conditions: Ready, NetworkReady, Paused.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 32), extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Vec<Condition>,
}

/// The network an InfraCluster uses, the same on every cloud: what only one cloud has (its
/// gateways, route tables, routers, resource groups) is in the status's cloud block.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NetworkStatus {
    /// The network's identifier in the cloud: the VPC ID, the virtual network's resource ID,
    /// the VPC network's name, the VCN's OCID.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = 1024))]
    pub id: String,
    /// The network's address block (on Google Cloud, whose VPC networks have none, the nodes'
    /// subnetwork's primary range: the block `spec.network.cidrBlock` asks for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 43))]
    pub cidr_block: Option<String>,
    /// Whether the provider created the network (and so deletes it) or the user brought it.
    #[serde(default)]
    pub managed: bool,
    /// The subnets the cluster uses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 64))]
    pub subnets: Vec<SubnetStatus>,
}

impl NetworkStatus {
    /// The zones the subnets serve, each once, in the order the subnets list them (the
    /// InfraCluster's failure domains).
    pub fn zones(&self) -> Vec<&str> {
        let mut zones: Vec<&str> = Vec::new();
        for zone in self.subnets.iter().flat_map(|s| &s.zones) {
            if !zone.is_empty() && !zones.contains(&zone.as_str()) {
                zones.push(zone);
            }
        }
        zones
    }
}

/// One subnet in use.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubnetStatus {
    /// The subnet's identifier in the cloud (subnet ID, resource ID, name, OCID).
    #[schemars(length(max = 1024))]
    pub id: String,
    /// Its address block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 43))]
    pub cidr_block: Option<String>,
    /// The zones it serves: one for a zonal subnet (AWS), every zone in use for a regional one
    /// (Azure, Google Cloud, OCI).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 16))]
    pub zones: Vec<String>,
    /// Whether it routes to the internet (public addresses may be given in it).
    #[serde(default)]
    pub public: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::test_support::expect_rules;
    use crate::schema::crd_schema;
    use serde_json::json;

    #[test]
    fn identity_network_and_tags_carry_their_rules() {
        expect_rules(
            &crd_schema::<ClusterSpecCommon>(),
            &[
                (".region", "self == oldSelf", "spec.region is immutable"),
                (
                    ".identityRef",
                    "self.kind != 'Secret'",
                    "name is required when spec.identityRef.kind is Secret",
                ),
                (".network", "has(self.cidrBlock)", "not both"),
                (".network", "self == oldSelf", "spec.network is immutable"),
                (
                    ".network.cidrBlock",
                    "isCIDR(self)",
                    "spec.network.cidrBlock must be a CIDR",
                ),
                (
                    ".additionalTags",
                    OWNERSHIP_TAG_PREFIX,
                    "must not start with capi-managed-",
                ),
            ],
        );
    }

    #[test]
    fn additional_tags_serialize_as_a_plain_map() {
        let tags = AdditionalTags(BTreeMap::from([("team".to_string(), "a".to_string())]));
        assert_eq!(serde_json::to_value(&tags).unwrap(), json!({"team": "a"}));
        let schema = crd_schema::<AdditionalTags>();
        assert_eq!(schema["maxProperties"], MAX_ADDITIONAL_TAGS);
    }
}
