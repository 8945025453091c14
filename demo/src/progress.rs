//! A progress display a person would want to watch: every condition change of the cluster's
//! objects, as it happens, one line each.

use std::collections::BTreeMap;
use std::time::Instant;

use anyhow::Result;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, ListParams};
use serde_json::Value;

/// Cluster API core's kinds shown, with the condition types worth a line (empty: all).
const CORE_KINDS: &[(&str, &str, &[&str])] = &[
    (
        "Cluster",
        "cluster.x-k8s.io",
        &[
            "InfrastructureReady",
            "ControlPlaneInitialized",
            "ControlPlaneAvailable",
            "RemoteConnectionProbe",
            "Available",
        ],
    ),
    ("MachinePool", "cluster.x-k8s.io", &["Available", "Ready"]),
];

/// Every kind shown for the clouds of kind prefixes `clouds` (`EKS`, `GKE`): `(group, version,
/// kind, condition types)`, in display order.
fn kinds(clouds: &[&str]) -> Vec<(&'static str, &'static str, String, &'static [&'static str])> {
    let mut out = vec![(
        "cluster.x-k8s.io",
        "v1beta2",
        CORE_KINDS[0].0.to_string(),
        CORE_KINDS[0].2,
    )];
    for c in clouds {
        out.push((
            "infrastructure.cluster.x-k8s.io",
            "v1alpha1",
            format!("{c}Cluster"),
            &[],
        ));
        out.push((
            "controlplane.cluster.x-k8s.io",
            "v1alpha1",
            format!("{c}ControlPlane"),
            &[],
        ));
    }
    out.push((
        "cluster.x-k8s.io",
        "v1beta2",
        CORE_KINDS[1].0.to_string(),
        CORE_KINDS[1].2,
    ));
    for c in clouds {
        out.push((
            "infrastructure.cluster.x-k8s.io",
            "v1alpha1",
            format!("{c}MachinePool"),
            &[],
        ));
    }
    out
}

/// What the cluster looks like now.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    /// Cluster phase (of the last Cluster listed).
    pub cluster_phase: Option<String>,
    /// Every Cluster's phase, by name.
    pub cluster_phases: BTreeMap<String, String>,
    /// Cluster `status.initialization.controlPlaneInitialized`.
    pub control_plane_initialized: bool,
    /// The ControlPlane's `status.version` (of the last listed).
    pub control_plane_version: Option<String>,
    /// Every ControlPlane's `status.version`, by kind and name.
    pub control_plane_versions: BTreeMap<String, String>,
    /// How many Clusters are not initialized yet.
    pub uninitialized: usize,
    /// Per MachinePool: (desired replicas, nodeRefs, phase).
    pub pools: BTreeMap<String, (i64, usize, String)>,
    /// Per InfraMachinePool: `status.version`.
    pub pool_versions: BTreeMap<String, String>,
    /// Whether any object of the cluster still exists.
    pub any_left: bool,
}

impl Snapshot {
    /// Settled, with the control plane and every pool on `version`'s minor (`v1.33`).
    pub fn upgraded_to(&self, version: &str) -> bool {
        let minor: String = version
            .trim_start_matches('v')
            .split('.')
            .take(2)
            .collect::<Vec<_>>()
            .join(".");
        let want = format!("v{minor}");
        let on = |v: &str| v == want || v.starts_with(&format!("{want}."));
        self.settled()
            && !self.control_plane_versions.is_empty()
            && self.control_plane_versions.values().all(|v| on(v))
            && !self.pool_versions.is_empty()
            && self.pool_versions.values().all(|v| on(v))
    }

    /// Provisioned, initialized, and every pool Running with one nodeRef per desired replica.
    pub fn settled(&self) -> bool {
        !self.cluster_phases.is_empty()
            && self.cluster_phases.values().all(|p| p == "Provisioned")
            && self.uninitialized == 0
            && !self.pools.is_empty()
            && self
                .pools
                .values()
                .all(|(desired, refs, phase)| *refs as i64 == *desired && phase == "Running")
    }
}

/// Remembers what was shown and prints what changed.
pub struct Tracker {
    started: Instant,
    shown: BTreeMap<String, String>,
    quiet: bool,
    clouds: Vec<&'static str>,
}

impl Default for Tracker {
    fn default() -> Self {
        Self::for_clouds(&["EKS"])
    }
}

