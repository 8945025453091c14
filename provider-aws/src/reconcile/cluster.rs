//! The EKSCluster reconciler: the cluster's region, identity and network (the InfraCluster).
//!
//! observe → validate → plan → act → report, where "act" is the network's ordered services
//! ([`crate::network`]), each making at most one write per pass:
//!
//! - **validate** ([`network_mode`], pure): the spec brings a network (ids) or asks for one (a
//!   CIDR, default 10.0.0.0/16, over `spec.eks.availabilityZones` zones, default 2);
//! - **brought network**: three reads (subnets, VPC, route tables), nothing written, ever;
//! - **created network**: the services walked forwards; at rest each only reads: eight
//!   Describe calls per `rest_interval` (VPCs, the VPC's two DNS attributes, subnets, internet
//!   gateways, NAT gateways, route tables, security groups);
//! - **report** ([`status_for`], pure): `status.network`, one failure domain per zone used,
//!   `initialization.provisioned` and v1beta1 `ready` once every service is ready (milestones:
//!   they stay true afterwards; drift shows in `NetworkReady`), and the `NetworkReady` condition
//!   (`Ready` is the engine's summary of it).
//!
//! It never sets `spec.controlPlaneEndpoint` and waits for nothing from the control plane
//! (flexible endpoints, scenario 2): the EKSControlPlane publishes the endpoint.
//!
//! Deletion (core deletes the InfraCluster after the control plane) walks the services of a
//! created network backwards, deleting only what carries the cluster's ownership tag; a
//! brought network is left as it is and the finalizer goes at once.

use std::sync::Arc;
use std::time::Duration;

use contract::api::InfraClusterInitialization;
use contract::conditions::{ConditionType, DesiredCondition, Reason};
use contract::naming;
use kube::ResourceExt;
use provider_runtime::{Cleanup, CleanupContext, Pass, PassContext, ProviderError, Reconciler};

use crate::api::{EKSCluster, EKSClusterSpec, EKSClusterStatus, NetworkStatus};
use crate::network::bring_your_own::{self, Brought};
use crate::network::cidr::{self, Ipv4Cidr};
use crate::network::ec2::Ec2;
use crate::network::{
    self, DEFAULT_CIDR, DEFAULT_ZONES, Desired, MIN_ZONES, Names, Owner, Removal, Scope, Teardown,
    Timing, Wait,
};
use crate::scope::{self, Infra, Shared};

/// The longest pause after a write before the next look (EC2 lists new resources within
/// seconds).
const SETTLE: Duration = Duration::from_secs(5);

/// Reconciles EKSCluster.
pub struct ClusterReconciler {
    shared: Arc<Shared>,
}

impl ClusterReconciler {
    /// A reconciler sharing `shared`.
    pub fn new(shared: Arc<Shared>) -> Self {
        Self { shared }
    }

    fn timing(&self) -> Timing {
        Timing {
            settle: self.shared.poll_interval.min(SETTLE),
            poll: self.shared.poll_interval,
        }
    }
}

/// The network the spec asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NetworkMode {
    /// The user's network, by id: read only.
    BringYourOwn {
        /// `spec.network.id`.
        vpc: Option<String>,
        /// `spec.network.subnetIDs`.
        subnets: Vec<String>,
    },
    /// A network the provider creates and deletes.
    Create {
        /// The VPC block.
        cidr: Ipv4Cidr,
        /// How many zones.
        zones: usize,
    },
}

/// Validates the network part of the spec (pure). The CRD's rules reject most of this at
/// admission; this is the same check for objects admitted before them.
///
/// # Errors
/// A message naming the field.
pub fn network_mode(spec: &EKSClusterSpec) -> Result<NetworkMode, String> {
    let network = spec.common.network.clone().unwrap_or_default();
    if network.is_bring_your_own() {
        return Ok(NetworkMode::BringYourOwn {
            vpc: network.id,
            subnets: network.subnet_ids,
        });
    }
    let text = network.cidr_block.as_deref().unwrap_or(DEFAULT_CIDR);
    let cidr: Ipv4Cidr = cidr::parse(text).map_err(|e| format!("spec.network.cidrBlock: {e}"))?;
    if cidr.prefix_len() < cidr::MIN_PREFIX || cidr.prefix_len() > 24 {
        return Err(format!(
            "spec.network.cidrBlock {text} must be from /16 to /24"
        ));
    }
    let zones = spec
        .eks
        .as_ref()
        .and_then(|e| e.availability_zones)
        .map_or(Ok(DEFAULT_ZONES), usize::try_from);
    let zones = zones.map_err(|_| "spec.eks.availabilityZones must be positive".to_string())?;
    if zones < MIN_ZONES {
        return Err(format!(
            "spec.eks.availabilityZones must be at least {MIN_ZONES}: EKS needs subnets in two zones"
        ));
    }
    cidr::carve(cidr, zones)?;
    Ok(NetworkMode::Create { cidr, zones })
}

