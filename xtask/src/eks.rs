//! The EKS provider's release (clusterctl name `eks`): CRDs, RBAC, the manager Deployment,
//! `metadata.yaml`, `infrastructure-components.yaml`, and the cluster templates (flavors) and
//! ClusterClass definitions of `provider-aws/templates/`, copied as written.
//!
//! The RBAC covers exactly what `provider-runtime` and `provider-aws` call:
//! - the reconciled kinds: watched (list/watch), finalizers and spec fields patched, status read
//!   (`get_status`) and server-side applied; `finalizers` update because the kubeconfig Secrets
//!   carry a controller owner reference with `blockOwnerDeletion`;
//! - `Cluster` watched, `MachinePool` watched and merge-patched (`replicas-managed-by`,
//!   `spec.replicas`);
//! - Secrets read by name (identity, kubeconfig) and server-side applied (`patch`, plus `create`
//!   when the apply creates one); never listed or watched;
//! - `events.k8s.io` Events created and patched (kube's `Recorder`);
//! - the leader Lease (get/create/patch by kube-lease-manager) in the provider's own namespace.

use std::path::Path;

use anyhow::{Context, Result};
use serde_json::{Value, json};

use crate::to_yaml;

/// The clusterctl label of every object: `infrastructure-<name>`.
pub const PROVIDER_LABEL: &str = "infrastructure-eks";
/// Where the controller runs.
pub const NAMESPACE: &str = "capi-eks-system";
/// The Deployment.
pub const DEPLOYMENT: &str = "capi-eks-controller-manager";
/// The release this repository describes.
pub const VERSION: &str = "v0.1.0";
/// Placeholder image: no image is published; override with `EKS_PROVIDER_IMAGE`.
pub const IMAGE: &str = "${EKS_PROVIDER_IMAGE:=ghcr.io/example/provider-aws:v0.1.0}";
/// The optional Secret with the controller's own AWS credentials.
pub const CREDENTIALS_SECRET: &str = "capi-eks-credentials";

/// `--namespace`: all namespaces unless `EKS_WATCH_NAMESPACE` is set.
///
/// The default is one space, not empty: clusterctl (v1.14.2, `yamlprocessor.SimpleProcessor`)
/// takes a variable whose default text is empty (`${EKS_WATCH_NAMESPACE:=}`) for one without a
/// default and refuses to install ("value for variables [EKS_WATCH_NAMESPACE] is not set"). The
/// book's own empty default, `${VAR:=""}`, only works where the variable is the whole YAML
/// scalar, and a bare `- ${VAR:=""}` argument would turn a value such as `true` or `123` into a
/// non-string. With one space the rendered plain scalar is `--namespace= `, whose trailing space
/// YAML drops, so the container gets `--namespace=`: all namespaces, as Cluster API's own
/// managers take it (the binary trims the value as well).
pub const WATCH_NAMESPACE_ARG: &str = "--namespace=${EKS_WATCH_NAMESPACE:= }";
/// `--watch-filter`: no filter unless `EKS_WATCH_FILTER` is set (one-space default, see
/// [`WATCH_NAMESPACE_ARG`]).
pub const WATCH_FILTER_ARG: &str = "--watch-filter=${EKS_WATCH_FILTER:= }";

const SERVICE_ACCOUNT: &str = "capi-eks-manager";
const MANAGER_ROLE: &str = "capi-eks-manager-role";
const LEADER_ROLE: &str = "capi-eks-leader-election-role";
const AGGREGATED_ROLE: &str = "capi-eks-aggregated-manager-role";
const METRICS_PORT: u16 = 8080;
const HEALTH_PORT: u16 = 9440;

/// Every generated file of `manifests/eks/`, by name.
pub fn files(root: &Path) -> Result<Vec<(String, String)>> {
    let mut files = vec![
        ("crds.yaml".to_owned(), to_yaml(&labelled(crds()?))?),
        ("rbac.yaml".to_owned(), to_yaml(&labelled(rbac()))?),
        ("manager.yaml".to_owned(), to_yaml(&labelled(manager()))?),
        (
            "infrastructure-components.yaml".to_owned(),
            to_yaml(&components()?)?,
        ),
        ("metadata.yaml".to_owned(), to_yaml(&[metadata()])?),
    ];
    let dir = root.join("provider-aws/templates");
    for name in templates(&dir)? {
        let path = dir.join(&name);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        files.push((name, text));
    }
    Ok(files)
}

