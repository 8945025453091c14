//! The Container Engine calls that change a node pool: create, tag (adopt), upgrade, update,
//! delete, one function a step of the kernel's. Every change answers a work request the kernel
//! tracks. A change of the pool uses the OCID, ETag (`if-match`) and tags the pass's look saw;
//! with none kept, it looks the pool up itself. Node cycling is on, so a version or shape
//! change replaces the nodes within `spec.update`'s surge and unavailability.

use std::collections::BTreeMap;

use contract::capi::MachinePool;
use contract::conditions::Reason;
use contract::version::KubeVersion;
use provider_runtime::control_plane::Started;
use provider_runtime::machine_pool::{ManagedPool, PoolCreate};
use provider_runtime::{CloudError, ProviderError};
use reqwest::Method;
use serde_json::{Value, json};

use super::desired::{PoolSpec, invalid};
use super::diff::PoolChange;
use super::observe::{ObservedPool, find};
use super::{At, PoolClients};
use crate::api::CniType;
use crate::client::answers::{NodePool, NodePoolOptions, NodeSourceOption};
use crate::client::{Call, Service, q};
use crate::reconcile::{Seen, offered_version, request_delete};
use crate::scope;
use crate::scope::Infra;
use provider_runtime::overrides::overridden;

/// What a step answers.
type Answered = Result<Started<ManagedPool<ObservedPool>>, ProviderError>;

/// The OCID of the pool's cluster, or a wait while OKE has none to offer.
fn cluster_id(at: &At) -> Result<&str, ProviderError> {
    at.clients
        .cluster_id
        .as_deref()
        .ok_or_else(|| ProviderError::Transient {
            reason: Reason::WaitingForControlPlane,
            category: "waiting_for_cluster",
            message: format!("waiting for the OKE cluster {} to exist", at.cluster),
            retry_after: None,
        })
}

/// The pool as this pass's look saw it, else as it is now (by its recorded OCID, else by
/// name in its cluster).
async fn seen(at: &At) -> Result<Option<Seen>, ProviderError> {
    let clients = &at.clients;
    if let Some(seen) = clients.seen() {
        return Ok(Some(seen));
    }
    let Some(cluster_id) = clients.cluster_id.as_deref() else {
        return Ok(None);
    };
    let found = find(clients, cluster_id, &at.pool)
        .await?
        .map(|(_, seen)| seen);
    clients.remember(found.clone());
    Ok(found)
}

/// The pool to change, or NotFound when it is gone.
async fn seen_or_gone(at: &At) -> Result<Seen, ProviderError> {
    seen(at)
        .await?
        .ok_or_else(|| CloudError::NotFound(format!("node pool {} is gone", at.pool)).into())
}

/// What OKE offers node pools of the cluster `cluster_id` (versions, images).
async fn options(
    clients: &PoolClients,
    cluster_id: &str,
) -> Result<NodePoolOptions, ProviderError> {
    let path = format!(
        "/nodePoolOptions/{cluster_id}?compartmentId={}",
        q(&clients.infra.compartment)
    );
    let (options, _) = clients
        .oci
        .get::<NodePoolOptions>(
            &clients.calls,
            "GetNodePoolOptions",
            Service::ContainerEngine,
            &path,
        )
        .await?
        .ok_or_else(|| CloudError::NotFound("OKE's node pool options".into()))?;
    Ok(options)
}

/// The exact version OKE offers node pools of the cluster named `cluster` for `want`.
fn version_in(
    cluster: &str,
    options: &NodePoolOptions,
    want: &KubeVersion,
) -> Result<String, ProviderError> {
    offered_version(&options.kubernetes_versions, want).map_err(|offered| {
        invalid(format!(
            "OKE offers node pools of cluster {cluster} no version {want}; it offers {offered}",
        ))
    })
}

/// UpdateNodePool of the pool `seen` (its ETag as `if-match`); the work request.
async fn change(clients: &PoolClients, seen: &Seen, body: &Value) -> Result<String, ProviderError> {
    let path = format!("/nodePools/{}", seen.id);
    let request = Call::send(
        "UpdateNodePool",
        Service::ContainerEngine,
        &Method::PUT,
        &path,
        Some(body),
    )
    .if_match(seen.etag.as_deref());
    let answer = clients.oci.call(&clients.calls, request).await?;
    Ok(answer.work_request.unwrap_or_default())
}

