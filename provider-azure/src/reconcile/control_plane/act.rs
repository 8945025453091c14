//! The ARM calls that change a managed cluster: create it (with its System pool), tag it as
//! ours, upgrade it, change its settings or its System pool, delete it; and the dispatch of the
//! kernel's [`Step`] to them. A change PUTs the cluster as just read, guarded by its `eTag`.

use std::collections::BTreeMap;

use provider_runtime::control_plane::{ManagedCluster, Request, Started, Step};
use provider_runtime::{CloudError, ProviderError};
use reqwest::Method;
use serde_json::{Value, json};

use super::At;
use super::desired::{DesiredCluster, Settings};
use super::diff::ClusterChange;
use super::observe::{ObservedCluster, describe};
use crate::api::{NetworkPlugin, NetworkPolicy};
use crate::client;
use crate::client::answers::Identified;
use crate::reconcile::aks_version;
use crate::scope;
use crate::scope::Shared;
use provider_runtime::overrides::overridden;

/// AKS's call that creates a cluster, the one that takes `spec.aks.requestOverrides`.
pub const CREATE_CALL: &str = "ManagedClusters_CreateOrUpdate";

/// Asks AKS for `step`.
///
/// # Errors
/// ARM's classified failures; a terminal `InvalidSpec` for a create without a subnet or with
/// request overrides that break the body.
pub async fn act(
    connected: &At,
    step: Step<'_, DesiredCluster, ClusterChange>,
    request: &Request,
) -> Result<Started<ManagedCluster<ObservedCluster>>, ProviderError> {
    let shared = &connected.clients.shared;
    match step {
        Step::Create { desired, version } => {
            create(connected, desired, &aks_version(version), request).await
        }
        Step::Tag { .. } => {
            retag(shared, connected, |tags| tags.extend(request.tags.clone())).await
        }
        Step::Untag { key, .. } => {
            retag(shared, connected, |tags| {
                tags.remove(key);
            })
            .await
        }
        Step::Upgrade { to } => upgrade(shared, connected, &aks_version(to)).await,
        Step::Update { desired, change } => update(shared, connected, desired, change).await,
        Step::Delete => delete(connected).await,
    }
}

/// The DNS prefix derived from a cluster's name: AKS allows 54 letters, digits and hyphens,
/// starting and ending with a letter or digit (`_` becomes `-`).
pub fn dns_prefix_of(name: &str) -> String {
    let mapped: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .take(54)
        .collect();
    let trimmed = mapped.trim_matches('-');
    if trimmed.is_empty() {
        "aks".into()
    } else {
        trimmed.to_string()
    }
}

/// Sets the desired settings into a cluster body (a create's or the last read's).
fn apply_settings(body: &mut Value, want: &Settings, private: bool) {
    body["sku"] = json!({ "name": "Base", "tier": want.sku });
    let p = &mut body["properties"];
    p["enableRBAC"] = json!(true);
    p["aadProfile"]["managed"] = json!(true);
    p["aadProfile"]["enableAzureRBAC"] = json!(want.azure_rbac);
    p["aadProfile"]["adminGroupObjectIDs"] = json!(want.admin_groups);
    p["disableLocalAccounts"] = json!(want.local_disabled);
    p["apiServerAccessProfile"]["enablePrivateCluster"] = json!(private);
    p["apiServerAccessProfile"]["authorizedIPRanges"] = json!(want.authorized);
    p["oidcIssuerProfile"]["enabled"] = json!(want.oidc);
    p["securityProfile"]["workloadIdentity"]["enabled"] = json!(want.oidc);
    p["securityProfile"]["azureKeyVaultKms"] = if want.kms_key.is_empty() {
        json!({ "enabled": false })
    } else {
        json!({ "enabled": true, "keyId": want.kms_key, "keyVaultNetworkAccess": "Public" })
    };
}

/// The top-level parts of a cluster a PUT carries back; the rest (id, name, type, eTag) is ARM's.
const PUT_PARTS: &[&str] = &["location", "tags", "sku", "identity", "properties"];

/// Cluster properties ARM sets, and the pools (changed only through their own resource).
const READ_ONLY: &[&str] = &[
    "agentPoolProfiles",
    "provisioningState",
    "powerState",
    "currentKubernetesVersion",
    "fqdn",
    "azurePortalFQDN",
    "privateFQDN",
    "maxAgentPools",
    "resourceUID",
];

/// The cluster as last read, ready to be PUT back: without the pools and what ARM sets.
fn put_body(raw: &Value) -> Value {
    let mut body = raw.clone();
    if let Some(o) = body.as_object_mut() {
        o.retain(|k, v| PUT_PARTS.contains(&k.as_str()) && !v.is_null());
        if let Some(Value::Object(p)) = o.get_mut("properties") {
            for f in READ_ONLY {
                p.remove(*f);
            }
        }
    }
    body
}

