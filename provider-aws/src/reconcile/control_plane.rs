//! The EKSControlPlane reconciler: the EKS cluster itself.
//!
//! Each pass observes (the Cluster, its infrastructure, DescribeCluster, the tracked update, and
//! when the cluster is idle its add-ons and access entries), validates the spec, plans one step
//! ([`plan::plan`]), makes at most one EKS call that changes something, writes the kubeconfig
//! Secrets when they are missing, stale or due for a token refresh, and reports the whole status.
//! Long EKS operations are started, remembered in `status.operation` and polled on the next pass;
//! nothing waits on the cloud.

pub mod kubeconfig;
pub mod mapping;
pub mod plan;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use aws_sdk_eks::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_eks::types as eks;
use aws_smithy_runtime_api::http::Response;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use contract::api::{
    ApiEndpoint, ControlPlaneInitialization, ControlPlaneStatusCommon, Endpoint, KubeconfigStatus,
    Operation, OperationKind, RequestOverridesStatus, VersionReplicas,
};
use contract::conditions::{ConditionRole, ConditionType, DesiredCondition, Reason, waiting_set};
use contract::endpoint::EndpointChoice;
use contract::idempotency::{self, EKS_REQUEST_TOKEN};
use contract::version::{KubeVersion, normalize};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::{Resource, ResourceExt};
use provider_runtime::kubeconfig::{KubeconfigSecrets, KubeconfigTarget};
use provider_runtime::{
    CallOutcome, Cleanup, CleanupContext, CloudCalls, Pass, PassContext, ProviderError, Reconciler,
};
use serde_json::json;

use self::mapping::{ObservedAddon, ObservedCluster, UpdateState};
use self::plan::{Desired, Observed, Plan, Tracked, Wait};
use crate::api::{AuthenticationMode, EKSControlPlane, EKSControlPlaneStatus};
use crate::cloud::{Clients, CloudError, classify};
use crate::scope::{self, Infra, Shared};

/// The service name cloud calls are counted under.
const SERVICE: &str = "eks";

/// Pages read at most from a paginated EKS list (a guard against a looping `nextToken`).
const MAX_PAGES: usize = 100;

/// Reconciles EKSControlPlane.
pub struct ControlPlaneReconciler {
    shared: Arc<Shared>,
}

impl ControlPlaneReconciler {
    /// A reconciler sharing `shared`.
    pub fn new(shared: Arc<Shared>) -> Self {
        Self { shared }
    }

    /// How soon to look again after a change EKS completes at once (tags, access entries).
    fn settle(&self) -> Duration {
        self.shared.poll_interval.min(Duration::from_secs(5))
    }
}

impl Reconciler<EKSControlPlane> for ControlPlaneReconciler {
    async fn reconcile(
        &self,
        cp: Arc<EKSControlPlane>,
        ctx: &PassContext,
    ) -> Result<Pass, ProviderError> {
        let cluster_name = ctx.cluster.name_any();
        let namespace = cp.namespace().unwrap_or_default();
        // The engine hands over the object as stored at the start of the pass, so its status is
        // the last one written (the operation in flight, requestOverrides).
        let previous = cp.status.clone().unwrap_or_default();
        let poll = self.shared.poll_interval;

        // Observe the infrastructure first: no cloud call until it is there.
        let infra = scope::infra_for_control_plane(&ctx.client, &ctx.cluster, &cp).await?;
        if ctx.cluster.infrastructure_ref().is_some()
            && !(infra.ready && ctx.cluster.infrastructure_provisioned())
        {
            return Ok(waiting_for_infrastructure(poll));
        }

        // Validate. The CRD already refuses a version without "v" and downgrades at admission.
        let version = cp.spec.common.version.parse().map_err(|e| {
            ProviderError::terminal(Reason::InvalidSpec, format!("spec.version: {e}"))
        })?;
        let clients =
            scope::clients_for(&self.shared.clients, &ctx.client, &namespace, &infra).await?;
        let eks_name = scope::eks_cluster_name(&cp, &cluster_name);
        let api = EksApi {
            client: &clients.eks,
            calls: &ctx.cloud_calls,
            name: &eks_name,
        };
        let access = cp.spec.eks.access.as_ref();
        let desired = Desired {
            version,
            endpoint_access: cp.spec.common.endpoint_access.clone(),
            logging: mapping::wanted_logs(&cp.spec.common.logging),
            authentication_mode: access.and_then(|a| a.authentication_mode),
            addons: cp.spec.common.addons.clone(),
            access_entries: access.map(|a| a.entries.clone()).unwrap_or_default(),
            adopt: cp.spec.common.adopt,
            owner: scope::owner(&namespace, &cluster_name),
        };

        // Observe EKS.
        let observed = observe(&api, &desired, previous.common.operation.as_ref()).await?;
        let plan = plan::plan(&observed, &desired);

        // Act: at most one change.
        let setting = ActSetting {
            cp: &cp,
            ctx,
            infra: &infra,
            api: &api,
            desired: &desired,
            previous: &previous,
        };
        let acted = self.act(&plan, &observed, &setting).await;

        // Report.
        let ours = !matches!(plan, Plan::NameConflict { .. } | Plan::Adopt { .. });
        let cluster = acted
            .cluster
            .as_ref()
            .or(observed.cluster.as_ref())
            .filter(|_| ours);
        let endpoints = cluster.map(ObservedCluster::endpoints).unwrap_or_default();
        let endpoint = EndpointChoice::new(
            cp.spec.common.control_plane_endpoint.as_ref(),
            &previous.common.endpoints,
            &endpoints,
            &desired.endpoint_access,
        );

        let serving = cluster.is_some_and(|c| c.state.serving());
        let mut kubeconfig_error = None;
        let mut expires_at = None;
        if let (true, Some(c), Some(server), Some(ca)) = (
            serving,
            cluster,
            endpoint.server(),
            cluster.and_then(|c| c.ca_data.as_deref()),
        ) {
            let secrets = Secrets {
                cp: &cp,
                ctx,
                cluster_name: &cluster_name,
                namespace: &namespace,
                clients: &clients,
                token_lifetime: self.shared.token_lifetime,
            };
            match secrets.ensure(&c.name, server, ca, &endpoints).await {
                Ok(expiry) => expires_at = Some(expiry),
                Err(e @ ProviderError::Kube(_)) => return Err(e),
                Err(e) => kubeconfig_error = Some(e),
            }
        }
        let kubeconfig_ready = expires_at.is_some();
        let ready = serving && kubeconfig_ready;
        let initialized = ready || previous.common.initialized;

        let operation = match &acted.operation {
            OperationChange::Keep => previous.common.operation.clone(),
            OperationChange::Set(op) => Some(op.clone()),
            OperationChange::Clear => None,
        };
        let overrides = acted
            .overrides
            .clone()
            .or(previous.request_overrides.clone());
        let status = status_of(
            cluster,
            endpoints,
            ready,
            initialized,
            operation,
            expires_at,
            overrides,
        );

        let current = cluster.and_then(|c| c.kube_version().ok());
        let mut pass = Pass::new().status(&status).conditions(conditions(
            &plan,
            &acted,
            &desired,
            &eks_name,
            cluster,
            current,
            kubeconfig_ready,
        ));
        if let Some(endpoint) = endpoint.to_publish() {
            pass = pass.spec_fields(&json!({ "controlPlaneEndpoint": endpoint }));
        }
        let mut requeue = acted.requeue.unwrap_or(if matches!(plan, Plan::Nothing) {
            self.shared.rest_interval
        } else {
            poll
        });
        if let Some(expiry) = expires_at {
            requeue = requeue.min(provider_runtime::kubeconfig::until_refresh(
                expiry,
                ctx.now,
                self.shared.token_lifetime,
            ));
        }
        pass = pass.requeue_after(requeue);
        match acted.error.or(kubeconfig_error) {
            Some(error) => Ok(pass.with_error(error)),
            None => Ok(pass),
        }
    }