/// The newest Oracle Linux platform image in `options` for the shape's processors (pure); a
/// source without a name or an image is passed over.
///
/// # Errors
/// A transient one when OKE's answer has no `sources` (read as none, a valid spec would be
/// refused); a terminal `InvalidSpec` when none fits.
fn platform_image(options: &NodePoolOptions, shape: &str) -> Result<String, ProviderError> {
    let sources: &[NodeSourceOption] = options.sources.as_deref().ok_or_else(|| {
        CloudError::Transient("GetNodePoolOptions: the answer has no `sources`".into())
    })?;
    let arm = shape.contains(".A1.") || shape.contains(".A2.");
    let mut platform: Vec<(&str, &str)> = sources
        .iter()
        .filter_map(|s| Some((s.source_name.as_deref()?, s.image_id.as_deref()?)))
        .filter(|(n, _)| {
            n.starts_with("Oracle-Linux-")
                && !n.contains("OKE")
                && !n.contains("GPU")
                && n.contains("aarch64") == arm
        })
        .collect();
    platform.sort();
    platform
        .last()
        .map(|(_, id)| (*id).to_string())
        .ok_or_else(|| {
            invalid(format!(
                "OKE offers no Oracle Linux platform image for {shape}; set spec.image to an image OCID"
            ))
        })
}

/// The pool's availability domains: the MachinePool's failure domains, else the cluster's.
fn pool_domains(machine_pool: &MachinePool, infra: &Infra) -> Result<Vec<String>, String> {
    let wanted = &machine_pool.spec.failure_domains;
    if wanted.is_empty() {
        return Ok(infra.availability_domains.clone());
    }
    for ad in wanted {
        if !infra.availability_domains.contains(ad) {
            return Err(format!(
                "MachinePool.spec.failureDomains names {ad}, which is not one of the cluster's availability domains ({})",
                infra.availability_domains.join(", ")
            ));
        }
    }
    Ok(wanted.clone())
}

fn label_list(labels: &BTreeMap<String, String>) -> Value {
    json!(
        labels
            .iter()
            .map(|(k, v)| json!({ "key": k, "value": v }))
            .collect::<Vec<_>>()
    )
}

fn cycling_body((surge, unavailable): &(String, String)) -> Value {
    json!({ "isNodeCyclingEnabled": true, "maximumSurge": surge, "maximumUnavailable": unavailable })
}

fn shape_config((ocpus, memory): (i32, i32)) -> Value {
    json!({ "ocpus": ocpus, "memoryInGBs": memory })
}

/// The body of UpdateNodePool for `change` (pure).
fn update_body(change: &PoolChange) -> Value {
    match change {
        PoolChange::Size(n) => json!({ "nodeConfigDetails": { "size": n } }),
        PoolChange::Settings {
            labels,
            shape,
            cycling,
        } => {
            let mut body = json!({});
            if let Some(l) = labels {
                body["initialNodeLabels"] = label_list(l);
            }
            if let Some((s, flex)) = shape {
                body["nodeShape"] = json!(s);
                if let Some(f) = flex {
                    body["nodeShapeConfig"] = shape_config(*f);
                }
            }
            if let Some(c) = cycling {
                body["nodePoolCyclingDetails"] = cycling_body(c);
            }
            body
        }
    }
}

