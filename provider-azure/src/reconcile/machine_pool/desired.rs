//! What the spec asks AKS for, taken once per pass and in AKS's terms: [`PoolSpec`], which the
//! create and the diff read, and [`validate`], which makes it; and the pool's availability
//! zones (the MachinePool's failure domains, else the cluster's). Pure.

use std::collections::BTreeMap;

use contract::api::TaintEffect;
use contract::capi::MachinePool;
use contract::conditions::Reason;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use provider_runtime::ProviderError;
use serde_json::Value;

use crate::api::{AKSMachinePool, PoolMode};
use crate::scope::Infra;

/// The spec in AKS's terms.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolSpec {
    /// VM size.
    pub vm_size: String,
    /// OS disk, GB.
    pub disk_size_gb: Option<i32>,
    /// OS SKU.
    pub os_sku: Option<String>,
    /// Kubernetes labels.
    pub labels: BTreeMap<String, String>,
    /// Taints as AKS writes them (`key=value:Effect`), sorted.
    pub taints: Vec<String>,
    /// Spot capacity.
    pub spot: bool,
    /// `(maxSurge, maxUnavailable)` as AKS takes them (`"1"`, `"33%"`).
    pub upgrade: (Option<String>, Option<String>),
    /// System or User.
    pub mode: &'static str,
    /// Pods per node.
    pub max_pods: Option<i32>,
    /// The pool's own subnet.
    pub subnet: Option<String>,
    /// `spec.aks.requestOverrides`, when it asks for anything.
    pub request_overrides: Option<Value>,
}

/// A terminal `InvalidSpec` with `message`.
pub(super) fn invalid(message: impl Into<String>) -> ProviderError {
    ProviderError::terminal(Reason::InvalidSpec, message)
}

pub(super) fn effect(e: TaintEffect) -> &'static str {
    match e {
        TaintEffect::NoSchedule => "NoSchedule",
        TaintEffect::PreferNoSchedule => "PreferNoSchedule",
        TaintEffect::NoExecute => "NoExecute",
    }
}

fn int_or_percent(v: &Option<IntOrString>) -> Option<String> {
    match v {
        None => None,
        Some(IntOrString::Int(n)) => Some(n.to_string()),
        Some(IntOrString::String(s)) => Some(s.clone()),
    }
}

/// The spec in AKS's terms (pure).
///
/// # Errors
/// A terminal `InvalidSpec` naming the field.
pub fn validate(obj: &AKSMachinePool) -> Result<PoolSpec, ProviderError> {
    let c = &obj.spec.common;
    if c.subnet_ids.len() > 1 {
        return Err(invalid(
            "spec.subnetIDs takes one subnet on AKS (an agent pool's vnetSubnetID)",
        ));
    }
    let mut taints: Vec<String> = c
        .taints
        .iter()
        .map(|t| match t.value.as_deref().filter(|v| !v.is_empty()) {
            Some(v) => format!("{}={v}:{}", t.key, effect(t.effect)),
            None => format!("{}:{}", t.key, effect(t.effect)),
        })
        .collect();
    taints.sort();
    let upgrade = c
        .update
        .as_ref()
        .map(|u| {
            (
                int_or_percent(&u.max_surge),
                int_or_percent(&u.max_unavailable),
            )
        })
        .unwrap_or_default();
    Ok(PoolSpec {
        vm_size: c.machine_type.clone(),
        disk_size_gb: c.disk_size_gb,
        os_sku: c.image.clone(),
        labels: c.labels.clone(),
        taints,
        spot: c.spot,
        upgrade,
        mode: match obj.spec.aks.mode {
            PoolMode::User => "User",
            PoolMode::System => "System",
        },
        max_pods: obj.spec.aks.max_pods,
        subnet: c.subnet_ids.first().cloned(),
        request_overrides: contract::overrides::effective(obj.spec.aks.request_overrides.as_ref())
            .cloned(),
    })
}

/// The pool's zones: the MachinePool's failure domains (AKS availability zones), else the
/// cluster's.
///
/// # Errors
/// A message naming a failure domain the cluster does not have.
pub(super) fn pool_zones(machine_pool: &MachinePool, infra: &Infra) -> Result<Vec<String>, String> {
    let wanted = &machine_pool.spec.failure_domains;
    if wanted.is_empty() {
        return Ok(infra.zones.clone());
    }
    for zone in wanted {
        if !infra.zones.contains(zone) {
            return Err(format!(
                "MachinePool.spec.failureDomains names {zone}, which is not one of the cluster's availability zones ({})",
                infra.zones.join(", ")
            ));
        }
    }
    Ok(wanted.clone())
}
