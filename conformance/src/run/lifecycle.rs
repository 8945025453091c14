//! A whole cluster's life from the default flavor: provisioned and judged, its credentials
//! sampled, paused two ways, scaled, scaled from outside, moved to a second plane, deleted.
//! Beside it, control-plane-only Clusters (C52) and one with a user-set endpoint (C17).

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use k8s_openapi::api::core::v1::{Namespace, Node};
use kube::api::{Api, ListParams};
use serde_json::{Value, json};

use super::instances::{self, InstanceLog};
use super::setup::{label_for_provider, render};
use super::{Bed, Ctx};
use crate::checks::{Outcome, Results, verdict};
use crate::objects::{
    self, CLUSTER_NAME_LABEL, Recorder, condition, condition_status, finalizers, owner, rv,
};

pub(crate) const NS: &str = "conf-main";
pub(crate) const CLUSTER: &str = "conf";
const PAUSED_ANNOTATION: &str = "cluster.x-k8s.io/paused";
const MANAGED_BY_REPLICAS: &str = "cluster.x-k8s.io/replicas-managed-by";

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
    judge_provisioned(
        ctx,
        &names,
        &state,
        &recorder,
        settled.as_ref().err(),
        results,
    )
    .await;

    if ctx.wants(&["C33"]) {
        eprintln!(
            "conformance: sampling the kubeconfig's credential over twice its lifetime (C33)"
        );
        results.record("C33", sample_credentials(ctx, &a.client).await);
    }
    if settled.is_ok() && ctx.wants(&["C35", "C36", "C37", "C49", "C51"]) {
        eprintln!("conformance: pausing, scaling, unpausing (C35, C36, C37, C49, C51)");
        pause_and_scale(ctx, &a.client, &names, &recorder, results).await?;
    }
    if settled.is_ok() && ctx.wants(&["C50"]) {
        eprintln!("conformance: scaling from outside Cluster API (C50)");
        results.record("C50", outside_scale(ctx, &a.client, &names).await?);
    }

    let mut b = None;
    if settled.is_ok() && ctx.wants(&["C59"]) {
        match move_cluster(ctx, a, &names).await {
            Ok((bed, outcome)) => {
                let moved = matches!(outcome, Outcome::Pass(_));
                results.record("C59", outcome);
                if moved {
                    b = Some(bed);
                } else {
                    bed.stop(!ctx.discard).await;
                }
            }
            Err(e) => results.record("C59", Outcome::Fail(format!("{e:#}"))),
        }
    }
    let deletion = match &b {
        Some(bed) => {
            let rec = Recorder::start(&ctx.kinds, &bed.client, NS, &watched_refs).await?;
            delete_and_judge(ctx, &bed.client, &names, &rec, results).await
        }
        None => delete_and_judge(ctx, &a.client, &names, &recorder, results).await,
    };
    if let Some(bed) = b {
        bed.stop(deletion.is_err() && !ctx.discard).await;
    }
    deletion
}

fn label(obj: &Value, key: &str) -> Option<String> {
    obj["metadata"]["labels"][key].as_str().map(str::to_string)
}

fn flagged(obj: &Value) -> Vec<&'static str> {
    let s = &obj["status"];
    let mut out = Vec::new();
    if s["initialization"]["provisioned"] == true {
        out.push("initialization.provisioned");
    }
    if s["initialization"]["controlPlaneInitialized"] == true {
        out.push("initialization.controlPlaneInitialized");
    }
    if s["ready"] == true {
        out.push("ready");
    }
    if s["initialized"] == true {
        out.push("initialized");
    }
    out
}

fn endpoint(obj: &Value) -> Option<(String, u64)> {
    let e = &obj["spec"]["controlPlaneEndpoint"];
    let host = e["host"].as_str().filter(|h| !h.is_empty())?;
    Some((host.to_string(), e["port"].as_u64().unwrap_or(0)))
}

fn minor(version: &str) -> Option<(u64, u64)> {
    let rest = version.strip_prefix('v')?;
    let mut parts = rest.split(['.', '-', '+']);
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// The kubeconfig in the Secret: (text, server).
fn kubeconfig_of(secret: &Value) -> Option<(String, String)> {
    use base64::Engine as _;
    let data = secret["data"]["value"].as_str()?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let config: Value = serde_saphyr::from_str(&text).ok()?;
    let context_name = config["current-context"].as_str()?;
    let context = config["contexts"]
        .as_array()?
        .iter()
        .find(|c| c["name"] == context_name)?;
    let cluster_name = context["context"]["cluster"].as_str()?;
    let server = config["clusters"]
        .as_array()?
        .iter()
        .find(|c| c["name"] == cluster_name)?["cluster"]["server"]
        .as_str()?
        .to_string();
    Some((text, server))
}

fn host_port(server: &str) -> (String, u64) {
    let rest = server
        .trim_start_matches("https://")
        .trim_start_matches("http://");
    let authority = rest.split('/').next().unwrap_or_default();
    match authority.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || authority.starts_with('[') => (
            h.trim_matches(['[', ']']).to_string(),
            p.parse().unwrap_or(443),
        ),
        _ => (authority.to_string(), 443),
    }
}

async fn workload_client(text: &str) -> Result<kube::Client> {
    let raw = kube::config::Kubeconfig::from_yaml(text)?;
    let mut config =
        kube::Config::from_custom_kubeconfig(raw, &kube::config::KubeConfigOptions::default())
            .await?;
    config.connect_timeout = Some(Duration::from_secs(10));
    config.read_timeout = Some(Duration::from_secs(20));
    Ok(kube::Client::try_from(config)?)
}

async fn reach(text: &str) -> std::result::Result<usize, String> {
    let client = workload_client(text).await.map_err(|e| format!("{e:#}"))?;
    let api: Api<Namespace> = Api::all(client);
    api.list(&ListParams::default().limit(50))
        .await
        .map(|l| l.items.len())
        .map_err(|e| e.to_string())
}

