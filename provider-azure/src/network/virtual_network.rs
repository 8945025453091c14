//! The virtual network service: the cluster's virtual network with the nodes' subnet
//! ([`SUBNET`]), created and deleted only when it carries the cluster's ownership tag.

use contract::conditions::Reason;
use contract::ownership::Ownership;
use provider_runtime::walker::{Progress, Removal};
use provider_runtime::{CloudError, ProviderError};
use reqwest::Method;
use serde_json::json;

use super::{Built, SUBNET, Scope, after_delete};
use crate::client;
use crate::client::answers::{Subnet, VirtualNetwork, tags};
use crate::reconcile::cluster::CreatedNetwork;

/// One build turn of the virtual network service: read the virtual network and its subnet, and
/// create both when the network is missing.
pub(super) async fn reconcile(
    s: &Scope<'_>,
    plan: &CreatedNetwork,
    built: &mut Built,
) -> Result<Progress, ProviderError> {
    let n = s.net;
    if !built.group {
        return Ok(Progress::Blocked("waiting for the resource group".into()));
    }
    let found = n
        .arm
        .get::<VirtualNetwork>(
            &n.calls,
            "VirtualNetworks_Get",
            &s.vnet_path(),
            client::NETWORK,
        )
        .await?;
    if let Some(v) = found {
        match s.owner.decide(&tags(&v.tags), false) {
            Ownership::Ours => {}
            Ownership::Adopt | Ownership::Conflict(_) => {
                return Err(ProviderError::terminal(
                    Reason::NameConflict,
                    format!(
                        "the virtual network {} already exists in resource group {} and was not created for this cluster; nothing was changed. Delete or rename it, or bring the network by id instead (spec.network.subnetIDs)",
                        s.vnet, n.infra.resource_group
                    ),
                ));
            }
        }
        let subnet = v
            .properties
            .subnets
            .iter()
            .flatten()
            .find(|x| x.name == SUBNET);
        built.subnet_id = subnet.map(|x| x.id.clone());
        built.subnet_cidr = subnet.and_then(Subnet::address_prefix);
        let state = v.properties.provisioning_state.as_str();
        return Ok(match state {
            "Succeeded" if built.subnet_id.is_some() => Progress::Ready,
            "Succeeded" => Progress::Blocked(format!(
                "the virtual network {} has no subnet {SUBNET}",
                s.vnet
            )),
            state => Progress::waiting(format!("the virtual network {} is {state}", s.vnet)),
        });
    }
    let body = json!({
        "location": n.infra.location,
        "tags": s.tags(),
        "properties": {
            "addressSpace": { "addressPrefixes": [plan.vnet] },
            "subnets": [{ "name": SUBNET, "properties": { "addressPrefix": plan.subnet } }],
        }
    });
    match n
        .arm
        .call(
            &n.calls,
            "VirtualNetworks_CreateOrUpdate",
            Method::PUT,
            &s.vnet_path(),
            client::NETWORK,
            Some(&body),
            None,
        )
        .await
    {
        Ok(_) => Ok(Progress::creating(format!(
            "creating the virtual network {}",
            s.vnet
        ))),
        Err(f) if matches!(f.error, CloudError::InUse(_)) => Ok(Progress::waiting(format!(
            "the virtual network {} is being changed",
            s.vnet
        ))),
        Err(f) => Err(f.into()),
    }
}

/// One tear-down turn of the virtual network service: delete the virtual network when it is
/// ours.
pub(super) async fn delete(s: &Scope<'_>) -> Result<Removal, ProviderError> {
    let n = s.net;
    let found = n
        .arm
        .get::<VirtualNetwork>(
            &n.calls,
            "VirtualNetworks_Get",
            &s.vnet_path(),
            client::NETWORK,
        )
        .await?;
    match found {
        Some(v) if s.owner.owns(&tags(&v.tags)) => {
            if v.properties.provisioning_state == "Deleting" {
                return Ok(Removal::waiting(format!(
                    "the virtual network {} is being deleted",
                    s.vnet
                )));
            }
            after_delete(
                n.arm
                    .call(
                        &n.calls,
                        "VirtualNetworks_Delete",
                        Method::DELETE,
                        &s.vnet_path(),
                        client::NETWORK,
                        None,
                        None,
                    )
                    .await,
                format!("virtual network {}", s.vnet),
            )
        }
        _ => Ok(Removal::Gone),
    }
}
