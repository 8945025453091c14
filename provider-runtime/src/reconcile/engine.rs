//! The per-kind controller: watches, gate, finalizer, provider call, status write, retries.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::{Duration, Instant};

use contract::capi::{
    Cluster, MachinePool, WATCH_FILTER_LABEL, cluster_name_of, owner_cluster, owner_machine_pool,
};
use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{ListParams, Patch, PatchParams};
use kube::runtime::controller::{
    Action, Config as ControllerConfig, Controller, Error as ControllerError,
};
use kube::runtime::events::Recorder;
use kube::runtime::finalizer::{self, Event as FinalizerEvent};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Resource, ResourceExt};
use serde_json::{Value, json};
use tracing::Instrument;

use super::gate::{Gate, gate, owner_names};
use super::status::{
    DesiredStatus, active_status, deleting_conditions, fields_of, pass_conditions, paused_status,
    transitions,
};
use super::{
    Cleanup, CleanupContext, ObjectEvents, Pass, PassContext, ProviderObject, Reconciler, Role,
};
use crate::error::{ProviderError, kube_category};
use crate::metrics::Metrics;
use crate::pacing::retry::{Failure, Holds, Retries};
use crate::shutdown::Stop;
use crate::telemetry;
use crate::watches::{SharedWatch, map_touched, slim};

/// What every controller of the process shares.
pub(crate) struct Env {
    pub client: kube::Client,
    /// Provider name: field manager and event reporter.
    pub provider: &'static str,
    pub namespace: Option<String>,
    pub watch_filter: Option<String>,
    pub concurrency: u16,
    pub sync_period: Duration,
    pub metrics: Metrics,
    /// Every cloud call of the process: counted, and admitted by the `Retry-After`s answered.
    pub calls: crate::CloudCalls,
    pub recorder: Recorder,
    /// Clusters the cloud throttled, held until its `Retry-After` is over (every kind's
    /// controller shares them).
    pub holds: Holds,
}

impl Env {
    pub(crate) fn api<K>(&self) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>,
    {
        match &self.namespace {
            Some(ns) => Api::namespaced(self.client.clone(), ns),
            None => Api::all(self.client.clone()),
        }
    }
}

/// Why a pass did not finish cleanly.
#[derive(Debug, thiserror::Error)]
pub(crate) enum EngineError {
    #[error(transparent)]
    Provider(ProviderError),
    #[error("kubernetes API: {0}")]
    Kube(#[from] kube::Error),
    /// The finalizer's JSON patch was refused because its `test` of `/metadata/finalizers` did
    /// not hold: the copy it was built from was stale (the API server answers a failed test 422
    /// with no field causes). A conflict like a 409, not an invalid request: retried on the
    /// fresh copy.
    #[error("kubernetes API: the finalizer patch was built from a stale copy: {0}")]
    StaleFinalizer(kube::Error),
    /// Not an error: cleanup is in progress and the finalizer must stay.
    #[error("cleanup in progress")]
    CleanupPending(Duration),
    #[error("{0}")]
    Internal(String),
}

impl EngineError {
    fn category(&self) -> &'static str {
        match self {
            Self::Provider(e) => e.category(),
            Self::Kube(e) => kube_category(e),
            Self::StaleFinalizer(_) => "kube_conflict",
            Self::CleanupPending(_) => "cleanup_pending",
            Self::Internal(_) => "internal",
        }
    }
}

/// A registered kind, type-erased so the operator can hold all three.
pub(crate) trait KindController: Send + Sync {
    fn role(&self) -> Role;
    fn kind(&self) -> String;
    /// Lists at most one object to prove the CRD is installed and readable.
    fn check_installed(&self, env: &Env) -> BoxFuture<'static, Result<(), kube::Error>>;
    /// Subscribes to the shared watches and returns the controller's future.
    fn start(
        self: Box<Self>,
        env: Arc<Env>,
        clusters: &mut SharedWatch<Cluster>,
        pools: Option<&mut SharedWatch<MachinePool>>,
        stop: Stop,
    ) -> BoxFuture<'static, ()>;
}

/// Wraps a provider's reconciler for kind `K`.
pub(crate) fn controller<K: ProviderObject, R: Reconciler<K>>(
    reconciler: R,
) -> Box<dyn KindController> {
    Box::new(Registered::<K, R> {
        reconciler,
        _kind: PhantomData,
    })
}

struct Registered<K, R> {
    reconciler: R,
    _kind: PhantomData<fn() -> K>,
}

