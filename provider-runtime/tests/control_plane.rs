//! The generic ControlPlane reconciler over a made-up cloud, on the real management plane
//! (kube-apiserver, etcd, Cluster API core).
//!
//! The cloud here is the whole of what a provider writes for the role: an in-memory "XKS" whose
//! clusters take a pass to create and to upgrade, with logging as its one change of its own. The
//! kernel does the rest: ownership (a same-named cluster that is not ours is left alone), one
//! minor at a time, status, conditions, the kubeconfig Secrets, `spec.controlPlaneEndpoint`,
//! deletion, and adoption: its plan before any write, accepting it, and orphaning on delete.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::BTreeMap;
use std::time::Duration;

use contract::api::{
    AdoptionPhase, ControlPlaneSpecCommon, ControlPlaneStatusCommon, Endpoint, EndpointName,
    RequestOverridesStatus,
};
use contract::capi::Cluster;
use contract::conditions::Reason;
use contract::idempotency::EKS_REQUEST_TOKEN;
use contract::kubeconfig::ExecPlugin;
use contract::naming::{self, NameLimits};
use contract::plan::{CloudStep, Lifecycle, OperationState};
use contract::version::KubeVersion;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::{Api, CustomResource, CustomResourceExt};
use provider_runtime::cluster_objects::InfraOf;
use provider_runtime::control_plane::{
    Connected, ControlPlaneCloud, ControlPlaneProfile, ControlPlaneReconciler, DescribeChange,
    Look, ManagedCluster, ManagedControlPlane, Observed, Reach, Request, Started, Step, UserExec,
};
use provider_runtime::kubeconfig::{MintedToken, TokenSource};
use provider_runtime::{ProviderError, ProviderObject, Role};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use support::{condition, reason_of};
use test_support::eventually;

const PROVIDER: &str = "xks";
const NS: &str = "kernel-cp";

/// A ControlPlane kind with only the shared blocks.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(
    group = "controlplane.cluster.x-k8s.io",
    version = "v1alpha1",
    kind = "XKSControlPlane",
    namespaced,
    status = "XKSControlPlaneStatus"
)]
#[serde(rename_all = "camelCase")]
pub struct XKSControlPlaneSpec {
    #[serde(flatten)]
    pub common: ControlPlaneSpecCommon,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct XKSControlPlaneStatus {
    #[serde(flatten)]
    pub common: ControlPlaneStatusCommon,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_overrides: Option<RequestOverridesStatus>,
}

impl ProviderObject for XKSControlPlane {
    const ROLE: Role = Role::ControlPlane;
    fn conditions(&self) -> &[Condition] {
        self.status
            .as_ref()
            .map(|s| s.common.conditions.as_slice())
            .unwrap_or_default()
    }
}

impl ManagedControlPlane for XKSControlPlane {
    type OwnInfra = ();
    type Observed = ();
    type Status = XKSControlPlaneStatus;
    const CLUSTER_NAMES: &'static NameLimits = &naming::EKS_CLUSTER;
    fn spec_common(&self) -> &ControlPlaneSpecCommon {
        &self.spec.common
    }
    fn status_common(&self) -> Option<&ControlPlaneStatusCommon> {
        self.status.as_ref().map(|s| &s.common)
    }
    fn request_overrides_status(&self) -> Option<&RequestOverridesStatus> {
        self.status.as_ref()?.request_overrides.as_ref()
    }
    fn own_infrastructure(&self) -> Option<&()> {
        Some(&())
    }
    fn status_of(
        common: ControlPlaneStatusCommon,
        request_overrides: Option<RequestOverridesStatus>,
        _: Option<()>,
    ) -> XKSControlPlaneStatus {
        XKSControlPlaneStatus {
            common,
            observed_generation: None,
            request_overrides,
        }
    }
}

/// One cluster of the made-up cloud.
#[derive(Clone, Debug)]
struct XksCluster {
    version: KubeVersion,
    lifecycle: Lifecycle,
    tags: BTreeMap<String, String>,
    audit_logs: bool,
    /// The version an upgrade in flight moves to.
    upgrading_to: Option<KubeVersion>,
}

#[derive(Default)]
struct XksState {
    clusters: BTreeMap<String, XksCluster>,
    /// Every call that changes something, in order.
    writes: Vec<String>,
    /// Passes that got as far as the cloud (each connects), and the describes among them.
    connects: usize,
    describes: usize,
    /// Tag calls fail (the provider going down before its tag goes out), and how many came.
    tags_fail: bool,
    tag_attempts: usize,
}

type Xks = support::Cloud<XksState>;

impl XksCluster {
    fn new(version: KubeVersion, tags: BTreeMap<String, String>, audit_logs: bool) -> Self {
        let (lifecycle, version) = (Lifecycle::Creating, version.without_patch());
        Self {
            version,
            lifecycle,
            tags,
            audit_logs,
            upgrading_to: None,
        }
    }

