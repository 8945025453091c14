//! EKSMachinePool: one EKS managed node group.
//!
//! Each pass observes (the owning MachinePool, the EKSControlPlane, DescribeNodegroup, the update
//! recorded in `status.operation`, the node group's EC2 instances), plans ([`plan::plan`], pure),
//! makes at most one EKS write, and reports `spec.providerIDList`, `status` and the `Ready` and
//! `Upgrading` conditions. At rest a pass reads DescribeNodegroup and DescribeInstances only.
//!
//! Nothing touches the cloud until the control plane is initialized. The node count follows
//! `MachinePool.spec.replicas`, unless `spec.scaling` hands it to the cloud's autoscaler: then
//! the MachinePool is annotated `cluster.x-k8s.io/replicas-managed-by: eks` and the count EKS
//! reports is written back into `MachinePool.spec.replicas`.

mod aws;
pub mod mapping;
pub mod plan;

use std::collections::BTreeMap;
use std::sync::Arc;

use contract::api::{
    MachinePoolInitialization, MachinePoolStatusCommon, Operation, OperationKind,
    RequestOverridesStatus,
};
use contract::capi::MachinePool;
use contract::conditions::{ConditionRole, DesiredCondition, Reason, waiting_set};
use contract::naming;
use contract::scaling;
use contract::version::{KubeVersion, normalize};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Patch, PatchParams};
use kube::{Api, ResourceExt};
use provider_runtime::{Cleanup, CleanupContext, Pass, PassContext, ProviderError, Reconciler};
use serde_json::Value;

use self::aws::NodegroupApi;
use self::mapping::{
    CreateNodegroup, NodegroupState, NodegroupView, ScalingIntent, SubnetCandidate, pool_shape,
    provider_id_list, select_subnets, zones_needed,
};
use self::plan::{Desired, Observed, Plan};
use crate::api::{EKSControlPlane, EKSMachinePool, EKSMachinePoolStatus};
use crate::cloud::{Clients, CloudError};
use crate::scope::{self, ClusterRef, Infra, Shared};

/// The value this provider writes into `cluster.x-k8s.io/replicas-managed-by`.
pub const REPLICAS_MANAGER: &str = "eks";

/// Reconciles EKSMachinePool.
pub struct MachinePoolReconciler {
    shared: Arc<Shared>,
}

impl MachinePoolReconciler {
    /// A reconciler sharing `shared`.
    pub fn new(shared: Arc<Shared>) -> Self {
        Self { shared }
    }
}

/// Where the node group lives and how to reach it.
struct Location {
    clients: Clients,
    eks_cluster: String,
    additional_tags: BTreeMap<String, String>,
    control_plane_version: Option<KubeVersion>,
    /// The cluster's subnets, with what the EKSCluster knows of them.
    cluster_subnets: Vec<SubnetCandidate>,
}

/// Whether the node group can be reached yet.
enum Located {
    Found(Box<Location>),
    /// Not yet (or no longer): no cloud call; the message says what is awaited.
    NotYet(String),
}

fn invalid(message: impl Into<String>) -> ProviderError {
    ProviderError::terminal(Reason::InvalidSpec, message)
}

fn control_plane_initialized(cp: &EKSControlPlane) -> bool {
    cp.status.as_ref().is_some_and(|s| {
        s.common.initialized
            || s.common
                .initialization
                .as_ref()
                .and_then(|i| i.control_plane_initialized)
                == Some(true)
    })
}

/// The node group's name: `spec.cloudName`, else derived from the namespace and the object's name.
fn nodegroup_name(obj: &EKSMachinePool) -> Result<String, ProviderError> {
    match &obj.spec.common.cloud_name {
        Some(name) => {
            naming::EKS_NODEGROUP
                .check(name)
                .map_err(|e| invalid(format!("spec.cloudName: {e}")))?;
            Ok(name.clone())
        }
        None => Ok(naming::derive_cloud_name(
            &obj.namespace().unwrap_or_default(),
            &obj.name_any(),
            &naming::EKS_NODEGROUP,
        )),
    }
}