#[allow(clippy::too_many_lines)]
async fn judge_provisioned(
    ctx: &Ctx,
    names: &Names,
    state: &State,
    recorder: &Recorder,
    not_settled: Option<&String>,
    results: &mut Results,
) {
    let note = not_settled.map(|w| format!(" ({w})")).unwrap_or_default();
    let cluster = &state.cluster;
    let cp = &state.control_plane;
    let cp_kind = &names.control_plane.0;

    // C09, C13: owner refs and labels.
    let mut problems = Vec::new();
    for (what, obj) in [("InfraCluster", &state.infra), ("ControlPlane", cp)] {
        if what == "InfraCluster" && names.infra.is_none() {
            continue;
        }
        if owner(obj, "Cluster").and_then(|r| r["name"].as_str()) != Some(CLUSTER) {
            problems.push(format!(
                "{what} owners {}",
                obj["metadata"]["ownerReferences"]
            ));
        }
        if label(obj, CLUSTER_NAME_LABEL).as_deref() != Some(CLUSTER) {
            problems.push(format!(
                "{what} cluster-name label {:?}",
                label(obj, CLUSTER_NAME_LABEL)
            ));
        }
    }
    results.record(
        "C09",
        verdict(
            problems.is_empty(),
            if problems.is_empty() {
                "owner reference to Cluster/conf and its label on both".to_string()
            } else {
                problems.join("; ")
            },
        ),
    );
    let mut problems = Vec::new();
    for (mp, (_, infra)) in &state.pools {
        let controller = owner(infra, "MachinePool");
        if controller.and_then(|r| r["name"].as_str()) != Some(mp.as_str())
            || controller.map(|r| r["controller"].clone()) != Some(json!(true))
        {
            problems.push(format!(
                "pool of {mp}: owners {}",
                infra["metadata"]["ownerReferences"]
            ));
        }
        if label(infra, CLUSTER_NAME_LABEL).as_deref() != Some(CLUSTER) {
            problems.push(format!(
                "pool of {mp}: cluster-name label {:?}",
                label(infra, CLUSTER_NAME_LABEL)
            ));
        }
    }
    results.record(
        "C13",
        pool_verdict(
            names,
            problems,
            "controller owner MachinePool and the cluster-name label on every pool",
        ),
    );

    // C12: no version with a flag and no finalizer.
    let mut problems = Vec::new();
    let mut flagged_seen = 0;
    for (kind, name) in names.provider_objects() {
        for seen in recorder.history(&kind, &name) {
            if seen.deleted {
                continue;
            }
            let flags = flagged(&seen.obj);
            if !flags.is_empty() {
                flagged_seen += 1;
                if finalizers(&seen.obj).is_empty() {
                    problems.push(format!(
                        "{kind}/{name} at resourceVersion {} had {} without a finalizer",
                        rv(&seen.obj),
                        flags.join(", ")
                    ));
                }
            }
        }
    }
    if flagged_seen == 0 {
        problems.push(format!(
            "no provider object reached a provisioned/initialized flag{note}"
        ));
    }
    problems.dedup();
    results.record(
        "C12",
        verdict(
            problems.is_empty(),
            if problems.is_empty() {
                format!("{flagged_seen} recorded versions with a flag, all with the finalizer")
            } else {
                problems.into_iter().take(3).collect::<Vec<_>>().join("; ")
            },
        ),
    );

    // C14, C15, C18, C19: the InfraCluster.
    match &names.infra {
        None => {
            for id in ["C14", "C15", "C18", "C19"] {
                results.record(
                    id,
                    Outcome::Skip("the default template has no InfraCluster".into()),
                );
            }
        }
        Some((kind, name)) => {
            let infra = &state.infra;
            results.record(
                "C14",
                verdict(
                    infra["status"]["initialization"]["provisioned"] == true
                        && cluster["status"]["initialization"]["infrastructureProvisioned"] == true,
                    format!(
                        "{kind} initialization.provisioned {}; Cluster infrastructureProvisioned {}{note}",
                        infra["status"]["initialization"]["provisioned"],
                        cluster["status"]["initialization"]["infrastructureProvisioned"]
                    ),
                ),
            );
            let set: Vec<_> = recorder
                .history(kind, name)
                .iter()
                .filter_map(|s| endpoint(&s.obj).map(|e| (rv(&s.obj), e)))
                .collect();
            results.record(
                "C15",
                match set.first() {
                    None => Outcome::Pass(format!(
                        "{} recorded versions, none with spec.controlPlaneEndpoint",
                        recorder.history(kind, name).len()
                    )),
                    Some((v, (h, p))) => Outcome::Fail(format!(
                        "{kind}/{name} set spec.controlPlaneEndpoint {h}:{p} (resourceVersion {v})"
                    )),
                },
            );
            let infra_ready = condition_status(infra, "Ready");
            let cluster_ready = condition_status(cluster, "InfrastructureReady");
            results.record(
                "C18",
                verdict(
                    infra_ready == cluster_ready && infra_ready != "absent",
                    format!("{kind} Ready {infra_ready}; Cluster InfrastructureReady {cluster_ready}{note}"),
                ),
            );
            let domains = |o: &Value| -> BTreeSet<String> {
                o["status"]["failureDomains"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|d| d["name"].as_str().map(str::to_string))
                    .collect()
            };
            let (mine, core) = (domains(infra), domains(cluster));
            results.record(
                "C19",
                verdict(
                    mine == core && (!mine.is_empty() || !ctx.profile.failure_domains),
                    format!("{kind} failureDomains {mine:?}; Cluster {core:?}{note}"),
                ),
            );
        }
    }

    // C16, C20–C23, C25: the control plane.
    let cluster_ep = endpoint(cluster);
    let cp_ep = endpoint(cp);
    results.record(
        "C16",
        verdict(
            cp_ep.is_some() && cp_ep.as_ref().is_some_and(|(_, p)| *p > 0) && cp_ep == cluster_ep,
            format!("{cp_kind} endpoint {cp_ep:?}; Cluster {cluster_ep:?}{note}"),
        ),
    );
    let cp_init = cp["status"]["initialization"]["controlPlaneInitialized"] == true;
    let cluster_init = cluster["status"]["initialization"]["controlPlaneInitialized"] == true;
    let cond = condition_status(cluster, "ControlPlaneInitialized");
    results.record(
        "C20",
        verdict(
            cp_init && cluster_init && cond == "True",
            format!("{cp_kind} controlPlaneInitialized {cp_init}; Cluster {cluster_init}, condition ControlPlaneInitialized {cond}{note}"),
        ),
    );
    let first_cluster = recorder
        .history("Cluster", CLUSTER)
        .first()
        .map(|s| endpoint(&s.obj));
    results.record(
        "C21",
        match first_cluster {
            Some(None) => verdict(
                cp_init,
                format!("the Cluster was created without an endpoint; {cp_kind} initialized: {cp_init}{note}"),
            ),
            Some(Some(e)) => Outcome::Skip(format!("the Cluster had endpoint {e:?} when first seen")),
            None => Outcome::Fail("the Cluster was never seen".into()),
        },
    );
    results.record(
        "C22",
        verdict(
            cp["status"]["externalManagedControlPlane"] == true,
            format!(
                "status.externalManagedControlPlane = {}",
                cp["status"]["externalManagedControlPlane"]
            ),
        ),
    );
    let spec_minor = cp["spec"]["version"].as_str().and_then(minor);
    let mut reported: Vec<String> = cp["status"]["version"]
        .as_str()
        .map(str::to_string)
        .into_iter()
        .collect();
    reported.extend(
        cp["status"]["versions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v["version"].as_str().map(str::to_string)),
    );
    let bad: Vec<_> = reported
        .iter()
        .filter(|v| minor(v).is_none() || minor(v) != spec_minor)
        .collect();
    results.record(
        "C23",
        verdict(
            !reported.is_empty() && bad.is_empty() && spec_minor.is_some(),
            format!(
                "spec.version {}; reported {reported:?}{note}",
                cp["spec"]["version"]
            ),
        ),
    );
    let available = condition_status(cp, "Available");
    let cluster_available = condition_status(cluster, "ControlPlaneAvailable");
    results.record(
        "C25",
        verdict(
            available == cluster_available && available != "absent",
            format!("{cp_kind} Available {available}; Cluster ControlPlaneAvailable {cluster_available}{note}"),
        ),
    );

    // C26: condition shape on every provider object.
    let mut problems = Vec::new();
    let mut count = 0;
    let mut objs: Vec<&Value> = vec![cp];
    if names.infra.is_some() {
        objs.push(&state.infra);
    }
    objs.extend(state.pools.values().map(|(_, i)| i));
    for obj in objs {
        let generation = obj["metadata"]["generation"].as_i64();
        let kind = obj["kind"].as_str().unwrap_or_default();
        let conditions = obj["status"]["conditions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if conditions.is_empty() {
            problems.push(format!("{kind} has no conditions"));
        }
        for c in conditions {
            count += 1;
            let t = c["type"].as_str().unwrap_or_default();
            let mut missing = Vec::new();
            if t.is_empty() {
                missing.push("type");
            }
            if !["True", "False", "Unknown"].contains(&c["status"].as_str().unwrap_or_default()) {
                missing.push("status");
            }
            if c["reason"].as_str().unwrap_or_default().is_empty() {
                missing.push("reason");
            }
            if c["lastTransitionTime"]
                .as_str()
                .unwrap_or_default()
                .is_empty()
            {
                missing.push("lastTransitionTime");
            }
            if c["observedGeneration"].as_i64() != generation {
                missing.push("observedGeneration = generation");
            }
            if !missing.is_empty() {
                problems.push(format!("{kind} condition {t}: no {}", missing.join(", ")));
            }
        }
    }
    results.record(
        "C26",
        verdict(
            problems.is_empty(),
            if problems.is_empty() {
                format!("{count} conditions, all complete")
            } else {
                problems.join("; ")
            },
        ),
    );

    // C27–C31: the kubeconfig Secret.
    let secret_name = format!("{CLUSTER}-kubeconfig");
    let first_secret = recorder
        .history("Secret", &secret_name)
        .iter()
        .find(|s| !s.deleted)
        .map(|s| rv(&s.obj));
    let first_init = recorder
        .history(cp_kind, &names.control_plane.1)
        .iter()
        .find(|s| s.obj["status"]["initialization"]["controlPlaneInitialized"] == true)
        .map(|s| rv(&s.obj));
    results.record(
        "C27",
        match (first_secret, first_init) {
            (Some(s), Some(i)) => verdict(
                s < i,
                format!("Secret created at resourceVersion {s}; controlPlaneInitialized first seen at {i}"),
            ),
            (None, Some(i)) => Outcome::Fail(format!("controlPlaneInitialized at {i}, no {secret_name} ever")),
            (_, None) => Outcome::Fail(format!("the control plane never initialized{note}")),
        },
    );
    let secret = &state.secret;
    if secret.is_null() {
        for id in ["C28", "C29", "C30", "C31"] {
            results.record(
                id,
                Outcome::Fail(format!("no Secret {NS}/{secret_name}{note}")),
            );
        }
    } else {
        let type_ = secret["type"].as_str().unwrap_or_default().to_string();
        let l = label(secret, CLUSTER_NAME_LABEL);
        results.record(
            "C28",
            verdict(
                type_ == "cluster.x-k8s.io/secret" && l.as_deref() == Some(CLUSTER),
                format!("type {type_:?}, cluster-name label {l:?}"),
            ),
        );
        match kubeconfig_of(secret) {
            None => {
                results.record(
                    "C29",
                    Outcome::Fail("data.value is not a kubeconfig with a current context".into()),
                );
                results.record(
                    "C30",
                    Outcome::Fail("no kubeconfig to build a client from".into()),
                );
            }
            Some((text, server)) => {
                let (h, p) = host_port(&server);
                results.record(
                    "C29",
                    verdict(
                        cluster_ep.as_ref() == Some(&(h.clone(), p)),
                        format!("server {server}; Cluster endpoint {cluster_ep:?}"),
                    ),
                );
                results.record(
                    "C30",
                    match reach(&text).await {
                        Ok(n) => Outcome::Pass(format!("listed {n} namespaces on {server}")),
                        Err(e) => Outcome::Fail(format!("{server}: {e}")),
                    },
                );
            }
        }
        let probe = condition(cluster, "RemoteConnectionProbe")
            .cloned()
            .unwrap_or(Value::Null);
        results.record(
            "C31",
            verdict(
                probe["status"] == "True",
                format!(
                    "RemoteConnectionProbe {} {}",
                    probe["status"], probe["reason"]
                ),
            ),
        );
    }
    let secret_owner = owner(secret, cp_kind).cloned();
    if secret_owner.as_ref().and_then(|o| o["name"].as_str())
        != Some(names.control_plane.1.as_str())
        || secret_owner.as_ref().map(|o| o["controller"].clone()) != Some(json!(true))
    {
        results.record(
            "C32",
            Outcome::Fail(format!(
                "the Secret's owners: {}",
                secret["metadata"]["ownerReferences"]
            )),
        );
    }

    // C34: any other kubeconfig-bearing Secret of this cluster.
    let mut user_configs = 0;
    let mut problems = Vec::new();
    let mut seen_names = BTreeSet::new();
    for s in recorder.all_of("Secret") {
        if s.name == secret_name || s.deleted || !seen_names.insert(s.name.clone()) {
            continue;
        }
        let Some((text, _)) = kubeconfig_of(&s.obj) else {
            continue;
        };
        user_configs += 1;
        let config: Value = serde_saphyr::from_str(&text).unwrap_or(Value::Null);
        for why in objects::static_credentials(&config) {
            problems.push(format!("{}: {why}", s.name));
        }
    }
    results.record(
        "C34",
        if user_configs == 0 {
            Outcome::Skip("no user kubeconfig Secret is shipped".into())
        } else {
            verdict(
                problems.is_empty(),
                if problems.is_empty() {
                    format!("{user_configs} user kubeconfig(s): exec or provider plugins only")
                } else {
                    problems.join("; ")
                },
            )
        },
    );

    // C44, C46, C47, C48: pools.
    let mut c44 = Vec::new();
    let mut c46 = Vec::new();
    let mut c47 = Vec::new();
    let mut c48 = Vec::new();
    let nodes = match kubeconfig_of(secret) {
        Some((text, _)) => match workload_client(&text).await {
            Ok(c) => Api::<Node>::all(c)
                .list(&ListParams::default())
                .await
                .map(|l| l.items)
                .map_err(|e| e.to_string()),
            Err(e) => Err(format!("{e:#}")),
        },
        None => Err("no kubeconfig".into()),
    };
    for (mp, (pool, infra)) in &state.pools {
        let bootstrap = &pool["spec"]["template"]["spec"]["bootstrap"]["dataSecretName"];
        let created = &pool["status"]["initialization"]["bootstrapDataSecretCreated"];
        if bootstrap != "" || created != true {
            c44.push(format!(
                "{mp}: dataSecretName {bootstrap}, bootstrapDataSecretCreated {created}"
            ));
        }
        if infra["status"]["ready"] != true
            || infra["status"]["initialization"]["provisioned"] != true
        {
            c46.push(format!(
                "{mp}: status.ready {}, initialization.provisioned {}",
                infra["status"]["ready"], infra["status"]["initialization"]["provisioned"]
            ));
        }
        let ids = provider_ids(infra);
        let reported = infra["status"]["replicas"].as_u64();
        let desired = pool["spec"]["replicas"].as_u64();
        if Some(ids.len() as u64) != reported || reported != desired {
            c47.push(format!(
                "{mp}: providerIDList {}, status.replicas {reported:?}, spec.replicas {desired:?}",
                ids.len()
            ));
        }
        match &nodes {
            Err(e) => c48.push(format!("cannot list the workload's Nodes: {e}")),
            Ok(nodes) => {
                let mut matched = BTreeSet::new();
                for id in &ids {
                    let hits: Vec<_> = nodes
                        .iter()
                        .filter(|n| {
                            n.spec.as_ref().and_then(|s| s.provider_id.as_deref())
                                == Some(id.as_str())
                        })
                        .filter_map(|n| n.metadata.name.clone())
                        .collect();
                    if hits.len() == 1 {
                        matched.extend(hits);
                    } else {
                        c48.push(format!(
                            "{mp}: provider ID {id} matches {} Nodes",
                            hits.len()
                        ));
                    }
                }
                let refs: BTreeSet<String> = pool["status"]["nodeRefs"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|r| r["name"].as_str().map(str::to_string))
                    .collect();
                if refs != matched {
                    c48.push(format!(
                        "{mp}: nodeRefs {refs:?}, Nodes of the provider IDs {matched:?}"
                    ));
                }
                if pool["status"]["phase"] != "Running" {
                    c48.push(format!("{mp}: phase {}", pool["status"]["phase"]));
                }
            }
        }
    }
    results.record(
        "C44",
        pool_verdict(
            names,
            c44,
            "dataSecretName \"\" admitted; bootstrapDataSecretCreated true",
        ),
    );
    results.record(
        "C46",
        pool_verdict(
            names,
            c46,
            "status.ready and status.initialization.provisioned on every pool",
        ),
    );
    results.record(
        "C47",
        pool_verdict(
            names,
            c47,
            "providerIDList = status.replicas = MachinePool spec.replicas",
        ),
    );
    results.record(
        "C48",
        pool_verdict(
            names,
            c48,
            "every provider ID is one Node; nodeRefs list them; phase Running",
        ),
    );
}

fn pool_verdict(names: &Names, problems: Vec<String>, ok: &str) -> Outcome {
    if names.pools.is_empty() {
        return Outcome::Skip("the default template has no MachinePool".into());
    }
    verdict(
        problems.is_empty(),
        if problems.is_empty() {
            ok.to_string()
        } else {
            problems.join("; ")
        },
    )
}

/// C33: over twice the credential's lifetime, a client from the Secret always gets in.
async fn sample_credentials(ctx: &Ctx, client: &kube::Client) -> Outcome {
    let Some(lifetime) = ctx.profile.token_lifetime else {
        return Outcome::Skip(
            "the profile names no tokenLifetime (credentials do not expire)".into(),
        );
    };
    let every = (lifetime / 6).max(Duration::from_secs(2));
    let end = Instant::now() + lifetime * 2 + every;
    let mut samples = 0;
    let mut credentials = BTreeSet::new();
    let mut failures = Vec::new();
    while Instant::now() < end {
        let secret = objects::get(
            &ctx.kinds,
            client,
            "Secret",
            NS,
            &format!("{CLUSTER}-kubeconfig"),
        )
        .await
        .ok()
        .flatten()
        .unwrap_or(Value::Null);
        match kubeconfig_of(&secret) {
            None => failures.push(format!("sample {samples}: no kubeconfig")),
            Some((text, _)) => {
                credentials.insert(text.clone());
                if let Err(e) = reach(&text).await {
                    failures.push(format!("sample {samples}: {e}"));
                }
            }
        }
        samples += 1;
        tokio::time::sleep(every).await;
    }
    verdict(
        failures.is_empty(),
        if failures.is_empty() {
            format!(
                "{samples} samples over {:?} (lifetime {lifetime:?}): every one got in; {} distinct credentials",
                lifetime * 2,
                credentials.len()
            )
        } else {
            failures.into_iter().take(3).collect::<Vec<_>>().join("; ")
        },
    )
}

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

/// One pause window: wait for Paused True, edit, watch quietly; returns the outcome.
async fn paused_window(
    ctx: &Ctx,
    client: &kube::Client,
    names: &Names,
    how: &str,
    delta: i64,
) -> Result<Outcome> {
    if let Err(wrong) = wait_paused(ctx, client, names, "True").await? {
        // Still make the edit so that the unpause step has a change to apply.
        set_replicas(ctx, client, names, delta).await?;
        return Ok(Outcome::Fail(format!(
            "{how}: Paused not True with reason Paused: {wrong}"
        )));
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let before = read(ctx, client, names).await?;
    let calls_before = ctx.calls().await;
    let edits = set_replicas(ctx, client, names, delta).await?;
    tokio::time::sleep(ctx.profile.timeouts.quiet).await;
    let after = read(ctx, client, names).await?;
    let mut problems = Vec::new();
    if statuses(&before) != statuses(&after) {
        problems.push(format!(
            "status changed while paused: before {} after {}",
            statuses(&before),
            statuses(&after)
        ));
    }
    let calls = match (calls_before, ctx.calls().await) {
        (Some(b), Some(a)) => {
            let d = a.since(&b);
            if d.total() > 0 {
                problems.push(format!("cloud calls while paused: {}", d.describe()));
            }
            "no cloud call"
        }
        _ => "cloud calls not counted",
    };
    Ok(verdict(
        problems.is_empty(),
        if problems.is_empty() {
            format!(
                "{how}: Paused True; MachinePool replicas set to {edits:?}; {}s later no status change, {calls}",
                ctx.profile.timeouts.quiet.as_secs()
            )
        } else {
            format!("{how}: {}", problems.join("; "))
        },
    ))
}

async fn pause_and_scale(
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
    results.record(
        "C35",
        paused_window(ctx, client, names, "Cluster.spec.paused", 1).await?,
    );
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
    results.record(
        "C37",
        match (&unpaused, &settled) {
            (Ok(()), Ok(t)) => Outcome::Pass(format!(
                "Paused False (NotPaused); the pending scale-up applied in {:.1}s",
                t.as_secs_f64()
            )),
            (Err(w), _) => Outcome::Fail(format!("after unpausing: {w}")),
            (_, Err(w)) => Outcome::Fail(format!("the pending change was not applied: {w}")),
        },
    );
    results.record(
        "C49",
        match &settled {
            Ok(t) => Outcome::Pass(format!(
                "scale-up by one converged in {:.1}s",
                t.as_secs_f64()
            )),
            Err(w) => Outcome::Fail(w.clone()),
        },
    );

    // C36 then C51: pause by annotation only, scale down, remove the annotation.
    let annotate = |on: bool| {
        let value = if on { json!("") } else { Value::Null };
        json!({"metadata": {"annotations": {PAUSED_ANNOTATION: value}}})
    };
    for (kind, name) in names.provider_objects() {
        objects::merge(&ctx.kinds, client, &kind, NS, &name, &annotate(true)).await?;
    }
    let before_ids: BTreeMap<String, Vec<String>> = read(ctx, client, names)
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
    let scale_down_from = Instant::now();
    let outcome =
        paused_window(ctx, client, names, "cluster.x-k8s.io/paused annotation", -1).await?;
    results.record("C36", outcome);
    for (kind, name) in names.provider_objects() {
        objects::merge(&ctx.kinds, client, &kind, NS, &name, &annotate(false)).await?;
    }
    let settled = wait_settled(ctx, client, names, false, provision).await?;
    // The instances' last moments: a provider may still drop an ID after it settled.
    let log = match instance_log {
        Some(l) => {
            tokio::time::sleep(Duration::from_secs(2)).await;
            Some(l.stop())
        }
        None => None,
    };
    let mut problems = Vec::new();
    let mut removed = 0;
    for (mp, kind, name) in &names.pools {
        let history = recorder.history(kind, name);
        let before = before_ids.get(mp).cloned().unwrap_or_default();
        if let Some((observed, _)) = &log {
            let unlisted = instances::never_listed(&before, observed);
            if !unlisted.is_empty() {
                problems.push(format!(
                    "{mp}: the cloud's instance list (instancesUrl) never named {}",
                    unlisted.join(", ")
                ));
            }
            let versions: Vec<instances::ListVersion> = history
                .iter()
                .filter(|s| s.at >= scale_down_from && !s.deleted)
                .map(|s| instances::ListVersion {
                    at: s.at,
                    resource_version: rv(&s.obj).to_string(),
                    ids: provider_ids(&s.obj),
                })
                .collect();
            problems.extend(instances::premature_drops(mp, &before, &versions, observed));
        }
        let start = before.len();
        // Spec (the list) and status are written separately, so a version between the two
        // writes may hold the new list and the old count: judge each status write.
        let mut previous_status = Value::Null;
        for s in &history {
            let status_written = s.obj["status"] != previous_status;
            previous_status = s.obj["status"].clone();
            if s.at < scale_down_from || !status_written || s.deleted {
                continue;
            }
            let ids = provider_ids(&s.obj);
            let replicas = s.obj["status"]["replicas"].as_u64().unwrap_or(0) as usize;
            if ids.len() < replicas {
                problems.push(format!(
                    "{mp}: the status written at resourceVersion {} reports {replicas} replicas while providerIDList has {} IDs",
                    rv(&s.obj),
                    ids.len()
                ));
            }
        }
        if let Some(last) = history.last() {
            removed += start.saturating_sub(provider_ids(&last.obj).len());
        }
    }
    if let Err(w) = &settled {
        problems.push(format!("the scale-down did not settle: {w}"));
    }
    if removed == 0 && problems.is_empty() {
        problems.push("no provider ID left the list: the scale-down was not observed".into());
    }
    problems.dedup();
    results.record(
        "C51",
        verdict(
            problems.is_empty(),
            if problems.is_empty() {
                format!(
                    "{removed} provider ID(s) left the list; no status write reported more replicas than the list held; {}",
                    match &log {
                        Some((observed, failed)) => format!(
                            "no ID left while the cloud still listed its instance ({} reads of instancesUrl{})",
                            observed.len(),
                            if failed.is_empty() { String::new() } else { format!(", {} failed", failed.len()) }
                        ),
                        None => "the cloud's instance states were not observed (the profile has no instancesUrl)".into(),
                    }
                )
            } else {
                problems.into_iter().take(3).collect::<Vec<_>>().join("; ")
            },
        ),
    );
    Ok(())
}

/// C50: the cloud's autoscaler changes the size; the provider writes it back.
async fn outside_scale(ctx: &Ctx, client: &kube::Client, names: &Names) -> Result<Outcome> {
    let Some(command) = ctx.profile.outside_scale.clone() else {
        return Ok(Outcome::Skip(
            "the profile has no outsideScale command".into(),
        ));
    };
    let Some((mp, _, infra_name)) = names.pools.first().cloned() else {
        return Ok(Outcome::Skip("no MachinePool".into()));
    };
    let Some((_, infra_kind, _)) = names.pools.first().cloned() else {
        return Ok(Outcome::Skip("no MachinePool".into()));
    };
    let how = match &ctx.profile.autoscale_patch {
        Some(patch) => {
            objects::merge(&ctx.kinds, client, &infra_kind, NS, &infra_name, patch).await?;
            let deadline = Instant::now() + Duration::from_secs(60);
            loop {
                let pool = objects::get(&ctx.kinds, client, "MachinePool", NS, &mp)
                    .await?
                    .unwrap_or(Value::Null);
                if !pool["metadata"]["annotations"][MANAGED_BY_REPLICAS].is_null() {
                    break format!(
                        "the provider annotated the MachinePool {MANAGED_BY_REPLICAS}={} after the autoscale patch",
                        pool["metadata"]["annotations"][MANAGED_BY_REPLICAS]
                    );
                }
                if Instant::now() >= deadline {
                    return Ok(Outcome::Fail(format!(
                        "after the profile's autoscalePatch the provider did not set {MANAGED_BY_REPLICAS} on the MachinePool within 60s"
                    )));
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
            format!("the suite annotated the MachinePool {MANAGED_BY_REPLICAS}")
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
        return Ok(Outcome::Fail(format!(
            "the outsideScale command failed: {e:#}"
        )));
    }
    let start = Instant::now();
    loop {
        let pool = objects::get(&ctx.kinds, client, "MachinePool", NS, &mp)
            .await?
            .unwrap_or(Value::Null);
        if pool["spec"]["replicas"].as_i64() == Some(target) {
            let settled =
                wait_settled(ctx, client, names, false, ctx.profile.timeouts.provision).await?;
            return Ok(match settled {
                Ok(_) => Outcome::Pass(format!(
                    "{how}; the cloud scaled {infra_name} to {target}; MachinePool spec.replicas followed in {:.1}s",
                    start.elapsed().as_secs_f64()
                )),
                Err(w) => Outcome::Fail(format!("spec.replicas followed to {target}, but {w}")),
            });
        }
        if start.elapsed() > ctx.profile.timeouts.provision {
            return Ok(Outcome::Fail(format!(
                "the cloud scaled {infra_name} to {target}; MachinePool spec.replicas still {} after {:?}",
                pool["spec"]["replicas"], ctx.profile.timeouts.provision
            )));
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// C59: `clusterctl move` to a second plane running its own controller; the target rebuilds
/// status with no create call in the cloud.
async fn move_cluster(ctx: &Ctx, a: &mut Bed, names: &Names) -> Result<(Bed, Outcome)> {
    eprintln!("conformance: starting management plane b for clusterctl move");
    let mut b = Bed::start("b").await?;
    let init = ctx.clusterctl.init(b.kubeconfig()).await?;
    if !init.success {
        return Ok((
            b,
            Outcome::Fail(format!(
                "clusterctl init on the target failed: {}",
                init.stderr.trim()
            )),
        ));
    }
    b.start_provider(ctx)?;
    let calls_before = ctx.calls().await;
    let target = b.kubeconfig().display().to_string();
    let out = ctx
        .clusterctl
        .run(
            a.kubeconfig(),
            &["move", "--namespace", NS, "--to-kubeconfig", &target],
            &[],
        )
        .await?;
    if !out.success {
        return Ok((
            b,
            Outcome::Fail(format!("clusterctl move failed: {}", out.stderr.trim())),
        ));
    }
    let settled =
        wait_settled(ctx, &b.client, names, false, ctx.profile.timeouts.provision).await?;
    b.ensure_provider()?;
    let left = objects::get(&ctx.kinds, &a.client, "Cluster", NS, CLUSTER).await?;
    let mut problems = Vec::new();
    if let Err(w) = &settled {
        problems.push(format!("on the target: {w}"));
    }
    if left.is_some() {
        problems.push("the Cluster is still on the source".into());
    }
    let calls = match (calls_before, ctx.calls().await) {
        (Some(before), Some(after)) => {
            let created = after.since(&before).matching(&ctx.create_operations());
            if created.total() > 0 {
                problems.push(format!("the cloud saw {}", created.describe()));
            }
            "no create call in the cloud"
        }
        _ => "cloud calls not counted",
    };
    let outcome = verdict(
        problems.is_empty(),
        if problems.is_empty() {
            format!(
                "moved; the target settled in {:.1}s; {calls}",
                settled
                    .as_ref()
                    .map(Duration::as_secs_f64)
                    .unwrap_or_default()
            )
        } else {
            problems.join("; ")
        },
    );
    Ok((b, outcome))
}

/// Deletes the Cluster and judges the order and the finalizers (C32, C40, C41, C42).
async fn delete_and_judge(
    ctx: &Ctx,
    client: &kube::Client,
    names: &Names,
    recorder: &Recorder,
    results: &mut Results,
) -> Result<()> {
    eprintln!("conformance: deleting Cluster {NS}/{CLUSTER}");
    // The counters before anything was asked to go: the window an object's deletion is judged
    // on when the 200 ms polls below missed its start (a provider that deletes in milliseconds).
    let before_delete = ctx.calls().await;
    objects::delete(&ctx.kinds, client, "Cluster", NS, CLUSTER).await?;
    let objects_ = names.provider_objects();
    let mut started: BTreeMap<(String, String), Option<crate::procs::Calls>> = BTreeMap::new();
    let mut ended: BTreeMap<(String, String), Option<crate::procs::Calls>> = BTreeMap::new();
    let deadline = Instant::now() + ctx.profile.timeouts.delete;
    let mut cluster_gone = false;
    while Instant::now() < deadline {
        for (kind, name) in &objects_ {
            let key = (kind.clone(), name.clone());
            if ended.contains_key(&key) {
                continue;
            }
            let obj = objects::get(&ctx.kinds, client, kind, NS, name).await?;
            match obj {
                Some(o)
                    if !o["metadata"]["deletionTimestamp"].is_null()
                        && !started.contains_key(&key) =>
                {
                    started.insert(key, ctx.calls().await);
                }
                None => {
                    ended.insert(key, ctx.calls().await);
                }
                _ => {}
            }
        }
        if objects::get(&ctx.kinds, client, "Cluster", NS, CLUSTER)
            .await?
            .is_none()
        {
            cluster_gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // The Secret goes by garbage collection once its owner is gone: kube-controller-manager's
    // collector, in its own time (slower on a loaded machine).
    let secret_name = format!("{CLUSTER}-kubeconfig");
    let gc_wait = ctx.profile.timeouts.delete.min(Duration::from_secs(120));
    let gc_deadline = Instant::now() + gc_wait;
    let mut secret_gone = false;
    while Instant::now() < gc_deadline {
        if objects::get(&ctx.kinds, client, "Secret", NS, &secret_name)
            .await?
            .is_none()
        {
            secret_gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    // The recorder's watch may deliver a deletion after a read has already missed the Secret or
    // the Cluster (a loaded API server streams late): give it time to, since the order is judged
    // on it.
    let watch_deadline = Instant::now() + Duration::from_secs(30);
    let recorded_gone =
        |kind: &str, name: &str| recorder.history(kind, name).iter().any(|s| s.deleted);
    while Instant::now() < watch_deadline
        && ((secret_gone && !recorded_gone("Secret", &secret_name))
            || (cluster_gone && !recorded_gone("Cluster", CLUSTER)))
    {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    let first_deleting = |kind: &str, name: &str| {
        recorder
            .history(kind, name)
            .iter()
            .find(|s| !s.obj["metadata"]["deletionTimestamp"].is_null())
            .map(|s| rv(&s.obj))
    };
    let gone_at = |kind: &str, name: &str| {
        recorder
            .history(kind, name)
            .iter()
            .find(|s| s.deleted)
            .map(|s| rv(&s.obj))
    };
    let (cp_kind, cp_name) = &names.control_plane;
    let cp_deleting = first_deleting(cp_kind, cp_name);
    let cp_gone = gone_at(cp_kind, cp_name);
    let pools_gone: Vec<Option<u64>> = names
        .pools
        .iter()
        .map(|(mp, _, _)| gone_at("MachinePool", mp))
        .collect();
    results.record(
        "C40",
        if names.pools.is_empty() {
            Outcome::Skip("the default template has no MachinePool".into())
        } else {
            match (cp_deleting, pools_gone.iter().copied().collect::<Option<Vec<u64>>>()) {
                (Some(d), Some(gone)) => {
                    let last = gone.iter().copied().max().unwrap_or(0);
                    verdict(d > last, format!("MachinePools gone by resourceVersion {last}; control plane deletion started at {d}"))
                }
                (d, g) => Outcome::Fail(format!("control plane deletion at {d:?}; MachinePools gone at {g:?}")),
            }
        },
    );
    let cluster_at = gone_at("Cluster", CLUSTER);
    results.record(
        "C41",
        match &names.infra {
            None => verdict(
                cluster_at.is_some() && cluster_at > cp_gone,
                format!("control plane gone at {cp_gone:?}; Cluster gone at {cluster_at:?}"),
            ),
            Some((kind, name)) => {
                let infra_deleting = first_deleting(kind, name);
                let infra_gone = gone_at(kind, name);
                verdict(
                    infra_deleting.is_some() && cp_gone.is_some() && infra_deleting > cp_gone && cluster_at.is_some() && cluster_at > infra_gone && cluster_at > cp_gone,
                    format!("control plane gone at {cp_gone:?}; {kind} deletion started at {infra_deleting:?}, gone at {infra_gone:?}; Cluster gone at {cluster_at:?}"),
                )
            }
        },
    );
    let mut problems = Vec::new();
    let mut notes = Vec::new();
    // A not-found, or (clouds that keep deleted resources readable) a deleted state.
    let confirmed = |calls: &crate::procs::Calls| {
        calls
            .0
            .keys()
            .any(|(_, outcome)| outcome == "error" || outcome == "gone")
    };
    for key in &objects_ {
        let (kind, name) = key;
        let Some(end) = ended.get(key) else {
            problems.push(format!(
                "{kind}/{name} still exists after {:?}",
                ctx.profile.timeouts.delete
            ));
            continue;
        };
        // Its own window (from the poll that first saw it deleting); if the polls missed its
        // start, or saw no call in it, the window from the Cluster's deletion: the calls that
        // removed it then lie before the poll that saw it deleting.
        let own = match (started.get(key), end) {
            (Some(Some(s0)), Some(s1)) => Some(s1.since(s0)).filter(|d| d.total() > 0),
            _ => None,
        };
        let widened = own.is_none();
        let during = own.or_else(|| match (&before_delete, end) {
            (Some(s0), Some(s1)) => Some(s1.since(s0)),
            _ => None,
        });
        match during {
            None => notes.push(format!("{kind}/{name}: cloud calls not counted")),
            Some(d) if d.total() == 0 => notes.push(format!("{kind}/{name}: no counted cloud call")),
            Some(d) if confirmed(&d) => notes.push(format!(
                "{kind}/{name}{}: {}",
                if widened { " (since the Cluster's deletion)" } else { "" },
                d.describe()
            )),
            Some(d) => problems.push(format!(
                "{kind}/{name} lost its finalizer with no not-found (or deleted-state) answer from the cloud after {} started: {}",
                if widened { "the Cluster's deletion" } else { "its deletion" },
                d.describe()
            )),
        }
    }
    results.record(
        "C42",
        verdict(
            problems.is_empty(),
            if problems.is_empty() {
                format!(
                    "each went on its own after the cloud answered not-found: {}",
                    notes.join("; ")
                )
            } else {
                problems.join("; ")
            },
        ),
    );
    if results.get("C32").is_none() {
        let secret_at = gone_at("Secret", &secret_name);
        results.record(
            "C32",
            verdict(
                secret_gone && secret_at.is_some() && secret_at >= cp_gone,
                format!(
                    "owned by {cp_kind}/{cp_name} (controller); control plane gone at {cp_gone:?}, Secret gone at {secret_at:?} ({})",
                    if secret_gone { "a read found it gone".to_string() } else { format!("still readable {gc_wait:?} after the Cluster went") }
                ),
            ),
        );
    }
    // C43 needs worker Machines, which managed node pools do not have.
    results.record(
        "C43",
        Outcome::Skip(
            "managed node pools have no worker Machines; the suite's v1 has no Machine scenario"
                .into(),
        ),
    );
    if !cluster_gone {
        for (kind, name) in &objects_ {
            objects::strip_finalizers(&ctx.kinds, client, kind, NS, name).await;
        }
        anyhow::bail!(
            "the Cluster was not deleted within {:?}",
            ctx.profile.timeouts.delete
        );
    }
    Ok(())
}

/// C52: Clusters with only a controlPlaneRef reach Provisioned; C17: a user-set endpoint stays.
pub async fn control_plane_only(
    ctx: &Ctx,
    client: &kube::Client,
    kubeconfig: &std::path::Path,
    results: &mut Results,
) -> Result<()> {
    const CP_NS: &str = "conf-cponly";
    objects::ensure_namespace(client, CP_NS).await?;
    let flavor = ctx.profile.template.control_plane_only_flavor.clone();
    let user_endpoint = ("user-endpoint.conformance.invalid".to_string(), 6443_u64);
    let mut clusters = Vec::new();
    for (name, id) in [("cponly", "C52"), ("userep", "C17")] {
        if !ctx.wants(&[id]) {
            continue;
        }
        let f = match (&flavor, id) {
            (Some(f), _) => f.clone(),
            (None, "C17") => String::new(),
            (None, _) => {
                results.record(
                    "C52",
                    Outcome::Skip("the profile names no controlPlaneOnlyFlavor".into()),
                );
                continue;
            }
        };
        let mut docs = render(ctx, kubeconfig, name, CP_NS, &f).await?;
        docs.retain(|d| d["kind"] != "MachinePool" && !docs_pool_kind(ctx, d));
        label_for_provider(&mut docs);
        if id == "C17" {
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
            let cluster = objects::get(&ctx.kinds, client, "Cluster", CP_NS, name)
                .await?
                .unwrap_or(Value::Null);
            let cpo = objects::get(&ctx.kinds, client, &ctx.roles.control_plane, CP_NS, cp)
                .await?
                .unwrap_or(Value::Null);
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
    for (name, id, cp, has_infra) in &clusters {
        let cluster = objects::get(&ctx.kinds, client, "Cluster", CP_NS, name)
            .await?
            .unwrap_or(Value::Null);
        let cpo = objects::get(&ctx.kinds, client, &ctx.roles.control_plane, CP_NS, cp)
            .await?
            .unwrap_or(Value::Null);
        let conditions: Vec<String> = cluster["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                format!(
                    "{}={}",
                    c["type"].as_str().unwrap_or("?"),
                    c["status"].as_str().unwrap_or("?")
                )
            })
            .collect();
        let phase = cluster["status"]["phase"].clone();
        match *id {
            "C52" => results.record(
                "C52",
                if *has_infra {
                    Outcome::Fail(format!("flavor {flavor:?} has an InfraCluster"))
                } else {
                    verdict(
                        phase == "Provisioned"
                            && cpo["status"]["initialization"]["controlPlaneInitialized"] == true,
                        format!("phase {phase}; conditions {}", conditions.join(" ")),
                    )
                },
            ),
            _ => {
                let kept = endpoint(&cluster);
                let published = endpoint(&cpo);
                results.record(
                    "C17",
                    verdict(
                        kept.as_ref() == Some(&user_endpoint) && published.is_some(),
                        format!("user-set {}:{}; control plane published {published:?}; Cluster has {kept:?}", user_endpoint.0, user_endpoint.1),
                    ),
                );
            }
        }
    }
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

fn docs_pool_kind(ctx: &Ctx, d: &Value) -> bool {
    ctx.roles.pool.as_deref().is_some_and(|k| d["kind"] == k)
}
