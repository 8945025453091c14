//! Objects the provider must leave alone, each watched for the profile's quiet period:
//! - C11: an InfraCluster and a ControlPlane with no Cluster owner (no finalizer, no status, no
//!   cloud resource created);
//! - C38: a whole Cluster without the watch-filter label the provider was started with;
//! - C39: an InfraCluster annotated `cluster.x-k8s.io/managed-by`.

use std::time::Duration;

use anyhow::Result;
use serde_json::{Value, json};

use super::setup::{label_for_provider, render};
use super::{Bed, Ctx};
use crate::checks::{CheckId, Outcome, Results, verdict};
use crate::objects::{self, finalizers, has_status};

const NS: &str = "conf-quiet";

fn pick(docs: &[Value], kinds: &[&str]) -> Vec<Value> {
    docs.iter()
        .filter(|d| kinds.iter().any(|k| d["kind"] == *k))
        .cloned()
        .collect()
}

/// What the provider did to one object: `None` if nothing, else what.
fn touched(obj: &Value) -> Option<String> {
    let f = finalizers(obj);
    let kind = obj["kind"].as_str().unwrap_or_default();
    let name = obj["metadata"]["name"].as_str().unwrap_or_default();
    match (f.is_empty(), has_status(obj)) {
        (true, false) => None,
        (false, false) => Some(format!("{kind}/{name} got finalizers {f:?}")),
        (true, true) => Some(format!("{kind}/{name} got status {}", obj["status"])),
        (false, true) => Some(format!(
            "{kind}/{name} got finalizers {f:?} and status {}",
            obj["status"]
        )),
    }
}

async fn has_cluster_owner(ctx: &Ctx, bed: &Bed, kind: &str, name: &str) -> bool {
    objects::get(&ctx.kinds, &bed.client, kind, NS, name)
        .await
        .ok()
        .flatten()
        .is_some_and(|o| objects::owner(&o, "Cluster").is_some())
}

