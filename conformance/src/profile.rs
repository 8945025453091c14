//! A provider's conformance profile: where its release is, how to start its cloud emulator and
//! its controller, and how to render its templates. The format is documented in
//! `conformance/PROFILE.md`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::Deserialize;

/// A command and its environment.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct CommandSpec {
    /// Program and arguments; `${VAR}` expanded.
    pub command: Vec<String>,
    /// Extra environment; values expanded.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

/// The cloud emulator.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EmulatorSpec {
    /// Program and arguments.
    pub command: Vec<String>,
    /// Extra environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Prometheus text with `emulator_calls_total{operation=…,outcome=…}`.
    pub calls_url: Option<String>,
    /// Glob patterns (`*` only) of operations that create something in the cloud.
    #[serde(default)]
    pub create_operations: Vec<String>,
    /// JSON `{"instances": [{"providerID", "state"}]}` listing every node instance that exists,
    /// shutting-down ones included (C51).
    pub instances_url: Option<String>,
    /// JSON `{"resources": [{"kind", "id", "name", "parent", "owner", "state"}]}`: every
    /// resource the cloud holds, `owner` being the value of a provider's ownership tag (C60,
    /// and the leak, duplicate and wrong-deletion oracles of `conformance faults`).
    pub inventory_url: Option<String>,
}

/// How to render the release's templates.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TemplateSpec {
    /// `--kubernetes-version`.
    pub kubernetes_version: String,
    /// `--worker-machine-count`.
    #[serde(default = "default_workers")]
    pub worker_machine_count: u32,
    /// Extra template variables.
    #[serde(default)]
    pub variables: BTreeMap<String, String>,
    /// The flavor whose Cluster has only a controlPlaneRef (C52).
    pub control_plane_only_flavor: Option<String>,
    /// Run once before rendering; its `NAME=VALUE` stdout lines become variables.
    pub setup: Option<Vec<String>>,
    /// Flavors C58 does not render, with the reason (e.g. a ClusterClass that needs another
    /// provider's kinds installed); they are named in C58's result.
    #[serde(default)]
    pub skip_flavors: BTreeMap<String, String>,
}

fn default_workers() -> u32 {
    2
}

/// Time limits.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timeouts {
    /// From apply to a settled cluster.
    #[serde(default = "default_provision", deserialize_with = "duration::required")]
    pub provision: Duration,
    /// From delete to gone.
    #[serde(default = "default_provision", deserialize_with = "duration::required")]
    pub delete: Duration,
    /// How long to watch for something that must not happen.
    #[serde(default = "default_quiet", deserialize_with = "duration::required")]
    pub quiet: Duration,
}

fn default_provision() -> Duration {
    Duration::from_secs(300)
}

fn default_quiet() -> Duration {
    Duration::from_secs(10)
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            provision: default_provision(),
            delete: default_provision(),
            quiet: default_quiet(),
        }
    }
}

/// What `conformance faults` uses (every field optional; what is missing is not injected or
/// not judged, and the report says so).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FaultsSpec {
    /// The emulator's fault rules: POST one rule (JSON), DELETE clears them all.
    pub faults_url: Option<String>,
    /// JSON `{"early": [{"operation", "target", "earlyByMillis"}]}`: calls sent again before
    /// the `Retry-After` of a 429 to the same method and path was over.
    pub early_url: Option<String>,
    /// Deletes a pool's cloud resource behind the provider's back; env `CLUSTER_NAMESPACE`,
    /// `CLUSTER_NAME`, `POOL_NAME` (the InfraMachinePool's name).
    pub outside_delete: Option<Vec<String>>,
    /// Deletes the whole cloud cluster (its pools first, where the cloud demands it) behind the
    /// provider's back; the same env.
    pub outside_delete_cluster: Option<Vec<String>>,
    /// The Kubernetes version the control plane and pools are upgraded to.
    pub upgrade_to: Option<String>,
    /// The provider's metrics page; expanded for each provider process (with its
    /// `METRICS_PORT`).
    pub metrics_url: Option<String>,
    /// More strings that must never appear in what the provider emits (expanded). The run
    /// always searches for `SEEDED_SECRET`, the tokens of the kubeconfig Secrets and the
    /// provider's own ServiceAccount token.
    #[serde(default)]
    pub secrets: Vec<String>,
    /// Environment for the provider in a fault run: its most verbose logging.
    #[serde(default)]
    pub verbose_env: BTreeMap<String, String>,
    /// Arguments that make the provider take part in leader election (`[--leader-elect]`):
    /// two replicas are started with them, the holder of the Lease in the provider's namespace
    /// is killed, and the other must take the Lease within its duration and act.
    pub leader_elect_args: Option<Vec<String>>,
    /// How long the provider leaves a settled object before it looks at the cloud again (its
    /// resync period in a fault run, set through `vars`): a resource deleted behind its back is
    /// noticed at that look, so the run allows this plus 30 s for it to be back.
    #[serde(default, deserialize_with = "duration::optional")]
    pub resync: Option<Duration>,
    /// Variables a fault run sets before anything starts (e.g. a longer token lifetime, so a
    /// settled cluster has nothing to refresh while its stillness is watched).
    #[serde(default)]
    pub vars: BTreeMap<String, String>,
    /// Variables under which the emulator publishes every cluster's endpoint as one the
    /// management cluster cannot reach (`conformance private`: a private-only cluster).
    #[serde(default)]
    pub private_vars: BTreeMap<String, String>,
}

