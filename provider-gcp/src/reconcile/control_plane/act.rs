//! The GKE calls that change something: create, tag (adopt), upgrade, update, delete, and
//! [`act`], which asks for the one [`Step`] of a pass. Every change is a long-running Operation
//! whose name the kernel tracks; GKE runs one operation per cluster at a time and refuses
//! others with FAILED_PRECONDITION, which is a wait, not a failure.

use std::collections::BTreeMap;

use contract::conditions::Reason;
use contract::version::KubeVersion;
use google_cloud_container_v1::model as gke;
use provider_runtime::control_plane::ManagedCluster;
use provider_runtime::control_plane::{Request, Started, Step};
use provider_runtime::overrides::overridden;
use provider_runtime::{CloudError, ProviderError};

use super::desired::DesiredCluster;
use super::diff::ClusterChange;
use super::observe::{ObservedCluster, get_cluster};
use super::{At, BOOTSTRAP_POOL, Clients, SERVICE};
use crate::client::counted;

/// Asks GKE for `step`.
///
/// # Errors
/// GKE's, and a terminal `InvalidSpec` for a create without a network.
pub(super) async fn act(
    connected: &At,
    step: Step<'_, DesiredCluster, ClusterChange>,
    request: &Request,
) -> Result<Started<ManagedCluster<ObservedCluster>>, ProviderError> {
    let clients = &connected.clients;
    match step {
        Step::Create { desired, version } => {
            create(clients, &connected.name, desired, version, request).await
        }
        Step::Tag { .. } => {
            relabel(clients, &connected.name, |l| l.extend(request.tags.clone())).await
        }
        Step::Untag { key, .. } => {
            relabel(clients, &connected.name, |l| {
                l.remove(key);
            })
            .await
        }
        Step::Upgrade { to } => upgrade(clients, to).await,
        Step::Update { desired, change } => update(clients, desired, change).await,
        Step::Delete => delete(clients).await,
    }
}

fn authorized_config(want: &DesiredCluster) -> gke::MasterAuthorizedNetworksConfig {
    gke::MasterAuthorizedNetworksConfig::new()
        .set_enabled(!want.authorized.is_empty())
        .set_cidr_blocks(want.authorized.iter().map(|(cidr, name)| {
            gke::master_authorized_networks_config::CidrBlock::new()
                .set_cidr_block(cidr)
                .set_display_name(name)
        }))
}

fn endpoints_config(want: &DesiredCluster) -> gke::ControlPlaneEndpointsConfig {
    gke::ControlPlaneEndpointsConfig::new()
        .set_ip_endpoints_config(
            gke::control_plane_endpoints_config::IPEndpointsConfig::new()
                .set_enabled(true)
                .set_enable_public_endpoint(want.public)
                .set_authorized_networks_config(authorized_config(want)),
        )
        .set_dns_endpoint_config(
            gke::control_plane_endpoints_config::DNSEndpointConfig::new()
                .set_allow_external_traffic(want.dns_external),
        )
}

fn logging_config(want: &DesiredCluster) -> gke::LoggingConfig {
    gke::LoggingConfig::new().set_component_config(
        gke::LoggingComponentConfig::new().set_enable_components(want.logging.clone()),
    )
}

fn encryption(want: &DesiredCluster) -> gke::DatabaseEncryption {
    if want.kms_key.is_empty() {
        gke::DatabaseEncryption::new().set_state(gke::database_encryption::State::Decrypted)
    } else {
        gke::DatabaseEncryption::new()
            .set_state(gke::database_encryption::State::Encrypted)
            .set_key_name(&want.kms_key)
    }
}

/// The Operation GKE answered a change with, as what the kernel tracks.
fn started(op: &gke::Operation) -> Result<Started<ManagedCluster<ObservedCluster>>, ProviderError> {
    if op.name.is_empty() {
        return Err(ProviderError::cloud(
            "cloud_response",
            "GKE answered without an operation name",
        ));
    }
    Ok(Started::Operation(op.name.clone()))
}

