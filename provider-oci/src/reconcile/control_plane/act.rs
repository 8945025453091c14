//! The Container Engine calls that change something: create, tag (adopt), upgrade, update,
//! delete, and [`act`], which asks for the one [`Step`] of a pass. Every change answers a work
//! request the kernel tracks. A change of the cluster uses the OCID (and ETag, tags) the pass's
//! look saw; with none kept, it looks the cluster up itself.

use std::collections::BTreeMap;

use contract::conditions::Reason;
use contract::version::KubeVersion;
use provider_runtime::control_plane::ManagedCluster;
use provider_runtime::control_plane::{Request, Started, Step};
use provider_runtime::{CloudError, ProviderError};
use reqwest::Method;
use serde_json::{Value, json};

use super::desired::DesiredCluster;
use super::diff::ClusterChange;
use super::observe::{ObservedCluster, find};
use super::{At, Clients};
use crate::client::answers::{Cluster, ClusterOptions};
use crate::client::{Answer, Call, Service, q};
use crate::reconcile::{Seen, offered_version, request_delete};
use crate::scope;
use provider_runtime::overrides::overridden;

/// Asks OKE for `step`.
///
/// # Errors
/// OKE's; a terminal `InvalidSpec` for a create without a network or a version OKE does not
/// offer.
pub(super) async fn act(
    connected: &At,
    step: Step<'_, DesiredCluster, ClusterChange>,
    request: &Request,
) -> Result<Started<ManagedCluster<ObservedCluster>>, ProviderError> {
    let (clients, name) = (&connected.clients, connected.name.as_str());
    match step {
        Step::Create { desired, version } => create(clients, name, desired, version, request).await,
        Step::Tag { id } => retag(clients, name, id, |t| t.extend(request.tags.clone())).await,
        Step::Untag { id, key } => {
            retag(clients, name, id, |t| {
                t.remove(key);
            })
            .await
        }
        Step::Upgrade { to } => upgrade(clients, name, to).await,
        Step::Update { change, .. } => update(clients, name, change).await,
        Step::Delete => delete(clients, name).await,
    }
}

/// What OKE's answer to a change leaves to track: its work request, when it gave one.
fn started(answer: Answer) -> Started<ManagedCluster<ObservedCluster>> {
    match answer.work_request {
        Some(w) => Started::Operation(w),
        None => Started::Untracked,
    }
}

/// The cluster as this pass's look saw it, else as it is now (by its recorded OCID, else by
/// name).
async fn seen(clients: &Clients, name: &str) -> Result<Option<Seen>, ProviderError> {
    if let Some(seen) = clients.seen.get() {
        return Ok(Some(seen));
    }
    let found = find(clients, name).await?.map(|(_, seen)| seen);
    clients.seen.set(found.clone());
    Ok(found)
}

/// The OCID of the cluster to change.
async fn cluster_id(clients: &Clients, name: &str) -> Result<String, ProviderError> {
    match seen(clients, name).await? {
        Some(seen) => Ok(seen.id),
        None => Err(CloudError::NotFound(format!("OKE cluster {name} is not known yet")).into()),
    }
}

/// The exact version OKE offers for `want`.
async fn version_for(clients: &Clients, want: &KubeVersion) -> Result<String, ProviderError> {
    let path = format!(
        "/clusterOptions/all?compartmentId={}",
        q(&clients.compartment)
    );
    let (options, _) = clients
        .oci
        .get::<ClusterOptions>(
            &clients.calls,
            "GetClusterOptions",
            Service::ContainerEngine,
            &path,
        )
        .await?
        .ok_or_else(|| CloudError::NotFound("OKE's cluster options".into()))?;
    offered_version(&options.kubernetes_versions, want).map_err(|offered| {
        ProviderError::terminal(
            Reason::InvalidSpec,
            format!(
                "spec.version {want}: OKE in {} offers no such version; it offers {offered}",
                clients.oci.region(),
            ),
        )
    })
}

/// One change of the cluster: `operation`, `method` on `path` with `body`.
async fn change(
    clients: &Clients,
    operation: &'static str,
    method: &Method,
    path: &str,
    body: &Value,
    etag: Option<&str>,
) -> Result<Started<ManagedCluster<ObservedCluster>>, ProviderError> {
    let call = Call::send(
        operation,
        Service::ContainerEngine,
        method,
        path,
        Some(body),
    )
    .if_match(etag);
    Ok(started(clients.oci.call(&clients.calls, call).await?))
}

