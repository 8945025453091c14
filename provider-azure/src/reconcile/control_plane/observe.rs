//! Reading AKS: the managed cluster (mapped to the kernel's [`ManagedCluster`]), its API
//! server's address and CA (from the user credential, cached), and the state of the operation
//! `status.operation` tracks. AKS compares nothing beyond the cluster, so there are no extras.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use contract::api::{Endpoint, EndpointName};
use contract::plan::Lifecycle;
use provider_runtime::control_plane::{Look, ManagedCluster, Observed};
use provider_runtime::{CloudError, ProviderError, read_answer};
use reqwest::Method;
use serde_json::Value;

use super::At;
use super::desired::sorted;
use crate::api::AKSControlPlaneObserved;
use crate::client;
use crate::client::answers::{self, Enabled};
use crate::scope::{ClusterAccess, Shared};

/// How long an API server address and CA read from the user credential are reused.
const ACCESS_TTL: std::time::Duration = std::time::Duration::from_secs(600);

/// The System pool as AKS reports it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SystemPoolView {
    /// Its name.
    pub name: String,
    /// Its profile as read (for a PUT of its resource).
    pub profile: Value,
    /// Its ETag, when given.
    pub etag: Option<String>,
    /// `currentOrchestratorVersion`.
    pub version: String,
    /// `count`.
    pub count: i64,
    /// `provisioningState`.
    pub state: String,
}

/// What AKS says about a managed cluster, in the terms the diff needs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ObservedCluster {
    /// The cluster as read: the body of the next PUT.
    pub raw: Value,
    /// Its ETag, when given.
    pub etag: Option<String>,
    /// `provisioningState`.
    pub state: String,
    /// Its location.
    pub location: String,
    /// The API server's name.
    pub fqdn: String,
    /// `nodeResourceGroup`.
    pub node_group: String,
    /// `currentKubernetesVersion`.
    pub full_version: String,
    /// The SKU tier.
    pub sku: String,
    /// `authorizedIPRanges`, sorted.
    pub authorized: Vec<String>,
    /// Azure RBAC on.
    pub azure_rbac: bool,
    /// Entra admin groups, sorted.
    pub admin_groups: Vec<String>,
    /// Local accounts off.
    pub local_disabled: bool,
    /// OIDC issuer on.
    pub oidc: bool,
    /// Workload identity on.
    pub workload_identity: bool,
    /// The Key Vault key encrypting Secrets ("" when none).
    pub kms_key: String,
    /// The System pool, if it exists.
    pub system_pool: Option<SystemPoolView>,
}

/// The name a managed cluster's read is counted and refused under.
const GET: &str = "ManagedClusters_Get";

/// The call that answers the user credential.
const USER_CREDENTIALS: &str = "ManagedClusters_ListClusterUserCredentials";

/// The Key Vault key encrypting Secrets ("" when encryption is off).
///
/// # Errors
/// Encryption on without a key: the field is named.
fn kms_key(p: &answers::ClusterProperties) -> Result<String, CloudError> {
    let Some(kms) = p
        .security_profile
        .as_ref()
        .and_then(|s| s.azure_key_vault_kms.as_ref())
        .filter(|k| k.enabled == Some(true))
    else {
        return Ok(String::new());
    };
    kms.key_id
        .clone()
        .ok_or_else(|| answers::lacking(GET, "properties.securityProfile.azureKeyVaultKms.keyId"))
}

/// The System pool `name` as read, with its profile as ARM answered it (for a PUT of its
/// resource).
fn system_pool(c: &answers::ManagedCluster, raw: &Value, name: &str) -> Option<SystemPoolView> {
    let (i, pool) = c
        .properties
        .agent_pool_profiles
        .iter()
        .enumerate()
        .find(|(_, a)| a.name == name)?;
    let profile = raw
        .pointer(&format!("/properties/agentPoolProfiles/{i}"))
        .cloned()
        .unwrap_or_default();
    let p = &pool.properties;
    Some(SystemPoolView {
        name: name.to_string(),
        profile,
        etag: p.etag.clone(),
        version: p.current_orchestrator_version.clone().unwrap_or_default(),
        count: i64::from(p.count),
        state: p.provisioning_state.clone(),
    })
}

