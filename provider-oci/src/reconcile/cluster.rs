//! The OKECluster on the generic InfraCluster reconciler ([`provider_runtime::infra_cluster`]):
//! the cluster's compartment, region, availability domains and network.
//!
//! What is OKE's here:
//! - **validate** ([`network_mode`], pure): a brought network (a VCN and its subnets, by OCID) or
//!   a created one (the VCN's block, default 10.0.0.0/16: the endpoint subnet is its first
//!   quarter, the load balancers' its second, the nodes' its second half);
//! - **brought network** ([`crate::network::bring_your_own`]): reads of the VCN and its subnets,
//!   nothing written, ever;
//! - **created network**: the Core Services services ([`crate::network`]) walked forwards, as
//!   OKE's quick create lays a network out; deletion walks them backwards, deleting only what is
//!   ours.
//!
//! The shared status, `NetworkReady`, the deletion policy and when to look again are the
//! kernel's.

use std::time::Duration;

use contract::cidr;
use contract::conditions::Reason;
use contract::ownership::Owner;
use kube::ResourceExt;
use provider_runtime::cluster_objects::InfraOf as _;
use provider_runtime::infra_cluster::{InfraClusterCloud, NetworkMode, Reach, ReportOf};
use provider_runtime::walker::{self};
use provider_runtime::{Cleanup, PassContext, ProviderError};

use crate::api::{OKECluster, OKEClusterSpec};
use crate::network::{self, Network, Scope, bring_your_own};
use crate::scope::{self, Infra};

/// The default block of a created VCN.
pub const DEFAULT_VCN_CIDR: &str = "10.0.0.0/16";

/// The longest pause after a write before the next look.
const SETTLE: Duration = Duration::from_secs(3);

provider_runtime::infra_cluster!(OKE);

/// A network to create: the VCN's block and its three subnets'.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreatedNetwork {
    /// The VCN's block.
    pub vcn: String,
    /// The API endpoint's subnet (public).
    pub endpoint: String,
    /// The Service load balancers' subnet (public).
    pub lb: String,
    /// The nodes' subnet (private).
    pub nodes: String,
}

/// Validates the network part of the spec (pure).
///
/// # Errors
/// A sentence naming the field.
pub fn network_mode(spec: &OKEClusterSpec) -> Result<NetworkMode<CreatedNetwork>, String> {
    let network = spec.common.network.clone().unwrap_or_default();
    if network.is_bring_your_own() {
        if network.id.is_none() {
            return Err(
                "spec.network.id must name the VCN (its OCID) of the brought subnets on OKE".into(),
            );
        }
        if network.subnet_ids.is_empty() {
            return Err(
                "spec.network.subnetIDs must name the nodes' subnets (their OCIDs) on OKE".into(),
            );
        }
        return Ok(NetworkMode::Brought);
    }
    let vcn = network
        .cidr_block
        .unwrap_or_else(|| DEFAULT_VCN_CIDR.into());
    let (base, prefix) = cidr::parse("spec.network.cidrBlock", &vcn, DEFAULT_VCN_CIDR)?;
    if !(16..=24).contains(&prefix) {
        return Err(format!(
            "spec.network.cidrBlock {vcn} must be from /16 to /24 on OKE"
        ));
    }
    let size = 1u32 << (32 - u32::from(prefix));
    Ok(NetworkMode::Create(CreatedNetwork {
        endpoint: cidr::block(base, 0, prefix + 2),
        lb: cidr::block(base, size / 4, prefix + 2),
        nodes: cidr::block(base, size / 2, prefix + 1),
        vcn,
    }))
}

impl InfraClusterCloud for OkeInfraCluster {
    type Object = OKECluster;
    type Clients = Network;
    type Plan = CreatedNetwork;
    fn mode(&self, obj: &OKECluster) -> Result<NetworkMode<CreatedNetwork>, String> {
        network_mode(&obj.spec)
    }

