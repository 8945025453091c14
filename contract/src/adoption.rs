//! The plan of an adoption, on every cloud: what taking over a cloud resource would change, read
//! before anything is written.
//!
//! A cloud says what its resource has in the terms of our spec ([`plan`]'s `cloud`: a JSON
//! object shaped like the spec, with `null` where the cloud has nothing). Each leaf of it is
//! compared with the spec:
//! - a field some client set (it is in the object's `metadata.managedFields`) and that differs
//!   from the cloud is a [`PlannedChange`]: accepting the plan changes the cloud to match;
//! - a field nobody set takes the cloud's value: it is listed as kept, and accepting the plan
//!   writes it into the spec ([`AdoptionPlan::keep_patch`]), so the cloud is left as it is.
//!
//! Lists are compared as sets: an element of a list of objects (add-ons, taints) matches on the
//! fields the spec gives (the cloud may say more, such as the version it picked), so a cloud lists
//! there only what the spec could name and the provider would otherwise remove. Pure.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;
use serde_json::{Map, Value};

use crate::api::PlannedChange;

/// The spec fields some client set, read from an object's `metadata.managedFields`.
#[derive(Debug, Clone, Default)]
pub struct SetFields(Vec<Value>);

impl SetFields {
    /// The `f:spec` trees of every manager's entry.
    pub fn from_managed(entries: &[ManagedFieldsEntry]) -> Self {
        Self(
            entries
                .iter()
                .filter_map(|e| e.fields_v1.as_ref())
                .filter_map(|f| f.0.get("f:spec").cloned())
                .collect(),
        )
    }

    /// Whether the field at `path` (under `spec`) was set by anyone, whole or in part.
    pub fn has(&self, path: &[&str]) -> bool {
        self.0.iter().any(|tree| {
            path.iter()
                .try_fold(tree, |node, key| node.get(format!("f:{key}")))
                .is_some()
        })
    }
}

/// What adopting would do.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AdoptionPlan {
    /// What accepting changes in the cloud.
    pub changes: Vec<PlannedChange>,
    /// Fields nobody set, with the cloud's value they take.
    pub kept: Vec<(Vec<String>, Value)>,
}

impl AdoptionPlan {
    /// The kept fields' paths, as the user writes them (`spec.logging.audit`).
    pub fn kept_fields(&self) -> Vec<String> {
        self.kept.iter().map(|(path, _)| field(path)).collect()
    }

    /// A merge patch of the spec writing the cloud's values into the kept fields; `None` when
    /// nothing is kept.
    pub fn keep_patch(&self) -> Option<Value> {
        if self.kept.is_empty() {
            return None;
        }
        let mut patch = Value::Object(Map::new());
        for (path, value) in &self.kept {
            let mut node = &mut patch;
            for key in path {
                if !node.is_object() {
                    *node = Value::Object(Map::new());
                }
                node = &mut node[key.as_str()];
            }
            *node = value.clone();
        }
        Some(patch)
    }
}

/// The plan of adopting a cloud resource described by `cloud` (spec-shaped) for an object whose
/// spec is `spec`, where `set` tells which fields a client set. Fields the cloud has no value
/// for (`null`) are never kept.
pub fn plan(spec: &Value, set: &SetFields, cloud: &Value) -> AdoptionPlan {
    let mut out = AdoptionPlan::default();
    walk(&mut Vec::new(), cloud, Some(spec), set, &mut out);
    out
}

fn walk(
    path: &mut Vec<String>,
    cloud: &Value,
    spec: Option<&Value>,
    set: &SetFields,
    out: &mut AdoptionPlan,
) {
    if let Value::Object(fields) = cloud {
        for (key, value) in fields {
            path.push(key.clone());
            walk(path, value, spec.and_then(|s| s.get(key)), set, out);
            path.pop();
        }
        return;
    }
    let keys: Vec<&str> = path.iter().map(String::as_str).collect();
    let spec = spec.unwrap_or(&Value::Null);
    if set.has(&keys) {
        if !agrees(spec, cloud) {
            out.changes.push(PlannedChange {
                field: field(path),
                cloud: shown(cloud),
                spec: shown(spec),
            });
        }
    } else if !cloud.is_null() && !agrees(spec, cloud) {
        out.kept.push((path.clone(), cloud.clone()));
    }
}

