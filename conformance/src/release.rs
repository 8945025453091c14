//! A provider's clusterctl release folder and the checks that read it (C01–C06, C08 partly, C55,
//! C56). The checks that need the installed objects (C07, C08's admission) live in the run.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::Value;

use crate::checks::{CheckId, Outcome, Results, verdict};

/// Kinds that are cluster-scoped in a components file.
const CLUSTER_SCOPED: &[&str] = &[
    "Namespace",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleBinding",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
    "PriorityClass",
    "StorageClass",
    "APIService",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
];

/// The release, read and rendered with its variables' defaults.
#[derive(Debug, Clone)]
pub struct Release {
    /// The folder.
    pub dir: PathBuf,
    /// `metadata.yaml`.
    pub metadata: Value,
    /// `infrastructure-components.yaml`, `${VAR:=default}` rendered to the default.
    pub components: Vec<Value>,
    /// The CRDs among the components.
    pub crds: Vec<Value>,
    /// Flavors: `""` for `cluster-template.yaml`, else the `<flavor>` of
    /// `cluster-template-<flavor>.yaml`.
    pub flavors: Vec<String>,
}

/// Replaces `${VAR:=default}` with its default and `${VAR}` with nothing, as an install with
/// no variables set would (clusterctl itself refuses unset required ones; C57 covers that).
pub fn render_defaults(text: &str) -> Result<String> {
    crate::profile::substitute(text, |_, default| {
        Ok(default.unwrap_or_default().to_string())
    })
}

fn docs(text: &str) -> Result<Vec<Value>> {
    let docs: Vec<Value> = serde_saphyr::from_multiple(text)?;
    Ok(docs.into_iter().filter(|d| !d.is_null()).collect())
}

impl Release {
    /// Reads `dir`.
    pub fn read(dir: &Path) -> Result<Self> {
        let metadata_text = std::fs::read_to_string(dir.join("metadata.yaml"))
            .with_context(|| format!("reading {}/metadata.yaml", dir.display()))?;
        let metadata: Value = serde_saphyr::from_str(&metadata_text)
            .with_context(|| format!("parsing {}/metadata.yaml", dir.display()))?;
        let components_text = std::fs::read_to_string(dir.join("infrastructure-components.yaml"))
            .with_context(|| {
            format!("reading {}/infrastructure-components.yaml", dir.display())
        })?;
        let components = docs(&render_defaults(&components_text)?)
            .with_context(|| format!("parsing {}/infrastructure-components.yaml", dir.display()))?;
        let crds = components
            .iter()
            .filter(|d| d["kind"] == "CustomResourceDefinition")
            .cloned()
            .collect();
        let mut flavors = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            let name = entry?.file_name().to_string_lossy().to_string();
            if name == "cluster-template.yaml" {
                flavors.push(String::new());
            } else if let Some(f) = name
                .strip_prefix("cluster-template-")
                .and_then(|n| n.strip_suffix(".yaml"))
            {
                flavors.push(f.to_string());
            }
        }
        flavors.sort();
        Ok(Self {
            dir: dir.to_path_buf(),
            metadata,
            components,
            crds,
            flavors,
        })
    }

    /// The CRD of `kind`, if the release has one.
    pub fn crd(&self, kind: &str) -> Option<&Value> {
        self.crds
            .iter()
            .find(|c| c["spec"]["names"]["kind"] == kind)
    }

    /// The components' one Namespace, if exactly one.
    pub fn namespace(&self) -> Option<String> {
        let namespaces: Vec<_> = self
            .components
            .iter()
            .filter(|d| d["kind"] == "Namespace")
            .filter_map(|d| d["metadata"]["name"].as_str())
            .collect();
        match namespaces.as_slice() {
            [one] => Some((*one).to_string()),
            _ => None,
        }
    }
}

fn crd_name(crd: &Value) -> String {
    crd["metadata"]["name"].as_str().unwrap_or("?").to_string()
}

/// English plurals of a lowercased kind, as Kubernetes tooling forms them.
fn plurals(kind: &str) -> Vec<String> {
    let k = kind.to_lowercase();
    let mut out = vec![format!("{k}s")];
    if k.ends_with('s') || k.ends_with("x") || k.ends_with("ch") || k.ends_with("sh") {
        out.push(format!("{k}es"));
    }
    if let Some(stem) = k.strip_suffix('y') {
        out.push(format!("{stem}ies"));
    }
    out
}