/// The cluster as read, in the diff's terms, with its System pool `system`; `raw` is the whole
/// answer (kept for the next PUT).
///
/// # Errors
/// An answer that lacks a field a decision needs: the field is named.
fn observed(
    c: &answers::ManagedCluster,
    raw: Value,
    system: &str,
) -> Result<ObservedCluster, CloudError> {
    let p = &c.properties;
    let access = p.api_server_access_profile.clone().unwrap_or_default();
    let aad = p.aad_profile.clone().unwrap_or_default();
    let security = p.security_profile.clone().unwrap_or_default();
    Ok(ObservedCluster {
        system_pool: system_pool(c, &raw, system),
        raw,
        etag: c.etag.clone(),
        state: p.provisioning_state.clone(),
        location: c.location.clone(),
        fqdn: p
            .fqdn
            .clone()
            .or_else(|| p.private_fqdn.clone())
            .unwrap_or_default(),
        node_group: p.node_resource_group.clone(),
        full_version: p.current_kubernetes_version.clone(),
        sku: c
            .sku
            .as_ref()
            .and_then(|s| s.tier.clone())
            .unwrap_or_else(|| answers::DEFAULT_TIER.into()),
        authorized: sorted(access.authorized_ip_ranges.unwrap_or_default()),
        azure_rbac: aad.enable_azure_rbac.unwrap_or(false),
        admin_groups: sorted(aad.admin_group_object_ids.unwrap_or_default()),
        local_disabled: p.disable_local_accounts.unwrap_or(false),
        oidc: Enabled::on(p.oidc_issuer_profile.as_ref()),
        workload_identity: Enabled::on(security.workload_identity.as_ref()),
        kms_key: kms_key(p)?,
    })
}

fn lifecycle(state: &str) -> Lifecycle {
    match state {
        "Creating" => Lifecycle::Creating,
        // A canceled operation leaves the cluster as it was.
        "Succeeded" | "Canceled" => Lifecycle::Running,
        "Updating" | "Upgrading" | "Scaling" | "Starting" | "Stopping" => Lifecycle::Updating,
        "Deleting" => Lifecycle::Deleting,
        "Failed" => Lifecycle::Failed,
        other => Lifecycle::Other(other.to_string()),
    }
}

/// Reads a kubeconfig's server and CA (what `listClusterUserCredential` answers): its first
/// cluster's; `None` when it names none or is not a kubeconfig.
fn access_of(kubeconfig: &str) -> Option<(String, Option<Vec<u8>>)> {
    let config: answers::Kubeconfig = serde_saphyr::from_str(kubeconfig).ok()?;
    let cluster = config.clusters.into_iter().next()?.cluster;
    let ca = cluster
        .certificate_authority_data
        .and_then(|d| STANDARD.decode(d.trim()).ok());
    Some((cluster.server, ca))
}

/// The API server's address and CA, from the cluster's user credential (cached per cluster
/// and FQDN for [`ACCESS_TTL`]).
async fn access(shared: &Shared, connected: &At, id: &str, fqdn: &str) -> Option<ClusterAccess> {
    let cached = shared
        .access
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get(id)
        .filter(|a| a.fqdn == fqdn && a.read_at.elapsed() < ACCESS_TTL)
        .cloned();
    if cached.is_some() {
        return cached;
    }
    let clients = &connected.clients;
    let answer = clients
        .arm
        .call(
            &clients.calls,
            USER_CREDENTIALS,
            Method::POST,
            &format!("{}/listClusterUserCredential", clients.cluster_path),
            client::CONTAINER,
            None,
            None,
        )
        .await;
    let answer = match answer {
        Ok(a) => a,
        Err(f) => {
            tracing::debug!(cluster = %connected.name, error = %f.error, "the user credential is not readable yet");
            return None;
        }
    };
    let credentials = match answer.read::<answers::CredentialResults>(USER_CREDENTIALS) {
        Ok(c) => c,
        Err(e) => {
            tracing::debug!(cluster = %connected.name, error = %e, "the user credential is not readable");
            return None;
        }
    };
    let text = credentials
        .kubeconfigs
        .first()
        .and_then(|k| STANDARD.decode(&k.value).ok())
        .and_then(|b| String::from_utf8(b).ok())?;
    let (server, ca_pem) = access_of(&text)?;
    let access = ClusterAccess {
        server,
        ca_pem,
        fqdn: fqdn.to_string(),
        read_at: std::time::Instant::now(),
    };
    shared
        .access
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .insert(id.to_string(), access.clone());
    Some(access)
}

