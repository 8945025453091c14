//! Reading GKE: the cluster, mapped to the shared [`ManagedCluster`] with GKE's own view
//! ([`ObservedCluster`]), the state of a tracked operation, and the one look a pass takes
//! ([`observe`]). GKE compares nothing beyond the cluster itself, so it has no extras.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use contract::api::{Endpoint, EndpointName};
use contract::plan::{Lifecycle, OperationState};
use google_cloud_container_v1::model as gke;
use provider_runtime::control_plane::{Look, ManagedCluster, Observed};
use provider_runtime::{CloudCalls, ProviderError};

use super::{At, Clients, SERVICE};
use crate::api::GKEControlPlaneObserved;
use crate::client::{self, absent_if_not_found, counted};

/// What GKE says about a cluster, in the terms the diff needs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ObservedCluster {
    /// GKE's status word.
    pub state: String,
    /// Why it is in error.
    pub status_message: String,
    /// `currentMasterVersion`.
    pub master_version: String,
    /// The location.
    pub location: String,
    /// The node pools' names.
    pub pools: Vec<String>,
    /// Whether the public endpoint is on.
    pub public: bool,
    /// The authorized networks, sorted.
    pub authorized: Vec<(String, String)>,
    /// The logging components on.
    pub logging: Vec<gke::logging_component_config::Component>,
    /// The workload pool.
    pub workload_pool: String,
    /// The Secrets encryption key (empty: none).
    pub kms_key: String,
    /// The release channel.
    pub channel: gke::release_channel::Channel,
    /// Whether the DNS endpoint takes outside traffic.
    pub dns_external: bool,
    /// The label fingerprint.
    pub fingerprint: String,
}

fn strip_gke_build(version: &str) -> String {
    version.split("-gke.").next().unwrap_or(version).to_string()
}

/// A GKE endpoint (`34.1.2.3`, `127.0.0.1:30123`, a DNS name), read by the shared URL rule
/// (443 when no port is written).
fn endpoint(name: EndpointName, text: &str) -> Option<Endpoint> {
    let parsed = contract::endpoint::parse_url(text)?;
    Some(Endpoint {
        name,
        host: parsed.host,
        port: parsed.port,
    })
}

/// The shared view of a GKE cluster.
fn managed(c: &gke::Cluster) -> ManagedCluster<ObservedCluster> {
    use gke::cluster::Status;
    let lifecycle = match &c.status {
        Status::Provisioning => Lifecycle::Creating,
        Status::Running => Lifecycle::Running,
        Status::Reconciling => Lifecycle::Updating,
        Status::Stopping => Lifecycle::Deleting,
        Status::Error => Lifecycle::Failed,
        Status::Degraded => Lifecycle::Degraded,
        other => Lifecycle::Other(other.name().unwrap_or("UNKNOWN").to_string()),
    };
    let cpe = c.control_plane_endpoints_config.as_ref();
    let ip = cpe.and_then(|e| e.ip_endpoints_config.as_ref());
    let dns = cpe.and_then(|e| e.dns_endpoint_config.as_ref());
    let public = ip.and_then(|i| i.enable_public_endpoint).unwrap_or(true);
    let mut endpoints = Vec::new();
    if public {
        let text = ip
            .map(|i| i.public_endpoint.as_str())
            .filter(|p| !p.is_empty())
            .unwrap_or(&c.endpoint);
        endpoints.extend(endpoint(EndpointName::Public, text));
    }
    let private = ip.map(|i| i.private_endpoint.clone()).unwrap_or_default();
    endpoints.extend(endpoint(EndpointName::Private, &private));
    endpoints.extend(dns.and_then(|d| endpoint(EndpointName::Dns, &d.endpoint)));
    let ca = c
        .master_auth
        .as_ref()
        .map(|m| m.cluster_ca_certificate.trim())
        .filter(|d| !d.is_empty());
    let ca_pem = match ca {
        None => Ok(None),
        Some(data) => STANDARD
            .decode(data)
            .map(Some)
            .map_err(|e| format!("GKE returned a cluster CA that is not base64: {e}")),
    };
    let mut authorized: Vec<(String, String)> = ip
        .and_then(|i| i.authorized_networks_config.as_ref())
        .filter(|m| m.enabled)
        .map(|m| {
            m.cidr_blocks
                .iter()
                .map(|b| (b.cidr_block.clone(), b.display_name.clone()))
                .collect()
        })
        .unwrap_or_default();
    authorized.sort();
    let detail = ObservedCluster {
        state: c.status.name().unwrap_or("UNKNOWN").to_string(),
        status_message: c
            .conditions
            .iter()
            .map(|c| c.message.as_str())
            .collect::<Vec<_>>()
            .join("; "),
        master_version: c.current_master_version.clone(),
        location: c.location.clone(),
        pools: c.node_pools.iter().map(|p| p.name.clone()).collect(),
        public,
        authorized,
        logging: c
            .logging_config
            .as_ref()
            .and_then(|l| l.component_config.as_ref())
            .map(|cc| cc.enable_components.clone())
            .unwrap_or_default(),
        workload_pool: c
            .workload_identity_config
            .as_ref()
            .map(|w| w.workload_pool.clone())
            .unwrap_or_default(),
        kms_key: c
            .database_encryption
            .as_ref()
            .filter(|d| d.state == gke::database_encryption::State::Encrypted)
            .map(|d| d.key_name.clone())
            .unwrap_or_default(),
        channel: c
            .release_channel
            .as_ref()
            .map(|r| r.channel.clone())
            .unwrap_or_default(),
        dns_external: dns.and_then(|d| d.allow_external_traffic).unwrap_or(false),
        fingerprint: c.label_fingerprint.clone(),
    };
    ManagedCluster {
        id: c.self_link.clone(),
        lifecycle,
        version: strip_gke_build(&c.current_master_version),
        endpoints,
        ca_pem,
        tags: c
            .resource_labels
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        detail,
    }
}