/// The cluster `name` as `want` asks, at `version`, with the bootstrap node pool GKE needs.
///
/// # Errors
/// A terminal `InvalidSpec` without a network, or for overrides that make no request.
fn cluster_body(
    name: &str,
    want: &DesiredCluster,
    version: &KubeVersion,
    request: &Request,
) -> Result<gke::Cluster, ProviderError> {
    let net = &want.network;
    if net.network.is_empty() || net.subnetwork.is_empty() {
        return Err(ProviderError::terminal(
            Reason::InvalidSpec,
            "no network to create the GKE cluster in: set spec.infrastructure.network.id and spec.infrastructure.network.subnetIDs, or use a GKECluster",
        ));
    }
    let first_zone = net.zones.first().cloned().unwrap_or_default();
    let bootstrap = gke::NodePool::new()
        .set_name(BOOTSTRAP_POOL)
        .set_initial_node_count(1)
        .set_locations([first_zone])
        .set_config(
            gke::NodeConfig::new()
                .set_machine_type("e2-small")
                .set_resource_labels(request.tags.clone()),
        )
        .set_management(
            gke::NodeManagement::new()
                .set_auto_repair(true)
                .set_auto_upgrade(false),
        );
    let mut cluster = gke::Cluster::new()
        .set_name(name)
        .set_description(&want.description)
        .set_initial_cluster_version(crate::reconcile::gke_version(version))
        .set_resource_labels(request.tags.clone())
        .set_network(&net.network)
        .set_subnetwork(&net.subnetwork)
        .set_locations(net.zones.clone())
        .set_ip_allocation_policy(
            gke::IPAllocationPolicy::new()
                .set_use_ip_aliases(true)
                .set_cluster_secondary_range_name(&net.pods_range)
                .set_services_secondary_range_name(&net.services_range),
        )
        .set_node_pools([bootstrap])
        .set_logging_config(logging_config(want))
        .set_control_plane_endpoints_config(endpoints_config(want))
        .set_network_config(
            gke::NetworkConfig::new().set_default_enable_private_nodes(want.private_nodes),
        )
        .set_database_encryption(encryption(want));
    if !want.workload_pool.is_empty() {
        cluster = cluster.set_workload_identity_config(
            gke::WorkloadIdentityConfig::new().set_workload_pool(&want.workload_pool),
        );
    }
    if want.channel != gke::release_channel::Channel::default() {
        cluster = cluster
            .set_release_channel(gke::ReleaseChannel::new().set_channel(want.channel.clone()));
    }
    if let Some(patch) = &want.request_overrides {
        cluster = overridden(&cluster, patch, crate::scope::PROVIDER)?;
    }
    Ok(cluster)
}

async fn create(
    clients: &Clients,
    name: &str,
    want: &DesiredCluster,
    version: &KubeVersion,
    request: &Request,
) -> Result<Started<ManagedCluster<ObservedCluster>>, ProviderError> {
    let cluster = cluster_body(name, want, version, request)?;
    let op = counted(
        &clients.calls,
        SERVICE,
        "CreateCluster",
        clients
            .gke
            .container
            .create_cluster()
            .set_parent(&clients.parent)
            .set_cluster(cluster)
            .send(),
    )
    .await;
    let op = match op {
        Ok(op) => op,
        // Made by a pass that crashed before recording it: the next pass finds it.
        Err(f) if f.already_exists => return Err(CloudError::InUse(f.error.to_string()).into()),
        Err(f) => return Err(f.into()),
    };
    Ok(Started::Created {
        id: op.name.clone(),
        observed: None,
        overrides: want.request_overrides.is_some(),
    })
}

