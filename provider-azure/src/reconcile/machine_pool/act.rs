//! The ARM calls that change an agent pool: create, tag (adopt, or put missing tags back),
//! upgrade, update, delete, one function a step of the kernel's. Every
//! change but the create PUTs the pool's properties as just read, with the desired fields set
//! and nothing ARM sets, guarded by its `eTag`; its `Azure-AsyncOperation` is what the kernel
//! tracks.

use std::collections::BTreeMap;

use contract::scaling::ScalingIntent;
use contract::version::KubeVersion;
use provider_runtime::control_plane::{Request, Started};
use provider_runtime::machine_pool::{ManagedPool, PoolCreate, PoolWant};
use provider_runtime::{CloudError, ProviderError};
use reqwest::Method;
use serde_json::{Value, json};

use super::desired::{PoolSpec, invalid, pool_zones};
use super::diff::PoolChange;
use super::observe::{ObservedPool, describe};
use super::{At, PoolClients};
use crate::client;
use crate::client::answers::Identified;
use crate::reconcile::{aks_version, last_segment};
use crate::scope;
use provider_runtime::overrides::overridden;

/// AKS's call that creates (and changes) an agent pool, the one that takes
/// `spec.aks.requestOverrides`.
pub const CREATE_CALL: &str = "AgentPools_CreateOrUpdate";

/// Pool properties ARM sets; left out of a PUT.
const READ_ONLY: &[&str] = &[
    "name",
    "provisioningState",
    "powerState",
    "currentOrchestratorVersion",
    "nodeImageVersion",
    "eTag",
];

/// What a step answers.
type Answered = Result<Started<ManagedPool<ObservedPool>>, ProviderError>;

/// Applies a change to a pool's properties (pure); `count` is the pool's as read.
fn changed(props: &Value, count: Option<i32>, change: &PoolChange) -> Value {
    let mut p = props.clone();
    if let Some(o) = p.as_object_mut() {
        for f in READ_ONLY {
            o.remove(*f);
        }
    }
    match change {
        PoolChange::Autoscaling(Some((min, max))) => {
            p["enableAutoScaling"] = json!(true);
            p["minCount"] = json!(min);
            p["maxCount"] = json!(max);
            let count = count.unwrap_or(*min).clamp(*min, *max);
            p["count"] = json!(count);
        }
        PoolChange::Autoscaling(None) => {
            p["enableAutoScaling"] = json!(false);
            if let Some(o) = p.as_object_mut() {
                o.remove("minCount");
                o.remove("maxCount");
            }
        }
        PoolChange::Count(n) => p["count"] = json!(n),
        PoolChange::Settings {
            labels,
            taints,
            mode,
            upgrade,
        } => {
            if let Some(l) = labels {
                p["nodeLabels"] = json!(l);
            }
            if let Some(t) = taints {
                p["nodeTaints"] = json!(t);
            }
            if let Some(m) = mode {
                p["mode"] = json!(m);
            }
            if let Some((surge, unavailable)) = upgrade {
                if let Some(s) = surge {
                    p["upgradeSettings"]["maxSurge"] = json!(s);
                }
                if let Some(u) = unavailable {
                    p["upgradeSettings"]["maxUnavailable"] = json!(u);
                }
            }
        }
    }
    p
}

/// The pool's properties as just read, with nothing changed and nothing ARM sets.
fn as_read(props: &Value) -> Value {
    changed(
        props,
        None,
        &PoolChange::Settings {
            labels: None,
            taints: None,
            mode: None,
            upgrade: None,
        },
    )
}

/// The agent pool `name` as just read, or NotFound.
async fn current(
    clients: &PoolClients,
    name: &str,
) -> Result<ManagedPool<ObservedPool>, ProviderError> {
    describe(clients, name)
        .await?
        .ok_or_else(|| CloudError::NotFound(format!("agent pool {name} is gone")).into())
}