impl<K: ProviderObject, R: Reconciler<K>> KindController for Registered<K, R> {
    fn role(&self) -> Role {
        K::ROLE
    }

    fn kind(&self) -> String {
        K::kind(&()).into_owned()
    }

    fn check_installed(&self, env: &Env) -> BoxFuture<'static, Result<(), kube::Error>> {
        let api = env.api::<K>();
        async move {
            api.list_metadata(&ListParams::default().limit(1))
                .await
                .map(|_| ())
        }
        .boxed()
    }

    fn start(
        self: Box<Self>,
        env: Arc<Env>,
        clusters: &mut SharedWatch<Cluster>,
        pools: Option<&mut SharedWatch<MachinePool>>,
        stop: Stop,
    ) -> BoxFuture<'static, ()> {
        let kind: &'static str = Box::leak(K::kind(&()).into_owned().into_boxed_str());
        let group = K::group(&());
        let finalizer = format!("{}.{group}/finalizer", env.provider);

        let mut wc = watcher::Config::default();
        if let Some(filter) = &env.watch_filter {
            wc = wc.labels(&format!("{WATCH_FILTER_LABEL}={filter}"));
        }
        let (reader, writer) = reflector::store::<K>();
        let trigger = watcher(env.api::<K>(), wc)
            .modify(slim::<K>)
            .reflect(writer)
            .applied_objects()
            .predicate_filter(trigger_hash::<K>, Default::default());

        let by_cluster = map_touched(clusters.subscribe(), reader.clone(), |obj: &K, t| {
            let meta = obj.meta();
            cluster_name_of(meta) == Some(t.name.as_str())
                || owner_cluster(meta).is_some_and(|o| o.name == t.name)
        });
        // The controller backs off its trigger watches itself; kube's default grows to 30 s.
        let mut controller = Controller::for_stream(trigger, reader.clone())
            .trigger_backoff(crate::watches::WatchBackoff::default())
            .with_config(ControllerConfig::default().concurrency(env.concurrency))
            .reconcile_on(by_cluster);
        let mut pool_store = None;
        if K::ROLE == Role::InfraMachinePool
            && let Some(pools) = pools
        {
            pool_store = Some(pools.store());
            let by_pool = map_touched(pools.subscribe(), reader.clone(), |obj: &K, t| {
                owner_machine_pool(obj.meta()).is_some_and(|o| o.name == t.name)
            });
            controller = controller.reconcile_on(by_pool);
        }

        let engine = Arc::new(Engine {
            env,
            reconciler: self.reconciler,
            kind,
            finalizer,
            clusters: clusters.store(),
            pools: pool_store,
            retries: Retries::default(),
            _kind: PhantomData::<fn() -> K>,
        });
        controller
            .graceful_shutdown_on(stop.wait())
            .run(reconcile_entry::<K, R>, error_policy::<K, R>, engine)
            .for_each(move |result| {
                match result {
                    Ok(_) => {}
                    Err(ControllerError::ReconcilerFailed(..)) => {} // logged by error_policy
                    Err(ControllerError::ObjectNotFound(obj)) => {
                        tracing::debug!(kind, object = %obj, "object gone before its reconcile");
                    }
                    Err(ControllerError::QueueError(error)) => {
                        tracing::warn!(kind, %error, "watch failed; retrying");
                    }
                    Err(error) => tracing::warn!(kind, %error, "controller error"),
                }
                futures::future::ready(())
            })
            .boxed()
    }
}

/// The part of an object whose change warrants a pass; status-only changes (our own writes)
/// do not.
fn trigger_hash<K: Resource>(obj: &K) -> Option<u64> {
    let meta = obj.meta();
    let mut h = DefaultHasher::new();
    meta.uid.hash(&mut h);
    meta.generation.hash(&mut h);
    meta.labels.hash(&mut h);
    meta.annotations.hash(&mut h);
    meta.finalizers.hash(&mut h);
    meta.deletion_timestamp.is_some().hash(&mut h);
    for o in meta.owner_references.iter().flatten() {
        (&o.api_version, &o.kind, &o.name, &o.uid, o.controller).hash(&mut h);
    }
    Some(h.finish())
}

struct Engine<K, R> {
    env: Arc<Env>,
    reconciler: R,
    kind: &'static str,
    finalizer: String,
    clusters: Store<Cluster>,
    pools: Option<Store<MachinePool>>,
    retries: Retries,
    _kind: PhantomData<fn() -> K>,
}

