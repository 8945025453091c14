//! The few management-cluster calls the command makes, on untyped objects: the peers' kinds
//! are not ours to type, and the command must work on whatever version of them is served.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use kube::discovery::{Discovery, Scope, verbs};
use serde_json::Value;

/// The API group of Cluster API core.
pub const CORE_GROUP: &str = "cluster.x-k8s.io";

/// The management cluster, with the kinds it serves resolved once.
#[derive(Clone)]
pub struct Cluster {
    client: kube::Client,
    namespace: String,
    kinds: BTreeMap<(String, String), ApiResource>,
}

impl Cluster {
    /// Connects with `client`, in `namespace`, and learns the kinds of the groups the command
    /// touches (Cluster API core, infrastructure, control plane).
    ///
    /// # Errors
    /// Discovery failed.
    pub async fn connect(client: kube::Client, namespace: &str) -> Result<Self> {
        let discovery = Discovery::new(client.clone())
            .filter(&[
                CORE_GROUP,
                "infrastructure.cluster.x-k8s.io",
                "controlplane.cluster.x-k8s.io",
            ])
            .run()
            .await
            .context("discovering the Cluster API kinds the management cluster serves")?;
        let mut kinds = BTreeMap::new();
        for group in discovery.groups() {
            // Every kind at its most stable version: a group serves the peer's kinds and ours
            // at different versions.
            for (resource, _) in group.resources_by_stability() {
                kinds.insert((resource.group.clone(), resource.kind.clone()), resource);
            }
        }
        Ok(Self {
            client,
            namespace: namespace.to_string(),
            kinds,
        })
    }

    /// The namespace the command works in.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The API of `kind` in `group`.
    ///
    /// # Errors
    /// The management cluster does not serve it.
    pub fn api(&self, group: &str, kind: &str) -> Result<Api<DynamicObject>> {
        let resource = self
            .kinds
            .get(&(group.to_string(), kind.to_string()))
            .with_context(|| {
                format!(
                    "the management cluster does not serve {kind}.{group} (are its CRDs installed?)"
                )
            })?;
        Ok(Api::namespaced_with(
            self.client.clone(),
            &self.namespace,
            resource,
        ))
    }

    /// Whether `kind` in `group` is served.
    pub fn serves(&self, group: &str, kind: &str) -> bool {
        self.kinds
            .contains_key(&(group.to_string(), kind.to_string()))
    }

    /// The Secrets of the namespace.
    pub fn secrets(&self) -> Api<DynamicObject> {
        let resource = ApiResource::from_gvk(&GroupVersionKind::gvk("", "v1", "Secret"));
        Api::namespaced_with(self.client.clone(), &self.namespace, &resource)
    }

    /// `kind`/`name` in `group`, or `None` when it does not exist.
    ///
    /// # Errors
    /// The API server failed, or the kind is not served.
    pub async fn get(&self, group: &str, kind: &str, name: &str) -> Result<Option<Value>> {
        let api = self.api(group, kind)?;
        let found = api
            .get_opt(name)
            .await
            .with_context(|| format!("reading {kind} {name}"))?;
        Ok(found.map(|o| to_value(&o)))
    }

    /// The object a Cluster API reference (`{apiGroup, kind, name}`) names.
    ///
    /// # Errors
    /// As [`Cluster::get`]; a reference without a kind or name.
    pub async fn get_ref(&self, reference: &Value) -> Result<Option<Value>> {
        let (group, kind, name) = parts(reference)?;
        self.get(&group, &kind, &name).await
    }

    /// Applies a JSON merge patch to `kind`/`name`.
    ///
    /// # Errors
    /// The API server refused it.
    pub async fn merge(&self, group: &str, kind: &str, name: &str, patch: &Value) -> Result<()> {
        self.api(group, kind)?
            .patch(name, &PatchParams::default(), &Patch::Merge(patch))
            .await
            .with_context(|| format!("patching {kind} {name} with {patch}"))?;
        Ok(())
    }

