//! A Cluster's own objects, found the same way by every provider: its InfraCluster and
//! ControlPlane by the Cluster's references, or — with the Cluster gone (deletion after it) — by
//! the `cluster.x-k8s.io/cluster-name` label; and where a control plane's or a pool's cluster
//! lives ([`control_plane_infra`], [`control_plane_cleanup_infra`], [`pool_home`]), made by
//! the cloud from the InfraCluster or the control plane's own `spec.infrastructure`
//! ([`InfraOf`]).

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

/// How a cloud makes where its cluster lives (its `Infra`: location, account, identity, network)
/// from the Cluster's InfraCluster, or from a control plane's own `spec.infrastructure` when the
/// Cluster has no InfraCluster (a brought network).
pub trait InfraOf: Sized {
    /// The cloud's InfraCluster kind.
    type InfraCluster: ClusterObject;
    /// A control plane's own `spec.infrastructure`.
    type Own;
    /// What a control plane's own `spec.infrastructure` must hold without an InfraCluster
    /// (`region, oke.compartmentID, …`), for messages.
    const OWN_FIELDS: &'static str;
    /// From the InfraCluster: its spec, and the network its status records.
    fn from_infra_cluster(infra_cluster: &Self::InfraCluster) -> Self;
    /// From the control plane's own `spec.infrastructure`.
    fn from_own(spec: &Self::Own) -> Self;
    /// Whether it says enough to reach the cloud (location, account scope).
    fn locatable(&self) -> bool;
}

/// The cloud's short name for messages, from its InfraCluster kind (`OKECluster` → `OKE`).
pub fn cloud_of<IC: ClusterObject>() -> String {
    let kind = IC::kind(&());
    kind.strip_suffix("Cluster").unwrap_or(&kind).to_string()
}

/// Where the cluster of a control plane lives: from the Cluster's InfraCluster; `None`
/// while one the Cluster names is not there yet (the control plane waits without a cloud call);
/// without one, from the control plane's own `spec.infrastructure` (`own`). Whether the
/// InfraCluster is ready to build on is the Cluster's to say (`infrastructureProvisioned`, as
/// Cluster API copies it from the InfraCluster).
///
/// # Errors
/// Terminal `InvalidSpec` with neither, naming the fields ([`InfraOf::OWN_FIELDS`]) the control
/// plane of kind `cp_kind` needs; as [`infra_cluster_of`].
pub async fn control_plane_infra<I: InfraOf>(
    client: &kube::Client,
    cluster: &Cluster,
    own: Option<&I::Own>,
    cp_kind: &str,
) -> Result<Option<I>, ProviderError> {
    if let Some(ic) =
        infra_cluster_of::<I::InfraCluster>(client, cluster, &cloud_of::<I::InfraCluster>()).await?
    {
        return Ok(Some(I::from_infra_cluster(&ic)));
    }
    if cluster.spec.infrastructure_ref.is_some() {
        return Ok(None);
    }
    match own {
        Some(spec) => Ok(Some(I::from_own(spec))),
        None => Err(ProviderError::terminal(
            Reason::InvalidSpec,
            format!(
                "the Cluster has no {}, so spec.infrastructure ({}) must be set on the {cp_kind}",
                <I::InfraCluster as kube::Resource>::kind(&()),
                I::OWN_FIELDS
            ),
        )),
    }
}

/// Where the cluster of a control plane being deleted lives, when that can still be told: as
/// [`control_plane_infra`] while the Cluster exists (`cluster`); with it gone, the control
/// plane's own `spec.infrastructure`, else the InfraCluster labelled with the Cluster's name
/// `cluster_name` in `namespace`. `None` when nothing locatable is left.
///
/// # Errors
/// As [`control_plane_infra`].
pub async fn control_plane_cleanup_infra<I: InfraOf>(
    client: &kube::Client,
    cluster: Option<&Cluster>,
    own: Option<&I::Own>,
    namespace: &str,
    cluster_name: &str,
    cp_kind: &str,
) -> Result<Option<I>, ProviderError> {
    let infra = match (cluster, own) {
        (Some(cluster), _) => match control_plane_infra(client, cluster, own, cp_kind).await? {
            Some(infra) => infra,
            None => return Ok(None),
        },
        (None, Some(spec)) => I::from_own(spec),
        (None, None) => {
            let gone = ClusterRef::Gone {
                namespace,
                name: cluster_name,
            };
            match infra_cluster_for::<I::InfraCluster>(client, gone, &cloud_of::<I::InfraCluster>())
                .await?
            {
                Some(infra_cluster) => I::from_infra_cluster(&infra_cluster),
                None => return Ok(None),
            }
        }
    };
    Ok(Some(infra).filter(I::locatable))
}

