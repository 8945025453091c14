//! The Template kinds ClusterClass and `clusterctl generate` use: `spec.template.spec` holds the
//! spec of the kind it stamps out.

use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

use super::{EKSClusterSpec, EKSControlPlaneSpec, EKSMachinePoolSpec};

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
    /// Its spec.
    pub spec: EKSControlPlaneSpec,
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
