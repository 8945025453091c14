//! The pure rules a provider applies to every object it meets: whether reconciliation is paused,
//! which Cluster the object belongs to and who owns it, whether it passes the watch filter, and
//! whether something else manages it.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use super::{
    CAPI_GROUP, CLUSTER_KIND, CLUSTER_NAME_LABEL, Cluster, MACHINE_POOL_KIND,
    MANAGED_BY_ANNOTATION, PAUSED_ANNOTATION, WATCH_FILTER_LABEL,
};

/// Whether reconciliation of an object of `cluster` is paused: `cluster.spec.paused` is true,
/// or the object's annotations (`object_annotations`) carry [`PAUSED_ANNOTATION`] (any value).
pub fn is_paused(cluster: &Cluster, object_annotations: Option<&BTreeMap<String, String>>) -> bool {
    cluster.spec_paused() || object_annotations.is_some_and(|a| a.contains_key(PAUSED_ANNOTATION))
}

/// The cluster name from the [`CLUSTER_NAME_LABEL`] label, if present and non-empty.
pub fn cluster_name_of(meta: &ObjectMeta) -> Option<&str> {
    meta.labels
        .as_ref()
        .and_then(|l| l.get(CLUSTER_NAME_LABEL))
        .map(String::as_str)
        .filter(|n| !n.is_empty())
}

/// The group part of an `apiVersion` (`""` for the core group, e.g. `v1`).
pub fn api_group_of(api_version: &str) -> &str {
    api_version
        .rsplit_once('/')
        .map(|(group, _)| group)
        .unwrap_or("")
}

fn owner_of_kind<'a>(meta: &'a ObjectMeta, kind: &str) -> Option<&'a OwnerReference> {
    meta.owner_references
        .iter()
        .flatten()
        .find(|o| o.kind == kind && api_group_of(&o.api_version) == CAPI_GROUP)
}

/// The owner reference to core's Cluster: kind `Cluster`, group `cluster.x-k8s.io`, any version.
/// Core adds it to InfraCluster and ControlPlane objects; do nothing until it exists.
pub fn owner_cluster(meta: &ObjectMeta) -> Option<&OwnerReference> {
    owner_of_kind(meta, CLUSTER_KIND)
}

/// The owner reference to core's MachinePool: kind `MachinePool`, group `cluster.x-k8s.io`,
/// any version. Core adds it (as controller) to InfraMachinePool objects.
pub fn owner_machine_pool(meta: &ObjectMeta) -> Option<&OwnerReference> {
    owner_of_kind(meta, MACHINE_POOL_KIND)
}

/// Whether an object passes the controller's `--watch-filter`.
///
/// With no filter (`None` or an empty string) every object passes; with a filter, only objects
/// labelled [`WATCH_FILTER_LABEL`] with exactly that value pass.
pub fn matches_watch_filter(meta: &ObjectMeta, filter: Option<&str>) -> bool {
    match filter {
        None | Some("") => true,
        Some(value) => meta
            .labels
            .as_ref()
            .and_then(|l| l.get(WATCH_FILTER_LABEL))
            .is_some_and(|v| v == value),
    }
}

/// Whether the object is annotated [`MANAGED_BY_ANNOTATION`] (any value): something else manages
/// it and the provider must not modify it.
pub fn is_externally_managed(meta: &ObjectMeta) -> bool {
    has_annotation(meta, MANAGED_BY_ANNOTATION)
}

