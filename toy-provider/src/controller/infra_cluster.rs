//! ToyCluster: the Cluster's network in the toy cloud, made at once and deleted with the
//! ToyCluster; it reports provisioned and its failure domains and, being managed, never touches
//! the endpoint.

use anyhow::Result;
use kube::api::DynamicObject;
use serde_json::{Map, json};

use super::control_plane::cloud_name;
use super::meta::{self, Cond};
use super::{Ctx, Indexes};
use crate::api;
use crate::breaks::Break;
use crate::cloud_client::Created;

/// The toy's zones.
pub const FAILURE_DOMAINS: [&str; 2] = ["toy-a", "toy-b"];

pub async fn reconcile(ctx: &Ctx, obj: &DynamicObject, idx: &Indexes) -> Result<()> {
    let ns = meta::namespace(obj);
    let api = ctx.api(&ctx.kinds.toy_cluster, &ns);
    let owner = meta::core_owner(obj, "Cluster", false);
    let cluster = owner
        .as_ref()
        .and_then(|c| idx.clusters.get(&(ns.clone(), c.clone())));

    if meta::has_annotation(obj, meta::MANAGED_BY_ANNOTATION) && !ctx.broken(Break::IgnoreManagedBy)
    {
        return Ok(());
    }
    if meta::deleting(obj) {
        if !meta::has_finalizer(obj) {
            return Ok(());
        }
        if ctx.pause(obj, cluster) {
            return ctx.report_paused(&api, obj, cluster).await;
        }
        // The finalizer goes once the cloud says the network is gone.
        if let Some(c) = &owner
            && !ctx.broken(Break::LeaveNetwork)
            && ctx.cloud.delete_network(&cloud_name(&ns, c)).await?
        {
            return Ok(());
        }
        return meta::remove_finalizer(&api, obj).await;
    }
    if owner.is_none() && !ctx.broken(Break::NoOwnerGate) {
        return Ok(());
    }
    if owner.is_some() && cluster.is_none() {
        return Ok(());
    }
    if ctx.pause(obj, cluster) {
        return ctx.report_paused(&api, obj, cluster).await;
    }
    ctx.ensure_finalizer(&api, obj, "/status/initialization/provisioned")
        .await?;
    if let Some(c) = &owner {
        ensure_network(ctx, &ns, c).await?;
    }

    if ctx.broken(Break::EndpointOnInfra)
        && meta::str_at(obj, "/spec/controlPlaneEndpoint/host").is_empty()
    {
        // Copy what the control plane published, as an unmanaged InfraCluster would set its own.
        let cp = cluster.and_then(|c| {
            let name = meta::str_at(c, "/spec/controlPlaneRef/name");
            idx.control_planes.get(&(ns.clone(), name.to_string()))
        });
        if let Some(endpoint) = cp.and_then(|cp| meta::at(cp, "/spec/controlPlaneEndpoint"))
            && !endpoint["host"].as_str().unwrap_or_default().is_empty()
        {
            meta::patch(
                &api,
                obj,
                &json!({"spec": {"controlPlaneEndpoint": endpoint}}),
            )
            .await?;
        }
    }

    let mut fields = Map::new();
    if ctx.broken(Break::InfraNotProvisioned) {
        let conds = vec![Cond::new("Ready", false, "Provisioning", "never done")];
        ctx.write_status(&api, obj, cluster, fields, conds, meta::generation(obj))
            .await?;
        return Ok(());
    }
    fields.insert("initialization".into(), json!({"provisioned": true}));
    fields.insert("ready".into(), json!(true));
    if !ctx.broken(Break::NoFailureDomains) {
        let domains: Vec<_> = FAILURE_DOMAINS
            .iter()
            .map(|d| json!({"name": d, "controlPlane": true}))
            .collect();
        fields.insert("failureDomains".into(), json!(domains));
    }
    let reason = if ctx.broken(Break::ConditionNoReason) {
        ""
    } else {
        "Provisioned"
    };
    let conds = if ctx.broken(Break::NoInfraReadyCondition) {
        Vec::new()
    } else {
        vec![Cond::new("Ready", true, reason, "")]
    };
    ctx.write_status(&api, obj, cluster, fields, conds, meta::generation(obj))
        .await?;
    Ok(())
}

/// The Cluster's network (named as its cloud cluster is), made when the cloud has none of that
/// name.
async fn ensure_network(ctx: &Ctx, namespace: &str, cluster: &str) -> Result<()> {
    let name = cloud_name(namespace, cluster);
    if ctx.cloud.describe_network(&name).await?.is_some() {
        return Ok(());
    }
    let tags = api::Tags {
        namespace: namespace.to_string(),
        cluster: cluster.to_string(),
    };
    match ctx
        .cloud
        .create_network(&api::CreateNetwork { name, tags })
        .await?
    {
        Created::Created(n) => tracing::info!(network = %n.name, "created cloud network"),
        // Made by a pass a moment ago.
        Created::Conflict(_) => {}
    }
    Ok(())
}