    async fn cleanup(
        &self,
        cp: Arc<EKSControlPlane>,
        ctx: &CleanupContext,
    ) -> Result<Cleanup, ProviderError> {
        let namespace = cp.namespace().unwrap_or_default();
        let previous = cp.status.clone().unwrap_or_default();
        let created_something =
            previous.common.cloud_id.is_some() || previous.common.operation.is_some();
        let Some(cluster_name) = ctx.cluster_to_clean(created_something, "EKSControlPlane")? else {
            return Ok(Cleanup::Done);
        };
        let cluster_name = cluster_name.to_string();
        let infra = match cleanup_infra(&ctx.client, ctx.cluster.as_deref(), &cp, &cluster_name)
            .await
        {
            Ok(infra) if !infra.region.is_empty() => infra,
            // Nothing can have been created without a region: nothing to delete.
            _ if !created_something => return Ok(Cleanup::Done),
            Ok(_) => {
                return Err(ProviderError::terminal(
                    Reason::InvalidSpec,
                    "the region of the EKS cluster to delete is unknown: its EKSCluster is gone and spec.infrastructure is not set",
                ));
            }
            Err(e) => return Err(e),
        };
        let clients =
            scope::clients_for(&self.shared.clients, &ctx.client, &namespace, &infra).await?;
        let eks_name = scope::eks_cluster_name(&cp, &cluster_name);
        let api = EksApi {
            client: &clients.eks,
            calls: &ctx.cloud_calls,
            name: &eks_name,
        };
        let Some(found) = api.describe_cluster().await? else {
            return Ok(Cleanup::Done);
        };
        let owner = scope::owner(&namespace, &cluster_name);
        if !owner.owns(&found.tags) {
            ctx.events
                .warning(
                    Reason::NameConflict.as_str(),
                    "Delete",
                    owner.left_in_place("EKS cluster", &eks_name),
                )
                .await;
            return Ok(Cleanup::Done);
        }
        let deleting = || {
            Cleanup::pending(
                self.shared.poll_interval,
                format!("EKS is deleting cluster {eks_name}"),
            )
        };
        if found.state == mapping::ClusterState::Deleting {
            return Ok(deleting());
        }
        match api.delete_cluster().await {
            Ok(()) => Ok(deleting()),
            Err(CloudError::NotFound(_)) => Ok(Cleanup::Done),
            // Node groups still attached (core deletes the MachinePools first) or an update running.
            Err(CloudError::InUse(message)) => Ok(Cleanup::pending(
                self.shared.poll_interval,
                format!("EKS cannot delete cluster {eks_name} yet: {message}"),
            )),
            Err(e) => Err(e.into()),
        }
    }
}

/// The whole status of a pass (conditions and observedGeneration are the engine's).
fn status_of(
    cluster: Option<&ObservedCluster>,
    endpoints: Vec<Endpoint>,
    ready: bool,
    initialized: bool,
    operation: Option<Operation>,
    expires_at: Option<jiff::Timestamp>,
    request_overrides: Option<RequestOverridesStatus>,
) -> EKSControlPlaneStatus {
    let version = cluster.map(|c| normalize(&c.version));
    EKSControlPlaneStatus {
        common: ControlPlaneStatusCommon {
            initialization: initialized.then_some(ControlPlaneInitialization {
                control_plane_initialized: Some(true),
            }),
            initialized,
            ready,
            external_managed_control_plane: true,
            version: version.clone(),
            versions: version
                .into_iter()
                .map(|version| VersionReplicas {
                    version,
                    replicas: None,
                })
                .collect(),
            endpoints,
            cloud_id: cluster.map(|c| c.arn.clone()).filter(|a| !a.is_empty()),
            operation,
            kubeconfig: expires_at.map(|e| KubeconfigStatus {
                expires_at: Some(Time(e)),
            }),
            conditions: Vec::new(),
        },
        observed_generation: None,
        platform_version: cluster.and_then(|c| c.platform_version.clone()),
        oidc_issuer_url: cluster.and_then(|c| c.oidc_issuer.clone()),
        request_overrides,
    }
}

