//! The InfraMachinePool role, written once: a generic [`Reconciler`](crate::Reconciler) over a
//! narrow [`MachinePoolCloud`].
//!
//! One pass, on every cloud, enters the cloud's code in this order and at most once each:
//!
//! 1. without the owning MachinePool, the whole waiting condition set; with it, **validate**
//!    (cloud, pure) and the pool's name by the cloud's naming rule ([`PoolNames`]);
//! 2. **locate** (kernel): the Cluster's control plane, initialized, and where its cluster
//!    lives ([`crate::cluster_objects::pool_place`]); nothing touches the cloud until then (the
//!    MachinePool's `replicas-managed-by` annotation is still kept right);
//! 3. **connect** (cloud): clients and the plain data the kernel reads ([`PoolConnected`]);
//! 4. **observe** (cloud, one call): the pool, the operation `status.operation` tracks, the
//!    provider IDs of its nodes ([`PoolLook`] says which);
//! 5. writes back to the MachinePool (who owns the count, and the autoscaler's count) by
//!    [`contract::scaling::write_back`];
//! 6. **diff** (cloud, pure) and **plan** (kernel, [`contract::plan::pool`]), then **act**
//!    (cloud): at most one [`PoolStep`] that changes something;
//! 7. **report**: `spec.providerIDList` (a provider ID leaves only when its instance is gone),
//!    the shared status (the cloud's [`MachinePoolCloud::status`] adds its own block), the
//!    whole condition set ([`contract::plan::pool_conditions`]) and when to look again.
//!
//! Deletion follows one policy ([`crate::CleanupContext::cluster_to_clean`]): with the Cluster
//! gone the pool is still found by the Cluster's name; only a pool tagged as ours is deleted.

mod cleanup;
mod pass;

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::future::Future;
use std::time::Duration;

use contract::api::RequestOverridesStatus;
use contract::api::{MachinePoolSpecCommon, MachinePoolStatusCommon, Operation, OperationKind};
use contract::capi::MachinePool;
use contract::conditions::Reason;
use contract::idempotency::TokenLimits;
use contract::naming::{self, NameLimits};
use contract::plan::{CloudStep, Lifecycle, OperationState, PoolFacts};
use contract::scaling::ScalingIntent;
use contract::version::{KubeVersion, normalize};
use kube::ResourceExt;
use serde::Serialize;

use crate::CloudCalls;
use crate::cluster_objects::{ClusterObject, InfraOf, PoolPlace};
use crate::control_plane::{ManagedControlPlane, Request, Started};
use crate::{ProviderError, ProviderObject};

pub use pass::MachinePoolReconciler;

/// How long after asking the cloud to create a pool a NotFound is taken as "not listed yet"
/// rather than "gone" (clouds are eventually consistent).
pub const CREATE_VISIBILITY_GRACE: Duration = Duration::from_secs(60);

/// An InfraMachinePool kind, as the generic reconciler reads it: the shared spec and status.
pub trait ManagedMachinePool: ProviderObject {
    /// What only this cloud reports of its pool (`status.gke`), `()` where it reports nothing.
    type Observed: Send + Sync;
    /// The kind's status.
    type Status: Serialize + Send + Sync;
    /// The shared spec block (machine type, scaling, labels, taints, cloud name, adoption, …).
    fn spec_common(&self) -> &MachinePoolSpecCommon;
    /// The shared status block, when there is a status.
    fn status_common(&self) -> Option<&MachinePoolStatusCommon>;
    /// `status.requestOverrides`.
    fn request_overrides_status(&self) -> Option<&RequestOverridesStatus>;
    /// The kind's status from the shared block, the request overrides last applied and the
    /// cloud's block (`None` when there is no pool of ours to report on).
    fn status_of(
        common: MachinePoolStatusCommon,
        request_overrides: Option<RequestOverridesStatus>,
        observed: Option<Self::Observed>,
    ) -> Self::Status;

