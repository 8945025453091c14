//! Installing the release with clusterctl and judging what the install and the templates show
//! (C07, C08, C24, C57, C58); then starting the provider and running the scenarios.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};
use serde_json::{Value, json};

use super::{Bed, Ctx, judge};
use crate::checks::{CheckId, Outcome, Results, verdict};
use crate::clusterctl::{CORE_NAMESPACE, CORE_SERVICE_ACCOUNT, Clusterctl};
use crate::faults::cloud::{read_inventory, settled};
use crate::faults::oracle::Item;
use crate::objects::{self, Kinds, WATCH_FILTER_LABEL};
use crate::procs::Running;
use crate::profile::{Profile, Vars};
use crate::release::Release;

/// Which provider kinds play which role, read from the default template.
#[derive(Debug, Clone, Default)]
pub struct Roles {
    /// The InfraCluster kind (absent in a control-plane-only template).
    pub infra: Option<String>,
    /// The ControlPlane kind.
    pub control_plane: String,
    /// The InfraMachinePool kind, if the template has a MachinePool.
    pub pool: Option<String>,
}

impl Roles {
    fn from_docs(docs: &[Value]) -> Result<Self> {
        let cluster = docs
            .iter()
            .find(|d| d["kind"] == "Cluster")
            .context("the default template has no Cluster")?;
        let control_plane = cluster["spec"]["controlPlaneRef"]["kind"]
            .as_str()
            .context("the default template's Cluster has no controlPlaneRef")?
            .to_string();
        let infra = cluster["spec"]["infrastructureRef"]["kind"]
            .as_str()
            .map(str::to_string);
        let pool = docs
            .iter()
            .find(|d| d["kind"] == "MachinePool")
            .and_then(|d| d["spec"]["template"]["spec"]["infrastructureRef"]["kind"].as_str())
            .map(str::to_string);
        Ok(Self {
            infra,
            control_plane,
            pool,
        })
    }

    /// Every provider kind a cluster of the default template has.
    pub fn kinds(&self) -> Vec<String> {
        let mut out: Vec<String> = self.infra.iter().cloned().collect();
        out.push(self.control_plane.clone());
        out.extend(self.pool.iter().cloned());
        out
    }
}

fn core_version(assets: &testbed::Assets) -> Result<String> {
    assets
        .versions()
        .lines()
        .find_map(|l| l.trim().strip_prefix("cluster-api ").map(str::to_string))
        .context("the bed's versions do not name cluster-api")
}

/// Renders `flavor` for cluster `name` in namespace `ns` with `clusterctl generate cluster`.
pub async fn render(
    ctx: &Ctx,
    kubeconfig: &Path,
    name: &str,
    ns: &str,
    flavor: &str,
) -> Result<Vec<Value>> {
    let out = generate(ctx, kubeconfig, name, ns, flavor, true).await?;
    if !out.success {
        bail!(
            "clusterctl generate cluster {name} --flavor {flavor:?} failed: {}",
            out.stderr.trim()
        );
    }
    let docs: Vec<Value> = serde_saphyr::from_multiple(&out.stdout)
        .with_context(|| format!("parsing the rendered flavor {flavor:?}"))?;
    Ok(docs.into_iter().filter(|d| !d.is_null()).collect())
}

async fn generate(
    ctx: &Ctx,
    kubeconfig: &Path,
    name: &str,
    ns: &str,
    flavor: &str,
    with_variables: bool,
) -> Result<crate::clusterctl::Output> {
    let version = ctx.profile.template.kubernetes_version.clone();
    let workers = ctx.profile.template.worker_machine_count.to_string();
    let infra = ctx.clusterctl.infrastructure.clone();
    let mut args = vec![
        "generate",
        "cluster",
        name,
        "--infrastructure",
        &infra,
        "--target-namespace",
        ns,
    ];
    if with_variables {
        args.extend([
            "--kubernetes-version",
            &version,
            "--worker-machine-count",
            &workers,
        ]);
    }
    if !flavor.is_empty() {
        args.extend(["--flavor", flavor]);
    }
    let env = if with_variables {
        ctx.template_vars.clone()
    } else {
        Vec::new()
    };
    ctx.clusterctl.run(kubeconfig, &args, &env).await
}

