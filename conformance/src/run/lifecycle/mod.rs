//! A whole cluster's life from the default flavor: provisioned and judged, its credentials
//! sampled, paused two ways, scaled, scaled from outside, moved to a second plane, deleted.
//!
//! Each step observes and records what it saw; the verdicts come from the pure judges of
//! [`super::judge`]. This module holds the order of the steps and what they share: the names of
//! the cluster's objects, reading their state, and waiting for the cluster to settle.

mod clusterctl_move;
mod credentials;
mod deletion;
mod outside_scale;
mod pause;
mod provisioned;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::Value;

use super::judge;
use super::setup::label_for_provider;
use super::{Bed, Ctx};
use crate::checks::{CheckId, Outcome, Results};
use crate::objects::{self, Recorder, condition_status};
use crate::procs::Calls;

pub(crate) const NS: &str = "conf-main";
pub(crate) const CLUSTER: &str = "conf";

/// The names of the objects of the cluster under test.
#[derive(Debug, Clone)]
pub(crate) struct Names {
    pub(crate) infra: Option<(String, String)>,
    pub(crate) control_plane: (String, String),
    /// (MachinePool name, InfraMachinePool kind, InfraMachinePool name).
    pub(crate) pools: Vec<(String, String, String)>,
}

impl Names {
    pub(crate) fn from_docs(docs: &[Value]) -> Result<Self> {
        let cluster = docs
            .iter()
            .find(|d| d["kind"] == "Cluster")
            .context("no Cluster rendered")?;
        let reference = |r: &Value| -> Option<(String, String)> {
            Some((
                r["kind"].as_str()?.to_string(),
                r["name"].as_str()?.to_string(),
            ))
        };
        let control_plane = reference(&cluster["spec"]["controlPlaneRef"])
            .context("the Cluster has no controlPlaneRef")?;
        let infra = reference(&cluster["spec"]["infrastructureRef"]);
        let pools = docs
            .iter()
            .filter(|d| d["kind"] == "MachinePool")
            .filter_map(|d| {
                let (kind, name) = reference(&d["spec"]["template"]["spec"]["infrastructureRef"])?;
                Some((d["metadata"]["name"].as_str()?.to_string(), kind, name))
            })
            .collect();
        Ok(Self {
            infra,
            control_plane,
            pools,
        })
    }

    /// Every provider object: (kind, name).
    pub(crate) fn provider_objects(&self) -> Vec<(String, String)> {
        let mut out: Vec<_> = self.infra.iter().cloned().collect();
        out.push(self.control_plane.clone());
        out.extend(self.pools.iter().map(|(_, k, n)| (k.clone(), n.clone())));
        out
    }
}

/// Current state of everything, read fresh.
#[derive(Debug, Clone, Default)]
pub(crate) struct State {
    pub(crate) cluster: Value,
    pub(crate) infra: Value,
    pub(crate) control_plane: Value,
    /// MachinePool name → (MachinePool, InfraMachinePool).
    pub(crate) pools: BTreeMap<String, (Value, Value)>,
    pub(crate) secret: Value,
}

pub(crate) async fn read(ctx: &Ctx, client: &kube::Client, names: &Names) -> Result<State> {
    let k = &ctx.kinds;
    let get = |kind: String, name: String| async move {
        Ok::<Value, anyhow::Error>(
            objects::get(k, client, &kind, NS, &name)
                .await?
                .unwrap_or(Value::Null),
        )
    };
    let mut state = State {
        cluster: get("Cluster".into(), CLUSTER.into()).await?,
        control_plane: get(names.control_plane.0.clone(), names.control_plane.1.clone()).await?,
        secret: get("Secret".into(), format!("{CLUSTER}-kubeconfig")).await?,
        ..State::default()
    };
    if let Some((kind, name)) = &names.infra {
        state.infra = get(kind.clone(), name.clone()).await?;
    }
    for (mp, kind, name) in &names.pools {
        let pool = get("MachinePool".into(), mp.clone()).await?;
        let infra = get(kind.clone(), name.clone()).await?;
        state.pools.insert(mp.clone(), (pool, infra));
    }
    Ok(state)
}