/// PUTs `props` as the agent pool `name`, guarded by `etag`.
async fn put(
    clients: &PoolClients,
    name: &str,
    props: &Value,
    etag: Option<&str>,
) -> Result<client::Answer, ProviderError> {
    Ok(clients
        .arm
        .call(
            &clients.calls,
            CREATE_CALL,
            Method::PUT,
            &clients.pool_path(name),
            client::CONTAINER,
            Some(&json!({ "properties": props })),
            etag,
        )
        .await?)
}

/// The body of a create: the pool `want` asks for, at `version`, tagged `request.tags`.
///
/// # Errors
/// A terminal `InvalidSpec` for zones the cluster does not have.
fn create_props(
    clients: &PoolClients,
    want: &PoolWant<'_, PoolSpec>,
    version: Option<&KubeVersion>,
    request: &Request,
) -> Result<Value, ProviderError> {
    let zones = pool_zones(want.machine_pool, &clients.infra).map_err(invalid)?;
    let spec = want.spec;
    let mut props = json!({
        "count": want.scaling.initial_count(),
        "vmSize": spec.vm_size,
        "osType": "Linux",
        "type": "VirtualMachineScaleSets",
        "mode": spec.mode,
        "nodeLabels": spec.labels,
        "nodeTaints": spec.taints,
        "availabilityZones": zones,
        "tags": request.tags,
    });
    if let Some(v) = version {
        props["orchestratorVersion"] = json!(aks_version(v));
    }
    if let Some(d) = spec.disk_size_gb {
        props["osDiskSizeGB"] = json!(d);
    }
    if let Some(os) = &spec.os_sku {
        props["osSKU"] = json!(os);
    }
    if let Some(m) = spec.max_pods {
        props["maxPods"] = json!(m);
    }
    if let Some(s) = spec
        .subnet
        .as_ref()
        .or(Some(&clients.infra.subnet).filter(|s| !s.is_empty()))
    {
        props["vnetSubnetID"] = json!(s);
    }
    if spec.spot {
        props["scaleSetPriority"] = json!("Spot");
        props["scaleSetEvictionPolicy"] = json!("Delete");
        props["spotMaxPrice"] = json!(-1);
    }
    if let Some(s) = &spec.upgrade.0 {
        props["upgradeSettings"]["maxSurge"] = json!(s);
    }
    if let Some(u) = &spec.upgrade.1 {
        props["upgradeSettings"]["maxUnavailable"] = json!(u);
    }
    if let ScalingIntent::Autoscaled { min, max, .. } = want.scaling {
        props["enableAutoScaling"] = json!(true);
        props["minCount"] = json!(min);
        props["maxCount"] = json!(max);
    }
    Ok(props)
}

/// PUTs the pool `at.pool` as `want` asks, at `version`, with the user's request overrides.
///
/// # Errors
/// ARM's; a terminal `InvalidSpec` for a spec or overrides AKS cannot be asked.
pub(super) async fn create(at: &At, new: PoolCreate<'_, PoolSpec>) -> Answered {
    let (want, version, request) = (new.want, new.version, new.request);
    let (clients, name) = (&at.clients, at.pool.as_str());
    let mut body = json!({ "properties": create_props(clients, &want, version, request)? });
    let patch = want.spec.request_overrides.as_ref();
    if let Some(patch) = patch {
        body = overridden(&body, patch, scope::PROVIDER)?;
    }
    // Only a pool that does not exist is created: `If-None-Match: *` is not sent (AKS ignores
    // it), but the look found none this pass.
    let result = clients
        .arm
        .call(
            &clients.calls,
            CREATE_CALL,
            Method::PUT,
            &clients.pool_path(name),
            client::CONTAINER,
            Some(&body),
            None,
        )
        .await;
    match result {
        Ok(answer) => Ok(Started::Created {
            id: match client::tracked(&answer) {
                Some(operation) => operation,
                None => answer.read::<Identified>(CREATE_CALL)?.id,
            },
            observed: None,
            overrides: patch.is_some(),
        }),
        // Made by a pass that crashed before recording it: the next pass finds it.
        Err(f) if matches!(f.error, CloudError::InUse(_)) => {
            tracing::info!(message = %f.error, "the pool exists already");
            Ok(Started::Done)
        }
        Err(f) => Err(f.into()),
    }
}

