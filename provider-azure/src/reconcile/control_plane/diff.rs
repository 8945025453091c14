//! The first difference between the spec and the managed cluster that AKS has its own call
//! for, once the kernel's shared steps (ownership, state, operation, version) are done; and how
//! the conditions say it. Pure.

use contract::plan::CloudStep;
use contract::version::{KubeVersion, normalize};
use provider_runtime::control_plane::DescribeChange;
use serde_json::{Value, json};

use super::desired::DesiredCluster;
use super::observe::ObservedCluster;
use crate::reconcile::aks_version;

/// One difference, one ARM call.
#[derive(Debug, Clone, PartialEq)]
pub enum ClusterChange {
    /// A PUT of the cluster with every desired setting (SKU, authorized ranges, Entra and RBAC,
    /// local accounts, OIDC issuer and workload identity, Key Vault encryption).
    Settings(Vec<&'static str>),
    /// The System pool follows the control plane to this minor.
    SystemPoolVersion(String),
    /// The System pool gets this many nodes.
    SystemPoolCount(i64),
}

/// The managed cluster as an AKSControlPlane's spec would ask for it, for an adoption's plan:
/// the settings the diff compares and the System pool's size. What AKS cannot change after
/// creation (network plugin, DNS prefix, the System pool's VM size) is not compared.
pub fn as_spec(o: &ObservedCluster) -> Value {
    json!({
        "endpointAccess": {"publicCIDRs": o.authorized},
        "oidcIssuer": {"enabled": o.oidc && o.workload_identity},
        "encryption": (!o.kms_key.is_empty()).then(|| json!({"kmsKeyID": o.kms_key})),
        "aks": {
            "sku": o.sku,
            "azureRBAC": o.azure_rbac,
            "adminGroupObjectIDs": o.admin_groups,
            "localAccounts": !o.local_disabled,
            "systemPool": {"count": o.system_pool.as_ref().map(|p| p.count)},
        },
    })
}

/// The first difference between `o` and `want`.
pub fn diff(want: &DesiredCluster, o: &ObservedCluster) -> CloudStep<ClusterChange> {
    let settings = &want.settings;
    let mut fields = Vec::new();
    if o.sku != settings.sku {
        fields.push("sku");
    }
    if o.authorized != settings.authorized {
        fields.push("authorized IP ranges");
    }
    if o.azure_rbac != settings.azure_rbac || o.admin_groups != settings.admin_groups {
        fields.push("Entra ID and RBAC");
    }
    if o.local_disabled != settings.local_disabled {
        fields.push("local accounts");
    }
    if o.oidc != settings.oidc || o.workload_identity != settings.oidc {
        fields.push("OIDC issuer and workload identity");
    }
    if o.kms_key != settings.kms_key {
        fields.push("Key Vault encryption");
    }
    if !fields.is_empty() {
        return CloudStep::Change(ClusterChange::Settings(fields));
    }
    let Some(pool) = &o.system_pool else {
        return CloudStep::Failed(format!(
            "the managed cluster has no agent pool named {}, which this control plane keeps as its System pool (spec.aks.systemPool.name); name the cluster's System pool there",
            want.system_pool.name
        ));
    };
    if !matches!(pool.state.as_str(), "Succeeded" | "Canceled" | "Failed") {
        return CloudStep::Wait(format!("the System pool {} is {}", pool.name, pool.state));
    }
    let minor = |v: &str| {
        KubeVersion::parse(&normalize(v))
            .ok()
            .map(|k| k.without_patch())
    };
    if let (Some(p), Some(c)) = (minor(&pool.version), minor(&o.full_version))
        && p < c
    {
        return CloudStep::Change(ClusterChange::SystemPoolVersion(aks_version(&c)));
    }
    if pool.count != want.system_pool.count {
        return CloudStep::Change(ClusterChange::SystemPoolCount(want.system_pool.count));
    }
    CloudStep::Nothing
}

impl DescribeChange for ClusterChange {
    fn describe(&self, name: &str) -> String {
        match self {
            ClusterChange::Settings(fields) => {
                format!("changing the {} of AKS cluster {name}", fields.join(", "))
            }
            ClusterChange::SystemPoolVersion(v) => {
                format!("upgrading the System pool of AKS cluster {name} to {v}")
            }
            ClusterChange::SystemPoolCount(n) => {
                format!("resizing the System pool of AKS cluster {name} to {n} nodes")
            }
        }
    }
}