    /// The cloud's id of the pool, as an earlier pass recorded it in the status.
    fn cloud_id(&self) -> Option<&str> {
        self.status_common()?.cloud_id.as_deref()
    }
}

/// The cloud's pool, normalised; `D` is the cloud's own view of it.
#[derive(Debug, Clone)]
pub struct ManagedPool<D> {
    /// The cloud's id of it.
    pub id: String,
    /// Its lifecycle.
    pub lifecycle: Lifecycle,
    /// Its state in the cloud's words.
    pub state: String,
    /// The version its nodes run (`1.31`, `v1.31.2`), when the cloud says.
    pub version: Option<String>,
    /// Its tags.
    pub tags: BTreeMap<String, String>,
    /// The cloud's health issues.
    pub issues: Vec<String>,
    /// The node count the cloud aims for.
    pub desired_size: Option<i32>,
    /// The cloud's own view.
    pub detail: D,
}

impl<D> ManagedPool<D> {
    /// The minor version its nodes run (`1.31.4` → v1.31), when the cloud says and it parses.
    pub fn minor(&self) -> Option<KubeVersion> {
        self.version
            .as_deref()
            .and_then(|v| KubeVersion::parse(&normalize(v)).ok())
            .map(|v| v.without_patch())
    }

    /// What the shared planner needs of it.
    pub fn facts(&self) -> PoolFacts<'_> {
        PoolFacts {
            id: &self.id,
            lifecycle: &self.lifecycle,
            state: &self.state,
            version: self.minor(),
            tags: &self.tags,
            issues: &self.issues,
            desired_size: self.desired_size,
        }
    }
}

/// How a cloud names a pool it is not given a name for (`spec.cloudName` unset).
#[derive(Debug, Clone, Copy)]
pub enum PoolNames {
    /// From the object's namespace and name (unique in the whole cloud account).
    Namespaced(&'static NameLimits),
    /// From the object's name (unique within its cluster).
    Child(&'static NameLimits),
}

impl PoolNames {
    /// The pool's name in the cloud: `spec.cloudName`, checked, else derived by the rule.
    ///
    /// # Errors
    /// Terminal `InvalidSpec` when `spec.cloudName` breaks the cloud's rules.
    pub fn of<K: ManagedMachinePool>(&self, obj: &K) -> Result<String, ProviderError> {
        let given = obj.spec_common().cloud_name.as_deref();
        let invalid = |message: String| ProviderError::terminal(Reason::InvalidSpec, message);
        match *self {
            PoolNames::Namespaced(limits) => naming::cloud_name(
                given,
                &obj.namespace().unwrap_or_default(),
                &obj.name_any(),
                limits,
            )
            .map_err(invalid),
            PoolNames::Child(limits) => match given {
                Some(given) => limits
                    .check(given)
                    .map(|()| given.to_string())
                    .map_err(|e| invalid(format!("spec.cloudName: {e}"))),
                None => Ok(naming::derive_child_name(&obj.name_any(), limits)),
            },
        }
    }
}

/// What a cloud says about itself, once, when its reconciler is made.
#[derive(Debug, Clone, Copy)]
pub struct MachinePoolProfile {
    /// The cloud's short name (`EKS`).
    pub cloud: &'static str,
    /// What the cloud calls a pool (`node group`).
    pub noun: &'static str,
    /// How it names a pool.
    pub names: PoolNames,
    /// The value written into `cluster.x-k8s.io/replicas-managed-by` for an autoscaled pool.
    pub replicas_manager: &'static str,
    /// Its idempotency tokens' limits.
    pub token_limits: &'static TokenLimits,
    /// The cloud's name of the call that creates a pool (`CreateNodegroup`), the one call that
    /// takes `requestOverrides`.
    pub create_call: &'static str,
    /// How soon to look again while the cloud is busy.
    pub poll: Duration,
    /// How soon to look again at rest.
    pub rest: Duration,
}

impl MachinePoolProfile {
    /// How soon to look again first after starting an operation.
    pub fn settle(&self) -> Duration {
        self.poll.min(Duration::from_secs(5))
    }
}

/// Whether the pool can be reached yet.
pub enum Located<S> {
    /// It can.
    Found(S),
    /// Not yet (or, on deletion, no longer): no cloud call; the message says what is awaited.
    NotYet(String),
}

/// What [`MachinePoolCloud::connect`] is given: the pool `O`, where its cluster is (its
/// control plane `CP` and the cloud's `Infra`, `I`), and how to reach the cloud. A role module
/// names it for its own kinds (`Reach<'_>`, which `machine_pool!` declares).
pub struct PoolReach<'a, O, CP, I> {
    /// The pool.
    pub object: &'a O,
    /// Where the pool's cluster is: its control plane, where it lives, its version.
    pub place: PoolPlace<CP, I>,
    /// Client to the management cluster (for the identity's Secrets).
    pub client: &'a kube::Client,
    /// Where every cloud call is counted and admitted.
    pub calls: &'a CloudCalls,
    /// The namespace of the pool and its Cluster.
    pub namespace: &'a str,
    /// The owning Cluster's name.
    pub cluster_name: &'a str,
    /// The name of the cloud's cluster the pool is in.
    pub cluster: &'a str,
    /// The pool's name in the cloud ([`PoolNames`]).
    pub pool: &'a str,
}

/// What `connect` gives a pass: plain data the kernel reads, and the cloud's own clients.
pub struct PoolConnected<K> {
    /// The pool's name in the cloud.
    pub pool: String,
    /// The name of the cloud cluster it belongs to (for messages).
    pub cluster: String,
    /// The user's tags for everything made for the Cluster (the ownership tag is added by the
    /// kernel).
    pub tags: BTreeMap<String, String>,
    /// The cloud's clients for the pass.
    pub clients: K,
}

impl<K> PoolConnected<K> {
    /// The pool with where it lives, for messages (`ng (in EKS cluster c)`).
    pub fn place(&self, cloud: &str) -> String {
        format!("{} (in {cloud} cluster {})", self.pool, self.cluster)
    }
}

/// What the kernel lets [`MachinePoolCloud::observe`] read beyond the pool itself.
#[derive(Debug, Clone, Copy)]
pub struct PoolLook<'a> {
    operation: Option<&'a Operation>,
    deleting: bool,
}

