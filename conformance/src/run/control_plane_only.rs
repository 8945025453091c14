//! Clusters beside the main one: one with only a `controlPlaneRef` (C52) and one whose
//! endpoint the user set (C17). Both are applied, waited for, read once for the judge of
//! [`super::judge::control_plane_only`], and deleted.

use std::time::{Duration, Instant};

use anyhow::Result;
use serde_json::{Value, json};

use super::Ctx;
use super::judge::control_plane_only::{self as judge, ControlPlaneOnly, Seen};
use super::judge::endpoint;
use super::setup::{label_for_provider, render};
use crate::checks::{CheckId, Outcome, Results};
use crate::objects;

const CP_NS: &str = "conf-cponly";

/// C52: Clusters with only a controlPlaneRef reach Provisioned; C17: a user-set endpoint stays.
pub async fn control_plane_only(
    ctx: &Ctx,
    client: &kube::Client,
    kubeconfig: &std::path::Path,
    results: &mut Results,
) -> Result<()> {
    objects::ensure_namespace(client, CP_NS).await?;
    let flavor = ctx.profile.template.control_plane_only_flavor.clone();
    let user_endpoint = ("user-endpoint.conformance.invalid".to_string(), 6443_u64);
    let mut clusters = Vec::new();
    for (name, id) in [("cponly", CheckId::C52), ("userep", CheckId::C17)] {
        if !ctx.wants(&[id]) {
            continue;
        }
        let f = match (&flavor, id) {
            (Some(f), _) => f.clone(),
            (None, CheckId::C17) => String::new(),
            (None, _) => {
                results.record(
                    CheckId::C52,
                    Outcome::Skip("the profile names no controlPlaneOnlyFlavor".into()),
                );
                continue;
            }
        };
        let mut docs = render(ctx, kubeconfig, name, CP_NS, &f).await?;
        docs.retain(|d| d["kind"] != "MachinePool" && !docs_pool_kind(ctx, d));
        label_for_provider(&mut docs);
        if id == CheckId::C17 {
            for d in &mut docs {
                if d["kind"] == "Cluster" {
                    d["spec"]["controlPlaneEndpoint"] =
                        json!({"host": user_endpoint.0, "port": user_endpoint.1});
                }
            }
        }
        for d in &docs {
            objects::apply(&ctx.kinds, client, CP_NS, d).await?;
        }
        let cp = docs
            .iter()
            .find(|d| d["kind"] == ctx.roles.control_plane.as_str())
            .and_then(|d| d["metadata"]["name"].as_str())
            .unwrap_or(name)
            .to_string();
        clusters.push((
            name,
            id,
            cp,
            docs.iter()
                .any(|d| ctx.roles.infra.as_deref() == d["kind"].as_str()),
        ));
    }
    let start = Instant::now();
    let mut pending: Vec<_> = clusters.clone();
    while !pending.is_empty() && start.elapsed() < ctx.profile.timeouts.provision {
        let mut still = Vec::new();
        for c in pending {
            let (name, _, cp, _) = &c;
            let (cluster, cpo) = read(ctx, client, name, cp).await?;
            let done = cluster["status"]["phase"] == "Provisioned"
                && cpo["status"]["initialization"]["controlPlaneInitialized"] == true
                && endpoint(&cpo).is_some();
            if !done {
                still.push(c);
            }
        }
        pending = still;
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let mut seen = ControlPlaneOnly {
        flavor: flavor.clone(),
        user_endpoint,
        clusters: Vec::new(),
    };
    for (name, id, cp, has_infra) in &clusters {
        let (cluster, control_plane) = read(ctx, client, name, cp).await?;
        seen.clusters.push(Seen {
            id: *id,
            has_infra: *has_infra,
            cluster,
            control_plane,
        });
    }
    results.extend(judge::control_plane_only(&seen));
    for (name, _, cp, _) in &clusters {
        objects::delete(&ctx.kinds, client, "Cluster", CP_NS, name).await?;
        let deadline = Instant::now() + ctx.profile.timeouts.delete;
        while Instant::now() < deadline
            && objects::get(&ctx.kinds, client, "Cluster", CP_NS, name)
                .await?
                .is_some()
        {
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        if objects::get(&ctx.kinds, client, "Cluster", CP_NS, name)
            .await?
            .is_some()
        {
            objects::strip_finalizers(&ctx.kinds, client, &ctx.roles.control_plane, CP_NS, cp)
                .await;
        }
    }
    Ok(())
}

/// The Cluster `name` and its control plane `cp` (null when absent).
async fn read(ctx: &Ctx, client: &kube::Client, name: &str, cp: &str) -> Result<(Value, Value)> {
    let cluster = objects::get(&ctx.kinds, client, "Cluster", CP_NS, name)
        .await?
        .unwrap_or(Value::Null);
    let control_plane = objects::get(&ctx.kinds, client, &ctx.roles.control_plane, CP_NS, cp)
        .await?
        .unwrap_or(Value::Null);
    Ok((cluster, control_plane))
}

fn docs_pool_kind(ctx: &Ctx, d: &Value) -> bool {
    ctx.roles.pool.as_deref().is_some_and(|k| d["kind"] == k)
}
