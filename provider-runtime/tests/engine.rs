//! The engine against the real management plane (kube-apiserver + Cluster API core), with a
//! test ControlPlane kind and a tiny in-memory cloud.
//!
//! One plane, one provider process (in-process, with `--watch-filter`, leader election and the
//! health/metrics listener on), and the contract behaviours the runtime owns checked in turn.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use test_support::eventually;

use clap::Parser;
use contract::capi::{Cluster, PAUSED_ANNOTATION, WATCH_FILTER_LABEL};
use contract::conditions::{DesiredCondition, Reason};
use futures::StreamExt;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, CustomResource, CustomResourceExt, Resource, ResourceExt};
use provider_runtime::{
    CallOutcome, Cleanup, CleanupContext, CommonArgs, Operator, Pass, PassContext, ProviderError,
    ProviderObject, ProviderSpec, Reconciler, Role,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

const PROVIDER: &str = "test";
const FINALIZER: &str = "test.controlplane.cluster.x-k8s.io/finalizer";
const FILTER: &str = "mine";
const NS: &str = "runtime-it";

/// A ControlPlane kind for the test (the shape every provider's ControlPlane has).
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]
#[kube(
    group = "controlplane.cluster.x-k8s.io",
    version = "v1alpha1",
    kind = "TestControlPlane",
    namespaced,
    status = "TestControlPlaneStatus"
)]
#[serde(rename_all = "camelCase")]
pub struct TestControlPlaneSpec {
    /// Desired Kubernetes version.
    pub version: String,
    /// Published by the provider once the cloud reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane_endpoint: Option<Endpoint>,
}

/// An API endpoint.
#[derive(Serialize, Deserialize, Clone, Debug, Default, JsonSchema, PartialEq)]
pub struct Endpoint {
    pub host: String,
    pub port: i32,
}

/// Status of the test ControlPlane.
#[derive(Serialize, Deserialize, Clone, Debug, Default, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct TestControlPlaneStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cloud_id: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

impl ProviderObject for TestControlPlane {
    const ROLE: Role = Role::ControlPlane;

    fn conditions(&self) -> &[Condition] {
        self.status
            .as_ref()
            .map(|s| s.conditions.as_slice())
            .unwrap_or_default()
    }
}

/// The in-memory cloud: one "cluster" per object, deletions that can be held.
#[derive(Default)]
struct CloudState {
    clusters: HashMap<String, String>,
    calls: u64,
    hold_deletion: bool,
    fault: Fault,
    violations: Vec<String>,
}

/// What the fake cloud answers besides success.
#[derive(Default, Clone, Copy, PartialEq)]
enum Fault {
    #[default]
    None,
    /// 429 with Retry-After: 1s.
    Throttle,
    /// The name is taken by a cluster that is not ours.
    NameConflict,
}

#[derive(Clone, Default)]
struct FakeCloud(Arc<Mutex<CloudState>>);

impl FakeCloud {
    fn with<T>(&self, f: impl FnOnce(&mut CloudState) -> T) -> T {
        f(&mut self.0.lock().unwrap())
    }
    fn calls(&self) -> u64 {
        self.with(|s| s.calls)
    }
    fn version_of(&self, key: &str) -> Option<String> {
        self.with(|s| s.clusters.get(key).cloned())
    }
}

struct FakeReconciler {
    cloud: FakeCloud,
}

fn key_of(obj: &TestControlPlane) -> String {
    format!("{}/{}", obj.namespace().unwrap_or_default(), obj.name_any())
}

impl Reconciler<TestControlPlane> for FakeReconciler {
    async fn reconcile(
        &self,
        obj: Arc<TestControlPlane>,
        ctx: &PassContext,
    ) -> Result<Pass, ProviderError> {
        let key = key_of(&obj);
        let version = obj.spec.version.clone();
        let fault = self.cloud.with(|s| {
            s.calls += 1;
            s.fault
        });
        match fault {
            Fault::Throttle => {
                ctx.cloud_calls
                    .record("fake", "EnsureCluster", CallOutcome::Throttled);
                return Err(ProviderError::throttled(
                    "Rate exceeded (fake cloud)",
                    Some(Duration::from_secs(1)),
                ));
            }
            Fault::NameConflict => {
                return Err(ProviderError::terminal(
                    Reason::NameConflict,
                    "a cluster with this name exists in the fake cloud and is not ours",
                ));
            }
            Fault::None => {}
        }
        self.cloud.with(|s| {
            if !obj.finalizers().iter().any(|f| f == FINALIZER) {
                s.violations
                    .push(format!("{key}: reconcile without the finalizer"));
            }
            if ctx.cluster.spec_paused() {
                s.violations
                    .push(format!("{key}: reconcile while the Cluster is paused"));
            }
            s.clusters.insert(key.clone(), version.clone());
        });
        ctx.cloud_calls
            .record("fake", "EnsureCluster", CallOutcome::Success);
        let endpoint = Endpoint {
            host: format!("{}.fake.example", obj.name_any()),
            port: 443,
        };
        Ok(Pass::new()
            .spec_fields(&json!({ "controlPlaneEndpoint": endpoint }))
            .status(&TestControlPlaneStatus {
                ready: Some(true),
                version: Some(version),
                cloud_id: Some(format!("fake://{key}")),
                ..Default::default()
            })
            .condition(DesiredCondition::true_("Available", Reason::Ready, "")))
    }