pub(super) fn has_annotation(meta: &ObjectMeta, key: &str) -> bool {
    meta.annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capi::ClusterSpec;

    fn meta_with(
        labels: &[(&str, &str)],
        annotations: &[(&str, &str)],
        owners: Vec<OwnerReference>,
    ) -> ObjectMeta {
        let map = |kv: &[(&str, &str)]| {
            (!kv.is_empty()).then(|| {
                kv.iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect::<BTreeMap<_, _>>()
            })
        };
        ObjectMeta {
            labels: map(labels),
            annotations: map(annotations),
            owner_references: (!owners.is_empty()).then_some(owners),
            ..Default::default()
        }
    }

    fn owner(api_version: &str, kind: &str, name: &str) -> OwnerReference {
        OwnerReference {
            api_version: api_version.into(),
            kind: kind.into(),
            name: name.into(),
            uid: "uid".into(),
            controller: Some(true),
            block_owner_deletion: None,
        }
    }

    #[test]
    fn is_paused_follows_the_cluster_spec() {
        let mut c = Cluster::new("c", ClusterSpec::default());
        assert!(!is_paused(&c, None));
        c.spec.paused = Some(true);
        assert!(is_paused(&c, None));
    }

    #[test]
    fn is_paused_follows_the_object_annotation_whatever_its_value() {
        let c = Cluster::new("c", ClusterSpec::default());
        let meta = meta_with(&[], &[(PAUSED_ANNOTATION, "")], vec![]);
        assert!(is_paused(&c, meta.annotations.as_ref()));
        let other = meta_with(&[], &[("something", "true")], vec![]);
        assert!(!is_paused(&c, other.annotations.as_ref()));
    }

    #[test]
    fn cluster_name_comes_from_the_label_and_ignores_an_empty_value() {
        assert_eq!(
            cluster_name_of(&meta_with(&[(CLUSTER_NAME_LABEL, "c1")], &[], vec![])),
            Some("c1")
        );
        assert_eq!(
            cluster_name_of(&meta_with(&[(CLUSTER_NAME_LABEL, "")], &[], vec![])),
            None
        );
        assert_eq!(cluster_name_of(&ObjectMeta::default()), None);
    }

    #[test]
    fn owner_cluster_accepts_any_version_of_the_capi_group_only() {
        let meta = meta_with(
            &[],
            &[],
            vec![
                owner("other.io/v1", "Cluster", "wrong"),
                owner("cluster.x-k8s.io/v1beta1", "Cluster", "right"),
            ],
        );
        assert_eq!(owner_cluster(&meta).unwrap().name, "right");
        let none = meta_with(&[], &[], vec![owner("other.io/v1", "Cluster", "wrong")]);
        assert!(owner_cluster(&none).is_none());
    }

    #[test]
    fn owner_machine_pool_finds_core_machine_pools_not_clusters() {
        let meta = meta_with(
            &[],
            &[],
            vec![
                owner("cluster.x-k8s.io/v1beta2", "Cluster", "c"),
                owner("cluster.x-k8s.io/v1beta2", "MachinePool", "mp"),
            ],
        );
        assert_eq!(owner_machine_pool(&meta).unwrap().name, "mp");
        let none = meta_with(
            &[],
            &[],
            vec![owner("cluster.x-k8s.io/v1beta2", "Cluster", "c")],
        );
        assert!(owner_machine_pool(&none).is_none());
    }

    #[test]
    fn without_a_watch_filter_every_object_matches() {
        let meta = ObjectMeta::default();
        assert!(matches_watch_filter(&meta, None));
        assert!(matches_watch_filter(&meta, Some("")));
    }

    #[test]
    fn with_a_watch_filter_only_objects_labelled_with_that_value_match() {
        let labelled = meta_with(&[(WATCH_FILTER_LABEL, "x")], &[], vec![]);
        let other = meta_with(&[(WATCH_FILTER_LABEL, "y")], &[], vec![]);
        assert!(matches_watch_filter(&labelled, Some("x")));
        assert!(!matches_watch_filter(&other, Some("x")));
        assert!(!matches_watch_filter(&ObjectMeta::default(), Some("x")));
    }

    #[test]
    fn the_managed_by_annotation_marks_an_object_externally_managed() {
        assert!(is_externally_managed(&meta_with(
            &[],
            &[(MANAGED_BY_ANNOTATION, "")],
            vec![]
        )));
        assert!(!is_externally_managed(&ObjectMeta::default()));
    }

    #[test]
    fn the_api_group_of_an_api_version_is_the_part_before_the_slash() {
        assert_eq!(api_group_of("cluster.x-k8s.io/v1beta2"), CAPI_GROUP);
        assert_eq!(api_group_of("v1"), "");
    }
}
