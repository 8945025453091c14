//! The InfraCluster role, written once: a generic [`Reconciler`] over a narrow
//! [`InfraClusterCloud`].
//!
//! Each pass, on every cloud:
//!
//! 1. validates the network part of the spec ([`InfraClusterCloud::mode`]): a network the user
//!    brings (read only, ever) or one the provider creates; a spec that cannot be built is
//!    `NetworkReady=False, InvalidSpec` with the cloud's sentence naming the field, and no call;
//! 2. connects ([`InfraClusterCloud::connect`]; the identity and client cache of
//!    [`crate::identity`]); a refusal (no region, a missing identity Secret) is a False
//!    condition with its reason;
//! 3. observes a brought network, or walks the created one's services
//!    ([`crate::walker::build`]), and gets back a [`NetworkReport`]; a network seen whole is
//!    not read again before its report's look-again time unless the spec changed
//!    ([`NetworkMemo`]): passes that other objects trigger (the Cluster, the control plane)
//!    cost no cloud call;
//! 4. writes the shared status ([`contract::plan::infra_cluster_status`]: failure domains from
//!    the zones used, the `provisioned` milestone in both contracts) beside the cloud's network
//!    block, keeps the last network seen when a walk was cut short, and reports `NetworkReady`.
//!
//! It never sets `spec.controlPlaneEndpoint` (the control plane publishes it) and waits for
//! nothing from the control plane.
//!
//! Deletion follows one policy: a brought network is left as it is and the finalizer goes at
//! once; a created one is torn down ([`crate::walker::tear_down`]) only when the Cluster can
//! still be named ([`CleanupContext::cluster_to_clean`]), deleting only what carries the
//! ownership tag.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use contract::api::{ClusterSpecCommon, DeletionPolicy, InfraClusterStatusCommon, NetworkStatus};
use contract::conditions::{ConditionType, DesiredCondition, Reason};
use contract::ownership::Owner;
use contract::plan::infra_cluster_status;
use kube::ResourceExt;
use serde::Serialize;

use crate::CloudCalls;
use crate::pacing::looks::NetworkMemo;
use crate::{
    Cleanup, CleanupContext, Pass, PassContext, ProviderError, ProviderObject, Reconciler,
};

/// An InfraCluster kind, as the generic reconciler reads and writes it: the shared blocks, and
/// the block of what only its cloud reports (`status.eks`, `status.gke`, …).
pub trait ManagedInfraCluster: ProviderObject {
    /// What only this cloud reports of the network: its gateways, routers, resource groups.
    type Observed: Clone + Send + Sync + 'static;
    /// The kind's status.
    type Status: Serialize + Send + Sync;
    /// The shared spec block (region, network, identity, tags).
    fn spec_common(&self) -> &ClusterSpecCommon;
    /// The shared status block, when there is a status.
    fn status_common(&self) -> Option<&InfraClusterStatusCommon>;
    /// The cloud's block of the status, as an earlier pass wrote it.
    fn observed(&self) -> Option<&Self::Observed>;
    /// The kind's status from the shared block and the cloud's.
    fn status_of(
        common: InfraClusterStatusCommon,
        observed: Option<Self::Observed>,
    ) -> Self::Status;
}

/// A network as a pass saw it: the shape every cloud reports (the InfraCluster's
/// `status.network`) and what only its cloud has.
#[derive(Clone, Debug, PartialEq)]
pub struct SeenNetwork<O> {
    /// Its id, name, block, subnets and whether it is ours.
    pub shared: NetworkStatus,
    /// The cloud's own block.
    pub own: O,
}

/// The network report of a cloud whose kind is `K`.
pub type ReportOf<K> = NetworkReport<SeenNetwork<<K as ManagedInfraCluster>::Observed>>;

/// The network the spec asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NetworkMode<P> {
    /// The user's network: observed, never changed or deleted.
    Brought,
    /// A network the provider creates (and deletes), with the cloud's validated parameters.
    Create(P),
}

/// What one pass found of the network.
#[derive(Debug)]
pub struct NetworkReport<N> {
    /// The network as seen; `None` keeps the status's (a walk cut short saw only part of it).
    pub network: Option<N>,
    /// Whether everything the network needs exists.
    pub complete: bool,
    /// `NetworkReady`.
    pub condition: DesiredCondition,
    /// When to look again (unused when `error` is set: the engine's backoff decides).
    pub requeue: Duration,
    /// The error that ended the pass.
    pub error: Option<ProviderError>,
}

