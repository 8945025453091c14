//! The pure decision taken before any write or cloud call: filter, ownership, pause.

use contract::capi::{
    Cluster, MachinePool, cluster_name_of, is_externally_managed, is_paused, matches_watch_filter,
    owner_cluster, owner_machine_pool,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::Role;

/// What the engine may do with an object this pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// Run the finalizer helper and the provider (reconcile or cleanup).
    Proceed,
    /// The owner (Cluster, or MachinePool and Cluster) is not set or not found yet: no
    /// finalizer, no status, no cloud call; a watch event brings the object back.
    WaitForOwner,
    /// Paused: write only `Paused=True`.
    Paused,
    /// Not ours to touch: filtered out, externally managed, or deleted without our finalizer.
    Ignore,
}

/// The names of the owners to look up for an object, in its namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OwnerNames<'a> {
    /// The Cluster's name.
    pub cluster: Option<&'a str>,
    /// The MachinePool's name (InfraMachinePool only).
    pub machine_pool: Option<&'a str>,
}

/// Which Cluster (and MachinePool) an object of `role` belongs to.
///
/// InfraCluster and ControlPlane: the Cluster owner reference (falling back to the cluster-name
/// label, which only matters for cleanup, since [`gate`] still requires the owner reference).
/// InfraMachinePool: the MachinePool controller owner, and the Cluster from the cluster-name label.
pub fn owner_names(role: Role, meta: &ObjectMeta) -> OwnerNames<'_> {
    match role {
        Role::InfraCluster | Role::ControlPlane => OwnerNames {
            cluster: owner_cluster(meta)
                .map(|o| o.name.as_str())
                .or_else(|| cluster_name_of(meta)),
            machine_pool: None,
        },
        Role::InfraMachinePool => OwnerNames {
            cluster: cluster_name_of(meta),
            machine_pool: owner_machine_pool(meta)
                .filter(|o| o.controller == Some(true))
                .map(|o| o.name.as_str()),
        },
    }
}

