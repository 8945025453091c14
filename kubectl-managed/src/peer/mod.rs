//! What a peer provider's managed kinds become in ours: one module per peer, each a pure
//! function from the objects read off the management cluster to the objects to write, with a
//! note for every field of the peer's specs (mapped, left to the cloud, dropped, or refused).
//!
//! Every field the peer's objects carry gets a note: the fields a module knows are mapped or
//! explained one by one, and any other field is reported as having no equivalent (the cloud keeps
//! what that field made, and nothing manages it any more). Nothing is silently lost.

pub mod capa;
pub mod capg;
pub mod capoci;
pub mod capz;
mod capz_aso;

mod fields;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub use fields::Fields;

/// The Go providers a Cluster can be moved from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Peer {
    /// Cluster API Provider AWS (EKS).
    Capa,
    /// Cluster API Provider Azure (AKS), its `AzureASOManaged*` and `AzureManaged*` kinds.
    Capz,
    /// Cluster API Provider GCP (GKE).
    Capg,
    /// Cluster API Provider for OCI (OKE).
    Capoci,
}

impl Peer {
    /// The peer whose managed control-plane kind is `kind`.
    pub fn of_control_plane(kind: &str) -> Option<Peer> {
        match kind {
            "AWSManagedControlPlane" => Some(Peer::Capa),
            "AzureASOManagedControlPlane" | "AzureManagedControlPlane" => Some(Peer::Capz),
            "GCPManagedControlPlane" => Some(Peer::Capg),
            "OCIManagedControlPlane" => Some(Peer::Capoci),
            _ => None,
        }
    }

    /// Its usual short name.
    pub fn name(self) -> &'static str {
        match self {
            Peer::Capa => "CAPA",
            Peer::Capz => "CAPZ",
            Peer::Capg => "CAPG",
            Peer::Capoci => "CAPOCI",
        }
    }

    /// Our provider for the same cloud.
    pub fn ours(self) -> Ours {
        match self {
            Peer::Capa => Ours::EKS,
            Peer::Capz => Ours::AKS,
            Peer::Capg => Ours::GKE,
            Peer::Capoci => Ours::OKE,
        }
    }

    /// The kinds of the peer's managed pools.
    pub fn pool_kinds(self) -> &'static [&'static str] {
        match self {
            Peer::Capa => &["AWSManagedMachinePool"],
            Peer::Capz => &["AzureASOManagedMachinePool", "AzureManagedMachinePool"],
            Peer::Capg => &["GCPManagedMachinePool"],
            Peer::Capoci => &["OCIManagedMachinePool"],
        }
    }

    /// Turns the peer's objects into ours.
    pub fn translate(self, source: &Source) -> Translation {
        let mut t = match self {
            Peer::Capa => capa::translate(source),
            Peer::Capz => capz::translate(source),
            Peer::Capg => capg::translate(source),
            Peer::Capoci => capoci::translate(source),
        };
        t.wrap(self, source);
        t
    }
}

/// Our kinds on one cloud.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ours {
    /// The kinds' prefix (`EKS`).
    pub prefix: &'static str,
    /// The clusterctl provider name (`eks`).
    pub provider: &'static str,
}

impl Ours {
    /// EKS.
    pub const EKS: Ours = Ours {
        prefix: "EKS",
        provider: "eks",
    };
    /// AKS.
    pub const AKS: Ours = Ours {
        prefix: "AKS",
        provider: "aks",
    };
    /// GKE.
    pub const GKE: Ours = Ours {
        prefix: "GKE",
        provider: "gke",
    };
    /// OKE.
    pub const OKE: Ours = Ours {
        prefix: "OKE",
        provider: "oke",
    };

    /// The API group and kind of `role`.
    pub fn kind(self, role: Role) -> (&'static str, String) {
        match role {
            Role::InfraCluster => (INFRA_GROUP, format!("{}Cluster", self.prefix)),
            Role::ControlPlane => (CONTROL_PLANE_GROUP, format!("{}ControlPlane", self.prefix)),
            Role::MachinePool => (INFRA_GROUP, format!("{}MachinePool", self.prefix)),
        }
    }
}

/// The group of our InfraCluster and pool kinds.
pub const INFRA_GROUP: &str = "infrastructure.cluster.x-k8s.io";
/// The group of our control-plane kinds.
pub const CONTROL_PLANE_GROUP: &str = "controlplane.cluster.x-k8s.io";
/// The version our kinds are served at.
pub const OUR_VERSION: &str = "v1alpha1";