/// The status after a pass (pure): the network, its failure domains, and the milestones, which
/// once reached stay reached.
pub fn status_for(
    previous: Option<&EKSClusterStatus>,
    network: NetworkStatus,
    complete: bool,
) -> EKSClusterStatus {
    let reached = previous
        .and_then(|s| s.common.initialization.as_ref())
        .and_then(|i| i.provisioned)
        .unwrap_or(false)
        || complete;
    let mut status = EKSClusterStatus::default();
    status.common.initialization = reached.then_some(InfraClusterInitialization {
        provisioned: Some(true),
    });
    status.common.ready = reached;
    status.common.failure_domains = network::failure_domains(&network.subnets);
    status.network = Some(network);
    status
}

fn network_ready_false(reason: Reason, message: impl Into<String>) -> DesiredCondition {
    DesiredCondition::false_(ConditionType::NetworkReady, reason, message)
}

fn reason_of(error: &ProviderError) -> Reason {
    match error {
        ProviderError::Transient { reason, .. } | ProviderError::Terminal { reason, .. } => *reason,
        ProviderError::Kube(_) => Reason::CloudError,
    }
}

/// A pass that reports `error` as the network's state and keeps the status fields.
fn failed(error: ProviderError) -> Pass {
    Pass::new()
        .condition(network_ready_false(reason_of(&error), error.to_string()))
        .with_error(error)
}

impl ClusterReconciler {
    async fn eks_cluster_name(
        &self,
        ctx: &PassContext,
        namespace: &str,
        cluster: &str,
    ) -> Result<String, ProviderError> {
        Ok(
            match scope::control_plane_of(&ctx.client, &ctx.cluster).await? {
                Some(cp) => scope::eks_cluster_name(&cp, cluster),
                None => naming::derive_cloud_name(namespace, cluster, &naming::EKS_CLUSTER),
            },
        )
    }

    async fn bring_your_own(
        &self,
        obj: &EKSCluster,
        ec2: &Ec2,
        vpc: Option<&str>,
        subnets: &[String],
    ) -> Result<Pass, ProviderError> {
        let brought = Brought {
            vpc,
            subnets,
            region: &obj.spec.common.region,
        };
        match bring_your_own::observe(ec2, &brought).await {
            Err(error) => Ok(failed(error)),
            Ok(Err(message)) => Ok(failed(ProviderError::terminal(
                Reason::InvalidSpec,
                message,
            ))),
            Ok(Ok(network)) => {
                let zones: Vec<String> = network::failure_domains(&network.subnets)
                    .into_iter()
                    .map(|d| d.name)
                    .collect();
                let message = format!(
                    "using the brought VPC {} with {} subnets in {}",
                    network.vpc_id.as_deref().unwrap_or_default(),
                    network.subnets.len(),
                    zones.join(", ")
                );
                let status = status_for(obj.status.as_ref(), network, true);
                Ok(Pass::new()
                    .status(&status)
                    .condition(DesiredCondition::true_(
                        ConditionType::NetworkReady,
                        Reason::Ready,
                        message,
                    ))
                    .requeue_after(self.shared.rest_interval))
            }
        }
    }

    async fn create(
        &self,
        obj: &EKSCluster,
        ctx: &PassContext,
        ec2: &Ec2,
        owner: Owner,
        cidr: Ipv4Cidr,
        zones: usize,
    ) -> Result<Pass, ProviderError> {
        let (key, value) = owner.tag();
        let mut tags = obj.spec.common.additional_tags.0.clone();
        tags.insert(key, value);
        let desired = Desired {
            names: Names::new(owner.namespace(), owner.cluster()),
            eks_cluster_name: self
                .eks_cluster_name(ctx, owner.namespace(), owner.cluster())
                .await?,
            owner,
            cidr,
            zones,
            tags,
            uid: obj.uid().unwrap_or_default(),
        };
        let previous = obj.status.as_ref().and_then(|s| s.network.as_ref());
        let timing = self.timing();
        let scope = Scope {
            ec2,
            desired: &desired,
            previous,
            timing,
        };
        let outcome = network::build(&scope).await;
        // A walk cut short by an error saw only part of the network: keep what status had.
        let network = match (&outcome.error, previous) {
            (Some(_), Some(previous)) => previous.clone(),
            _ => outcome.built.status(),
        };
        let status = status_for(obj.status.as_ref(), network, outcome.complete());
        let pass = Pass::new()
            .status(&status)
            .condition(network::condition(&outcome));
        Ok(match outcome.error {
            Some((_, error)) => pass.with_error(error),
            None => pass.requeue_after(outcome.requeue(timing, self.shared.rest_interval)),
        })
    }
}