/// Adds the watch-filter label to every document.
pub fn label_for_provider(docs: &mut [Value]) {
    for d in docs {
        d["metadata"]["labels"][WATCH_FILTER_LABEL] = json!(super::WATCH_FILTER);
    }
}

/// Installs, starts and runs everything; records into `results`.
pub async fn run_all(
    profile: Profile,
    release: Release,
    vars: Vars,
    dir: PathBuf,
    only: Option<Vec<CheckId>>,
    discard: bool,
    results: &mut Results,
) -> Result<()> {
    let Installed {
        ctx,
        bed: mut a,
        emulator,
        default_docs,
    } = install(profile, release, vars, dir, only, discard, Some(results)).await?;
    let outcome = scenarios(&ctx, &mut a, default_docs, results).await;
    let failed = outcome.is_err() || !results.failed().is_empty();
    if let Some(mut e) = emulator {
        e.stop(Duration::from_secs(10)).await;
    }
    a.stop(failed && !ctx.discard).await;
    outcome
}

/// A management plane with the release installed by `clusterctl init`, the cloud emulator
/// started and the default flavor rendered: where both `conformance run` and `conformance
/// faults` start from.
#[derive(Debug)]
pub struct Installed {
    /// Everything a step needs.
    pub ctx: Ctx,
    /// The plane (no provider started yet).
    pub bed: Bed,
    /// The cloud emulator, if the profile has one.
    pub emulator: Option<Running>,
    /// The default flavor rendered for cluster `conf` in namespace `conf-main`.
    pub default_docs: Vec<Value>,
}

/// Starts plane a, installs the release, starts the emulator, runs the template setup and
/// renders the default flavor. With `results`, judges what the install shows on the way (C07,
/// C08, C24, C57, C58).
pub async fn install(
    profile: Profile,
    release: Release,
    mut vars: Vars,
    dir: PathBuf,
    only: Option<Vec<CheckId>>,
    discard: bool,
    mut results: Option<&mut Results>,
) -> Result<Installed> {
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs)?;
    eprintln!("conformance: starting management plane a");
    let a = Bed::start("a").await?;
    let core = core_version(a.plane.assets())?;
    let clusterctl = Clusterctl::repository(
        &dir.join("repository"),
        a.plane.assets(),
        &core,
        &profile.name,
        &profile.version,
        &release.dir,
    )?;
    let kinds = Kinds::new(&release);
    let mut ctx = Ctx {
        profile,
        release,
        vars: Vars::default(),
        template_vars: Vec::new(),
        kinds,
        roles: Roles::default(),
        clusterctl,
        dir: dir.clone(),
        only,
        discard,
    };

    eprintln!("conformance: clusterctl init");
    let init = ctx.clusterctl.init(a.kubeconfig()).await?;
    if !init.success {
        if let Some(results) = results.as_deref_mut() {
            results.record(
                CheckId::C57,
                Outcome::Fail(format!("clusterctl init failed: {}", init.stderr.trim())),
            );
        }
        a.stop(!discard).await;
        bail!(
            "clusterctl init failed, nothing else can be judged: {}",
            init.stderr.trim()
        );
    }
    if let Some(results) = results.as_deref_mut() {
        results.record(CheckId::C57, judge_install(&ctx, &a).await);
        results.record(CheckId::C07, judge_core_access(&ctx, &a).await);
    }

    // The emulator first: the setup command and the templates may need what it prints.
    let mut emulator = None;
    if let Some(spec) = ctx.profile.emulator.clone() {
        vars.set("KUBECONFIG", a.kubeconfig().display().to_string());
        let argv = vars.expand_all(&spec.command)?;
        let mut env = BTreeMap::new();
        for (k, v) in &spec.env {
            env.insert(k.clone(), vars.expand(v)?);
        }
        eprintln!(
            "conformance: starting the emulator ({}; its arguments stay out of the log)",
            argv.first().map_or("", String::as_str)
        );
        let (running, printed) = Running::spawn_emulator(
            "emulator",
            &argv,
            &env,
            &ctx.profile.workdir(),
            &logs,
            Duration::from_secs(300),
        )
        .await?;
        for (k, v) in printed.0 {
            vars.set(&k, v);
        }
        emulator = Some(running);
    }
    let mut template_vars = Vec::new();
    for (k, v) in &ctx.profile.template.variables {
        template_vars.push((k.clone(), vars.expand(v)?));
    }
    if let Some(setup) = ctx.profile.template.setup.clone() {
        let argv = vars.expand_all(&setup)?;
        let out = crate::procs::run_to_end(
            &argv,
            &BTreeMap::new(),
            &ctx.profile.workdir(),
            Duration::from_secs(120),
        )
        .await
        .context("the profile's template setup command")?;
        let mut printed = Vars::default();
        printed.absorb_lines(&out);
        for (k, v) in printed.0 {
            template_vars.push((k.clone(), v.clone()));
            vars.set(&k, v);
        }
    }
    ctx.vars = vars;
    ctx.template_vars = template_vars;

    if let Some(results) = results.as_deref_mut() {
        judge_generate(&ctx, &a, results).await;
    }
    let default_docs = render(&ctx, a.kubeconfig(), "conf", "conf-main", "").await?;
    ctx.roles = Roles::from_docs(&default_docs)?;
    if let Some(results) = results {
        results.record(CheckId::C08, judge_templates(&ctx, &a, &default_docs).await);
        results.record(
            CheckId::C24,
            judge_version_without_v(&ctx, &a, &default_docs).await,
        );
    }
    Ok(Installed {
        ctx,
        bed: a,
        emulator,
        default_docs,
    })
}