fn object_key<K: Resource>(obj: &K) -> String {
    format!("{}/{}", obj.namespace().unwrap_or_default(), obj.name_any())
}

/// What a throttle holds: the object's Cluster (its `cluster.x-k8s.io/cluster-name` label, else
/// its owner reference), whose objects read the same cloud resources; the object alone when it
/// names no Cluster yet.
fn hold_scope(kind: &str, meta: &ObjectMeta) -> String {
    let namespace = meta.namespace.as_deref().unwrap_or_default();
    match cluster_name_of(meta).or_else(|| owner_cluster(meta).map(|o| o.name.as_str())) {
        Some(cluster) => format!("Cluster {namespace}/{cluster}"),
        None => format!(
            "{kind} {namespace}/{}",
            meta.name.as_deref().unwrap_or_default()
        ),
    }
}

async fn reconcile_entry<K: ProviderObject, R: Reconciler<K>>(
    obj: Arc<K>,
    engine: Arc<Engine<K, R>>,
) -> Result<Action, EngineError> {
    let namespace = obj.namespace().unwrap_or_default();
    let name = obj.name_any();
    let span = telemetry::reconcile_span(engine.kind, &namespace, &name);
    let started = Instant::now();
    let key = object_key(obj.as_ref());
    // The cloud throttled this object or another of its cluster and said when to come back:
    // whatever triggered this pass (its Cluster or MachinePool changed, a resync) waits for
    // that, so no call goes out before Retry-After (the fault suite's oracle found
    // CreateNodegroup re-sent 0.4 s after a 429 with Retry-After 1 s, triggered by the Cluster's
    // update; and AKS's managed cluster read by a pool 1.8 s after the control plane's read of it
    // was answered 429).
    if let Some(wait) = engine.env.holds.held(&hold_scope(engine.kind, obj.meta())) {
        tracing::debug!(kind = engine.kind, namespace, name, wait = ?wait, "held until the cloud's Retry-After is over");
        return Ok(Action::requeue(wait));
    }
    let result = engine.pass(obj).instrument(span).await;
    engine
        .env
        .metrics
        .reconcile_finished(engine.kind, started.elapsed());
    if result.is_ok() {
        engine.retries.reset(&key);
    }
    result
}

fn error_policy<K: ProviderObject, R: Reconciler<K>>(
    obj: Arc<K>,
    error: &EngineError,
    engine: Arc<Engine<K, R>>,
) -> Action {
    let key = object_key(obj.as_ref());
    let delay = retry_delay_after(error, &engine.retries, &key, engine.env.sync_period);
    // The other objects of the cluster wait for what the cloud said, not for this object's
    // own backoff, which may have grown past it.
    if let EngineError::Provider(ProviderError::Transient {
        category: "throttled",
        retry_after: Some(wait),
        ..
    }) = error
    {
        engine
            .env
            .holds
            .hold(&hold_scope(engine.kind, obj.meta()), Instant::now() + *wait);
    }
    if !matches!(error, EngineError::CleanupPending(_)) {
        let category = error.category();
        let kind = engine.kind;
        let namespace = obj.namespace().unwrap_or_default();
        let name = obj.name_any();
        engine.env.metrics.reconcile_failed(kind, category);
        if matches!(error, EngineError::Provider(e) if e.is_held()) {
            tracing::debug!(kind, namespace, name, retry_in = ?delay, %error, "held until the cloud's Retry-After is over");
        } else if category == "kube_conflict" {
            // Another writer was first; the next pass works from the fresh copy.
            tracing::debug!(kind, namespace, name, retry_in = ?delay, %error, "conflict; retrying");
        } else {
            tracing::warn!(kind, namespace, name, category, retry_in = ?delay, %error, "reconcile failed");
        }
    }
    Action::requeue(delay)
}

/// A refused finalizer patch: kube-runtime's patch tests `/metadata/finalizers` against the
/// cached copy first, and the API server answers a failed test 422 Invalid with no causes; that
/// is a stale copy (another writer was first), not a request this provider built wrong.
fn finalizer_patch_error(e: kube::Error) -> EngineError {
    match &e {
        kube::Error::Api(status)
            if status.code == 422
                && status.reason == "Invalid"
                && status.details.as_ref().is_none_or(|d| d.causes.is_empty()) =>
        {
            EngineError::StaleFinalizer(e)
        }
        _ => EngineError::Kube(e),
    }
}

