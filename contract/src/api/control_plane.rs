//! The blocks of a ControlPlane (`XControlPlane`): the version, endpoint, logging, encryption,
//! add-ons and OIDC issuer a user asks for, and the status (milestones, versions, endpoints,
//! kubeconfig credential) core and users read.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{
    Adoption, AdoptionStatus, ApiEndpoint, DeletionPolicy, Endpoint, EndpointAccess, Operation,
    Version, is_false,
};

/// Control plane log types the cloud ships to its logging service.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Logging {
    /// Ship API server logs.
    #[serde(default)]
    pub api_server: bool,
    /// Ship audit logs.
    #[serde(default)]
    pub audit: bool,
    /// Ship authenticator logs.
    #[serde(default)]
    pub authenticator: bool,
    /// Ship controller manager logs.
    #[serde(default)]
    pub controller_manager: bool,
    /// Ship scheduler logs.
    #[serde(default)]
    pub scheduler: bool,
}

/// Envelope encryption of Kubernetes Secrets with a key from the cloud's key management service.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Encryption {
    /// The key's identifier in the cloud's KMS (AWS KMS key ARN, Azure Key Vault key ID,
    /// OCI Vault key OCID).
    #[serde(rename = "kmsKeyID")]
    #[schemars(length(min = 1, max = 2048))]
    pub kms_key_id: String,
}

/// A managed add-on the cloud installs into the cluster.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Addon {
    /// The add-on's name in the cloud, e.g. `vpc-cni` or `coredns`.
    #[schemars(length(min = 1, max = 128))]
    pub name: String,
    /// The add-on version; empty lets the cloud choose its default for the cluster version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 128))]
    pub version: Option<String>,
    /// Add-on configuration as the cloud accepts it (a JSON or YAML document).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 65536))]
    pub configuration: Option<String>,
}

/// The cluster's OIDC issuer for workload identity federation (IRSA-style).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OidcIssuer {
    /// Enable the OIDC issuer.
    #[serde(default)]
    pub enabled: bool,
}

/// The spec fields every `XControlPlane` shares; flatten into the provider's spec.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("!has(oldSelf.cloudName) || has(self.cloudName)")
    .message("spec.cloudName cannot be removed once set"))]
pub struct ControlPlaneSpecCommon {
    /// Kubernetes version, v-prefixed: v1.31 or v1.31.2. Upgrades go one minor version at a
    /// time; a downgrade is rejected.
    pub version: Version,
    /// The endpoint clients use. Leave empty and the provider publishes the preferred endpoint;
    /// set it (e.g. a DNS name in front of a private endpoint) and it is kept as is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane_endpoint: Option<ApiEndpoint>,
    /// Public and private reachability of the API server.
    #[serde(default)]
    pub endpoint_access: EndpointAccess,
    /// Control plane logs shipped to the cloud's logging service.
    #[serde(default)]
    pub logging: Logging,
    /// Envelope encryption of Secrets with a cloud KMS key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encryption: Option<Encryption>,
    /// Managed add-ons, at most one per name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 32), extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"]))]
    pub addons: Vec<Addon>,
    /// The cluster's OIDC issuer for workload identity federation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oidc_issuer: Option<OidcIssuer>,
    /// The cluster's name in the cloud. Default: derived from namespace and name within the
    /// cloud's limits. Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 255))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("spec.cloudName is immutable"))]
    pub cloud_name: Option<String>,
    /// Adopt an existing cloud cluster that is not tagged as ours, after reviewing the plan in
    /// `status.adoption`, instead of creating one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adoption: Option<Adoption>,
    /// What deleting this control plane does to the cloud cluster: `Delete` (default) or
    /// `Orphan` (leave it running, without our ownership tag).
    #[serde(default, skip_serializing_if = "DeletionPolicy::is_delete")]
    pub deletion_policy: DeletionPolicy,
}

/// The state of the `<cluster>-kubeconfig` Secret's credential.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeconfigStatus {
    /// When the credential in the Secret expires; the provider refreshes it well before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<Time>,
}

/// How many replicas run one version (`status.versions[]` of a control plane).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VersionReplicas {
    /// The Kubernetes version, v-prefixed.
    #[schemars(length(min = 1, max = 256))]
    pub version: String,
    /// How many replicas run it (a managed control plane reports 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
}

