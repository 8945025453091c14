//! What the spec asks GKE for, taken once per pass and in GKE's terms: [`PoolSpec`], which
//! create, update and diff all read, and [`validate`], which makes it; and GKE's per-zone
//! sizing rules (a pool's zones, a count per zone). Pure.

use std::collections::BTreeMap;

use contract::api::TaintEffect;
use contract::capi::MachinePool;
use contract::conditions::Reason;
use google_cloud_container_v1::model as gke;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use provider_runtime::ProviderError;

use crate::api::GKEMachinePool;
use crate::scope::Infra;

/// A taint as GKE writes it: `(key, value, effect)`.
pub type Taint = (String, String, gke::node_taint::Effect);

/// The spec in GKE's terms.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolSpec {
    /// Machine type.
    pub machine_type: String,
    /// Boot disk, GB.
    pub disk_size_gb: Option<i32>,
    /// Image type.
    pub image_type: Option<String>,
    /// Kubernetes labels.
    pub labels: BTreeMap<String, String>,
    /// Taints as GKE writes them, sorted.
    pub taints: Vec<Taint>,
    /// Spot capacity.
    pub spot: bool,
    /// `(maxSurge, maxUnavailable)`.
    pub upgrade: Option<(i32, i32)>,
    /// The nodes' service account.
    pub service_account: Option<String>,
    /// The user's `spec.gke.requestOverrides`, when they ask for anything.
    pub request_overrides: Option<serde_json::Value>,
}

/// A terminal `InvalidSpec` saying `message`.
pub(super) fn invalid(message: impl Into<String>) -> ProviderError {
    ProviderError::terminal(Reason::InvalidSpec, message)
}

pub(super) fn effect(e: TaintEffect) -> gke::node_taint::Effect {
    match e {
        TaintEffect::NoSchedule => gke::node_taint::Effect::NoSchedule,
        TaintEffect::PreferNoSchedule => gke::node_taint::Effect::PreferNoSchedule,
        TaintEffect::NoExecute => gke::node_taint::Effect::NoExecute,
    }
}

/// Taints in the one order the spec and the pool are compared in.
pub(super) fn sort_taints(taints: &mut [Taint]) {
    taints.sort_by(|a, b| (&a.0, a.2.value()).cmp(&(&b.0, b.2.value())));
}

/// The spec in GKE's terms, or a terminal `InvalidSpec` naming the field.
///
/// # Errors
/// What the spec asks that GKE cannot be asked.
pub fn validate(obj: &GKEMachinePool) -> Result<PoolSpec, ProviderError> {
    pool_spec(obj).map_err(invalid)
}

fn pool_spec(obj: &GKEMachinePool) -> Result<PoolSpec, String> {
    let c = &obj.spec.common;
    let int = |v: &Option<IntOrString>, field: &str| match v {
        None => Ok(None),
        Some(IntOrString::Int(n)) if *n >= 0 => Ok(Some(*n)),
        Some(_) => Err(format!(
            "{field} must be a non-negative number of nodes on GKE"
        )),
    };
    let upgrade = match &c.update {
        None => None,
        Some(u) => {
            let surge = int(&u.max_surge, "spec.update.maxSurge")?;
            let unavailable = int(&u.max_unavailable, "spec.update.maxUnavailable")?;
            let (s, n) = (surge.unwrap_or(1), unavailable.unwrap_or(0));
            if s == 0 && n == 0 {
                return Err(
                    "spec.update.maxSurge and spec.update.maxUnavailable cannot both be 0 on GKE"
                        .into(),
                );
            }
            Some((s, n))
        }
    };
    if !c.subnet_ids.is_empty() {
        return Err("spec.subnetIDs is not supported on GKE: a node pool's nodes live in the cluster's subnetwork".into());
    }
    let mut taints: Vec<_> = c
        .taints
        .iter()
        .map(|t| {
            (
                t.key.clone(),
                t.value.clone().unwrap_or_default(),
                effect(t.effect),
            )
        })
        .collect();
    sort_taints(&mut taints);
    Ok(PoolSpec {
        machine_type: c.machine_type.clone(),
        disk_size_gb: c.disk_size_gb,
        image_type: c.image.clone(),
        labels: c.labels.clone(),
        taints,
        spot: c.spot,
        upgrade,
        service_account: obj.spec.gke.service_account.clone(),
        request_overrides: contract::overrides::effective(obj.spec.gke.request_overrides.as_ref())
            .cloned(),
    })
}

/// The pool's zones: the MachinePool's failure domains, else the infrastructure's first zone.
///
/// # Errors
/// A failure domain GKE cannot place the pool in.
pub(super) fn pool_zones(machine_pool: &MachinePool, infra: &Infra) -> Result<Vec<String>, String> {
    let wanted = &machine_pool.spec.failure_domains;
    if wanted.is_empty() {
        return Ok(infra.zones.first().cloned().into_iter().collect());
    }
    for zone in wanted {
        if !infra.zones.contains(zone) {
            return Err(format!(
                "MachinePool.spec.failureDomains names {zone}, which is not one of the cluster's zones ({})",
                infra.zones.join(", ")
            ));
        }
    }
    Ok(wanted.clone())
}

/// `count` nodes over `zones` zones, per zone.
///
/// # Errors
/// A count that does not divide evenly over the zones, naming `what`.
pub(super) fn per_zone(count: i32, zones: usize, what: &str) -> Result<i32, String> {
    let zones = i32::try_from(zones.max(1)).unwrap_or(1);
    if count % zones != 0 {
        return Err(format!(
            "{what} {count} cannot be spread evenly over the node pool's {zones} zones: GKE sizes a node pool per zone; use a multiple of {zones}"
        ));
    }
    Ok(count / zones)
}