/// The clusterctl templates in `dir`, sorted: `cluster-template.yaml` (the default flavor),
/// `cluster-template-<flavor>.yaml` and `clusterclass-<name>.yaml`.
pub fn templates(dir: &Path) -> Result<Vec<String>> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let name = entry
            .with_context(|| format!("listing {}", dir.display()))?
            .file_name()
            .to_string_lossy()
            .into_owned();
        if is_template(&name) {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

/// Whether clusterctl reads a file of this name as a cluster template or a ClusterClass.
pub fn is_template(name: &str) -> bool {
    name.ends_with(".yaml")
        && (name == "cluster-template.yaml"
            || name.starts_with("cluster-template-")
            || name.starts_with("clusterclass-"))
}

/// `infrastructure-components.yaml`: the Namespace, then CRDs, RBAC and the manager.
pub fn components() -> Result<Vec<Value>> {
    let mut docs = vec![namespace()];
    docs.extend(crds()?);
    docs.extend(rbac());
    docs.extend(manager());
    Ok(labelled(docs))
}

/// clusterctl's `metadata.yaml`: release 0.1 speaks contract v1beta2.
pub fn metadata() -> Value {
    json!({
        "apiVersion": "clusterctl.cluster.x-k8s.io/v1alpha3",
        "kind": "Metadata",
        "releaseSeries": [{ "major": 0, "minor": 1, "contract": "v1beta2" }],
    })
}

/// The provider's CRDs as `provider_aws::api::crds()` builds them.
pub fn crds() -> Result<Vec<Value>> {
    provider_aws::api::crds()
        .iter()
        .map(|crd| serde_json::to_value(crd).context("serialising a CRD"))
        .collect()
}

/// `(group, plural, kind)` of every CRD.
fn kinds() -> Vec<(String, String, String)> {
    provider_aws::api::crds()
        .into_iter()
        .map(|c| (c.spec.group, c.spec.names.plural, c.spec.names.kind))
        .collect()
}

/// The manager's roles and bindings, and the role aggregated into core's manager.
pub fn rbac() -> Vec<Value> {
    let kinds = kinds();
    let reconciled: Vec<_> = kinds
        .iter()
        .filter(|(_, _, kind)| !kind.ends_with("Template"))
        .collect();

    let mut manager_rules = Vec::new();
    let mut core_rules = Vec::new();
    for group in groups(&kinds) {
        let of = |suffix: &str, only_reconciled: bool| -> Vec<String> {
            kinds
                .iter()
                .filter(|(g, _, kind)| {
                    *g == group && (!only_reconciled || !kind.ends_with("Template"))
                })
                .map(|(_, plural, _)| format!("{plural}{suffix}"))
                .collect()
        };
        if reconciled.iter().any(|(g, _, _)| *g == group) {
            manager_rules.push(rule(
                &group,
                &of("", true),
                &["get", "list", "watch", "patch"],
            ));
            manager_rules.push(rule(&group, &of("/status", true), &["get", "patch"]));
            manager_rules.push(rule(&group, &of("/finalizers", true), &["update"]));
        }
        core_rules.push(rule(
            &group,
            &of("", false),
            &[
                "get", "list", "watch", "create", "update", "patch", "delete",
            ],
        ));
    }
    manager_rules.extend([
        rule("cluster.x-k8s.io", &["clusters"], &["get", "list", "watch"]),
        rule(
            "cluster.x-k8s.io",
            &["machinepools"],
            &["get", "list", "watch", "patch"],
        ),
        rule("", &["secrets"], &["get", "create", "patch"]),
        rule("events.k8s.io", &["events"], &["create", "patch"]),
    ]);

    vec![
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": { "name": MANAGER_ROLE },
            "rules": manager_rules,
        }),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": { "name": "capi-eks-manager-rolebinding" },
            "roleRef": role_ref("ClusterRole", MANAGER_ROLE),
            "subjects": [service_account_subject()],
        }),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": { "name": LEADER_ROLE, "namespace": NAMESPACE },
            "rules": [rule("coordination.k8s.io", &["leases"], &["get", "create", "patch"])],
        }),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": { "name": "capi-eks-leader-election-rolebinding", "namespace": NAMESPACE },
            "roleRef": role_ref("Role", LEADER_ROLE),
            "subjects": [service_account_subject()],
        }),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {
                "name": AGGREGATED_ROLE,
                "labels": { "cluster.x-k8s.io/aggregate-to-manager": "true" },
            },
            "rules": core_rules,
        }),
    ]
}