/// What a PUT or DELETE ARM accepted leaves to track.
fn started(answer: &client::Answer) -> Started<ManagedCluster<ObservedCluster>> {
    match client::tracked(answer) {
        Some(path) => Started::Operation(path),
        None => Started::Untracked,
    }
}

/// The network profile a create asks for.
fn network_profile(want: &DesiredCluster) -> Value {
    let plugin = match want.network_plugin {
        NetworkPlugin::Azure => "azure",
        NetworkPlugin::Kubenet => "kubenet",
        NetworkPlugin::None => "none",
    };
    let mut network = json!({ "networkPlugin": plugin, "loadBalancerSku": "standard", "outboundType": "loadBalancer" });
    if want.network_plugin == NetworkPlugin::Azure {
        network["networkPluginMode"] = json!("overlay");
    }
    match want.network_policy {
        Some(NetworkPolicy::Azure) => network["networkPolicy"] = json!("azure"),
        Some(NetworkPolicy::Calico) => network["networkPolicy"] = json!("calico"),
        Some(NetworkPolicy::Cilium) => {
            network["networkPolicy"] = json!("cilium");
            network["networkDataplane"] = json!("cilium");
        }
        None => {}
    }
    network
}

/// PUTs the cluster at `version` with its System pool.
async fn create(
    connected: &At,
    want: &DesiredCluster,
    version: &str,
    request: &Request,
) -> Result<Started<ManagedCluster<ObservedCluster>>, ProviderError> {
    let subnet = want.subnet()?;
    let dns_prefix = want
        .dns_prefix
        .clone()
        .unwrap_or_else(|| dns_prefix_of(&connected.name));
    let mut body = json!({
        "location": want.location,
        "tags": request.tags,
        "identity": { "type": "SystemAssigned" },
        "properties": {
            "kubernetesVersion": version,
            "dnsPrefix": dns_prefix,
            "networkProfile": network_profile(want),
            "agentPoolProfiles": [{
                "name": want.system_pool.name,
                "mode": "System",
                "count": want.system_pool.count,
                "vmSize": want.system_pool.vm_size,
                "osType": "Linux",
                "type": "VirtualMachineScaleSets",
                "vnetSubnetID": subnet,
                "availabilityZones": want.zones,
                "nodeTaints": ["CriticalAddonsOnly=true:NoSchedule"],
                "tags": request.tags,
            }],
        }
    });
    apply_settings(&mut body, &want.settings, want.private);
    if let Some(patch) = &want.request_overrides {
        body = overridden(&body, patch, scope::PROVIDER)?;
    }
    // A cluster an earlier pass created is found by describe; only a missing one is PUT,
    // without If-Match (it does not exist).
    let clients = &connected.clients;
    let answer = clients
        .arm
        .call(
            &clients.calls,
            CREATE_CALL,
            Method::PUT,
            &clients.cluster_path,
            client::CONTAINER,
            Some(&body),
            None,
        )
        .await?;
    let id = match client::tracked(&answer) {
        Some(operation) => operation,
        None => answer.read::<Identified>(CREATE_CALL)?.id,
    };
    Ok(Started::Created {
        id,
        observed: None,
        overrides: want.request_overrides.is_some(),
    })
}

/// The cluster as it is now, for a change to start from.
async fn current(
    shared: &Shared,
    connected: &At,
) -> Result<ManagedCluster<ObservedCluster>, ProviderError> {
    describe(shared, connected).await?.ok_or_else(|| {
        CloudError::NotFound(format!("AKS cluster {} is gone", connected.name)).into()
    })
}

/// Adds our tags to the cluster's (adopting it, or putting them back).
/// Replaces the cluster's tags with the current ones as `change` leaves them (ARM's tags
/// PATCH takes the whole map).
async fn retag(
    shared: &Shared,
    connected: &At,
    change: impl FnOnce(&mut BTreeMap<String, String>),
) -> Result<Started<ManagedCluster<ObservedCluster>>, ProviderError> {
    let current = current(shared, connected).await?;
    let mut tags = current.tags.clone();
    change(&mut tags);
    let clients = &connected.clients;
    clients
        .arm
        .call(
            &clients.calls,
            "ManagedClusters_UpdateTags",
            Method::PATCH,
            &clients.cluster_path,
            client::CONTAINER,
            Some(&json!({ "tags": tags })),
            None,
        )
        .await?;
    Ok(Started::Done)
}