/// The managed cluster, or `None` when AKS has none of that name; its API server's address and
/// CA are read once it is neither creating, deleting nor failed.
///
/// # Errors
/// ARM's classified failures.
pub async fn describe(
    shared: &Shared,
    connected: &At,
) -> Result<Option<ManagedCluster<ObservedCluster>>, ProviderError> {
    let clients = &connected.clients;
    let Some(raw) = clients
        .arm
        .get::<Value>(
            &clients.calls,
            GET,
            &clients.cluster_path,
            client::CONTAINER,
        )
        .await?
    else {
        return Ok(None);
    };
    let c: answers::ManagedCluster = read_answer(GET, raw.clone())?;
    let detail = observed(&c, raw, &clients.system_pool)?;
    let id = c.id.clone();
    let life = lifecycle(&detail.state);
    let access = if matches!(
        life,
        Lifecycle::Creating | Lifecycle::Deleting | Lifecycle::Failed
    ) || detail.fqdn.is_empty()
    {
        None
    } else {
        access(shared, connected, &id, &detail.fqdn).await
    };
    let private = c
        .properties
        .api_server_access_profile
        .as_ref()
        .and_then(|a| a.enable_private_cluster)
        .unwrap_or(false);
    let endpoints = access
        .as_ref()
        .and_then(|a| contract::endpoint::parse_url(&a.server))
        .map(|u| Endpoint {
            name: if private {
                EndpointName::Private
            } else {
                EndpointName::Public
            },
            host: u.host,
            port: u.port,
        })
        .into_iter()
        .collect();
    Ok(Some(ManagedCluster {
        id,
        lifecycle: life,
        version: detail.full_version.clone(),
        endpoints,
        ca_pem: Ok(access.and_then(|a| a.ca_pem)),
        tags: answers::tags(&c.tags),
        detail,
    }))
}

/// One look: the cluster, then the state of the operation [`Look`] names.
///
/// # Errors
/// ARM's classified failures.
pub async fn observe(
    connected: &At,
    look: Look<'_>,
) -> Result<Observed<ObservedCluster>, ProviderError> {
    let shared = &connected.clients.shared;
    let Some(cluster) = describe(shared, connected).await? else {
        return Ok(Observed::nothing());
    };
    let clients = &connected.clients;
    look.seen(cluster, |op| {
        clients.arm.operation_state(&clients.calls, &op.id)
    })
    .await
}

/// What only AKS reports of the cluster: `status.aks`.
pub(super) fn report(o: &ObservedCluster) -> AKSControlPlaneObserved {
    AKSControlPlaneObserved {
        location: o.location.clone(),
        node_resource_group: Some(o.node_group.clone()).filter(|g| !g.is_empty()),
        fqdn: Some(o.fqdn.clone()).filter(|f| !f.is_empty()),
        kubernetes_version: Some(o.full_version.clone()).filter(|v| !v.is_empty()),
        provisioning_state: Some(o.state.clone()),
        system_pool_version: o
            .system_pool
            .as_ref()
            .map(|p| p.version.clone())
            .filter(|v| !v.is_empty()),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_user_kubeconfig_gives_the_server_and_the_ca() {
        let ca = STANDARD.encode("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
        let text = format!(
            "apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: {ca}\n    server: https://c-dns-1234.hcp.eastus.azmk8s.io:443\n  name: c\nkind: Config\n"
        );
        let (server, pem) = access_of(&text).unwrap();
        assert_eq!(server, "https://c-dns-1234.hcp.eastus.azmk8s.io:443");
        assert!(
            String::from_utf8(pem.unwrap())
                .unwrap()
                .contains("BEGIN CERTIFICATE")
        );
    }

    #[test]
    fn the_system_pool_is_the_agent_pool_the_spec_names() {
        let raw = serde_json::json!({
            "id": "/subscriptions/s/resourceGroups/g/providers/Microsoft.ContainerService/managedClusters/c",
            "name": "c", "location": "eastus",
            "properties": {"provisioningState": "Succeeded", "currentKubernetesVersion": "1.32.7", "kubernetesVersion": "1.32", "dnsPrefix": "c", "nodeResourceGroup": "MC_g_c_eastus",
                "agentPoolProfiles": [
                    {"name": "pool0", "mode": "System", "count": 3, "currentOrchestratorVersion": "1.32.7", "provisioningState": "Succeeded"},
                    {"name": "pool1", "mode": "User", "count": 1, "provisioningState": "Succeeded"}]}
        });
        let c: answers::ManagedCluster = serde_json::from_value(raw.clone()).unwrap();
        let named = observed(&c, raw.clone(), "pool0").unwrap();
        let pool = named.system_pool.unwrap();
        assert_eq!((pool.name.as_str(), pool.count), ("pool0", 3));
        assert_eq!(pool.profile["name"], "pool0");
        assert!(observed(&c, raw, "system").unwrap().system_pool.is_none());
    }

    #[test]
    fn states_map_to_the_shared_lifecycle() {
        assert_eq!(lifecycle("Creating"), Lifecycle::Creating);
        assert_eq!(lifecycle("Upgrading"), Lifecycle::Updating);
        assert_eq!(lifecycle("Canceled"), Lifecycle::Running);
        assert_eq!(lifecycle("Failed"), Lifecycle::Failed);
    }
}