/// The infrastructure to delete within: as for a pass, or, with the Cluster gone, the control
/// plane's own `spec.infrastructure` or the EKSCluster labelled with the cluster's name.
async fn cleanup_infra(
    client: &kube::Client,
    cluster: Option<&contract::capi::Cluster>,
    cp: &EKSControlPlane,
    cluster_name: &str,
) -> Result<Infra, ProviderError> {
    if let Some(cluster) = cluster {
        return scope::infra_for_control_plane(client, cluster, cp).await;
    }
    if let Some(spec) = &cp.spec.infrastructure {
        return Ok(Infra::from_spec(spec));
    }
    let namespace = cp.namespace().unwrap_or_default();
    let gone = scope::ClusterRef::Gone {
        namespace: &namespace,
        name: cluster_name,
    };
    Ok(scope::eks_cluster_for(client, gone)
        .await?
        .as_ref()
        .map(Infra::from_eks_cluster)
        .unwrap_or_else(|| Infra::from_spec(&Default::default())))
}

/// The pass while the Cluster's infrastructure is not provisioned: conditions only, no status
/// field touched, no cloud call.
fn waiting_for_infrastructure(poll: Duration) -> Pass {
    Pass::new()
        .conditions(waiting_set(
            ConditionRole::ControlPlane,
            Reason::WaitingForInfrastructure,
            "Waiting for the Cluster's infrastructure (EKSCluster) to be provisioned",
        ))
        .requeue_after(poll)
}

// ---------------------------------------------------------------------------------------------
// Observe
// ---------------------------------------------------------------------------------------------

async fn observe(
    api: &EksApi<'_>,
    desired: &Desired,
    operation: Option<&Operation>,
) -> Result<Observed, ProviderError> {
    let mut observed = Observed {
        cluster: api.describe_cluster().await?,
        ..Observed::default()
    };
    let Some(cluster) = &observed.cluster else {
        return Ok(observed);
    };
    if !desired.owner.owns(&cluster.tags) {
        return Ok(observed);
    }
    if let Some(op) = operation {
        let kind = op.kind;
        let state = match kind {
            OperationKind::Delete => None,
            OperationKind::Create => None,
            OperationKind::Upgrade | OperationKind::Update => api.describe_update(&op.id).await?,
        };
        observed.tracked = Some(Tracked { kind, state });
    }
    let idle = cluster.state == mapping::ClusterState::Active
        && !matches!(
            observed.tracked,
            Some(Tracked {
                state: Some(UpdateState::InProgress),
                ..
            })
        );
    if !idle {
        return Ok(observed);
    }
    for addon in &desired.addons {
        if let Some(found) = api.describe_addon(&addon.name).await? {
            observed.addons.insert(addon.name.clone(), found);
        }
    }
    if !desired.access_entries.is_empty() {
        let principals = api.access_entries().await?;
        let mut access = BTreeMap::new();
        for entry in &desired.access_entries {
            if principals.contains(&entry.principal_arn) {
                access.insert(
                    entry.principal_arn.clone(),
                    api.access_policies(&entry.principal_arn).await?,
                );
            }
        }
        observed.access = Some(access);
    }
    Ok(observed)
}

// ---------------------------------------------------------------------------------------------
// Act
// ---------------------------------------------------------------------------------------------

/// What happens to `status.operation`.
enum OperationChange {
    Keep,
    Set(Operation),
    Clear,
}

/// What acting on the plan did.
struct Acted {
    operation: OperationChange,
    /// The cluster as the create call returned it (fresher than the observation).
    cluster: Option<ObservedCluster>,
    /// Set when requestOverrides went out with a request.
    overrides: Option<RequestOverridesStatus>,
    error: Option<ProviderError>,
    requeue: Option<Duration>,
    /// The version step waits for node groups to catch up (EKS's message).
    blocked_on_pools: Option<String>,
}

impl Acted {
    fn new(operation: OperationChange) -> Self {
        Self {
            operation,
            cluster: None,
            overrides: None,
            error: None,
            requeue: None,
            blocked_on_pools: None,
        }
    }

    fn requeue(mut self, after: Duration) -> Self {
        self.requeue = Some(after);
        self
    }

    fn failed(operation: OperationChange, error: ProviderError) -> Self {
        Self {
            error: Some(error),
            ..Self::new(operation)
        }
    }
}

/// What `act` needs besides the plan.
struct ActSetting<'a> {
    cp: &'a EKSControlPlane,
    ctx: &'a PassContext,
    infra: &'a Infra,
    api: &'a EksApi<'a>,
    desired: &'a Desired,
    previous: &'a EKSControlPlaneStatus,
}

impl ActSetting<'_> {
    fn uid(&self) -> String {
        self.cp.uid().unwrap_or_default()
    }

    fn generation(&self) -> i64 {
        self.cp.metadata.generation.unwrap_or_default()
    }

    fn tags(&self) -> HashMap<String, String> {
        self.desired
            .owner
            .tags(&self.infra.additional_tags)
            .into_iter()
            .collect()
    }

    /// An idempotency token for a request that creates something.
    fn create_token(&self, purpose: &str) -> String {
        let generation = self.generation().to_string();
        idempotency::token(&EKS_REQUEST_TOKEN, purpose, &self.uid(), &[&generation])
    }

    /// An idempotency token for an update. It also carries the hour, so an update EKS failed
    /// can be retried later with a token EKS has not seen (EKS answers a reused token with the
    /// old, failed update); a crash-retry within the hour is recognised.
    fn update_token(&self, purpose: &str) -> String {
        let generation = self.generation().to_string();
        let hour = (self.ctx.now.as_second() / 3600).to_string();
        idempotency::token(
            &EKS_REQUEST_TOKEN,
            purpose,
            &self.uid(),
            &[&generation, &hour],
        )
    }

    fn operation(&self, id: String, kind: OperationKind) -> Operation {
        Operation::new(id, kind, self.ctx.now)
    }
}

