//! EKS's side of the InfraMachinePool role: one EKS managed node group. Everything else (observe
//! order, the MachinePool write-back, `spec.providerIDList`, plan, status, conditions, requeue,
//! cleanup policy) is the generic reconciler's ([`provider_runtime::machine_pool`]).
//!
//! At rest a pass reads DescribeNodegroup and DescribeInstances only. The node count follows
//! `MachinePool.spec.replicas`, unless `spec.scaling` hands it to the cloud's autoscaler: then
//! the MachinePool is annotated `cluster.x-k8s.io/replicas-managed-by: eks` and the count EKS
//! reports is written back into `MachinePool.spec.replicas`.

mod aws;
pub mod mapping;
pub mod plan;

use std::collections::BTreeMap;
use std::sync::Arc;

use contract::api::{
    ClusterSpecCommon, MachinePoolSpecCommon, MachinePoolStatusCommon, Operation,
    RequestOverridesStatus,
};
use contract::capi::MachinePool;
use contract::conditions::Reason;
use contract::idempotency::EKS_REQUEST_TOKEN;
use contract::naming;
use contract::plan::{CloudStep, Lifecycle, OperationState};
use contract::version::KubeVersion;
use kube::ResourceExt;
use provider_runtime::cluster_objects::{self, InfraOf, PoolHome};
use provider_runtime::machine_pool::Deletion;
use provider_runtime::machine_pool::{
    Creation, Located, MachinePoolCloud, MachinePoolProfile, MachinePoolReconciler,
    ManagedMachinePool, ManagedPool, PoolCall, PoolCreated,
};
use provider_runtime::{CloudCalls, ClusterRef, ProviderError};

use self::aws::NodegroupApi;
use self::mapping::{
    CreateNodegroup, NodegroupState, NodegroupView, PoolShape, SubnetCandidate, UpdateState,
    UpdateView, creation_scaling, pool_shape, provider_id_list, select_subnets, zones_needed,
};
use self::plan::ConfigChange;
use crate::api::{EKSCluster, EKSControlPlane, EKSMachinePool, EKSMachinePoolStatus};
use crate::cloud::{Clients, CloudError};
use crate::scope::{self, Infra, Shared};

/// The value this provider writes into `cluster.x-k8s.io/replicas-managed-by`.
pub const REPLICAS_MANAGER: &str = "eks";

/// The EKSMachinePool reconciler: the generic one over EKS.
pub fn reconciler(shared: Arc<Shared>) -> MachinePoolReconciler<EksMachinePool> {
    MachinePoolReconciler::new(scope::PROVIDER, EksMachinePool { shared })
}

impl ManagedMachinePool for EKSMachinePool {
    fn spec_common(&self) -> &MachinePoolSpecCommon {
        &self.spec.common
    }

    fn status_common(&self) -> Option<&MachinePoolStatusCommon> {
        self.status.as_ref().map(|s| &s.common)
    }

    fn request_overrides_status(&self) -> Option<&RequestOverridesStatus> {
        self.status.as_ref()?.request_overrides.as_ref()
    }

    fn cloud_id(&self) -> Option<&str> {
        self.status.as_ref()?.nodegroup_arn.as_deref()
    }
}

/// EKS, for the generic InfraMachinePool reconciler.
pub struct EksMachinePool {
    shared: Arc<Shared>,
}

/// Where the node group lives and how to reach it.
pub struct PoolScope {
    clients: Clients,
    calls: CloudCalls,
    eks_cluster: String,
    additional_tags: BTreeMap<String, String>,
    control_plane_version: Option<KubeVersion>,
    /// The cluster's subnets, with what the EKSCluster knows of them.
    cluster_subnets: Vec<SubnetCandidate>,
}

impl PoolScope {
    fn api(&self) -> NodegroupApi<'_> {
        NodegroupApi::new(&self.clients, &self.calls)
    }
}

fn invalid(message: impl Into<String>) -> ProviderError {
    ProviderError::terminal(Reason::InvalidSpec, message)
}

/// The node group's name: `spec.cloudName`, else derived from the namespace and the object's name.
fn nodegroup_name(obj: &EKSMachinePool) -> Result<String, ProviderError> {
    naming::cloud_name(
        obj.spec.common.cloud_name.as_deref(),
        &obj.namespace().unwrap_or_default(),
        &obj.name_any(),
        &naming::EKS_NODEGROUP,
    )
    .map_err(invalid)
}