impl<N> NetworkReport<N> {
    /// A network observed whole and usable: `NetworkReady=True` with `message`.
    pub fn ready(network: N, message: impl Into<String>, requeue: Duration) -> Self {
        Self {
            network: Some(network),
            complete: true,
            condition: DesiredCondition::true_(ConditionType::NetworkReady, Reason::Ready, message),
            requeue,
            error: None,
        }
    }

    /// A pass that ended in `error`: the status keeps its network and `NetworkReady` says why.
    pub fn failed(error: ProviderError) -> Self {
        Self {
            network: None,
            complete: false,
            condition: network_not_ready(&error),
            requeue: Duration::ZERO,
            error: Some(error),
        }
    }
}

/// `NetworkReady=False` from an error, with its reason and message.
pub fn network_not_ready(error: &ProviderError) -> DesiredCondition {
    let reason = match error {
        ProviderError::Transient { reason, .. } | ProviderError::Terminal { reason, .. } => *reason,
        ProviderError::Kube(_) => Reason::CloudError,
    };
    DesiredCondition::false_(ConditionType::NetworkReady, reason, error.to_string())
}

/// What [`InfraClusterCloud::connect`] is given: the InfraCluster `K` and how to reach the
/// cloud for it.
pub struct Reach<'a, K> {
    /// The InfraCluster.
    pub object: &'a K,
    /// Client to the management cluster (for the identity's Secrets).
    pub client: &'a kube::Client,
    /// Where every cloud call is counted and admitted.
    pub calls: &'a CloudCalls,
    /// The InfraCluster's namespace.
    pub namespace: &'a str,
}

/// What a cloud supplies to the generic InfraCluster reconciler.
pub trait InfraClusterCloud: Send + Sync + 'static {
    /// The InfraCluster kind.
    type Object: ManagedInfraCluster;
    /// One pass's clients.
    type Clients: Send + Sync;
    /// The parameters of a network to create, once validated.
    type Plan: Send + Sync;

    /// Validates the network part of the spec (pure). Objects admitted before a CRD rule existed
    /// reach this too.
    ///
    /// # Errors
    /// A sentence naming the field.
    fn mode(&self, obj: &Self::Object) -> Result<NetworkMode<Self::Plan>, String>;

    /// Clients for `reach.object`'s location and identity; every cloud call counted in
    /// `reach.calls`.
    fn connect(
        &self,
        reach: Reach<'_, Self::Object>,
    ) -> impl Future<Output = Result<Self::Clients, ProviderError>> + Send;

    /// Observes a brought network: read only.
    fn observe_brought(
        &self,
        obj: &Self::Object,
        clients: &Self::Clients,
    ) -> impl Future<Output = ReportOf<Self::Object>> + Send;

    /// One build pass over a created network's services (`ctx` for what the cloud reads
    /// about the Cluster, such as its control plane's cloud name).
    fn build(
        &self,
        obj: &Self::Object,
        ctx: &PassContext,
        clients: &Self::Clients,
        owner: Owner,
        plan: Self::Plan,
    ) -> impl Future<Output = Result<ReportOf<Self::Object>, ProviderError>> + Send;

    /// Leaves a created network in place for `spec.deletionPolicy: Orphan`: removes `owner`'s
    /// ownership tags from every resource of it that carries them. `Ok(Some(why))` when the
    /// cloud keeps some marks (said to the user in an event).
    fn release(
        &self,
        clients: &Self::Clients,
        owner: Owner,
    ) -> impl Future<Output = Result<Option<String>, ProviderError>> + Send;

    /// One tear-down pass over a created network's services, deleting only what `owner` owns.
    fn tear_down(
        &self,
        clients: &Self::Clients,
        owner: Owner,
    ) -> impl Future<Output = Result<Cleanup, ProviderError>> + Send;
}

/// The generic InfraCluster reconciler.
pub struct InfraClusterReconciler<C: InfraClusterCloud> {
    cloud: C,
    provider: &'static str,
    memo: NetworkMemo<SeenNetwork<<C::Object as ManagedInfraCluster>::Observed>>,
}

impl<C: InfraClusterCloud> InfraClusterReconciler<C> {
    /// A reconciler for `cloud`; `provider` is the provider's short name (the ownership tag's).
    pub fn new(provider: &'static str, cloud: C) -> Self {
        Self {
            cloud,
            provider,
            memo: NetworkMemo::default(),
        }
    }

