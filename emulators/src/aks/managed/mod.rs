//! `Microsoft.ContainerService` at api-version 2026-08-01: managed clusters (PUT create or
//! update, GET, DELETE, list, tags, user and admin credentials, upgrade profile) and their agent
//! pools (PUT, GET, DELETE, list, upgrade profile). Every change is an asynchronous operation
//! the ticker completes.
//!
//! [`clusters`] holds the managed clusters, [`pools`] their agent pools; this module how both
//! are rendered and the checks and operations they share.

mod clusters;
mod pools;

use std::time::Duration;

use axum::http::StatusCode;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::api::Req;
use super::arm::{self, ArmError, AsyncHeaders, CONTAINER_API_VERSION, str_of};
use super::catalog;
use super::entra::uuid_like;
use super::state::{
    Cluster, Effect, Group, OpStatus, Operation, Pool, Provisioning, State, Target, key,
};
use super::{Aks, now_rfc3339};
use crate::kit::Delays;

/// Properties the service sets; a request's values for them are ignored.
const READ_ONLY: &[&str] = &[
    "provisioningState",
    "powerState",
    "currentKubernetesVersion",
    "fqdn",
    "azurePortalFQDN",
    "privateFQDN",
    "maxAgentPools",
    "agentPoolProfiles",
    "identityProfile",
    "resourceUID",
];

/// Pool properties the service sets.
const POOL_READ_ONLY: &[&str] = &[
    "provisioningState",
    "powerState",
    "currentOrchestratorVersion",
    "nodeImageVersion",
    "eTag",
];

fn strip(props: &Value, fields: &[&str]) -> Value {
    let mut out = props.clone();
    if let Some(o) = out.as_object_mut() {
        for f in fields {
            o.remove(*f);
        }
    }
    out
}

/// The rendered agent pool properties (inside a cluster's `agentPoolProfiles` or an agent
/// pool's `properties`).
fn pool_properties(p: &Pool) -> Value {
    let mut v = p.props.clone();
    v["provisioningState"] = json!(p.state.as_str());
    v["powerState"] = json!({ "code": "Running" });
    v["currentOrchestratorVersion"] = json!(p.current);
    v["nodeImageVersion"] = json!(catalog::NODE_IMAGE);
    v["eTag"] = json!(p.etag);
    v
}

/// A cluster as GET answers it.
pub fn render_cluster(c: &Cluster) -> Value {
    let mut props = c.props.clone();
    props["provisioningState"] = json!(c.state.as_str());
    props["powerState"] = json!({ "code": "Running" });
    props["currentKubernetesVersion"] = json!(c.current);
    props["nodeResourceGroup"] = json!(c.node_group);
    props["maxAgentPools"] = json!(100);
    props["resourceUID"] = json!(c.workload_id);
    if props["apiServerAccessProfile"]["enablePrivateCluster"] == true {
        props["privateFQDN"] = json!(c.fqdn.replace(".hcp.", ".privatelink."));
        if props["apiServerAccessProfile"]["enablePrivateClusterPublicFQDN"] == true {
            props["fqdn"] = json!(c.fqdn);
        }
    } else {
        props["fqdn"] = json!(c.fqdn);
        props["azurePortalFQDN"] = json!(c.fqdn.replace(".hcp.", ".portal.hcp."));
    }
    props["agentPoolProfiles"] = Value::Array(
        c.pools
            .iter()
            .map(|p| {
                let mut v = pool_properties(p);
                v["name"] = json!(p.name);
                v
            })
            .collect(),
    );
    let mut out = json!({
        "id": c.id(),
        "name": c.name,
        "type": "Microsoft.ContainerService/managedClusters",
        "location": c.location,
        "tags": c.tags,
        "sku": c.sku,
        "eTag": c.etag,
        "properties": props,
    });
    if !c.identity.is_null() {
        out["identity"] = c.identity.clone();
    }
    out
}

/// An agent pool as GET answers it.
pub fn render_pool(c: &Cluster, p: &Pool) -> Value {
    json!({
        "id": format!("{}/agentPools/{}", c.id(), p.name),
        "name": p.name,
        "type": "Microsoft.ContainerService/managedClusters/agentPools",
        "eTag": p.etag,
        "properties": pool_properties(p),
    })
}

fn cluster_or_404<'s>(
    st: &'s State,
    req: &Req,
    group: &str,
    name: &str,
) -> Result<&'s Cluster, ArmError> {
    st.clusters
        .get(&key(&[&req.subscription, group, name]))
        .ok_or_else(|| {
            ArmError::not_found("Microsoft.ContainerService/managedClusters", name, group)
        })
}