/// The shared view of a node group.
fn managed(ng: NodegroupView) -> ManagedPool<NodegroupView> {
    let lifecycle = match &ng.state {
        NodegroupState::Active => Lifecycle::Running,
        NodegroupState::Degraded => Lifecycle::Degraded,
        NodegroupState::Creating => Lifecycle::Creating,
        NodegroupState::Updating => Lifecycle::Updating,
        NodegroupState::Deleting => Lifecycle::Deleting,
        NodegroupState::CreateFailed | NodegroupState::DeleteFailed => Lifecycle::Failed,
        NodegroupState::Other(state) => Lifecycle::Other(state.clone()),
    };
    ManagedPool {
        id: ng.arn.clone(),
        lifecycle,
        state: ng.state.as_str().to_string(),
        version: ng.version.clone(),
        tags: ng.tags.clone(),
        issues: ng.issues.clone(),
        desired_size: ng.scaling.map(|s| s.desired_size),
        detail: ng,
    }
}

/// An EKS update in the shared terms.
fn operation_state(update: &UpdateView) -> OperationState {
    let errors = || {
        if update.errors.is_empty() {
            "no error given".to_string()
        } else {
            update.errors.join("; ")
        }
    };
    match update.state {
        UpdateState::InProgress => OperationState::Running,
        UpdateState::Successful => OperationState::Succeeded,
        UpdateState::Failed => OperationState::Failed(format!("failed ({})", errors())),
        UpdateState::Cancelled => OperationState::Failed(format!("was cancelled ({})", errors())),
    }
}

impl EksMachinePool {
    /// The subnets to create the node group in, looking their zones up when failure domains
    /// need them.
    async fn subnets(
        &self,
        scope: &PoolScope,
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
        let mut cluster = scope.cluster_subnets.clone();
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
            let found = scope.api().subnet_zones(&ids).await?;
            for s in candidates.iter_mut().filter(|s| s.zone.is_none()) {
                s.zone = found.get(&s.id).cloned();
            }
        }
        select_subnets(&explicit, &cluster, zones).map_err(|e| invalid(e.0))
    }
}

impl MachinePoolCloud for EksMachinePool {
    type Object = EKSMachinePool;
    type Spec = PoolShape;
    type Scope = PoolScope;
    type Detail = NodegroupView;
    type Change = ConfigChange;
    type Status = EKSMachinePoolStatus;

    fn profile(&self) -> MachinePoolProfile {
        MachinePoolProfile {
            cloud: "EKS",
            noun: "node group",
            replicas_manager: REPLICAS_MANAGER,
            token_limits: &EKS_REQUEST_TOKEN,
            poll: self.shared.poll_interval,
            rest: self.shared.rest_interval,
        }
    }

    fn validate(&self, obj: &EKSMachinePool) -> Result<PoolShape, ProviderError> {
        pool_shape(&obj.spec).map_err(|e| invalid(e.0))
    }

    fn name(&self, obj: &EKSMachinePool) -> Result<String, ProviderError> {
        nodegroup_name(obj)
    }