pub(crate) fn provider_ids(infra_pool: &Value) -> Vec<String> {
    infra_pool["spec"]["providerIDList"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect()
}

/// Why the cluster is not settled yet (empty: settled). `probe`: also wait for core's remote
/// connection.
pub(crate) fn unsettled(state: &State, probe: bool) -> Vec<String> {
    let mut why = Vec::new();
    let status = &state.cluster["status"];
    if status["phase"] != "Provisioned" {
        why.push(format!("Cluster phase {}", status["phase"]));
    }
    if status["initialization"]["controlPlaneInitialized"] != true {
        why.push("Cluster controlPlaneInitialized not true".into());
    }
    if probe && condition_status(&state.cluster, "RemoteConnectionProbe") != "True" {
        why.push(format!(
            "RemoteConnectionProbe {}",
            condition_status(&state.cluster, "RemoteConnectionProbe")
        ));
    }
    for (name, (mp, infra)) in &state.pools {
        let desired = mp["spec"]["replicas"].as_u64().unwrap_or(0) as usize;
        let ids = provider_ids(infra).len();
        let reported = infra["status"]["replicas"].as_u64().map(|r| r as usize);
        let refs = mp["status"]["nodeRefs"].as_array().map_or(0, Vec::len);
        if ids != desired
            || reported != Some(desired)
            || refs != desired
            || mp["status"]["phase"] != "Running"
        {
            why.push(format!(
                "pool {name}: desired {desired}, providerIDList {ids}, status.replicas {reported:?}, nodeRefs {refs}, phase {}",
                mp["status"]["phase"]
            ));
        }
    }
    why
}

pub(crate) async fn wait_settled(
    ctx: &Ctx,
    client: &kube::Client,
    names: &Names,
    probe: bool,
    timeout: Duration,
) -> Result<std::result::Result<Duration, String>> {
    let start = Instant::now();
    loop {
        let state = read(ctx, client, names).await?;
        let why = unsettled(&state, probe);
        if why.is_empty() {
            return Ok(Ok(start.elapsed()));
        }
        if start.elapsed() >= timeout {
            return Ok(Err(format!(
                "not settled after {timeout:?}: {}",
                why.join("; ")
            )));
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// The cloud calls counted between two reads of the emulator's counters (`None`: not counted).
fn calls_between(before: Option<Calls>, after: Option<Calls>) -> Option<Calls> {
    match (before, after) {
        (Some(before), Some(after)) => Some(after.since(&before)),
        _ => None,
    }
}

/// Runs the whole life; records its checks.
pub async fn run(
    ctx: &Ctx,
    a: &mut Bed,
    mut docs: Vec<Value>,
    results: &mut Results,
) -> Result<()> {
    objects::ensure_namespace(&a.client, NS).await?;
    let names = Names::from_docs(&docs)?;
    let mut watched: Vec<String> = vec!["Cluster".into(), "MachinePool".into(), "Secret".into()];
    watched.extend(names.provider_objects().into_iter().map(|(k, _)| k));
    watched.sort();
    watched.dedup();
    let watched_refs: Vec<&str> = watched.iter().map(String::as_str).collect();
    let recorder = Recorder::start(&ctx.kinds, &a.client, NS, &watched_refs).await?;

    label_for_provider(&mut docs);
    eprintln!("conformance: applying Cluster {NS}/{CLUSTER} from the default flavor");
    for d in &docs {
        objects::apply(&ctx.kinds, &a.client, NS, d).await?;
    }
    let provision = ctx.profile.timeouts.provision;
    let settled = wait_settled(ctx, &a.client, &names, true, provision).await?;
    a.ensure_provider()?;
    let state = read(ctx, &a.client, &names).await?;
    match &settled {
        Ok(took) => eprintln!("conformance: settled in {:.1}s", took.as_secs_f64()),
        Err(why) => eprintln!("conformance: {why}"),
    }
    let seen = provisioned::record(ctx, &names, state, &recorder, settled.as_ref().err()).await;
    results.extend(judge::provisioned(&seen));

    if ctx.wants(&[CheckId::C33]) {
        eprintln!(
            "conformance: sampling the kubeconfig's credential over twice its lifetime (C33)"
        );
        let samples = credentials::sample(ctx, &a.client).await;
        results.extend(judge::kubeconfig::credentials(&samples));
    }
    let pause_ids = [
        CheckId::C35,
        CheckId::C36,
        CheckId::C37,
        CheckId::C49,
        CheckId::C51,
    ];
    if settled.is_ok() && ctx.wants(&pause_ids) {
        eprintln!("conformance: pausing, scaling, unpausing (C35, C36, C37, C49, C51)");
        pause::pause_and_scale(ctx, &a.client, &names, &recorder, results).await?;
    }
    if settled.is_ok() && ctx.wants(&[CheckId::C50]) {
        eprintln!("conformance: scaling from outside Cluster API (C50)");
        let seen = outside_scale::scale(ctx, &a.client, &names).await?;
        results.extend(judge::pools::outside_scale(&seen));
    }

    let mut b = None;
    if settled.is_ok() && ctx.wants(&[CheckId::C59]) {
        match clusterctl_move::move_cluster(ctx, a, &names).await {
            Ok((bed, seen)) => {
                let verdicts = judge::clusterctl::moved(&seen);
                let moved = verdicts
                    .iter()
                    .all(|(_, outcome)| matches!(outcome, Outcome::Pass(_)));
                results.extend(verdicts);
                if moved {
                    b = Some(bed);
                } else {
                    bed.stop(!ctx.discard).await;
                }
            }
            Err(e) => results.record(CheckId::C59, Outcome::Fail(format!("{e:#}"))),
        }
    }
    let deletion = match &b {
        Some(bed) => {
            let rec = Recorder::start(&ctx.kinds, &bed.client, NS, &watched_refs).await?;
            deletion::delete_and_judge(ctx, &bed.client, &names, &rec, results).await
        }
        None => deletion::delete_and_judge(ctx, &a.client, &names, &recorder, results).await,
    };
    if let Some(bed) = b {
        bed.stop(deletion.is_err() && !ctx.discard).await;
    }
    deletion
}