/// Runs C11, then C38 and C39 together; cleans up after itself.
pub async fn run(ctx: &Ctx, bed: &Bed, results: &mut Results) -> Result<()> {
    objects::ensure_namespace(&bed.client, NS).await?;
    let mut provider_kinds: Vec<String> = ctx.roles.infra.iter().cloned().collect();
    provider_kinds.push(ctx.roles.control_plane.clone());
    let kind_refs: Vec<&str> = provider_kinds.iter().map(String::as_str).collect();
    let quiet = ctx.profile.timeouts.quiet;
    let mut created: Vec<(String, String)> = Vec::new();

    if ctx.wants(&[CheckId::C11]) {
        let mut docs = pick(
            &render(ctx, bed.kubeconfig(), "orphan", NS, "").await?,
            &kind_refs,
        );
        label_for_provider(&mut docs);
        let before = ctx.calls().await;
        for d in &docs {
            objects::apply(&ctx.kinds, &bed.client, NS, d).await?;
            created.push((
                d["kind"].as_str().unwrap_or_default().into(),
                "orphan".into(),
            ));
        }
        tokio::time::sleep(quiet).await;
        let mut problems = Vec::new();
        for d in &docs {
            let kind = d["kind"].as_str().unwrap_or_default();
            let name = d["metadata"]["name"].as_str().unwrap_or_default();
            if let Some(obj) = objects::get(&ctx.kinds, &bed.client, kind, NS, name).await? {
                problems.extend(touched(&obj));
            }
        }
        let creates = match (before, ctx.calls().await) {
            (Some(b), Some(a)) => {
                let c = a.since(&b).matching(&ctx.create_operations());
                if c.total() > 0 {
                    problems.push(format!("the cloud saw {}", c.describe()));
                }
                "no create call in the cloud".to_string()
            }
            _ => "cloud calls not counted (the profile has no emulator callsUrl)".to_string(),
        };
        results.record(
            CheckId::C11,
            verdict(
                problems.is_empty(),
                if problems.is_empty() {
                    format!(
                        "{} without a Cluster owner, {}s later: no finalizer, no status; {creates}",
                        kind_refs.join(" and "),
                        quiet.as_secs()
                    )
                } else {
                    problems.join("; ")
                },
            ),
        );
    }

    let mut watched: Vec<(CheckId, String, String)> = Vec::new();
    if ctx.wants(&[CheckId::C38]) {
        let mut kinds = kind_refs.clone();
        kinds.push("Cluster");
        let docs = pick(
            &render(ctx, bed.kubeconfig(), "unlabelled", NS, "").await?,
            &kinds,
        );
        for d in &docs {
            objects::apply(&ctx.kinds, &bed.client, NS, d).await?;
            let kind = d["kind"].as_str().unwrap_or_default().to_string();
            created.push((kind.clone(), "unlabelled".into()));
            if kind != "Cluster" {
                watched.push((CheckId::C38, kind, "unlabelled".into()));
            }
        }
    }
    if ctx.wants(&[CheckId::C39]) {
        match &ctx.roles.infra {
            None => results.record(
                CheckId::C39,
                Outcome::Skip("the default template has no InfraCluster".into()),
            ),
            Some(infra) => {
                let mut docs = pick(
                    &render(ctx, bed.kubeconfig(), "external", NS, "").await?,
                    &["Cluster", infra.as_str()],
                );
                label_for_provider(&mut docs);
                for d in &mut docs {
                    if d["kind"] == "Cluster" {
                        if let Some(spec) = d["spec"].as_object_mut() {
                            spec.remove("controlPlaneRef");
                        }
                    } else {
                        d["metadata"]["annotations"]["cluster.x-k8s.io/managed-by"] =
                            json!("conformance");
                    }
                }
                for d in &docs {
                    objects::apply(&ctx.kinds, &bed.client, NS, d).await?;
                    created.push((
                        d["kind"].as_str().unwrap_or_default().into(),
                        "external".into(),
                    ));
                }
                watched.push((CheckId::C39, infra.clone(), "external".into()));
            }
        }
    }
    if !watched.is_empty() {
        // Core adds its owner references first; the quiet period starts after that.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        for (_, kind, name) in &watched {
            while !has_cluster_owner(ctx, bed, kind, name).await
                && tokio::time::Instant::now() < deadline
            {
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        }
        tokio::time::sleep(quiet).await;
        for id in [CheckId::C38, CheckId::C39] {
            let mine: Vec<_> = watched.iter().filter(|(i, _, _)| *i == id).collect();
            if mine.is_empty() {
                continue;
            }
            let mut problems = Vec::new();
            let mut names = Vec::new();
            for (_, kind, name) in &mine {
                names.push(format!("{kind}/{name}"));
                match objects::get(&ctx.kinds, &bed.client, kind, NS, name).await? {
                    Some(obj) => {
                        if !has_cluster_owner(ctx, bed, kind, name).await {
                            problems
                                .push(format!("{kind}/{name} never got core's owner reference"));
                        }
                        problems.extend(touched(&obj));
                    }
                    None => problems.push(format!("{kind}/{name} is gone")),
                }
            }
            results.record(
                id,
                verdict(
                    problems.is_empty(),
                    if problems.is_empty() {
                        format!(
                            "{} owned by their Cluster, {}s later: no finalizer, no status",
                            names.join(", "),
                            quiet.as_secs()
                        )
                    } else {
                        problems.join("; ")
                    },
                ),
            );
        }
    }

    // Clean up: nothing here may hold the rest of the run.
    for (kind, name) in created.iter().rev() {
        objects::strip_finalizers(&ctx.kinds, &bed.client, kind, NS, name).await;
        let _ = objects::delete(&ctx.kinds, &bed.client, kind, NS, name).await;
    }
    Ok(())
}
