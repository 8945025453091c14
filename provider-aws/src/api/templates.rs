//! The Template kinds ClusterClass and `clusterctl generate` use: `spec.template.spec` holds the
//! spec of the kind it stamps out. The control plane's is the one exception: its `version` is
//! optional, because ClusterClass topology sets `spec.version` itself.

use contract::api::{
    Addon, ApiEndpoint, ClusterSpecCommon, ControlPlaneSpecCommon, Encryption, EndpointAccess,
    Logging, OidcIssuer, Version,
};
use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

use super::{EKSClusterSpec, EKSControlPlaneOptions, EKSControlPlaneSpec, EKSMachinePoolSpec};

/// Template of an EKSCluster.
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(
    group = "infrastructure.cluster.x-k8s.io",
    version = "v1alpha1",
    kind = "EKSClusterTemplate",
    plural = "eksclustertemplates",
    namespaced,
    category = "cluster-api"
)]
pub struct EKSClusterTemplateSpec {
    /// The EKSCluster to stamp out.
    pub template: EKSClusterTemplateResource,
}

/// The stamped-out EKSCluster.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct EKSClusterTemplateResource {
    /// Its spec.
    pub spec: EKSClusterSpec,
}

/// Template of an EKSControlPlane.
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(
    group = "controlplane.cluster.x-k8s.io",
    version = "v1alpha1",
    kind = "EKSControlPlaneTemplate",
    plural = "ekscontrolplanetemplates",
    namespaced,
    category = "cluster-api"
)]
pub struct EKSControlPlaneTemplateSpec {
    /// The EKSControlPlane to stamp out.
    pub template: EKSControlPlaneTemplateResource,
}

/// The stamped-out EKSControlPlane.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct EKSControlPlaneTemplateResource {
    /// Its spec: the EKSControlPlane's, except that `version` may be left out (ClusterClass
    /// topology sets the EKSControlPlane's spec.version from Cluster.spec.topology.version).
    #[schemars(
        schema_with = "contract::crd::control_plane_template_spec_schema::<EKSControlPlaneSpec>"
    )]
    pub spec: EKSControlPlaneTemplateResourceSpec,
}

/// The spec an EKSControlPlaneTemplate stamps out: every field of [`EKSControlPlaneSpec`], with
/// `version` optional.
///
/// ClusterClass topology creates the EKSControlPlane from the template and writes
/// `Cluster.spec.topology.version` into its `spec.version`, so a template for a ClusterClass
/// leaves the version out; the EKSControlPlane itself still requires one. The schema is the
/// EKSControlPlane's (same fields, descriptions and validation rules) less the requirement on
/// `version`; the conversions below name every field, so a field added to the shared spec does
/// not compile until it is added here too.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct EKSControlPlaneTemplateResourceSpec {
    /// Kubernetes version, v-prefixed; usually left out (topology sets it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<Version>,
    /// See [`ControlPlaneSpecCommon::control_plane_endpoint`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane_endpoint: Option<ApiEndpoint>,
    /// See [`ControlPlaneSpecCommon::endpoint_access`].
    #[serde(default)]
    pub endpoint_access: EndpointAccess,
    /// See [`ControlPlaneSpecCommon::logging`].
    #[serde(default)]
    pub logging: Logging,
    /// See [`ControlPlaneSpecCommon::encryption`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encryption: Option<Encryption>,
    /// See [`ControlPlaneSpecCommon::addons`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub addons: Vec<Addon>,
    /// See [`ControlPlaneSpecCommon::oidc_issuer`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oidc_issuer: Option<OidcIssuer>,
    /// See [`ControlPlaneSpecCommon::cloud_name`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cloud_name: Option<String>,
    /// See [`ControlPlaneSpecCommon::adopt`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub adopt: bool,
    /// See [`EKSControlPlaneSpec::infrastructure`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infrastructure: Option<ClusterSpecCommon>,
    /// See [`EKSControlPlaneSpec::eks`].
    pub eks: EKSControlPlaneOptions,
}

impl EKSControlPlaneTemplateResourceSpec {
    /// The EKSControlPlane spec the template stamps out at `version`, which wins over the
    /// template's own (as topology's does).
    pub fn stamp(self, version: Version) -> EKSControlPlaneSpec {
        EKSControlPlaneSpec {
            common: ControlPlaneSpecCommon {
                version,
                control_plane_endpoint: self.control_plane_endpoint,
                endpoint_access: self.endpoint_access,
                logging: self.logging,
                encryption: self.encryption,
                addons: self.addons,
                oidc_issuer: self.oidc_issuer,
                cloud_name: self.cloud_name,
                adopt: self.adopt,
            },
            infrastructure: self.infrastructure,
            eks: self.eks,
        }
    }
}