/// `MachinePool.spec.template.spec.version` at minor granularity.
fn desired_version(pool: &MachinePool) -> Result<Option<KubeVersion>, ProviderError> {
    pool.version()
        .filter(|v| !v.is_empty())
        .map(|v| {
            KubeVersion::parse(&normalize(v))
                .map(|k| k.without_patch())
                .map_err(|e| {
                    invalid(format!(
                        "MachinePool {}: spec.template.spec.version: {e}",
                        pool.name_any()
                    ))
                })
        })
        .transpose()
}

impl MachinePoolReconciler {
    /// Finds the EKS cluster, the region and credentials, and the cluster's subnets.
    async fn locate(
        &self,
        client: &kube::Client,
        cluster: ClusterRef<'_>,
        namespace: &str,
        require_initialized: bool,
    ) -> Result<Located, ProviderError> {
        let Some(cp) = scope::control_plane_for(client, cluster).await? else {
            return Ok(Located::NotYet(
                "waiting for the Cluster's EKSControlPlane (spec.controlPlaneRef)".into(),
            ));
        };
        if require_initialized && !control_plane_initialized(&cp) {
            return Ok(Located::NotYet(format!(
                "waiting for the EKS control plane {} to be initialized",
                cp.name_any()
            )));
        }
        let (infra, cluster_subnets) = match scope::eks_cluster_for(client, cluster).await? {
            Some(eks_cluster) => {
                let subnets = eks_cluster
                    .status
                    .as_ref()
                    .and_then(|s| s.network.as_ref())
                    .map(|n| {
                        n.subnets
                            .iter()
                            .map(|s| SubnetCandidate {
                                id: s.id.clone(),
                                zone: Some(s.availability_zone.clone()).filter(|z| !z.is_empty()),
                                public: Some(s.public),
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                (Infra::from_eks_cluster(&eks_cluster), subnets)
            }
            None if cluster.names_infrastructure() => {
                return Ok(Located::NotYet(
                    "waiting for the Cluster's EKSCluster".into(),
                ));
            }
            None => {
                let Some(spec) = cp.spec.infrastructure.as_ref() else {
                    return Err(invalid(
                        "the Cluster has no EKSCluster, so the EKSControlPlane's spec.infrastructure (region, network.subnetIDs) must be set",
                    ));
                };
                let infra = Infra::from_spec(spec);
                let subnets = infra
                    .subnet_ids
                    .iter()
                    .map(|id| SubnetCandidate {
                        id: id.clone(),
                        zone: None,
                        public: None,
                    })
                    .collect();
                (infra, subnets)
            }
        };
        let clients = scope::clients_for(&self.shared.clients, client, namespace, &infra).await?;
        let control_plane_version = cp
            .status
            .as_ref()
            .and_then(|s| s.common.version.as_deref())
            .and_then(|v| KubeVersion::parse(&normalize(v)).ok());
        Ok(Located::Found(Box::new(Location {
            clients,
            eks_cluster: scope::eks_cluster_name(&cp, &cluster.name()),
            additional_tags: infra.additional_tags,
            control_plane_version,
            cluster_subnets,
        })))
    }

    /// The subnets to create the node group in, looking their zones up when failure domains
    /// need them.
    async fn subnets(
        &self,
        api: &NodegroupApi<'_>,
        location: &Location,
        obj: &EKSMachinePool,
        pool: &MachinePool,
    ) -> Result<Vec<String>, ProviderError> {
        let mut explicit: Vec<SubnetCandidate> = obj
            .spec
            .common
            .subnet_ids
            .iter()
            .map(|id| SubnetCandidate {
                id: id.clone(),
                zone: None,
                public: None,
            })
            .collect();
        let mut cluster = location.cluster_subnets.clone();
        let zones = &pool.spec.failure_domains;
        let candidates = if explicit.is_empty() {
            &mut cluster
        } else {
            &mut explicit
        };
        if zones_needed(candidates, zones) {
            let ids: Vec<String> = candidates
                .iter()
                .filter(|s| s.zone.is_none())
                .map(|s| s.id.clone())
                .collect();
            let found = api.subnet_zones(&ids).await?;
            for s in candidates.iter_mut().filter(|s| s.zone.is_none()) {
                s.zone = found.get(&s.id).cloned();
            }
        }
        select_subnets(&explicit, &cluster, zones).map_err(|e| invalid(e.0))
    }
}

/// The conditions of a pass before the owning MachinePool exists.
fn waiting_for_machine_pool() -> Vec<DesiredCondition> {
    waiting_set(
        ConditionRole::MachinePool,
        Reason::WaitingForInfrastructure,
        "Waiting for the owning MachinePool",
    )
}

/// The conditions of a pass that waits for the control plane (`message` says on what).
fn waiting_for_control_plane(message: String) -> Vec<DesiredCondition> {
    waiting_set(
        ConditionRole::MachinePool,
        Reason::WaitingForControlPlane,
        contract::conditions::sentence(&message),
    )
}

/// What the act step did.
#[derive(Default)]
struct Acted {
    /// The operation it started.
    operation: Option<Operation>,
    /// The node group as CreateNodegroup returned it.
    created: Option<NodegroupView>,
    /// Set when `requestOverrides` went out with a request.
    overrides: Option<RequestOverridesStatus>,
    /// What failed.
    error: Option<ProviderError>,
}

impl Reconciler<EKSMachinePool> for MachinePoolReconciler {
    async fn reconcile(
        &self,
        obj: Arc<EKSMachinePool>,
        ctx: &PassContext,
    ) -> Result<Pass, ProviderError> {
        let poll = self.shared.poll_interval;
        let Some(pool) = ctx.machine_pool.clone() else {
            return Ok(Pass::new()
                .conditions(waiting_for_machine_pool())
                .requeue_after(poll));
        };
        let namespace = obj.namespace().unwrap_or_default();
        let cluster_name = ctx.cluster.name_any();
        let shape = pool_shape(&obj.spec).map_err(|e| invalid(e.0))?;
        let version = desired_version(&pool)?;
        let nodegroup = nodegroup_name(&obj)?;
        let intent = ScalingIntent::new(obj.spec.common.scaling.as_ref(), pool.spec.replicas);

        let location = match self
            .locate(
                &ctx.client,
                ClusterRef::Live(&ctx.cluster),
                &namespace,
                true,
            )
            .await?
        {
            Located::Found(location) => location,
            Located::NotYet(message) => {
                patch_machine_pool(
                    ctx,
                    &pool,
                    scaling::write_back(intent, &pool, REPLICAS_MANAGER, None),
                )
                .await?;
                return Ok(Pass::new()
                    .conditions(waiting_for_control_plane(message))
                    .requeue_after(poll));
            }
        };
        let api = NodegroupApi::new(&location.clients, &ctx.cloud_calls);
        let previous = obj.status.clone().unwrap_or_default();

        // Observe.
        let ng = api.describe(&location.eks_cluster, &nodegroup).await?;
        let operation = previous.common.operation.clone();
        let update = match (&operation, &ng) {
            (Some(op), Some(_))
                if matches!(op.kind, OperationKind::Update | OperationKind::Upgrade) =>
            {
                api.describe_update(&location.eks_cluster, &nodegroup, &op.id)
                    .await?
            }
            _ => None,
        };
        let instances = api.instances(&location.eks_cluster, &nodegroup).await?;
        let owner = scope::owner(&namespace, &cluster_name);
        let tags = owner.tags(&location.additional_tags);
        let observed = Observed {
            nodegroup: ng.as_ref(),
            operation: operation.as_ref(),
            update: update.as_ref(),
            control_plane_version: location.control_plane_version,
        };
        let desired = Desired {
            shape: &shape,
            scaling: intent,
            version,
            tags: &tags,
            owner: owner.clone(),
            adopt: obj.spec.common.adopt,
        };

        // Plan.
        let plan = plan::plan(&observed, &desired, ctx.now);
        let ours = ng.as_ref().map(|n| owner.owns(&n.tags));
        tracing::debug!(nodegroup = %nodegroup, ?plan, "planned");

        // The MachinePool first (a management write): the annotation and the autoscaler's count.
        let observed_desired = ng
            .as_ref()
            .filter(|_| ours == Some(true))
            .and_then(|n| n.scaling)
            .map(|s| s.desired_size);
        patch_machine_pool(
            ctx,
            &pool,
            scaling::write_back(intent, &pool, REPLICAS_MANAGER, observed_desired),
        )
        .await?;

        // Act: at most one EKS write.
        let overrides = obj.spec.eks.request_overrides.as_ref();
        let acted = match &plan {
            Plan::Create { scaling, version } => {
                match self.subnets(&api, &location, &obj, &pool).await {
                    Err(error) => Acted {
                        error: Some(error),
                        ..Acted::default()
                    },
                    Ok(subnets) => {
                        let request = CreateNodegroup::new(
                            &obj.uid().unwrap_or_default(),
                            &location.eks_cluster,
                            &nodegroup,
                            &shape,
                            *scaling,
                            subnets,
                            tags.clone(),
                            version.as_ref(),
                            overrides,
                        );
                        create(&api, &request, overrides, ctx.now, obj.metadata.generation).await
                    }
                }
            }
            Plan::Adopt => with_node_group(ng.as_ref(), |n| api.tag(&n.arn, &tags)).await,
            Plan::Tag(missing) => with_node_group(ng.as_ref(), |n| api.tag(&n.arn, missing)).await,
            Plan::UpdateConfig(change) => started(
                api.update_config(&location.eks_cluster, &nodegroup, change)
                    .await,
                OperationKind::Update,
                ctx.now,
            ),
            Plan::Upgrade { to, .. } => started(
                api.update_version(&location.eks_cluster, &nodegroup, to)
                    .await,
                OperationKind::Upgrade,
                ctx.now,
            ),
            Plan::NameConflict { .. } => {
                let (ready, _) = plan::readiness(&observed, &plan, &nodegroup, 0);
                Acted {
                    error: Some(ProviderError::terminal(Reason::NameConflict, ready.message)),
                    ..Acted::default()
                }
            }
            Plan::Invalid(message) => Acted {
                error: Some(invalid(message.clone())),
                ..Acted::default()
            },
            Plan::UpdateFailed { .. } => {
                let (ready, _) = plan::readiness(&observed, &plan, &nodegroup, 0);
                Acted {
                    error: Some(ProviderError::cloud(
                        "nodegroup_update_failed",
                        ready.message,
                    )),
                    ..Acted::default()
                }
            }
            Plan::Wait(_) | Plan::Failed { .. } | Plan::Nothing => Acted::default(),
        };

        // Report.
        let view = acted
            .created
            .as_ref()
            .or(ng.as_ref())
            .filter(|_| ours != Some(false));
        let ids = if ours == Some(false) {
            Vec::new()
        } else {
            provider_id_list(&instances)
        };
        let replicas = i32::try_from(ids.len()).unwrap_or(i32::MAX);
        let provisioned_now = view.is_some_and(|n| n.state.is_provisioned());
        let was_provisioned = previous
            .common
            .initialization
            .as_ref()
            .and_then(|i| i.provisioned)
            == Some(true);
        let status = EKSMachinePoolStatus {
            common: MachinePoolStatusCommon {
                initialization: (was_provisioned || provisioned_now).then_some(
                    MachinePoolInitialization {
                        provisioned: Some(true),
                    },
                ),
                ready: provisioned_now,
                replicas: Some(replicas),
                version: view.and_then(|n| n.version.as_deref()).map(normalize),
                operation: acted
                    .operation
                    .clone()
                    .or_else(|| plan::carried_operation(&observed, &plan).cloned()),
                conditions: Vec::new(),
            },
            observed_generation: None,
            nodegroup_arn: view.map(|n| n.arn.clone()).filter(|a| !a.is_empty()),
            nodegroup_name: Some(nodegroup.clone()),
            request_overrides: acted
                .overrides
                .clone()
                .or(previous.request_overrides.clone()),
        };
        let (ready, settled) = plan::readiness(&observed, &plan, &nodegroup, ids.len());
        let upgrading = plan::upgrading(&observed, &desired, &plan);
        // At rest, look again after the rest interval; an autoscaled pool sooner, since its
        // count (and so providerIDList and MachinePool.spec.replicas) moves without us.
        // A pool waiting for its control plane to finish a version step is not at rest: the
        // control plane's progress does not trigger a pass here, so look again soon.
        let waiting_for_upgrade = upgrading.status == contract::conditions::ConditionStatus::True;
        let requeue = if settled && acted.error.is_none() && !waiting_for_upgrade {
            if intent.is_autoscaled() {
                self.shared.rest_interval.min(poll.saturating_mul(5))
            } else {
                self.shared.rest_interval
            }
        } else {
            poll
        };
        let pass = Pass::new()
            .spec_fields(&scaling::provider_id_fields(
                &ids,
                &obj.spec.common.provider_id_list,
            ))
            .status(&status)
            .condition(ready)
            .condition(upgrading)
            .requeue_after(requeue);
        Ok(match acted.error {
            Some(error) => pass.with_error(error),
            None => pass,
        })
    }

    async fn cleanup(
        &self,
        obj: Arc<EKSMachinePool>,
        ctx: &CleanupContext,
    ) -> Result<Cleanup, ProviderError> {
        let poll = self.shared.poll_interval;
        let created_something = obj
            .status
            .as_ref()
            .is_some_and(|s| s.nodegroup_arn.is_some() || s.common.operation.is_some());
        let Some(cluster_name) = ctx.cluster_to_clean(created_something, "EKSMachinePool")? else {
            return Ok(Cleanup::Done);
        };
        let cluster_name = cluster_name.to_string();
        let Ok(nodegroup) = nodegroup_name(&obj) else {
            // A name EKS refuses: nothing can have been created under it.
            return Ok(Cleanup::Done);
        };
        let namespace = obj.namespace().unwrap_or_default();
        // With the Cluster gone the node group is still found, by the control plane and
        // infrastructure labelled with the Cluster's name: one policy for every kind.
        let cluster = match ctx.cluster.as_deref() {
            Some(c) => ClusterRef::Live(c),
            None => ClusterRef::Gone {
                namespace: &namespace,
                name: &cluster_name,
            },
        };
        let location = match self.locate(&ctx.client, cluster, &namespace, false).await {
            Ok(Located::Found(location)) => location,
            Ok(Located::NotYet(message)) => {
                // No control plane (or no infrastructure) left: the EKS cluster, and every node
                // group in it, went with it; EKS refuses to delete a cluster that still has one.
                tracing::info!(%message, "nothing left to reach; releasing");
                return Ok(Cleanup::Done);
            }
            // A cluster spec that never let a pass reach EKS: nothing can have been created.
            // (Missing credentials are not this case: they keep the finalizer until fixed.)
            Err(ProviderError::Terminal {
                reason: Reason::InvalidSpec,
                message,
            }) => {
                ctx.events
                    .warning(
                        Reason::InvalidSpec.as_str(),
                        "Delete",
                        format!("{message}; nothing to delete in AWS"),
                    )
                    .await;
                return Ok(Cleanup::Done);
            }
            Err(error) => return Err(error),
        };
        let api = NodegroupApi::new(&location.clients, &ctx.cloud_calls);
        let Some(ng) = api.describe(&location.eks_cluster, &nodegroup).await? else {
            return Ok(Cleanup::Done);
        };
        let owner = scope::owner(&namespace, &cluster_name);
        if !owner.owns(&ng.tags) {
            ctx.events
                .warning(
                    Reason::NameConflict.as_str(),
                    "Delete",
                    owner.left_in_place(
                        "EKS node group",
                        &format!("{nodegroup} (in EKS cluster {})", location.eks_cluster),
                    ),
                )
                .await;
            return Ok(Cleanup::Done);
        }
        if ng.state == NodegroupState::Deleting {
            return Ok(Cleanup::pending(
                poll,
                format!("EKS is deleting node group {nodegroup}"),
            ));
        }
        match api.delete(&location.eks_cluster, &nodegroup).await {
            Ok(None) => Ok(Cleanup::Done),
            Ok(Some(_)) => Ok(Cleanup::pending(
                poll,
                format!("EKS is deleting node group {nodegroup}"),
            )),
            Err(CloudError::InUse(message)) => Ok(Cleanup::pending(
                poll,
                format!("node group {nodegroup} is busy; deleting it once EKS allows: {message}"),
            )),
            Err(e) => Err(e.into()),
        }
    }
}

async fn patch_machine_pool(
    ctx: &PassContext,
    pool: &MachinePool,
    patch: Option<Value>,
) -> Result<(), ProviderError> {
    let Some(patch) = patch else { return Ok(()) };
    let api: Api<MachinePool> =
        Api::namespaced(ctx.client.clone(), &pool.namespace().unwrap_or_default());
    let params = PatchParams {
        field_manager: Some(ctx.field_manager.to_string()),
        ..PatchParams::default()
    };
    api.patch(&pool.name_any(), &params, &Patch::Merge(&patch))
        .await?;
    tracing::info!(machine_pool = %pool.name_any(), %patch, "updated the MachinePool");
    Ok(())
}

async fn create(
    api: &NodegroupApi<'_>,
    request: &CreateNodegroup,
    overrides: Option<&Value>,
    now: jiff::Timestamp,
    generation: Option<i64>,
) -> Acted {
    match api.create(request, overrides).await {
        Ok(view) => Acted {
            operation: Some(Operation::new(view.arn.clone(), OperationKind::Create, now)),
            overrides: contract::overrides::effective(overrides).map(|_| RequestOverridesStatus {
                operation: "CreateNodegroup".into(),
                applied_at: Time(now),
                generation,
            }),
            created: Some(view),
            error: None,
        },
        // Created meanwhile (by a pass that crashed before recording it): the next pass sees it.
        Err(CloudError::InUse(message)) => {
            tracing::info!(%message, "node group already exists");
            Acted::default()
        }
        Err(e) => Acted {
            error: Some(e.into()),
            ..Acted::default()
        },
    }
}

fn started(
    result: Result<mapping::UpdateView, CloudError>,
    kind: OperationKind,
    now: jiff::Timestamp,
) -> Acted {
    match result {
        Ok(update) => Acted {
            operation: Some(Operation::new(update.id, kind, now)),
            ..Acted::default()
        },
        Err(e) => Acted {
            error: Some(e.into()),
            ..Acted::default()
        },
    }
}

async fn with_node_group<'n, F, Fut>(ng: Option<&'n NodegroupView>, call: F) -> Acted
where
    F: FnOnce(&'n NodegroupView) -> Fut,
    Fut: Future<Output = Result<(), CloudError>>,
{
    match ng {
        Some(n) => match call(n).await {
            Ok(()) => Acted::default(),
            Err(e) => Acted {
                error: Some(e.into()),
                ..Acted::default()
            },
        },
        None => Acted::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pool(replicas: Option<i32>) -> MachinePool {
        let mut p: MachinePool = serde_json::from_value(json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachinePool",
            "metadata": {"name": "mp", "namespace": "ns"},
            "spec": {"clusterName": "c", "template": {"spec": {"bootstrap": {"dataSecretName": ""}}}},
        }))
        .unwrap();
        p.spec.replicas = replicas;
        p
    }

    #[test]
    fn a_cloud_name_eks_refuses_is_an_invalid_spec() {
        let mut obj = EKSMachinePool::new(
            "pool",
            crate::api::EKSMachinePoolSpec {
                common: contract::api::MachinePoolSpecCommon {
                    machine_type: "m5.large".into(),
                    ..Default::default()
                },
                eks: Default::default(),
            },
        );
        obj.metadata.namespace = Some("team-a".into());
        assert_eq!(nodegroup_name(&obj).unwrap(), "team-a-pool");
        obj.spec.common.cloud_name = Some("bad name!".into());
        let err = nodegroup_name(&obj).unwrap_err().to_string();
        assert!(err.contains("spec.cloudName"), "{err}");
    }

    #[test]
    fn the_machine_pool_version_is_read_at_minor_granularity() {
        let mut p = pool(Some(1));
        assert_eq!(desired_version(&p).unwrap(), None);
        p.spec.template.spec.version = Some("v1.31.4".into());
        assert_eq!(desired_version(&p).unwrap(), Some(KubeVersion::new(1, 31)));
        p.spec.template.spec.version = Some("latest".into());
        assert!(
            desired_version(&p)
                .unwrap_err()
                .to_string()
                .contains("spec.template.spec.version")
        );
    }

    #[test]
    fn waiting_passes_keep_every_condition_of_the_pool() {
        for set in [
            waiting_for_machine_pool(),
            waiting_for_control_plane(
                "waiting for the EKS control plane cp to be initialized".into(),
            ),
        ] {
            let types: Vec<&str> = set.iter().map(|c| c.type_.as_str()).collect();
            assert_eq!(types, ["Ready", "Upgrading"], "{set:?}");
        }
        let ready = &waiting_for_control_plane("waiting for the EKS control plane cp".into())[0];
        assert_eq!(ready.message, "Waiting for the EKS control plane cp.");
    }
}