/// Decides what may happen to an object this pass.
///
/// `cluster` and `machine_pool` are the objects found for [`owner_names`] (`None` when not
/// named or not found). `finalizer` is this provider's finalizer for the kind.
pub fn gate(
    role: Role,
    meta: &ObjectMeta,
    watch_filter: Option<&str>,
    finalizer: &str,
    cluster: Option<&Cluster>,
    machine_pool: Option<&MachinePool>,
) -> Gate {
    if !matches_watch_filter(meta, watch_filter) {
        return Gate::Ignore;
    }
    if role == Role::InfraCluster && is_externally_managed(meta) {
        return Gate::Ignore;
    }
    let deleting = meta.deletion_timestamp.is_some();
    let has_finalizer = meta.finalizers.iter().flatten().any(|f| f == finalizer);
    if deleting && !has_finalizer {
        return Gate::Ignore;
    }
    let owned = match role {
        Role::InfraCluster | Role::ControlPlane => {
            owner_cluster(meta).is_some() && cluster.is_some()
        }
        Role::InfraMachinePool => {
            owner_machine_pool(meta).is_some_and(|o| o.controller == Some(true))
                && machine_pool.is_some()
                && cluster.is_some()
        }
    };
    let annotations = meta.annotations.as_ref();
    let paused = match cluster {
        Some(c) => is_paused(c, annotations),
        None => annotations.is_some_and(|a| a.contains_key(contract::capi::PAUSED_ANNOTATION)),
    };
    if !owned {
        // Something we finalized lost its owner (e.g. the Cluster was force-removed): the
        // cloud resources still need their cleanup, or the object would hang forever.
        return if deleting && has_finalizer && !paused {
            Gate::Proceed
        } else {
            Gate::WaitForOwner
        };
    }
    if paused { Gate::Paused } else { Gate::Proceed }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::collections::BTreeMap;

    use contract::capi::{
        CLUSTER_NAME_LABEL, ClusterSpec, MANAGED_BY_ANNOTATION, MachinePoolSpec, PAUSED_ANNOTATION,
        WATCH_FILTER_LABEL,
    };
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{OwnerReference, Time};

    use super::*;

    const FIN: &str = "eks.controlplane.cluster.x-k8s.io/finalizer";

    fn owner(kind: &str, name: &str, controller: bool) -> OwnerReference {
        OwnerReference {
            api_version: "cluster.x-k8s.io/v1beta2".into(),
            kind: kind.into(),
            name: name.into(),
            uid: "u".into(),
            controller: Some(controller),
            block_owner_deletion: None,
        }
    }

    fn cluster(paused: bool) -> Cluster {
        Cluster::new(
            "c1",
            ClusterSpec {
                paused: Some(paused),
                ..Default::default()
            },
        )
    }

    fn pool() -> MachinePool {
        MachinePool::new("mp1", MachinePoolSpec::default())
    }

    fn meta(
        owners: Vec<OwnerReference>,
        labels: &[(&str, &str)],
        annotations: &[(&str, &str)],
    ) -> ObjectMeta {
        let map = |kv: &[(&str, &str)]| {
            Some(
                kv.iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect::<BTreeMap<_, _>>(),
            )
        };
        ObjectMeta {
            name: Some("obj".into()),
            namespace: Some("ns".into()),
            owner_references: Some(owners),
            labels: map(labels),
            annotations: map(annotations),
            ..Default::default()
        }
    }

    fn owned_cp() -> ObjectMeta {
        meta(
            vec![owner("Cluster", "c1", false)],
            &[(CLUSTER_NAME_LABEL, "c1")],
            &[],
        )
    }

    #[test]
    fn an_owned_object_with_an_existing_cluster_proceeds() {
        let c = cluster(false);
        assert_eq!(
            gate(Role::ControlPlane, &owned_cp(), None, FIN, Some(&c), None),
            Gate::Proceed
        );
        assert_eq!(
            gate(Role::InfraCluster, &owned_cp(), None, FIN, Some(&c), None),
            Gate::Proceed
        );
    }

    #[test]
    fn without_a_cluster_owner_reference_the_object_waits() {
        let c = cluster(false);
        let m = meta(vec![], &[(CLUSTER_NAME_LABEL, "c1")], &[]);
        assert_eq!(
            gate(Role::ControlPlane, &m, None, FIN, Some(&c), None),
            Gate::WaitForOwner
        );
    }

    #[test]
    fn an_owner_reference_to_a_missing_cluster_waits() {
        assert_eq!(
            gate(Role::ControlPlane, &owned_cp(), None, FIN, None, None),
            Gate::WaitForOwner
        );
    }

    #[test]
    fn an_owner_of_another_group_does_not_count() {
        let c = cluster(false);
        let mut o = owner("Cluster", "c1", true);
        o.api_version = "example.com/v1".into();
        let m = meta(vec![o], &[], &[]);
        assert_eq!(
            gate(Role::InfraCluster, &m, None, FIN, Some(&c), None),
            Gate::WaitForOwner
        );
    }

    #[test]
    fn a_paused_cluster_or_annotation_pauses() {
        let paused = cluster(true);
        assert_eq!(
            gate(
                Role::ControlPlane,
                &owned_cp(),
                None,
                FIN,
                Some(&paused),
                None
            ),
            Gate::Paused
        );
        let mut m = owned_cp();
        m.annotations = Some([(PAUSED_ANNOTATION.to_string(), String::new())].into());
        let running = cluster(false);
        assert_eq!(
            gate(Role::ControlPlane, &m, None, FIN, Some(&running), None),
            Gate::Paused
        );
    }

    #[test]
    fn the_owner_gate_comes_before_the_pause() {
        let m = meta(vec![], &[], &[(PAUSED_ANNOTATION, "")]);
        assert_eq!(
            gate(Role::ControlPlane, &m, None, FIN, None, None),
            Gate::WaitForOwner
        );
    }

    #[test]
    fn the_watch_filter_ignores_unlabelled_objects() {
        let c = cluster(false);
        assert_eq!(
            gate(
                Role::ControlPlane,
                &owned_cp(),
                Some("a"),
                FIN,
                Some(&c),
                None
            ),
            Gate::Ignore
        );
        let m = meta(
            vec![owner("Cluster", "c1", false)],
            &[(WATCH_FILTER_LABEL, "b")],
            &[],
        );
        assert_eq!(
            gate(Role::ControlPlane, &m, Some("a"), FIN, Some(&c), None),
            Gate::Ignore
        );
        let m = meta(
            vec![owner("Cluster", "c1", false)],
            &[(WATCH_FILTER_LABEL, "a")],
            &[],
        );
        assert_eq!(
            gate(Role::ControlPlane, &m, Some("a"), FIN, Some(&c), None),
            Gate::Proceed
        );
    }

    #[test]
    fn an_externally_managed_infra_cluster_is_ignored_but_the_annotation_means_nothing_elsewhere() {
        let c = cluster(false);
        let m = meta(
            vec![owner("Cluster", "c1", false)],
            &[],
            &[(MANAGED_BY_ANNOTATION, "me")],
        );
        assert_eq!(
            gate(Role::InfraCluster, &m, None, FIN, Some(&c), None),
            Gate::Ignore
        );
        assert_eq!(
            gate(Role::ControlPlane, &m, None, FIN, Some(&c), None),
            Gate::Proceed
        );
    }

    #[test]
    fn a_machine_pool_needs_its_controller_owner_and_its_cluster() {
        let c = cluster(false);
        let p = pool();
        let good = meta(
            vec![owner("MachinePool", "mp1", true)],
            &[(CLUSTER_NAME_LABEL, "c1")],
            &[],
        );
        assert_eq!(
            owner_names(Role::InfraMachinePool, &good),
            OwnerNames {
                cluster: Some("c1"),
                machine_pool: Some("mp1")
            }
        );
        assert_eq!(
            gate(Role::InfraMachinePool, &good, None, FIN, Some(&c), Some(&p)),
            Gate::Proceed
        );
        assert_eq!(
            gate(Role::InfraMachinePool, &good, None, FIN, None, Some(&p)),
            Gate::WaitForOwner
        );
        assert_eq!(
            gate(Role::InfraMachinePool, &good, None, FIN, Some(&c), None),
            Gate::WaitForOwner
        );
        let not_controller = meta(
            vec![owner("MachinePool", "mp1", false)],
            &[(CLUSTER_NAME_LABEL, "c1")],
            &[],
        );
        assert_eq!(
            owner_names(Role::InfraMachinePool, &not_controller).machine_pool,
            None
        );
        assert_eq!(
            gate(
                Role::InfraMachinePool,
                &not_controller,
                None,
                FIN,
                Some(&c),
                Some(&p)
            ),
            Gate::WaitForOwner
        );
    }

    #[test]
    fn deletion_without_our_finalizer_is_none_of_our_business() {
        let c = cluster(false);
        let mut m = owned_cp();
        m.deletion_timestamp = Some(Time(jiff::Timestamp::UNIX_EPOCH));
        assert_eq!(
            gate(Role::ControlPlane, &m, None, FIN, Some(&c), None),
            Gate::Ignore
        );
        m.finalizers = Some(vec![FIN.into()]);
        assert_eq!(
            gate(Role::ControlPlane, &m, None, FIN, Some(&c), None),
            Gate::Proceed
        );
    }

    #[test]
    fn a_finalized_object_whose_cluster_vanished_still_gets_its_cleanup() {
        let mut m = owned_cp();
        m.deletion_timestamp = Some(Time(jiff::Timestamp::UNIX_EPOCH));
        m.finalizers = Some(vec![FIN.into()]);
        assert_eq!(
            gate(Role::ControlPlane, &m, None, FIN, None, None),
            Gate::Proceed
        );
        m.annotations = Some([(PAUSED_ANNOTATION.to_string(), String::new())].into());
        assert_eq!(
            gate(Role::ControlPlane, &m, None, FIN, None, None),
            Gate::WaitForOwner
        );
    }

    #[test]
    fn a_paused_cluster_also_pauses_deletion() {
        let paused = cluster(true);
        let mut m = owned_cp();
        m.deletion_timestamp = Some(Time(jiff::Timestamp::UNIX_EPOCH));
        m.finalizers = Some(vec![FIN.into()]);
        assert_eq!(
            gate(Role::ControlPlane, &m, None, FIN, Some(&paused), None),
            Gate::Paused
        );
    }
}