impl<'a> PoolLook<'a> {
    pub(crate) fn new(operation: Option<&'a Operation>) -> Self {
        Self {
            operation,
            deleting: false,
        }
    }

    pub(crate) fn for_delete() -> Self {
        Self {
            operation: None,
            deleting: true,
        }
    }

    /// The update or upgrade whose state to ask the cloud for, once the pool is found (a
    /// create or delete is followed by the pool's own state).
    pub fn operation<D>(&self, _pool: &ManagedPool<D>) -> Option<&'a Operation> {
        self.operation
            .filter(|op| matches!(op.kind, OperationKind::Upgrade | OperationKind::Update))
    }

    /// Whether to list the provider IDs of the pool's nodes (not on deletion).
    pub fn provider_ids(&self) -> bool {
        !self.deleting
    }

    /// What the look saw: `pool`, the state of its operation, and the provider IDs `list`
    /// gives, awaited only when [`PoolLook::provider_ids`] asks for them.
    ///
    /// # Errors
    /// `list`'s.
    pub async fn seen<D, E>(
        &self,
        pool: Option<ManagedPool<D>>,
        operation: Option<OperationState>,
        list: impl Future<Output = Result<Vec<String>, E>>,
    ) -> Result<PoolObserved<D>, E> {
        let provider_ids = match self.provider_ids() {
            true => list.await?,
            false => Vec::new(),
        };
        Ok(PoolObserved {
            pool,
            operation,
            provider_ids,
        })
    }
}

/// One look at the cloud.
#[derive(Debug)]
pub struct PoolObserved<D> {
    /// The pool, `None` when the cloud has none of that name.
    pub pool: Option<ManagedPool<D>>,
    /// The state of [`PoolLook::operation`], when the cloud knows it.
    pub operation: Option<OperationState>,
    /// The provider IDs of its nodes, by the shared rule
    /// ([`contract::scaling::provider_id_list`]): an ID stays while its instance exists.
    pub provider_ids: Vec<String>,
}

