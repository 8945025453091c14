//! The spec as AKS will be asked for it: everything the create, the updates and the diff read
//! from the AKSControlPlane and its infrastructure, taken once per pass. Pure.

use contract::conditions::Reason;
use provider_runtime::ProviderError;
use serde_json::Value;

use crate::api::{AKSControlPlane, NetworkPlugin, NetworkPolicy, SkuTier};
use crate::scope::Infra;

/// What the spec asks AKS for.
#[derive(Debug, Clone, PartialEq)]
pub struct DesiredCluster {
    /// The settings a create sets and a change PUTs back, as the diff compares them.
    pub settings: Settings,
    /// A private API server.
    pub private: bool,
    /// `spec.aks.systemPool`.
    pub system_pool: SystemPoolShape,
    /// `spec.aks.networkPlugin`.
    pub network_plugin: NetworkPlugin,
    /// `spec.aks.networkPolicy`.
    pub network_policy: Option<NetworkPolicy>,
    /// `spec.aks.dnsPrefix` (derived from the cluster's name when unset).
    pub dns_prefix: Option<String>,
    /// `spec.aks.requestOverrides`, when it asks for anything.
    pub request_overrides: Option<Value>,
    /// The location.
    pub location: String,
    /// The availability zones of the System pool.
    pub zones: Vec<String>,
    /// The nodes' subnet ("" when not known).
    pub subnet: String,
}

/// The cluster's settings AKS compares and changes in one PUT: SKU, authorized ranges, Entra
/// and RBAC, local accounts, OIDC issuer and workload identity, Key Vault encryption.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// The SKU tier.
    pub sku: &'static str,
    /// `authorizedIPRanges`, sorted.
    pub authorized: Vec<String>,
    /// Azure RBAC on.
    pub azure_rbac: bool,
    /// Entra admin groups, sorted.
    pub admin_groups: Vec<String>,
    /// Local accounts off.
    pub local_disabled: bool,
    /// OIDC issuer (and workload identity) on.
    pub oidc: bool,
    /// The Key Vault key encrypting Secrets ("" when none).
    pub kms_key: String,
}

/// The System pool the spec asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SystemPoolShape {
    /// Its agent pool's name.
    pub name: String,
    /// Its nodes' VM size.
    pub vm_size: String,
    /// Its node count.
    pub count: i64,
}

impl DesiredCluster {
    /// The subnet to create the cluster in.
    ///
    /// # Errors
    /// Terminal `InvalidSpec` when none is known.
    pub fn subnet(&self) -> Result<&str, ProviderError> {
        if self.subnet.is_empty() {
            return Err(ProviderError::terminal(
                Reason::InvalidSpec,
                "no subnet to create the AKS cluster in: set spec.infrastructure.network.subnetIDs, or use an AKSCluster",
            ));
        }
        Ok(&self.subnet)
    }
}

/// `v` sorted, without repeats.
pub fn sorted(v: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut v: Vec<String> = v.into_iter().collect();
    v.sort();
    v.dedup();
    v
}

fn sku(t: SkuTier) -> &'static str {
    match t {
        SkuTier::Free => "Free",
        SkuTier::Standard => "Standard",
        SkuTier::Premium => "Premium",
    }
}

/// The spec of `cp` in `infra`, as AKS will be asked for it. Every field AKS cannot take is
/// refused at admission (the CRD's rules); a create without a subnet is refused when it is
/// asked for ([`DesiredCluster::subnet`]), so a cluster that exists is still looked after.
///
/// # Errors
/// None today: the signature is the kernel's.
pub fn validate(cp: &AKSControlPlane, infra: &Infra) -> Result<DesiredCluster, ProviderError> {
    let c = &cp.spec.common;
    let aks = &cp.spec.aks;
    Ok(DesiredCluster {
        settings: Settings {
            sku: sku(aks.sku),
            authorized: sorted(c.endpoint_access.public_cidrs.iter().cloned()),
            azure_rbac: aks.azure_rbac,
            admin_groups: sorted(aks.admin_group_object_ids.iter().cloned()),
            local_disabled: !aks.local_accounts,
            oidc: c.oidc_issuer.as_ref().is_some_and(|o| o.enabled),
            kms_key: c
                .encryption
                .as_ref()
                .map(|e| e.kms_key_id.clone())
                .unwrap_or_default(),
        },
        private: c.endpoint_access.private,
        system_pool: SystemPoolShape {
            name: aks.system_pool.name.clone(),
            vm_size: aks.system_pool.vm_size.clone(),
            count: i64::from(aks.system_pool.count),
        },
        network_plugin: aks.network_plugin,
        network_policy: aks.network_policy,
        dns_prefix: aks.dns_prefix.clone(),
        request_overrides: contract::overrides::effective(aks.request_overrides.as_ref()).cloned(),
        location: infra.location.clone(),
        zones: infra.zones.clone(),
        subnet: infra.subnet.clone(),
    })
}