/// `status.initialization` of a ControlPlane.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ControlPlaneInitialization {
    /// True once the API server accepts requests and the kubeconfig Secret exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane_initialized: Option<bool>,
}

fn always_true() -> bool {
    true
}

/// The status fields every `XControlPlane` shares; flatten into the provider's status.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ControlPlaneStatusCommon {
    /// Contract milestones: controlPlaneInitialized once the API server accepts requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initialization: Option<ControlPlaneInitialization>,
    /// v1beta1 contract: true once the API server accepts requests.
    #[serde(default, skip_serializing_if = "is_false")]
    pub initialized: bool,
    /// v1beta1 contract: true once the control plane is ready.
    #[serde(default, skip_serializing_if = "is_false")]
    pub ready: bool,
    /// Always true: the cloud runs the control plane, so Cluster API drains and deletes worker
    /// Nodes itself.
    #[serde(default = "always_true")]
    pub external_managed_control_plane: bool,
    /// The Kubernetes version running, v-prefixed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 256))]
    pub version: Option<String>,
    /// Versions running and how many replicas run each (read by Cluster API topology).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 8))]
    pub versions: Vec<VersionReplicas>,
    /// Every endpoint the cloud exposes for the API server.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 3), extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"]))]
    pub endpoints: Vec<Endpoint>,
    /// The cluster's identifier in the cloud (ARN, resource ID, self link, OCID).
    #[serde(default, rename = "cloudID", skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1024))]
    pub cloud_id: Option<String>,
    /// The cluster's name in the cloud (`spec.cloudName`, or the name derived from the
    /// Cluster's namespace and name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 255))]
    pub cloud_name: Option<String>,
    /// The cloud operation in flight, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<Operation>,
    /// The state of the kubeconfig Secret's credential.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubeconfig: Option<KubeconfigStatus>,
    /// The adoption plan, while `spec.adoption` asks for one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adoption: Option<AdoptionStatus>,
    /// Conditions: Ready, Available, KubeconfigReady, Upgrading, Paused.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 32), extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Vec<Condition>,
}

impl ControlPlaneStatusCommon {
    /// Whether the control plane reports itself initialized (either contract's field).
    pub fn control_plane_initialized(&self) -> bool {
        self.initialized
            || self
                .initialization
                .as_ref()
                .and_then(|i| i.control_plane_initialized)
                == Some(true)
    }
}

impl Default for ControlPlaneStatusCommon {
    fn default() -> Self {
        ControlPlaneStatusCommon {
            initialization: None,
            initialized: false,
            ready: false,
            external_managed_control_plane: true,
            version: None,
            versions: Vec::new(),
            endpoints: Vec::new(),
            cloud_id: None,
            cloud_name: None,
            operation: None,
            kubeconfig: None,
            adoption: None,
            conditions: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::api::VERSION_PREFIX_RULE;
    use crate::api::test_support::{assert_structural, expect_rules};
    use crate::schema::crd_schema;
    use kube::{CustomResource, CustomResourceExt};
    use serde_json::json;

    #[test]
    fn control_plane_spec_carries_version_and_immutability_rules() {
        expect_rules(
            &crd_schema::<ControlPlaneSpecCommon>(),
            &[
                (
                    ".version",
                    VERSION_PREFIX_RULE,
                    r#"must start with "v", e.g. "v1.31" or "v1.31.2""#,
                ),
                (
                    ".version",
                    "self.matches('^v[0-9]+",
                    "must have the form vMAJOR.MINOR",
                ),
                (
                    ".version",
                    "oldSelf.split('.')[1]",
                    "downgrades are not supported",
                ),
                (
                    ".cloudName",
                    "self == oldSelf",
                    "spec.cloudName is immutable",
                ),
                (
                    ".",
                    "has(oldSelf.cloudName)",
                    "spec.cloudName cannot be removed",
                ),
                (
                    ".endpointAccess",
                    "self.public || self.private",
                    "at least one of",
                ),
            ],
        );
    }

    #[test]
    fn list_fields_keyed_by_name_are_list_maps() {
        let schema = crd_schema::<ControlPlaneSpecCommon>();
        assert_eq!(
            schema["properties"]["addons"]["x-kubernetes-list-type"],
            "map"
        );
        assert_eq!(
            schema["properties"]["addons"]["x-kubernetes-list-map-keys"],
            json!(["name"])
        );
        let status = crd_schema::<ControlPlaneStatusCommon>();
        assert_eq!(
            status["properties"]["conditions"]["x-kubernetes-list-map-keys"],
            json!(["type"])
        );
    }

    /// A provider's control plane composing the shared blocks as they are meant to be composed.
    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
    #[kube(
        group = "controlplane.cluster.x-k8s.io",
        version = "v1alpha1",
        kind = "DemoControlPlane",
        namespaced,
        status = "DemoControlPlaneStatus"
    )]
    struct DemoControlPlaneSpec {
        #[serde(flatten)]
        common: ControlPlaneSpecCommon,
        /// The cloud's own block.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        demo: Option<BTreeMap<String, String>>,
    }