impl ControlPlaneReconciler {
    async fn act(&self, plan: &Plan, observed: &Observed, s: &ActSetting<'_>) -> Acted {
        let poll = self.shared.poll_interval;
        let api = s.api;
        match plan {
            Plan::Create => self.create(s).await,
            Plan::NameConflict { conflict, .. } => Acted::failed(
                OperationChange::Clear,
                ProviderError::terminal(
                    Reason::NameConflict,
                    conflict.message("EKS cluster", api.name),
                ),
            ),
            Plan::Adopt { arn } => match api.tag(arn, s.tags()).await {
                Ok(()) => Acted::new(OperationChange::Clear).requeue(self.settle()),
                Err(e) => Acted::failed(OperationChange::Clear, e.into()),
            },
            Plan::Wait(Wait::Creating) => {
                let tracked = s
                    .previous
                    .common
                    .operation
                    .clone()
                    .filter(|op| op.kind == OperationKind::Create);
                let arn = observed
                    .cluster
                    .as_ref()
                    .map(|c| c.arn.clone())
                    .unwrap_or_default();
                let op = tracked.unwrap_or_else(|| s.operation(arn, OperationKind::Create));
                Acted::new(OperationChange::Set(op)).requeue(poll)
            }
            Plan::Wait(Wait::Updating { .. } | Wait::Pending(_)) => {
                Acted::new(OperationChange::Keep).requeue(poll)
            }
            Plan::Wait(Wait::Deleting | Wait::Addon(_)) => {
                Acted::new(OperationChange::Clear).requeue(poll)
            }
            Plan::Failed(message) => Acted::failed(
                OperationChange::Clear,
                ProviderError::terminal(Reason::CloudError, message.clone()),
            ),
            Plan::Invalid(message) => Acted::failed(
                OperationChange::Clear,
                ProviderError::terminal(Reason::InvalidSpec, message.clone()),
            ),
            Plan::Upgrade { to } => {
                let version = mapping::eks_version(to);
                let token = s.update_token(&format!("upgrade-{version}"));
                match api.update_version(&version, token).await {
                    Ok(id) => Acted::new(OperationChange::Set(
                        s.operation(id, OperationKind::Upgrade),
                    ))
                    .requeue(poll),
                    // EKS wants node groups on the running minor before the next step; the
                    // machine pools catch up on their own, so this is a wait, not a failure.
                    Err(CloudError::Invalid { message, .. })
                        if message.to_ascii_lowercase().contains("nodegroup") =>
                    {
                        Acted {
                            blocked_on_pools: Some(message),
                            ..Acted::new(OperationChange::Clear)
                        }
                        .requeue(poll)
                    }
                    Err(e) => Acted::failed(OperationChange::Clear, e.into()),
                }
            }
            Plan::UpdateEndpointAccess => {
                let request = ConfigUpdate::EndpointAccess(mapping::endpoint_access_request(
                    &s.desired.endpoint_access,
                ));
                self.update_config(s, request, "endpoint").await
            }
            Plan::UpdateLogging => {
                let request = ConfigUpdate::Logging(mapping::logging_request(&s.desired.logging));
                self.update_config(s, request, "logging").await
            }
            Plan::UpdateAuthenticationMode(mode) => {
                let access = eks::UpdateAccessConfigRequest::builder()
                    .authentication_mode(mapping::sdk_authentication_mode(*mode))
                    .build();
                self.update_config(s, ConfigUpdate::Access(access), "auth")
                    .await
            }
            Plan::CreateAddon(addon) => {
                let token = s.create_token(&format!("addon-{}", addon.name));
                match api.create_addon(addon, s.tags(), token).await {
                    Ok(()) => Acted::new(OperationChange::Clear).requeue(poll),
                    Err(e) => Acted::failed(OperationChange::Clear, e.into()),
                }
            }
            Plan::UpdateAddon(addon) => {
                let token = s.update_token(&format!("addon-{}", addon.name));
                match api.update_addon(addon, token).await {
                    Ok(()) => Acted::new(OperationChange::Clear).requeue(poll),
                    Err(e) => Acted::failed(OperationChange::Clear, e.into()),
                }
            }
            Plan::CreateAccessEntry(entry) => {
                let token = s.create_token(&format!("entry-{}", entry.principal_arn));
                match api.create_access_entry(entry, s.tags(), token).await {
                    Ok(()) => Acted::new(OperationChange::Clear).requeue(self.settle()),
                    Err(e) => Acted::failed(OperationChange::Clear, e.into()),
                }
            }
            Plan::AssociateAccessPolicy { principal, policy } => {
                match api.associate_policy(principal, policy).await {
                    Ok(()) => Acted::new(OperationChange::Clear).requeue(self.settle()),
                    Err(e) => Acted::failed(OperationChange::Clear, e.into()),
                }
            }
            Plan::Nothing => Acted::new(OperationChange::Clear),
        }
    }

