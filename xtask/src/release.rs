//! A provider's release (clusterctl name `<name>`), the same shape for every cloud: CRDs, RBAC,
//! the manager Deployment, `metadata.yaml`, `infrastructure-components.yaml`, and the cluster
//! templates (flavors) and ClusterClass definitions of `<crate>/templates/`, copied as written.
//! A cloud supplies a [`Release`]: its name, CRDs, templates folder and how its controller gets
//! its own credentials.
//!
//! The RBAC covers exactly what `provider-runtime` and the provider crates call:
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
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::{Value, json};

use crate::to_yaml;

/// The release every provider ships as, in the repository's current version.
pub const VERSION: &str = "v0.1.0";

/// Where the images are published by default: the components' image variables default to
/// `<REGISTRY>/<crate>:<VERSION>`, the name `cargo run -p xtask -- release` gives its image
/// archives (`--registry` changes both).
pub const REGISTRY: &str = "ghcr.io/capi-managed";

const METRICS_PORT: u16 = 8080;
const HEALTH_PORT: u16 = 9440;

/// What a cloud's release is made of.
#[derive(Debug)]
pub struct Release {
    /// clusterctl's name (`eks`, `gke`).
    pub name: &'static str,
    /// The crate whose `templates/` are shipped (`provider-aws`).
    pub crate_dir: &'static str,
    /// The CRDs.
    pub crds: fn() -> Vec<CustomResourceDefinition>,
    /// Environment variables of the manager container (the controller's own credentials).
    pub env: fn() -> Vec<Value>,
    /// Volumes of the manager Pod.
    pub volumes: fn() -> Vec<Value>,
    /// Volume mounts of the manager container.
    pub volume_mounts: fn() -> Vec<Value>,
}

impl Release {
    /// The clusterctl label of every object: `infrastructure-<name>`.
    pub fn provider_label(&self) -> String {
        format!("infrastructure-{}", self.name)
    }

    /// Where the controller runs: `capi-<name>-system`.
    pub fn namespace(&self) -> String {
        format!("capi-{}-system", self.name)
    }

    /// The Deployment: `capi-<name>-controller-manager`.
    pub fn deployment(&self) -> String {
        format!("capi-{}-controller-manager", self.name)
    }

    /// The optional Secret with the controller's own credentials: `capi-<name>-credentials`.
    pub fn credentials_secret(&self) -> String {
        format!("capi-{}-credentials", self.name)
    }

    /// The image this release's manager runs by default: `<registry>/<crate>:<VERSION>`.
    pub fn image_default(&self, registry: &str) -> String {
        format!("{registry}/{}:{VERSION}", self.crate_dir)
    }

    /// The manager's image in the components: `${<NAME>_PROVIDER_IMAGE:=<default>}`.
    pub fn image_ref(&self, registry: &str) -> String {
        format!(
            "${{{}:={}}}",
            self.variable("PROVIDER_IMAGE"),
            self.image_default(registry)
        )
    }

    fn variable(&self, what: &str) -> String {
        format!("{}_{what}", self.name.to_ascii_uppercase())
    }

    /// `--namespace`: all namespaces unless `<NAME>_WATCH_NAMESPACE` is set.
    ///
    /// The default is one space, not empty: clusterctl (v1.14.2, `yamlprocessor.SimpleProcessor`)
    /// takes a variable whose default text is empty (`${X_WATCH_NAMESPACE:=}`) for one without a
    /// default and refuses to install ("value for variables [X_WATCH_NAMESPACE] is not set"). The
    /// book's own empty default, `${VAR:=""}`, only works where the variable is the whole YAML
    /// scalar, and a bare `- ${VAR:=""}` argument would turn a value such as `true` or `123` into a
    /// non-string. With one space the rendered plain scalar is `--namespace= `, whose trailing space
    /// YAML drops, so the container gets `--namespace=`: all namespaces, as Cluster API's own
    /// managers take it (the binary trims the value as well).
    pub fn watch_namespace_arg(&self) -> String {
        format!("--namespace=${{{}:= }}", self.variable("WATCH_NAMESPACE"))
    }

