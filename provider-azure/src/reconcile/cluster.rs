//! The AKSCluster on the generic InfraCluster reconciler ([`provider_runtime::infra_cluster`]):
//! the cluster's subscription, resource group, location, zones and network.
//!
//! What is AKS's here:
//! - **validate** ([`network_mode`], pure): a brought network (one subnet, by ARM id) or a
//!   created one (the virtual network's block, default 10.224.0.0/12; the nodes' subnet is its
//!   first /16);
//! - **brought network**: two reads (the resource group, the subnet), nothing written, ever;
//! - **created network**: two services walked forwards: the resource group (used as it is when it
//!   exists; created, tagged as ours, when it does not) and a virtual network with the nodes'
//!   subnet (tagged as ours); deletion walks them backwards, deleting only what is ours, and the
//!   resource group only once no managed cluster is left in it.
//!
//! The shared status, `NetworkReady`, the deletion policy and when to look again are the
//! kernel's.

use std::sync::Arc;
use std::time::Duration;

use contract::api::{ClusterSpecCommon, InfraClusterStatusCommon};
use contract::cidr;
use contract::conditions::Reason;
use contract::naming::{self, NameLimits};
use contract::ownership::{Owner, Ownership};
use kube::ResourceExt;
use provider_runtime::CloudCalls;
use provider_runtime::infra_cluster::{
    InfraClusterCloud, InfraClusterReconciler, ManagedInfraCluster, NetworkMode, NetworkReport,
};
use provider_runtime::walker::{self, Builds, Progress, Removal, Service, TearsDown, Timing};
use provider_runtime::{Cleanup, CloudError, PassContext, ProviderError};
use reqwest::Method;
use serde_json::{Value, json};

use super::tags_of;
use crate::api::{AKSCluster, AKSClusterSpec, AKSClusterStatus, AKSNetworkStatus};
use crate::arm::{self, Arm};
use crate::scope::{self, Infra, Shared};

/// The default address space of a created virtual network (AKS's own default).
pub const DEFAULT_VNET_CIDR: &str = "10.224.0.0/12";

/// The nodes' subnet of a created network.
pub const SUBNET: &str = "nodes";

/// The longest pause after a write before the next look.
const SETTLE: Duration = Duration::from_secs(3);

/// Virtual network names the provider derives (`-vnet` follows): Azure allows 64.
const BASE_NAME: NameLimits = NameLimits {
    what: "Azure virtual network name",
    max_len: 59,
    punctuation: "-_.",
    first: naming::FirstChar::Alphanumeric,
    must_end_alphanumeric: true,
    lowercase: false,
};

/// The AKSCluster reconciler.
pub fn reconciler(shared: Arc<Shared>) -> InfraClusterReconciler<AksInfraCluster> {
    InfraClusterReconciler::new(scope::PROVIDER, AksInfraCluster { shared })
}

impl ManagedInfraCluster for AKSCluster {
    fn spec_common(&self) -> &ClusterSpecCommon {
        &self.spec.common
    }

    fn status_common(&self) -> Option<&InfraClusterStatusCommon> {
        self.status.as_ref().map(|s| &s.common)
    }
}

/// AKS's network, for the generic InfraCluster reconciler.
pub struct AksInfraCluster {
    shared: Arc<Shared>,
}

impl AksInfraCluster {
    fn timing(&self) -> Timing {
        Timing {
            settle: self.shared.poll_interval.min(SETTLE),
            poll: self.shared.poll_interval,
        }
    }
}

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

/// The ARM client of one pass, with where the network lives.
pub struct Network {
    arm: Arm,
    calls: CloudCalls,
    infra: Infra,
}

fn vnet_name(owner: &Owner) -> String {
    format!(
        "{}-vnet",
        naming::derive_cloud_name(owner.namespace(), owner.cluster(), &BASE_NAME)
    )
}

/// One build or tear-down pass over a created network.
struct NetworkScope<'a> {
    net: &'a Network,
    owner: &'a Owner,
    vnet: String,
    plan: Option<&'a CreatedNetwork>,
}

impl NetworkScope<'_> {
    fn group_path(&self) -> String {
        self.net.arm.group_path(&self.net.infra.resource_group)
    }

    fn vnet_path(&self) -> String {
        format!(
            "{}/providers/Microsoft.Network/virtualNetworks/{}",
            self.group_path(),
            self.vnet
        )
    }

    fn tags(&self) -> Value {
        let mut tags = self.net.infra.additional_tags.clone();
        let (k, v) = self.owner.tag();
        tags.insert(k, v);
        json!(tags)
    }
}

/// What the walk found or made.
#[derive(Debug, Default)]
struct Built {
    group_ours: bool,
    group: bool,
    subnet_id: Option<String>,
    subnet_cidr: Option<String>,
}

/// The created network's services, in build order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NetworkService {
    ResourceGroup,
    VirtualNetwork,
}

impl Service for NetworkService {
    const ORDER: &'static [Self] = &[Self::ResourceGroup, Self::VirtualNetwork];

    fn label(self) -> &'static str {
        match self {
            Self::ResourceGroup => "Resource group",
            Self::VirtualNetwork => "Virtual network",
        }
    }
}