    fn upgrade(&mut self, to: KubeVersion) {
        (self.lifecycle, self.upgrading_to) = (Lifecycle::Updating, Some(to));
    }
}

impl XksState {
    /// A describe: the cluster as it is, then the world moves one step (a create or an
    /// upgrade finishes).
    fn look(&mut self, name: &str) -> Option<XksCluster> {
        self.describes += 1;
        let c = self.clusters.get_mut(name)?;
        let seen = c.clone();
        if let Some(to) = c.upgrading_to.take() {
            c.version = to;
        }
        c.lifecycle = Lifecycle::Running;
        Some(seen)
    }

    fn write(&mut self, what: String) {
        self.writes.push(what);
    }

    /// A create, tracked by the cluster's id.
    fn create(
        &mut self,
        name: &str,
        version: KubeVersion,
        tags: BTreeMap<String, String>,
        audit_logs: bool,
    ) -> Started<ManagedCluster<bool>> {
        self.write(format!("create {name} {version}"));
        let cluster = XksCluster::new(version, tags, audit_logs);
        self.clusters.insert(name.into(), cluster);
        Started::Created {
            id: format!("xks://{name}"),
            observed: None,
            overrides: false,
        }
    }

    /// A delete, with nothing to track; gone when there was nothing.
    fn delete(&mut self, name: &str) -> Started<ManagedCluster<bool>> {
        self.write(format!("delete {name}"));
        let deleted = self.clusters.remove(name);
        deleted.map_or(Started::Gone, |_| Started::Untracked)
    }

    /// A change done at once to an existing cluster.
    fn change(
        &mut self,
        what: String,
        name: &str,
        f: impl FnOnce(&mut XksCluster),
    ) -> Started<ManagedCluster<bool>> {
        self.write(what);
        self.clusters.get_mut(name).map_or(Started::Gone, |c| {
            f(c);
            Started::Done
        })
    }
}

struct XksTokens;

impl TokenSource for XksTokens {
    fn lifetime(&self) -> Duration {
        Duration::from_secs(3600)
    }
    fn expires_at(&self, token: &str) -> Option<jiff::Timestamp> {
        let second: i64 = token.strip_prefix("xks-")?.parse().ok()?;
        jiff::Timestamp::from_second(second).ok()
    }
    async fn mint(&self, now: jiff::Timestamp, _: &str) -> Result<MintedToken, ProviderError> {
        let expires_at = now + Duration::from_secs(3600);
        Ok(MintedToken {
            token: format!("xks-{}", expires_at.as_second()),
            expires_at,
        })
    }
}

/// The fake's InfraCluster kind (no Cluster of the test names one).
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(
    group = "infrastructure.cluster.x-k8s.io",
    version = "v1alpha1",
    kind = "XKSCluster",
    namespaced
)]
pub struct XKSClusterSpec {}

/// Where an XKS cluster lives: nowhere in particular.
struct Nowhere;

impl InfraOf for Nowhere {
    type InfraCluster = XKSCluster;
    type Own = ();
    const OWN_FIELDS: &'static str = "nothing";
    fn from_infra_cluster(_: &XKSCluster) -> Self {
        Nowhere
    }
    fn from_own((): &()) -> Self {
        Nowhere
    }
    fn locatable(&self) -> bool {
        true
    }
}

