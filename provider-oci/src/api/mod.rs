//! The OKE kinds: `OKECluster`, `OKEControlPlane`, `OKEMachinePool` and their templates.
//!
//! Every field shared with the other clouds comes from `contract::api` (flattened), so a team
//! running OKE beside EKS sees the same names; only the `oke:` block is about OKE alone. A
//! shared value OKE cannot honour is refused at admission by a CEL rule naming OKE and the field.

mod cluster;
mod control_plane;
mod machine_pool;
mod templates;

pub use cluster::*;
pub use control_plane::*;
pub use machine_pool::*;
pub use templates::*;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;

/// The API version of every kind.
pub const VERSION: &str = "v1alpha1";

/// Every CRD this provider installs, with the Cluster API contract labels stamped on.
pub fn crds() -> Vec<CustomResourceDefinition> {
    let mut crds = vec![
        OKECluster::crd(),
        OKEClusterTemplate::crd(),
        OKEControlPlane::crd(),
        OKEControlPlaneTemplate::crd(),
        OKEMachinePool::crd(),
        OKEMachinePoolTemplate::crd(),
    ];
    for crd in &mut crds {
        contract::crd::stamp_contract_labels(crd);
    }
    crds
}

/// A JSON merge patch the user supplies for a cloud request body (`requestOverrides`): any object.
pub(crate) fn free_form_object(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": true
    })
}