/// AKS's preflight refusal when the regional vCPU quota would be exceeded.
pub fn quota_error(location: &str, limit: u32, used: u32, asked: u32) -> ArmError {
    ArmError::bad_request(
        "QuotaExceeded",
        format!(
            "Preflight validation check for resource(s) for container service failed. Message: Operation could not be completed as it results in exceeding approved Total Regional Cores quota. Location: {location}, Current Limit: {limit}, Current Usage: {used}, Additional Required: {asked}. Please read more about quota limits at https://aka.ms/AzurePerVMQuotaLimits."
        ),
    )
}

impl Aks {
    fn quota_check(
        &self,
        st: &State,
        subscription: &str,
        location: &str,
        extra: u32,
    ) -> Result<(), ArmError> {
        let used = st.vcpus_used(subscription, location);
        if used + extra > self.config.vcpu_quota {
            return Err(quota_error(location, self.config.vcpu_quota, used, extra));
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)] // each is one field of the operation
    fn new_operation(
        &self,
        st: &mut State,
        req: &Req,
        location: &str,
        target: Target,
        kind: Provisioning,
        effect: Effect,
        delay: f64,
    ) -> String {
        let id = uuid_like();
        st.operations.insert(
            id.clone(),
            Operation {
                id: id.clone(),
                subscription: req.subscription.clone(),
                namespace: "Microsoft.ContainerService",
                location: location.to_string(),
                target,
                status: OpStatus::InProgress,
                start_time: now_rfc3339(),
                end_time: None,
                done_at: Instant::now() + Delays::duration(delay),
                error: None,
                effect: Some(effect),
                kind,
            },
        );
        id
    }

    fn headers(req: &Req, location: &str, id: &str) -> AsyncHeaders {
        AsyncHeaders::new(
            &req.base,
            &req.subscription,
            "Microsoft.ContainerService",
            location,
            id,
            CONTAINER_API_VERSION,
        )
    }

    fn check_subnet(&self, st: &State, field: &str, profile: &Value) -> Result<(), ArmError> {
        let id = str_of(profile, "vnetSubnetID");
        if id.is_empty() {
            return Ok(());
        }
        let parts: Vec<&str> = id.trim_matches('/').split('/').collect();
        let found = match parts.as_slice() {
            [
                "subscriptions",
                s,
                rg,
                g,
                "providers",
                ns,
                vn,
                v,
                sn,
                subnet,
            ] if rg.eq_ignore_ascii_case("resourceGroups")
                && ns.eq_ignore_ascii_case("Microsoft.Network")
                && vn.eq_ignore_ascii_case("virtualNetworks")
                && sn.eq_ignore_ascii_case("subnets") =>
            {
                st.vnets
                    .get(&key(&[s, g, v]))
                    .is_some_and(|n| n.subnets.keys().any(|k| k.eq_ignore_ascii_case(subnet)))
            }
            _ => false,
        };
        if found {
            Ok(())
        } else {
            Err(ArmError::invalid_parameter(
                &format!("{field}.vnetSubnetID"),
                format!("Subnet {id} was not found: create the virtual network and subnet first."),
            ))
        }
    }
}

fn group_for_write<'s>(st: &'s State, req: &Req, group: &str) -> Result<&'s Group, ArmError> {
    let g = st
        .groups
        .get(&key(&[&req.subscription, group]))
        .ok_or_else(|| ArmError::group_not_found(group))?;
    if g.deleting {
        return Err(ArmError::new(
            StatusCode::CONFLICT,
            "ResourceGroupBeingDeleted",
            format!(
                "The resource group '{group}' is in deprovisioning state and cannot perform this operation."
            ),
        ));
    }
    Ok(g)
}

/// A pool as first PUT.
fn new_pool(name: &str, props: &Value, version: &str) -> Pool {
    let mut props = strip(props, POOL_READ_ONLY);
    if props["count"].is_null() {
        props["count"] = json!(1);
    }
    if props["vmSize"].is_null() {
        props["vmSize"] = json!(catalog::DEFAULT_VM_SIZE);
    }
    if props["mode"].is_null() {
        props["mode"] = json!("User");
    }
    if props["osType"].is_null() {
        props["osType"] = json!("Linux");
    }
    if props["maxPods"].is_null() {
        props["maxPods"] = json!(250);
    }
    if props["type"].is_null() {
        props["type"] = json!("VirtualMachineScaleSets");
    }
    if props["orchestratorVersion"]
        .as_str()
        .is_none_or(str::is_empty)
    {
        props["orchestratorVersion"] = json!(version);
    }
    let digits: String = super::hex(8)
        .bytes()
        .map(|b| char::from(b'0' + b % 10))
        .collect();
    Pool {
        name: name.to_string(),
        props,
        current: version.to_string(),
        state: Provisioning::Creating,
        etag: arm::new_etag(),
        digits,
        vms: Vec::new(),
        next_id: 0,
    }
}

/// The instance shutting-down window, for the ticker.
pub fn shutdown_window(aks: &Aks) -> Duration {
    Delays::duration(aks.kit.timing().instance_shutdown)
}