/// The three roles of a managed Cluster's provider objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// `Cluster.spec.infrastructureRef`.
    InfraCluster,
    /// `Cluster.spec.controlPlaneRef`.
    ControlPlane,
    /// A MachinePool's `spec.template.spec.infrastructureRef`.
    MachinePool,
}

/// What the command read of one Cluster: the Cluster and the peer's objects it points at.
#[derive(Debug, Clone)]
pub struct Source {
    /// The Cluster.
    pub cluster: Value,
    /// Its InfraCluster (the peer's kind).
    pub infra: Value,
    /// Its control plane (the peer's kind).
    pub control_plane: Value,
    /// Its MachinePools, each with the peer's pool object.
    pub pools: Vec<PeerPool>,
    /// The region the user gave (`--region`), for a peer object that names none (CAPOCI's then
    /// used its controller's default region).
    pub region: Option<String>,
    /// The objects the peer's objects control, as read (CAPZ's Azure Service Operator objects,
    /// whose status holds what ASO found in Azure).
    pub related: Vec<Value>,
}

/// A MachinePool and the peer's object behind it.
#[derive(Debug, Clone)]
pub struct PeerPool {
    /// The MachinePool.
    pub machine_pool: Value,
    /// The peer's pool object.
    pub infra: Value,
}

impl Source {
    /// The Cluster's name.
    pub fn cluster_name(&self) -> &str {
        self.cluster["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
    }

    /// The Cluster's namespace.
    pub fn namespace(&self) -> &str {
        self.cluster["metadata"]["namespace"]
            .as_str()
            .unwrap_or_default()
    }
}

/// One field of a peer's object and what the move does with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Note {
    /// The peer's object (`AWSManagedControlPlane c1-control-plane`).
    pub object: String,
    /// The field (`spec.roleName`).
    pub field: String,
    /// What becomes of it.
    pub outcome: Outcome,
}

/// What becomes of one field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", content = "detail", rename_all = "camelCase")]
pub enum Outcome {
    /// Written to this field of ours.
    Mapped(String),
    /// Ours takes it from the cloud once the plan is accepted (a field the spec leaves unset).
    FromCloud(String),
    /// What it made in the cloud stays, and nothing manages it any more.
    Unmanaged(String),
    /// Not needed by ours (it describes something ours does differently).
    Dropped(String),
    /// Ours cannot take this cluster over as it is: the move is refused until it changes.
    Refused(String),
}

impl Outcome {
    /// Whether the move must stop.
    pub fn refuses(&self) -> bool {
        matches!(self, Outcome::Refused(_))
    }
}

/// Our objects for the Cluster, and the notes that explain them.
#[derive(Debug, Clone, Default)]
pub struct Translation {
    /// Our InfraCluster (a whole object once wrapped).
    pub infra_cluster: Value,
    /// Our control plane.
    pub control_plane: Value,
    /// Our pools: the MachinePool's name and our pool object.
    pub pools: Vec<(String, Value)>,
    /// The MachinePools whose cloud pool our control plane keeps (AKS's System pool): they
    /// keep pointing at the peer's paused object during the move and are removed at its end,
    /// the cloud pool untouched.
    pub absorbed: Vec<String>,
    /// One note per field of the peer's objects.
    pub notes: Vec<Note>,
}

/// The annotation on each of our objects naming the peer object it was written from.
pub const MIGRATED_FROM_ANNOTATION: &str = "migration.managed.cluster.x-k8s.io/from";

impl Translation {
    /// Whether any field refuses the move.
    pub fn refused(&self) -> bool {
        self.notes.iter().any(|n| n.outcome.refuses())
    }

    /// Turns the specs the peer module wrote into whole objects: our kinds, the peer objects'
    /// names, the Cluster's label, and an annotation naming what each was written from.
    fn wrap(&mut self, peer: Peer, source: &Source) {
        let ours = peer.ours();
        let cluster = source.cluster_name();
        let namespace = source.namespace();
        let object = |role: Role, from: &Value, spec: &Value| {
            let (group, kind) = ours.kind(role);
            json!({
                "apiVersion": format!("{group}/{OUR_VERSION}"),
                "kind": kind,
                "metadata": {
                    "name": from["metadata"]["name"],
                    "namespace": namespace,
                    "labels": {"cluster.x-k8s.io/cluster-name": cluster},
                    "annotations": {MIGRATED_FROM_ANNOTATION: format!(
                        "{}/{}", from["kind"].as_str().unwrap_or_default(),
                        from["metadata"]["name"].as_str().unwrap_or_default())},
                },
                "spec": spec,
            })
        };
        self.infra_cluster = object(Role::InfraCluster, &source.infra, &self.infra_cluster);
        self.control_plane = object(
            Role::ControlPlane,
            &source.control_plane,
            &self.control_plane,
        );
        for (mp, spec) in &mut self.pools {
            if let Some(pool) = source
                .pools
                .iter()
                .find(|p| p.machine_pool["metadata"]["name"] == mp.as_str())
            {
                *spec = object(Role::MachinePool, &pool.infra, spec);
            }
        }
    }
}