/// CreateCluster named `name` at `version` (the exact patch OKE offers).
async fn create(
    clients: &Clients,
    name: &str,
    desired: &DesiredCluster,
    version: &KubeVersion,
    request: &Request,
) -> Result<Started<ManagedCluster<ObservedCluster>>, ProviderError> {
    let net = &desired.network;
    if net.vcn.is_empty() || net.endpoint_subnet.is_empty() {
        return Err(ProviderError::terminal(
            Reason::InvalidSpec,
            "no VCN or endpoint subnet to create the OKE cluster in: set spec.infrastructure.network.id and subnetIDs, or use an OKECluster",
        ));
    }
    let exact = version_for(clients, version).await?;
    let mut network = json!({ "servicesCidr": desired.services_cidr });
    if let Some(pods) = &desired.pods_cidr {
        network["podsCidr"] = json!(pods);
    }
    let mut options = json!({
        "serviceLbSubnetIds": net.lb_subnets,
        "kubernetesNetworkConfig": network,
    });
    if desired.oidc_discovery {
        options["openIdConnectDiscovery"] = json!({ "isOpenIdConnectDiscoveryEnabled": true });
    }
    let mut body = json!({
        "name": name,
        "compartmentId": clients.compartment,
        "vcnId": net.vcn,
        "kubernetesVersion": exact,
        "endpointConfig": {
            "subnetId": net.endpoint_subnet,
            "isPublicIpEnabled": desired.public,
        },
        "options": options,
        "freeformTags": request.tags,
        "type": desired.cluster_type,
        "clusterPodNetworkOptions": [{ "cniType": desired.cni }],
    });
    if let Some(key) = &desired.kms_key {
        body["kmsKeyId"] = json!(key);
    }
    if let Some(patch) = &desired.request_overrides {
        body = overridden(&body, patch, scope::PROVIDER)?;
    }
    let token = request.create_token("CreateCluster");
    let call = Call::send(
        "CreateCluster",
        Service::ContainerEngine,
        &Method::POST,
        "/clusters",
        Some(&body),
    )
    .retry_token(&token);
    let answer = clients.oci.call(&clients.calls, call).await?;
    Ok(Started::Created {
        id: answer.work_request.unwrap_or_default(),
        observed: None,
        overrides: desired.request_overrides.is_some(),
    })
}

/// Puts our tags on the cluster `id` (adopting it, or putting them back), keeping its others.
/// UpdateCluster with the cluster's freeform tags as `change` leaves them (OKE replaces the
/// whole map).
async fn retag(
    clients: &Clients,
    name: &str,
    id: &str,
    change_tags: impl FnOnce(&mut BTreeMap<String, String>),
) -> Result<Started<ManagedCluster<ObservedCluster>>, ProviderError> {
    let seen = match clients.seen.get().filter(|s| s.id == id) {
        Some(seen) => Some(seen),
        None => {
            let path = format!("/clusters/{id}");
            clients
                .oci
                .get::<Cluster>(
                    &clients.calls,
                    "GetCluster",
                    Service::ContainerEngine,
                    &path,
                )
                .await?
                .filter(|(c, _)| c.lifecycle_state != "DELETED")
                .map(|(c, etag)| Seen::of(&c, etag))
        }
    };
    let Some(seen) = seen else {
        return Err(CloudError::NotFound(format!("OKE cluster {name} is gone")).into());
    };
    let mut tags = seen.tags;
    change_tags(&mut tags);
    change(
        clients,
        "UpdateCluster",
        &Method::PUT,
        &format!("/clusters/{id}"),
        &json!({ "freeformTags": tags }),
        seen.etag.as_deref(),
    )
    .await
}

/// UpdateCluster to the exact patch OKE offers for `to`; OKE refuses while node pools lag,
/// which is a wait.
async fn upgrade(
    clients: &Clients,
    name: &str,
    to: &KubeVersion,
) -> Result<Started<ManagedCluster<ObservedCluster>>, ProviderError> {
    let exact = version_for(clients, to).await?;
    let id = cluster_id(clients, name).await?;
    let path = format!("/clusters/{id}");
    let body = json!({ "kubernetesVersion": exact });
    let call = Call::send(
        "UpdateCluster",
        Service::ContainerEngine,
        &Method::PUT,
        &path,
        Some(&body),
    );
    match clients.oci.call(&clients.calls, call).await {
        Ok(a) => Ok(started(a)),
        Err(f) if f.code == "InvalidParameter" && f.error.to_string().contains("node pool") => {
            Ok(Started::Busy(f.error.to_string()))
        }
        Err(f) => Err(f.into()),
    }
}

/// The one call of `change`.
async fn update(
    clients: &Clients,
    name: &str,
    change_: &ClusterChange,
) -> Result<Started<ManagedCluster<ObservedCluster>>, ProviderError> {
    let id = cluster_id(clients, name).await?;
    let path = format!("/clusters/{id}");
    match change_ {
        ClusterChange::PublicEndpoint(public) => {
            change(
                clients,
                "UpdateClusterEndpointConfig",
                &Method::POST,
                &format!("{path}/actions/updateEndpointConfig"),
                &json!({ "isPublicIpEnabled": public }),
                None,
            )
            .await
        }
        ClusterChange::Enhanced => {
            change(
                clients,
                "UpdateCluster",
                &Method::PUT,
                &path,
                &json!({ "type": "ENHANCED_CLUSTER" }),
                None,
            )
            .await
        }
        ClusterChange::OidcDiscovery(on) => {
            change(
                clients,
                "UpdateCluster",
                &Method::PUT,
                &path,
                &json!({ "options": { "openIdConnectDiscovery": { "isOpenIdConnectDiscoveryEnabled": on } } }),
                None,
            )
            .await
        }
    }
}

/// DeleteCluster: a cluster already gone is gone; a second delete while OKE deletes (409) is a
/// wait like any other.
async fn delete(
    clients: &Clients,
    name: &str,
) -> Result<Started<ManagedCluster<ObservedCluster>>, ProviderError> {
    let Some(seen) = seen(clients, name).await? else {
        return Ok(Started::Gone);
    };
    let path = format!("/clusters/{}", seen.id);
    let requested = request_delete(&clients.oci, &clients.calls, "DeleteCluster", &path).await;
    Started::after_delete(requested.map(|work_request| match work_request {
        Some(w) => Started::Operation(w),
        None => Started::Untracked,
    }))
}