/// A GKE operation in the shared terms.
pub fn operation_state(op: &gke::Operation) -> OperationState {
    use gke::operation::Status;
    match op.status {
        Status::Done => match &op.error {
            Some(e) if e.code != 0 || !e.message.is_empty() => OperationState::Failed(format!(
                "failed ({})",
                if e.message.is_empty() {
                    "no message given"
                } else {
                    e.message.as_str()
                }
            )),
            _ => OperationState::Succeeded,
        },
        Status::Aborting => OperationState::Failed("is being aborted".into()),
        _ => OperationState::Running,
    }
}

/// Reads an operation by name in the cluster's location (`parent`); the machine pool role
/// follows its operations with it too.
pub async fn get_operation(
    clients: &client::Clients,
    calls: &CloudCalls,
    parent: &str,
    id: &str,
) -> Result<Option<OperationState>, ProviderError> {
    let op = absent_if_not_found(
        counted(
            calls,
            SERVICE,
            "GetOperation",
            clients
                .container
                .get_operation()
                .set_name(format!("{parent}/operations/{id}"))
                .send(),
        )
        .await,
    )?;
    Ok(op.as_ref().map(operation_state))
}

/// Reads the cluster at `clients`' path; `None` when GKE has none.
///
/// # Errors
/// GKE's, but not-found.
pub(super) async fn get_cluster(
    clients: &Clients,
) -> Result<Option<ManagedCluster<ObservedCluster>>, ProviderError> {
    let found = absent_if_not_found(
        counted(
            &clients.calls,
            SERVICE,
            "GetCluster",
            clients
                .gke
                .container
                .get_cluster()
                .set_name(&clients.path)
                .send(),
        )
        .await,
    )?;
    Ok(found.as_ref().map(managed))
}

/// One look: the cluster, then the operation [`Look::operation`] names.
///
/// # Errors
/// GKE's, but not-found.
pub(super) async fn observe(
    connected: &At,
    look: Look<'_>,
) -> Result<Observed<ObservedCluster>, ProviderError> {
    let clients = &connected.clients;
    let Some(cluster) = get_cluster(clients).await? else {
        return Ok(Observed::nothing());
    };
    look.seen(cluster, |op| {
        get_operation(&clients.gke, &clients.calls, &clients.parent, &op.id)
    })
    .await
}

/// What only GKE reports of the cluster: `status.gke`.
pub(super) fn report(cluster: &ObservedCluster) -> GKEControlPlaneObserved {
    GKEControlPlaneObserved {
        location: cluster.location.clone(),
        master_version: Some(cluster.master_version.clone()).filter(|v| !v.is_empty()),
        state: Some(cluster.state.clone()),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn gke_endpoints_read_with_and_without_a_port() {
        let e = endpoint(EndpointName::Public, "34.1.2.3").unwrap();
        assert_eq!((e.host.as_str(), e.port), ("34.1.2.3", 443));
        let e = endpoint(EndpointName::Public, "127.0.0.1:30123").unwrap();
        assert_eq!((e.host.as_str(), e.port), ("127.0.0.1", 30123));
        assert!(endpoint(EndpointName::Private, "").is_none());
        assert_eq!(strip_gke_build("1.33.5-gke.1201000"), "1.33.5");
    }

    #[test]
    fn a_done_operation_with_an_error_is_a_failure_with_googles_words() {
        let mut op = gke::Operation::new().set_status(gke::operation::Status::Done);
        assert_eq!(operation_state(&op), OperationState::Succeeded);
        op.error = Some(
            google_cloud_rpc::model::Status::new()
                .set_code(8)
                .set_message("Quota 'CPUS' exceeded."),
        );
        assert_eq!(
            operation_state(&op),
            OperationState::Failed("failed (Quota 'CPUS' exceeded.)".into())
        );
        let running = gke::Operation::new().set_status(gke::operation::Status::Running);
        assert_eq!(operation_state(&running), OperationState::Running);
    }
}
