//! Scaling a pool from outside Cluster API (C50): the pool marked as sized by someone else, the
//! cloud's autoscaler played by the profile's `outsideScale` command, and what became of the
//! MachinePool's `spec.replicas`.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::Result;
use serde_json::{Value, json};

use super::{CLUSTER, NS, Names, wait_settled};
use crate::objects;
use crate::run::Ctx;
use crate::run::judge::pools::{MANAGED_BY_REPLICAS, Marked, OutsideScale};

/// Marks the first pool as externally scaled, has the cloud scale it by one and waits for the
/// MachinePool to follow.
pub(super) async fn scale(ctx: &Ctx, client: &kube::Client, names: &Names) -> Result<OutsideScale> {
    let Some(command) = ctx.profile.outside_scale.clone() else {
        return Ok(OutsideScale::NoCommand);
    };
    let Some((mp, infra_kind, infra_name)) = names.pools.first().cloned() else {
        return Ok(OutsideScale::NoPool);
    };
    let marked = match &ctx.profile.autoscale_patch {
        Some(patch) => {
            objects::merge(&ctx.kinds, client, &infra_kind, NS, &infra_name, patch).await?;
            let deadline = Instant::now() + Duration::from_secs(60);
            loop {
                let pool = objects::get(&ctx.kinds, client, "MachinePool", NS, &mp)
                    .await?
                    .unwrap_or(Value::Null);
                let value = &pool["metadata"]["annotations"][MANAGED_BY_REPLICAS];
                if !value.is_null() {
                    break Marked::ByProvider(value.clone());
                }
                if Instant::now() >= deadline {
                    return Ok(OutsideScale::NotMarked);
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }
        None => {
            objects::merge(
                &ctx.kinds,
                client,
                "MachinePool",
                NS,
                &mp,
                &json!({"metadata": {"annotations": {MANAGED_BY_REPLICAS: "external-autoscaler"}}}),
            )
            .await?;
            Marked::BySuite
        }
    };
    let pool = objects::get(&ctx.kinds, client, "MachinePool", NS, &mp)
        .await?
        .unwrap_or(Value::Null);
    let target = pool["spec"]["replicas"].as_i64().unwrap_or(0) + 1;
    let argv = ctx.vars.expand_all(&command)?;
    let env: BTreeMap<String, String> = [
        ("CLUSTER_NAMESPACE", NS.to_string()),
        ("CLUSTER_NAME", CLUSTER.to_string()),
        ("POOL_NAME", infra_name.clone()),
        ("REPLICAS", target.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    if let Err(e) =
        crate::procs::run_to_end(&argv, &env, &ctx.profile.workdir(), Duration::from_secs(60)).await
    {
        return Ok(OutsideScale::CommandFailed(format!("{e:#}")));
    }
    let timeout = ctx.profile.timeouts.provision;
    let start = Instant::now();
    loop {
        let pool = objects::get(&ctx.kinds, client, "MachinePool", NS, &mp)
            .await?
            .unwrap_or(Value::Null);
        if pool["spec"]["replicas"].as_i64() == Some(target) {
            let settled = wait_settled(ctx, client, names, false, timeout).await?;
            return Ok(OutsideScale::Followed {
                marked,
                pool: infra_name,
                target,
                took: start.elapsed(),
                settled,
            });
        }
        if start.elapsed() > timeout {
            return Ok(OutsideScale::NotFollowed {
                pool: infra_name,
                target,
                replicas: pool["spec"]["replicas"].clone(),
                timeout,
            });
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}