/// A provider's profile.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Profile {
    /// clusterctl provider name (`infrastructure-<name>`).
    pub name: String,
    /// The version the local repository serves.
    pub version: String,
    /// The release folder (expanded, relative to the profile's folder).
    pub release: String,
    /// Where commands run (relative to the profile's folder).
    #[serde(default)]
    pub workdir: Option<String>,
    /// The cloud emulator.
    pub emulator: Option<EmulatorSpec>,
    /// The provider's controller.
    pub provider: CommandSpec,
    /// Template rendering.
    pub template: TemplateSpec,
    /// Changes a pool's size outside Cluster API (C50).
    pub outside_scale: Option<Vec<String>>,
    /// JSON merge patch for the InfraMachinePool that hands its count to the cloud's autoscaler
    /// (C50); the provider then sets `cluster.x-k8s.io/replicas-managed-by` itself. Without it,
    /// the suite sets that annotation on the MachinePool.
    #[serde(default)]
    pub autoscale_patch: Option<serde_json::Value>,
    /// Lifetime of the kubeconfig Secret's credential (C33).
    #[serde(default, deserialize_with = "duration::optional")]
    pub token_lifetime: Option<Duration>,
    /// Whether the cloud has zones the InfraCluster must report as failure domains (C19).
    #[serde(default = "yes")]
    pub failure_domains: bool,
    /// Time limits.
    #[serde(default)]
    pub timeouts: Timeouts,
    /// What `conformance faults` needs beyond the rest (optional).
    #[serde(default)]
    pub faults: FaultsSpec,
    /// The profile file's folder (set when loaded).
    #[serde(skip)]
    pub dir: PathBuf,
}

fn yes() -> bool {
    true
}

impl Profile {
    /// Reads and checks a profile file.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading the profile {}", path.display()))?;
        let mut profile: Profile = serde_saphyr::from_str(&text)
            .with_context(|| format!("parsing the profile {}", path.display()))?;
        let dir = path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        profile.dir = std::path::absolute(&dir).unwrap_or(dir);
        if profile.provider.command.is_empty() {
            bail!("{}: provider.command is empty", path.display());
        }
        if let Some(e) = &profile.emulator
            && e.command.is_empty()
        {
            bail!("{}: emulator.command is empty", path.display());
        }
        Ok(profile)
    }

    /// The folder commands run in.
    pub fn workdir(&self) -> PathBuf {
        match &self.workdir {
            Some(w) => self.dir.join(w),
            None => self.dir.clone(),
        }
    }
}

/// Durations written as `90s`, `5m`, `1h`, `500ms` or plain seconds.
pub mod duration {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer};

    /// Parses one duration.
    pub fn parse(text: &str) -> Result<Duration, String> {
        let text = text.trim();
        let split = text
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(text.len());
        let (number, unit) = text.split_at(split);
        let n: f64 = number
            .parse()
            .map_err(|_| format!("{text:?} is not a duration like 90s or 5m"))?;
        let seconds = match unit.trim() {
            "" | "s" => n,
            "ms" => n / 1000.0,
            "m" => n * 60.0,
            "h" => n * 3600.0,
            other => {
                return Err(format!(
                    "{text:?}: unknown unit {other:?} (use ms, s, m or h)"
                ));
            }
        };
        Duration::try_from_secs_f64(seconds).map_err(|e| format!("{text:?}: {e}"))
    }

    /// serde: a required duration.
    pub fn required<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let text = String::deserialize(d)?;
        parse(&text).map_err(serde::de::Error::custom)
    }

    /// serde: an optional duration.
    pub fn optional<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        match Option::<String>::deserialize(d)? {
            Some(text) => parse(&text).map(Some).map_err(serde::de::Error::custom),
            None => Ok(None),
        }
    }
}

/// Variables for `${NAME}` expansion, looked up before the process environment.
#[derive(Debug, Clone, Default)]
pub struct Vars(pub BTreeMap<String, String>);

impl Vars {
    /// Sets one.
    pub fn set(&mut self, name: &str, value: impl Into<String>) {
        self.0.insert(name.to_string(), value.into());
    }