impl<D> PoolObserved<D> {
    /// Nothing of that name.
    pub fn nothing() -> Self {
        Self {
            pool: None,
            operation: None,
            provider_ids: Vec::new(),
        }
    }
}

/// What the spec and the owning MachinePool ask of the pool.
#[derive(Debug, Clone, Copy)]
pub struct PoolWant<'a, D> {
    /// The spec in the cloud's terms ([`MachinePoolCloud::validate`]).
    pub spec: &'a D,
    /// Who owns the node count.
    pub scaling: ScalingIntent,
    /// The owning MachinePool (its failure domains, its template).
    pub machine_pool: &'a MachinePool,
}

/// The one change a pass asks the cloud for.
#[derive(Debug)]
pub enum PoolStep<'a, D, C> {
    /// Create the pool at `version` (`None`: the cluster's).
    Create {
        /// What is asked.
        want: PoolWant<'a, D>,
        /// The version to create it at.
        version: Option<&'a KubeVersion>,
    },
    /// Put `tags` on the pool `id` (adopting it, or putting missing tags back).
    Tag {
        /// The cloud's id of it.
        id: &'a str,
        /// The tags to put.
        tags: &'a BTreeMap<String, String>,
    },
    /// Remove our ownership tag (`key`) from the pool `id`, leaving it running
    /// (`spec.deletionPolicy: Orphan`).
    Untag {
        /// The cloud's id of it.
        id: &'a str,
        /// The ownership tag's key.
        key: &'a str,
    },
    /// The version step to `to`.
    Upgrade {
        /// The version to ask for.
        to: &'a KubeVersion,
    },
    /// The cloud's own change.
    Update {
        /// The change [`MachinePoolCloud::diff`] found.
        change: &'a C,
    },
    /// Delete the pool.
    Delete,
}

/// A create, as a cloud's `act::create` takes it: what is asked, at which version, with the
/// request's tags and idempotency.
#[derive(Debug)]
pub struct PoolCreate<'a, D> {
    /// What is asked.
    pub want: PoolWant<'a, D>,
    /// The version to create it at (`None`: the cluster's).
    pub version: Option<&'a KubeVersion>,
    /// The tags and idempotency of the pass.
    pub request: &'a crate::control_plane::Request,
}

/// A change of the cloud's own to a pool, said for the conditions.
pub trait DescribePoolChange<D> {
    /// What the change does to `pool` (as observed, when it was).
    fn describe(&self, pool: Option<&ManagedPool<D>>) -> String;
}

