//! Untyped access to the objects a run touches: core's kinds, the provider's kinds (from its
//! CRDs), Secrets; and a recorder that keeps every version of them the API server shows.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result, bail};
use futures::StreamExt;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams,
};
use kube::runtime::{WatchStreamExt, watcher};
use serde_json::{Value, json};

use crate::release::Release;

/// The field manager of everything the suite writes.
pub const FIELD_MANAGER: &str = "capi-conformance";
/// Core's cluster-name label.
pub const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";
/// Core's watch-filter label.
pub const WATCH_FILTER_LABEL: &str = "cluster.x-k8s.io/watch-filter";

/// Kinds by name, with how to reach them.
#[derive(Debug, Clone, Default)]
pub struct Kinds {
    by_kind: BTreeMap<String, ApiResource>,
}

impl Kinds {
    /// Core's kinds plus every kind of the release's CRDs (at its storage version).
    pub fn new(release: &Release) -> Self {
        let mut by_kind = BTreeMap::new();
        for (kind, plural) in [
            ("Cluster", "clusters"),
            ("MachinePool", "machinepools"),
            ("ClusterClass", "clusterclasses"),
            ("Machine", "machines"),
        ] {
            by_kind.insert(
                kind.to_string(),
                ApiResource::from_gvk_with_plural(
                    &GroupVersionKind::gvk("cluster.x-k8s.io", "v1beta2", kind),
                    plural,
                ),
            );
        }
        by_kind.insert(
            "Secret".to_string(),
            ApiResource::from_gvk_with_plural(
                &GroupVersionKind::gvk("", "v1", "Secret"),
                "secrets",
            ),
        );
        for crd in &release.crds {
            let spec = &crd["spec"];
            let (Some(kind), Some(group), Some(plural)) = (
                spec["names"]["kind"].as_str(),
                spec["group"].as_str(),
                spec["names"]["plural"].as_str(),
            ) else {
                continue;
            };
            let versions = spec["versions"].as_array().cloned().unwrap_or_default();
            let version = versions
                .iter()
                .find(|v| v["storage"] == true)
                .or_else(|| versions.first())
                .and_then(|v| v["name"].as_str());
            if let Some(version) = version {
                by_kind.insert(
                    kind.to_string(),
                    ApiResource::from_gvk_with_plural(
                        &GroupVersionKind::gvk(group, version, kind),
                        plural,
                    ),
                );
            }
        }
        Self { by_kind }
    }

    /// The resource of `kind`.
    pub fn get(&self, kind: &str) -> Result<&ApiResource> {
        self.by_kind
            .get(kind)
            .with_context(|| format!("the release has no CRD for kind {kind}"))
    }

    /// A namespaced API of `kind`.
    pub fn api(&self, client: &kube::Client, kind: &str, ns: &str) -> Result<Api<DynamicObject>> {
        Ok(Api::namespaced_with(client.clone(), ns, self.get(kind)?))
    }
}

/// An object as JSON (`metadata`, `spec`, `status`, …).
pub fn value(obj: &DynamicObject) -> Value {
    serde_json::to_value(obj).unwrap_or(Value::Null)
}

/// Runs `call` again (up to five times, 300 ms apart) while it fails in transport — a
/// connection closed under load — never on an answer from the API server.
async fn retrying<T, F, Fut>(mut call: F) -> std::result::Result<T, kube::Error>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = std::result::Result<T, kube::Error>>,
{
    let mut attempt = 0;
    loop {
        match call().await {
            Err(e) if !matches!(e, kube::Error::Api(_)) && attempt < 4 => {
                attempt += 1;
                tracing::debug!(error = %e, attempt, "retrying a request that failed in transport");
                tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            }
            other => return other,
        }
    }
}

/// The static credentials a kubeconfig's users hold (a token, a token file, a client key, a
/// password), as `user <name> has <field>`; empty when every user authenticates through a
/// plugin. What C34 and the fault run's security check judge a user kubeconfig by.
pub fn static_credentials(config: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for u in config["users"].as_array().into_iter().flatten() {
        for field in [
            "token",
            "tokenFile",
            "client-key-data",
            "client-key",
            "password",
        ] {
            if !u["user"][field].is_null() {
                out.push(format!("user {} has {field}", u["name"]));
            }
        }
    }
    out
}