impl Builds<NetworkScope<'_>, Built> for NetworkService {
    async fn reconcile(
        self,
        s: &NetworkScope<'_>,
        built: &mut Built,
    ) -> Result<Progress, ProviderError> {
        let n = s.net;
        let Some(plan) = s.plan else {
            return Ok(Progress::Blocked("no network to build".into()));
        };
        match self {
            NetworkService::ResourceGroup => {
                let found = n
                    .arm
                    .get(
                        &n.calls,
                        "ResourceGroups_Get",
                        &s.group_path(),
                        arm::RESOURCES,
                    )
                    .await?;
                if let Some(g) = found {
                    if g["properties"]["provisioningState"] == "Deleting" {
                        return Ok(Progress::waiting(format!(
                            "the resource group {} is being deleted",
                            n.infra.resource_group
                        )));
                    }
                    built.group_ours = s.owner.owns(&tags_of(&g));
                    built.group = true;
                    return Ok(Progress::Ready);
                }
                n.arm
                    .call(
                        &n.calls,
                        "ResourceGroups_CreateOrUpdate",
                        Method::PUT,
                        &s.group_path(),
                        arm::RESOURCES,
                        Some(&json!({ "location": n.infra.location, "tags": s.tags() })),
                        None,
                    )
                    .await?;
                built.group_ours = true;
                built.group = true;
                Ok(Progress::Ready)
            }
            NetworkService::VirtualNetwork => {
                if !built.group {
                    return Ok(Progress::Blocked("waiting for the resource group".into()));
                }
                let found = n
                    .arm
                    .get(
                        &n.calls,
                        "VirtualNetworks_Get",
                        &s.vnet_path(),
                        arm::NETWORK,
                    )
                    .await?;
                if let Some(v) = found {
                    match s.owner.decide(&tags_of(&v), false) {
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
                    let subnet = v["properties"]["subnets"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .find(|x| x["name"] == SUBNET);
                    built.subnet_id = subnet.and_then(|x| x["id"].as_str()).map(String::from);
                    built.subnet_cidr = subnet
                        .and_then(|x| x["properties"]["addressPrefix"].as_str())
                        .map(String::from);
                    return Ok(match v["properties"]["provisioningState"].as_str() {
                        Some("Succeeded") if built.subnet_id.is_some() => Progress::Ready,
                        Some("Succeeded") => Progress::Blocked(format!(
                            "the virtual network {} has no subnet {SUBNET}",
                            s.vnet
                        )),
                        state => Progress::waiting(format!(
                            "the virtual network {} is {}",
                            s.vnet,
                            state.unwrap_or("being made")
                        )),
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
                        arm::NETWORK,
                        Some(&body),
                        None,
                    )
                    .await
                {
                    Ok(_) => Ok(Progress::creating(format!(
                        "creating the virtual network {}",
                        s.vnet
                    ))),
                    Err(f) if matches!(f.error, CloudError::InUse(_)) => Ok(Progress::waiting(
                        format!("the virtual network {} is being changed", s.vnet),
                    )),
                    Err(f) => Err(f.into()),
                }
            }
        }
    }
}

impl TearsDown<NetworkScope<'_>> for NetworkService {
    async fn delete(self, s: &NetworkScope<'_>) -> Result<Removal, ProviderError> {
        let n = s.net;
        let deleted = |result: Result<arm::Answer, arm::Failure>, what: String| match result {
            Ok(_) => Ok(Removal::deleting(format!("deleting the {what}"))),
            Err(f) if f.error.is_not_found() => Ok(Removal::Gone),
            Err(f) if matches!(f.error, CloudError::InUse(_)) => Ok(Removal::waiting(format!(
                "the {what} is still in use: {}",
                f.error
            ))),
            Err(f) => Err(f.into()),
        };
        match self {
            NetworkService::VirtualNetwork => {
                let found = n
                    .arm
                    .get(
                        &n.calls,
                        "VirtualNetworks_Get",
                        &s.vnet_path(),
                        arm::NETWORK,
                    )
                    .await?;
                match found {
                    Some(v) if s.owner.owns(&tags_of(&v)) => {
                        if v["properties"]["provisioningState"] == "Deleting" {
                            return Ok(Removal::waiting(format!(
                                "the virtual network {} is being deleted",
                                s.vnet
                            )));
                        }
                        deleted(
                            n.arm
                                .call(
                                    &n.calls,
                                    "VirtualNetworks_Delete",
                                    Method::DELETE,
                                    &s.vnet_path(),
                                    arm::NETWORK,
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
            NetworkService::ResourceGroup => {
                let found = n
                    .arm
                    .get(
                        &n.calls,
                        "ResourceGroups_Get",
                        &s.group_path(),
                        arm::RESOURCES,
                    )
                    .await?;
                let Some(g) = found.filter(|g| s.owner.owns(&tags_of(g))) else {
                    return Ok(Removal::Gone);
                };
                if g["properties"]["provisioningState"] == "Deleting" {
                    return Ok(Removal::waiting(format!(
                        "the resource group {} is being deleted",
                        n.infra.resource_group
                    )));
                }
                let clusters = n
                    .arm
                    .list(
                        &n.calls,
                        "ManagedClusters_ListByResourceGroup",
                        &format!(
                            "{}/providers/Microsoft.ContainerService/managedClusters",
                            s.group_path()
                        ),
                        arm::CONTAINER,
                    )
                    .await?;
                if let Some(c) = clusters.first() {
                    return Ok(Removal::waiting(format!(
                        "the resource group {} still holds the managed cluster {}",
                        n.infra.resource_group,
                        c["name"].as_str().unwrap_or_default()
                    )));
                }
                deleted(
                    n.arm
                        .call(
                            &n.calls,
                            "ResourceGroups_Delete",
                            Method::DELETE,
                            &s.group_path(),
                            arm::RESOURCES,
                            None,
                            None,
                        )
                        .await,
                    format!("resource group {}", n.infra.resource_group),
                )
            }
        }
    }
}

impl InfraClusterCloud for AksInfraCluster {
    type Object = AKSCluster;
    type Clients = Network;
    type Plan = CreatedNetwork;
    type Network = AKSNetworkStatus;
    type Status = AKSClusterStatus;

    fn kind(&self) -> &'static str {
        "AKSCluster"
    }

    fn mode(&self, obj: &AKSCluster) -> Result<NetworkMode<CreatedNetwork>, String> {
        network_mode(&obj.spec)
    }

    async fn connect(
        &self,
        obj: &AKSCluster,
        client: &kube::Client,
        calls: &CloudCalls,
    ) -> Result<Network, ProviderError> {
        let infra = Infra::from_spec(&obj.spec);
        let arm = scope::arm_for(
            &self.shared,
            client,
            &obj.namespace().unwrap_or_default(),
            &infra,
        )
        .await?;
        Ok(Network {
            arm,
            calls: calls.clone(),
            infra,
        })
    }

    async fn observe_brought(
        &self,
        _obj: &AKSCluster,
        n: &Network,
    ) -> NetworkReport<AKSNetworkStatus> {
        let invalid =
            |m: String| NetworkReport::failed(ProviderError::terminal(Reason::InvalidSpec, m));
        match n
            .arm
            .get(
                &n.calls,
                "ResourceGroups_Get",
                &n.arm.group_path(&n.infra.resource_group),
                arm::RESOURCES,
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
            .get(&n.calls, "Subnets_Get", &n.infra.subnet, arm::NETWORK)
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
        let status = AKSNetworkStatus {
            resource_group: Some(n.infra.resource_group.clone()),
            resource_group_managed: false,
            virtual_network: vnet.clone(),
            subnet: Some(n.infra.subnet.clone()),
            cidr_block: subnet["properties"]["addressPrefix"]
                .as_str()
                .map(String::from),
            zones: n.infra.zones.clone(),
            managed: false,
        };
        let message = format!(
            "using the brought subnet {} of {} in zones {}",
            super::last_segment(&n.infra.subnet),
            vnet.as_deref()
                .map_or("its virtual network", super::last_segment),
            n.infra.zones.join(", ")
        );
        NetworkReport::ready(status, message, self.shared.rest_interval)
    }

    async fn build(
        &self,
        _obj: &AKSCluster,
        _ctx: &PassContext,
        net: &Network,
        owner: Owner,
        plan: CreatedNetwork,
    ) -> Result<NetworkReport<AKSNetworkStatus>, ProviderError> {
        let scope = NetworkScope {
            net,
            owner: &owner,
            vnet: vnet_name(&owner),
            plan: Some(&plan),
        };
        let walk = walker::build::<NetworkService, _, Built>(&scope).await;
        let status = AKSNetworkStatus {
            resource_group: Some(net.infra.resource_group.clone()),
            resource_group_managed: walk.built.group_ours,
            virtual_network: Some(scope.vnet_path()),
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
        Ok(NetworkReport {
            network: Some(status),
            complete: walk.complete(),
            condition,
            requeue: walk.requeue(self.timing(), self.shared.rest_interval),
            error: walk.error.map(|(_, e)| e),
        })
    }

    async fn tear_down(
        &self,
        _obj: &AKSCluster,
        net: &Network,
        owner: Owner,
    ) -> Result<Cleanup, ProviderError> {
        let scope = NetworkScope {
            net,
            owner: &owner,
            vnet: vnet_name(&owner),
            plan: None,
        };
        let removal = walker::tear_down::<NetworkService, _>(&scope).await?;
        Ok(removal.cleanup(self.timing()))
    }

    fn network_status<'o>(&self, obj: &'o AKSCluster) -> Option<&'o AKSNetworkStatus> {
        obj.status.as_ref()?.network.as_ref()
    }

    fn zones<'n>(&self, network: &'n AKSNetworkStatus) -> Vec<&'n str> {
        network.zones.iter().map(String::as_str).collect()
    }

    fn status(
        &self,
        common: InfraClusterStatusCommon,
        network: Option<AKSNetworkStatus>,
    ) -> AKSClusterStatus {
        AKSClusterStatus {
            common,
            network,
            ..AKSClusterStatus::default()
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use contract::api::NetworkSpec;

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