/// How long a settled pass waits before the next: what the pass asked for, never longer than
/// the resync period.
pub(crate) fn next_look(asked: Option<Duration>, sync_period: Duration) -> Duration {
    asked.map_or(sync_period, |a| a.min(sync_period))
}

/// When to try again after `error` ([`crate::pacing::retry`]): cleanup when it said; terminal
/// errors at the resync period (or on a change); the rest by what they were.
pub(crate) fn retry_delay_after(
    error: &EngineError,
    retries: &Retries,
    key: &str,
    sync_period: Duration,
) -> Duration {
    let failure = match error {
        EngineError::CleanupPending(after) => return *after,
        EngineError::Provider(ProviderError::Terminal { .. }) => {
            retries.reset(key);
            return sync_period;
        }
        EngineError::Provider(
            held @ ProviderError::Transient {
                retry_after: Some(left),
                ..
            },
        ) if held.is_held() => Failure::Held(*left),
        EngineError::Provider(ProviderError::Transient {
            category: "throttled",
            retry_after: Some(after),
            ..
        }) => Failure::Throttled(*after),
        EngineError::Provider(ProviderError::Transient {
            category,
            retry_after,
            ..
        }) => Failure::Failed {
            kind: category,
            floor: *retry_after,
        },
        EngineError::StaleFinalizer(_) => Failure::Conflict,
        EngineError::Provider(ProviderError::Kube(e)) | EngineError::Kube(e) => {
            match kube_category(e) {
                "kube_conflict" => Failure::Conflict,
                kind => Failure::Failed { kind, floor: None },
            }
        }
        EngineError::Internal(_) => Failure::Failed {
            kind: "internal",
            floor: None,
        },
    };
    retries.next(key, failure)
}

impl<K: ProviderObject, R: Reconciler<K>> Engine<K, R> {
    async fn pass(&self, obj: Arc<K>) -> Result<Action, EngineError> {
        let namespace = obj.namespace().unwrap_or_default();
        let owners = owner_names(K::ROLE, obj.meta());
        let cluster = owners
            .cluster
            .and_then(|n| self.clusters.get(&ObjectRef::new(n).within(&namespace)));
        let pool = match (&self.pools, owners.machine_pool) {
            (Some(store), Some(n)) => store.get(&ObjectRef::new(n).within(&namespace)),
            _ => None,
        };
        let decision = gate(
            K::ROLE,
            obj.meta(),
            self.env.watch_filter.as_deref(),
            &self.finalizer,
            cluster.as_deref(),
            pool.as_deref(),
        );
        match decision {
            Gate::Ignore => {
                tracing::debug!("not ours to reconcile");
                Ok(Action::await_change())
            }
            Gate::WaitForOwner => {
                tracing::debug!("waiting for the owner to be set and to exist");
                Ok(Action::await_change())
            }
            Gate::Paused => {
                tracing::debug!("paused");
                self.write_paused(&obj).await?;
                Ok(Action::await_change())
            }
            Gate::Proceed => {
                let api: Api<K> = Api::namespaced(self.env.client.clone(), &namespace);
                let result =
                    finalizer::finalizer(&api, &self.finalizer, obj, move |event| async move {
                        match event {
                            FinalizerEvent::Apply(obj) => match cluster {
                                Some(cluster) => self.apply(obj, cluster, pool).await,
                                None => Ok(Action::await_change()),
                            },
                            FinalizerEvent::Cleanup(obj) => self.cleanup(obj, cluster, pool).await,
                        }
                    })
                    .await;
                match result {
                    Ok(action) => Ok(action),
                    Err(finalizer::Error::CleanupFailed(EngineError::CleanupPending(after))) => {
                        Ok(Action::requeue(after))
                    }
                    Err(finalizer::Error::ApplyFailed(e) | finalizer::Error::CleanupFailed(e)) => {
                        Err(e)
                    }
                    Err(
                        finalizer::Error::AddFinalizer(e) | finalizer::Error::RemoveFinalizer(e),
                    ) => Err(finalizer_patch_error(e)),
                    Err(other) => Err(EngineError::Internal(other.to_string())),
                }
            }
        }
    }

    fn events(&self, obj: &K) -> ObjectEvents {
        ObjectEvents::new(self.env.recorder.clone(), obj.object_ref(&()))
    }