    async fn cleanup(
        &self,
        obj: Arc<TestControlPlane>,
        ctx: &CleanupContext,
    ) -> Result<Cleanup, ProviderError> {
        let key = key_of(&obj);
        ctx.cloud_calls
            .record("fake", "DeleteCluster", CallOutcome::Success);
        Ok(self.cloud.with(|s| {
            s.calls += 1;
            if s.hold_deletion {
                Cleanup::pending(
                    Duration::from_millis(500),
                    "waiting for the fake cloud to delete the cluster",
                )
            } else {
                s.clusters.remove(&key);
                Cleanup::Done
            }
        }))
    }
}

fn crd()
-> k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition {
    let mut crd = TestControlPlane::crd();
    crd.metadata
        .labels
        .get_or_insert_with(BTreeMap::new)
        .insert("cluster.x-k8s.io/v1beta2".into(), "v1alpha1".into());
    crd
}

fn control_plane(name: &str, labelled: bool) -> TestControlPlane {
    let mut cp = TestControlPlane::new(
        name,
        TestControlPlaneSpec {
            version: "v1.31".into(),
            control_plane_endpoint: None,
        },
    );
    cp.metadata.namespace = Some(NS.into());
    if labelled {
        cp.metadata.labels = Some([(WATCH_FILTER_LABEL.to_string(), FILTER.to_string())].into());
    }
    cp
}

fn cluster(name: &str, control_plane: &str) -> serde_json::Value {
    json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "Cluster",
        "metadata": {"name": name, "namespace": NS, "labels": {WATCH_FILTER_LABEL: FILTER}},
        "spec": {
            "controlPlaneRef": {
                "apiGroup": "controlplane.cluster.x-k8s.io",
                "kind": "TestControlPlane",
                "name": control_plane
            }
        }
    })
}

fn condition<'a>(cp: &'a TestControlPlane, type_: &str) -> Option<&'a Condition> {
    cp.conditions().iter().find(|c| c.type_ == type_)
}

async fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .ok()?;
    let req = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    stream.write_all(req.as_bytes()).await.ok()?;
    let mut buf = String::new();
    stream.read_to_string(&mut buf).await.ok()?;
    let code = buf.split_whitespace().nth(1)?.parse().ok()?;
    Some((code, buf))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_engine_honours_the_cluster_api_contract_on_a_real_management_plane() {
    let plane = testbed::ManagementPlane::start(testbed::Options::default())
        .await
        .expect("management plane starts");
    let client = plane.client().await.expect("client");
    plane
        .install_crds(&[crd()])
        .await
        .expect("test CRD installs");
    test_support::create_namespace(&client, NS).await;

    let cps: Api<TestControlPlane> = Api::namespaced(client.clone(), NS);
    let clusters: Api<Cluster> = Api::namespaced(client.clone(), NS);

    // Every version of every test object the API server ever held, to check orderings.
    let history: Arc<Mutex<Vec<TestControlPlane>>> = Arc::default();
    let recorder = {
        let history = history.clone();
        let cps = cps.clone();
        tokio::spawn(async move {
            let mut stream =
                std::pin::pin!(watcher(cps, watcher::Config::default()).applied_objects());
            while let Some(Ok(obj)) = stream.next().await {
                history.lock().unwrap().push(obj);
            }
        })
    };

    // The provider, in-process, with a watch filter, leader election and health/metrics on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        common: CommonArgs,
    }
    let args = Cli::parse_from([
        "test-provider".to_string(),
        format!("--watch-filter={FILTER}"),
        "--leader-elect".into(),
        format!("--leader-elect-namespace={NS}"),
        format!("--health-probe-bind-address=127.0.0.1:{port}"),
        format!("--metrics-bind-address=127.0.0.1:{port}"),
        "--concurrency=2".into(),
    ])
    .common;
    let cloud = FakeCloud::default();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let provider = tokio::spawn(
        Operator::new(ProviderSpec::new(PROVIDER), args)
            .controller::<TestControlPlane, _>(FakeReconciler {
                cloud: cloud.clone(),
            })
            .run_with(client.clone(), async move {
                let _ = stop_rx.await;
            }),
    );

    // Ready once the CRDs are found and the lease is held or watched.
    eventually("/readyz answers 200", Duration::from_secs(60), || async {
        matches!(http_get(port, "/readyz").await, Some((200, _))).then_some(())
    })
    .await;
    assert_eq!(http_get(port, "/healthz").await.map(|r| r.0), Some(200));

    // C11: no Cluster owner → no finalizer, no status, no cloud call.
    cps.create(&PostParams::default(), &control_plane("orphan", true))
        .await
        .unwrap();
    // C38: not labelled for our filter → never modified, even once core makes it owned.
    cps.create(&PostParams::default(), &control_plane("unfiltered", false))
        .await
        .unwrap();
    clusters
        .create(
            &PostParams::default(),
            &serde_json::from_value(cluster("c-unfiltered", "unfiltered")).unwrap(),
        )
        .await
        .expect("Cluster for the unfiltered control plane");

    // The main object: created first, owned once core sees the Cluster that references it.
    cps.create(&PostParams::default(), &control_plane("cp1", true))
        .await
        .unwrap();
    clusters
        .create(
            &PostParams::default(),
            &serde_json::from_value(cluster("c1", "cp1")).unwrap(),
        )
        .await
        .expect("Cluster c1");

    let cp1 = eventually(
        "cp1 reports Ready with the cloud's status",
        Duration::from_secs(60),
        || async {
            let cp = cps.get("cp1").await.ok()?;
            let status = cp.status.clone()?;
            (status.ready == Some(true) && condition(&cp, "Ready")?.status == "True").then_some(cp)
        },
    )
    .await;
    assert!(
        cp1.finalizers().iter().any(|f| f == FINALIZER),
        "finalizer on cp1"
    );
    assert!(
        cp1.owner_references()
            .iter()
            .any(|o| o.kind == "Cluster" && o.name == "c1")
    );
    let status = cp1.status.clone().unwrap();
    assert_eq!(status.version.as_deref(), Some("v1.31"));
    assert_eq!(status.observed_generation, cp1.metadata.generation);
    let paused = condition(&cp1, "Paused").expect("Paused condition");
    assert_eq!(
        (paused.status.as_str(), paused.reason.as_str()),
        ("False", "NotPaused")
    );
    for c in cp1.conditions() {
        assert!(!c.reason.is_empty(), "{c:?}");
        assert_eq!(c.observed_generation, cp1.metadata.generation, "{c:?}");
    }
    assert_eq!(
        cloud.version_of(&format!("{NS}/cp1")).as_deref(),
        Some("v1.31")
    );

    // C12: the finalizer was on every version that had any status.
    for v in history
        .lock()
        .unwrap()
        .iter()
        .filter(|o| o.name_any() == "cp1")
    {
        if v.status.is_some() {
            assert!(
                v.finalizers().iter().any(|f| f == FINALIZER),
                "status before finalizer: {v:?}"
            );
        }
    }

    // P8: at rest, further passes (triggered by an unrelated label change) write nothing.
    let rv_before = cps.get("cp1").await.unwrap().resource_version();
    let calls_before = cloud.calls();
    cps.patch(
        "cp1",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {"unrelated": "x"}}})),
    )
    .await
    .unwrap();
    eventually(
        "a pass runs after the label change",
        Duration::from_secs(30),
        || async { (cloud.calls() > calls_before).then_some(()) },
    )
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = cps.get("cp1").await.unwrap();
    let rv_label = history
        .lock()
        .unwrap()
        .iter()
        .filter(|o| o.name_any() == "cp1" && o.labels().contains_key("unrelated"))
        .map(|o| o.resource_version())
        .next()
        .flatten();
    assert_ne!(rv_before, after.resource_version());
    assert_eq!(
        after.resource_version(),
        rv_label,
        "the resting pass wrote nothing"
    );

    // C35: a paused Cluster: Paused=True, spec edits change nothing and call nothing.
    clusters
        .patch(
            "c1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"paused": true}})),
        )
        .await
        .unwrap();
    eventually(
        "cp1 reports Paused=True",
        Duration::from_secs(30),
        || async {
            let cp = cps.get("cp1").await.ok()?;
            let paused = condition(&cp, "Paused")?;
            (paused.status == "True" && paused.reason == "Paused").then_some(())
        },
    )
    .await;
    let calls_paused = cloud.calls();
    let before_edit = cps.get("cp1").await.unwrap();
    cps.patch(
        "cp1",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"version": "v1.32"}})),
    )
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let during = cps.get("cp1").await.unwrap();
    assert_eq!(cloud.calls(), calls_paused, "no cloud call while paused");
    assert_eq!(
        cloud.version_of(&format!("{NS}/cp1")).as_deref(),
        Some("v1.31")
    );
    assert_eq!(
        during.status, before_edit.status,
        "no status change while paused"
    );

    // C37: unpausing sets Paused=False and applies the pending change.
    clusters
        .patch(
            "c1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"paused": false}})),
        )
        .await
        .unwrap();
    eventually(
        "cp1 resumes and applies v1.32",
        Duration::from_secs(30),
        || async {
            let cp = cps.get("cp1").await.ok()?;
            let paused = condition(&cp, "Paused")?;
            let status = cp.status.as_ref()?;
            (paused.status == "False"
                && status.version.as_deref() == Some("v1.32")
                && status.observed_generation == cp.metadata.generation)
                .then_some(())
        },
    )
    .await;
    assert_eq!(
        cloud.version_of(&format!("{NS}/cp1")).as_deref(),
        Some("v1.32")
    );

    // C36: the paused annotation alone pauses too.
    cps.patch(
        "cp1",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"annotations": {PAUSED_ANNOTATION: ""}}})),
    )
    .await
    .unwrap();
    eventually(
        "the annotation pauses cp1",
        Duration::from_secs(30),
        || async {
            let cp = cps.get("cp1").await.ok()?;
            (condition(&cp, "Paused")?.status == "True").then_some(())
        },
    )
    .await;
    cps.patch(
        "cp1",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"annotations": {PAUSED_ANNOTATION: null}}})),
    )
    .await
    .unwrap();
    eventually(
        "removing the annotation resumes cp1",
        Duration::from_secs(30),
        || async {
            let cp = cps.get("cp1").await.ok()?;
            (condition(&cp, "Paused")?.status == "False").then_some(())
        },
    )
    .await;

    // The orphan and the filtered-out object were never touched.
    for name in ["orphan", "unfiltered"] {
        let cp = cps.get(name).await.unwrap();
        assert!(cp.finalizers().is_empty(), "{name} got a finalizer");
        assert!(cp.status.is_none(), "{name} got a status: {:?}", cp.status);
        assert_eq!(
            cloud.version_of(&format!("{NS}/{name}")),
            None,
            "{name} reached the cloud"
        );
    }

    // Transient: a throttled cloud → Ready=False/Throttled with the cloud's message; the
    // engine retries on its own (no watch event needed) and recovers once the fault clears.
    cloud.with(|s| s.fault = Fault::Throttle);
    cps.patch(
        "cp1",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"version": "v1.33"}})),
    )
    .await
    .unwrap();
    eventually("cp1 reports Throttled", Duration::from_secs(30), || async {
        let cp = cps.get("cp1").await.ok()?;
        let ready = condition(&cp, "Ready")?;
        (ready.status == "False"
            && ready.reason == "Throttled"
            && ready.message == "Rate exceeded (fake cloud).")
            .then_some(cp)
    })
    .await;
    let kept = cps.get("cp1").await.unwrap();
    assert!(
        condition(&kept, "Available").is_some(),
        "other conditions are kept on a transient error"
    );
    assert_eq!(
        kept.status.as_ref().unwrap().version.as_deref(),
        Some("v1.32"),
        "status fields kept"
    );
    cloud.with(|s| s.fault = Fault::None);
    eventually(
        "cp1 recovers from throttling by itself",
        Duration::from_secs(30),
        || async {
            let cp = cps.get("cp1").await.ok()?;
            (condition(&cp, "Ready")?.status == "True"
                && cp.status.as_ref()?.version.as_deref() == Some("v1.33"))
            .then_some(())
        },
    )
    .await;

    // Terminal: Ready=False with the documented reason, and no retry loop.
    cloud.with(|s| s.fault = Fault::NameConflict);
    cps.patch(
        "cp1",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"version": "v1.34"}})),
    )
    .await
    .unwrap();
    eventually(
        "cp1 reports NameConflict",
        Duration::from_secs(30),
        || async {
            let cp = cps.get("cp1").await.ok()?;
            let ready = condition(&cp, "Ready")?;
            (ready.status == "False" && ready.reason == "NameConflict").then_some(())
        },
    )
    .await;
    let calls_terminal = cloud.calls();
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert!(
        cloud.calls() <= calls_terminal + 1,
        "terminal errors must not loop: {} calls in 4s",
        cloud.calls() - calls_terminal
    );
    cloud.with(|s| s.fault = Fault::None);
    cps.patch(
        "cp1",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"version": "v1.33"}})),
    )
    .await
    .unwrap();
    eventually(
        "a spec change after a terminal error is reconciled",
        Duration::from_secs(30),
        || async {
            let cp = cps.get("cp1").await.ok()?;
            (condition(&cp, "Ready")?.status == "True"
                && cp.status.as_ref()?.observed_generation == cp.metadata.generation)
                .then_some(())
        },
    )
    .await;

    // Events: only on transitions, with the provider as reporter.
    let events = Api::<k8s_openapi::api::events::v1::Event>::namespaced(client.clone(), NS)
        .list(&Default::default())
        .await
        .unwrap();
    let ours: Vec<_> = events
        .items
        .iter()
        .filter(|e| e.reporting_controller.as_deref() == Some(PROVIDER))
        .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some("cp1"))
        .collect();
    let reasons: Vec<&str> = ours.iter().filter_map(|e| e.reason.as_deref()).collect();
    for expected in ["Ready", "Paused", "NotPaused", "Throttled", "NameConflict"] {
        assert!(
            reasons.contains(&expected),
            "no {expected} event in {reasons:?}"
        );
    }
    assert!(
        ours.iter().all(|e| e.type_.as_deref()
            == Some(
                if e.reason.as_deref() == Some("Throttled")
                    || e.reason.as_deref() == Some("NameConflict")
                {
                    "Warning"
                } else {
                    "Normal"
                }
            )),
        "{ours:?}"
    );

    // C42: deletion keeps the finalizer until the cloud confirms.
    cloud.with(|s| s.hold_deletion = true);
    cps.delete("cp1", &DeleteParams::default()).await.unwrap();
    eventually("cp1 reports Deleting", Duration::from_secs(30), || async {
        let cp = cps.get("cp1").await.ok()?;
        let ready = condition(&cp, "Ready")?;
        (ready.status == "False" && ready.reason == "Deleting").then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let held = cps
        .get("cp1")
        .await
        .expect("cp1 still exists while the cloud deletes");
    assert!(held.finalizers().iter().any(|f| f == FINALIZER));
    assert!(cloud.version_of(&format!("{NS}/cp1")).is_some());
    cloud.with(|s| s.hold_deletion = false);
    eventually(
        "cp1 disappears once the cloud says gone",
        Duration::from_secs(30),
        || async { cps.get_opt("cp1").await.ok()?.is_none().then_some(()) },
    )
    .await;
    assert_eq!(cloud.version_of(&format!("{NS}/cp1")), None);

    // Operability: metrics count passes and cloud calls; the lease names us.
    let (code, metrics) = http_get(port, "/metrics").await.expect("metrics answer");
    assert_eq!(code, 200);
    assert!(
        metrics
            .contains(r#"capi_provider_reconciles_total{provider="test",kind="TestControlPlane"}"#),
        "{metrics}"
    );
    assert!(
        metrics.contains(r#"operation="EnsureCluster",outcome="success"}"#),
        "{metrics}"
    );
    assert!(
        metrics.contains(r#"capi_provider_leader{provider="test"} 1"#),
        "{metrics}"
    );
    let lease = Api::<Lease>::namespaced(client.clone(), NS)
        .get("test-provider-leader")
        .await
        .expect("the leader lease exists");
    assert!(lease.spec.and_then(|s| s.holder_identity).is_some());

    assert!(
        cloud.with(|s| s.violations.is_empty()),
        "{:?}",
        cloud.with(|s| s.violations.clone())
    );

    stop_tx.send(()).unwrap();
    let result = tokio::time::timeout(Duration::from_secs(30), provider)
        .await
        .expect("provider stops in time")
        .expect("provider task");
    assert!(result.is_ok(), "{result:?}");
    recorder.abort();
    // Clean up the Clusters so core's finalizers do not hold the plane.
    let _ = clusters
        .delete("c-unfiltered", &DeleteParams::default())
        .await;
    plane.stop().await;
}

#[test]
fn the_test_kind_is_a_namespaced_control_plane_with_a_status_subresource() {
    let crd = crd();
    assert_eq!(crd.spec.scope, "Namespaced");
    assert_eq!(
        crd.metadata.name.as_deref(),
        Some("testcontrolplanes.controlplane.cluster.x-k8s.io")
    );
    assert!(
        crd.spec.versions[0]
            .subresources
            .as_ref()
            .and_then(|s| s.status.as_ref())
            .is_some()
    );
    assert_eq!(
        TestControlPlane::group(&()),
        "controlplane.cluster.x-k8s.io"
    );
}