    async fn create(&self, s: &ActSetting<'_>) -> Acted {
        let (cp, infra, desired) = (s.cp, s.infra, s.desired);
        if infra.subnet_ids.is_empty() {
            let message = "no subnets to create the EKS cluster in: set spec.infrastructure.network.subnetIDs (at least two zones), or use an EKSCluster";
            return Acted::failed(
                OperationChange::Clear,
                ProviderError::terminal(Reason::InvalidSpec, message),
            );
        }
        let mut security_groups: Vec<String> = infra.security_group_ids.clone();
        for group in &cp.spec.eks.security_group_ids {
            if !security_groups.contains(group) {
                security_groups.push(group.clone());
            }
        }
        let access = cp.spec.eks.access.as_ref();
        let mode = access
            .and_then(|a| a.authentication_mode)
            .unwrap_or(AuthenticationMode::Api);
        let bootstrap_admin = access
            .and_then(|a| a.bootstrap_cluster_creator_admin)
            .unwrap_or(true);
        let mut request = s
            .api
            .client
            .create_cluster()
            .name(s.api.name)
            .version(mapping::eks_version(&desired.version))
            .role_arn(&cp.spec.eks.role_arn)
            .resources_vpc_config(mapping::create_vpc_request(
                &infra.subnet_ids,
                &security_groups,
                &desired.endpoint_access,
            ))
            .logging(mapping::logging_request(&desired.logging))
            .access_config(
                eks::CreateAccessConfigRequest::builder()
                    .authentication_mode(mapping::sdk_authentication_mode(mode))
                    .bootstrap_cluster_creator_admin_permissions(bootstrap_admin)
                    .build(),
            )
            .set_tags(Some(s.tags()))
            .client_request_token(s.create_token("create"));
        if let Some(encryption) = &cp.spec.common.encryption {
            request =
                request.encryption_config(mapping::encryption_request(&encryption.kms_key_id));
        }
        if let Some(cidr) = &cp.spec.eks.service_cidr {
            request = request.kubernetes_network_config(
                eks::KubernetesNetworkConfigRequest::builder()
                    .service_ipv4_cidr(cidr)
                    .build(),
            );
        }
        let patch = contract::overrides::effective(cp.spec.eks.request_overrides.as_ref()).cloned();
        let sent = match patch.clone() {
            Some(patch) => {
                counted(
                    s.api.calls,
                    "CreateCluster",
                    request
                        .customize()
                        .mutate_request(move |r| crate::cloud::overrides::rewrite(r, &patch))
                        .send(),
                )
                .await
            }
            None => counted(s.api.calls, "CreateCluster", request.send()).await,
        };
        match sent {
            Ok(out) => {
                let created = out.cluster().map(mapping::observed_cluster);
                let arn = created.as_ref().map(|c| c.arn.clone()).unwrap_or_default();
                let overrides = patch.map(|_| RequestOverridesStatus {
                    operation: "CreateCluster".into(),
                    applied_at: Time(s.ctx.now),
                    generation: cp.metadata.generation,
                });
                tracing::info!(cluster = s.api.name, "EKS cluster creation started");
                Acted {
                    cluster: created,
                    overrides,
                    ..Acted::new(OperationChange::Set(
                        s.operation(arn, OperationKind::Create),
                    ))
                }
                .requeue(self.shared.poll_interval)
            }
            Err(e) => Acted::failed(OperationChange::Clear, e.into()),
        }
    }