    async fn apply(
        &self,
        obj: Arc<K>,
        cluster: Arc<Cluster>,
        machine_pool: Option<Arc<MachinePool>>,
    ) -> Result<Action, EngineError> {
        // The watch cache can lag behind this provider's own last write (a pass triggered by the
        // Cluster, or a requeue, may run before the watch delivers it), and status holds what a
        // provider must remember (the cloud operation in flight, when overrides were applied):
        // work from the object as stored now. One read per pass; writes are still skipped at rest.
        let api: Api<K> = Api::namespaced(
            self.env.client.clone(),
            &obj.namespace().unwrap_or_default(),
        );
        let obj = match api
            .get_opt(&obj.name_any())
            .await
            .map_err(EngineError::Kube)?
        {
            Some(fresh) => Arc::new(fresh),
            None => return Ok(Action::await_change()),
        };
        let now = jiff::Timestamp::now();
        let events = self.events(&obj);
        let ctx = PassContext {
            client: self.env.client.clone(),
            cluster,
            machine_pool,
            cloud_calls: self.env.calls.clone(),
            events: events.clone(),
            now,
            field_manager: self.env.provider,
            sync_period: self.env.sync_period,
        };
        let (mut pass, carry_previous, error) =
            match self.reconciler.reconcile(obj.clone(), &ctx).await {
                Ok(mut pass) => {
                    let error = pass.error.take();
                    (pass, false, error)
                }
                Err(error) => (Pass::default(), true, Some(error)),
            };
        if let Some(error @ ProviderError::Kube(_)) = error {
            // Our own API trouble: nothing to tell the user through conditions.
            return Err(EngineError::Provider(error));
        }

        let mut generation = obj.meta().generation;
        if let Some(spec) = pass.spec.take() {
            let spec = spec
                .map_err(|e| EngineError::Internal(format!("spec fields do not serialise: {e}")))?;
            if let Some(new_generation) = self.apply_spec(&obj, spec, self.env.provider).await? {
                generation = Some(new_generation);
            }
        }
        if let Some(fields) = pass.adopted_spec.take() {
            let manager = format!("{}-adoption", self.env.provider);
            if let Some(new_generation) = self.apply_spec(&obj, fields, &manager).await? {
                generation = Some(new_generation);
            }
        }
        let provider_status = pass
            .status
            .take()
            .transpose()
            .map_err(|e| EngineError::Internal(format!("status does not serialise: {e}")))?;
        let current = current_status(obj.as_ref())?;
        let previous = obj.conditions();
        let desired_conditions =
            pass_conditions(&pass.conditions, previous, carry_previous, error.as_ref());
        let desired = active_status(
            provider_status.as_ref(),
            current.as_ref(),
            previous,
            &desired_conditions,
            generation,
            now,
        );
        self.write_status(&obj, current.as_ref(), desired, &events)
            .await?;
        match error {
            Some(error) => Err(EngineError::Provider(error)),
            // The resync period bounds every wait, a provider's rest interval included: it is
            // how long an object at rest goes unlooked-at (`--sync-period`). It did not bound
            // the rest interval before, so a node group deleted behind the provider's back
            // went unnoticed for the whole rest interval whatever the flag said.
            None => Ok(Action::requeue(next_look(
                pass.requeue_after,
                self.env.sync_period,
            ))),
        }
    }

    async fn cleanup(
        &self,
        obj: Arc<K>,
        cluster: Option<Arc<Cluster>>,
        machine_pool: Option<Arc<MachinePool>>,
    ) -> Result<Action, EngineError> {
        let now = jiff::Timestamp::now();
        let events = self.events(&obj);
        let cluster_name = cluster
            .as_ref()
            .map(|c| c.name_any())
            .or_else(|| owner_names(K::ROLE, obj.meta()).cluster.map(str::to_string));
        let ctx = CleanupContext {
            client: self.env.client.clone(),
            cluster,
            cluster_name,
            machine_pool,
            cloud_calls: self.env.calls.clone(),
            events: events.clone(),
            now,
            field_manager: self.env.provider,
        };
        let (message, error, after) = match self.reconciler.cleanup(obj.clone(), &ctx).await {
            Ok(Cleanup::Done) => {
                tracing::info!("cloud resources gone; releasing the finalizer");
                return Ok(Action::await_change());
            }
            Ok(Cleanup::Pending {
                requeue_after,
                message,
            }) => (message, None, Some(requeue_after)),
            Err(error @ ProviderError::Kube(_)) => return Err(EngineError::Provider(error)),
            Err(error) => (String::new(), Some(error), None),
        };
        let current = current_status(obj.as_ref())?;
        let previous = obj.conditions();
        let desired = DesiredStatus {
            fields: fields_of(current.as_ref()),
            conditions: contract::conditions::compute_conditions(
                previous,
                &deleting_conditions(previous, &message, error.as_ref()),
                obj.meta().generation,
                now,
            ),
            observed_generation: obj.meta().generation,
        };
        self.write_status(&obj, current.as_ref(), desired, &events)
            .await?;
        match (error, after) {
            (Some(error), _) => Err(EngineError::Provider(error)),
            (None, Some(after)) => Err(EngineError::CleanupPending(after)),
            (None, None) => Err(EngineError::Internal(
                "cleanup ended without an outcome".into(),
            )),
        }
    }