async fn scenarios(
    ctx: &Ctx,
    a: &mut Bed,
    default_docs: Vec<Value>,
    results: &mut Results,
) -> Result<()> {
    // What the cloud holds before the provider starts, for C60.
    let inventory = match ctx.inventory_url() {
        Some(url) if ctx.wants(&[CheckId::C60]) => {
            let before = read_inventory(&url)
                .await
                .with_context(|| format!("reading the cloud's inventory at {url}"))?;
            Some((before, url))
        }
        _ => None,
    };
    eprintln!("conformance: starting the provider");
    let log = a.start_provider(ctx)?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    a.ensure_provider()
        .with_context(|| format!("the provider did not stay up; its log: {}", log.display()))?;

    if ctx.wants(&[CheckId::C11, CheckId::C38, CheckId::C39]) {
        eprintln!("conformance: objects the provider must leave alone (C11, C38, C39)");
        super::quiet::run(ctx, a, results).await?;
    }
    let lifecycle_wanted = ctx.wants(super::LIFECYCLE_IDS);
    let cp_only_wanted = ctx.wants(&[CheckId::C17, CheckId::C52]);
    let adoption_wanted = ctx.wants(super::adoption::IDS);
    let mut side = Results::default();
    let client = a.client.clone();
    let kubeconfig = a.kubeconfig().to_path_buf();
    let (main, cp_only) = tokio::join!(
        async {
            if lifecycle_wanted {
                super::lifecycle::run(ctx, a, default_docs, results).await
            } else {
                Ok(())
            }
        },
        async {
            if cp_only_wanted {
                super::control_plane_only::control_plane_only(ctx, &client, &kubeconfig, &mut side)
                    .await
            } else {
                Ok(())
            }
        }
    );
    for (id, outcome) in side.into_entries() {
        results.record(id, outcome);
    }
    cp_only?;
    main?;
    // After the lifecycle, not beside it: its pause checks count every cloud call while paused.
    if adoption_wanted {
        super::adoption::adoption(ctx, &a.client, a.kubeconfig(), results).await?;
    }
    if lifecycle_wanted {
        match inventory {
            Some((before, url)) => {
                eprintln!("conformance: what the cloud holds now the Clusters are gone (C60)");
                let left = |items: &[Item]| judge::deletion::left_behind(&before, items);
                let (_, after) = settled(&url, left)
                    .await
                    .with_context(|| format!("reading the cloud's inventory at {url}"))?;
                results.record(CheckId::C60, judge::deletion::nothing_left(&before, &after));
            }
            None if ctx.wants(&[CheckId::C60]) => results.record(
                CheckId::C60,
                Outcome::Skip("the profile has no emulator.inventoryUrl".into()),
            ),
            None => {}
        }
    }
    Ok(())
}