/// Adopting, or putting our labels back: the cluster's labels with ours laid over, at the
/// fingerprint just read.
/// SetLabels with the current labels as `change` leaves them (GKE takes the whole map, with
/// the fingerprint of the labels it was read with).
async fn relabel(
    clients: &Clients,
    name: &str,
    change: impl FnOnce(&mut BTreeMap<String, String>),
) -> Result<Started<ManagedCluster<ObservedCluster>>, ProviderError> {
    let Some(current) = get_cluster(clients).await? else {
        return Err(CloudError::NotFound(format!("GKE cluster {name} is gone")).into());
    };
    let mut labels = current.tags.clone();
    change(&mut labels);
    counted(
        &clients.calls,
        SERVICE,
        "SetLabels",
        clients
            .gke
            .container
            .set_labels()
            .set_name(&clients.path)
            .set_resource_labels(labels)
            .set_label_fingerprint(current.detail.fingerprint.clone())
            .send(),
    )
    .await?;
    Ok(Started::Done)
}

async fn upgrade(
    clients: &Clients,
    to: &KubeVersion,
) -> Result<Started<ManagedCluster<ObservedCluster>>, ProviderError> {
    let update =
        gke::ClusterUpdate::new().set_desired_master_version(crate::reconcile::gke_version(to));
    match counted(
        &clients.calls,
        SERVICE,
        "UpdateCluster",
        clients
            .gke
            .container
            .update_cluster()
            .set_name(&clients.path)
            .set_update(update)
            .send(),
    )
    .await
    {
        Ok(op) => started(&op),
        Err(f) => match f.error {
            // The control plane may not run ahead of its node pools: a wait.
            CloudError::Invalid { message, .. } if message.contains("node pool") => {
                Ok(Started::Busy(message))
            }
            e => Err(e.into()),
        },
    }
}

async fn update(
    clients: &Clients,
    want: &DesiredCluster,
    change: &ClusterChange,
) -> Result<Started<ManagedCluster<ObservedCluster>>, ProviderError> {
    let c = &clients.gke.container;
    let update = match change {
        ClusterChange::RemoveBootstrapPool => None,
        ClusterChange::Endpoints => Some(
            gke::ClusterUpdate::new()
                .set_desired_control_plane_endpoints_config(endpoints_config(want)),
        ),
        ClusterChange::Logging => {
            Some(gke::ClusterUpdate::new().set_desired_logging_config(logging_config(want)))
        }
        ClusterChange::WorkloadIdentity => Some(
            gke::ClusterUpdate::new().set_desired_workload_identity_config(
                gke::WorkloadIdentityConfig::new().set_workload_pool(&want.workload_pool),
            ),
        ),
        ClusterChange::Encryption => {
            Some(gke::ClusterUpdate::new().set_desired_database_encryption(encryption(want)))
        }
        ClusterChange::ReleaseChannel => {
            Some(gke::ClusterUpdate::new().set_desired_release_channel(
                gke::ReleaseChannel::new().set_channel(want.channel.clone()),
            ))
        }
    };
    let op = match update {
        // The pool the cluster was created with goes once it runs.
        None => {
            counted(
                &clients.calls,
                SERVICE,
                "DeleteNodePool",
                c.delete_node_pool()
                    .set_name(format!("{}/nodePools/{BOOTSTRAP_POOL}", clients.path))
                    .send(),
            )
            .await?
        }
        Some(update) => {
            counted(
                &clients.calls,
                SERVICE,
                "UpdateCluster",
                c.update_cluster()
                    .set_name(&clients.path)
                    .set_update(update)
                    .send(),
            )
            .await?
        }
    };
    started(&op)
}

async fn delete(
    clients: &Clients,
) -> Result<Started<ManagedCluster<ObservedCluster>>, ProviderError> {
    let outcome = counted(
        &clients.calls,
        SERVICE,
        "DeleteCluster",
        clients
            .gke
            .container
            .delete_cluster()
            .set_name(&clients.path)
            .send(),
    )
    .await;
    Started::after_delete(match outcome {
        Ok(op) if op.name.is_empty() => Ok(Started::Untracked),
        Ok(op) => Ok(Started::Operation(op.name)),
        Err(f) => Err(f.error),
    })
}