/// `{kind} {name}` of an object, as notes name it.
pub fn title(obj: &Value) -> String {
    format!(
        "{} {}",
        obj["kind"].as_str().unwrap_or_default(),
        obj["metadata"]["name"].as_str().unwrap_or_default()
    )
}

/// A Kubernetes version as our spec takes it (`v1.31` or `v1.31.2`): a leading `v` added,
/// anything after the patch (`-eks-…`, `+build`) cut.
pub fn version(v: &str) -> String {
    let bare = v.trim().trim_start_matches('v');
    let core: String = bare
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    format!("v{}", core.trim_end_matches('.'))
}

/// Whether the MachinePool leaves its count to an autoscaler.
pub fn autoscaled(machine_pool: &Value) -> bool {
    machine_pool["metadata"]["annotations"]
        .get("cluster.x-k8s.io/replicas-managed-by")
        .is_some()
}

/// Taint effects as our spec spells them, from the Kubernetes or cloud spellings peers use.
pub fn taint_effect(effect: &str) -> Option<&'static str> {
    match effect.to_ascii_lowercase().replace(['-', '_'], "").as_str() {
        "noschedule" => Some("NoSchedule"),
        "noexecute" => Some("NoExecute"),
        "prefernoschedule" => Some("PreferNoSchedule"),
        _ => None,
    }
}

/// The taints at `path` (a list of `{key, value, effect}`) as our spec writes them, each effect
/// read in the peer's spelling; a taint with an effect ours does not know refuses the move.
pub fn taints(f: &mut Fields, path: &str, to: &str) -> Option<Value> {
    let list = f.get(path).and_then(Value::as_array)?;
    let mut ours = Vec::new();
    for t in list {
        match t["effect"].as_str().and_then(taint_effect) {
            Some(effect) => {
                let mut taint = json!({"key": t["key"], "effect": effect});
                if let Some(v) = t.get("value").filter(|v| !v.is_null()) {
                    taint["value"] = v.clone();
                }
                ours.push(taint);
            }
            None => f.refuse(
                path,
                &format!("a taint effect ours does not know: {}", t["effect"]),
            ),
        }
    }
    f.mapped(path, to);
    Some(Value::Array(ours))
}

/// The fields whose notes refuse the move, in order.
#[cfg(test)]
pub(crate) fn refused_fields(t: &Translation) -> Vec<&str> {
    t.notes
        .iter()
        .filter(|n| n.outcome.refuses())
        .map(|n| n.field.as_str())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_take_a_v_and_lose_what_follows_the_patch() {
        assert_eq!(version("1.31"), "v1.31");
        assert_eq!(version("v1.31.0"), "v1.31.0");
        assert_eq!(version("v1.30.4-eks-a1b2c3"), "v1.30.4");
        assert_eq!(version("1.29.1+build.7"), "v1.29.1");
    }

    #[test]
    fn taint_effects_are_read_in_every_peer_spelling() {
        for e in ["no-schedule", "NoSchedule", "NO_SCHEDULE"] {
            assert_eq!(taint_effect(e), Some("NoSchedule"), "{e}");
        }
        assert_eq!(taint_effect("prefer-no-schedule"), Some("PreferNoSchedule"));
        assert_eq!(taint_effect("no-execute"), Some("NoExecute"));
        assert_eq!(taint_effect("sometimes"), None);
    }

    #[test]
    fn control_plane_kinds_name_their_peer() {
        assert_eq!(
            Peer::of_control_plane("AWSManagedControlPlane"),
            Some(Peer::Capa)
        );
        assert_eq!(
            Peer::of_control_plane("AzureASOManagedControlPlane"),
            Some(Peer::Capz)
        );
        assert_eq!(Peer::of_control_plane("EKSControlPlane"), None);
        assert_eq!(Ours::OKE.kind(Role::MachinePool).1, "OKEMachinePool");
    }
}
