//! The AKSCluster on the generic InfraCluster reconciler ([`provider_runtime::infra_cluster`]):
//! the cluster's subscription, resource group, location, zones and network.
//!
//! What is AKS's here:
//! - **validate** ([`network_mode`], pure): a brought network (one subnet, by ARM id) or a
//!   created one (the virtual network's block, default 10.224.0.0/12; the nodes' subnet is its
//!   first /16);
//! - **brought network** ([`network::bring_your_own`]): two reads (the resource group, the
//!   subnet), nothing written, ever;
//! - **created network**: the ARM services ([`crate::network`]) walked forwards: the resource
//!   group (used as it is when it exists; created, tagged as ours, when it does not) and a
//!   virtual network with the nodes' subnet (tagged as ours); deletion walks them backwards,
//!   deleting only what is ours, and the resource group only once no managed cluster is left in
//!   it.
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

use crate::api::{AKSCluster, AKSClusterSpec};
use crate::network::AzureNetwork;
use crate::network::{self, DEFAULT_VNET_CIDR, Network, SUBNET, Scope, bring_your_own, vnet_name};
use crate::scope::{self, Infra};

/// The longest pause after a write before the next look.
const SETTLE: Duration = Duration::from_secs(3);

provider_runtime::infra_cluster!(AKS);

/// A network to create: the virtual network's block and the nodes' subnet's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreatedNetwork {
    /// The virtual network's address space.
    pub vnet: String,
    /// The nodes' subnet.
    pub subnet: String,
}

/// Validates the network part of the spec (pure).
///
/// # Errors
/// A sentence naming the field.
pub fn network_mode(spec: &AKSClusterSpec) -> Result<NetworkMode<CreatedNetwork>, String> {
    let network = spec.common.network.clone().unwrap_or_default();
    if network.is_bring_your_own() {
        if network.subnet_ids.len() != 1 {
            return Err(format!(
                "spec.network.subnetIDs must name exactly one subnet (its ARM id) on AKS, not {}",
                network.subnet_ids.len()
            ));
        }
        if let Some(vnet) = &network.id
            && !network.subnet_ids[0]
                .to_ascii_lowercase()
                .starts_with(&format!("{}/subnets/", vnet.to_ascii_lowercase()))
        {
            return Err(format!(
                "the subnet {} (spec.network.subnetIDs) is not in the virtual network {vnet} (spec.network.id)",
                network.subnet_ids[0]
            ));
        }
        return Ok(NetworkMode::Brought);
    }
    let vnet = network
        .cidr_block
        .unwrap_or_else(|| DEFAULT_VNET_CIDR.into());
    let (base, prefix) = cidr::parse("spec.network.cidrBlock", &vnet, "10.224.0.0/12")?;
    if !(8..=24).contains(&prefix) {
        return Err(format!(
            "spec.network.cidrBlock {vnet} must be from /8 to /24"
        ));
    }
    let subnet_prefix = prefix.max(16);
    let subnet = cidr::block(base, 0, subnet_prefix);
    Ok(NetworkMode::Create(CreatedNetwork { vnet, subnet }))
}

impl InfraClusterCloud for AksInfraCluster {
    type Object = AKSCluster;
    type Clients = Network;
    type Plan = CreatedNetwork;
    fn mode(&self, obj: &AKSCluster) -> Result<NetworkMode<CreatedNetwork>, String> {
        network_mode(&obj.spec)
    }

    async fn connect(&self, reach: Reach<'_, AKSCluster>) -> Result<Network, ProviderError> {
        let (obj, calls) = (reach.object, reach.calls);
        let infra = Infra::from_own(&obj.spec);
        let arm = scope::arm_for(&self.shared, reach.client, reach.namespace, &infra).await?;
        Ok(Network {
            arm,
            calls: calls.clone(),
            infra,
        })
    }

    async fn observe_brought(&self, _obj: &AKSCluster, n: &Network) -> ReportOf<AKSCluster> {
        bring_your_own::observe(n, self.shared.pacing.rest).await
    }

