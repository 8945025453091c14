//! The judges on records built by hand: a well-behaved cluster passes, and each flaw fails
//! exactly the check it breaks.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};

use super::*;
use crate::objects::Seen;
use crate::procs::Calls;
use crate::run::lifecycle::CLUSTER;

const CP: &str = "ToyControlPlane";
const INFRA: &str = "ToyCluster";
const POOL: &str = "ToyMachinePool";

fn names() -> Names {
    Names {
        infra: Some((INFRA.into(), "conf".into())),
        control_plane: (CP.into(), "conf".into()),
        pools: vec![("conf-pool".into(), POOL.into(), "conf-pool".into())],
    }
}

fn condition(type_: &str) -> Value {
    json!({
        "type": type_,
        "status": "True",
        "reason": "Ready",
        "lastTransitionTime": "2025-01-01T00:00:00Z",
        "observedGeneration": 1,
    })
}

fn owned(kind: &str, owner_kind: &str, owner: &str, rv: u64) -> Value {
    json!({
        "kind": kind,
        "metadata": {
            "name": "conf",
            "generation": 1,
            "resourceVersion": rv.to_string(),
            "finalizers": ["toy.example/finalizer"],
            "labels": {"cluster.x-k8s.io/cluster-name": CLUSTER},
            "ownerReferences": [{"kind": owner_kind, "name": owner, "controller": true}],
        },
    })
}

