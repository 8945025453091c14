//! The EKSCluster on the generic InfraCluster reconciler
//! ([`provider_runtime::infra_cluster`]): the cluster's region, identity and network.
//!
//! What is EKS's here:
//!
//! - **validate** ([`network_mode`], pure): the spec brings a network (ids) or asks for one (a
//!   CIDR, default 10.0.0.0/16, over `spec.eks.availabilityZones` zones, default 2);
//! - **brought network**: three reads (subnets, VPC, route tables), nothing written, ever;
//! - **created network**: the EC2 services ([`crate::network`]) walked forwards; at rest each
//!   only reads: eight Describe calls per `--rest-interval` (VPCs, the VPC's two DNS attributes,
//!   subnets, internet gateways, NAT gateways, route tables, security groups); deletion walks
//!   them backwards, deleting only what carries the cluster's ownership tag;
//! - the status's `network` block.
//!
//! The shared status (failure domains, the `provisioned` milestone), `NetworkReady`, the
//! deletion policy and when to look again are the kernel's.

use std::time::Duration;

use contract::conditions::Reason;
use contract::naming;
use contract::ownership::Owner;
use kube::ResourceExt;
use provider_runtime::cluster_objects::InfraOf as _;
use provider_runtime::control_plane::ManagedControlPlane as _;
use provider_runtime::infra_cluster::{
    InfraClusterCloud, NetworkMode, NetworkReport, Reach, ReportOf,
};
use provider_runtime::{Cleanup, PassContext, ProviderError, walker};

use crate::api::{EKSCluster, EKSClusterSpec, EKSControlPlane};
use crate::network::AwsNetwork;
use crate::network::bring_your_own::{self, Brought};
use crate::network::cidr::{self, Ipv4Cidr};
use crate::network::ec2::Ec2;
use crate::network::{
    self, DEFAULT_CIDR, DEFAULT_ZONES, Desired, MIN_ZONES, Names, Scope, Teardown,
};
use crate::scope::{self, Infra};

/// The longest pause after a write before the next look (EC2 lists new resources within
/// seconds).
const SETTLE: Duration = Duration::from_secs(5);

provider_runtime::infra_cluster!(EKS);

/// The network the spec asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NetworkSpecMode {
    /// The user's network, by id: read only.
    BringYourOwn {
        /// `spec.network.id`.
        vpc: Option<String>,
        /// `spec.network.subnetIDs`.
        subnets: Vec<String>,
    },
    /// A network the provider creates and deletes.
    Create(CreatedNetwork),
}

/// A network to create.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CreatedNetwork {
    /// The VPC block.
    pub cidr: Ipv4Cidr,
    /// How many zones.
    pub zones: usize,
}