/// Reads one object; `None` when it does not exist.
pub async fn get(
    kinds: &Kinds,
    client: &kube::Client,
    kind: &str,
    ns: &str,
    name: &str,
) -> Result<Option<Value>> {
    let api = kinds.api(client, kind, ns)?;
    Ok(retrying(|| api.get_opt(name)).await?.as_ref().map(value))
}

/// Server-side applies `doc` (its `kind` must be known) in `ns`.
pub async fn apply(kinds: &Kinds, client: &kube::Client, ns: &str, doc: &Value) -> Result<Value> {
    let kind = doc["kind"].as_str().context("a document without kind")?;
    let name = doc["metadata"]["name"]
        .as_str()
        .context("a document without a name")?;
    let ar = kinds.get(kind)?;
    let mut body = doc.clone();
    body["apiVersion"] = json!(ar.api_version);
    body["metadata"]["namespace"] = json!(ns);
    let api = kinds.api(client, kind, ns)?;
    let params = PatchParams::apply(FIELD_MANAGER).force();
    let patch = Patch::Apply(&body);
    let obj = retrying(|| api.patch(name, &params, &patch))
        .await
        .with_context(|| format!("applying {kind}/{name}"))?;
    Ok(value(&obj))
}

/// JSON merge patch of one object (status excluded).
pub async fn merge(
    kinds: &Kinds,
    client: &kube::Client,
    kind: &str,
    ns: &str,
    name: &str,
    patch: &Value,
) -> Result<()> {
    let api = kinds.api(client, kind, ns)?;
    let params = PatchParams::default();
    let patch = Patch::Merge(patch);
    retrying(|| api.patch(name, &params, &patch))
        .await
        .with_context(|| format!("patching {kind}/{name}"))?;
    Ok(())
}

/// A server-side dry-run create; `Ok(stored)` or `Err(message)` of the rejection.
pub async fn dry_run_create(
    kinds: &Kinds,
    client: &kube::Client,
    ns: &str,
    doc: &Value,
) -> Result<std::result::Result<Value, String>> {
    let kind = doc["kind"].as_str().context("a document without kind")?;
    let ar = kinds.get(kind)?;
    let mut body = doc.clone();
    body["apiVersion"] = json!(ar.api_version);
    body["metadata"]["namespace"] = json!(ns);
    let obj: DynamicObject = serde_json::from_value(body)?;
    let api = kinds.api(client, kind, ns)?;
    let params = PostParams {
        dry_run: true,
        field_manager: Some(FIELD_MANAGER.into()),
    };
    match api.create(&params, &obj).await {
        Ok(o) => Ok(Ok(value(&o))),
        Err(kube::Error::Api(e)) => Ok(Err(e.message)),
        Err(e) => Err(e.into()),
    }
}

/// Deletes one object (absent is fine).
pub async fn delete(
    kinds: &Kinds,
    client: &kube::Client,
    kind: &str,
    ns: &str,
    name: &str,
) -> Result<()> {
    let api = kinds.api(client, kind, ns)?;
    let params = DeleteParams::default();
    match retrying(|| api.delete(name, &params)).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(e)) if e.code == 404 => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Removes every finalizer of an object (cleanup after a broken provider).
pub async fn strip_finalizers(
    kinds: &Kinds,
    client: &kube::Client,
    kind: &str,
    ns: &str,
    name: &str,
) {
    let _ = merge(
        kinds,
        client,
        kind,
        ns,
        name,
        &json!({"metadata": {"finalizers": null}}),
    )
    .await;
}

/// Creates a namespace (existing is fine).
pub async fn ensure_namespace(client: &kube::Client, ns: &str) -> Result<()> {
    let api: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    let body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
    api.patch(ns, &PatchParams::apply(FIELD_MANAGER), &Patch::Apply(&body))
        .await
        .with_context(|| format!("creating namespace {ns}"))?;
    Ok(())
}

/// The condition `type` of an object, if set.
pub fn condition<'a>(obj: &'a Value, type_: &str) -> Option<&'a Value> {
    obj["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
}

/// The status (`True`, `False`, `Unknown`) of condition `type`, or `absent`.
pub fn condition_status(obj: &Value, type_: &str) -> String {
    condition(obj, type_)
        .and_then(|c| c["status"].as_str())
        .unwrap_or("absent")
        .to_string()
}

/// `metadata.resourceVersion` as a number (etcd revisions; used only to order events).
pub fn rv(obj: &Value) -> u64 {
    obj["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// Whether an object has a non-empty status (ignoring an empty object).
pub fn has_status(obj: &Value) -> bool {
    obj["status"].as_object().is_some_and(|s| !s.is_empty())
}

/// The owner reference of kind `kind`, if any.
pub fn owner<'a>(obj: &'a Value, kind: &str) -> Option<&'a Value> {
    obj["metadata"]["ownerReferences"]
        .as_array()?
        .iter()
        .find(|r| r["kind"] == kind)
}

