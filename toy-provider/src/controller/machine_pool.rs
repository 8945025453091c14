//! ToyMachinePool: one node pool of the cluster's cloud cluster, sized by its MachinePool.

use anyhow::Result;
use kube::api::DynamicObject;
use serde_json::{Map, json};

use super::control_plane::cloud_name;
use super::meta::{self, Cond};
use super::{Ctx, Indexes};
use crate::api;
use crate::breaks::Break;
use crate::cloud_client::Created;

fn not_ready(reason: &str, message: impl Into<String>) -> Vec<Cond> {
    vec![Cond::new("Ready", false, reason, message)]
}

pub async fn reconcile(ctx: &Ctx, obj: &DynamicObject, idx: &Indexes) -> Result<()> {
    let ns = meta::namespace(obj);
    let name = meta::name(obj);
    let api = ctx.api(&ctx.kinds.toy_machine_pool, &ns);
    let owner = meta::core_owner(obj, "MachinePool", true);
    let mp = owner
        .as_ref()
        .and_then(|m| idx.machine_pools.get(&(ns.clone(), m.clone())));
    let cluster_name = mp
        .map(|m| meta::str_at(m, "/spec/clusterName").to_string())
        .filter(|c| !c.is_empty())
        .or_else(|| meta::label(obj, meta::CLUSTER_NAME_LABEL).map(str::to_string))
        .unwrap_or_default();
    let cluster = idx.clusters.get(&(ns.clone(), cluster_name.clone()));
    let control_plane = cluster.and_then(|c| {
        let cp = meta::str_at(c, "/spec/controlPlaneRef/name");
        idx.control_planes.get(&(ns.clone(), cp.to_string()))
    });
    let target = control_plane
        .map(|cp| meta::str_at(cp, "/status/cloudClusterName").to_string())
        .filter(|t| !t.is_empty());

    if meta::deleting(obj) {
        if !meta::has_finalizer(obj) {
            return Ok(());
        }
        if ctx.pause(obj, cluster) {
            return ctx.report_paused(&api, obj, cluster).await;
        }
        let target = target.unwrap_or_else(|| cloud_name(&ns, &cluster_name));
        return delete(ctx, obj, cluster, &target).await;
    }
    if owner.is_none() && !ctx.broken(Break::NoOwnerGate) {
        return Ok(());
    }
    if owner.is_some() && (mp.is_none() || cluster.is_none()) {
        return Ok(());
    }
    if ctx.pause(obj, cluster) {
        return ctx.report_paused(&api, obj, cluster).await;
    }
    ctx.ensure_finalizer(&api, obj, "/status/initialization/provisioned")
        .await?;
    let generation = meta::generation(obj);

    let initialized = control_plane
        .is_some_and(|cp| meta::bool_at(cp, "/status/initialization/controlPlaneInitialized"));
    let (Some(mp), Some(target), true) = (mp, target, initialized) else {
        let conds = not_ready("WaitingForControlPlane", "waiting for the control plane");
        ctx.write_status(&api, obj, cluster, Map::new(), conds, generation)
            .await?;
        return Ok(());
    };
    let wanted = at_u32(mp, "/spec/replicas").unwrap_or(1);
    let autoscaled = meta::has_annotation(mp, meta::REPLICAS_MANAGED_BY_ANNOTATION)
        && !ctx.broken(Break::NoWriteback);

    let Some(pool) = ctx.cloud.describe_pool(&target, &name).await? else {
        let req = api::CreatePool {
            name: name.clone(),
            desired_size: wanted,
        };
        let (reason, message) = match ctx.cloud.create_pool(&target, &req).await? {
            Created::Created(_) => {
                tracing::info!(namespace = %ns, pool = %name, size = wanted, "created cloud pool");
                ("Provisioning", format!("creating pool {name}"))
            }
            Created::Conflict(msg) => ("PoolConflict", msg),
        };
        ctx.write_status(
            &api,
            obj,
            cluster,
            Map::new(),
            not_ready(reason, message),
            generation,
        )
        .await?;
        return Ok(());
    };
    if pool.status == "DELETING" {
        let conds = not_ready("Deleting", format!("pool {name} is being deleted"));
        ctx.write_status(&api, obj, cluster, Map::new(), conds, generation)
            .await?;
        return Ok(());
    }
    if autoscaled {
        if pool.desired_size != wanted {
            let machine_pools = ctx.api(&ctx.kinds.machine_pool, &ns);
            meta::patch(
                &machine_pools,
                mp,
                &json!({"spec": {"replicas": pool.desired_size}}),
            )
            .await?;
            tracing::info!(namespace = %ns, pool = %name, replicas = pool.desired_size, "wrote the cloud's size back to the MachinePool");
        }
    } else if pool.desired_size != wanted && !ctx.broken(Break::NoScaling) {
        ctx.cloud.update_pool(&target, &name, wanted).await?;
        tracing::info!(namespace = %ns, pool = %name, size = wanted, "resizing cloud pool");
    }
    let desired = if autoscaled {
        pool.desired_size
    } else {
        wanted
    };

    // Every instance that exists, terminating ones included, until the cloud says it is gone.
    // Broken: terminating instances are dropped from the list and from the count alike, so the
    // two always agree and only the cloud's own instance states show the ID left too early.
    let counted: Vec<_> = pool
        .instances
        .iter()
        .filter(|i| !(ctx.broken(Break::DropIdEarly) && i.state == "TERMINATING"))
        .collect();
    let replicas = counted.len();
    let mut ids: Vec<String> = counted.iter().map(|i| i.provider_id.clone()).collect();
    if ctx.broken(Break::ExtraProviderId) {
        ids.push(format!("toy://{ns}/{cluster_name}/{name}/i-bogus"));
    }
    let settled = pool.status == "ACTIVE" && pool.desired_size == desired;
    let provisioned = settled || meta::bool_at(obj, "/status/initialization/provisioned");
    let mut fields = Map::new();
    fields.insert("replicas".into(), json!(replicas));
    if provisioned {
        fields.insert("initialization".into(), json!({"provisioned": true}));
        if !ctx.broken(Break::NoPoolReady) {
            fields.insert("ready".into(), json!(true));
        }
    }
    let reason = if ctx.broken(Break::ConditionNoReason) {
        ""
    } else {
        "Ready"
    };
    let conds = if settled {
        vec![Cond::new(
            "Ready",
            true,
            reason,
            format!("{replicas} instances running"),
        )]
    } else {
        not_ready(
            "Scaling",
            format!(
                "pool {name} is {} ({replicas} of {desired} instances)",
                pool.status
            ),
        )
    };

    // status.replicas counts the instances that exist and the list names them: when instances
    // are gone, lower the count before the list shrinks; when they appear, grow the list first.
    let listed = meta::at(obj, "/spec/providerIDList")
        .and_then(serde_json::Value::as_array)
        .map_or(0, Vec::len);
    let list_changed = meta::at(obj, "/spec/providerIDList") != Some(&json!(ids));
    if list_changed && ids.len() < listed {
        ctx.write_status(
            &api,
            obj,
            cluster,
            fields.clone(),
            conds.clone(),
            generation,
        )
        .await?;
    }
    let mut generation = generation;
    if list_changed {
        let updated = meta::patch(&api, obj, &json!({"spec": {"providerIDList": ids}})).await?;
        generation = meta::generation(&updated);
    }
    ctx.write_status(&api, obj, cluster, fields, conds, generation)
        .await?;
    Ok(())
}

fn at_u32(obj: &DynamicObject, pointer: &str) -> Option<u32> {
    meta::at(obj, pointer)
        .and_then(serde_json::Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
}

async fn delete(
    ctx: &Ctx,
    obj: &DynamicObject,
    cluster: Option<&DynamicObject>,
    target: &str,
) -> Result<()> {
    let ns = meta::namespace(obj);
    let name = meta::name(obj);
    let api = ctx.api(&ctx.kinds.toy_machine_pool, &ns);
    let Some(pool) = ctx.cloud.describe_pool(target, &name).await? else {
        tracing::info!(namespace = %ns, pool = %name, "cloud pool gone; removing finalizer");
        return meta::remove_finalizer(&api, obj).await;
    };
    if pool.status != "DELETING" {
        ctx.cloud.delete_pool(target, &name).await?;
        tracing::info!(namespace = %ns, pool = %name, "deleting cloud pool");
        if ctx.broken(Break::EarlyFinalizerRemoval) {
            return meta::remove_finalizer(&api, obj).await;
        }
    }
    let conds = not_ready("Deleting", format!("pool {name} is being deleted"));
    ctx.write_status(&api, obj, cluster, Map::new(), conds, meta::generation(obj))
        .await?;
    Ok(())
}