    async fn connect(&self, reach: Reach<'_, OKECluster>) -> Result<Network, ProviderError> {
        let (obj, calls) = (reach.object, reach.calls);
        let mut infra = Infra::from_own(&obj.spec);
        let oci = scope::oci_for(&self.shared, reach.client, reach.namespace, &infra).await?;
        let region_ads = self
            .shared
            .availability_domains(&oci, calls, &infra.compartment)
            .await?;
        if infra.availability_domains.is_empty() {
            infra.availability_domains = region_ads;
        } else if let Some(unknown) = infra
            .availability_domains
            .iter()
            .find(|a| !region_ads.contains(a))
        {
            return Err(ProviderError::terminal(
                Reason::InvalidSpec,
                format!(
                    "spec.oke.availabilityDomains names {unknown}, which is not an availability domain of {} ({})",
                    infra.region,
                    region_ads.join(", ")
                ),
            ));
        }
        Ok(Network {
            oci,
            calls: calls.clone(),
            infra,
            uid: obj.uid().unwrap_or_default(),
            recorded_vcn: obj
                .status
                .as_ref()
                .and_then(|s| s.common.network.as_ref())
                .filter(|n| n.managed && !n.id.is_empty())
                .map(|n| n.id.clone()),
        })
    }

    async fn observe_brought(&self, _obj: &OKECluster, n: &Network) -> ReportOf<OKECluster> {
        bring_your_own::observe(n, self.shared.pacing.rest).await
    }

    async fn build(
        &self,
        _obj: &OKECluster,
        _ctx: &PassContext,
        net: &Network,
        owner: Owner,
        plan: CreatedNetwork,
    ) -> Result<ReportOf<OKECluster>, ProviderError> {
        let scope = Scope::new(net, &owner, Some(&plan));
        let walk = walker::build::<network::Service, _, network::Built>(&scope).await;
        let status = walk.built.status(&plan, &net.infra.availability_domains);
        let condition = network::condition(&walk, &scope, &plan);
        let timing = self.shared.pacing.timing(SETTLE);
        Ok(walk.report(
            Some(status.seen()),
            condition,
            timing,
            self.shared.pacing.rest,
        ))
    }

    async fn release(&self, net: &Network, owner: Owner) -> Result<Option<String>, ProviderError> {
        network::release(Scope::new(net, &owner, None)).await?;
        Ok(None)
    }

    async fn tear_down(&self, net: &Network, owner: Owner) -> Result<Cleanup, ProviderError> {
        let removal = network::tear_down(Scope::new(net, &owner, None)).await?;
        Ok(removal.cleanup(self.shared.pacing.timing(SETTLE)))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use contract::api::{ClusterSpecCommon, NetworkSpec};

    use super::*;
    use crate::api::OKEClusterOptions;

    fn spec(network: Option<NetworkSpec>) -> OKEClusterSpec {
        OKEClusterSpec {
            common: ClusterSpecCommon {
                region: "us-ashburn-1".into(),
                network,
                ..ClusterSpecCommon::default()
            },
            oke: OKEClusterOptions {
                compartment_id: "ocid1.compartment.oc1..c".into(),
                ..OKEClusterOptions::default()
            },
        }
    }

    #[test]
    fn a_created_network_splits_its_block_into_endpoint_load_balancer_and_node_subnets() {
        assert_eq!(
            network_mode(&spec(None)),
            Ok(NetworkMode::Create(CreatedNetwork {
                vcn: DEFAULT_VCN_CIDR.into(),
                endpoint: "10.0.0.0/18".into(),
                lb: "10.0.64.0/18".into(),
                nodes: "10.0.128.0/17".into(),
            }))
        );
        let small = network_mode(&spec(Some(NetworkSpec {
            cidr_block: Some("10.1.2.0/24".into()),
            ..NetworkSpec::default()
        })));
        assert_eq!(
            small,
            Ok(NetworkMode::Create(CreatedNetwork {
                vcn: "10.1.2.0/24".into(),
                endpoint: "10.1.2.0/26".into(),
                lb: "10.1.2.64/26".into(),
                nodes: "10.1.2.128/25".into(),
            }))
        );
        assert!(
            network_mode(&spec(Some(NetworkSpec {
                cidr_block: Some("10.0.0.0/8".into()),
                ..NetworkSpec::default()
            })))
            .unwrap_err()
            .contains("/16 to /24")
        );
    }

    #[test]
    fn a_brought_network_needs_its_vcn_and_node_subnets() {
        let only_subnets = network_mode(&spec(Some(NetworkSpec {
            subnet_ids: vec!["ocid1.subnet.oc1.iad.a".into()],
            ..NetworkSpec::default()
        })));
        assert!(only_subnets.unwrap_err().contains("spec.network.id"));
        assert_eq!(
            network_mode(&spec(Some(NetworkSpec {
                id: Some("ocid1.vcn.oc1.iad.v".into()),
                subnet_ids: vec!["ocid1.subnet.oc1.iad.a".into()],
                ..NetworkSpec::default()
            }))),
            Ok(NetworkMode::Brought)
        );
    }
}
