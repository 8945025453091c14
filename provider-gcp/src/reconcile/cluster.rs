//! The GKECluster on the generic InfraCluster reconciler ([`provider_runtime::infra_cluster`]):
//! the cluster's project, region, zones and network.
//!
//! What is GKE's here:
//! - **validate** ([`network_mode`], pure): a brought network (a VPC network and one
//!   subnetwork, by name) or a created one (the nodes' block, default 10.0.0.0/20, and the
//!   Pods and Services ranges);
//! - **brought network** ([`bring_your_own`]): two reads (the network, the subnetwork with its
//!   secondary ranges), nothing written, ever;
//! - **created network**: the three Compute services of [`crate::network`] walked forwards (a
//!   custom-mode VPC network, a subnetwork with the Pods and Services ranges, a Cloud Router with
//!   Cloud NAT for private nodes); Compute resources carry no labels, so the ownership tag is
//!   written into each one's `description` and read back from it; deletion walks them
//!   backwards, deleting only what is ours.
//!
//! The shared status, `NetworkReady`, the deletion policy and when to look again are the
//! kernel's.

use std::time::Duration;

use contract::cidr;
use contract::ownership::Owner;
use provider_runtime::cluster_objects::InfraOf as _;
use provider_runtime::infra_cluster::{InfraClusterCloud, NetworkMode, Reach, ReportOf};
use provider_runtime::walker::{self};
use provider_runtime::{Cleanup, PassContext, ProviderError};

use crate::api::{GKECluster, GKEClusterSpec};
use crate::network::GcpNetwork;
use crate::network::{
    self, Compute, DEFAULT_NODES_CIDR, DEFAULT_PODS_CIDR, DEFAULT_SERVICES_CIDR, Names, Scope,
    bring_your_own,
};
use crate::scope::{self, Infra};

/// The longest pause after a write before the next look.
const SETTLE: Duration = Duration::from_secs(3);

provider_runtime::infra_cluster!(GKE);

/// A network to create: the subnetwork's three blocks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreatedNetwork {
    /// The nodes' primary range.
    pub nodes: String,
    /// The Pods range.
    pub pods: String,
    /// The Services range.
    pub services: String,
}

/// Validates the network part of the spec (pure).
///
/// # Errors
/// A sentence naming the field.
pub fn network_mode(spec: &GKEClusterSpec) -> Result<NetworkMode<CreatedNetwork>, String> {
    let network = spec.common.network.clone().unwrap_or_default();
    if network.is_bring_your_own() {
        if network.id.is_none() {
            return Err(
                "spec.network.id (the VPC network) must be set with spec.network.subnetIDs on GKE"
                    .into(),
            );
        }
        if network.subnet_ids.len() != 1 {
            return Err(format!(
                "spec.network.subnetIDs must name exactly one subnetwork of {} on GKE, not {}",
                spec.common.region,
                network.subnet_ids.len()
            ));
        }
        return Ok(NetworkMode::Brought);
    }
    let nodes = network
        .cidr_block
        .unwrap_or_else(|| DEFAULT_NODES_CIDR.into());
    let range = |given: &Option<String>, default: &str| {
        given
            .clone()
            .filter(|r| r.contains('/'))
            .unwrap_or_else(|| default.to_string())
    };
    let pods = range(&spec.gke.pods_range, DEFAULT_PODS_CIDR);
    let services = range(&spec.gke.services_range, DEFAULT_SERVICES_CIDR);
    let blocks = [
        (
            "spec.network.cidrBlock",
            cidr::parse("spec.network.cidrBlock", &nodes, "10.0.0.0/20")?,
        ),
        (
            "spec.gke.podsRange",
            cidr::parse("spec.gke.podsRange", &pods, "10.0.0.0/20")?,
        ),
        (
            "spec.gke.servicesRange",
            cidr::parse("spec.gke.servicesRange", &services, "10.0.0.0/20")?,
        ),
    ];
    if !(8..=24).contains(&blocks[0].1.1) {
        return Err(format!(
            "spec.network.cidrBlock {nodes} must be from /8 to /24"
        ));
    }
    for (i, (a_field, a)) in blocks.iter().enumerate() {
        for (b_field, b) in &blocks[i + 1..] {
            if cidr::overlap(*a, *b) {
                return Err(format!(
                    "{a_field} and {b_field} overlap; give them separate blocks"
                ));
            }
        }
    }
    Ok(NetworkMode::Create(CreatedNetwork {
        nodes,
        pods,
        services,
    }))
}

impl InfraClusterCloud for GkeInfraCluster {
    type Object = GKECluster;
    type Clients = Compute;
    type Plan = CreatedNetwork;
    fn mode(&self, obj: &GKECluster) -> Result<NetworkMode<CreatedNetwork>, String> {
        network_mode(&obj.spec)
    }

