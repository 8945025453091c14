//! What a move changed, kept on the Cluster while the move is under way: which peer it came
//! from, where the Cluster's and MachinePools' references pointed, and who owned the kubeconfig
//! Secrets. Written before the first change, so that every later run can go on from where a
//! killed one stopped, or put everything back.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::peer::Peer;

/// The Cluster annotation holding the record.
pub const RECORD_ANNOTATION: &str = "migration.managed.cluster.x-k8s.io/record";

/// The state of one move.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    /// The provider the Cluster comes from.
    pub peer: Peer,
    /// `Cluster.spec.controlPlaneRef` before the move.
    pub control_plane_ref: Value,
    /// `Cluster.spec.infrastructureRef` before the move.
    pub infrastructure_ref: Value,
    /// Each MachinePool's `spec.template.spec.infrastructureRef` before the move.
    pub machine_pools: BTreeMap<String, Value>,
    /// Each kubeconfig Secret's `metadata.ownerReferences` before the move.
    pub secret_owners: BTreeMap<String, Vec<Value>>,
}

impl Record {
    /// The record on `cluster`, if a move is under way.
    ///
    /// # Errors
    /// The annotation is not a record (edited by hand).
    pub fn of(cluster: &Value) -> anyhow::Result<Option<Record>> {
        match cluster["metadata"]["annotations"][RECORD_ANNOTATION].as_str() {
            None => Ok(None),
            Some(text) => serde_json::from_str(text).map(Some).map_err(|e| {
                anyhow::anyhow!(
                    "the Cluster's {RECORD_ANNOTATION} annotation is not a migration record ({e}); remove it only if no migration is under way"
                )
            }),
        }
    }

    /// The merge patch that puts the record on the Cluster.
    pub fn patch(&self) -> Value {
        let text = serde_json::to_string(self).unwrap_or_default();
        serde_json::json!({"metadata": {"annotations": {RECORD_ANNOTATION: text}}})
    }

    /// The merge patch that takes it off.
    pub fn removal() -> Value {
        serde_json::json!({"metadata": {"annotations": {RECORD_ANNOTATION: null}}})
    }

    /// Every peer object the move pauses and, once done, deletes: the control plane, the
    /// InfraCluster and the pools, as references.
    pub fn peer_objects(&self) -> Vec<&Value> {
        let mut all = vec![&self.control_plane_ref, &self.infrastructure_ref];
        all.extend(self.machine_pools.values());
        all
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_record_survives_its_round_trip_through_the_annotation() {
        let record = Record {
            peer: Peer::Capa,
            control_plane_ref: json!({"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "AWSManagedControlPlane", "name": "c-cp"}),
            infrastructure_ref: json!({"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "AWSManagedCluster", "name": "c"}),
            machine_pools: BTreeMap::from([(
                "c-mp".into(),
                json!({"kind": "AWSManagedMachinePool", "name": "c-mp"}),
            )]),
            secret_owners: BTreeMap::from([(
                "c-kubeconfig".into(),
                vec![json!({"kind": "AWSManagedControlPlane"})],
            )]),
        };
        let mut cluster = json!({"metadata": {"annotations": {}}});
        cluster["metadata"]["annotations"][RECORD_ANNOTATION] =
            record.patch()["metadata"]["annotations"][RECORD_ANNOTATION].clone();
        assert_eq!(Record::of(&cluster).unwrap(), Some(record.clone()));
        assert_eq!(record.peer_objects().len(), 3);
        assert_eq!(Record::of(&json!({"metadata": {}})).unwrap(), None);
        cluster["metadata"]["annotations"][RECORD_ANNOTATION] = json!("{");
        assert!(Record::of(&cluster).is_err());
    }
}