    async fn update_config(&self, s: &ActSetting<'_>, update: ConfigUpdate, what: &str) -> Acted {
        match s
            .api
            .update_config(update, s.update_token(&format!("config-{what}")))
            .await
        {
            Ok(id) => Acted::new(OperationChange::Set(s.operation(id, OperationKind::Update)))
                .requeue(self.shared.poll_interval),
            Err(e) => Acted::failed(OperationChange::Clear, e.into()),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Report: conditions
// ---------------------------------------------------------------------------------------------

/// Every condition of a pass (Ready, Available, KubeconfigReady, Upgrading). An error set on the
/// pass replaces Ready.
fn conditions(
    plan: &Plan,
    acted: &Acted,
    desired: &Desired,
    name: &str,
    cluster: Option<&ObservedCluster>,
    current: Option<KubeVersion>,
    kubeconfig_ready: bool,
) -> Vec<DesiredCondition> {
    let target = desired.version;
    let (upgrading, upgrade_message) = match (&acted.blocked_on_pools, plan, current) {
        (Some(why), _, Some(current)) => (
            true,
            format!(
                "{current} → {}: waiting for the node groups to reach {current} first ({why})",
                current.next_minor()
            ),
        ),
        (None, Plan::Upgrade { to }, Some(current)) => (
            true,
            format!("EKS is upgrading {name} from {current} to {to} (spec.version {target})"),
        ),
        (None, Plan::Wait(Wait::Updating { upgrade: true }), Some(current)) => (
            true,
            format!("EKS is upgrading {name} from {current} (spec.version {target})"),
        ),
        (_, _, Some(current)) if current.minor_cmp(&target).is_lt() => (
            true,
            format!(
                "{name} runs {current}; the upgrade to {target} waits for the change in progress"
            ),
        ),
        _ => (false, String::new()),
    };
    let upgrading = if upgrading {
        DesiredCondition::true_(
            ConditionType::Upgrading,
            Reason::Upgrading,
            upgrade_message.clone(),
        )
    } else {
        let message = current
            .map(|v| format!("{name} runs {v}"))
            .unwrap_or_default();
        DesiredCondition::false_(ConditionType::Upgrading, Reason::UpToDate, message)
    };

    let (reason, message) = progress(plan, name, &upgrade_message);
    let serving = cluster.is_some_and(|c| c.state.serving());
    let available = if serving {
        DesiredCondition::true_(
            ConditionType::Available,
            Reason::Ready,
            format!("EKS serves the Kubernetes API of {name}"),
        )
    } else {
        DesiredCondition::false_(ConditionType::Available, reason, message.clone())
    };
    let kubeconfig = if kubeconfig_ready {
        DesiredCondition::true_(ConditionType::KubeconfigReady, Reason::Ready, "")
    } else if serving {
        DesiredCondition::false_(
            ConditionType::KubeconfigReady,
            Reason::CloudError,
            "The kubeconfig Secret could not be written yet",
        )
    } else {
        DesiredCondition::false_(ConditionType::KubeconfigReady, reason, message.clone())
    };
    let ready = match plan {
        Plan::Nothing if kubeconfig_ready => {
            DesiredCondition::true_(ConditionType::Ready, Reason::Ready, "")
        }
        Plan::Nothing => DesiredCondition::false_(
            ConditionType::Ready,
            Reason::WaitingForCloud,
            "Waiting for the API server's endpoint and CA",
        ),
        _ if upgrading.status == contract::conditions::ConditionStatus::True
            && acted.blocked_on_pools.is_some() =>
        {
            DesiredCondition::false_(ConditionType::Ready, Reason::Upgrading, upgrade_message)
        }
        _ => DesiredCondition::false_(ConditionType::Ready, reason, message),
    };
    vec![ready, available, kubeconfig, upgrading]
}

/// The reason and message of a step in progress, in the user's terms.
fn progress(plan: &Plan, name: &str, upgrade_message: &str) -> (Reason, String) {
    match plan {
        Plan::Create | Plan::Wait(Wait::Creating) => {
            (Reason::Creating, format!("EKS is creating cluster {name}"))
        }
        Plan::Upgrade { .. } | Plan::Wait(Wait::Updating { upgrade: true }) => {
            (Reason::Upgrading, upgrade_message.to_string())
        }
        Plan::Wait(Wait::Updating { upgrade: false }) => {
            (Reason::Updating, format!("EKS is updating cluster {name}"))
        }
        Plan::UpdateEndpointAccess => (
            Reason::Updating,
            format!("EKS is updating the endpoint access of {name}"),
        ),
        Plan::UpdateLogging => (
            Reason::Updating,
            format!("EKS is updating the control plane logging of {name}"),
        ),
        Plan::UpdateAuthenticationMode(_) => (
            Reason::Updating,
            format!("EKS is updating the authentication mode of {name}"),
        ),
        Plan::CreateAddon(a) => (
            Reason::Updating,
            format!("EKS is creating add-on {} on {name}", a.name),
        ),
        Plan::UpdateAddon(a) => (
            Reason::Updating,
            format!("EKS is updating add-on {} on {name}", a.name),
        ),
        Plan::Wait(Wait::Addon(a)) => (
            Reason::Updating,
            format!("Waiting for add-on {a} on {name} to become ACTIVE"),
        ),
        Plan::CreateAccessEntry(e) => (
            Reason::Updating,
            format!("Creating the access entry of {} on {name}", e.principal_arn),
        ),
        Plan::AssociateAccessPolicy { principal, policy } => (
            Reason::Updating,
            format!("Associating {policy} with {principal} on {name}"),
        ),
        Plan::Adopt { arn } => (
            Reason::Updating,
            format!("Adopting {arn}: tagging it as ours"),
        ),
        Plan::Wait(Wait::Deleting) => (
            Reason::Deleting,
            format!(
                "EKS is deleting cluster {name} (not at this provider's request); it is created again once gone"
            ),
        ),
        Plan::Wait(Wait::Pending(state)) => (
            Reason::WaitingForCloud,
            format!("EKS reports cluster {name} as {state}"),
        ),
        Plan::NameConflict { conflict, .. } => {
            (Reason::NameConflict, conflict.message("EKS cluster", name))
        }
        Plan::Failed(m) => (Reason::CloudError, m.clone()),
        Plan::Invalid(m) => (Reason::InvalidSpec, m.clone()),
        Plan::Nothing => (Reason::WaitingForCloud, format!("Waiting for {name}")),
    }
}

// ---------------------------------------------------------------------------------------------
// Kubeconfig Secrets
// ---------------------------------------------------------------------------------------------

struct Secrets<'a> {
    cp: &'a EKSControlPlane,
    ctx: &'a PassContext,
    cluster_name: &'a str,
    namespace: &'a str,
    clients: &'a Clients,
    token_lifetime: Duration,
}

impl Secrets<'_> {
    /// The shared runtime writes the Secrets ([`provider_runtime::kubeconfig`]); EKS gives its
    /// token and its exec plugin. Returns when the contract Secret's token expires.
    async fn ensure(
        &self,
        eks_name: &str,
        server: &ApiEndpoint,
        ca_data: &str,
        endpoints: &[Endpoint],
    ) -> Result<jiff::Timestamp, ProviderError> {
        // EKS returns the CA base64-encoded.
        let ca_pem = STANDARD.decode(ca_data.trim()).map_err(|e| {
            ProviderError::cloud(
                "cloud_response",
                format!("EKS returned a certificate authority that is not base64: {e}"),
            )
        })?;
        let owner = self.cp.controller_owner_ref(&()).ok_or_else(|| {
            ProviderError::cloud("internal", "the EKSControlPlane has no UID yet")
        })?;
        let secrets = KubeconfigSecrets {
            client: &self.ctx.client,
            field_manager: self.ctx.field_manager,
            namespace: self.namespace,
            cluster_name: self.cluster_name,
            owner,
        };
        let target = KubeconfigTarget {
            server,
            ca_pem: &ca_pem,
            endpoints,
            preferred: self
                .cp
                .spec
                .common
                .endpoint_access
                .effective_preferred()
                .endpoint_name(),
            plugin: kubeconfig::get_token_plugin(eks_name, &self.clients.region),
        };
        let tokens = kubeconfig::EksTokens {
            credentials: &self.clients.credentials,
            region: &self.clients.region,
            eks_name,
            lifetime: self.token_lifetime,
        };
        secrets.ensure(&target, &tokens, self.ctx.now).await
    }
}

// ---------------------------------------------------------------------------------------------
// EKS calls
// ---------------------------------------------------------------------------------------------

/// Awaits an SDK call, counts it by outcome, and classifies its error.
async fn counted<T, E>(
    calls: &CloudCalls,
    operation: &'static str,
    call: impl Future<Output = Result<T, SdkError<E, Response>>>,
) -> Result<T, CloudError>
where
    E: ProvideErrorMetadata + std::error::Error,
{
    match call.await {
        Ok(out) => {
            calls.record(SERVICE, operation, CallOutcome::Success);
            Ok(out)
        }
        Err(e) => {
            let e = classify(e);
            let outcome = match &e {
                CloudError::NotFound(_) => CallOutcome::NotFound,
                CloudError::Throttled { .. } => CallOutcome::Throttled,
                _ => CallOutcome::Error,
            };
            calls.record(SERVICE, operation, outcome);
            Err(e)
        }
    }
}

/// The id of the update an `Update*` call started ([`crate::cloud::started_update`]).
fn update_id(operation: &str, update: Option<&eks::Update>) -> Result<String, CloudError> {
    crate::cloud::started_update(operation, update).map(|u| u.id().unwrap_or_default().to_string())
}

/// `Ok(None)` for a not-found.
fn absent_if_not_found<T>(result: Result<T, CloudError>) -> Result<Option<T>, CloudError> {
    match result {
        Ok(v) => Ok(Some(v)),
        Err(CloudError::NotFound(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// One kind of cluster configuration update (EKS refuses mixing kinds).
enum ConfigUpdate {
    EndpointAccess(eks::VpcConfigRequest),
    Logging(eks::Logging),
    Access(eks::UpdateAccessConfigRequest),
}

/// The EKS operations this reconciler uses, on one cluster.
struct EksApi<'a> {
    client: &'a aws_sdk_eks::Client,
    calls: &'a CloudCalls,
    name: &'a str,
}

impl EksApi<'_> {
    async fn describe_cluster(&self) -> Result<Option<ObservedCluster>, CloudError> {
        let out = absent_if_not_found(
            counted(
                self.calls,
                "DescribeCluster",
                self.client.describe_cluster().name(self.name).send(),
            )
            .await,
        )?;
        Ok(out.and_then(|o| o.cluster().map(mapping::observed_cluster)))
    }

    async fn describe_update(&self, id: &str) -> Result<Option<UpdateState>, CloudError> {
        let call = self
            .client
            .describe_update()
            .name(self.name)
            .update_id(id)
            .send();
        let out = absent_if_not_found(counted(self.calls, "DescribeUpdate", call).await)?;
        Ok(out.and_then(|o| o.update().map(mapping::update_state)))
    }

    async fn describe_addon(&self, addon: &str) -> Result<Option<ObservedAddon>, CloudError> {
        let call = self
            .client
            .describe_addon()
            .cluster_name(self.name)
            .addon_name(addon)
            .send();
        let out = absent_if_not_found(counted(self.calls, "DescribeAddon", call).await)?;
        Ok(out.and_then(|o| o.addon().map(mapping::observed_addon)))
    }

    async fn access_entries(&self) -> Result<BTreeSet<String>, CloudError> {
        let mut principals = BTreeSet::new();
        let mut next = None;
        for _ in 0..MAX_PAGES {
            let call = self
                .client
                .list_access_entries()
                .cluster_name(self.name)
                .set_next_token(next.take())
                .send();
            let page = counted(self.calls, "ListAccessEntries", call).await?;
            principals.extend(page.access_entries().iter().cloned());
            match page.next_token() {
                Some(token) if !token.is_empty() => next = Some(token.to_string()),
                _ => break,
            }
        }
        Ok(principals)
    }

    async fn access_policies(&self, principal: &str) -> Result<BTreeSet<String>, CloudError> {
        let mut policies = BTreeSet::new();
        let mut next = None;
        for _ in 0..MAX_PAGES {
            let call = self
                .client
                .list_associated_access_policies()
                .cluster_name(self.name)
                .principal_arn(principal)
                .set_next_token(next.take())
                .send();
            let page = counted(self.calls, "ListAssociatedAccessPolicies", call).await?;
            policies.extend(
                page.associated_access_policies()
                    .iter()
                    .filter_map(|p| p.policy_arn().map(str::to_string)),
            );
            match page.next_token() {
                Some(token) if !token.is_empty() => next = Some(token.to_string()),
                _ => break,
            }
        }
        Ok(policies)
    }

    async fn tag(&self, arn: &str, tags: HashMap<String, String>) -> Result<(), CloudError> {
        counted(
            self.calls,
            "TagResource",
            self.client
                .tag_resource()
                .resource_arn(arn)
                .set_tags(Some(tags))
                .send(),
        )
        .await?;
        Ok(())
    }

    /// Returns the update's id.
    async fn update_version(&self, version: &str, token: String) -> Result<String, CloudError> {
        let call = self
            .client
            .update_cluster_version()
            .name(self.name)
            .version(version)
            .client_request_token(token)
            .send();
        let out = counted(self.calls, "UpdateClusterVersion", call).await?;
        update_id("UpdateClusterVersion", out.update())
    }

    /// Returns the update's id.
    async fn update_config(
        &self,
        update: ConfigUpdate,
        token: String,
    ) -> Result<String, CloudError> {
        let request = self
            .client
            .update_cluster_config()
            .name(self.name)
            .client_request_token(token);
        let request = match update {
            ConfigUpdate::EndpointAccess(vpc) => request.resources_vpc_config(vpc),
            ConfigUpdate::Logging(logging) => request.logging(logging),
            ConfigUpdate::Access(access) => request.access_config(access),
        };
        let out = counted(self.calls, "UpdateClusterConfig", request.send()).await?;
        update_id("UpdateClusterConfig", out.update())
    }

    async fn create_addon(
        &self,
        addon: &contract::api::Addon,
        tags: HashMap<String, String>,
        token: String,
    ) -> Result<(), CloudError> {
        let call = self
            .client
            .create_addon()
            .cluster_name(self.name)
            .addon_name(&addon.name)
            .set_addon_version(addon.version.clone())
            .set_configuration_values(addon.configuration.clone())
            .resolve_conflicts(eks::ResolveConflicts::Overwrite)
            .set_tags(Some(tags))
            .client_request_token(token)
            .send();
        counted(self.calls, "CreateAddon", call).await?;
        Ok(())
    }

    async fn update_addon(
        &self,
        addon: &contract::api::Addon,
        token: String,
    ) -> Result<(), CloudError> {
        let call = self
            .client
            .update_addon()
            .cluster_name(self.name)
            .addon_name(&addon.name)
            .set_addon_version(addon.version.clone())
            .set_configuration_values(addon.configuration.clone())
            .resolve_conflicts(eks::ResolveConflicts::Overwrite)
            .client_request_token(token)
            .send();
        counted(self.calls, "UpdateAddon", call).await?;
        Ok(())
    }

    async fn create_access_entry(
        &self,
        entry: &crate::api::AccessEntry,
        tags: HashMap<String, String>,
        token: String,
    ) -> Result<(), CloudError> {
        let groups = (!entry.kubernetes_groups.is_empty()).then(|| entry.kubernetes_groups.clone());
        let call = self
            .client
            .create_access_entry()
            .cluster_name(self.name)
            .principal_arn(&entry.principal_arn)
            .set_kubernetes_groups(groups)
            .set_username(entry.username.clone())
            .r#type("STANDARD")
            .set_tags(Some(tags))
            .client_request_token(token)
            .send();
        counted(self.calls, "CreateAccessEntry", call).await?;
        Ok(())
    }

    async fn associate_policy(&self, principal: &str, policy: &str) -> Result<(), CloudError> {
        let scope = eks::AccessScope::builder()
            .r#type(eks::AccessScopeType::Cluster)
            .build();
        let call = self
            .client
            .associate_access_policy()
            .cluster_name(self.name)
            .principal_arn(principal)
            .policy_arn(policy)
            .access_scope(scope)
            .send();
        counted(self.calls, "AssociateAccessPolicy", call).await?;
        Ok(())
    }

    async fn delete_cluster(&self) -> Result<(), CloudError> {
        counted(
            self.calls,
            "DeleteCluster",
            self.client.delete_cluster().name(self.name).send(),
        )
        .await?;
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use contract::api::EndpointAccess;
    use contract::conditions::ConditionStatus;

    use super::mapping::ClusterState;
    use super::*;

    fn desired(version: KubeVersion) -> Desired {
        Desired {
            version,
            endpoint_access: EndpointAccess::default(),
            logging: BTreeSet::new(),
            authentication_mode: None,
            addons: Vec::new(),
            access_entries: Vec::new(),
            adopt: false,
            owner: scope::owner("ns", "c1"),
        }
    }

    fn cluster(state: ClusterState, version: &str) -> ObservedCluster {
        ObservedCluster {
            name: "ns-c1".into(),
            arn: "arn:aws:eks:us-west-2:1:cluster/ns-c1".into(),
            state,
            version: version.into(),
            platform_version: None,
            endpoint_url: Some("https://h.example".into()),
            ca_data: Some("Q0E=".into()),
            public_access: true,
            private_access: false,
            public_cidrs: Vec::new(),
            logging: BTreeSet::new(),
            authentication_mode: None,
            oidc_issuer: None,
            tags: BTreeMap::new(),
        }
    }

    /// `(type, status, reason)` of every condition, Ready first.
    fn summary(conditions: &[DesiredCondition]) -> Vec<Row> {
        conditions
            .iter()
            .map(|c| (c.type_.clone(), c.status, c.reason.clone()))
            .collect()
    }

    type Row = (String, ConditionStatus, String);

    /// `(name, plan, acted, desired version, observed cluster, kubeconfig ready, expected)`.
    type Case<'a> = (
        &'a str,
        Plan,
        Acted,
        KubeVersion,
        Option<&'a ObservedCluster>,
        bool,
        Vec<Row>,
    );

    fn row(t: &str, s: ConditionStatus, r: &str) -> Row {
        (t.to_string(), s, r.to_string())
    }

    #[test]
    fn conditions_follow_the_step_of_the_pass() {
        use ConditionStatus::{False, True};
        let v131 = KubeVersion::new(1, 31);
        let active = cluster(ClusterState::Active, "1.31");
        let creating = cluster(ClusterState::Creating, "1.31");
        let updating = cluster(ClusterState::Updating, "1.31");
        let plain = || Acted::new(OperationChange::Clear);
        let cases: Vec<Case> = vec![
            (
                "a cluster at rest with its kubeconfig is ready and up to date",
                Plan::Nothing,
                plain(),
                v131,
                Some(&active),
                true,
                vec![
                    row("Ready", True, "Ready"),
                    row("Available", True, "Ready"),
                    row("KubeconfigReady", True, "Ready"),
                    row("Upgrading", False, "UpToDate"),
                ],
            ),
            (
                "a creating cluster is neither available nor has a kubeconfig",
                Plan::Wait(Wait::Creating),
                plain(),
                v131,
                Some(&creating),
                false,
                vec![
                    row("Ready", False, "Creating"),
                    row("Available", False, "Creating"),
                    row("KubeconfigReady", False, "Creating"),
                    row("Upgrading", False, "UpToDate"),
                ],
            ),
            (
                "a version step keeps the cluster available and says it upgrades",
                Plan::Upgrade {
                    to: KubeVersion::new(1, 32),
                },
                plain(),
                KubeVersion::new(1, 33),
                Some(&active),
                true,
                vec![
                    row("Ready", False, "Upgrading"),
                    row("Available", True, "Ready"),
                    row("KubeconfigReady", True, "Ready"),
                    row("Upgrading", True, "Upgrading"),
                ],
            ),
            (
                "an upgrade due behind a configuration update still reports Upgrading",
                Plan::Wait(Wait::Updating { upgrade: false }),
                plain(),
                KubeVersion::new(1, 32),
                Some(&updating),
                true,
                vec![
                    row("Ready", False, "Updating"),
                    row("Available", True, "Ready"),
                    row("KubeconfigReady", True, "Ready"),
                    row("Upgrading", True, "Upgrading"),
                ],
            ),
            (
                "a version step blocked on node groups waits as an upgrade",
                Plan::Upgrade {
                    to: KubeVersion::new(1, 32),
                },
                Acted {
                    blocked_on_pools: Some("Nodegroups ng must be updated".into()),
                    ..plain()
                },
                KubeVersion::new(1, 32),
                Some(&active),
                true,
                vec![
                    row("Ready", False, "Upgrading"),
                    row("Available", True, "Ready"),
                    row("KubeconfigReady", True, "Ready"),
                    row("Upgrading", True, "Upgrading"),
                ],
            ),
            (
                "a name conflict reports no cluster",
                Plan::NameConflict {
                    arn: "arn".into(),
                    conflict: contract::ownership::Conflict { owner: None },
                },
                plain(),
                v131,
                None,
                false,
                vec![
                    row("Ready", False, "NameConflict"),
                    row("Available", False, "NameConflict"),
                    row("KubeconfigReady", False, "NameConflict"),
                    row("Upgrading", False, "UpToDate"),
                ],
            ),
        ];
        for (name, plan, acted, version, observed, kubeconfig, want) in cases {
            let current = observed.and_then(|c| c.kube_version().ok());
            let got = conditions(
                &plan,
                &acted,
                &desired(version),
                "ns-c1",
                observed,
                current,
                kubeconfig,
            );
            assert_eq!(summary(&got), want, "{name}");
        }
        let blocked = conditions(
            &Plan::Upgrade {
                to: KubeVersion::new(1, 32),
            },
            &Acted {
                blocked_on_pools: Some("Nodegroups ng must be updated".into()),
                ..plain()
            },
            &desired(KubeVersion::new(1, 32)),
            "ns-c1",
            Some(&active),
            Some(v131),
            true,
        );
        assert!(
            blocked[3]
                .message
                .contains("waiting for the node groups to reach v1.31"),
            "{}",
            blocked[3].message
        );
    }
}