    async fn write_paused(&self, obj: &K) -> Result<(), EngineError> {
        let current = current_status(obj)?;
        let desired = paused_status(
            current.as_ref(),
            obj.conditions(),
            obj.meta().generation,
            jiff::Timestamp::now(),
        );
        self.write_status(obj, current.as_ref(), desired, &self.events(obj))
            .await
    }

    /// The one status write of a pass, skipped when the object already has this status.
    async fn write_status(
        &self,
        obj: &K,
        current: Option<&Value>,
        desired: DesiredStatus,
        events: &ObjectEvents,
    ) -> Result<(), EngineError> {
        if desired.is_unchanged(current, obj.conditions()) {
            tracing::debug!("status unchanged; no write");
            return Ok(());
        }
        let api: Api<K> = Api::namespaced(
            self.env.client.clone(),
            &obj.namespace().unwrap_or_default(),
        );
        let body = json!({
            "apiVersion": K::api_version(&()),
            "kind": K::kind(&()),
            "metadata": { "name": obj.name_any() },
            "status": desired.to_value(),
        });
        api.patch_status(
            &obj.name_any(),
            &PatchParams::apply(self.env.provider).force(),
            &Patch::Apply(&body),
        )
        .await?;
        tracing::debug!("status written");
        for t in transitions(obj.conditions(), &desired.conditions) {
            let action = if t.reason == "Paused" || t.reason == "NotPaused" {
                "Pause"
            } else {
                "Reconcile"
            };
            if t.normal {
                events.normal(&t.reason, action, t.note).await;
            } else {
                events.warning(&t.reason, action, t.note).await;
            }
        }
        Ok(())
    }

    /// Applies the provider's spec fields when they differ; returns the new generation.
    async fn apply_spec(
        &self,
        obj: &K,
        fields: Value,
        manager: &str,
    ) -> Result<Option<i64>, EngineError> {
        let current = serde_json::to_value(obj)
            .map_err(|e| EngineError::Internal(format!("object does not serialise: {e}")))?;
        if spec_fields_match(current.get("spec"), &fields) {
            return Ok(None);
        }
        let api: Api<K> = Api::namespaced(
            self.env.client.clone(),
            &obj.namespace().unwrap_or_default(),
        );
        let body = json!({
            "apiVersion": K::api_version(&()),
            "kind": K::kind(&()),
            "metadata": { "name": obj.name_any() },
            "spec": fields,
        });
        let updated = api
            .patch(
                &obj.name_any(),
                &PatchParams::apply(manager).force(),
                &Patch::Apply(&body),
            )
            .await?;
        tracing::debug!(manager, "spec fields written");
        Ok(updated.meta().generation)
    }
}

/// The object's status as its own type serialises it.
fn current_status<K: ProviderObject>(obj: &K) -> Result<Option<Value>, EngineError> {
    let mut value = serde_json::to_value(obj)
        .map_err(|e| EngineError::Internal(format!("object does not serialise: {e}")))?;
    Ok(value
        .get_mut("status")
        .map(Value::take)
        .filter(|s| !s.is_null()))
}

/// Whether every field the provider sets already has that value in `spec`.
pub(crate) fn spec_fields_match(spec: Option<&Value>, fields: &Value) -> bool {
    let Some(fields) = fields.as_object() else {
        return false;
    };
    let want = fields_of(Some(&Value::Object(fields.clone())));
    let have = spec.and_then(Value::as_object);
    want.iter().all(|(k, v)| {
        let current = have.and_then(|h| h.get(k)).cloned().map(|mut c| {
            if let Value::Object(m) = &mut c {
                *m = fields_of(Some(&Value::Object(std::mem::take(m))));
            }
            c
        });
        current.as_ref() == Some(v)
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
