//! The Template kinds ClusterClass and `clusterctl generate` use: `spec.template.spec` holds the
//! spec of the kind it stamps out. The control plane's leaves `version` out (ClusterClass
//! topology sets it); the provider never reconciles templates, so their specs are kept as
//! JSON under the stamped kind's schema.

use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

use super::{OKEClusterSpec, OKEControlPlaneSpec, OKEMachinePoolSpec};

/// Template of an OKECluster.
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(
    group = "infrastructure.cluster.x-k8s.io",
    version = "v1alpha1",
    kind = "OKEClusterTemplate",
    plural = "okeclustertemplates",
    namespaced,
    category = "cluster-api"
)]
pub struct OKEClusterTemplateSpec {
    /// The OKECluster to stamp out.
    pub template: OKEClusterTemplateResource,
}

/// The stamped-out OKECluster.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct OKEClusterTemplateResource {
    /// Its spec.
    pub spec: OKEClusterSpec,
}

/// Template of an OKEControlPlane.
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(
    group = "controlplane.cluster.x-k8s.io",
    version = "v1alpha1",
    kind = "OKEControlPlaneTemplate",
    plural = "okecontrolplanetemplates",
    namespaced,
    category = "cluster-api"
)]
pub struct OKEControlPlaneTemplateSpec {
    /// The OKEControlPlane to stamp out.
    pub template: OKEControlPlaneTemplateResource,
}

/// The stamped-out OKEControlPlane.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct OKEControlPlaneTemplateResource {
    /// Its spec: the OKEControlPlane's, except that `version` may be left out (ClusterClass
    /// topology sets it from Cluster.spec.topology.version).
    #[schemars(
        schema_with = "contract::crd::control_plane_template_spec_schema::<OKEControlPlaneSpec>"
    )]
    pub spec: serde_json::Value,
}

/// Template of an OKEMachinePool.
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(
    group = "infrastructure.cluster.x-k8s.io",
    version = "v1alpha1",
    kind = "OKEMachinePoolTemplate",
    plural = "okemachinepooltemplates",
    namespaced,
    category = "cluster-api"
)]
pub struct OKEMachinePoolTemplateSpec {
    /// The OKEMachinePool to stamp out.
    pub template: OKEMachinePoolTemplateResource,
}

/// The stamped-out OKEMachinePool.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct OKEMachinePoolTemplateResource {
    /// Its spec.
    pub spec: OKEMachinePoolSpec,
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use kube::CustomResourceExt;
    use serde_json::{Value, json};

    use super::*;

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
        let mut stamped = spec_schema::<super::super::OKEControlPlane>(&["spec"]);
        let mut template = spec_schema::<OKEControlPlaneTemplate>(&["spec", "template", "spec"]);
        let required = |s: &Value| s["required"].as_array().cloned().unwrap_or_default();
        assert!(required(&stamped).contains(&json!("version")));
        assert!(!required(&template).contains(&json!("version")));
        for s in [&mut stamped, &mut template] {
            let obj = s.as_object_mut().unwrap();
            obj.remove("required");
            obj.remove("description");
        }
        assert_eq!(stamped, template, "the schemas differ beyond `required`");
    }
}