impl From<EKSControlPlaneSpec> for EKSControlPlaneTemplateResourceSpec {
    fn from(spec: EKSControlPlaneSpec) -> Self {
        let EKSControlPlaneSpec {
            common,
            infrastructure,
            eks,
        } = spec;
        let ControlPlaneSpecCommon {
            version,
            control_plane_endpoint,
            endpoint_access,
            logging,
            encryption,
            addons,
            oidc_issuer,
            cloud_name,
            adopt,
        } = common;
        Self {
            version: Some(version),
            control_plane_endpoint,
            endpoint_access,
            logging,
            encryption,
            addons,
            oidc_issuer,
            cloud_name,
            adopt,
            infrastructure,
            eks,
        }
    }
}

/// Template of an EKSMachinePool.
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(
    group = "infrastructure.cluster.x-k8s.io",
    version = "v1alpha1",
    kind = "EKSMachinePoolTemplate",
    plural = "eksmachinepooltemplates",
    namespaced,
    category = "cluster-api"
)]
pub struct EKSMachinePoolTemplateSpec {
    /// The EKSMachinePool to stamp out.
    pub template: EKSMachinePoolTemplateResource,
}

/// The stamped-out EKSMachinePool.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct EKSMachinePoolTemplateResource {
    /// Its spec.
    pub spec: EKSMachinePoolSpec,
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use kube::CustomResourceExt;
    use serde_json::{Value, json};

    /// `spec.template.spec` of a template CRD, or `spec` of a kind's CRD.
    fn spec_schema<K: CustomResourceExt>(path: &[&str]) -> Value {
        let crd = serde_json::to_value(K::crd()).unwrap();
        let mut schema = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
        for field in path {
            schema = &schema["properties"][*field];
        }
        schema.clone()
    }

    #[test]
    fn the_control_plane_template_spec_is_the_control_plane_spec_without_a_required_version() {
        let mut stamped = spec_schema::<super::super::EKSControlPlane>(&["spec"]);
        let mut template = spec_schema::<EKSControlPlaneTemplate>(&["spec", "template", "spec"]);
        let required = |s: &Value| s["required"].as_array().cloned().unwrap_or_default();
        assert!(required(&stamped).contains(&json!("version")));
        assert!(!required(&template).contains(&json!("version")));
        assert!(required(&template).contains(&json!("eks")));
        for s in [&mut stamped, &mut template] {
            let obj = s.as_object_mut().unwrap();
            obj.remove("required");
            obj.remove("description");
        }
        assert_eq!(stamped, template, "the schemas differ beyond `required`");
    }

    #[test]
    fn a_template_without_a_version_stamps_out_the_topology_version() {
        let template: EKSControlPlaneTemplateResourceSpec = serde_json::from_value(json!({
            "endpointAccess": {"public": true, "private": true},
            "eks": {"roleARN": "arn:aws:iam::123456789012:role/eks-cluster"},
        }))
        .unwrap();
        assert_eq!(template.version, None);
        let spec = template.clone().stamp(Version("v1.33".into()));
        assert_eq!(spec.common.version.as_str(), "v1.33");
        assert!(spec.common.endpoint_access.private);
        let back = EKSControlPlaneTemplateResourceSpec::from(spec);
        assert_eq!(back.version, Some(Version("v1.33".into())));
        assert_eq!(
            EKSControlPlaneTemplateResourceSpec {
                version: None,
                ..back
            },
            template
        );
    }

    #[test]
    fn a_full_control_plane_spec_round_trips_through_the_template_spec() {
        let full = json!({
            "version": "v1.32.1",
            "controlPlaneEndpoint": {"host": "api.example.test", "port": 443},
            "endpointAccess": {"public": true, "private": true, "publicCIDRs": ["203.0.113.0/24"], "preferred": "Private"},
            "logging": {"apiServer": true, "audit": true},
            "encryption": {"kmsKeyID": "arn:aws:kms:us-west-2:123456789012:key/abc"},
            "addons": [{"name": "coredns", "version": "v1.11.1-eksbuild.1"}],
            "oidcIssuer": {"enabled": true},
            "cloudName": "team-a-x",
            "adopt": true,
            "infrastructure": {"region": "us-west-2", "network": {"subnetIDs": ["subnet-a", "subnet-b"]}},
            "eks": {"roleARN": "arn:aws:iam::123456789012:role/eks-cluster"},
        });
        let spec: EKSControlPlaneSpec = serde_json::from_value(full.clone()).unwrap();
        let template = EKSControlPlaneTemplateResourceSpec::from(spec.clone());
        assert_eq!(
            serde_json::to_value(&template).unwrap(),
            serde_json::to_value(&spec).unwrap()
        );
        let from_json: EKSControlPlaneTemplateResourceSpec = serde_json::from_value(full).unwrap();
        assert_eq!(from_json.stamp(Version("v1.32.1".into())), spec);
    }
}