/// Where a pool's cluster lives, found the same way on every cloud.
#[derive(Debug)]
pub enum PoolHome<CP, IC> {
    /// The Cluster's ControlPlane; its InfraCluster when the Cluster has one (`None`: the pool
    /// works from the ControlPlane's own `spec.infrastructure`); the version the ControlPlane
    /// reports.
    Found {
        /// The ControlPlane.
        control_plane: CP,
        /// The InfraCluster, when there is one.
        infra_cluster: Option<IC>,
        /// `status.version`, parsed.
        version: Option<contract::version::KubeVersion>,
    },
    /// Not yet: what is awaited, in the user's terms.
    NotYet(String),
}

/// How far a pool's control plane must be before the pool reaches its cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControlPlaneNeed {
    /// Initialized: the pool acts on the cluster.
    Initialized,
    /// Initialized, or reporting an adoption (so its cluster is known): an adoption's plan
    /// looks beside its control plane's.
    Looked,
    /// Only there: the pool cleans up whatever it finds.
    Present,
}

impl ControlPlaneNeed {
    /// What the pool still waits for, in words, of a control plane `initialized` or not that
    /// has `looked` at its cloud cluster (reports an adoption) or not; `None` when it is far
    /// enough.
    pub fn waiting(self, initialized: bool, looked: bool) -> Option<&'static str> {
        match self {
            ControlPlaneNeed::Initialized if !initialized => Some("to be initialized"),
            ControlPlaneNeed::Looked if !initialized && !looked => Some("to find its cluster"),
            _ => None,
        }
    }
}

/// The first half of every cloud's pool `locate`: the Cluster's ControlPlane (as far as `need`
/// says), and its InfraCluster, waited for while the Cluster names one. A
/// Cluster that names none needs the ControlPlane's own `spec.infrastructure`
/// (`has_own_infrastructure`; `fields` says what it holds, for the error). `cloud` is the
/// cloud's short name (`AKS`), for messages.
///
/// # Errors
/// Terminal `InvalidSpec` with neither an InfraCluster nor the ControlPlane's own
/// infrastructure; the management API's.
pub async fn pool_home<CP, IC>(
    client: &kube::Client,
    cluster: ClusterRef<'_>,
    cloud: &str,
    need: ControlPlaneNeed,
    has_own_infrastructure: impl FnOnce(&CP) -> bool,
    fields: &str,
) -> Result<PoolHome<CP, IC>, ProviderError>
where
    CP: ClusterObject + crate::control_plane::ManagedControlPlane,
    IC: ClusterObject,
{
    let Some(control_plane) = control_plane_for::<CP>(client, cluster).await? else {
        return Ok(PoolHome::NotYet(format!(
            "waiting for the Cluster's {} (spec.controlPlaneRef)",
            CP::kind(&())
        )));
    };
    let status = control_plane.status_common();
    let initialized = status.is_some_and(|s| s.control_plane_initialized());
    let looked = status.is_some_and(|s| s.adoption.is_some());
    if let Some(what) = need.waiting(initialized, looked) {
        return Ok(PoolHome::NotYet(format!(
            "waiting for the {cloud} control plane {} {what}",
            control_plane.name_any()
        )));
    }
    let infra_cluster = infra_cluster_for::<IC>(client, cluster, cloud).await?;
    if infra_cluster.is_none() {
        if cluster.names_infrastructure() {
            return Ok(PoolHome::NotYet(format!(
                "waiting for the Cluster's {}",
                IC::kind(&())
            )));
        }
        if !has_own_infrastructure(&control_plane) {
            return Err(ProviderError::terminal(
                Reason::InvalidSpec,
                format!(
                    "the Cluster has no {}, so the {}'s spec.infrastructure ({fields}) must be set",
                    IC::kind(&()),
                    CP::kind(&())
                ),
            ));
        }
    }
    let version = status
        .and_then(|s| s.version.as_deref())
        .and_then(|v| contract::version::KubeVersion::parse(&contract::version::normalize(v)).ok());
    Ok(PoolHome::Found {
        control_plane,
        infra_cluster,
        version,
    })
}