/// Whether the spec's value asks for nothing the cloud's does not have.
fn agrees(spec: &Value, cloud: &Value) -> bool {
    match (spec, cloud) {
        (Value::Array(wanted), Value::Array(have)) if wanted.iter().any(Value::is_object) => {
            wanted.len() == have.len() && wanted.iter().all(|w| have.iter().any(|h| agrees(w, h)))
        }
        (Value::Array(wanted), Value::Array(have)) => {
            wanted.len() == have.len() && wanted.iter().all(|w| have.contains(w))
        }
        (Value::Object(wanted), Value::Object(have)) => wanted
            .iter()
            .all(|(k, w)| agrees(w, have.get(k).unwrap_or(&Value::Null))),
        (Value::Array(wanted), Value::Null) => wanted.is_empty(),
        (Value::Null, Value::Array(have)) => have.is_empty(),
        _ => spec == cloud,
    }
}

fn field(path: &[String]) -> String {
    format!("spec.{}", path.join("."))
}

/// A value as a plan row shows it: strings bare, `(none)` for nothing, JSON otherwise.
fn shown(value: &Value) -> String {
    let text = match value {
        Value::Null => "(none)".to_string(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let mut cut: String = text.chars().take(1000).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    cut
}

/// One line for a condition: the plan's rows, or that accepting changes nothing.
pub fn summary(changes: &[PlannedChange]) -> String {
    if changes.is_empty() {
        return "adopting changes nothing in the cloud".to_string();
    }
    let rows: Vec<String> = changes
        .iter()
        .map(|c| format!("{} {} → {}", c.field, c.cloud, c.spec))
        .collect();
    format!("adopting changes {}", rows.join("; "))
}

/// The name a cloud identity ends in, where it carries one: the segment after its last `/` (an
/// EKS cluster ARN, an ARM resource ID, a GKE resource name or self link); `None` for one that
/// does not (an OCID).
pub fn name_in_identity(id: &str) -> Option<&str> {
    id.trim_end_matches('/')
        .rsplit_once('/')
        .map(|(_, name)| name)
        .filter(|name| !name.is_empty())
}

/// Whether two cloud identities name the same resource: equal ignoring ASCII case, with a URL's
/// scheme, host and API version left out (a GKE self link and its resource name are one
/// identity).
pub fn same_identity(a: &str, b: &str) -> bool {
    fn bare(id: &str) -> &str {
        let id = id.trim().trim_end_matches('/');
        let Some(rest) = id
            .strip_prefix("https://")
            .or_else(|| id.strip_prefix("http://"))
        else {
            return id;
        };
        let path = rest.split_once('/').map_or("", |(_, p)| p);
        match path.split_once('/') {
            Some((version, after)) if is_api_version(version) => after,
            _ => path,
        }
    }
    fn is_api_version(segment: &str) -> bool {
        segment
            .strip_prefix('v')
            .is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit()))
    }
    bare(a).eq_ignore_ascii_case(bare(b))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1;
    use serde_json::json;

    use super::*;

    fn set(tree: Value) -> SetFields {
        SetFields::from_managed(&[ManagedFieldsEntry {
            manager: Some("kubectl".into()),
            fields_v1: Some(FieldsV1(json!({ "f:spec": tree }))),
            ..ManagedFieldsEntry::default()
        }])
    }

    #[test]
    fn a_field_the_user_set_that_differs_is_a_change_and_an_unset_one_is_kept() {
        let spec = json!({"logging": {"apiServer": true, "audit": false}, "endpointAccess": {"public": true}});
        let set = set(json!({"f:logging": {"f:apiServer": {}}}));
        let cloud = json!({"logging": {"apiServer": false, "audit": true}, "endpointAccess": {"public": true}});
        let plan = plan(&spec, &set, &cloud);
        assert_eq!(
            plan.changes,
            vec![PlannedChange {
                field: "spec.logging.apiServer".into(),
                cloud: "false".into(),
                spec: "true".into(),
            }]
        );
        assert_eq!(plan.kept_fields(), vec!["spec.logging.audit"]);
        assert_eq!(
            plan.keep_patch().unwrap(),
            json!({"logging": {"audit": true}})
        );
        assert_eq!(
            summary(&plan.changes),
            "adopting changes spec.logging.apiServer false → true"
        );
    }

    #[test]
    fn a_cluster_that_matches_has_an_empty_plan_and_nothing_kept() {
        let spec = json!({"logging": {"apiServer": true}, "encryption": null});
        let set = set(json!({"f:logging": {"f:apiServer": {}}}));
        let cloud = json!({"logging": {"apiServer": true}, "encryption": null});
        let plan = plan(&spec, &set, &cloud);
        assert!(plan.changes.is_empty() && plan.kept.is_empty(), "{plan:?}");
        assert_eq!(plan.keep_patch(), None);
        assert_eq!(
            summary(&plan.changes),
            "adopting changes nothing in the cloud"
        );
    }

    #[test]
    fn lists_are_sets_whose_objects_match_on_the_fields_the_spec_gives() {
        let cloud = json!({
            "addons": [{"name": "coredns", "version": "v1.11"}],
            "endpointAccess": {"publicCIDRs": ["10.0.0.0/8", "192.168.0.0/16"]},
        });
        let set = set(json!({"f:addons": {}, "f:endpointAccess": {"f:publicCIDRs": {}}}));
        let same = json!({
            "addons": [{"name": "coredns"}],
            "endpointAccess": {"publicCIDRs": ["192.168.0.0/16", "10.0.0.0/8"]},
        });
        assert!(plan(&same, &set, &cloud).changes.is_empty());
        let other = json!({
            "addons": [{"name": "coredns"}, {"name": "vpc-cni"}],
            "endpointAccess": {"publicCIDRs": ["10.0.0.0/8"]},
        });
        let fields: Vec<String> = plan(&other, &set, &cloud)
            .changes
            .into_iter()
            .map(|c| c.field)
            .collect();
        assert_eq!(
            fields,
            vec!["spec.addons", "spec.endpointAccess.publicCIDRs"]
        );
    }

    #[test]
    fn encryption_asked_for_on_a_cluster_without_it_is_a_change_shown_as_none() {
        let spec = json!({"encryption": {"kmsKeyID": "k1"}});
        let set = set(json!({"f:encryption": {"f:kmsKeyID": {}}}));
        let plan = plan(&spec, &set, &json!({"encryption": null}));
        assert_eq!(plan.changes[0].cloud, "(none)");
        assert_eq!(plan.changes[0].spec, r#"{"kmsKeyID":"k1"}"#);
    }

    #[test]
    fn the_name_of_an_identity_is_its_last_segment_where_it_has_one() {
        assert_eq!(
            name_in_identity("arn:aws:eks:us-west-2:123456789012:cluster/prod"),
            Some("prod")
        );
        assert_eq!(
            name_in_identity("projects/p/locations/l/clusters/prod"),
            Some("prod")
        );
        assert_eq!(name_in_identity("ocid1.cluster.oc1.iad.aaaa"), None);
    }

    #[test]
    fn identities_compare_without_case_scheme_host_or_api_version() {
        assert!(same_identity(
            "https://container.googleapis.com/v1/projects/p/locations/l/clusters/c",
            "projects/p/locations/l/clusters/c"
        ));
        assert!(same_identity(
            "/subscriptions/S/resourceGroups/RG/providers/Microsoft.ContainerService/managedClusters/c",
            "/subscriptions/s/resourcegroups/rg/providers/Microsoft.ContainerService/managedClusters/c"
        ));
        assert!(!same_identity("xks://elsewhere", "xks://legacy"));
        assert!(!same_identity(
            "arn:aws:eks:us-east-1:111111111111:cluster/c",
            "arn:aws:eks:us-west-2:111111111111:cluster/c"
        ));
    }
}