fn kubeconfig_secret(server: &str) -> Value {
    let text = format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: conf\ncontexts:\n- name: conf\n  context: {{cluster: conf, user: admin}}\nclusters:\n- name: conf\n  cluster: {{server: \"{server}\"}}\nusers:\n- name: admin\n  user: {{token: abc}}\n"
    );
    json!({
        "type": "cluster.x-k8s.io/secret",
        "metadata": {
            "name": "conf-kubeconfig",
            "resourceVersion": "5",
            "labels": {"cluster.x-k8s.io/cluster-name": CLUSTER},
            "ownerReferences": [{"kind": CP, "name": "conf", "controller": true}],
        },
        "data": {"value": base64::engine::general_purpose::STANDARD.encode(text)},
    })
}

fn seen(kind: &str, name: &str, obj: Value, deleted: bool) -> Seen {
    Seen {
        kind: kind.into(),
        name: name.into(),
        obj,
        deleted,
        at: Instant::now(),
    }
}

/// A settled cluster that does everything right.
fn good() -> Provisioned {
    let endpoint = json!({"host": "cp.example", "port": 443});
    let cluster = json!({
        "kind": "Cluster",
        "metadata": {"name": CLUSTER, "resourceVersion": "1"},
        "spec": {"controlPlaneEndpoint": endpoint},
        "status": {
            "phase": "Provisioned",
            "initialization": {"infrastructureProvisioned": true, "controlPlaneInitialized": true},
            "conditions": [
                condition("InfrastructureReady"),
                condition("ControlPlaneInitialized"),
                condition("ControlPlaneAvailable"),
                condition("RemoteConnectionProbe"),
            ],
        },
    });
    let mut infra = owned(INFRA, "Cluster", CLUSTER, 3);
    infra["status"] = json!({
        "initialization": {"provisioned": true},
        "conditions": [condition("Ready")],
    });
    let mut cp = owned(CP, "Cluster", CLUSTER, 10);
    cp["spec"] = json!({"version": "v1.32.0", "controlPlaneEndpoint": endpoint});
    cp["status"] = json!({
        "initialization": {"controlPlaneInitialized": true},
        "externalManagedControlPlane": true,
        "version": "v1.32.1",
        "conditions": [condition("Available")],
    });
    let pool = json!({
        "kind": "MachinePool",
        "metadata": {"name": "conf-pool"},
        "spec": {"replicas": 2, "template": {"spec": {"bootstrap": {"dataSecretName": ""}}}},
        "status": {
            "phase": "Running",
            "initialization": {"bootstrapDataSecretCreated": true},
            "nodeRefs": [{"name": "n1"}, {"name": "n2"}],
        },
    });
    let mut infra_pool = owned(POOL, "MachinePool", "conf-pool", 12);
    infra_pool["spec"] = json!({"providerIDList": ["toy://1", "toy://2"]});
    infra_pool["status"] = json!({
        "ready": true,
        "replicas": 2,
        "initialization": {"provisioned": true},
        "conditions": [condition("Ready")],
    });
    let secret = kubeconfig_secret("https://cp.example:443");
    let mut first_cluster = cluster.clone();
    first_cluster["spec"] = json!({});
    let recorded = Recorded(vec![
        seen("Cluster", CLUSTER, first_cluster, false),
        seen(INFRA, "conf", infra.clone(), false),
        seen("Secret", "conf-kubeconfig", secret.clone(), false),
        seen(CP, "conf", cp.clone(), false),
        seen(POOL, "conf-pool", infra_pool.clone(), false),
    ]);
    let node = |name: &str, id: &str| WorkloadNode {
        name: Some(name.into()),
        provider_id: Some(id.into()),
    };
    Provisioned {
        names: names(),
        state: State {
            cluster,
            infra,
            control_plane: cp,
            pools: BTreeMap::from([("conf-pool".to_string(), (pool, infra_pool))]),
            secret,
        },
        recorded,
        not_settled: None,
        failure_domains: false,
        workload: Some(Workload {
            namespaces: Ok(4),
            nodes: Ok(vec![node("n1", "toy://1"), node("n2", "toy://2")]),
        }),
    }
}

fn failed(verdicts: &Verdicts) -> Vec<CheckId> {
    verdicts
        .iter()
        .filter(|(_, o)| o.is_fail())
        .map(|(id, _)| *id)
        .collect()
}

fn outcome(verdicts: &Verdicts, id: CheckId) -> &Outcome {
    verdicts
        .iter()
        .find(|(i, _)| *i == id)
        .map(|(_, o)| o)
        .unwrap_or_else(|| panic!("{id} was not judged: {verdicts:?}"))
}

#[test]
fn a_well_behaved_cluster_passes_every_provisioned_check() {
    use CheckId::*;
    let verdicts = provisioned(&good());
    let mut ids: Vec<_> = verdicts.iter().map(|(id, _)| *id).collect();
    ids.sort_unstable();
    assert_eq!(
        ids,
        [
            C09, C12, C13, C14, C15, C16, C18, C19, C20, C21, C22, C23, C25, C26, C27, C28, C29,
            C30, C31, C34, C44, C46, C47, C48
        ]
    );
    for (id, outcome) in &verdicts {
        match id {
            C34 => assert_eq!(
                outcome,
                &Outcome::Skip("no user kubeconfig Secret is shipped".into())
            ),
            _ => assert!(matches!(outcome, Outcome::Pass(_)), "{id}: {outcome:?}"),
        }
    }
}

#[test]
fn a_flag_without_the_finalizer_fails_c12_only() {
    let mut record = good();
    let mut early = record.state.infra.clone();
    early["metadata"]["finalizers"] = json!([]);
    early["metadata"]["resourceVersion"] = json!("2");
    record
        .recorded
        .0
        .insert(1, seen(INFRA, "conf", early, false));
    let verdicts = ownership::ownership(&record);
    assert_eq!(failed(&verdicts), [CheckId::C12]);
    assert_eq!(
        outcome(&verdicts, CheckId::C12),
        &Outcome::Fail(
            "ToyCluster/conf at resourceVersion 2 had initialization.provisioned without a finalizer"
                .into()
        )
    );
    assert_eq!(failed(&provisioned(&record)), [CheckId::C12]);
}

#[test]
fn a_control_plane_without_the_cluster_owner_fails_c09() {
    let mut record = good();
    record.state.control_plane["metadata"]["ownerReferences"] = json!([]);
    assert_eq!(failed(&provisioned(&record)), [CheckId::C09]);
}

#[test]
fn a_version_without_v_fails_c23() {
    let mut record = good();
    record.state.control_plane["status"]["version"] = json!("1.32.1");
    let verdicts = control_plane::control_plane(&record);
    assert_eq!(failed(&verdicts), [CheckId::C23]);
}

#[test]
fn a_kubeconfig_for_another_server_fails_c29_and_a_refused_client_c30() {
    let mut record = good();
    record.state.secret = kubeconfig_secret("https://elsewhere.example:6443");
    record.recorded.0[2].obj = record.state.secret.clone();
    if let Some(w) = &mut record.workload {
        w.namespaces = Err("Unauthorized".into());
    }
    let verdicts = kubeconfig::kubeconfig(&record);
    assert_eq!(failed(&verdicts), [CheckId::C29, CheckId::C30]);
    assert_eq!(
        outcome(&verdicts, CheckId::C30),
        &Outcome::Fail("https://elsewhere.example:6443: Unauthorized".into())
    );
}

#[test]
fn no_secret_fails_c28_to_c31_with_why_the_cluster_did_not_settle() {
    let mut record = good();
    record.state.secret = Value::Null;
    record.workload = None;
    record.not_settled = Some("not settled after 1s".into());
    let verdicts = kubeconfig::kubeconfig(&record);
    assert_eq!(
        failed(&verdicts),
        [
            CheckId::C28,
            CheckId::C29,
            CheckId::C30,
            CheckId::C31,
            CheckId::C32
        ]
    );
    assert_eq!(
        outcome(&verdicts, CheckId::C28),
        &Outcome::Fail("no Secret conf-main/conf-kubeconfig (not settled after 1s)".into())
    );
}

#[test]
fn a_provider_id_without_a_node_fails_c47_and_c48() {
    let mut record = good();
    if let Some((_, infra)) = record.state.pools.get_mut("conf-pool") {
        infra["spec"]["providerIDList"] = json!(["toy://1", "toy://2", "toy://3"]);
    }
    let verdicts = pools::pools(&record);
    assert_eq!(failed(&verdicts), [CheckId::C47, CheckId::C48]);
}

#[test]
fn without_an_infra_cluster_its_checks_are_skipped() {
    let mut record = good();
    record.names.infra = None;
    let verdicts = infrastructure::infrastructure(&record);
    assert_eq!(verdicts.len(), 4);
    assert!(
        verdicts
            .iter()
            .all(|(_, o)| *o == Outcome::Skip("the default template has no InfraCluster".into()))
    );
}

fn window(statuses_after: Value, calls: Option<Calls>) -> pause::PauseWindow {
    pause::PauseWindow {
        by: pause::PausedBy::Annotation,
        seen: Ok(pause::QuietWhilePaused {
            edits: BTreeMap::from([("conf-pool".to_string(), 1)]),
            statuses_before: json!({"controlPlane": {"ready": true}}),
            statuses_after,
            calls,
            quiet: Duration::from_secs(5),
        }),
    }
}

#[test]
fn a_quiet_pause_passes_and_a_status_change_fails_c36() {
    let quiet = pause::paused_window(&window(
        json!({"controlPlane": {"ready": true}}),
        Some(Calls::default()),
    ));
    assert_eq!(
        quiet,
        [(
            CheckId::C36,
            Outcome::Pass(
                "cluster.x-k8s.io/paused annotation: Paused True; MachinePool replicas set to {\"conf-pool\": 1}; 5s later no status change, no cloud call"
                    .into()
            )
        )]
    );
    let calls = Calls(BTreeMap::from([(
        ("ScaleNodePool".to_string(), "ok".to_string()),
        1,
    )]));
    let busy = pause::paused_window(&window(
        json!({"controlPlane": {"ready": false}}),
        Some(calls),
    ));
    assert_eq!(failed(&busy), [CheckId::C36]);
    assert!(
        outcome(&busy, CheckId::C36)
            .detail()
            .contains("cloud calls while paused: ScaleNodePool(ok)×1"),
        "{busy:?}"
    );
}

/// A deletion in the contract's order: pools (rv 20), control plane (deleting 25, gone 30),
/// InfraCluster (deleting 31, gone 32), Secret (33), Cluster (40); every object's window saw
/// the cloud answer not-found.
fn deletion_in_order() -> deletion::Deletion {
    let deleting = |kind: &str, name: &str, rv: u64| {
        seen(
            kind,
            name,
            json!({"metadata": {"resourceVersion": rv.to_string(), "deletionTimestamp": "now"}}),
            false,
        )
    };
    let gone = |kind: &str, name: &str, rv: u64| {
        seen(
            kind,
            name,
            json!({"metadata": {"resourceVersion": rv.to_string()}}),
            true,
        )
    };
    let before = Calls::default();
    let after = Calls(BTreeMap::from([(
        ("GetCluster".to_string(), "gone".to_string()),
        1,
    )]));
    let names = names();
    let started = names
        .provider_objects()
        .into_iter()
        .map(|k| (k, Some(before.clone())))
        .collect();
    let ended = names
        .provider_objects()
        .into_iter()
        .map(|k| (k, Some(after.clone())))
        .collect();
    deletion::Deletion {
        names,
        recorded: Recorded(vec![
            gone("MachinePool", "conf-pool", 20),
            deleting(CP, "conf", 25),
            gone(CP, "conf", 30),
            deleting(INFRA, "conf", 31),
            gone(INFRA, "conf", 32),
            gone("Secret", "conf-kubeconfig", 33),
            gone("Cluster", CLUSTER, 40),
        ]),
        before_delete: Some(before),
        started,
        ended,
        timeout: Duration::from_secs(60),
        secret_gone: true,
        gc_wait: Duration::from_secs(60),
    }
}

#[test]
fn a_deletion_in_order_passes() {
    let verdicts = deletion::deletion(&deletion_in_order());
    assert!(failed(&verdicts).is_empty(), "{verdicts:?}");
    assert!(matches!(outcome(&verdicts, CheckId::C43), Outcome::Skip(_)));
}

#[test]
fn a_control_plane_deleted_before_its_pools_fails_c40() {
    let mut record = deletion_in_order();
    record.recorded.0[1].obj["metadata"]["resourceVersion"] = json!("15");
    let verdicts = deletion::deletion(&record);
    assert_eq!(failed(&verdicts), [CheckId::C40]);
    assert_eq!(
        outcome(&verdicts, CheckId::C40),
        &Outcome::Fail(
            "MachinePools gone by resourceVersion 20; control plane deletion started at 15".into()
        )
    );
}

#[test]
fn an_object_gone_without_a_not_found_fails_c42() {
    let mut record = deletion_in_order();
    let ok_only = Calls(BTreeMap::from([(
        ("DeleteCluster".to_string(), "ok".to_string()),
        1,
    )]));
    record
        .ended
        .insert((INFRA.into(), "conf".into()), Some(ok_only));
    assert_eq!(failed(&deletion::deletion(&record)), [CheckId::C42]);
}

fn item(kind: &str, id: &str, owner: Option<&str>) -> crate::faults::oracle::Item {
    crate::faults::oracle::Item {
        kind: kind.into(),
        id: id.into(),
        name: String::new(),
        parent: String::new(),
        owner: owner.map(str::to_string),
        state: "available".into(),
    }
}

#[test]
fn a_cloud_back_to_what_it_held_passes_c60_and_anything_new_left_fails_it() {
    let theirs = item("ec2:vpc", "vpc-theirs", None);
    let before = vec![theirs.clone()];
    assert!(matches!(
        deletion::nothing_left(&before, &before),
        Outcome::Pass(_)
    ));
    // Ours or not, tagged or not: what was not there before is left behind.
    let left = vec![
        theirs,
        item("ec2:subnet", "subnet-1", Some("toy/default/conf")),
        item("ec2:security-group", "sg-1", None),
    ];
    assert_eq!(
        deletion::left_behind(&before, &left),
        [
            "ec2:subnet subnet-1 [available]",
            "ec2:security-group sg-1 [available]"
        ]
    );
    assert!(matches!(
        deletion::nothing_left(&before, &left),
        Outcome::Fail(m) if m.contains("subnet-1") && m.contains("sg-1")
    ));
    // What was there and went is not this check's (the fault suite's wrong-deletion oracle).
    assert!(matches!(
        deletion::nothing_left(&before, &[]),
        Outcome::Pass(_)
    ));
}
