//! Checks that prove the management plane is the real thing: each one can pass only if the
//! component it names is running and behaving as upstream ships it.
//!
//! The demo prints these as they happen; the integration tests assert them, and also run them
//! against a plane with components left out to show that each check fails without its component.

use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams,
};
use serde_json::{Value, json};
use testbed::ManagementPlane;
use testbed::process::wait_until;

/// The oldest management-cluster Kubernetes minor Cluster API v1.14 and k8s-openapi 0.29 share.
pub const MIN_KUBERNETES_MINOR: u32 = 33;

/// One check's result.
#[derive(Debug, Clone)]
pub struct BedCheck {
    /// Short id, e.g. `B3`.
    pub id: &'static str,
    /// The component whose absence makes this check fail.
    pub component: &'static str,
    /// What the check asserts, in one line.
    pub statement: &'static str,
    /// `Ok(observed)` or `Err(why it failed)`.
    pub outcome: Result<String, String>,
}

impl BedCheck {
    /// Whether the check passed.
    pub fn passed(&self) -> bool {
        self.outcome.is_ok()
    }
}

const CP_GROUP: &str = "controlplane.cluster.x-k8s.io";
const CP_KIND: &str = "BedCheckControlPlane";

/// A control-plane CRD shaped per the contract (name, namespaced, status subresource, contract
/// label) with one CEL rule, for the checks.
pub fn bed_check_control_plane_crd() -> Result<CustomResourceDefinition> {
    Ok(serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": format!("bedcheckcontrolplanes.{CP_GROUP}"),
            "labels": { "cluster.x-k8s.io/v1beta2": "v1alpha1" }
        },
        "spec": {
            "group": CP_GROUP,
            "scope": "Namespaced",
            "names": { "kind": CP_KIND, "listKind": "BedCheckControlPlaneList", "plural": "bedcheckcontrolplanes", "singular": "bedcheckcontrolplane" },
            "versions": [{
                "name": "v1alpha1", "served": true, "storage": true,
                "subresources": { "status": {} },
                "schema": { "openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": {
                            "type": "object",
                            "x-kubernetes-preserve-unknown-fields": true,
                            "properties": { "version": { "type": "string", "maxLength": 64 } },
                            "x-kubernetes-validations": [{
                                "rule": "!has(self.version) || self.version.startsWith('v')",
                                "message": "spec.version must start with \"v\", e.g. \"v1.33\""
                            }]
                        },
                        "status": { "type": "object", "x-kubernetes-preserve-unknown-fields": true }
                    }
                }}
            }]
        }
    }))?)
}

fn resource(group: &str, version: &str, kind: &str) -> ApiResource {
    ApiResource::from_gvk(&GroupVersionKind::gvk(group, version, kind))
}

/// Runs every check in namespace `namespace` (created if missing), waiting up to `timeout` for
/// each asynchronous effect. Checks that depend on an earlier one still run and fail on their own.
pub async fn run(
    plane: &ManagementPlane,
    namespace: &str,
    timeout: Duration,
) -> Result<Vec<BedCheck>> {
    let client = plane.client().await?;
    let ns_api: Api<Namespace> = Api::all(client.clone());
    if ns_api.get_opt(namespace).await?.is_none() {
        ns_api
            .create(
                &PostParams::default(),
                &serde_json::from_value(json!({"metadata": {"name": namespace}}))?,
            )
            .await?;
    }
    plane
        .install_crds(&[bed_check_control_plane_crd()?])
        .await?;

    let mut checks = Vec::new();
    let mut push = |id, component, statement, outcome: Result<String>| {
        checks.push(BedCheck {
            id,
            component,
            statement,
            outcome: outcome.map_err(|e| format!("{e:#}")),
        });
    };

    push(
        "B1",
        "kube-apiserver",
        "the API server reports Kubernetes v1.33 or newer",
        server_version(&client).await,
    );
    push(
        "B2",
        "kube-apiserver",
        "CRD CEL rules (x-kubernetes-validations) reject a bad object with the rule's message",
        cel_rejects(&client, namespace).await,
    );
    let cluster_created = create_cluster(&client, namespace).await;
    push(
        "B3",
        "capi-manager",
        "Cluster API core adds its finalizer to a Cluster, and an owner reference and cluster-name label to its control plane",
        match &cluster_created {
            Ok(()) => core_adopts(&client, namespace, timeout).await,
            Err(e) => Err(anyhow!("{e:#}")),
        },
    );
    push(
        "B4",
        "capi-manager",
        "Cluster API core copies the control plane's endpoint into the Cluster and marks it initialized",
        match &cluster_created {
            Ok(()) => core_copies_endpoint(&client, namespace, timeout).await,
            Err(e) => Err(anyhow!("{e:#}")),
        },
    );
    push(
        "B5",
        "capi-manager webhooks",
        "Cluster API's webhooks default a MachinePool's cluster-name label and reject one without bootstrap",
        webhooks_work(&client, namespace).await,
    );
    push(
        "B6",
        "kube-controller-manager",
        "the garbage collector deletes a Secret whose owner was deleted",
        garbage_collected(&client, namespace, timeout).await,
    );
    Ok(checks)
}

