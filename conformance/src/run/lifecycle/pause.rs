//! Pausing and scaling the settled cluster: paused through `Cluster.spec.paused` while a pool
//! is scaled up, unpaused; then paused by the annotation alone while a pool is scaled down,
//! unpaused, with the pools' recorded versions and the cloud's instance list kept for the
//! scale-down's judge (C35, C36, C37, C49, C51).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::{Value, json};

use super::{CLUSTER, NS, Names, State, calls_between, provider_ids, read, wait_settled};
use crate::checks::Results;
use crate::objects::{self, Recorder, condition};
use crate::run::Ctx;
use crate::run::instances::InstanceLog;
use crate::run::judge::pause::{PauseWindow, PausedBy, QuietWhilePaused, Unpause};
use crate::run::judge::{self, pools::ScaleDown};

const PAUSED_ANNOTATION: &str = "cluster.x-k8s.io/paused";

async fn wait_paused(
    ctx: &Ctx,
    client: &kube::Client,
    names: &Names,
    want: &str,
) -> Result<std::result::Result<(), String>> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mut wrong = Vec::new();
        for (kind, name) in names.provider_objects() {
            let obj = objects::get(&ctx.kinds, client, &kind, NS, &name)
                .await?
                .unwrap_or(Value::Null);
            let c = condition(&obj, "Paused").cloned().unwrap_or(Value::Null);
            let reason_ok = match want {
                "True" => c["reason"] == "Paused",
                _ => c["reason"] == "NotPaused",
            };
            if c["status"] != want || !reason_ok {
                wrong.push(format!(
                    "{kind}/{name} Paused {} {}",
                    c["status"], c["reason"]
                ));
            }
        }
        if wrong.is_empty() {
            return Ok(Ok(()));
        }
        if Instant::now() >= deadline {
            return Ok(Err(wrong.join("; ")));
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

fn statuses(state: &State) -> Value {
    json!({
        "infra": state.infra["status"],
        "controlPlane": state.control_plane["status"],
        "pools": state.pools.values().map(|(_, i)| i["status"].clone()).collect::<Vec<_>>(),
    })
}

async fn set_replicas(
    ctx: &Ctx,
    client: &kube::Client,
    names: &Names,
    delta: i64,
) -> Result<BTreeMap<String, i64>> {
    let mut out = BTreeMap::new();
    for (mp, _, _) in &names.pools {
        let pool = objects::get(&ctx.kinds, client, "MachinePool", NS, mp)
            .await?
            .unwrap_or(Value::Null);
        let n = pool["spec"]["replicas"].as_i64().unwrap_or(0) + delta;
        objects::merge(
            &ctx.kinds,
            client,
            "MachinePool",
            NS,
            mp,
            &json!({"spec": {"replicas": n}}),
        )
        .await?;
        out.insert(mp.clone(), n);
    }
    Ok(out)
}

/// One pause window: wait for Paused True, edit, watch quietly; records what it saw.
async fn paused_window(
    ctx: &Ctx,
    client: &kube::Client,
    names: &Names,
    by: PausedBy,
    delta: i64,
) -> Result<PauseWindow> {
    if let Err(wrong) = wait_paused(ctx, client, names, "True").await? {
        // Still make the edit so that the unpause step has a change to apply.
        set_replicas(ctx, client, names, delta).await?;
        return Ok(PauseWindow {
            by,
            seen: Err(wrong),
        });
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let before = read(ctx, client, names).await?;
    let calls_before = ctx.calls().await;
    let edits = set_replicas(ctx, client, names, delta).await?;
    tokio::time::sleep(ctx.profile.timeouts.quiet).await;
    let after = read(ctx, client, names).await?;
    let calls = calls_between(calls_before, ctx.calls().await);
    Ok(PauseWindow {
        by,
        seen: Ok(QuietWhilePaused {
            edits,
            statuses_before: statuses(&before),
            statuses_after: statuses(&after),
            calls,
            quiet: ctx.profile.timeouts.quiet,
        }),
    })
}

pub(super) async fn pause_and_scale(
    ctx: &Ctx,
    client: &kube::Client,
    names: &Names,
    recorder: &Recorder,
    results: &mut Results,
) -> Result<()> {
    let provision = ctx.profile.timeouts.provision;
    // C35 then C37 and C49: pause the Cluster, scale up, unpause.
    objects::merge(
        &ctx.kinds,
        client,
        "Cluster",
        NS,
        CLUSTER,
        &json!({"spec": {"paused": true}}),
    )
    .await?;
    let window = paused_window(ctx, client, names, PausedBy::Spec, 1).await?;
    results.extend(judge::pause::paused_window(&window));
    objects::merge(
        &ctx.kinds,
        client,
        "Cluster",
        NS,
        CLUSTER,
        &json!({"spec": {"paused": false}}),
    )
    .await?;
    let unpaused = wait_paused(ctx, client, names, "False").await?;
    let settled = wait_settled(ctx, client, names, false, provision).await?;
    results.extend(judge::pause::unpause(&Unpause { unpaused, settled }));

    // C36 then C51: pause by annotation only, scale down, remove the annotation.
    let annotate = |on: bool| {
        let value = if on { json!("") } else { Value::Null };
        json!({"metadata": {"annotations": {PAUSED_ANNOTATION: value}}})
    };
    for (kind, name) in names.provider_objects() {
        objects::merge(&ctx.kinds, client, &kind, NS, &name, &annotate(true)).await?;
    }
    let before: BTreeMap<String, Vec<String>> = read(ctx, client, names)
        .await?
        .pools
        .iter()
        .map(|(mp, (_, i))| (mp.clone(), provider_ids(i)))
        .collect();
    let instance_log = match ctx.instances_url() {
        Some(url) => Some(
            InstanceLog::start(url)
                .await
                .context("reading the profile's instancesUrl")?,
        ),
        None => None,
    };
    let from = Instant::now();
    let window = paused_window(ctx, client, names, PausedBy::Annotation, -1).await?;
    results.extend(judge::pause::paused_window(&window));
    for (kind, name) in names.provider_objects() {
        objects::merge(&ctx.kinds, client, &kind, NS, &name, &annotate(false)).await?;
    }
    let settled = wait_settled(ctx, client, names, false, provision).await?;
    // The instances' last moments: a provider may still drop an ID after it settled.
    let instances = match instance_log {
        Some(l) => {
            tokio::time::sleep(Duration::from_secs(2)).await;
            Some(l.stop())
        }
        None => None,
    };
    results.extend(judge::pools::scale_down(&ScaleDown {
        names: names.clone(),
        recorded: recorder.recorded(),
        from,
        before,
        instances,
        settled,
    }));
    Ok(())
}