    /// `--watch-filter`: no filter unless `<NAME>_WATCH_FILTER` is set (one-space default, see
    /// [`Release::watch_namespace_arg`]).
    pub fn watch_filter_arg(&self) -> String {
        format!("--watch-filter=${{{}:= }}", self.variable("WATCH_FILTER"))
    }

    fn service_account(&self) -> String {
        format!("capi-{}-manager", self.name)
    }

    fn manager_role(&self) -> String {
        format!("capi-{}-manager-role", self.name)
    }

    fn leader_role(&self) -> String {
        format!("capi-{}-leader-election-role", self.name)
    }

    fn aggregated_role(&self) -> String {
        format!("capi-{}-aggregated-manager-role", self.name)
    }

    /// Every generated file of `manifests/<name>/`, by name.
    pub fn files(&self, root: &Path) -> Result<Vec<(String, String)>> {
        self.files_for(root, REGISTRY)
    }

    /// Every file of the release with its image in `registry`, by name.
    pub fn files_for(&self, root: &Path, registry: &str) -> Result<Vec<(String, String)>> {
        let mut files = vec![
            (
                "crds.yaml".to_owned(),
                to_yaml(&self.labelled(self.crd_values()?))?,
            ),
            (
                "rbac.yaml".to_owned(),
                to_yaml(&self.labelled(self.rbac()))?,
            ),
            (
                "manager.yaml".to_owned(),
                to_yaml(&self.labelled(self.manager(registry)))?,
            ),
            (
                "infrastructure-components.yaml".to_owned(),
                to_yaml(&self.components(registry)?)?,
            ),
            ("metadata.yaml".to_owned(), to_yaml(&[metadata()])?),
        ];
        let dir = root.join(self.crate_dir).join("templates");
        for name in templates(&dir)? {
            let path = dir.join(&name);
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            files.push((name, text));
        }
        Ok(files)
    }

    /// `infrastructure-components.yaml`: the Namespace, then CRDs, RBAC and the manager.
    pub fn components(&self, registry: &str) -> Result<Vec<Value>> {
        let mut docs = vec![self.namespace_doc()];
        docs.extend(self.crd_values()?);
        docs.extend(self.rbac());
        docs.extend(self.manager(registry));
        Ok(self.labelled(docs))
    }

    /// The provider's CRDs as JSON.
    pub fn crd_values(&self) -> Result<Vec<Value>> {
        (self.crds)()
            .iter()
            .map(|crd| serde_json::to_value(crd).context("serialising a CRD"))
            .collect()
    }

    /// `(group, plural, kind)` of every CRD.
    fn kinds(&self) -> Vec<(String, String, String)> {
        (self.crds)()
            .into_iter()
            .map(|c| (c.spec.group, c.spec.names.plural, c.spec.names.kind))
            .collect()
    }

