//! What the spec asks OKE for, taken once per pass and in OKE's terms: [`PoolSpec`], which
//! create, update and diff all read, and [`validate`], which makes it. Pure.

use std::collections::BTreeMap;

use contract::conditions::Reason;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use provider_runtime::ProviderError;

use crate::api::OKEMachinePool;

/// Memory per OCPU of a flexible shape when the spec names none (OCI's default).
pub(super) const MEMORY_PER_OCPU: i32 = 16;

/// The spec in OKE's terms.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolSpec {
    /// `nodeShape`.
    pub shape: String,
    /// `nodeShapeConfig` of a flexible shape: `(ocpus, memoryInGBs)`.
    pub flex: Option<(i32, i32)>,
    /// The boot volume, GB.
    pub boot_volume_gb: Option<i32>,
    /// The image OCID (`None`: the newest Oracle Linux platform image).
    pub image: Option<String>,
    /// `initialNodeLabels`, by key.
    pub labels: BTreeMap<String, String>,
    /// Preemptible capacity.
    pub spot: bool,
    /// `(maximumSurge, maximumUnavailable)` of node cycling.
    pub cycling: (String, String),
    /// The nodes' subnet (`None`: the cluster's).
    pub subnet: Option<String>,
    /// Pods per node with VCN-native pod networking.
    pub max_pods: Option<i32>,
    /// An SSH public key.
    pub ssh_key: Option<String>,
    /// The user's `spec.oke.requestOverrides`, when they ask for anything (create only).
    pub request_overrides: Option<serde_json::Value>,
}

/// A terminal `InvalidSpec` saying `message`.
pub(super) fn invalid(message: impl Into<String>) -> ProviderError {
    ProviderError::terminal(Reason::InvalidSpec, message)
}

fn surge_text(v: Option<&IntOrString>, default: &str) -> String {
    match v {
        None => default.to_string(),
        Some(IntOrString::Int(n)) => n.to_string(),
        Some(IntOrString::String(s)) => s.clone(),
    }
}

/// The spec of `obj` in OKE's terms (pure).
///
/// # Errors
/// Terminal `InvalidSpec` naming the field: taints (OKE has no taints API), more than one
/// subnet, a flexible shape without OCPUs or a fixed one with them.
pub fn validate(obj: &OKEMachinePool) -> Result<PoolSpec, ProviderError> {
    let c = &obj.spec.common;
    let o = &obj.spec.oke;
    if !c.taints.is_empty() {
        return Err(invalid(
            "spec.taints is not supported on OKE: managed node pools have no taints API",
        ));
    }
    if c.subnet_ids.len() > 1 {
        return Err(invalid("spec.subnetIDs takes one subnet on OKE"));
    }
    let flexible = c.machine_type.ends_with(".Flex");
    let flex = match (flexible, o.ocpus) {
        (true, Some(ocpus)) => Some((ocpus, o.memory_gb.unwrap_or(ocpus * MEMORY_PER_OCPU))),
        (true, None) => {
            return Err(invalid(format!(
                "spec.oke.ocpus is required for the flexible shape {}",
                c.machine_type
            )));
        }
        (false, Some(_)) => {
            return Err(invalid(format!(
                "spec.oke.ocpus is only for flexible shapes; {} is fixed",
                c.machine_type
            )));
        }
        (false, None) => None,
    };
    let update = c.update.as_ref();
    Ok(PoolSpec {
        shape: c.machine_type.clone(),
        flex,
        boot_volume_gb: c.disk_size_gb,
        image: c.image.clone(),
        labels: c.labels.clone(),
        spot: c.spot,
        cycling: (
            surge_text(update.and_then(|u| u.max_surge.as_ref()), "1"),
            surge_text(update.and_then(|u| u.max_unavailable.as_ref()), "0"),
        ),
        subnet: c.subnet_ids.first().cloned(),
        max_pods: o.max_pods_per_node,
        ssh_key: o.ssh_public_key.clone(),
        request_overrides: contract::overrides::effective(o.request_overrides.as_ref()).cloned(),
    })
}