/// The audit-logs switch, XKS's one change of its own.
#[derive(Clone, Debug)]
struct Audit(bool);

impl DescribeChange for Audit {
    fn describe(&self, name: &str) -> String {
        let to = if self.0 { "on" } else { "off" };
        format!("XKS is turning audit logs of {name} {to}")
    }
}

const PROFILE: ControlPlaneProfile = ControlPlaneProfile {
    cloud: "XKS",
    minors_only: true,
    token_limits: &EKS_REQUEST_TOKEN,
    create_call: "CreateCluster",
    poll: Duration::from_millis(300),
    rest: Duration::from_secs(60),
};

/// The cloud side: every method is a line or a few over the in-memory cloud.
impl ControlPlaneCloud for Xks {
    type Object = XKSControlPlane;
    type Infra = Nowhere;
    type Desired = bool;
    type Clients = ();
    type Tokens = XksTokens;
    type Detail = bool;
    type Change = Audit;

    fn validate(&self, cp: &XKSControlPlane, _: &Nowhere) -> Result<bool, ProviderError> {
        Ok(cp.spec.common.logging.audit)
    }
    async fn connect(&self, at: Reach<'_, XKSControlPlane, Nowhere>) -> Result<At, ProviderError> {
        self.with(|s| s.connects += 1);
        let name = at.name.to_string();
        let user_exec = UserExec::new(ExecPlugin::new("xks", ["get-token", name.as_str()]));
        Ok(Connected {
            name,
            tags: BTreeMap::new(),
            tokens: XksTokens,
            user_exec,
            clients: (),
        })
    }
    async fn observe(&self, at: &At, look: Look<'_>) -> Result<Observed<bool>, ProviderError> {
        let Some(seen) = self.with(|s| s.look(&at.name)) else {
            return Ok(Observed::nothing());
        };
        let state = match seen.upgrading_to {
            Some(_) => OperationState::Running,
            None => OperationState::Succeeded,
        };
        let cluster = managed(&at.name, seen);
        look.seen(cluster, |_| async { Ok(Some(state)) }).await
    }
    fn diff(&self, audit: &bool, cluster: &ManagedCluster<bool>) -> CloudStep<Audit> {
        (cluster.detail != *audit).then_some(Audit(*audit)).into()
    }
    async fn act(
        &self,
        at: &At,
        step: Step<'_, bool, Audit>,
        r: &Request,
    ) -> Result<Started<ManagedCluster<bool>>, ProviderError> {
        let (name, tags) = (at.name.as_str(), r.tags.clone());
        if matches!(step, Step::Tag { .. }) {
            let fail = self.with(|s| {
                s.tag_attempts += 1;
                s.tags_fail
            });
            if fail {
                return Err(ProviderError::cloud("unavailable", "XKS is unavailable"));
            }
        }
        Ok(self.with(|s| match step {
            Step::Create { desired, version } => s.create(name, *version, tags, *desired),
            Step::Tag { .. } => s.change(format!("adopt {name}"), name, |c| c.tags.extend(tags)),
            Step::Untag { key, .. } => s.change(format!("untag {name}"), name, |c| {
                c.tags.remove(key);
            }),
            Step::Upgrade { to } => {
                s.change(format!("upgrade {name} {to}"), name, |c| c.upgrade(*to));
                Started::Operation(format!("op-{to}"))
            }
            Step::Update {
                change: Audit(on), ..
            } => s.change(format!("logging {name} audit={on}"), name, |c| {
                c.audit_logs = *on
            }),
            Step::Delete => s.delete(name),
        }))
    }
    fn report(&self, _: &bool) {}
    fn as_spec(&self, audit: &bool) -> serde_json::Value {
        json!({"logging": {"audit": audit}})
    }
}

type At = Connected<(), XksTokens>;