    /// The cloud.
    pub fn cloud(&self) -> &C {
        &self.cloud
    }

    fn report(&self, obj: &C::Object, report: ReportOf<C::Object>) -> Pass {
        // A walk cut short keeps what the status said of the network.
        let (network, own) = match report.network {
            Some(seen) => (Some(seen.shared), Some(seen.own)),
            None => (
                obj.status_common().and_then(|s| s.network.clone()),
                obj.observed().cloned(),
            ),
        };
        let zones = network
            .as_ref()
            .map(NetworkStatus::zones)
            .unwrap_or_default();
        let mut common = infra_cluster_status(obj.status_common(), zones, report.complete);
        common.network = network;
        let status = C::Object::status_of(common, own);
        let pass = Pass::new().status(&status).condition(report.condition);
        match report.error {
            Some(error) => pass.with_error(error),
            None => pass.requeue_after(report.requeue),
        }
    }
}

impl<C: InfraClusterCloud> Reconciler<C::Object> for InfraClusterReconciler<C> {
    async fn reconcile(
        &self,
        obj: Arc<C::Object>,
        ctx: &PassContext,
    ) -> Result<Pass, ProviderError> {
        let refuse = |error: ProviderError| Ok(self.report(&obj, NetworkReport::failed(error)));
        let mode = match self.cloud.mode(&obj) {
            Ok(mode) => mode,
            Err(message) => return refuse(ProviderError::terminal(Reason::InvalidSpec, message)),
        };
        let uid = obj.uid().unwrap_or_default();
        let generation = kube::Resource::meta(obj.as_ref()).generation;
        if let Some(report) = self.memo.fresh(&uid, generation, Instant::now()) {
            return Ok(self.report(&obj, report));
        }
        let namespace = obj.namespace().unwrap_or_default();
        let clients = match self
            .cloud
            .connect(Reach {
                object: &*obj,
                client: &ctx.client,
                calls: &ctx.cloud_calls,
                namespace: &namespace,
            })
            .await
        {
            Ok(clients) => clients,
            Err(error @ ProviderError::Kube(_)) => return Err(error),
            Err(error) => return refuse(error),
        };
        let report = match mode {
            NetworkMode::Brought => self.cloud.observe_brought(&obj, &clients).await,
            NetworkMode::Create(plan) => {
                let owner = Owner::new(self.provider, &namespace, ctx.cluster.name_any());
                self.cloud.build(&obj, ctx, &clients, owner, plan).await?
            }
        };
        self.memo
            .remember(&uid, generation, Instant::now(), &report);
        Ok(self.report(&obj, report))
    }

    async fn cleanup(
        &self,
        obj: Arc<C::Object>,
        ctx: &CleanupContext,
    ) -> Result<Cleanup, ProviderError> {
        self.memo.forget(&obj.uid().unwrap_or_default());
        if matches!(self.cloud.mode(&obj), Ok(NetworkMode::Brought)) {
            return Ok(Cleanup::Done);
        }
        let created_something = obj.status_common().is_some_and(|s| s.network.is_some());
        let kind = <C::Object as kube::Resource>::kind(&());
        let Some(cluster) = ctx.cluster_to_clean(created_something, &kind)? else {
            return Ok(Cleanup::Done);
        };
        let namespace = obj.namespace().unwrap_or_default();
        let owner = Owner::new(self.provider, &namespace, cluster);
        let clients = self
            .cloud
            .connect(Reach {
                object: &*obj,
                client: &ctx.client,
                calls: &ctx.cloud_calls,
                namespace: &namespace,
            })
            .await?;
        if obj.spec_common().deletion_policy == DeletionPolicy::Orphan {
            let kept = self.cloud.release(&clients, owner).await?;
            let note = "The network was left in place (spec.deletionPolicy: Orphan)";
            match kept {
                None => {
                    let note = format!("{note}; this Cluster's ownership tags were removed");
                    ctx.events.normal("Orphaned", "Delete", note).await;
                }
                Some(why) => {
                    let note = format!("{note}; {why}");
                    ctx.events.warning("Orphaned", "Delete", note).await;
                }
            }
            return Ok(Cleanup::Done);
        }
        self.cloud.tear_down(&clients, owner).await
    }
}