impl Reconciler<EKSCluster> for ClusterReconciler {
    async fn reconcile(
        &self,
        obj: Arc<EKSCluster>,
        ctx: &PassContext,
    ) -> Result<Pass, ProviderError> {
        let namespace = obj.namespace().unwrap_or_default();
        let owner = Owner::new(
            crate::scope::PROVIDER,
            namespace.clone(),
            ctx.cluster.name_any(),
        );
        let mode = match network_mode(&obj.spec) {
            Ok(mode) => mode,
            Err(message) => {
                return Ok(failed(ProviderError::terminal(
                    Reason::InvalidSpec,
                    message,
                )));
            }
        };
        let clients = match scope::clients_for(
            &self.shared.clients,
            &ctx.client,
            &namespace,
            &Infra::from_eks_cluster(&obj),
        )
        .await
        {
            Ok(clients) => clients,
            Err(error @ ProviderError::Kube(_)) => return Err(error),
            Err(error) => return Ok(failed(error)),
        };
        let ec2 = Ec2::new(clients.ec2.clone(), ctx.cloud_calls.clone());
        match mode {
            NetworkMode::BringYourOwn { vpc, subnets } => {
                self.bring_your_own(&obj, &ec2, vpc.as_deref(), &subnets)
                    .await
            }
            NetworkMode::Create { cidr, zones } => {
                self.create(&obj, ctx, &ec2, owner, cidr, zones).await
            }
        }
    }