fn contract_labels(crd: &Value) -> Vec<(String, String)> {
    crd["metadata"]["labels"]
        .as_object()
        .map(|labels| {
            labels
                .iter()
                .filter_map(|(k, v)| {
                    k.strip_prefix("cluster.x-k8s.io/")
                        .filter(|c| c.starts_with('v'))
                        .map(|c| (c.to_string(), v.as_str().unwrap_or_default().to_string()))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn served(crd: &Value) -> Vec<String> {
    crd["spec"]["versions"]
        .as_array()
        .map(|vs| {
            vs.iter()
                .filter(|v| v["served"] == true)
                .filter_map(|v| v["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Orders contract names (`v1beta1` < `v1beta2` < `v1`).
fn contract_rank(c: &str) -> (u32, u32, u32) {
    let rest = c.trim_start_matches('v');
    let (major, tail) = rest
        .find(|ch: char| !ch.is_ascii_digit())
        .map_or((rest, ""), |i| rest.split_at(i));
    let major = major.parse().unwrap_or(0);
    let (stage, n) = if let Some(n) = tail.strip_prefix("alpha") {
        (0, n)
    } else if let Some(n) = tail.strip_prefix("beta") {
        (1, n)
    } else {
        (2, "0")
    };
    (major, stage, n.parse().unwrap_or(0))
}

/// Whether a schema node has a property path (open nodes with
/// `x-kubernetes-preserve-unknown-fields` count as having it).
pub fn schema_has(schema: &Value, path: &[&str]) -> bool {
    let Some((first, rest)) = path.split_first() else {
        return true;
    };
    match schema["properties"].get(*first) {
        Some(child) => schema_has(child, rest),
        None => schema["x-kubernetes-preserve-unknown-fields"] == true,
    }
}

/// The static checks on the release files: C01–C06, C55, C56.
pub fn static_checks(release: &Release, version: &str, results: &mut Results) {
    if release.crds.is_empty() {
        results.record_all(
            &[
                CheckId::C01,
                CheckId::C02,
                CheckId::C03,
                CheckId::C04,
                CheckId::C05,
                CheckId::C06,
            ],
            &Outcome::Fail(
                "infrastructure-components.yaml holds no CustomResourceDefinition".into(),
            ),
        );
    } else {
        let bad: Vec<_> = release
            .crds
            .iter()
            .filter(|c| c["spec"]["scope"] != "Namespaced")
            .map(|c| format!("{} is {}", crd_name(c), c["spec"]["scope"]))
            .collect();
        results.record(
            CheckId::C01,
            verdict(
                bad.is_empty(),
                if bad.is_empty() {
                    format!("{} CRDs, all Namespaced", release.crds.len())
                } else {
                    bad.join("; ")
                },
            ),
        );

        let bad: Vec<_> = release
            .crds
            .iter()
            .filter_map(|c| {
                let kind = c["spec"]["names"]["kind"].as_str().unwrap_or_default();
                let group = c["spec"]["group"].as_str().unwrap_or_default();
                let name = crd_name(c);
                let ok = plurals(kind).iter().any(|p| name == format!("{p}.{group}"));
                (!ok).then(|| {
                    format!(
                        "{name} for kind {kind} (expected {}.{group})",
                        plurals(kind)[0]
                    )
                })
            })
            .collect();
        results.record(
            CheckId::C02,
            verdict(
                bad.is_empty(),
                if bad.is_empty() {
                    "every CRD is named <plural>.<group>".to_string()
                } else {
                    bad.join("; ")
                },
            ),
        );

        let mut problems = Vec::new();
        for crd in &release.crds {
            let labels = contract_labels(crd);
            let served = served(crd);
            for contract in ["v1beta2", "v1beta1"] {
                match labels.iter().find(|(c, _)| c == contract) {
                    None => problems.push(format!(
                        "{} has no cluster.x-k8s.io/{contract} label",
                        crd_name(crd)
                    )),
                    Some((_, value)) => {
                        for v in value.split('_') {
                            if !served.iter().any(|s| s == v) {
                                problems.push(format!(
                                    "{}: cluster.x-k8s.io/{contract}={value} names {v}, not served (served: {})",
                                    crd_name(crd),
                                    served.join(",")
                                ));
                            }
                        }
                    }
                }
            }
        }
        results.record(
            CheckId::C03,
            verdict(
                problems.is_empty(),
                if problems.is_empty() {
                    "both contract labels on every CRD, naming served versions".to_string()
                } else {
                    problems.join("; ")
                },
            ),
        );

        let series_contract = release_series(release, version).map(|s| s["contract"].clone());
        let newest: Vec<(String, String)> = release
            .crds
            .iter()
            .map(|c| {
                let best = contract_labels(c)
                    .into_iter()
                    .map(|(k, _)| k)
                    .max_by_key(|k| contract_rank(k))
                    .unwrap_or_else(|| "none".into());
                (crd_name(c), best)
            })
            .collect();
        let outcome = match series_contract.as_ref().and_then(Value::as_str) {
            None => Outcome::Fail(format!(
                "metadata.yaml has no release series for {version} with a contract"
            )),
            Some(contract) => {
                let bad: Vec<_> = newest
                    .iter()
                    .filter(|(_, c)| c != contract)
                    .map(|(n, c)| format!("{n} newest label {c}"))
                    .collect();
                verdict(
                    bad.is_empty(),
                    if bad.is_empty() {
                        format!(
                            "metadata.yaml contract {contract} = every CRD's newest contract label"
                        )
                    } else {
                        format!("metadata.yaml says {contract}; {}", bad.join("; "))
                    },
                )
            }
        };
        results.record(CheckId::C04, outcome);

        // Templates carry no status: core only reads their spec.
        let mut bad = Vec::new();
        let statusful: Vec<_> = release
            .crds
            .iter()
            .filter(|c| {
                !c["spec"]["names"]["kind"]
                    .as_str()
                    .unwrap_or_default()
                    .ends_with("Template")
            })
            .collect();
        for crd in &statusful {
            for v in crd["spec"]["versions"].as_array().into_iter().flatten() {
                if v["subresources"]["status"].is_null() {
                    bad.push(format!("{} {}", crd_name(crd), v["name"]));
                }
            }
        }
        results.record(
            CheckId::C05,
            verdict(
                bad.is_empty(),
                if bad.is_empty() {
                    format!(
                        "status subresource on every version of {} kinds (templates excluded)",
                        statusful.len()
                    )
                } else {
                    format!("no status subresource: {}", bad.join(", "))
                },
            ),
        );

        let mut bad = Vec::new();
        let mut with_replicas = 0;
        for crd in &release.crds {
            for v in crd["spec"]["versions"].as_array().into_iter().flatten() {
                let schema = &v["schema"]["openAPIV3Schema"];
                if schema["properties"]["spec"]["properties"]
                    .get("replicas")
                    .is_none()
                {
                    continue;
                }
                with_replicas += 1;
                let scale = &v["subresources"]["scale"];
                if scale["specReplicasPath"] != ".spec.replicas"
                    || scale["statusReplicasPath"] != ".status.replicas"
                {
                    bad.push(format!("{} {}: scale = {scale}", crd_name(crd), v["name"]));
                }
            }
        }
        results.record(
            CheckId::C06,
            verdict(
                bad.is_empty(),
                if !bad.is_empty() {
                    bad.join("; ")
                } else if with_replicas == 0 {
                    "no kind has spec.replicas (pools take their count from the MachinePool)"
                        .to_string()
                } else {
                    format!("{with_replicas} versions with spec.replicas, all with a correct scale subresource")
                },
            ),
        );
    }

    results.record(CheckId::C55, metadata_check(release, version));
    results.record(CheckId::C56, components_check(release));
}

fn release_series<'a>(release: &'a Release, version: &str) -> Option<&'a Value> {
    let (major, minor) = major_minor(version)?;
    release.metadata["releaseSeries"]
        .as_array()?
        .iter()
        .find(|s| s["major"].as_u64() == Some(major) && s["minor"].as_u64() == Some(minor))
}

fn major_minor(version: &str) -> Option<(u64, u64)> {
    let mut parts = version.trim_start_matches('v').split('.');
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

fn metadata_check(release: &Release, version: &str) -> Outcome {
    let m = &release.metadata;
    if m["apiVersion"] != "clusterctl.cluster.x-k8s.io/v1alpha3" || m["kind"] != "Metadata" {
        return Outcome::Fail(format!(
            "metadata.yaml is {} {}, not clusterctl.cluster.x-k8s.io/v1alpha3 Metadata",
            m["apiVersion"], m["kind"]
        ));
    }
    match release_series(release, version) {
        Some(s) => Outcome::Pass(format!(
            "release series {}.{} (contract {}) covers {version}",
            s["major"], s["minor"], s["contract"]
        )),
        None => Outcome::Fail(format!(
            "no release series covers {version}: {}",
            m["releaseSeries"]
        )),
    }
}

fn components_check(release: &Release) -> Outcome {
    let mut problems = Vec::new();
    let namespaces: Vec<_> = release
        .components
        .iter()
        .filter(|d| d["kind"] == "Namespace")
        .collect();
    let Some(ns) = release.namespace() else {
        return Outcome::Fail(format!(
            "{} Namespace objects; clusterctl needs exactly one",
            namespaces.len()
        ));
    };
    for doc in &release.components {
        let kind = doc["kind"].as_str().unwrap_or_default();
        if CLUSTER_SCOPED.contains(&kind) {
            continue;
        }
        if doc["metadata"]["namespace"] != ns.as_str() {
            problems.push(format!(
                "{kind}/{} is in {} instead of {ns}",
                doc["metadata"]["name"].as_str().unwrap_or("?"),
                doc["metadata"]["namespace"]
            ));
        }
    }
    let mut managers = Vec::new();
    for doc in release
        .components
        .iter()
        .filter(|d| d["kind"] == "Deployment")
    {
        for c in doc["spec"]["template"]["spec"]["containers"]
            .as_array()
            .into_iter()
            .flatten()
        {
            if c["name"] == "manager" {
                managers.push(c.clone());
            }
        }
    }
    match managers.as_slice() {
        [] => problems.push("no Deployment has a container named manager".into()),
        [manager] => {
            let args: Vec<String> = manager["args"]
                .as_array()
                .into_iter()
                .flatten()
                .chain(manager["command"].as_array().into_iter().flatten())
                .filter_map(|a| a.as_str().map(str::to_string))
                .collect();
            for flag in ["--namespace", "--watch-filter"] {
                if !args
                    .iter()
                    .any(|a| a == flag || a.starts_with(&format!("{flag}=")))
                {
                    problems.push(format!(
                        "the manager container does not pass {flag}: {args:?}"
                    ));
                }
            }
        }
        _ => problems.push(format!("{} containers named manager", managers.len())),
    }
    if problems.is_empty() {
        Outcome::Pass(format!(
            "one Namespace {ns}; {} objects; container manager passes --namespace and --watch-filter",
            release.components.len()
        ))
    } else {
        Outcome::Fail(problems.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_render_and_required_vanish() {
        assert_eq!(
            render_defaults("a=${X:=1} b=${Y} c").ok().as_deref(),
            Some("a=1 b= c")
        );
        assert_eq!(render_defaults("--f=${F:=}").ok().as_deref(), Some("--f="));
        assert!(render_defaults("--f=${F").is_err());
    }

    #[test]
    fn plural_rules_and_contract_order() {
        assert!(plurals("EKSCluster").contains(&"eksclusters".to_string()));
        assert!(plurals("Policy").contains(&"policies".to_string()));
        assert!(contract_rank("v1beta2") > contract_rank("v1beta1"));
        assert!(contract_rank("v1") > contract_rank("v1beta2"));
    }

    #[test]
    fn open_schemas_have_every_path() {
        let s = serde_json::json!({"properties": {"spec": {"properties": {"template": {
            "x-kubernetes-preserve-unknown-fields": true }}}}});
        assert!(schema_has(&s, &["spec", "template", "spec"]));
        assert!(!schema_has(&s, &["status"]));
    }
}