/// Adopting, or putting missing tags back: `tags` merged into the pool's own.
pub(super) async fn tag(at: &At, id: &str, tags: &BTreeMap<String, String>) -> Answered {
    retag(at, id, |t| t.extend(tags.clone())).await
}

/// Removes our ownership tag (`key`).
pub(super) async fn untag(at: &At, id: &str, key: &str) -> Answered {
    retag(at, id, |t| {
        t.remove(key);
    })
    .await
}

/// PUTs the pool back with its tags as `change` leaves them.
async fn retag(at: &At, id: &str, change: impl FnOnce(&mut BTreeMap<String, String>)) -> Answered {
    let clients = &at.clients;
    let name = last_segment(id);
    let pool = current(clients, name).await?;
    let mut props = as_read(&pool.detail.props);
    let mut tags = pool.tags.clone();
    change(&mut tags);
    props["tags"] = json!(tags);
    put(clients, name, &props, pool.detail.etag.as_deref()).await?;
    Ok(Started::Done)
}

/// PUTs the pool back at the minor `to`.
pub(super) async fn upgrade(at: &At, to: &KubeVersion) -> Answered {
    let (clients, name) = (&at.clients, at.pool.as_str());
    let pool = current(clients, name).await?;
    let mut props = as_read(&pool.detail.props);
    props["orchestratorVersion"] = json!(aks_version(to));
    let answer = put(clients, name, &props, pool.detail.etag.as_deref()).await?;
    Ok(Started::Operation(
        client::tracked(&answer).unwrap_or_default(),
    ))
}

/// PUTs the pool back with `change` made.
pub(super) async fn update(at: &At, change: &PoolChange) -> Answered {
    let (clients, name) = (&at.clients, at.pool.as_str());
    let pool = current(clients, name).await?;
    let props = changed(&pool.detail.props, pool.detail.count, change);
    let answer = put(clients, name, &props, pool.detail.etag.as_deref()).await?;
    Ok(Started::Operation(
        client::tracked(&answer).unwrap_or_default(),
    ))
}

/// Deletes the pool `name`: gone at once on a 204, else deleting.
pub(super) async fn delete(at: &At) -> Answered {
    let (clients, name) = (&at.clients, at.pool.as_str());
    let outcome = clients
        .arm
        .call(
            &clients.calls,
            "AgentPools_Delete",
            Method::DELETE,
            &clients.pool_path(name),
            client::CONTAINER,
            None,
            None,
        )
        .await;
    Started::after_delete(match outcome {
        Ok(a) if a.status == 204 => Ok(Started::Gone),
        Ok(a) => Ok(client::tracked(&a).map_or(Started::Untracked, Started::Operation)),
        Err(f) => Err(f.error),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_change_is_the_pool_as_read_with_the_field_set_and_nothing_arm_sets() {
        let props = json!({"count": 1, "vmSize": "Standard_D2s_v5", "provisioningState": "Succeeded", "currentOrchestratorVersion": "1.32.7", "eTag": "x"});
        let p = changed(&props, Some(1), &PoolChange::Count(3));
        assert_eq!(p["count"], 3);
        assert_eq!(p["vmSize"], "Standard_D2s_v5");
        assert!(p["provisioningState"].is_null() && p["eTag"].is_null());
        let a = changed(&props, Some(1), &PoolChange::Autoscaling(Some((2, 5))));
        assert_eq!(
            (a["enableAutoScaling"].as_bool(), a["count"].as_i64()),
            (Some(true), Some(2))
        );
    }
}