impl Tracker {
    /// A tracker of the kinds of the clouds with these kind prefixes (`EKS`, `GKE`).
    pub fn for_clouds(clouds: &[&'static str]) -> Self {
        Self {
            started: Instant::now(),
            shown: BTreeMap::new(),
            quiet: false,
            clouds: clouds.to_vec(),
        }
    }

    /// This tracker, printing nothing.
    pub fn silent(mut self) -> Self {
        self.quiet = true;
        self
    }

    /// A tracker that prints nothing (for benchmarks).
    pub fn quiet() -> Self {
        Self {
            quiet: true,
            ..Self::default()
        }
    }

    /// Reads every shown kind in `namespace`, prints new condition states and phases, and returns
    /// a snapshot.
    pub async fn poll(&mut self, client: &kube::Client, namespace: &str) -> Result<Snapshot> {
        let mut snapshot = Snapshot::default();
        for (group, version, kind, types) in kinds(&self.clouds) {
            let kind = kind.as_str();
            let resource = ApiResource::from_gvk(&GroupVersionKind::gvk(group, version, kind));
            let api: Api<DynamicObject> =
                Api::namespaced_with(client.clone(), namespace, &resource);
            for obj in api.list(&ListParams::default()).await? {
                snapshot.any_left = true;
                let name = obj.metadata.name.clone().unwrap_or_default();
                let label = format!("{kind}/{name}");
                let status = &obj.data["status"];
                if let Some(phase) = status["phase"].as_str() {
                    self.show(
                        &format!("{label} phase"),
                        &format!("{label:<34} phase {phase}"),
                    );
                }
                if obj.metadata.deletion_timestamp.is_some() {
                    self.show(
                        &format!("{label} deleting"),
                        &format!("{label:<34} deleting"),
                    );
                }
                for c in status["conditions"].as_array().into_iter().flatten() {
                    let ctype = c["type"].as_str().unwrap_or_default();
                    if !types.is_empty() && !types.contains(&ctype) {
                        continue;
                    }
                    let line = format!(
                        "{label:<34} {ctype:<24} {:<7} {:<26} {}",
                        c["status"].as_str().unwrap_or_default(),
                        c["reason"].as_str().unwrap_or_default(),
                        one_line(c["message"].as_str().unwrap_or_default())
                    );
                    self.show(&format!("{label} {ctype}"), &line);
                }
                match kind {
                    "Cluster" => {
                        snapshot.cluster_phase = status["phase"].as_str().map(str::to_string);
                        snapshot.cluster_phases.insert(
                            name.clone(),
                            status["phase"].as_str().unwrap_or_default().to_string(),
                        );
                        snapshot.control_plane_initialized = status["initialization"]["controlPlaneInitialized"]
                            == Value::Bool(true);
                        if !snapshot.control_plane_initialized {
                            snapshot.uninitialized += 1;
                        }
                    }
                    k if k.ends_with("ControlPlane") => {
                        snapshot.control_plane_version =
                            status["version"].as_str().map(str::to_string);
                        snapshot.control_plane_versions.insert(
                            label.clone(),
                            status["version"].as_str().unwrap_or_default().to_string(),
                        );
                    }
                    k if k.ends_with("MachinePool") && k != "MachinePool" => {
                        snapshot.pool_versions.insert(
                            label.clone(),
                            status["version"].as_str().unwrap_or_default().to_string(),
                        );
                    }
                    "MachinePool" => {
                        let desired = obj.data["spec"]["replicas"].as_i64().unwrap_or(0);
                        let refs = status["nodeRefs"].as_array().map_or(0, Vec::len);
                        let phase = status["phase"].as_str().unwrap_or_default().to_string();
                        let key = format!("{label} replicas");
                        self.show(
                            &key,
                            &format!("{label:<34} replicas {refs}/{desired} nodes"),
                        );
                        snapshot.pools.insert(name, (desired, refs, phase));
                    }
                    _ => {}
                }
            }
        }
        Ok(snapshot)
    }

    fn show(&mut self, key: &str, line: &str) {
        if self.shown.get(key).map(String::as_str) != Some(line) {
            if !self.quiet {
                println!("[{:>6.1}s] {line}", self.started.elapsed().as_secs_f64());
            }
            self.shown.insert(key.to_string(), line.to_string());
        }
    }
}

fn one_line(message: &str) -> String {
    let flat: String = message.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > 90 {
        format!("{}…", flat.chars().take(89).collect::<String>())
    } else {
        flat
    }
}
