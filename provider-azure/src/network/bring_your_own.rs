//! A network the user brings (`spec.network.subnetIDs`, one subnet by ARM id): read only.
//!
//! The provider checks that the resource group exists and that the subnet can be read, and
//! learns the subnet's block and virtual network. It creates, changes and deletes nothing.

use std::time::Duration;

use contract::conditions::Reason;
use provider_runtime::infra_cluster::{NetworkReport, ReportOf};
use provider_runtime::{CloudError, ProviderError};

use super::AzureNetwork;
use super::Network;
use crate::api::AKSCluster;
use crate::client;
use crate::client::answers::{ResourceGroup, Subnet};
use crate::reconcile::last_segment;

/// Reads the brought network: the resource group, then the subnet. A missing or unreadable one
/// fails the pass with `InvalidSpec`; once both are there the network is ready, to be looked at
/// again after `rest_interval`.
pub async fn observe(n: &Network, rest_interval: Duration) -> ReportOf<AKSCluster> {
    let invalid =
        |m: String| NetworkReport::failed(ProviderError::terminal(Reason::InvalidSpec, m));
    match n
        .arm
        .get::<ResourceGroup>(
            &n.calls,
            "ResourceGroups_Get",
            &n.arm.group_path(&n.infra.resource_group),
            client::RESOURCES,
        )
        .await
    {
        Err(f) => return NetworkReport::failed(f.into()),
        Ok(None) => {
            return invalid(format!(
                "the resource group {} (spec.aks.resourceGroup) does not exist in subscription {}; create it, or let the provider create the network (spec.network.cidrBlock)",
                n.infra.resource_group,
                n.arm.subscription()
            ));
        }
        Ok(Some(_)) => {}
    }
    let subnet = match n
        .arm
        .get::<Subnet>(&n.calls, "Subnets_Get", &n.infra.subnet, client::NETWORK)
        .await
    {
        Err(f) if matches!(f.error, CloudError::Invalid { .. }) => {
            return invalid(format!(
                "the subnet {} (spec.network.subnetIDs) cannot be read: {}",
                n.infra.subnet, f.error
            ));
        }
        Err(f) => return NetworkReport::failed(f.into()),
        Ok(None) => {
            return invalid(format!(
                "the subnet {} (spec.network.subnetIDs) does not exist",
                n.infra.subnet
            ));
        }
        Ok(Some(s)) => s,
    };
    let vnet = n
        .infra
        .subnet
        .rsplit_once("/subnets/")
        .map(|(v, _)| v.to_string());
    let status = AzureNetwork {
        resource_group: Some(n.infra.resource_group.clone()),
        resource_group_managed: false,
        virtual_network: vnet.clone(),
        network_cidr: None,
        subnet: Some(n.infra.subnet.clone()),
        cidr_block: subnet.address_prefix(),
        zones: n.infra.zones.clone(),
        managed: false,
    };
    let message = format!(
        "using the brought subnet {} of {} in zones {}",
        last_segment(&n.infra.subnet),
        vnet.as_deref().map_or("its virtual network", last_segment),
        n.infra.zones.join(", ")
    );
    NetworkReport::ready(status.seen(), message, rest_interval)
}