/// A found pool's place: its cluster's control plane, where that cluster lives, and the version
/// the control plane reports.
#[derive(Debug)]
pub struct PoolPlace<CP, I> {
    /// The ControlPlane.
    pub control_plane: CP,
    /// The cloud's `Infra`, from the InfraCluster or the control plane's own
    /// `spec.infrastructure` ([`InfraOf`]).
    pub infra: I,
    /// `status.version` of the control plane, parsed.
    pub version: Option<contract::version::KubeVersion>,
}

/// [`pool_home`] with the cloud's `Infra` made by one rule: from the InfraCluster, else from the
/// control plane's own `spec.infrastructure` (`own` reads it). What a pool locates on every
/// cloud whose `Infra` is all it needs of the InfraCluster. Not yet while the home is not there.
///
/// # Errors
/// As [`pool_home`].
pub async fn pool_place<CP, I>(
    client: &kube::Client,
    cluster: ClusterRef<'_>,
    need: ControlPlaneNeed,
    own: impl Fn(&CP) -> Option<&I::Own>,
) -> Result<crate::machine_pool::Located<PoolPlace<CP, I>>, ProviderError>
where
    CP: ClusterObject + crate::control_plane::ManagedControlPlane,
    I: InfraOf,
{
    use crate::machine_pool::Located;
    let home = pool_home::<CP, I::InfraCluster>(
        client,
        cluster,
        &cloud_of::<I::InfraCluster>(),
        need,
        |cp| own(cp).is_some(),
        I::OWN_FIELDS,
    )
    .await?;
    let (control_plane, infra_cluster, version) = match home {
        PoolHome::NotYet(why) => return Ok(Located::NotYet(why)),
        PoolHome::Found {
            control_plane,
            infra_cluster,
            version,
        } => (control_plane, infra_cluster, version),
    };
    // Without an InfraCluster, pool_home has made sure of the control plane's own.
    let infra = match (&infra_cluster, own(&control_plane)) {
        (Some(c), _) => I::from_infra_cluster(c),
        (None, Some(spec)) => I::from_own(spec),
        (None, None) => {
            return Ok(Located::NotYet(format!(
                "waiting for the Cluster's {}",
                <I::InfraCluster as kube::Resource>::kind(&())
            )));
        }
    };
    Ok(Located::Found(PoolPlace {
        control_plane,
        infra,
        version,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pool_waits_for_its_control_plane_as_far_as_it_needs() {
        use ControlPlaneNeed::{Initialized, Looked, Present};
        assert_eq!(Initialized.waiting(false, true), Some("to be initialized"));
        assert_eq!(Initialized.waiting(true, false), None);
        // An adoption's plan looks once the control plane has found its cluster.
        assert_eq!(Looked.waiting(false, false), Some("to find its cluster"));
        assert_eq!(Looked.waiting(false, true), None);
        assert_eq!(Looked.waiting(true, false), None);
        // Cleaning up waits for nothing.
        assert_eq!(Present.waiting(false, false), None);
    }

    /// An InfraCluster kind of a made-up cloud.
    #[derive(kube::CustomResource, Clone, Debug, serde::Deserialize, serde::Serialize)]
    #[kube(
        group = "infrastructure.cluster.x-k8s.io",
        version = "v1beta2",
        kind = "XKSCluster",
        namespaced,
        schema = "disabled"
    )]
    struct XksClusterSpec {}

    #[test]
    fn the_cloud_is_named_by_its_infra_cluster_kind() {
        assert_eq!(cloud_of::<XKSCluster>(), "XKS");
    }
}
