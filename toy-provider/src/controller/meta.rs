//! Reading and writing the parts of objects the contract cares about: owner references, labels,
//! finalizers, conditions and status.

use anyhow::Result;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use serde_json::{Map, Value, json};

/// The toy's finalizer.
pub const FINALIZER: &str = "toy.cluster.x-k8s.io/finalizer";
/// Field manager of every write.
pub const FIELD_MANAGER: &str = "toy-provider";
/// Label core puts on objects of a cluster.
pub const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";
/// Label selecting objects for a `--watch-filter`.
pub const WATCH_FILTER_LABEL: &str = "cluster.x-k8s.io/watch-filter";
/// Pause annotation.
pub const PAUSED_ANNOTATION: &str = "cluster.x-k8s.io/paused";
/// Externally managed InfraCluster annotation.
pub const MANAGED_BY_ANNOTATION: &str = "cluster.x-k8s.io/managed-by";
/// MachinePool annotation: the cloud's autoscaler owns the replica count.
pub const REPLICAS_MANAGED_BY_ANNOTATION: &str = "cluster.x-k8s.io/replicas-managed-by";
/// clusterctl marks source objects it is about to delete during a move.
pub const DELETE_FOR_MOVE_ANNOTATION: &str = "clusterctl.cluster.x-k8s.io/delete-for-move";

/// Merge-patch parameters with the toy's field manager.
pub fn params() -> PatchParams {
    PatchParams {
        field_manager: Some(FIELD_MANAGER.into()),
        ..PatchParams::default()
    }
}

/// The object's namespace.
pub fn namespace(obj: &DynamicObject) -> String {
    obj.metadata.namespace.clone().unwrap_or_default()
}

/// The object's name.
pub fn name(obj: &DynamicObject) -> String {
    obj.metadata.name.clone().unwrap_or_default()
}

/// The object's generation.
pub fn generation(obj: &DynamicObject) -> i64 {
    obj.metadata.generation.unwrap_or_default()
}

/// A label value.
pub fn label<'a>(obj: &'a DynamicObject, key: &str) -> Option<&'a str> {
    obj.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(key))
        .map(String::as_str)
}

/// Whether the annotation is present (any value).
pub fn has_annotation(obj: &DynamicObject, key: &str) -> bool {
    obj.metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(key))
}

/// Whether the object is being deleted.
pub fn deleting(obj: &DynamicObject) -> bool {
    obj.metadata.deletion_timestamp.is_some()
}

/// Whether the toy's finalizer is on the object.
pub fn has_finalizer(obj: &DynamicObject) -> bool {
    obj.metadata
        .finalizers
        .as_ref()
        .is_some_and(|f| f.iter().any(|x| x == FINALIZER))
}

/// The name of the owner of `kind` from Cluster API core's group (`cluster.x-k8s.io`), if any;
/// with `controller_only`, only a controller reference counts.
pub fn core_owner(obj: &DynamicObject, kind: &str, controller_only: bool) -> Option<String> {
    obj.metadata
        .owner_references
        .as_ref()?
        .iter()
        .find(|o| {
            o.kind == kind
                && o.api_version.starts_with("cluster.x-k8s.io/")
                && (!controller_only || o.controller == Some(true))
        })
        .map(|o| o.name.clone())
}

/// A JSON pointer into the object's body (`/spec/...`, `/status/...`).
pub fn at<'a>(obj: &'a DynamicObject, pointer: &str) -> Option<&'a Value> {
    obj.data.pointer(pointer)
}

/// A string field, empty when absent.
pub fn str_at<'a>(obj: &'a DynamicObject, pointer: &str) -> &'a str {
    at(obj, pointer).and_then(Value::as_str).unwrap_or_default()
}

/// A boolean field, false when absent.
pub fn bool_at(obj: &DynamicObject, pointer: &str) -> bool {
    at(obj, pointer)
        .and_then(Value::as_bool)
        .unwrap_or_default()
}

/// Whether the Cluster or the object says pause.
pub fn paused(obj: &DynamicObject, cluster: Option<&DynamicObject>) -> bool {
    has_annotation(obj, PAUSED_ANNOTATION) || cluster.is_some_and(|c| bool_at(c, "/spec/paused"))
}

/// Adds the toy's finalizer, guarded by the object's resourceVersion.
pub async fn add_finalizer(api: &Api<DynamicObject>, obj: &DynamicObject) -> Result<()> {
    let mut finalizers = obj.metadata.finalizers.clone().unwrap_or_default();
    if finalizers.iter().any(|f| f == FINALIZER) {
        return Ok(());
    }
    finalizers.push(FINALIZER.to_string());
    patch_finalizers(api, obj, finalizers).await
}