    async fn build(
        &self,
        _obj: &AKSCluster,
        _ctx: &PassContext,
        net: &Network,
        owner: Owner,
        plan: CreatedNetwork,
    ) -> Result<ReportOf<AKSCluster>, ProviderError> {
        let scope = Scope {
            net,
            owner: &owner,
            vnet: vnet_name(&owner),
            plan: Some(&plan),
        };
        let walk = walker::build::<network::Service, _, network::Built>(&scope).await;
        let status = AzureNetwork {
            resource_group: Some(net.infra.resource_group.clone()),
            resource_group_managed: walk.built.group_ours,
            virtual_network: Some(scope.vnet_path()),
            network_cidr: Some(plan.vnet.clone()),
            subnet: walk.built.subnet_id.clone(),
            cidr_block: walk.built.subnet_cidr.clone().or(Some(plan.subnet.clone())),
            zones: net.infra.zones.clone(),
            managed: true,
        };
        let condition = walk.condition(contract::conditions::ConditionType::NetworkReady, |_| {
            format!(
                "virtual network {} with subnet {SUBNET} ({}) ready in resource group {}, zones {}",
                scope.vnet,
                plan.subnet,
                net.infra.resource_group,
                net.infra.zones.join(", ")
            )
        });
        let timing = self.shared.pacing.timing(SETTLE);
        let network = Some(status.seen());
        Ok(walk.report(network, condition, timing, self.shared.pacing.rest))
    }

    async fn release(&self, net: &Network, owner: Owner) -> Result<Option<String>, ProviderError> {
        let scope = Scope {
            net,
            owner: &owner,
            vnet: vnet_name(&owner),
            plan: None,
        };
        network::release(&scope).await?;
        Ok(None)
    }

    async fn tear_down(&self, net: &Network, owner: Owner) -> Result<Cleanup, ProviderError> {
        let scope = Scope {
            net,
            owner: &owner,
            vnet: vnet_name(&owner),
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
    use crate::api::AKSClusterOptions;

    fn spec(network: Option<NetworkSpec>) -> AKSClusterSpec {
        AKSClusterSpec {
            common: ClusterSpecCommon {
                region: "eastus".into(),
                network,
                ..ClusterSpecCommon::default()
            },
            aks: AKSClusterOptions {
                subscription_id: "00000000-0000-0000-0000-000000000000".into(),
                resource_group: "rg".into(),
                zones: vec![],
            },
        }
    }

    #[test]
    fn no_network_means_a_created_one_whose_subnet_is_the_first_slash_16() {
        assert_eq!(
            network_mode(&spec(None)),
            Ok(NetworkMode::Create(CreatedNetwork {
                vnet: DEFAULT_VNET_CIDR.into(),
                subnet: "10.224.0.0/16".into()
            }))
        );
        let small = network_mode(&spec(Some(NetworkSpec {
            cidr_block: Some("10.1.2.0/24".into()),
            ..NetworkSpec::default()
        })));
        assert_eq!(
            small,
            Ok(NetworkMode::Create(CreatedNetwork {
                vnet: "10.1.2.0/24".into(),
                subnet: "10.1.2.0/24".into()
            }))
        );
        let bad = network_mode(&spec(Some(NetworkSpec {
            cidr_block: Some("10.1.2.3/16".into()),
            ..NetworkSpec::default()
        })));
        assert!(bad.unwrap_err().contains("host bits"));
    }

    #[test]
    fn a_brought_subnet_must_sit_in_the_brought_network() {
        let vnet =
            "/subscriptions/s/resourceGroups/g/providers/Microsoft.Network/virtualNetworks/v";
        let brought = |id: Option<&str>, subnet: &str| {
            network_mode(&spec(Some(NetworkSpec {
                id: id.map(String::from),
                subnet_ids: vec![subnet.into()],
                ..NetworkSpec::default()
            })))
        };
        assert_eq!(
            brought(Some(vnet), &format!("{vnet}/subnets/nodes")),
            Ok(NetworkMode::Brought)
        );
        assert_eq!(
            brought(None, &format!("{vnet}/subnets/nodes")),
            Ok(NetworkMode::Brought)
        );
        assert!(brought(Some(vnet), "/subscriptions/s/resourceGroups/g/providers/Microsoft.Network/virtualNetworks/other/subnets/nodes").is_err());
    }
}