    /// Looks one up: own, then environment.
    pub fn get(&self, name: &str) -> Option<String> {
        self.0
            .get(name)
            .cloned()
            .or_else(|| std::env::var(name).ok())
    }

    /// Replaces `${NAME}` and `${NAME:=default}`; an unknown name without default is an error
    /// naming it.
    pub fn expand(&self, text: &str) -> Result<String> {
        substitute(text, |name, default| match (self.get(name), default) {
            (Some(v), _) => Ok(v),
            (None, Some(d)) => Ok(d.to_string()),
            (None, None) => bail!("{text:?} uses ${{{name}}}, which nothing defines"),
        })
    }

    /// Expands every element.
    pub fn expand_all(&self, items: &[String]) -> Result<Vec<String>> {
        items.iter().map(|i| self.expand(i)).collect()
    }

    /// Takes the `NAME=VALUE` lines of a command's output.
    pub fn absorb_lines(&mut self, text: &str) {
        for line in text.lines() {
            if let Some((name, value)) = parse_assignment(line) {
                self.set(name, value);
            }
        }
    }
}

/// Replaces every `${NAME}` / `${NAME:=default}` in `text` by what `value(name, default)`
/// returns (the syntax clusterctl uses); an unclosed `${` is an error.
pub fn substitute(
    text: &str,
    mut value: impl FnMut(&str, Option<&str>) -> Result<String>,
) -> Result<String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            bail!("unclosed ${{ in {text:?}")
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":=") {
            Some((n, d)) => (n, Some(d)),
            None => (inner, None),
        };
        out.push_str(&value(name, default)?);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// `NAME=VALUE` with NAME `[A-Z][A-Z0-9_]*`.
pub fn parse_assignment(line: &str) -> Option<(&str, &str)> {
    let (name, value) = line.trim_end().split_once('=')?;
    let mut chars = name.chars();
    let first = chars.next()?;
    (first.is_ascii_uppercase()
        && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
    .then_some((name, value))
}

/// Whether `operation` matches a `*` glob.
pub fn glob_match(pattern: &str, operation: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == operation,
        Some((head, tail)) => {
            operation.len() >= head.len() + tail.len()
                && operation.starts_with(head)
                && glob_match_tail(tail, &operation[head.len()..])
        }
    }
}

fn glob_match_tail(pattern: &str, text: &str) -> bool {
    if !pattern.contains('*') {
        return text.ends_with(pattern);
    }
    (0..=text.len())
        .filter(|i| text.is_char_boundary(*i))
        .any(|i| glob_match(pattern, &text[i..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expansion_uses_own_then_env_then_default_and_names_the_missing() {
        let mut v = Vars::default();
        v.set("EKS_ENDPOINT", "http://127.0.0.1:1");
        assert_eq!(
            v.expand("${EKS_ENDPOINT}/metrics").unwrap_or_default(),
            "http://127.0.0.1:1/metrics"
        );
        assert_eq!(
            v.expand("a${CONFORMANCE_SURELY_UNSET_X:=b}c")
                .unwrap_or_default(),
            "abc"
        );
        assert_eq!(
            v.expand("${CONFORMANCE_SURELY_UNSET_X:=}")
                .unwrap_or_default(),
            ""
        );
        let err = v
            .expand("--x=${CONFORMANCE_SURELY_UNSET_Y}")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("CONFORMANCE_SURELY_UNSET_Y"), "{err}");
    }

    #[test]
    fn durations() {
        assert_eq!(duration::parse("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(duration::parse("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(duration::parse("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(duration::parse("2"), Ok(Duration::from_secs(2)));
        assert!(duration::parse("5 parsecs").is_err());
    }

    #[test]
    fn assignments_and_globs() {
        assert_eq!(
            parse_assignment("EKS_ENDPOINT=http://x"),
            Some(("EKS_ENDPOINT", "http://x"))
        );
        assert_eq!(parse_assignment("listening on http://x"), None);
        assert_eq!(parse_assignment("lower=x"), None);
        assert!(glob_match("Create*", "CreateCluster"));
        assert!(!glob_match("Create*", "DescribeCluster"));
        assert!(glob_match("RunInstances", "RunInstances"));
        assert!(glob_match("*Nodegroup", "CreateNodegroup"));
        assert!(glob_match("*", "X"));
    }

    #[test]
    fn the_documented_example_parses() {
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/PROFILE.md"))
            .unwrap_or_default();
        let yaml = text
            .split("```yaml\n")
            .nth(1)
            .and_then(|t| t.split("```").next())
            .unwrap_or_default();
        let p: Result<Profile, _> = serde_saphyr::from_str(yaml);
        assert!(p.is_ok(), "{p:?}");
    }
}