/// CreateNodePool named `at.pool` at `version` (else the control plane's; the exact patch OKE
/// offers), in the MachinePool's availability domains (else the cluster's). A pool of that name
/// made already (409) is done: the next pass sees it.
///
/// # Errors
/// OKE's; a terminal `InvalidSpec` without a subnet, version or image for the pool.
pub(super) async fn create(at: &At, new: PoolCreate<'_, PoolSpec>) -> Answered {
    let (want, version, request) = (new.want, new.version, new.request);
    let clients = &at.clients;
    let cluster_id = cluster_id(at)?;
    let domains = pool_domains(want.machine_pool, &clients.infra).map_err(invalid)?;
    let spec = want.spec;
    let subnet = spec
        .subnet
        .clone()
        .or_else(|| clients.infra.node_subnets.first().cloned())
        .ok_or_else(|| {
            invalid("no subnet for the nodes: set spec.subnetIDs, or use an OKECluster")
        })?;
    let wanted = version
        .copied()
        .or(clients.control_plane_version)
        .ok_or_else(|| {
            invalid("no Kubernetes version for the node pool: the control plane reports none yet")
        })?;
    let options = options(clients, cluster_id).await?;
    let exact = version_in(&at.cluster, &options, &wanted)?;
    let image = match &spec.image {
        Some(i) => i.clone(),
        None => platform_image(&options, &spec.shape)?,
    };
    let placements: Vec<Value> = domains
        .iter()
        .map(|ad| {
            let mut p = json!({ "availabilityDomain": ad, "subnetId": subnet });
            if spec.spot {
                p["preemptibleNodeConfig"] = json!({ "preemptionAction": { "type": "TERMINATE", "isPreserveBootVolume": false } });
            }
            p
        })
        .collect();
    let pod_network = match clients.cni {
        CniType::VcnNative => {
            let mut d = json!({ "cniType": "OCI_VCN_IP_NATIVE", "podSubnetIds": [subnet] });
            if let Some(m) = spec.max_pods {
                d["maxPodsPerNode"] = json!(m);
            }
            d
        }
        CniType::Flannel => json!({ "cniType": "FLANNEL_OVERLAY" }),
    };
    let mut body = json!({
        "compartmentId": clients.infra.compartment,
        "clusterId": cluster_id,
        "name": at.pool,
        "kubernetesVersion": exact,
        "nodeShape": spec.shape,
        "nodeSourceDetails": { "sourceType": "IMAGE", "imageId": image },
        "initialNodeLabels": label_list(&spec.labels),
        "nodeConfigDetails": {
            "size": want.scaling.initial_count(),
            "placementConfigs": placements,
            "freeformTags": request.tags,
            "nodePoolPodNetworkOptionDetails": pod_network,
        },
        "freeformTags": request.tags,
        "nodePoolCyclingDetails": cycling_body(&spec.cycling),
    });
    if let Some(f) = spec.flex {
        body["nodeShapeConfig"] = shape_config(f);
    }
    if let Some(gb) = spec.boot_volume_gb {
        body["nodeSourceDetails"]["bootVolumeSizeInGBs"] = json!(gb);
    }
    if let Some(k) = &spec.ssh_key {
        body["sshPublicKey"] = json!(k);
    }
    if let Some(patch) = &spec.request_overrides {
        body = overridden(&body, patch, scope::PROVIDER)?;
    }
    let token = request.create_token("CreateNodePool");
    let call = Call::send(
        "CreateNodePool",
        Service::ContainerEngine,
        &Method::POST,
        "/nodePools",
        Some(&body),
    )
    .retry_token(&token);
    match clients.oci.call(&clients.calls, call).await {
        Ok(answer) => Ok(Started::Created {
            id: answer.work_request.unwrap_or_default(),
            observed: None,
            overrides: spec.request_overrides.is_some(),
        }),
        Err(f) if matches!(f.error, CloudError::InUse(_)) => {
            tracing::info!(message = %f.error, "the node pool exists already");
            Ok(Started::Done)
        }
        Err(f) => Err(f.into()),
    }
}

/// Puts `tags` on the pool `id` (adopting it, or putting ours back), keeping its others.
pub(super) async fn tag(at: &At, id: &str, tags: &BTreeMap<String, String>) -> Answered {
    retag(at, id, |t| t.extend(tags.clone())).await
}

/// Removes our ownership tag (`key`) from the pool's freeform tags.
pub(super) async fn untag(at: &At, id: &str, key: &str) -> Answered {
    retag(at, id, |t| {
        t.remove(key);
    })
    .await
}

/// UpdateNodePool with the pool's freeform tags as `change_tags` leaves them (OKE replaces the
/// whole map).
async fn retag(
    at: &At,
    id: &str,
    change_tags: impl FnOnce(&mut BTreeMap<String, String>),
) -> Answered {
    let clients = &at.clients;
    let seen = match clients.seen().filter(|s| s.id == id) {
        Some(seen) => Some(seen),
        None => {
            let path = format!("/nodePools/{id}");
            clients
                .oci
                .get::<NodePool>(
                    &clients.calls,
                    "GetNodePool",
                    Service::ContainerEngine,
                    &path,
                )
                .await?
                .filter(|(p, _)| p.lifecycle_state != "DELETED")
                .map(|(p, etag)| Seen::of(&p, etag))
        }
    };
    let Some(seen) = seen else {
        return Err(CloudError::NotFound(format!("node pool {id} is gone")).into());
    };
    let mut tags = seen.tags.clone();
    change_tags(&mut tags);
    let body = json!({ "freeformTags": tags });
    change(clients, &seen, &body).await?;
    Ok(Started::Done)
}