/// C57: every object of the components carries clusterctl's labels; the inventory has the
/// provider at its version.
async fn judge_install(ctx: &Ctx, bed: &Bed) -> Outcome {
    let provider_label = format!("infrastructure-{}", ctx.profile.name);
    let mut problems = Vec::new();
    let mut checked = 0;
    for doc in &ctx.release.components {
        let (Some(api_version), Some(kind), Some(name)) = (
            doc["apiVersion"].as_str(),
            doc["kind"].as_str(),
            doc["metadata"]["name"].as_str(),
        ) else {
            continue;
        };
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        // The API server says what the kind's resource is called and whether it is namespaced.
        let gvk = GroupVersionKind::gvk(group, version, kind);
        let (ar, caps) = match kube::discovery::pinned_kind(&bed.client, &gvk).await {
            Ok(found) => found,
            Err(e) => {
                problems.push(format!("{api_version} {kind} is not served: {e}"));
                continue;
            }
        };
        let api: Api<DynamicObject> = match (caps.scope, doc["metadata"]["namespace"].as_str()) {
            (kube::discovery::Scope::Namespaced, Some(ns)) => {
                Api::namespaced_with(bed.client.clone(), ns, &ar)
            }
            _ => Api::all_with(bed.client.clone(), &ar),
        };
        match api.get_opt(name).await {
            Ok(Some(obj)) => {
                checked += 1;
                let labels = obj.metadata.labels.unwrap_or_default();
                if labels.get("cluster.x-k8s.io/provider") != Some(&provider_label)
                    || !labels.contains_key("clusterctl.cluster.x-k8s.io")
                {
                    problems.push(format!("{kind}/{name} labels {labels:?}"));
                }
            }
            Ok(None) => problems.push(format!("{kind}/{name} was not installed")),
            Err(e) => problems.push(format!("{kind}/{name}: {e}")),
        }
    }
    let ns = ctx.release.namespace().unwrap_or_default();
    let inventory: Api<DynamicObject> = Api::namespaced_with(
        bed.client.clone(),
        &ns,
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("clusterctl.cluster.x-k8s.io", "v1alpha3", "Provider"),
            "providers",
        ),
    );
    match inventory.get_opt(&provider_label).await {
        Ok(Some(p)) => {
            if p.data["version"] != ctx.profile.version.as_str()
                || p.data["type"] != "InfrastructureProvider"
            {
                problems.push(format!(
                    "inventory Provider {provider_label}: type {} version {}",
                    p.data["type"], p.data["version"]
                ));
            }
        }
        Ok(None) => problems.push(format!("no inventory Provider {ns}/{provider_label}")),
        Err(e) => problems.push(format!("inventory: {e}")),
    }
    verdict(
        problems.is_empty(),
        if problems.is_empty() {
            format!(
                "{checked} objects installed with cluster.x-k8s.io/provider={provider_label} and clusterctl's label; inventory Provider {provider_label} {}",
                ctx.profile.version
            )
        } else {
            problems.join("; ")
        },
    )
}