/// Removes the toy's finalizer, guarded by the object's resourceVersion.
pub async fn remove_finalizer(api: &Api<DynamicObject>, obj: &DynamicObject) -> Result<()> {
    let finalizers: Vec<String> = obj
        .metadata
        .finalizers
        .clone()
        .unwrap_or_default()
        .into_iter()
        .filter(|f| f != FINALIZER)
        .collect();
    patch_finalizers(api, obj, finalizers).await
}

async fn patch_finalizers(
    api: &Api<DynamicObject>,
    obj: &DynamicObject,
    finalizers: Vec<String>,
) -> Result<()> {
    let patch = json!({"metadata": {
        "finalizers": finalizers,
        "resourceVersion": obj.metadata.resource_version,
    }});
    api.patch(&name(obj), &params(), &Patch::Merge(&patch))
        .await?;
    Ok(())
}

/// One condition to set.
#[derive(Debug, Clone)]
pub struct Cond {
    /// Type.
    pub type_: &'static str,
    /// True or False.
    pub ok: bool,
    /// CamelCase reason.
    pub reason: String,
    /// Human message.
    pub message: String,
}

impl Cond {
    /// A condition.
    pub fn new(type_: &'static str, ok: bool, reason: &str, message: impl Into<String>) -> Self {
        Self {
            type_,
            ok,
            reason: reason.to_string(),
            message: message.into(),
        }
    }
}

/// The current time as Kubernetes writes it (RFC 3339, seconds).
pub fn now() -> String {
    jiff::Timestamp::now()
        .round(jiff::Unit::Second)
        .unwrap_or_else(|_| jiff::Timestamp::now())
        .to_string()
}

/// The conditions list after setting `set` on `existing`: other types are kept;
/// `lastTransitionTime` moves only when the status flips.
pub fn conditions(existing: Option<&Value>, set: &[Cond], generation: i64, now: &str) -> Value {
    let mut out: Vec<Value> = existing
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for c in set {
        let status = if c.ok { "True" } else { "False" };
        let previous = out.iter().position(|x| x["type"] == c.type_);
        let transition = previous
            .and_then(|i| {
                (out[i]["status"] == status)
                    .then(|| out[i]["lastTransitionTime"].as_str().map(str::to_string))
                    .flatten()
            })
            .unwrap_or_else(|| now.to_string());
        let value = json!({
            "type": c.type_,
            "status": status,
            "reason": c.reason,
            "message": c.message,
            "lastTransitionTime": transition,
            "observedGeneration": generation,
        });
        match previous {
            Some(i) => out[i] = value,
            None => out.push(value),
        }
    }
    Value::Array(out)
}

/// Merge-patches `status` with `desired` unless every key already holds that value.
/// Returns whether it wrote.
pub async fn patch_status(
    api: &Api<DynamicObject>,
    obj: &DynamicObject,
    desired: Map<String, Value>,
) -> Result<bool> {
    let current = obj.data.get("status");
    let same = desired
        .iter()
        .all(|(k, v)| current.and_then(|s| s.get(k)) == Some(v));
    if same {
        return Ok(false);
    }
    api.patch_status(
        &name(obj),
        &params(),
        &Patch::Merge(&json!({"status": desired})),
    )
    .await?;
    Ok(true)
}

/// Merge-patches the object's body; returns the updated object.
pub async fn patch(
    api: &Api<DynamicObject>,
    obj: &DynamicObject,
    body: &Value,
) -> Result<DynamicObject> {
    Ok(api
        .patch(&name(obj), &params(), &Patch::Merge(body))
        .await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transition_time_moves_only_when_the_status_flips() {
        let first = conditions(
            None,
            &[Cond::new("Ready", false, "Provisioning", "")],
            1,
            "t1",
        );
        let same = conditions(
            Some(&first),
            &[Cond::new("Ready", false, "Provisioning", "still")],
            2,
            "t2",
        );
        assert_eq!(same[0]["lastTransitionTime"], "t1");
        assert_eq!(same[0]["observedGeneration"], 2);
        let flipped = conditions(
            Some(&same),
            &[Cond::new("Ready", true, "Ready", "")],
            2,
            "t3",
        );
        assert_eq!(flipped[0]["lastTransitionTime"], "t3");
        assert_eq!(flipped.as_array().unwrap().len(), 1);
    }

    #[test]
    fn other_condition_types_are_kept() {
        let first = conditions(
            None,
            &[Cond::new("Paused", false, "NotPaused", "")],
            1,
            "t1",
        );
        let both = conditions(
            Some(&first),
            &[Cond::new("Ready", true, "Ready", "")],
            1,
            "t2",
        );
        assert_eq!(both.as_array().unwrap().len(), 2);
    }
}
