//! A Cluster's own objects, found the same way by every provider: its InfraCluster and
//! ControlPlane by the Cluster's references, or — with the Cluster gone (deletion after it) — by
//! the `cluster.x-k8s.io/cluster-name` label.

use contract::capi::{CLUSTER_NAME_LABEL, Cluster};
use contract::conditions::Reason;
use kube::api::ListParams;
use kube::{Api, ResourceExt};

use crate::{ClusterRef, ProviderError};

/// A namespaced kind the lookups can read.
pub trait ClusterObject:
    kube::Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
    + Clone
    + serde::de::DeserializeOwned
    + std::fmt::Debug
{
}

impl<K> ClusterObject for K where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug
{
}

/// The objects of kind `K` labelled as belonging to the Cluster `namespace/name`.
///
/// # Errors
/// The management API's.
pub async fn labelled<K: ClusterObject>(
    client: &kube::Client,
    namespace: &str,
    name: &str,
) -> Result<Vec<K>, ProviderError> {
    let api: Api<K> = Api::namespaced(client.clone(), namespace);
    let selector = format!("{CLUSTER_NAME_LABEL}={name}");
    Ok(api
        .list(&ListParams::default().labels(&selector))
        .await?
        .items)
}

/// The Cluster's InfraCluster of kind `K` (named by `spec.infrastructureRef`), `None` without a
/// reference or before it exists.
///
/// # Errors
/// Terminal `InvalidSpec` when the reference names another kind (`cloud` says whose provider
/// refuses it, e.g. `EKS`); the management API's.
pub async fn infra_cluster_of<K: ClusterObject>(
    client: &kube::Client,
    cluster: &Cluster,
    cloud: &str,
) -> Result<Option<K>, ProviderError> {
    let Some(reference) = cluster.spec.infrastructure_ref.as_ref() else {
        return Ok(None);
    };
    let kind = K::kind(&());
    if reference.kind != kind {
        return Err(ProviderError::terminal(
            Reason::InvalidSpec,
            format!(
                "the Cluster's infrastructureRef is a {}; {cloud} needs a {kind} or none",
                reference.kind
            ),
        ));
    }
    let api: Api<K> = Api::namespaced(client.clone(), &cluster.namespace().unwrap_or_default());
    Ok(api.get_opt(&reference.name).await?)
}

/// The Cluster's ControlPlane of kind `K` (named by `spec.controlPlaneRef`); `None` without a
/// reference, when it names another kind, or before it exists.
///
/// # Errors
/// The management API's.
pub async fn control_plane_of<K: ClusterObject>(
    client: &kube::Client,
    cluster: &Cluster,
) -> Result<Option<K>, ProviderError> {
    let Some(reference) = cluster.spec.control_plane_ref.as_ref() else {
        return Ok(None);
    };
    if reference.kind != K::kind(&()) {
        return Ok(None);
    }
    let api: Api<K> = Api::namespaced(client.clone(), &cluster.namespace().unwrap_or_default());
    Ok(api.get_opt(&reference.name).await?)
}

/// [`control_plane_of`], or with the Cluster gone the one labelled with its name.
///
/// # Errors
/// The management API's.
pub async fn control_plane_for<K: ClusterObject>(
    client: &kube::Client,
    cluster: ClusterRef<'_>,
) -> Result<Option<K>, ProviderError> {
    match cluster {
        ClusterRef::Live(c) => control_plane_of(client, c).await,
        ClusterRef::Gone { namespace, name } => {
            Ok(labelled(client, namespace, name).await?.into_iter().next())
        }
    }
}

/// [`infra_cluster_of`], or with the Cluster gone the one labelled with its name.
///
/// # Errors
/// As [`infra_cluster_of`].
pub async fn infra_cluster_for<K: ClusterObject>(
    client: &kube::Client,
    cluster: ClusterRef<'_>,
    cloud: &str,
) -> Result<Option<K>, ProviderError> {
    match cluster {
        ClusterRef::Live(c) => infra_cluster_of(client, c, cloud).await,
        ClusterRef::Gone { namespace, name } => {
            Ok(labelled(client, namespace, name).await?.into_iter().next())
        }
    }
}