/// PUTs the cluster back at the minor `to`; AKS refuses while a pool is more than one minor
/// behind, which is a wait for the pools.
async fn upgrade(
    shared: &Shared,
    connected: &At,
    to: &str,
) -> Result<Started<ManagedCluster<ObservedCluster>>, ProviderError> {
    let current = current(shared, connected).await?;
    let mut body = put_body(&current.detail.raw);
    body["properties"]["kubernetesVersion"] = json!(to);
    let clients = &connected.clients;
    let answer = clients
        .arm
        .call(
            &clients.calls,
            "ManagedClusters_CreateOrUpdate",
            Method::PUT,
            &clients.cluster_path,
            client::CONTAINER,
            Some(&body),
            current.detail.etag.as_deref(),
        )
        .await;
    match answer {
        Ok(a) => Ok(started(&a)),
        Err(f) if f.code == "NodePoolMcVersionIncompatible" => {
            Ok(Started::Busy(f.error.to_string()))
        }
        Err(f) => Err(f.into()),
    }
}

/// The System pool's profile as read, ready to be PUT back as its own resource.
fn pool_properties(profile: &Value) -> Value {
    let mut props = profile.clone();
    if let Some(p) = props.as_object_mut() {
        for f in [
            "name",
            "provisioningState",
            "powerState",
            "currentOrchestratorVersion",
            "nodeImageVersion",
            "eTag",
        ] {
            p.remove(f);
        }
    }
    props
}

/// PUTs the cluster back with the desired settings, or the System pool with its new version or
/// count.
async fn update(
    shared: &Shared,
    connected: &At,
    want: &DesiredCluster,
    change: &ClusterChange,
) -> Result<Started<ManagedCluster<ObservedCluster>>, ProviderError> {
    let current = current(shared, connected).await?;
    let o = &current.detail;
    let clients = &connected.clients;
    let answer = match change {
        ClusterChange::Settings(_) => {
            let mut body = put_body(&o.raw);
            apply_settings(&mut body, &want.settings, want.private);
            clients
                .arm
                .call(
                    &clients.calls,
                    "ManagedClusters_CreateOrUpdate",
                    Method::PUT,
                    &clients.cluster_path,
                    client::CONTAINER,
                    Some(&body),
                    o.etag.as_deref(),
                )
                .await?
        }
        ClusterChange::SystemPoolVersion(_) | ClusterChange::SystemPoolCount(_) => {
            let Some(pool) = &o.system_pool else {
                return Err(CloudError::NotFound(format!(
                    "the System pool {} is gone",
                    clients.system_pool
                ))
                .into());
            };
            let mut props = pool_properties(&pool.profile);
            match change {
                ClusterChange::SystemPoolVersion(v) => props["orchestratorVersion"] = json!(v),
                ClusterChange::SystemPoolCount(n) => props["count"] = json!(n),
                ClusterChange::Settings(_) => {}
            }
            clients
                .arm
                .call(
                    &clients.calls,
                    "AgentPools_CreateOrUpdate",
                    Method::PUT,
                    &format!("{}/agentPools/{}", clients.cluster_path, pool.name),
                    client::CONTAINER,
                    Some(&json!({ "properties": props })),
                    pool.etag.as_deref(),
                )
                .await?
        }
    };
    Ok(started(&answer))
}

/// DELETEs the cluster: gone at once (204), or deleting.
async fn delete(connected: &At) -> Result<Started<ManagedCluster<ObservedCluster>>, ProviderError> {
    let clients = &connected.clients;
    let outcome = clients
        .arm
        .call(
            &clients.calls,
            "ManagedClusters_Delete",
            Method::DELETE,
            &clients.cluster_path,
            client::CONTAINER,
            None,
            None,
        )
        .await;
    Started::after_delete(match outcome {
        Ok(a) if a.status == 204 => Ok(Started::Gone),
        Ok(a) => Ok(started(&a)),
        Err(f) => Err(f.error),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn dns_prefixes_follow_aks_rules() {
        assert_eq!(dns_prefix_of("default-prod_1"), "default-prod-1");
        assert_eq!(dns_prefix_of(&"a".repeat(63)).len(), 54);
        assert_eq!(dns_prefix_of("_"), "aks");
    }

    #[test]
    fn a_put_body_carries_no_pools_and_nothing_arm_sets() {
        let raw = json!({
            "id": "x", "name": "c", "location": "eastus", "tags": {"a": "b"}, "sku": {"tier": "Free"}, "eTag": "e",
            "properties": {"kubernetesVersion": "1.32", "currentKubernetesVersion": "1.32.7", "provisioningState": "Succeeded", "agentPoolProfiles": [{"name": "system"}], "dnsPrefix": "d"}
        });
        let body = put_body(&raw);
        assert!(body["properties"]["agentPoolProfiles"].is_null());
        assert!(body["properties"]["provisioningState"].is_null());
        assert_eq!(body["properties"]["dnsPrefix"], "d");
        assert!(body["id"].is_null() && body["eTag"].is_null());
    }
}