/// An XKS cluster as the kernel reads it.
fn managed(name: &str, c: XksCluster) -> ManagedCluster<bool> {
    let ca = b"-----BEGIN CERTIFICATE-----\nWEtT\n-----END CERTIFICATE-----\n".to_vec();
    let endpoint = Endpoint {
        name: EndpointName::Public,
        host: format!("{name}.xks.example"),
        port: 443,
    };
    ManagedCluster {
        id: format!("xks://{name}"),
        lifecycle: c.lifecycle,
        version: c.version.to_string(),
        endpoints: vec![endpoint],
        ca_pem: Ok(Some(ca)),
        tags: c.tags,
        detail: c.audit_logs,
    }
}

fn cluster(name: &str, control_plane: &str) -> Cluster {
    serde_json::from_value(json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "Cluster",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"controlPlaneRef": {
            "apiGroup": "controlplane.cluster.x-k8s.io", "kind": "XKSControlPlane", "name": control_plane
        }}
    }))
    .unwrap()
}

fn control_plane(name: &str, version: &str, cloud_name: Option<&str>) -> XKSControlPlane {
    let mut cp: XKSControlPlane = serde_json::from_value(json!({
        "apiVersion": "controlplane.cluster.x-k8s.io/v1alpha1",
        "kind": "XKSControlPlane",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"version": version},
    }))
    .unwrap();
    cp.spec.common.cloud_name = cloud_name.map(str::to_string);
    cp
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cloud_written_on_the_kernel_gets_the_whole_control_plane_contract() {
    let (plane, client) = support::plane_with(XKSControlPlane::crd(), NS).await;
    let cps: Api<XKSControlPlane> = Api::namespaced(client.clone(), NS);
    let clusters: Api<Cluster> = Api::namespaced(client.clone(), NS);
    let secrets: Api<Secret> = Api::namespaced(client.clone(), NS);

    // A same-named cluster someone else made.
    let xks = Xks::default();
    xks.with(|s| {
        s.clusters.insert(
            "taken".into(),
            XksCluster {
                version: KubeVersion::new(1, 30),
                lifecycle: Lifecycle::Running,
                tags: BTreeMap::from([("team".into(), "other".into())]),
                audit_logs: false,
                upgrading_to: None,
            },
        );
    });

    let provider = support::run(PROVIDER, &client, |operator| {
        operator.controller::<XKSControlPlane, _>(ControlPlaneReconciler::new(
            PROVIDER,
            PROFILE,
            xks.clone(),
        ))
    });

    cps.create(&PostParams::default(), &control_plane("cp1", "v1.30", None))
        .await
        .unwrap();
    clusters
        .create(&PostParams::default(), &cluster("c1", "cp1"))
        .await
        .unwrap();
    cps.create(
        &PostParams::default(),
        &control_plane("cp2", "v1.30", Some("taken")),
    )
    .await
    .unwrap();
    clusters
        .create(&PostParams::default(), &cluster("c2", "cp2"))
        .await
        .unwrap();

    // Created, then ready: status, every condition, the endpoint, both Secrets.
    let cp1 = eventually("cp1 is ready", Duration::from_secs(90), || async {
        let cp = cps.get("cp1").await.ok()?;
        (reason_of(&cp, "Ready") == "True/Ready").then_some(cp)
    })
    .await;
    let status = cp1.status.clone().unwrap().common;
    assert_eq!(status.version.as_deref(), Some("v1.30"));
    assert_eq!(status.cloud_id.as_deref(), Some("xks://kernel-cp-c1"));
    assert!(status.initialized && status.ready && status.external_managed_control_plane);
    assert!(status.kubeconfig.is_some());
    assert_eq!(reason_of(&cp1, "Available"), "True/Ready");
    assert_eq!(reason_of(&cp1, "KubeconfigReady"), "True/Ready");
    assert_eq!(reason_of(&cp1, "Upgrading"), "False/UpToDate");
    assert_eq!(
        cp1.spec
            .common
            .control_plane_endpoint
            .as_ref()
            .map(|e| e.host.as_str()),
        Some("kernel-cp-c1.xks.example")
    );
    let contract_secret = secrets.get("c1-kubeconfig").await.expect("c1-kubeconfig");
    let value = contract_secret.data.unwrap()["value"].0.clone();
    let kubeconfig = String::from_utf8(value).unwrap();
    assert!(
        kubeconfig.contains("https://kernel-cp-c1.xks.example:443"),
        "{kubeconfig}"
    );
    assert!(kubeconfig.contains("token: xks-"), "{kubeconfig}");
    let user = secrets
        .get("c1-user-kubeconfig")
        .await
        .expect("c1-user-kubeconfig");
    let user = String::from_utf8(user.data.unwrap()["value"].0.clone()).unwrap();
    assert!(user.contains("get-token"), "{user}");

    // At rest, a pass within the rest interval (here one an annotation triggers; in life the
    // token refresh) plans from the last look: it reaches the cloud but does not describe.
    let describes = xks.with(|s| s.describes);
    for n in 0..3 {
        let connects = xks.with(|s| s.connects);
        let poke = json!({"metadata": {"annotations": {"example.com/poke": n.to_string()}}});
        cps.patch("cp1", &PatchParams::default(), &Patch::Merge(&poke))
            .await
            .unwrap();
        eventually("cp1 passes again", Duration::from_secs(30), || async {
            (xks.with(|s| s.connects) > connects).then_some(())
        })
        .await;
    }
    assert_eq!(
        xks.with(|s| s.describes),
        describes,
        "a pass at rest within the rest interval describes nothing"
    );

    // Not ours: nothing touched, the whole set says so.
    let cp2 = eventually(
        "cp2 reports the conflict",
        Duration::from_secs(60),
        || async {
            let cp = cps.get("cp2").await.ok()?;
            (reason_of(&cp, "Ready") == "False/NameConflict").then_some(cp)
        },
    )
    .await;
    for type_ in ["Available", "KubeconfigReady"] {
        let c = condition(&cp2, type_).unwrap();
        assert_eq!(c.reason, Reason::NameConflict.as_str(), "{type_}");
        assert!(
            c.message
                .starts_with("The XKS cluster taken already exists"),
            "{}",
            c.message
        );
    }
    assert!(cp2.spec.common.control_plane_endpoint.is_none());
    assert!(secrets.get_opt("c2-kubeconfig").await.unwrap().is_none());

    // Two minors ahead and a change of the cloud's own: one minor at a time, then the change.
    let patch = json!({"spec": {"version": "v1.32", "logging": {"audit": true}}});
    cps.patch("cp1", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    eventually(
        "cp1 runs v1.32 with audit logs",
        Duration::from_secs(90),
        || async {
            let cp = cps.get("cp1").await.ok()?;
            let at = cp.status.as_ref()?.common.version.as_deref() == Some("v1.32");
            let audit = xks.with(|s| s.clusters.get("kernel-cp-c1").is_some_and(|c| c.audit_logs));
            (at && audit && reason_of(&cp, "Ready") == "True/Ready").then_some(())
        },
    )
    .await;
    let writes = xks.with(|s| s.writes.clone());
    assert_eq!(
        writes,
        [
            "create kernel-cp-c1 v1.30",
            "upgrade kernel-cp-c1 v1.31",
            "upgrade kernel-cp-c1 v1.32",
            "logging kernel-cp-c1 audit=true",
        ],
        "one minor at a time, then the cloud's own change; nothing for the cluster not ours"
    );

    // Deletion: ours goes, the other stays.
    clusters
        .delete("c1", &DeleteParams::default())
        .await
        .unwrap();
    clusters
        .delete("c2", &DeleteParams::default())
        .await
        .unwrap();
    eventually(
        "both control planes are gone",
        Duration::from_secs(90),
        || async {
            let left = cps.list(&Default::default()).await.ok()?.items.len();
            (left == 0).then_some(())
        },
    )
    .await;
    xks.with(|s| {
        assert!(!s.clusters.contains_key("kernel-cp-c1"));
        assert!(
            s.clusters.contains_key("taken"),
            "the cluster not ours stays"
        );
        assert!(
            !s.writes.iter().any(|w| w.contains("taken")),
            "{:?}",
            s.writes
        );
    });

    provider.stop().await;
    drop(plane);
}

/// A cluster made outside Cluster API: v1.31, audit logs on, someone else's tag.
fn legacy() -> XksCluster {
    XksCluster {
        version: KubeVersion::new(1, 31),
        lifecycle: Lifecycle::Running,
        tags: BTreeMap::from([("team".into(), "other".into())]),
        audit_logs: true,
        upgrading_to: None,
    }
}

/// Creates a control plane adopting the cloud cluster `cloud_name`, with `adoption` as its
/// block, as a user's YAML would: only the fields given are sent (a typed object would send
/// every default, and a field sent is a field set).
async fn adopting(
    cps: &Api<XKSControlPlane>,
    name: &str,
    cloud_name: &str,
    adoption: serde_json::Value,
) {
    let body = json!({
        "apiVersion": "controlplane.cluster.x-k8s.io/v1alpha1",
        "kind": "XKSControlPlane",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"version": "v1.32", "cloudName": cloud_name, "adoption": adoption},
    });
    cps.patch(name, &PatchParams::apply("user"), &Patch::Apply(&body))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_adoption_shows_its_plan_writes_only_once_accepted_and_orphan_leaves_the_cluster() {
    let (plane, client) = support::plane_with(XKSControlPlane::crd(), NS).await;
    let cps: Api<XKSControlPlane> = Api::namespaced(client.clone(), NS);
    let clusters: Api<Cluster> = Api::namespaced(client.clone(), NS);
    let xks = Xks::default();
    xks.with(|s| s.clusters.insert("legacy".into(), legacy()));
    let provider = support::run(PROVIDER, &client, |operator| {
        operator.controller::<XKSControlPlane, _>(ControlPlaneReconciler::new(
            PROVIDER,
            PROFILE,
            xks.clone(),
        ))
    });
    let writes = || xks.with(|s| s.writes.clone());
    let ready_as = |name: &'static str, want: &'static str| {
        let cps = cps.clone();
        eventually(want, Duration::from_secs(60), move || {
            let cps = cps.clone();
            async move {
                let cp = cps.get(name).await.ok()?;
                (reason_of(&cp, "Ready") == want).then_some(cp)
            }
        })
    };

    // The plan: the version the spec asks for; the audit logs nobody set are kept. Nothing
    // is written.
    adopting(&cps, "cp3", "legacy", json!({})).await;
    clusters
        .create(&PostParams::default(), &cluster("c3", "cp3"))
        .await
        .unwrap();
    let planned = ready_as("cp3", "False/AdoptionPlanned").await;
    let message = condition(&planned, "Ready").unwrap().message.clone();
    let adoption = planned.status.unwrap().common.adoption.unwrap();
    assert_eq!(adoption.phase, AdoptionPhase::Planned);
    assert_eq!(adoption.cloud_id.as_deref(), Some("xks://legacy"));
    let rows: Vec<_> = adoption
        .changes
        .iter()
        .map(|c| (c.field.as_str(), c.cloud.as_str(), c.spec.as_str()))
        .collect();
    assert_eq!(rows, [("spec.version", "v1.31", "v1.32")]);
    assert_eq!(adoption.kept, ["spec.logging.audit"]);
    assert!(
        message.contains("spec.version v1.31 → v1.32")
            && message.contains("spec.adoption.accept: true"),
        "{message}"
    );
    assert!(writes().is_empty(), "a plan writes nothing: {:?}", writes());

    // Accepted: the kept field lands in the spec, then the cluster is tagged and converged;
    // audit logs stay on. The provider is killed in between (its tag never goes out) and a new
    // one takes over: one tag, nothing done twice.
    xks.with(|s| s.tags_fail = true);
    let accept = json!({"spec": {"adoption": {"accept": true}}});
    cps.patch("cp3", &PatchParams::default(), &Patch::Merge(&accept))
        .await
        .unwrap();
    eventually(
        "the kept field written and a tag tried",
        Duration::from_secs(60),
        || async {
            let cp = cps.get("cp3").await.ok()?;
            let tried = xks.with(|s| s.tag_attempts) > 0;
            (cp.spec.common.logging.audit && tried).then_some(())
        },
    )
    .await;
    provider.stop().await;
    assert!(writes().is_empty(), "{:?}", writes());
    xks.with(|s| s.tags_fail = false);
    let provider = support::run(PROVIDER, &client, |operator| {
        operator.controller::<XKSControlPlane, _>(ControlPlaneReconciler::new(
            PROVIDER,
            PROFILE,
            xks.clone(),
        ))
    });
    let adopted = ready_as("cp3", "True/Ready").await;
    assert!(
        adopted.spec.common.logging.audit,
        "the cloud's value is kept in the spec"
    );
    assert_eq!(
        adopted.status.unwrap().common.adoption.unwrap().phase,
        AdoptionPhase::Adopted
    );
    assert_eq!(writes(), ["adopt legacy", "upgrade legacy v1.32"]);
    let ours = naming::ownership_tag(PROVIDER, NS, "c3");
    xks.with(|s| {
        let c = &s.clusters["legacy"];
        assert!(c.audit_logs);
        assert_eq!(c.tags.get(&ours.0), Some(&ours.1));
    });

    // Orphan: the cluster stays, without our tag, and nothing else changed.
    let orphan = json!({"spec": {"deletionPolicy": "Orphan"}});
    cps.patch("cp3", &PatchParams::default(), &Patch::Merge(&orphan))
        .await
        .unwrap();
    clusters
        .delete("c3", &DeleteParams::default())
        .await
        .unwrap();
    eventually("cp3 is gone", Duration::from_secs(60), || async {
        cps.get_opt("cp3").await.ok()?.is_none().then_some(())
    })
    .await;
    assert_eq!(
        writes(),
        ["adopt legacy", "upgrade legacy v1.32", "untag legacy"]
    );
    xks.with(|s| {
        let c = &s.clusters["legacy"];
        assert!(!c.tags.contains_key(&ours.0), "{:?}", c.tags);
        assert_eq!(c.tags.get("team").map(String::as_str), Some("other"));
    });

    // Adopted again by another Cluster, accepted from the start.
    adopting(
        &cps,
        "cp4",
        "legacy",
        json!({"id": "XKS://legacy", "accept": true}),
    )
    .await;
    clusters
        .create(&PostParams::default(), &cluster("c4", "cp4"))
        .await
        .unwrap();
    ready_as("cp4", "True/Ready").await;
    let again = naming::ownership_tag(PROVIDER, NS, "c4");
    xks.with(|s| assert_eq!(s.clusters["legacy"].tags.get(&again.0), Some(&again.1)));

    // Refused, with nothing written: another Cluster's, another identity, nothing by that name.
    let before = writes();
    for (cp, cluster_name, cloud_name, adoption, says) in [
        (
            "cp5",
            "c5",
            "legacy",
            json!({"accept": true}),
            "belongs to another cluster",
        ),
        (
            "cp6",
            "c6",
            "legacy",
            json!({"id": "xks://elsewhere"}),
            "not spec.adoption.id xks://elsewhere",
        ),
        (
            "cp7",
            "c7",
            "missing",
            json!({"accept": true}),
            "There is no XKS cluster named missing",
        ),
    ] {
        adopting(&cps, cp, cloud_name, adoption).await;
        clusters
            .create(&PostParams::default(), &cluster(cluster_name, cp))
            .await
            .unwrap();
        let refused = eventually(says, Duration::from_secs(60), || async {
            let cp = cps.get(cp).await.ok()?;
            let ready = condition(&cp, "Ready")?;
            (ready.status == "False" && ready.message.contains(says)).then_some(cp)
        })
        .await;
        let adoption = refused.status.unwrap().common.adoption.unwrap();
        assert_eq!(adoption.phase, AdoptionPhase::Refused, "{cp}");
    }
    assert_eq!(writes(), before, "a refused adoption writes nothing");

    provider.stop().await;
    drop(plane);
}