/// C07: SubjectAccessReviews as core's manager ServiceAccount, after RBAC aggregation.
async fn judge_core_access(ctx: &Ctx, bed: &Bed) -> Outcome {
    let user = format!("system:serviceaccount:{CORE_NAMESPACE}:{CORE_SERVICE_ACCOUNT}");
    let api: Api<SubjectAccessReview> = Api::all(bed.client.clone());
    let verbs = ["get", "list", "watch", "patch", "update", "delete"];
    // kube-controller-manager aggregates the role in its own time (slower on a loaded machine);
    // a provider whose role never carries the aggregation label still fails after the wait.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    loop {
        let mut denied = Vec::new();
        for crd in &ctx.release.crds {
            let group = crd["spec"]["group"].as_str().unwrap_or_default();
            let plural = crd["spec"]["names"]["plural"].as_str().unwrap_or_default();
            for verb in verbs {
                let review = SubjectAccessReview {
                    spec: SubjectAccessReviewSpec {
                        user: Some(user.clone()),
                        groups: Some(vec![
                            "system:serviceaccounts".into(),
                            format!("system:serviceaccounts:{CORE_NAMESPACE}"),
                            "system:authenticated".into(),
                        ]),
                        resource_attributes: Some(ResourceAttributes {
                            group: Some(group.to_string()),
                            resource: Some(plural.to_string()),
                            verb: Some(verb.to_string()),
                            namespace: Some("default".into()),
                            ..Default::default()
                        }),
                        ..Default::default()
                    },
                    ..Default::default()
                };
                match api.create(&PostParams::default(), &review).await {
                    Ok(r) if r.status.as_ref().is_some_and(|s| s.allowed) => {}
                    Ok(_) => denied.push(format!("{verb} {plural}.{group}")),
                    Err(e) => return Outcome::Fail(format!("SubjectAccessReview: {e}")),
                }
            }
        }
        if denied.is_empty() {
            return Outcome::Pass(format!(
                "{user} may {} every one of {} provider kinds",
                verbs.join("/"),
                ctx.release.crds.len()
            ));
        }
        if tokio::time::Instant::now() >= deadline {
            return Outcome::Fail(format!("{user} is denied: {}", denied.join(", ")));
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// C58: variables listed per flavor; a render without the required ones fails naming one;
/// rendered objects land in the target namespace.
async fn judge_generate(ctx: &Ctx, bed: &Bed, results: &mut Results) {
    let mut problems = Vec::new();
    let mut seen = Vec::new();
    for flavor in &ctx.release.flavors {
        let label = if flavor.is_empty() {
            "default"
        } else {
            flavor.as_str()
        };
        if let Some(reason) = ctx.profile.template.skip_flavors.get(flavor) {
            seen.push(format!("{label} not rendered ({reason})"));
            continue;
        }
        let infra = ctx.clusterctl.infrastructure.clone();
        let mut args = vec![
            "generate",
            "cluster",
            "x",
            "--infrastructure",
            &infra,
            "--list-variables",
        ];
        if !flavor.is_empty() {
            args.extend(["--flavor", flavor]);
        }
        let out = match ctx.clusterctl.run(bed.kubeconfig(), &args, &[]).await {
            Ok(o) => o,
            Err(e) => {
                problems.push(format!("{label}: {e:#}"));
                continue;
            }
        };
        if !out.success {
            problems.push(format!(
                "{label}: --list-variables failed: {}",
                out.stderr.trim()
            ));
            continue;
        }
        let required: Vec<String> = out
            .stdout
            .split("Optional Variables:")
            .next()
            .unwrap_or_default()
            .lines()
            .skip_while(|l| !l.contains("Required Variables:"))
            .skip(1)
            .filter_map(|l| {
                l.trim()
                    .trim_start_matches('-')
                    .split_whitespace()
                    .next()
                    .map(str::to_string)
            })
            .filter(|v| !v.is_empty())
            .collect();
        seen.push(format!("{label}: {} required", required.len()));
        if !required.is_empty() {
            match generate(ctx, bed.kubeconfig(), "x", "conf-render", flavor, false).await {
                Ok(o) if o.success => problems.push(format!(
                    "{label}: rendered although {} were not set",
                    required.join(", ")
                )),
                Ok(o) => {
                    if !required.iter().any(|r| o.stderr.contains(r.as_str())) {
                        problems.push(format!(
                            "{label}: the failure does not name a missing variable: {}",
                            o.stderr.trim()
                        ));
                    }
                }
                Err(e) => problems.push(format!("{label}: {e:#}")),
            }
        }
        match render(ctx, bed.kubeconfig(), "x", "conf-render", flavor).await {
            Ok(docs) => {
                for d in docs {
                    let kind = d["kind"].as_str().unwrap_or_default();
                    if kind != "Namespace" && d["metadata"]["namespace"] != "conf-render" {
                        problems.push(format!(
                            "{label}: {kind}/{} rendered in {}",
                            d["metadata"]["name"].as_str().unwrap_or("?"),
                            d["metadata"]["namespace"]
                        ));
                    }
                }
            }
            Err(e) => problems.push(format!("{label}: {e:#}")),
        }
    }
    if ctx.release.flavors.is_empty() {
        problems.push("the release has no cluster-template*.yaml".into());
    }
    results.record(
        CheckId::C58,
        verdict(
            problems.is_empty(),
            if problems.is_empty() {
                format!(
                    "flavors {}; every render without its required variables failed naming one; every object in the target namespace",
                    seen.join(", ")
                )
            } else {
                problems.join("; ")
            },
        ),
    );
}

/// C08: `<Kind>Template` exists for each role and admits `spec.template.spec` built from the
/// rendered object (a control plane template may leave out `version`: topology sets it).
async fn judge_templates(ctx: &Ctx, bed: &Bed, docs: &[Value]) -> Outcome {
    let mut problems = Vec::new();
    let mut ok = Vec::new();
    let _ = objects::ensure_namespace(&bed.client, "conf-static").await;
    for kind in ctx.roles.kinds() {
        let template_kind = format!("{kind}Template");
        if ctx.release.crd(&template_kind).is_none() {
            problems.push(format!("no {template_kind} CRD"));
            continue;
        }
        let spec = docs
            .iter()
            .find(|d| d["kind"] == kind.as_str())
            .map(|d| d["spec"].clone())
            .unwrap_or_else(|| json!({}));
        let mut without_version = spec.clone();
        if let Some(o) = without_version.as_object_mut() {
            o.remove("version");
        }
        let mut accepted = None;
        let mut last = String::new();
        for candidate in [spec, without_version] {
            let doc = json!({
                "kind": template_kind,
                "metadata": { "name": "conformance-template" },
                "spec": { "template": { "spec": candidate } },
            });
            match objects::dry_run_create(&ctx.kinds, &bed.client, "conf-static", &doc).await {
                Ok(Ok(stored)) if stored["spec"]["template"]["spec"].is_object() => {
                    accepted = Some(stored);
                    break;
                }
                Ok(Ok(stored)) => {
                    last = format!("stored without spec.template.spec: {}", stored["spec"])
                }
                Ok(Err(message)) => last = message,
                Err(e) => last = format!("{e:#}"),
            }
        }
        match accepted {
            Some(_) => ok.push(template_kind),
            None => problems.push(format!(
                "{template_kind} refuses spec.template.spec: {last}"
            )),
        }
    }
    verdict(
        problems.is_empty(),
        if problems.is_empty() {
            format!("{} admit spec.template.spec", ok.join(", "))
        } else {
            problems.join("; ")
        },
    )
}

/// C24: the control plane with its version written without `v`.
async fn judge_version_without_v(ctx: &Ctx, bed: &Bed, docs: &[Value]) -> Outcome {
    let Some(mut doc) = docs
        .iter()
        .find(|d| d["kind"] == ctx.roles.control_plane.as_str())
        .cloned()
    else {
        return Outcome::Fail("the default template has no control plane object".into());
    };
    let Some(version) = doc["spec"]["version"].as_str().map(str::to_string) else {
        return Outcome::Skip("the control plane has no spec.version".into());
    };
    let bare = version.trim_start_matches('v').to_string();
    doc["spec"]["version"] = json!(bare);
    doc["metadata"]["name"] = json!("conformance-version");
    let _ = objects::ensure_namespace(&bed.client, "conf-static").await;
    match objects::dry_run_create(&ctx.kinds, &bed.client, "conf-static", &doc).await {
        Ok(Err(message)) => verdict(
            message.contains("version"),
            format!("spec.version {bare:?} rejected: {message}"),
        ),
        Ok(Ok(stored)) => {
            let got = stored["spec"]["version"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            verdict(
                got.starts_with('v'),
                format!("spec.version {bare:?} admitted and stored as {got:?}"),
            )
        }
        Err(e) => Outcome::Fail(format!("{e:#}")),
    }
}
