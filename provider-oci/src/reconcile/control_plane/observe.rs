//! Reading OKE: the cluster (by its recorded OCID, else by name, ours first), mapped to the
//! shared [`ManagedCluster`] with OKE's own view ([`ObservedCluster`]); its CA from its
//! kubeconfig; the state of the work request the kernel tracks; and the kind's status from
//! what was read. OKE has no extras to compare.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use contract::api::{Endpoint, EndpointName};
use contract::kubeconfig::Kubeconfig;
use contract::plan::Lifecycle;
use provider_runtime::ProviderError;
use provider_runtime::control_plane::{Look, ManagedCluster, Observed};
use reqwest::Method;
use serde_json::json;

use super::{At, Clients};
use crate::api::OKEControlPlaneObserved;
use crate::client::answers::{Cluster, ClusterSummary};
use crate::client::{Call, Service, q};
use crate::reconcile::{Named, Seen, find_named};
use crate::scope::Shared;

/// What OKE says about a cluster, in the terms the diff needs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ObservedCluster {
    /// `lifecycleState`.
    pub state: String,
    /// `kubernetesVersion`.
    pub version: String,
    /// `endpointConfig.isPublicIpEnabled`.
    pub public: bool,
    /// `type`.
    pub cluster_type: String,
    /// `options.openIdConnectDiscovery.isOpenIdConnectDiscoveryEnabled`.
    pub oidc_discovery: bool,
    /// `availableKubernetesUpgrades`.
    pub upgrades: Vec<String>,
    /// `vcnId`.
    pub vcn: Option<String>,
}

fn observed(c: &Cluster) -> ObservedCluster {
    ObservedCluster {
        state: c.lifecycle_state.clone(),
        version: c.kubernetes_version.clone(),
        public: c.endpoint_config.is_public_ip_enabled,
        cluster_type: c.cluster_type.clone(),
        // No options, no discovery settings, or no flag: OIDC discovery is off.
        oidc_discovery: c
            .options
            .as_ref()
            .and_then(|o| o.open_id_connect_discovery.as_ref())
            .and_then(|d| d.is_open_id_connect_discovery_enabled)
            .unwrap_or(false),
        upgrades: c.available_kubernetes_upgrades.clone().unwrap_or_default(),
        vcn: c.vcn_id.clone(),
    }
}

/// OKE's lifecycleState in the shared terms.
pub fn lifecycle(state: &str) -> Lifecycle {
    match state {
        "CREATING" => Lifecycle::Creating,
        "ACTIVE" => Lifecycle::Running,
        "UPDATING" => Lifecycle::Updating,
        "DELETING" => Lifecycle::Deleting,
        "FAILED" => Lifecycle::Failed,
        other => Lifecycle::Other(other.to_string()),
    }
}

/// A `host:port` endpoint of OKE as a shared one.
fn endpoint(name: EndpointName, text: &str) -> Option<Endpoint> {
    let url = contract::endpoint::parse_url(&format!("https://{}", text.trim()))?;
    Some(Endpoint {
        name,
        host: url.host,
        port: url.port,
    })
}

/// Reads a kubeconfig's CA (what CreateKubeconfig answers).
fn ca_of(kubeconfig: &str) -> Option<Vec<u8>> {
    let parsed = Kubeconfig::parse(kubeconfig.as_bytes()).ok()?;
    let data = parsed
        .clusters
        .first()?
        .cluster
        .certificate_authority_data
        .as_deref()?;
    STANDARD
        .decode(data.trim())
        .ok()
        .filter(|pem| !pem.is_empty())
}

/// The cluster's CA, from its kubeconfig (cached per cluster a while).
async fn ca(shared: &Shared, clients: &Clients, name: &str, id: &str) -> Option<Vec<u8>> {
    if let Some(ca) = shared.cas.get(&id.to_string()) {
        return Some(ca);
    }
    let body = json!({ "tokenVersion": "2.0.0" });
    let path = format!("/clusters/{id}/kubeconfig/content");
    let call = Call::send(
        "CreateKubeconfig",
        Service::ContainerEngine,
        &Method::POST,
        &path,
        Some(&body),
    );
    let answer = match clients.oci.call(&clients.calls, call).await {
        Ok(a) => a,
        Err(f) => {
            tracing::debug!(cluster = %name, error = %f.error, "the kubeconfig is not readable yet");
            return None;
        }
    };
    let ca = ca_of(&answer.text)?;
    shared.cas.put(id.to_string(), ca.clone());
    Some(ca)
}

/// The cluster named `name`, by its recorded OCID or else by name (ours first), with what a
/// change of it needs.
///
/// # Errors
/// OKE's.
pub(super) async fn find(
    clients: &Clients,
    name: &str,
) -> Result<Option<(Cluster, Seen)>, ProviderError> {
    let named = Named {
        get: "GetCluster",
        list: "ListClusters",
        collection: "/clusters",
        filter: format!("compartmentId={}&name={}", q(&clients.compartment), q(name)),
        name,
        recorded: clients.recorded.as_deref(),
    };
    find_named::<ClusterSummary, Cluster>(&clients.oci, &clients.calls, &named, &clients.owner)
        .await
}