/// The cloud side of the InfraMachinePool role: what only the cloud knows, entered at most
/// once each per pass (module docs).
pub trait MachinePoolCloud: Send + Sync + 'static {
    /// The InfraMachinePool kind.
    type Object: ManagedMachinePool;
    /// The ControlPlane kind of its cluster.
    type ControlPlane: ClusterObject + ManagedControlPlane;
    /// Where the cluster lives, and the Cluster's InfraCluster kind.
    type Infra: InfraOf<Own = <Self::ControlPlane as ManagedControlPlane>::OwnInfra> + Send + Sync;
    /// The spec in the cloud's terms, validated.
    type Spec: Send + Sync;
    /// The cloud's clients for one pass.
    type Clients: Send + Sync;
    /// The cloud's own view of its pool.
    type Detail: Send + Sync;
    /// The cloud's own change.
    type Change: DescribePoolChange<Self::Detail> + Clone + Debug + Send + Sync;

    /// The spec in the cloud's terms, or a terminal `InvalidSpec` naming the field. Pure.
    ///
    /// # Errors
    /// What the spec asks that the cloud cannot be asked.
    fn validate(&self, obj: &Self::Object) -> Result<Self::Spec, ProviderError>;

    /// Clients and names for one pass, for the pool `reach.object` in the cluster at
    /// `reach.place`.
    fn connect(
        &self,
        reach: PoolReach<'_, Self::Object, Self::ControlPlane, Self::Infra>,
    ) -> impl Future<Output = Result<PoolConnected<Self::Clients>, ProviderError>> + Send;

    /// One look: the pool named `at.pool`; what [`PoolLook`] allows besides.
    fn observe(
        &self,
        at: &PoolConnected<Self::Clients>,
        look: PoolLook<'_>,
    ) -> impl Future<Output = Result<PoolObserved<Self::Detail>, ProviderError>> + Send;

    /// The cloud's own difference (scaling, labels, taints, update strategy). Pure.
    fn diff(
        &self,
        want: &PoolWant<'_, Self::Spec>,
        pool: &ManagedPool<Self::Detail>,
    ) -> CloudStep<Self::Change>;

    /// Asks the cloud for `step`. A create that finds the pool made already (by a pass that
    /// crashed before recording it) is [`Started::Done`]: the next pass sees it.
    fn act(
        &self,
        at: &PoolConnected<Self::Clients>,
        step: PoolStep<'_, Self::Spec, Self::Change>,
        request: &Request,
    ) -> impl Future<Output = Result<Started<ManagedPool<Self::Detail>>, ProviderError>> + Send;

    /// What only this cloud reports of `pool` (its status block). Pure.
    fn report(&self, pool: &Self::Detail) -> <Self::Object as ManagedMachinePool>::Observed;

    /// `pool` as this pool's spec would ask for it: a JSON object shaped like the spec (the
    /// shared fields and the cloud's block), `null` where the cloud has nothing. What an
    /// adoption plan compares the spec with ([`contract::adoption`]). Pure.
    fn as_spec(&self, pool: &Self::Detail) -> serde_json::Value;
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_pools_version_is_read_at_minor_granularity() {
        let pool = |version: Option<&str>| ManagedPool {
            id: String::new(),
            lifecycle: Lifecycle::Running,
            state: String::new(),
            version: version.map(str::to_string),
            tags: BTreeMap::new(),
            issues: Vec::new(),
            desired_size: None,
            detail: (),
        };
        assert_eq!(pool(Some("1.31")).minor(), Some(KubeVersion::new(1, 31)));
        assert_eq!(pool(Some("1.31.4")).minor(), Some(KubeVersion::new(1, 31)));
        assert_eq!(pool(Some("latest")).minor(), None);
        assert_eq!(pool(None).minor(), None);
    }

    #[test]
    fn a_look_asks_for_updates_and_upgrades_and_no_ids_on_deletion() {
        let at = jiff::Timestamp::UNIX_EPOCH;
        let pool = ManagedPool {
            id: "p".into(),
            lifecycle: Lifecycle::Running,
            state: String::new(),
            version: None,
            tags: BTreeMap::new(),
            issues: Vec::new(),
            desired_size: None,
            detail: (),
        };
        let update = Operation::new("u", OperationKind::Update, at);
        let create = Operation::new("c", OperationKind::Create, at);
        assert!(PoolLook::new(Some(&update)).operation(&pool).is_some());
        assert!(PoolLook::new(Some(&create)).operation(&pool).is_none());
        assert!(PoolLook::new(None).provider_ids());
        assert!(!PoolLook::for_delete().provider_ids());
    }

    #[tokio::test]
    async fn a_look_lists_provider_ids_only_when_it_asks_for_them() {
        let list = || async { Ok::<_, ()>(vec!["aws:///a/i-1".to_string()]) };
        let seen = PoolLook::new(None).seen::<(), _>(None, None, list()).await;
        assert_eq!(seen.unwrap().provider_ids, ["aws:///a/i-1"]);
        let failing = async { Err::<Vec<String>, _>("listed") };
        let seen = PoolLook::for_delete()
            .seen::<(), _>(None, None, failing)
            .await;
        assert!(seen.unwrap().provider_ids.is_empty());
    }
}