    /// The manager's roles and bindings, and the role aggregated into core's manager.
    pub fn rbac(&self) -> Vec<Value> {
        let kinds = self.kinds();
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
                "metadata": { "name": self.manager_role() },
                "rules": manager_rules,
            }),
            json!({
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": { "name": format!("capi-{}-manager-rolebinding", self.name) },
                "roleRef": role_ref("ClusterRole", &self.manager_role()),
                "subjects": [self.service_account_subject()],
            }),
            json!({
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "Role",
                "metadata": { "name": self.leader_role(), "namespace": self.namespace() },
                "rules": [rule("coordination.k8s.io", &["leases"], &["get", "create", "patch"])],
            }),
            json!({
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": { "name": format!("capi-{}-leader-election-rolebinding", self.name), "namespace": self.namespace() },
                "roleRef": role_ref("Role", &self.leader_role()),
                "subjects": [self.service_account_subject()],
            }),
            json!({
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRole",
                "metadata": {
                    "name": self.aggregated_role(),
                    "labels": { "cluster.x-k8s.io/aggregate-to-manager": "true" },
                },
                "rules": core_rules,
            }),
        ]
    }

    /// The ServiceAccount and the Deployment running the controller.
    pub fn manager(&self, registry: &str) -> Vec<Value> {
        let mut docs = self.manager_docs(registry);
        // A cloud without volumes gets none (rather than empty lists).
        let spec = &mut docs[1]["spec"]["template"]["spec"];
        if spec["volumes"].as_array().is_some_and(Vec::is_empty)
            && let Some(o) = spec.as_object_mut()
        {
            o.remove("volumes");
        }
        let container = &mut spec["containers"][0];
        if container["volumeMounts"]
            .as_array()
            .is_some_and(Vec::is_empty)
            && let Some(o) = container.as_object_mut()
        {
            o.remove("volumeMounts");
        }
        docs
    }

    fn manager_docs(&self, registry: &str) -> Vec<Value> {
        let selector = json!({ "control-plane": "controller-manager" });
        let probe = |path: &str| json!({ "httpGet": { "path": path, "port": "healthz" }, "periodSeconds": 10 });
        vec![
            json!({
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": { "name": self.service_account(), "namespace": self.namespace() },
            }),
            json!({
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": { "name": self.deployment(), "namespace": self.namespace(), "labels": selector },
                "spec": {
                    "replicas": 1,
                    "selector": { "matchLabels": selector },
                    "template": {
                        "metadata": { "labels": selector },
                        "spec": {
                            "serviceAccountName": self.service_account(),
                            "terminationGracePeriodSeconds": 10,
                            "securityContext": {
                                "runAsNonRoot": true,
                                "seccompProfile": { "type": "RuntimeDefault" },
                            },
                            "volumes": (self.volumes)(),
                            "containers": [{
                                "name": "manager",
                                "image": self.image_ref(registry),
                                "imagePullPolicy": "IfNotPresent",
                                "args": [
                                    self.watch_namespace_arg(),
                                    self.watch_filter_arg(),
                                    "--leader-elect",
                                    format!("--metrics-bind-address=:{METRICS_PORT}"),
                                    format!("--health-probe-bind-address=:{HEALTH_PORT}"),
                                    "--log-format=json",
                                ],
                                "env": (self.env)(),
                                "volumeMounts": (self.volume_mounts)(),
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

    fn namespace_doc(&self) -> Value {
        json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": self.namespace() } })
    }

    /// Stamps the clusterctl provider label on every object.
    fn labelled(&self, mut docs: Vec<Value>) -> Vec<Value> {
        for doc in &mut docs {
            let meta = &mut doc["metadata"];
            if !meta["labels"].is_object() {
                meta["labels"] = json!({});
            }
            meta["labels"]["cluster.x-k8s.io/provider"] = json!(self.provider_label());
        }
        docs
    }

    fn service_account_subject(&self) -> Value {
        json!({ "kind": "ServiceAccount", "name": self.service_account(), "namespace": self.namespace() })
    }
}

/// The files of a release that a clusterctl repository serves (the components, the metadata and
/// the templates; not the parts `manifests/` also keeps apart).
fn served(name: &str) -> bool {
    name == "infrastructure-components.yaml" || name == "metadata.yaml" || is_template(name)
}

/// Writes a clusterctl provider repository of `releases` under `dir`:
/// `infrastructure-<name>/<VERSION>/` with `metadata.yaml`, `infrastructure-components.yaml`
/// (the image variable defaulting to `<registry>/<crate>:<VERSION>`) and the templates, and
/// `clusterctl.yaml` naming each release by a `file://` URL, to be given to
/// `clusterctl --config` (a user adds it to their own `~/.config/cluster-api/clusterctl.yaml`).
/// Returns the path of `clusterctl.yaml`.
pub fn write_repository(
    root: &Path,
    dir: &Path,
    releases: &[&Release],
    registry: &str,
) -> Result<std::path::PathBuf> {
    let dir = std::path::absolute(dir).with_context(|| format!("resolving {}", dir.display()))?;
    let mut config = String::from(
        "# clusterctl's providers from this folder: clusterctl init --config <this file> --infrastructure <name>:<version>\nproviders:\n",
    );
    for release in releases {
        let version_dir = dir.join(release.provider_label()).join(VERSION);
        std::fs::create_dir_all(&version_dir)
            .with_context(|| format!("creating {}", version_dir.display()))?;
        for (name, text) in release.files_for(root, registry)? {
            if served(&name) {
                let path = version_dir.join(&name);
                std::fs::write(&path, text)
                    .with_context(|| format!("writing {}", path.display()))?;
            }
        }
        config.push_str(&format!(
            "- name: {}\n  type: InfrastructureProvider\n  url: file://{}\n",
            release.name,
            version_dir.join("infrastructure-components.yaml").display()
        ));
    }
    let path = dir.join("clusterctl.yaml");
    std::fs::write(&path, config).with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

/// An environment variable read from the credentials Secret, optional.
pub fn secret_env(secret: &str, name: &str) -> Value {
    json!({
        "name": name,
        "valueFrom": { "secretKeyRef": { "name": secret, "key": name, "optional": true } },
    })
}

/// clusterctl's `metadata.yaml`: release 0.1 speaks contract v1beta2.
pub fn metadata() -> Value {
    json!({
        "apiVersion": "clusterctl.cluster.x-k8s.io/v1alpha3",
        "kind": "Metadata",
        "releaseSeries": [{ "major": 0, "minor": 1, "contract": "v1beta2" }],
    })
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
        let deployment = crate::eks::RELEASE
            .manager(REGISTRY)
            .into_iter()
            .find(|d| d["kind"] == "Deployment")
            .unwrap();
        let args = &deployment["spec"]["template"]["spec"]["containers"][0]["args"];
        assert_eq!(args[0], "--namespace=${EKS_WATCH_NAMESPACE:= }");
        assert_eq!(args[1], "--watch-filter=${EKS_WATCH_FILTER:= }");
        assert_eq!(
            deployment["spec"]["template"]["spec"]["containers"][0]["image"],
            "${EKS_PROVIDER_IMAGE:=ghcr.io/capi-managed/provider-aws:v0.1.0}"
        );
        let elsewhere = crate::eks::RELEASE.image_ref("registry.example:5000/team");
        assert_eq!(
            elsewhere,
            "${EKS_PROVIDER_IMAGE:=registry.example:5000/team/provider-aws:v0.1.0}"
        );
    }

    #[test]
    fn the_repository_serves_components_metadata_and_templates_under_the_version() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let config =
            write_repository(root, dir.path(), &[&crate::eks::RELEASE], "reg.example/x").unwrap();
        let version_dir = dir.path().join("infrastructure-eks").join(VERSION);
        let mut names: Vec<String> = std::fs::read_dir(&version_dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert!(names.contains(&"metadata.yaml".to_owned()), "{names:?}");
        assert!(
            names.contains(&"cluster-template.yaml".to_owned()),
            "{names:?}"
        );
        assert!(!names.contains(&"crds.yaml".to_owned()), "{names:?}");
        let components =
            std::fs::read_to_string(version_dir.join("infrastructure-components.yaml")).unwrap();
        assert!(
            components.contains("${EKS_PROVIDER_IMAGE:=reg.example/x/provider-aws:v0.1.0}"),
            "the image default is not the registry's"
        );
        let config = std::fs::read_to_string(config).unwrap();
        assert!(
            config.contains(&format!(
                "url: file://{}/infrastructure-components.yaml",
                version_dir.display()
            )),
            "{config}"
        );
    }
}