/// UpdateNodePool to the exact patch OKE offers node pools of the cluster for `to`.
pub(super) async fn upgrade(at: &At, to: &KubeVersion) -> Answered {
    let seen = seen_or_gone(at).await?;
    let options = options(&at.clients, cluster_id(at)?).await?;
    let exact = version_in(&at.cluster, &options, to)?;
    let body = json!({ "kubernetesVersion": exact });
    let work_request = change(&at.clients, &seen, &body).await?;
    Ok(Started::Operation(work_request))
}

/// The one UpdateNodePool of `change_`.
pub(super) async fn update(at: &At, change_: &PoolChange) -> Answered {
    let seen = seen_or_gone(at).await?;
    let work_request = change(&at.clients, &seen, &update_body(change_)).await?;
    Ok(Started::Operation(work_request))
}

/// DeleteNodePool: a pool already gone is gone; a second delete while OKE deletes (409) is a
/// wait like any other.
pub(super) async fn delete(at: &At) -> Answered {
    let clients = &at.clients;
    let Some(seen) = seen(at).await? else {
        return Ok(Started::Gone);
    };
    let path = format!("/nodePools/{}", seen.id);
    let requested = request_delete(&clients.oci, &clients.calls, "DeleteNodePool", &path).await;
    Started::after_delete(requested.map(|work_request| match work_request {
        Some(w) => Started::Operation(w),
        None => Started::Untracked,
    }))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn an_update_sends_only_what_differs() {
        let body = update_body(&PoolChange::Size(4));
        assert_eq!(body, json!({ "nodeConfigDetails": { "size": 4 } }));
        let body = update_body(&PoolChange::Settings {
            labels: None,
            shape: Some(("VM.Standard.E4.Flex".into(), Some((2, 32)))),
            cycling: None,
        });
        assert_eq!(
            body["nodeShapeConfig"],
            json!({ "ocpus": 2, "memoryInGBs": 32 })
        );
        assert!(body["initialNodeLabels"].is_null());
    }

    #[test]
    fn the_default_image_is_the_newest_oracle_linux_of_the_shape_s_processors() {
        let source = |name: &str, id: &str| json!({ "sourceType": "IMAGE", "sourceName": name, "imageId": id });
        let options = |sources: Value| -> NodePoolOptions {
            provider_runtime::read_answer(
                "GetNodePoolOptions",
                json!({ "kubernetesVersions": [], "sources": sources }),
            )
            .unwrap()
        };
        let options = options(json!([
            source("Oracle-Linux-8.10-2025.01.01-0", "x86-old"),
            source("Oracle-Linux-8.10-2025.06.01-0", "x86-new"),
            source("Oracle-Linux-8.10-Gen2-GPU-2025.09.01-0", "gpu"),
            source("Oracle-Linux-8.10-2025.09.01-0-OKE-1.32.1", "oke"),
            source("Oracle-Linux-8.10-aarch64-2025.06.01-0", "arm"),
        ]));
        assert_eq!(
            platform_image(&options, "VM.Standard.E4.Flex").unwrap(),
            "x86-new"
        );
        assert_eq!(
            platform_image(&options, "VM.Standard.A1.Flex").unwrap(),
            "arm"
        );
        let empty = NodePoolOptions {
            kubernetes_versions: Vec::new(),
            sources: Some(Vec::new()),
        };
        let none = platform_image(&empty, "VM.Standard.E4.Flex").unwrap_err();
        assert!(none.to_string().contains("spec.image"), "{none}");
        let unsaid = NodePoolOptions {
            sources: None,
            ..empty
        };
        let unsaid = platform_image(&unsaid, "VM.Standard.E4.Flex").unwrap_err();
        assert!(
            unsaid.to_string().contains("GetNodePoolOptions")
                && unsaid.to_string().contains("`sources`"),
            "{unsaid}"
        );
    }
}