/// The object's finalizers.
pub fn finalizers(obj: &Value) -> Vec<String> {
    obj["metadata"]["finalizers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f.as_str().map(str::to_string))
        .collect()
}

/// One version of one object, as a watch delivered it.
#[derive(Debug, Clone)]
pub struct Seen {
    /// Kind.
    pub kind: String,
    /// Name.
    pub name: String,
    /// The object (for a deletion, its last state).
    pub obj: Value,
    /// Whether this is the deletion.
    pub deleted: bool,
    /// When the suite saw it.
    pub at: std::time::Instant,
}

/// The versions a [`Recorder`] had seen at one moment, in the order seen: what is judged, with
/// no watch behind it.
#[derive(Debug, Clone, Default)]
pub struct Recorded(pub Vec<Seen>);

impl Recorded {
    /// Every version of `kind`/`name`, in the order seen.
    pub fn history(&self, kind: &str, name: &str) -> Vec<&Seen> {
        self.0
            .iter()
            .filter(|s| s.kind == kind && s.name == name)
            .collect()
    }

    /// Every version of every object of `kind`.
    pub fn all_of(&self, kind: &str) -> Vec<&Seen> {
        self.0.iter().filter(|s| s.kind == kind).collect()
    }
}

/// Watches some kinds in one namespace and keeps every version seen.
#[derive(Debug, Clone, Default)]
pub struct Recorder {
    seen: Arc<Mutex<Vec<Seen>>>,
    tasks: Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>>,
}

impl Recorder {
    /// Starts watching `kinds` in `ns`; returns once every watch has listed.
    pub async fn start(
        kinds: &Kinds,
        client: &kube::Client,
        ns: &str,
        watched: &[&str],
    ) -> Result<Self> {
        let recorder = Self::default();
        let mut ready = Vec::new();
        for kind in watched {
            let api = kinds.api(client, kind, ns)?;
            let seen = recorder.seen.clone();
            let kind = kind.to_string();
            let (tx, rx) = tokio::sync::oneshot::channel::<()>();
            ready.push(rx);
            let task = tokio::spawn(async move {
                let mut tx = Some(tx);
                let mut stream = watcher(api, watcher::Config::default())
                    .default_backoff()
                    .boxed();
                while let Some(event) = stream.next().await {
                    let (obj, deleted) = match event {
                        Ok(watcher::Event::Apply(o) | watcher::Event::InitApply(o)) => (o, false),
                        Ok(watcher::Event::Delete(o)) => (o, true),
                        Ok(watcher::Event::InitDone) => {
                            if let Some(tx) = tx.take() {
                                let _ = tx.send(());
                            }
                            continue;
                        }
                        Ok(watcher::Event::Init) | Err(_) => continue,
                    };
                    let v = value(&obj);
                    let entry = Seen {
                        kind: kind.clone(),
                        name: obj.metadata.name.clone().unwrap_or_default(),
                        obj: v,
                        deleted,
                        at: std::time::Instant::now(),
                    };
                    seen.lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .push(entry);
                }
            });
            recorder
                .tasks
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(task);
        }
        for rx in ready {
            if tokio::time::timeout(std::time::Duration::from_secs(30), rx)
                .await
                .is_err()
            {
                bail!("a watch in {ns} did not list within 30s");
            }
        }
        Ok(recorder)
    }

    /// Every version of `kind`/`name`, in the order seen.
    pub fn history(&self, kind: &str, name: &str) -> Vec<Seen> {
        self.seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .filter(|s| s.kind == kind && s.name == name)
            .cloned()
            .collect()
    }

    /// Every version of every object of `kind`.
    pub fn all_of(&self, kind: &str) -> Vec<Seen> {
        self.seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .filter(|s| s.kind == kind)
            .cloned()
            .collect()
    }

    /// Every version seen so far, kept apart from the watches (which go on recording).
    pub fn recorded(&self) -> Recorded {
        Recorded(
            self.seen
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone(),
        )
    }

    /// Stops every watch.
    pub fn stop(&self) {
        for t in self
            .tasks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .drain(..)
        {
            t.abort();
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if Arc::strong_count(&self.tasks) == 1 {
            self.stop();
        }
    }
}