    async fn locate(
        &self,
        obj: &EKSMachinePool,
        cluster: ClusterRef<'_>,
        client: &kube::Client,
        calls: &CloudCalls,
        require_initialized: bool,
    ) -> Result<Located<PoolScope>, ProviderError> {
        let namespace = obj.namespace().unwrap_or_default();
        let home = cluster_objects::pool_home::<EKSControlPlane, EKSCluster>(
            client,
            cluster,
            <Infra as InfraOf<EKSCluster, ClusterSpecCommon>>::CLOUD,
            require_initialized,
            |cp| cp.spec.infrastructure.is_some(),
            <Infra as InfraOf<EKSCluster, ClusterSpecCommon>>::OWN_FIELDS,
        )
        .await?;
        let (cp, eks_cluster, control_plane_version) = match home {
            PoolHome::NotYet(why) => return Ok(Located::NotYet(why)),
            PoolHome::Found {
                control_plane,
                infra_cluster,
                version,
            } => (control_plane, infra_cluster, version),
        };
        let (infra, cluster_subnets) = match (&eks_cluster, cp.spec.infrastructure.as_ref()) {
            (Some(eks_cluster), _) => {
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
                (Infra::from_eks_cluster(eks_cluster), subnets)
            }
            (None, Some(spec)) => {
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
            (None, None) => {
                return Ok(Located::NotYet(
                    "waiting for the Cluster's EKSCluster".into(),
                ));
            }
        };
        let clients = scope::clients_for(&self.shared.clients, client, &namespace, &infra).await?;
        Ok(Located::Found(PoolScope {
            clients,
            calls: calls.clone(),
            eks_cluster: scope::eks_cluster_name(&cp, &cluster.name()),
            additional_tags: infra.additional_tags,
            control_plane_version,
            cluster_subnets,
        }))
    }

    fn control_plane_version(&self, scope: &PoolScope) -> Option<KubeVersion> {
        scope.control_plane_version
    }

    fn additional_tags<'s>(&self, scope: &'s PoolScope) -> &'s BTreeMap<String, String> {
        &scope.additional_tags
    }

    fn place(&self, scope: &PoolScope, name: &str) -> String {
        format!("{name} (in EKS cluster {})", scope.eks_cluster)
    }

    async fn describe(
        &self,
        scope: &PoolScope,
        name: &str,
    ) -> Result<Option<ManagedPool<NodegroupView>>, ProviderError> {
        Ok(scope
            .api()
            .describe(&scope.eks_cluster, name)
            .await?
            .map(managed))
    }

    async fn operation_state(
        &self,
        scope: &PoolScope,
        name: &str,
        operation: &Operation,
    ) -> Result<Option<OperationState>, ProviderError> {
        let update = scope
            .api()
            .describe_update(&scope.eks_cluster, name, &operation.id)
            .await?;
        Ok(update.as_ref().map(operation_state))
    }

    async fn provider_ids(
        &self,
        scope: &PoolScope,
        name: &str,
    ) -> Result<Vec<String>, ProviderError> {
        let instances = scope.api().instances(&scope.eks_cluster, name).await?;
        Ok(provider_id_list(&instances))
    }

    fn diff(
        &self,
        call: &PoolCall<'_, EKSMachinePool, PoolShape>,
        pool: &ManagedPool<NodegroupView>,
    ) -> CloudStep<ConfigChange> {
        let change = plan::config_change(&pool.detail, call.spec, call.scaling);
        if change.is_empty() {
            CloudStep::Nothing
        } else {
            CloudStep::Change(change)
        }
    }

    fn describe_change(
        &self,
        change: &ConfigChange,
        pool: Option<&ManagedPool<NodegroupView>>,
    ) -> String {
        change.describe(pool.and_then(|p| p.detail.scaling))
    }

    async fn create(
        &self,
        scope: &PoolScope,
        call: &PoolCall<'_, EKSMachinePool, PoolShape>,
        version: Option<&KubeVersion>,
    ) -> Result<Creation<NodegroupView>, ProviderError> {
        let subnets = self.subnets(scope, call.obj, call.machine_pool).await?;
        let overrides = call.obj.spec.eks.request_overrides.as_ref();
        let request = CreateNodegroup::new(
            call.request.uid(),
            &scope.eks_cluster,
            call.name,
            call.spec,
            creation_scaling(call.scaling),
            subnets,
            call.request.tags.clone(),
            version,
            overrides,
        );
        match scope.api().create(&request, overrides).await {
            Ok(view) => Ok(Creation::Started(Box::new(PoolCreated {
                id: view.arn.clone(),
                overrides: contract::overrides::effective(overrides)
                    .map(|_| call.request.overrides_applied("CreateNodegroup")),
                pool: Some(managed(view)),
            }))),
            // Created meanwhile (by a pass that crashed before recording it).
            Err(CloudError::InUse(message)) => Ok(Creation::Exists(message)),
            Err(e) => Err(e.into()),
        }
    }

    async fn tag(
        &self,
        scope: &PoolScope,
        id: &str,
        tags: &BTreeMap<String, String>,
    ) -> Result<(), ProviderError> {
        Ok(scope.api().tag(id, tags).await?)
    }

    async fn upgrade(
        &self,
        scope: &PoolScope,
        name: &str,
        to: &KubeVersion,
    ) -> Result<String, ProviderError> {
        let update = scope
            .api()
            .update_version(&scope.eks_cluster, name, to)
            .await?;
        Ok(update.id)
    }

    async fn update(
        &self,
        scope: &PoolScope,
        name: &str,
        change: &ConfigChange,
    ) -> Result<String, ProviderError> {
        let update = scope
            .api()
            .update_config(&scope.eks_cluster, name, change)
            .await?;
        Ok(update.id)
    }

    async fn delete(&self, scope: &PoolScope, name: &str) -> Result<Deletion, ProviderError> {
        Deletion::after(scope.api().delete(&scope.eks_cluster, name).await.map(
            |found| match found {
                None => Deletion::Gone,
                Some(_) => Deletion::Started,
            },
        ))
    }

    fn status(
        &self,
        common: MachinePoolStatusCommon,
        request_overrides: Option<RequestOverridesStatus>,
        pool: Option<&ManagedPool<NodegroupView>>,
        name: &str,
    ) -> EKSMachinePoolStatus {
        EKSMachinePoolStatus {
            common,
            observed_generation: None,
            nodegroup_arn: pool.map(|p| p.id.clone()).filter(|a| !a.is_empty()),
            nodegroup_name: Some(name.to_string()),
            request_overrides,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