/// The cluster read whole (`c`), as the kernel reads it; its CA once it serves.
async fn managed(
    shared: &Shared,
    clients: &Clients,
    name: &str,
    c: &Cluster,
    seen: Seen,
) -> ManagedCluster<ObservedCluster> {
    let detail = observed(c);
    let life = lifecycle(&detail.state);
    let mut endpoints: Vec<Endpoint> = Vec::new();
    // No endpoints yet (a cluster being created), or not this one: it is not served there.
    if let Some(e) = &c.endpoints {
        if let Some(p) = &e.public_endpoint {
            endpoints.extend(endpoint(EndpointName::Public, p));
        }
        if let Some(p) = &e.private_endpoint {
            endpoints.extend(endpoint(EndpointName::Private, p));
        }
    }
    let ca = if life.serving() && !endpoints.is_empty() {
        ca(shared, clients, name, &seen.id).await
    } else {
        None
    };
    ManagedCluster {
        id: seen.id,
        lifecycle: life,
        version: detail.version.clone(),
        endpoints,
        ca_pem: Ok(ca),
        tags: seen.tags,
        detail,
    }
}

/// One look: the cluster (kept for the pass's change, [`super::LastSeen`]), and the state of the
/// work request [`Look::operation`] names.
///
/// # Errors
/// OKE's.
pub(super) async fn observe(
    connected: &At,
    look: Look<'_>,
) -> Result<Observed<ObservedCluster>, ProviderError> {
    let clients = &connected.clients;
    let shared = &clients.shared;
    let found = find(clients, &connected.name).await?;
    clients
        .seen
        .set(found.as_ref().map(|(_, seen)| seen.clone()));
    let Some((c, seen)) = found else {
        return Ok(Observed::nothing());
    };
    let cluster = managed(shared, clients, &connected.name, &c, seen).await;
    look.seen(cluster, |op| {
        clients.oci.work_request_state(&clients.calls, &op.id)
    })
    .await
}

/// What only OKE reports of the cluster: `status.oke`.
pub(super) fn report(c: &ObservedCluster) -> OKEControlPlaneObserved {
    OKEControlPlaneObserved {
        lifecycle_state: Some(c.state.clone()).filter(|s| !s.is_empty()),
        kubernetes_version: Some(c.version.clone()).filter(|v| !v.is_empty()),
        available_upgrades: c.upgrades.clone(),
        cluster_type: Some(c.cluster_type.clone()).filter(|t| !t.is_empty()),
        vcn_id: c.vcn.clone(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn oke_endpoints_are_host_and_port() {
        let e = endpoint(EndpointName::Public, "150.136.1.2:6443").unwrap();
        assert_eq!((e.host.as_str(), e.port), ("150.136.1.2", 6443));
        let e = endpoint(EndpointName::Private, "10.0.0.5:6443").unwrap();
        assert_eq!(e.name, EndpointName::Private);
        assert!(endpoint(EndpointName::Public, "").is_none());
    }

    #[test]
    fn a_kubeconfig_gives_the_ca() {
        let ca = STANDARD.encode("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
        let text = format!(
            "---\napiVersion: v1\nkind: \"\"\nclusters:\n- name: cluster-c\n  cluster:\n    server: https://1.2.3.4:6443\n    certificate-authority-data: {ca}\n"
        );
        assert!(
            String::from_utf8(ca_of(&text).unwrap())
                .unwrap()
                .contains("BEGIN CERTIFICATE")
        );
    }

    #[test]
    fn a_cluster_read_whole_is_what_the_diff_needs() {
        let cluster = |extra: serde_json::Value| -> Result<Cluster, provider_runtime::CloudError> {
            let mut body = json!({
                "id": "ocid1.cluster.oc1.iad.a",
                "lifecycleState": "ACTIVE",
                "kubernetesVersion": "v1.31.1",
                "type": "ENHANCED_CLUSTER",
                "endpointConfig": { "isPublicIpEnabled": true },
                "vcnId": "ocid1.vcn.oc1.iad.a",
                "availableKubernetesUpgrades": ["v1.32.1"],
            });
            if let (Some(b), serde_json::Value::Object(e)) = (body.as_object_mut(), extra) {
                b.extend(e);
            }
            provider_runtime::read_answer("GetCluster", body)
        };
        let o = observed(&cluster(json!({})).unwrap());
        assert_eq!(
            o,
            ObservedCluster {
                state: "ACTIVE".into(),
                version: "v1.31.1".into(),
                public: true,
                cluster_type: "ENHANCED_CLUSTER".into(),
                oidc_discovery: false,
                upgrades: vec!["v1.32.1".into()],
                vcn: Some("ocid1.vcn.oc1.iad.a".into()),
            }
        );
        let on = json!({ "options": { "openIdConnectDiscovery": { "isOpenIdConnectDiscoveryEnabled": true } } });
        assert!(observed(&cluster(on).unwrap()).oidc_discovery);
        // Read as private, a public endpoint would be asked for again: refused instead.
        let unsaid = cluster(json!({ "endpointConfig": { "subnetId": "s" } })).unwrap_err();
        assert_eq!(
            unsaid.to_string(),
            "GetCluster: the answer has no `endpointConfig.isPublicIpEnabled`"
        );
    }

    #[test]
    fn states_map_to_the_shared_lifecycle() {
        assert_eq!(lifecycle("CREATING"), Lifecycle::Creating);
        assert_eq!(lifecycle("ACTIVE"), Lifecycle::Running);
        assert_eq!(lifecycle("UPDATING"), Lifecycle::Updating);
        assert_eq!(lifecycle("FAILED"), Lifecycle::Failed);
        assert_eq!(lifecycle("DELETED"), Lifecycle::Other("DELETED".into()));
    }
}
