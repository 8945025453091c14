//! Reading AKS: the managed cluster (mapped to the kernel's [`ManagedCluster`]), its API
//! server's address and CA (from the user credential, cached), and the state of the operation
//! `status.operation` tracks. AKS compares nothing beyond the cluster, so there are no extras.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use contract::api::{Endpoint, EndpointName};
use contract::plan::Lifecycle;
use provider_runtime::ProviderError;
use provider_runtime::control_plane::{Look, ManagedCluster, Observed};
use reqwest::Method;
use serde_json::Value;

use super::desired::sorted;
use super::{AksConnected, SYSTEM_POOL};
use crate::client;
use crate::reconcile::tags_of;
use crate::scope::{ClusterAccess, Shared};

/// How long an API server address and CA read from the user credential are reused.
const ACCESS_TTL: std::time::Duration = std::time::Duration::from_secs(600);

/// The System pool as AKS reports it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SystemPoolView {
    /// Its profile as read (for a PUT of its resource).
    pub profile: Value,
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
    /// Its ETag.
    pub etag: String,
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

fn observed(c: &Value) -> ObservedCluster {
    let p = &c["properties"];
    let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let system_pool = p["agentPoolProfiles"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["name"] == SYSTEM_POOL)
        .map(|a| SystemPoolView {
            profile: a.clone(),
            version: s(&a["currentOrchestratorVersion"]),
            count: a["count"].as_i64().unwrap_or(0),
            state: s(&a["provisioningState"]),
        });
    ObservedCluster {
        raw: c.clone(),
        etag: s(&c["eTag"]),
        state: s(&p["provisioningState"]),
        location: s(&c["location"]),
        fqdn: match p["fqdn"].as_str() {
            Some(f) => f.to_string(),
            None => s(&p["privateFQDN"]),
        },
        node_group: s(&p["nodeResourceGroup"]),
        full_version: s(&p["currentKubernetesVersion"]),
        sku: s(&c["sku"]["tier"]),
        authorized: sorted(
            p["apiServerAccessProfile"]["authorizedIPRanges"]
                .as_array()
                .into_iter()
                .flatten()
                .map(s),
        ),
        azure_rbac: p["aadProfile"]["enableAzureRBAC"] == true,
        admin_groups: sorted(
            p["aadProfile"]["adminGroupObjectIDs"]
                .as_array()
                .into_iter()
                .flatten()
                .map(s),
        ),
        local_disabled: p["disableLocalAccounts"] == true,
        oidc: p["oidcIssuerProfile"]["enabled"] == true,
        workload_identity: p["securityProfile"]["workloadIdentity"]["enabled"] == true,
        kms_key: if p["securityProfile"]["azureKeyVaultKms"]["enabled"] == true {
            s(&p["securityProfile"]["azureKeyVaultKms"]["keyId"])
        } else {
            String::new()
        },
        system_pool,
    }
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

/// Reads a kubeconfig's server and CA (what `listClusterUserCredential` answers).
fn access_of(kubeconfig: &str) -> Option<(String, Option<Vec<u8>>)> {
    let v: Value = serde_saphyr::from_str(kubeconfig).ok()?;
    let cluster = &v["clusters"][0]["cluster"];
    let server = cluster["server"].as_str()?.to_string();
    let ca = cluster["certificate-authority-data"]
        .as_str()
        .and_then(|d| STANDARD.decode(d.trim()).ok());
    Some((server, ca))
}

/// The API server's address and CA, from the cluster's user credential (cached per cluster
/// and FQDN for [`ACCESS_TTL`]).
async fn access(
    shared: &Shared,
    connected: &AksConnected,
    id: &str,
    fqdn: &str,
) -> Option<ClusterAccess> {
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
            "ManagedClusters_ListClusterUserCredentials",
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
    let text = answer.body["kubeconfigs"][0]["value"]
        .as_str()
        .and_then(|v| STANDARD.decode(v).ok())
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
    connected: &AksConnected,
) -> Result<Option<ManagedCluster<ObservedCluster>>, ProviderError> {
    let clients = &connected.clients;
    let Some(c) = clients
        .arm
        .get(
            &clients.calls,
            "ManagedClusters_Get",
            &clients.cluster_path,
            client::CONTAINER,
        )
        .await?
    else {
        return Ok(None);
    };
    let detail = observed(&c);
    let id = c["id"].as_str().unwrap_or_default().to_string();
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
    let private = c["properties"]["apiServerAccessProfile"]["enablePrivateCluster"] == true;
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
        tags: tags_of(&c),
        detail,
    }))
}

/// One look: the cluster, then the state of the operation [`Look`] names.
///
/// # Errors
/// ARM's classified failures.
pub async fn observe(
    shared: &Shared,
    connected: &AksConnected,
    look: Look<'_>,
) -> Result<Observed<ObservedCluster, ()>, ProviderError> {
    let Some(cluster) = describe(shared, connected).await? else {
        return Ok(Observed::nothing());
    };
    let operation = match look.operation(&cluster) {
        Some(op) => {
            let clients = &connected.clients;
            clients.arm.operation_state(&clients.calls, &op.id).await?
        }
        None => None,
    };
    Ok(Observed {
        cluster: Some(cluster),
        operation,
        extra: (),
    })
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
    fn states_map_to_the_shared_lifecycle() {
        assert_eq!(lifecycle("Creating"), Lifecycle::Creating);
        assert_eq!(lifecycle("Upgrading"), Lifecycle::Updating);
        assert_eq!(lifecycle("Canceled"), Lifecycle::Running);
        assert_eq!(lifecycle("Failed"), Lifecycle::Failed);
    }
}