/// Validates the network part of the spec (pure). The CRD's rules reject most of this at
/// admission; this is the same check for objects admitted before them.
///
/// # Errors
/// A message naming the field.
pub fn network_mode(spec: &EKSClusterSpec) -> Result<NetworkSpecMode, String> {
    let network = spec.common.network.clone().unwrap_or_default();
    if network.is_bring_your_own() {
        return Ok(NetworkSpecMode::BringYourOwn {
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
    Ok(NetworkSpecMode::Create(CreatedNetwork { cidr, zones }))
}

impl EksInfraCluster {
    async fn eks_cluster_name(
        &self,
        ctx: &PassContext,
        namespace: &str,
        cluster: &str,
    ) -> Result<String, ProviderError> {
        Ok(
            match provider_runtime::cluster_objects::control_plane_of::<EKSControlPlane>(
                &ctx.client,
                &ctx.cluster,
            )
            .await?
            {
                Some(cp) => cp.cloud_cluster_name(cluster),
                None => naming::derive_cloud_name(namespace, cluster, &naming::EKS_CLUSTER),
            },
        )
    }
}

impl InfraClusterCloud for EksInfraCluster {
    type Object = EKSCluster;
    type Clients = Ec2;
    type Plan = CreatedNetwork;
    fn mode(&self, obj: &EKSCluster) -> Result<NetworkMode<CreatedNetwork>, String> {
        Ok(match network_mode(&obj.spec)? {
            NetworkSpecMode::BringYourOwn { .. } => NetworkMode::Brought,
            NetworkSpecMode::Create(plan) => NetworkMode::Create(plan),
        })
    }

    async fn connect(&self, reach: Reach<'_, EKSCluster>) -> Result<Ec2, ProviderError> {
        let (obj, calls) = (reach.object, reach.calls);
        let clients = scope::clients_for(
            &self.shared.clients,
            reach.client,
            reach.namespace,
            &Infra::from_infra_cluster(obj),
        )
        .await?;
        Ok(Ec2::new(clients.ec2.clone(), calls.clone()))
    }

    async fn observe_brought(&self, obj: &EKSCluster, ec2: &Ec2) -> ReportOf<EKSCluster> {
        let network = obj.spec.common.network.clone().unwrap_or_default();
        let brought = Brought {
            vpc: network.id.as_deref(),
            subnets: &network.subnet_ids,
            region: &obj.spec.common.region,
        };
        match bring_your_own::observe(ec2, &brought).await {
            Err(error) => NetworkReport::failed(error),
            Ok(Err(message)) => {
                NetworkReport::failed(ProviderError::terminal(Reason::InvalidSpec, message))
            }
            Ok(Ok(network)) => {
                let message = format!(
                    "using the brought VPC {} with {} subnets in {}",
                    network.vpc_id.as_deref().unwrap_or_default(),
                    network.subnets.len(),
                    network::zones(&network.subnets).join(", ")
                );
                NetworkReport::ready(network.seen(), message, self.shared.pacing.rest)
            }
        }
    }

    async fn build(
        &self,
        obj: &EKSCluster,
        ctx: &PassContext,
        ec2: &Ec2,
        owner: Owner,
        plan: CreatedNetwork,
    ) -> Result<ReportOf<EKSCluster>, ProviderError> {
        let (key, value) = owner.tag();
        let mut tags = obj.spec.common.additional_tags.0.clone();
        tags.insert(key, value);
        let desired = Desired {
            names: Names::new(owner.namespace(), owner.cluster()),
            eks_cluster_name: self
                .eks_cluster_name(ctx, owner.namespace(), owner.cluster())
                .await?,
            owner,
            cidr: plan.cidr,
            zones: plan.zones,
            tags,
            uid: obj.uid().unwrap_or_default(),
        };
        let previous = AwsNetwork::of(obj);
        let timing = self.shared.pacing.timing(SETTLE);
        let scope = Scope {
            ec2,
            desired: &desired,
            previous: previous.as_ref(),
            timing,
        };
        let outcome = walker::build::<network::Service, _, network::Built>(&scope).await;
        // A walk cut short by an error saw only part of the network: keep what status had.
        let network =
            (outcome.error.is_none() || previous.is_none()).then(|| outcome.built.status().seen());
        let condition = network::condition(&outcome);
        Ok(outcome.report(network, condition, timing, self.shared.pacing.rest))
    }

    async fn release(&self, ec2: &Ec2, owner: Owner) -> Result<Option<String>, ProviderError> {
        ec2.remove_tag(&owner.tag()).await?;
        Ok(None)
    }

    async fn tear_down(&self, ec2: &Ec2, owner: Owner) -> Result<Cleanup, ProviderError> {
        let timing = self.shared.pacing.timing(SETTLE);
        let removal = walker::tear_down::<network::Service, _>(&Teardown {
            ec2,
            owner: &owner,
            timing,
        })
        .await?;
        Ok(removal.cleanup(timing))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use contract::api::{ClusterSpecCommon, NetworkSpec};
    use provider_runtime::infra_cluster::ManagedInfraCluster;

    use super::*;
    use crate::api::EKSClusterOptions;
    use crate::network::AwsSubnet;

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
            Ok(NetworkSpecMode::Create(CreatedNetwork {
                cidr: "10.0.0.0/16".parse().unwrap(),
                zones: 2
            }))
        );
    }

    #[test]
    fn a_cidr_block_is_created_over_the_zones_asked_for() {
        assert_eq!(
            network_mode(&spec(cidr_net("172.20.0.0/18"), Some(3))),
            Ok(NetworkSpecMode::Create(CreatedNetwork {
                cidr: "172.20.0.0/18".parse().unwrap(),
                zones: 3
            }))
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
            Ok(NetworkSpecMode::BringYourOwn {
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
            Ok(NetworkSpecMode::BringYourOwn {
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

    #[test]
    fn the_status_is_the_shared_block_beside_the_eks_one_and_never_an_endpoint() {
        let network = AwsNetwork {
            vpc_id: Some("vpc-1".into()),
            subnets: ["z1", "z1", "z2"]
                .iter()
                .enumerate()
                .map(|(i, z)| AwsSubnet {
                    id: format!("subnet-{i}"),
                    availability_zone: z.to_string(),
                    public: i % 2 == 0,
                    cidr_block: None,
                })
                .collect(),
            managed: true,
            ..AwsNetwork::default()
        };
        let seen = network.seen();
        let mut common = contract::plan::infra_cluster_status(None, seen.shared.zones(), true);
        common.network = Some(seen.shared);
        let v = serde_json::to_value(EKSCluster::status_of(common, Some(seen.own))).unwrap();
        assert_eq!(v["network"]["id"], "vpc-1");
        assert_eq!(
            v["network"]["subnets"][0]["zones"],
            serde_json::json!(["z1"])
        );
        assert_eq!(v["failureDomains"].as_array().unwrap().len(), 2);
        assert_eq!(
            v["initialization"],
            serde_json::json!({"provisioned": true})
        );
        assert!(
            v.get("conditions").is_none() && v.get("controlPlaneEndpoint").is_none(),
            "{v}"
        );
    }
}