async fn server_version(client: &kube::Client) -> Result<String> {
    let info = client.apiserver_version().await?;
    let minor: u32 = info
        .minor
        .trim_end_matches('+')
        .parse()
        .context("parsing the server's minor version")?;
    if info.major != "1" || minor < MIN_KUBERNETES_MINOR {
        bail!(
            "server reports {}; need v1.{MIN_KUBERNETES_MINOR} or newer",
            info.git_version
        );
    }
    Ok(info.git_version)
}

async fn cel_rejects(client: &kube::Client, namespace: &str) -> Result<String> {
    let api: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        namespace,
        &resource(CP_GROUP, "v1alpha1", CP_KIND),
    );
    let bad: DynamicObject = serde_json::from_value(json!({
        "apiVersion": format!("{CP_GROUP}/v1alpha1"), "kind": CP_KIND,
        "metadata": { "name": "bed-check-bad-version" },
        "spec": { "version": "1.33" }
    }))?;
    match api.create(&PostParams::default(), &bad).await {
        Ok(_) => {
            bail!("an object with spec.version \"1.33\" was admitted; CEL rules are not enforced")
        }
        Err(kube::Error::Api(status)) if status.message.contains("must start with \"v\"") => {
            Ok(status.message.to_string())
        }
        Err(e) => bail!("unexpected error: {e}"),
    }
}

async fn create_cluster(client: &kube::Client, namespace: &str) -> Result<()> {
    let cp_api: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        namespace,
        &resource(CP_GROUP, "v1alpha1", CP_KIND),
    );
    let cp: DynamicObject = serde_json::from_value(json!({
        "apiVersion": format!("{CP_GROUP}/v1alpha1"), "kind": CP_KIND,
        "metadata": { "name": "bed-check" },
        "spec": { "version": "v1.33.0" }
    }))?;
    cp_api
        .create(&PostParams::default(), &cp)
        .await
        .context("creating the control plane object")?;
    let cluster_api: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        namespace,
        &resource("cluster.x-k8s.io", "v1beta2", "Cluster"),
    );
    // Only a controlPlaneRef and no endpoint: the managed shape (the contract's C21/C52).
    let cluster: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
        "metadata": { "name": "bed-check" },
        "spec": { "controlPlaneRef": { "apiGroup": CP_GROUP, "kind": CP_KIND, "name": "bed-check" } }
    }))?;
    cluster_api
        .create(&PostParams::default(), &cluster)
        .await
        .context("creating the Cluster")?;
    Ok(())
}

async fn core_adopts(client: &kube::Client, namespace: &str, timeout: Duration) -> Result<String> {
    let cluster_api: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        namespace,
        &resource("cluster.x-k8s.io", "v1beta2", "Cluster"),
    );
    let cp_api: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        namespace,
        &resource(CP_GROUP, "v1alpha1", CP_KIND),
    );
    wait_until(
        "the Cluster's finalizer",
        timeout,
        Duration::from_millis(250),
        || {
            let api = cluster_api.clone();
            async move {
                let c = api.get("bed-check").await?;
                Ok(c.metadata
                    .finalizers
                    .unwrap_or_default()
                    .iter()
                    .any(|f| f == "cluster.cluster.x-k8s.io"))
            }
        },
    )
    .await?;
    wait_until(
        "the control plane's Cluster owner reference and label",
        timeout,
        Duration::from_millis(250),
        || {
            let api = cp_api.clone();
            async move {
                let cp = api.get("bed-check").await?;
                let owned = cp
                    .metadata
                    .owner_references
                    .unwrap_or_default()
                    .iter()
                    .any(|o| o.kind == "Cluster" && o.name == "bed-check");
                let labelled = cp
                    .metadata
                    .labels
                    .unwrap_or_default()
                    .get("cluster.x-k8s.io/cluster-name")
                    .map(String::as_str)
                    == Some("bed-check");
                Ok(owned && labelled)
            }
        },
    )
    .await?;
    Ok(
        "finalizer cluster.cluster.x-k8s.io; owner Cluster/bed-check; label cluster-name=bed-check"
            .into(),
    )
}