    async fn cleanup(
        &self,
        obj: Arc<EKSCluster>,
        ctx: &CleanupContext,
    ) -> Result<Cleanup, ProviderError> {
        if matches!(
            network_mode(&obj.spec),
            Ok(NetworkMode::BringYourOwn { .. })
        ) {
            return Ok(Cleanup::Done);
        }
        let namespace = obj.namespace().unwrap_or_default();
        let created_something = obj
            .status
            .as_ref()
            .and_then(|s| s.network.as_ref())
            .is_some();
        let Some(cluster) = ctx.cluster_to_clean(created_something, "EKSCluster")? else {
            return Ok(Cleanup::Done);
        };
        let cluster = cluster.to_string();
        let owner = Owner::new(crate::scope::PROVIDER, namespace.clone(), cluster);
        let clients = scope::clients_for(
            &self.shared.clients,
            &ctx.client,
            &namespace,
            &Infra::from_eks_cluster(&obj),
        )
        .await?;
        let ec2 = Ec2::new(clients.ec2.clone(), ctx.cloud_calls.clone());
        let timing = self.timing();
        match network::tear_down(&Teardown {
            ec2: &ec2,
            owner: &owner,
            timing,
        })
        .await?
        {
            Removal::Gone => Ok(Cleanup::Done),
            Removal::Pending { message, wait } => {
                let after = match wait {
                    Wait::Settle => timing.settle,
                    Wait::Poll => timing.poll,
                };
                Ok(Cleanup::pending(after, message))
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use contract::api::{ClusterSpecCommon, NetworkSpec};

    use super::*;
    use crate::api::{EKSClusterOptions, SubnetStatus};

    fn spec(network: Option<NetworkSpec>, zones: Option<i32>) -> EKSClusterSpec {
        EKSClusterSpec {
            common: ClusterSpecCommon {
                region: "us-east-1".into(),
                network,
                ..ClusterSpecCommon::default()
            },
            eks: zones.map(|z| EKSClusterOptions {
                availability_zones: Some(z),
            }),
        }
    }

    fn cidr_net(c: &str) -> Option<NetworkSpec> {
        Some(NetworkSpec {
            cidr_block: Some(c.into()),
            ..NetworkSpec::default()
        })
    }

    #[test]
    fn no_network_means_a_created_slash_16_over_two_zones() {
        assert_eq!(
            network_mode(&spec(None, None)),
            Ok(NetworkMode::Create {
                cidr: "10.0.0.0/16".parse().unwrap(),
                zones: 2
            })
        );
    }

    #[test]
    fn a_cidr_block_is_created_over_the_zones_asked_for() {
        assert_eq!(
            network_mode(&spec(cidr_net("172.20.0.0/18"), Some(3))),
            Ok(NetworkMode::Create {
                cidr: "172.20.0.0/18".parse().unwrap(),
                zones: 3
            })
        );
    }

    #[test]
    fn ids_mean_a_brought_network() {
        let n = NetworkSpec {
            subnet_ids: vec!["subnet-1".into(), "subnet-2".into()],
            ..NetworkSpec::default()
        };
        assert_eq!(
            network_mode(&spec(Some(n), Some(3))),
            Ok(NetworkMode::BringYourOwn {
                vpc: None,
                subnets: vec!["subnet-1".into(), "subnet-2".into()]
            })
        );
        let n = NetworkSpec {
            id: Some("vpc-1".into()),
            ..NetworkSpec::default()
        };
        assert_eq!(
            network_mode(&spec(Some(n), None)),
            Ok(NetworkMode::BringYourOwn {
                vpc: Some("vpc-1".into()),
                subnets: vec![]
            })
        );
    }

    #[test]
    fn bad_blocks_and_zone_counts_are_refused_naming_the_field() {
        for (network, zones, field) in [
            (cidr_net("fd00::/8"), None, "spec.network.cidrBlock"),
            (cidr_net("10.0.0.0/8"), None, "spec.network.cidrBlock"),
            (cidr_net("10.0.0.0/26"), None, "spec.network.cidrBlock"),
            (cidr_net("10.0.0.0/24"), Some(4), "spec.network.cidrBlock"),
            (None, Some(1), "spec.eks.availabilityZones"),
            (None, Some(-1), "spec.eks.availabilityZones"),
        ] {
            let err = network_mode(&spec(network.clone(), zones)).unwrap_err();
            assert!(err.starts_with(field), "{network:?} {zones:?}: {err}");
        }
    }

    fn net(zones: &[&str]) -> NetworkStatus {
        NetworkStatus {
            vpc_id: Some("vpc-1".into()),
            subnets: zones
                .iter()
                .enumerate()
                .map(|(i, z)| SubnetStatus {
                    id: format!("subnet-{i}"),
                    availability_zone: z.to_string(),
                    public: i % 2 == 0,
                    cidr_block: None,
                })
                .collect(),
            managed: true,
            ..NetworkStatus::default()
        }
    }

    #[test]
    fn an_incomplete_network_is_not_provisioned_but_reports_its_zones() {
        let s = status_for(None, net(&["z1", "z1", "z2"]), false);
        assert_eq!(s.common.initialization, None);
        assert!(!s.common.ready);
        assert_eq!(
            s.common
                .failure_domains
                .iter()
                .map(|d| d.name.as_str())
                .collect::<Vec<_>>(),
            ["z1", "z2"]
        );
        assert_eq!(s.network.unwrap().vpc_id.as_deref(), Some("vpc-1"));
    }

    #[test]
    fn a_complete_network_is_provisioned_and_ready_in_both_contracts() {
        let s = status_for(None, net(&["z1", "z2"]), true);
        assert_eq!(
            s.common.initialization.and_then(|i| i.provisioned),
            Some(true)
        );
        assert!(s.common.ready);
    }

    #[test]
    fn provisioned_is_a_milestone_that_drift_does_not_undo() {
        let before = status_for(None, net(&["z1", "z2"]), true);
        let after = status_for(Some(&before), net(&["z1"]), false);
        assert_eq!(
            after.common.initialization.and_then(|i| i.provisioned),
            Some(true)
        );
        assert!(after.common.ready);
        assert_eq!(after.common.failure_domains.len(), 1);
    }

    #[test]
    fn the_status_never_carries_conditions_or_an_endpoint() {
        let s = status_for(None, net(&["z1", "z2"]), true);
        let v = serde_json::to_value(&s).unwrap();
        assert!(v.get("conditions").is_none());
        assert!(v.get("controlPlaneEndpoint").is_none());
        assert_eq!(
            v["failureDomains"][0],
            serde_json::json!({"name": "z1", "controlPlane": true})
        );
        assert_eq!(
            v["initialization"],
            serde_json::json!({"provisioned": true})
        );
    }
}
