//! EKS's side of the InfraMachinePool role: the EKSMachinePool reconciler ([`reconciler`]), the
//! kind as the kernel reads it, and [`EksMachinePool`], whose steps delegate to the files below.
//! One EKS managed node group. Everything else (the cluster lookup, the node group's name,
//! observe order, the MachinePool write-back, `spec.providerIDList`, plan, status, conditions,
//! requeue, cleanup policy) is the generic reconciler's ([`provider_runtime::machine_pool`]).
//!
//! - `desired`: the spec as EKS will be asked for it (pure);
//! - `observe`: reading the node group, a tracked update, and its EC2 instances;
//! - `diff`: EKS's own difference (scaling, labels, taints, update config; pure);
//! - `act`: the calls that change something, and the requests they send.
//!
//! At rest a pass reads DescribeNodegroup and DescribeInstances only. The node count follows
//! `MachinePool.spec.replicas`, unless `spec.scaling` hands it to the cloud's autoscaler: then
//! the MachinePool is annotated `cluster.x-k8s.io/replicas-managed-by: eks` and the count EKS
//! reports is written back into `MachinePool.spec.replicas`.

mod act;
mod desired;
mod diff;
mod observe;

use std::sync::Arc;

use contract::idempotency::EKS_REQUEST_TOKEN;
use contract::naming;
use provider_runtime::cluster_objects::InfraOf;
use provider_runtime::machine_pool::{PoolConnected, PoolNames};
use provider_runtime::{Admitted, CloudCalls, ProviderError};

pub use desired::PoolSpec;
pub use diff::PoolChange;
pub use observe::ObservedPool;

use self::act::SubnetCandidate;
use crate::api::{EKSCluster, EKSClusterSpec};
use crate::client::{Clients, CloudError};
use crate::scope::{self, Infra, Shared};

// Without spec.cloudName a node group's name is derived from the object's namespace and name.
provider_runtime::machine_pool! {
    EKS, infra = PoolInfra,
    tokens = EKS_REQUEST_TOKEN, create = act::CREATE_CALL,
    names = PoolNames::Namespaced(&naming::EKS_NODEGROUP), noun = "node group"
}

/// Where a node group's cluster lives: its [`Infra`], and the cluster's subnets with what the
/// EKSCluster knows of them (a node group goes into the private ones, or the failure domains'
/// zones).
pub struct PoolInfra {
    infra: Infra,
    subnets: Vec<SubnetCandidate>,
}

impl InfraOf for PoolInfra {
    type InfraCluster = EKSCluster;
    type Own = EKSClusterSpec;
    const OWN_FIELDS: &'static str = <Infra as InfraOf>::OWN_FIELDS;

    fn from_infra_cluster(eks_cluster: &EKSCluster) -> Self {
        let subnets = crate::network::AwsNetwork::of(eks_cluster)
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
        Self {
            infra: Infra::from_infra_cluster(eks_cluster),
            subnets,
        }
    }

    fn from_own(spec: &EKSClusterSpec) -> Self {
        let infra = Infra::from_own(spec);
        let subnets = infra
            .subnet_ids
            .iter()
            .map(|id| SubnetCandidate {
                id: id.clone(),
                zone: None,
                public: None,
            })
            .collect();
        Self { infra, subnets }
    }

    fn locatable(&self) -> bool {
        self.infra.locatable()
    }
}

/// One pass's clients, and the cluster's subnets a create picks from.
pub struct PoolClients {
    /// EKS and EC2, as the identity, in the region.
    aws: Clients,
    /// Where every call is counted and admitted.
    calls: CloudCalls,
    /// The cluster's subnets, with what the EKSCluster knows of them.
    cluster_subnets: Vec<SubnetCandidate>,
}

/// Clients and names for one pass, for the pool in the cluster at `reach.place`.
async fn connect(shared: &Arc<Shared>, reach: Reach<'_>) -> Result<At, ProviderError> {
    let PoolInfra { infra, subnets } = reach.place.infra;
    let aws = scope::clients_for(&shared.clients, reach.client, reach.namespace, &infra).await?;
    Ok(PoolConnected {
        pool: reach.pool.to_string(),
        cluster: reach.cluster.to_string(),
        tags: infra.additional_tags,
        clients: PoolClients {
            aws,
            calls: reach.calls.clone(),
            cluster_subnets: subnets,
        },
    })
}

/// The EKS and EC2 operations of this role, on one node group of one cluster: the reads are
/// [`observe`]'s, the changes [`act`]'s. Each is counted in the cloud-call metric and answers
/// our own views (no SDK type leaks into planning).
struct NodegroupApi<'a> {
    clients: &'a Clients,
    calls: &'a CloudCalls,
    /// The EKS cluster's name.
    cluster: &'a str,
    /// The node group's name.
    nodegroup: &'a str,
}

impl<'a> NodegroupApi<'a> {
    fn of(at: &'a At) -> Self {
        Self {
            clients: &at.clients.aws,
            calls: &at.clients.calls,
            cluster: &at.cluster,
            nodegroup: &at.pool,
        }
    }

    /// Counts the answer of a call `sent` as `operation` (its target, what its `Retry-After`
    /// holds: for EKS the request's method and path, named by the operation and the resources
    /// in the path; for EC2 the action, every request being `POST /`).
    fn count<T>(
        sent: Admitted<'_>,
        operation: &'static str,
        result: Result<T, CloudError>,
    ) -> Result<T, CloudError> {
        sent.answered(operation, result.as_ref().map(|_| ()));
        result
    }
}

#[cfg(test)]
mod tests {
    use contract::api::MachinePoolSpecCommon;

    use super::*;

    #[test]
    fn a_cloud_name_eks_refuses_is_an_invalid_spec() {
        let mut obj = crate::api::EKSMachinePool::new(
            "pool",
            crate::api::EKSMachinePoolSpec {
                common: MachinePoolSpecCommon {
                    machine_type: "m5.large".into(),
                    ..Default::default()
                },
                eks: Default::default(),
            },
        );
        obj.metadata.namespace = Some("team-a".into());
        let names = reconciler(Arc::new(Shared::default())).profile().names;
        assert_eq!(names.of(&obj).unwrap(), "team-a-pool");
        obj.spec.common.cloud_name = Some("bad name!".into());
        let err = names.of(&obj).unwrap_err().to_string();
        assert!(err.contains("spec.cloudName"), "{err}");
    }
}