    async fn connect(&self, reach: Reach<'_, GKECluster>) -> Result<Compute, ProviderError> {
        let (obj, calls) = (reach.object, reach.calls);
        let infra = Infra::from_own(&obj.spec);
        let clients =
            scope::clients_for(&self.shared, reach.client, reach.namespace, &infra).await?;
        Ok(Compute::new(
            clients,
            calls.clone(),
            infra.project,
            infra.region,
        ))
    }

    async fn observe_brought(&self, obj: &GKECluster, c: &Compute) -> ReportOf<GKECluster> {
        bring_your_own::observe(&obj.spec, c, self.shared.pacing.rest).await
    }

    async fn build(
        &self,
        obj: &GKECluster,
        _ctx: &PassContext,
        compute: &Compute,
        owner: Owner,
        plan: CreatedNetwork,
    ) -> Result<ReportOf<GKECluster>, ProviderError> {
        let infra = Infra::from_own(&obj.spec);
        let names = Names::new(&owner);
        let scope = Scope {
            compute,
            owner: &owner,
            names: names.clone(),
            plan: Some(&plan),
        };
        let timing = self.shared.pacing.timing(SETTLE);
        let walk = walker::build::<network::Service, _, network::Built>(&scope).await;
        let status = GcpNetwork {
            network: Some(names.network.clone()),
            subnetwork: Some(names.subnetwork.clone()),
            cidr_block: walk.built.subnet_cidr.clone().or(Some(plan.nodes.clone())),
            pods_range_name: Some(scope::DEFAULT_PODS_RANGE.into()),
            services_range_name: Some(scope::DEFAULT_SERVICES_RANGE.into()),
            router: Some(names.router.clone()),
            zones: infra.zones.clone(),
            managed: true,
        };
        let condition = walk.condition(contract::conditions::ConditionType::NetworkReady, |_| {
            format!(
                "VPC network {}, subnetwork {} ({}) and Cloud NAT {} ready in {}",
                names.network,
                names.subnetwork,
                plan.nodes,
                names.nat,
                infra.zones.join(", ")
            )
        });
        let network = Some(status.seen());
        Ok(walk.report(network, condition, timing, self.shared.pacing.rest))
    }

    async fn release(&self, _: &Compute, _: Owner) -> Result<Option<String>, ProviderError> {
        Ok(Some("Compute resources keep this Cluster's ownership mark in their descriptions, which GCP does not let change: a Cluster of the same namespace and name would take them as its own".into()))
    }

    async fn tear_down(&self, compute: &Compute, owner: Owner) -> Result<Cleanup, ProviderError> {
        let scope = Scope {
            compute,
            owner: &owner,
            names: Names::new(&owner),
            plan: None,
        };
        let removal = walker::tear_down::<network::Service, _>(&scope).await?;
        Ok(removal.cleanup(self.shared.pacing.timing(SETTLE)))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use contract::api::{ClusterSpecCommon, NetworkSpec};

    use super::*;
    use crate::api::GKEClusterOptions;

    fn spec(network: Option<NetworkSpec>) -> GKEClusterSpec {
        GKEClusterSpec {
            common: ClusterSpecCommon {
                region: "us-central1".into(),
                network,
                ..ClusterSpecCommon::default()
            },
            gke: GKEClusterOptions {
                project: "capi-project".into(),
                ..GKEClusterOptions::default()
            },
        }
    }

    #[test]
    fn no_network_means_a_created_one_with_the_default_ranges() {
        assert_eq!(
            network_mode(&spec(None)),
            Ok(NetworkMode::Create(CreatedNetwork {
                nodes: DEFAULT_NODES_CIDR.into(),
                pods: DEFAULT_PODS_CIDR.into(),
                services: DEFAULT_SERVICES_CIDR.into(),
            }))
        );
    }

    #[test]
    fn a_brought_network_needs_the_network_and_one_subnetwork() {
        let brought = |id: Option<&str>, subnets: &[&str]| {
            network_mode(&spec(Some(NetworkSpec {
                id: id.map(str::to_string),
                subnet_ids: subnets.iter().map(|s| s.to_string()).collect(),
                ..NetworkSpec::default()
            })))
        };
        assert_eq!(brought(Some("vpc"), &["nodes"]), Ok(NetworkMode::Brought));
        assert!(
            brought(None, &["nodes"])
                .unwrap_err()
                .starts_with("spec.network.id")
        );
        assert!(
            brought(Some("vpc"), &["a", "b"])
                .unwrap_err()
                .starts_with("spec.network.subnetIDs")
        );
    }

    #[test]
    fn overlapping_ranges_are_refused_naming_both_fields() {
        let mut s = spec(Some(NetworkSpec {
            cidr_block: Some("10.4.0.0/20".into()),
            ..NetworkSpec::default()
        }));
        let e = network_mode(&s).unwrap_err();
        assert!(
            e.contains("spec.network.cidrBlock") && e.contains("spec.gke.podsRange"),
            "{e}"
        );
        s.common.network = None;
        s.gke.services_range = Some("10.0.0.1/20".into());
        assert!(network_mode(&s).unwrap_err().contains("host bits"));
    }
}