/// The ServiceAccount and the Deployment running the controller.
pub fn manager() -> Vec<Value> {
    let selector = json!({ "control-plane": "controller-manager" });
    let credential = |name: &str| {
        json!({
            "name": name,
            "valueFrom": { "secretKeyRef": {
                "name": CREDENTIALS_SECRET, "key": name, "optional": true,
            }},
        })
    };
    let probe =
        |path: &str| json!({ "httpGet": { "path": path, "port": "healthz" }, "periodSeconds": 10 });
    vec![
        json!({
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": { "name": SERVICE_ACCOUNT, "namespace": NAMESPACE },
        }),
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": { "name": DEPLOYMENT, "namespace": NAMESPACE, "labels": selector },
            "spec": {
                "replicas": 1,
                "selector": { "matchLabels": selector },
                "template": {
                    "metadata": { "labels": selector },
                    "spec": {
                        "serviceAccountName": SERVICE_ACCOUNT,
                        "terminationGracePeriodSeconds": 10,
                        "securityContext": {
                            "runAsNonRoot": true,
                            "seccompProfile": { "type": "RuntimeDefault" },
                        },
                        "containers": [{
                            "name": "manager",
                            "image": IMAGE,
                            "imagePullPolicy": "IfNotPresent",
                            "args": [
                                WATCH_NAMESPACE_ARG,
                                WATCH_FILTER_ARG,
                                "--leader-elect",
                                format!("--metrics-bind-address=:{METRICS_PORT}"),
                                format!("--health-probe-bind-address=:{HEALTH_PORT}"),
                                "--log-format=json",
                            ],
                            "env": [
                                credential("AWS_ACCESS_KEY_ID"),
                                credential("AWS_SECRET_ACCESS_KEY"),
                                credential("AWS_SESSION_TOKEN"),
                            ],
                            "ports": [
                                { "name": "metrics", "containerPort": METRICS_PORT, "protocol": "TCP" },
                                { "name": "healthz", "containerPort": HEALTH_PORT, "protocol": "TCP" },
                            ],
                            "livenessProbe": probe("/healthz"),
                            "readinessProbe": probe("/readyz"),
                            "securityContext": {
                                "allowPrivilegeEscalation": false,
                                "readOnlyRootFilesystem": true,
                                "capabilities": { "drop": ["ALL"] },
                            },
                        }],
                    },
                },
            },
        }),
    ]
}

fn namespace() -> Value {
    json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": NAMESPACE } })
}

/// Stamps the clusterctl provider label on every object.
fn labelled(mut docs: Vec<Value>) -> Vec<Value> {
    for doc in &mut docs {
        let meta = &mut doc["metadata"];
        if !meta["labels"].is_object() {
            meta["labels"] = json!({});
        }
        meta["labels"]["cluster.x-k8s.io/provider"] = json!(PROVIDER_LABEL);
    }
    docs
}

fn groups(kinds: &[(String, String, String)]) -> Vec<String> {
    let mut groups: Vec<String> = kinds.iter().map(|(g, _, _)| g.clone()).collect();
    groups.sort();
    groups.dedup();
    groups
}

fn rule<S: AsRef<str>>(group: &str, resources: &[S], verbs: &[&str]) -> Value {
    let resources: Vec<&str> = resources.iter().map(AsRef::as_ref).collect();
    json!({ "apiGroups": [group], "resources": resources, "verbs": verbs })
}

fn role_ref(kind: &str, name: &str) -> Value {
    json!({ "apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": name })
}

fn service_account_subject() -> Value {
    json!({ "kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": NAMESPACE })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn templates_are_the_files_clusterctl_reads_as_templates() {
        for name in [
            "cluster-template.yaml",
            "cluster-template-byo-network.yaml",
            "clusterclass-eks.yaml",
        ] {
            assert!(is_template(name), "{name}");
        }
        for name in [
            "cluster-template.yml",
            "infrastructure-components.yaml",
            "metadata.yaml",
            "README.md",
        ] {
            assert!(!is_template(name), "{name}");
        }
    }

    #[test]
    fn the_manager_takes_the_watch_flags_from_variables_with_blank_defaults() {
        let deployment = manager()
            .into_iter()
            .find(|d| d["kind"] == "Deployment")
            .unwrap();
        let args = &deployment["spec"]["template"]["spec"]["containers"][0]["args"];
        assert_eq!(args[0], "--namespace=${EKS_WATCH_NAMESPACE:= }");
        assert_eq!(args[1], "--watch-filter=${EKS_WATCH_FILTER:= }");
    }
}
