//! Taking over a cloud cluster this provider did not create (`spec.adoption`), what taking it
//! over would change (`status.adoption`), and what deleting the object does in the cloud
//! (`spec.deletionPolicy`).

use serde::{Deserialize, Serialize};

use schemars::JsonSchema;

use super::is_false;

/// Adopt the existing cloud cluster named `spec.cloudName` (or the name derived from the
/// Cluster) instead of creating one. The provider first reports in `status.adoption` what
/// adopting would change, writing nothing in the cloud; it tags the cluster as ours and
/// converges it to the spec only once `accept` is true.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Adoption {
    /// The cloud's identity of the cluster (EKS cluster ARN, AKS resource ID, GKE
    /// `projects/<p>/locations/<l>/clusters/<name>`, OKE cluster OCID). When set, the cluster
    /// found by name in the spec's account, region and project must be this one; otherwise
    /// nothing is written and a condition says where the identity points.
    #[serde(default, rename = "id", skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1024))]
    pub id: Option<String>,
    /// Accept the plan in `status.adoption`: tag the cluster as ours and make it match the
    /// spec. Fields the spec leaves unset take the cloud's values (written into the spec).
    #[serde(default, skip_serializing_if = "is_false")]
    pub accept: bool,
}

/// What deleting the object does to its cloud resource.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum DeletionPolicy {
    /// Delete the cloud resource (when it is ours), then let the object go.
    #[default]
    Delete,
    /// Leave the cloud resource running: remove our ownership tag and let the object go. The
    /// resource can be adopted again.
    Orphan,
}

impl DeletionPolicy {
    /// Whether the object's default is in place (serialized only when it is not).
    pub fn is_delete(&self) -> bool {
        *self == DeletionPolicy::Delete
    }
}

/// At most this many rows of `status.adoption.changes` and of `kept` (the schema's bound): a
/// longer list ends in one row that says how many more there are.
pub const MAX_ADOPTION_ROWS: usize = 64;

/// One difference between the cloud resource and the spec: what accepting the adoption plan
/// changes in the cloud.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlannedChange {
    /// The spec field, as written under the object (`spec.logging.audit`).
    #[schemars(length(max = 256))]
    pub field: String,
    /// What the cloud has.
    #[schemars(length(max = 1024))]
    pub cloud: String,
    /// What the spec asks for.
    #[schemars(length(max = 1024))]
    pub spec: String,
}

/// Where an adoption stands.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum AdoptionPhase {
    /// The plan is in `changes`; nothing was written in the cloud. Set
    /// `spec.adoption.accept: true` to go on.
    Planned,
    /// No cloud resource can be adopted: the condition says why (none of that name, another
    /// identity, another Cluster's).
    Refused,
    /// The cloud resource carries our ownership tag; the provider manages it.
    Adopted,
}

/// `status.adoption`: the plan of an adoption, readable before anything is written.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdoptionStatus {
    /// Where the adoption stands.
    pub phase: AdoptionPhase,
    /// The cloud's identity of the resource the plan is for.
    #[serde(default, rename = "cloudID", skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1024))]
    pub cloud_id: Option<String>,
    /// What accepting changes in the cloud, one row per field; empty when the cloud already
    /// matches the spec.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_ADOPTION_ROWS))]
    pub changes: Vec<PlannedChange>,
    /// Spec fields left unset that take the cloud's value on accepting (nothing changes in
    /// the cloud for them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_ADOPTION_ROWS), inner(length(max = 256)))]
    pub kept: Vec<String>,
}