    /// Creates `obj`; an object of that name already there is left as it is (a resumed run).
    /// Returns whether it was created. With `dry_run`, the API server checks the object
    /// (schema, CEL rules, admission) and keeps nothing.
    ///
    /// # Errors
    /// The API server refused it for another reason (its message names the field).
    pub async fn create(&self, obj: &Value, dry_run: bool) -> Result<bool> {
        let (group, kind, name) = identity(obj)?;
        let typed: DynamicObject = serde_json::from_value(obj.clone())?;
        let params = PostParams {
            dry_run,
            ..PostParams::default()
        };
        match self.api(&group, &kind)?.create(&params, &typed).await {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(e)) if e.code == 409 => Ok(false),
            Err(kube::Error::Api(e)) => bail!("creating {kind} {name}: {}", e.message),
            Err(e) => Err(e).with_context(|| format!("creating {kind} {name}")),
        }
    }

    /// Deletes `kind`/`name` if it exists.
    ///
    /// # Errors
    /// The API server failed.
    pub async fn delete(&self, group: &str, kind: &str, name: &str) -> Result<()> {
        match self
            .api(group, kind)?
            .delete(name, &DeleteParams::default())
            .await
        {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(e)) if e.code == 404 => Ok(()),
            Err(e) => Err(e).with_context(|| format!("deleting {kind} {name}")),
        }
    }

    /// Every object in the namespace, of any kind in an API group whose name ends with
    /// `group_suffix`, whose controller is one of `owners` (by uid); each with its kind.
    ///
    /// # Errors
    /// Discovery or a list failed.
    pub async fn controlled_by(
        &self,
        group_suffix: &str,
        owners: &[String],
    ) -> Result<Vec<(ApiResource, Value)>> {
        let groups = self
            .client
            .list_api_groups()
            .await
            .context("listing the API groups")?;
        let names: Vec<&str> = groups
            .groups
            .iter()
            .map(|g| g.name.as_str())
            .filter(|n| n.ends_with(group_suffix))
            .collect();
        if names.is_empty() {
            return Ok(Vec::new());
        }
        let discovery = Discovery::new(self.client.clone())
            .filter(&names)
            .run()
            .await
            .with_context(|| format!("discovering the kinds of the *{group_suffix} groups"))?;
        let mut found = Vec::new();
        for group in discovery.groups() {
            for (resource, caps) in group.recommended_resources() {
                if caps.scope != Scope::Namespaced || !caps.supports_operation(verbs::LIST) {
                    continue;
                }
                let api: Api<DynamicObject> =
                    Api::namespaced_with(self.client.clone(), &self.namespace, &resource);
                let list = api
                    .list(&ListParams::default())
                    .await
                    .with_context(|| format!("listing {}", resource.kind))?;
                for obj in &list.items {
                    let controlled = obj
                        .metadata
                        .owner_references
                        .iter()
                        .flatten()
                        .any(|o| o.controller == Some(true) && owners.contains(&o.uid));
                    if controlled {
                        found.push((resource.clone(), to_value(obj)));
                    }
                }
            }
        }
        Ok(found)
    }

    /// Applies a JSON merge patch to `name` of `resource`.
    ///
    /// # Errors
    /// The API server refused it.
    pub async fn merge_resource(
        &self,
        resource: &ApiResource,
        name: &str,
        patch: &Value,
    ) -> Result<()> {
        let api: Api<DynamicObject> =
            Api::namespaced_with(self.client.clone(), &self.namespace, resource);
        api.patch(name, &PatchParams::default(), &Patch::Merge(patch))
            .await
            .with_context(|| format!("patching {} {name} with {patch}", resource.kind))?;
        Ok(())
    }

    /// Every object of `kind` in `group` in the namespace.
    ///
    /// # Errors
    /// The API server failed.
    pub async fn list(&self, group: &str, kind: &str) -> Result<Vec<Value>> {
        let list = self
            .api(group, kind)?
            .list(&ListParams::default())
            .await
            .with_context(|| format!("listing {kind}"))?;
        Ok(list.items.iter().map(to_value).collect())
    }
}

/// An object as JSON.
fn to_value(obj: &DynamicObject) -> Value {
    serde_json::to_value(obj).unwrap_or_default()
}

/// The group, kind and name of a Cluster API reference.
///
/// # Errors
/// It lacks a kind or a name.
pub fn parts(reference: &Value) -> Result<(String, String, String)> {
    let group = reference["apiGroup"]
        .as_str()
        .map(str::to_string)
        .or_else(|| {
            reference["apiVersion"]
                .as_str()
                .map(|v| v.rsplit_once('/').map_or("", |(g, _)| g).to_string())
        })
        .unwrap_or_default();
    let (Some(kind), Some(name)) = (reference["kind"].as_str(), reference["name"].as_str()) else {
        bail!("the reference {reference} names no kind or no name");
    };
    Ok((group, kind.to_string(), name.to_string()))
}

/// The group, kind and name of an object.
///
/// # Errors
/// It lacks an apiVersion, a kind or a name.
pub fn identity(obj: &Value) -> Result<(String, String, String)> {
    let (Some(version), Some(kind), Some(name)) = (
        obj["apiVersion"].as_str(),
        obj["kind"].as_str(),
        obj["metadata"]["name"].as_str(),
    ) else {
        bail!("an object without apiVersion, kind or name: {obj}");
    };
    let group = version.rsplit_once('/').map_or("", |(g, _)| g);
    Ok((group.to_string(), kind.to_string(), name.to_string()))
}

/// The Cluster API reference (`{apiGroup, kind, name}`) to `obj`.
pub fn reference_to(obj: &Value) -> Value {
    let (group, kind, name) = identity(obj).unwrap_or_default();
    serde_json::json!({"apiGroup": group, "kind": kind, "name": name})
}

/// Calls `check` every second until it answers, or fails after `limit` saying what `what` was.
///
/// # Errors
/// `check` failed, or `limit` passed.
pub async fn wait_for<T, F, Fut>(what: &str, limit: Duration, mut check: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<Option<T>>>,
{
    let start = Instant::now();
    loop {
        if let Some(v) = check().await? {
            return Ok(v);
        }
        if start.elapsed() > limit {
            bail!("{what}: not within {limit:?} (run the command again to go on waiting)");
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn references_and_objects_give_their_group_kind_and_name() {
        let r = json!({"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "K", "name": "n"});
        assert_eq!(
            parts(&r).unwrap(),
            (
                "controlplane.cluster.x-k8s.io".into(),
                "K".into(),
                "n".into()
            )
        );
        let legacy = json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "K", "name": "n"});
        assert_eq!(parts(&legacy).unwrap().0, "infrastructure.cluster.x-k8s.io");
        assert!(parts(&json!({"kind": "K"})).is_err());
        let obj = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}});
        assert_eq!(
            identity(&obj).unwrap(),
            ("".into(), "Secret".into(), "s".into())
        );
        assert_eq!(
            reference_to(&json!({"apiVersion": "g/v1", "kind": "K", "metadata": {"name": "n"}})),
            json!({"apiGroup": "g", "kind": "K", "name": "n"})
        );
    }
}