    #[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
    struct DemoControlPlaneStatus {
        #[serde(flatten)]
        common: ControlPlaneStatusCommon,
    }

    #[test]
    fn flattened_blocks_keep_their_fields_required_list_and_rules_in_a_crd() {
        let crd = DemoControlPlane::crd();
        let version = &crd.spec.versions[0];
        let schema = serde_json::to_value(
            version
                .schema
                .as_ref()
                .unwrap()
                .open_api_v3_schema
                .as_ref()
                .unwrap(),
        )
        .unwrap();
        assert_structural("DemoControlPlane", &schema);
        let spec = &schema["properties"]["spec"];
        for field in [
            "version",
            "endpointAccess",
            "logging",
            "addons",
            "cloudName",
            "demo",
        ] {
            assert!(
                spec["properties"].get(field).is_some(),
                "spec.{field} missing"
            );
        }
        assert_eq!(spec["required"], json!(["version"]));
        expect_rules(
            spec,
            &[
                (
                    ".",
                    "has(oldSelf.cloudName)",
                    "spec.cloudName cannot be removed",
                ),
                (".version", VERSION_PREFIX_RULE, "must start with"),
            ],
        );
        let status = &schema["properties"]["status"];
        assert_eq!(
            status["properties"]["externalManagedControlPlane"]["type"],
            "boolean"
        );
    }

    #[test]
    fn a_flattened_spec_round_trips_through_json_with_the_contract_field_names() {
        let spec: DemoControlPlaneSpec = serde_json::from_value(json!({
            "version": "v1.31",
            "endpointAccess": {"private": true, "publicCIDRs": ["203.0.113.0/24"]},
            "encryption": {"kmsKeyID": "arn:aws:kms:k"},
            "demo": {"roleARN": "r"}
        }))
        .unwrap();
        assert_eq!(spec.common.version.parse().unwrap().minor, 31);
        assert!(
            spec.common.endpoint_access.public,
            "public defaults to true"
        );
        assert_eq!(spec.common.endpoint_access.public_cidrs, ["203.0.113.0/24"]);
        assert_eq!(
            spec.common.encryption.as_ref().unwrap().kms_key_id,
            "arn:aws:kms:k"
        );
        let back = serde_json::to_value(&spec).unwrap();
        assert_eq!(
            back["endpointAccess"]["publicCIDRs"],
            json!(["203.0.113.0/24"])
        );
        assert_eq!(back["encryption"]["kmsKeyID"], "arn:aws:kms:k");
        assert_eq!(back["demo"]["roleARN"], "r");
    }

    #[test]
    fn status_names_follow_the_contract() {
        let status = ControlPlaneStatusCommon {
            initialization: Some(ControlPlaneInitialization {
                control_plane_initialized: Some(true),
            }),
            initialized: true,
            cloud_id: Some("arn".into()),
            versions: vec![VersionReplicas {
                version: "v1.31.2".into(),
                replicas: Some(1),
            }],
            ..ControlPlaneStatusCommon::default()
        };
        let v = serde_json::to_value(&status).unwrap();
        assert_eq!(v["initialization"]["controlPlaneInitialized"], true);
        assert_eq!(v["externalManagedControlPlane"], true);
        assert_eq!(v["cloudID"], "arn");
        assert_eq!(v["versions"][0]["version"], "v1.31.2");
    }
}