async fn core_copies_endpoint(
    client: &kube::Client,
    namespace: &str,
    timeout: Duration,
) -> Result<String> {
    let cp_api: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        namespace,
        &resource(CP_GROUP, "v1alpha1", CP_KIND),
    );
    let params = PatchParams::default();
    cp_api
        .patch("bed-check", &params, &Patch::Merge(json!({ "spec": { "controlPlaneEndpoint": { "host": "bed-check.example.test", "port": 443 } } })))
        .await?;
    cp_api
        .patch_status(
            "bed-check",
            &params,
            &Patch::Merge(json!({ "status": {
                "initialization": { "controlPlaneInitialized": true },
                "initialized": true, "ready": true, "externalManagedControlPlane": true
            } })),
        )
        .await?;
    let cluster_api: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        namespace,
        &resource("cluster.x-k8s.io", "v1beta2", "Cluster"),
    );
    wait_until(
        "the Cluster's endpoint and controlPlaneInitialized",
        timeout,
        Duration::from_millis(250),
        || {
            let api = cluster_api.clone();
            async move {
                let c = api.get("bed-check").await?;
                let endpoint = &c.data["spec"]["controlPlaneEndpoint"];
                let initialized = c.data["status"]["initialization"]["controlPlaneInitialized"]
                    == Value::Bool(true);
                Ok(endpoint["host"] == "bed-check.example.test"
                    && endpoint["port"] == 443
                    && initialized)
            }
        },
    )
    .await?;
    Ok("Cluster spec.controlPlaneEndpoint = bed-check.example.test:443; status.initialization.controlPlaneInitialized = true".into())
}

fn machine_pool(name: &str, bootstrap: Value) -> Result<DynamicObject> {
    Ok(serde_json::from_value(json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachinePool",
        "metadata": { "name": name },
        "spec": {
            "clusterName": "bed-check",
            "replicas": 1,
            "template": { "spec": {
                "clusterName": "bed-check",
                "bootstrap": bootstrap,
                "infrastructureRef": { "apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "BedCheckMachinePool", "name": name }
            }}
        }
    }))?)
}

async fn webhooks_work(client: &kube::Client, namespace: &str) -> Result<String> {
    let api: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        namespace,
        &resource("cluster.x-k8s.io", "v1beta2", "MachinePool"),
    );
    let created = api
        .create(
            &PostParams::default(),
            &machine_pool("bed-check-managed", json!({ "dataSecretName": "" }))?,
        )
        .await
        .context("creating a MachinePool with dataSecretName \"\"")?;
    let label = created
        .metadata
        .labels
        .unwrap_or_default()
        .get("cluster.x-k8s.io/cluster-name")
        .cloned();
    if label.as_deref() != Some("bed-check") {
        bail!("the mutating webhook did not set the cluster-name label (got {label:?})");
    }
    let rejected = match api
        .create(
            &PostParams::default(),
            &machine_pool("bed-check-no-bootstrap", json!({}))?,
        )
        .await
    {
        Ok(_) => bail!(
            "a MachinePool without bootstrap was admitted; the validating webhook is not called"
        ),
        Err(kube::Error::Api(status)) if status.message.contains("dataSecretName") => {
            status.message.to_string()
        }
        Err(e) => bail!("unexpected error: {e}"),
    };
    let _ = api
        .delete("bed-check-managed", &DeleteParams::default())
        .await;
    Ok(format!(
        "label defaulted to bed-check; rejection: {rejected}"
    ))
}

async fn garbage_collected(
    client: &kube::Client,
    namespace: &str,
    timeout: Duration,
) -> Result<String> {
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    let secrets: Api<Secret> = Api::namespaced(client.clone(), namespace);
    let owner = cms
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({ "metadata": { "name": "bed-check-owner" } }))?,
        )
        .await?;
    let uid = owner.metadata.uid.context("owner without uid")?;
    secrets
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({ "metadata": {
                "name": "bed-check-owned",
                "ownerReferences": [{ "apiVersion": "v1", "kind": "ConfigMap", "name": "bed-check-owner", "uid": uid }]
            }}))?,
        )
        .await?;
    cms.delete("bed-check-owner", &DeleteParams::default())
        .await?;
    wait_until(
        "the owned Secret to be garbage-collected",
        timeout,
        Duration::from_millis(250),
        || {
            let secrets = secrets.clone();
            async move { Ok(secrets.get_opt("bed-check-owned").await?.is_none()) }
        },
    )
    .await?;
    Ok("Secret bed-check-owned deleted after its owner ConfigMap".into())
}
