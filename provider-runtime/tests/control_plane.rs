//! The generic ControlPlane reconciler over a made-up cloud, on the real management plane
//! (kube-apiserver, etcd, Cluster API core).
//!
//! The cloud here is the whole of what a provider writes for the role: an in-memory "XKS" whose
//! clusters take a pass to create and to upgrade, with logging as its one change of its own. The
//! kernel does the rest: ownership (a same-named cluster that is not ours is left alone), one
//! minor at a time, status, conditions, the kubeconfig Secrets, `spec.controlPlaneEndpoint`,
//! and deletion.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::BTreeMap;
use std::time::Duration;

use contract::api::{
    ControlPlaneSpecCommon, ControlPlaneStatusCommon, Endpoint, EndpointName, Operation,
    RequestOverridesStatus,
};
use contract::capi::Cluster;
use contract::conditions::Reason;
use contract::idempotency::EKS_REQUEST_TOKEN;
use contract::kubeconfig::ExecPlugin;
use contract::plan::{CloudStep, Lifecycle, OperationState};
use contract::version::KubeVersion;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::{Api, CustomResource, CustomResourceExt};
use provider_runtime::control_plane::{
    ControlPlaneCloud, ControlPlaneProfile, ControlPlaneReconciler, Created, Deletion,
    ManagedCluster, ManagedControlPlane, Request, Started,
};
use provider_runtime::kubeconfig::{MintedToken, TokenSource};
use provider_runtime::{CloudCalls, ProviderError, ProviderObject, Role};
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
    fn spec_common(&self) -> &ControlPlaneSpecCommon {
        &self.spec.common
    }
    fn status_common(&self) -> Option<&ControlPlaneStatusCommon> {
        self.status.as_ref().map(|s| &s.common)
    }
    fn request_overrides_status(&self) -> Option<&RequestOverridesStatus> {
        self.status.as_ref()?.request_overrides.as_ref()
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
}

type Xks = support::Cloud<XksState>;

struct XksTokens;

impl TokenSource for XksTokens {
    fn lifetime(&self) -> Duration {
        Duration::from_secs(3600)
    }
    fn expires_at(&self, token: &str) -> Option<jiff::Timestamp> {
        let second: i64 = token.strip_prefix("xks-")?.parse().ok()?;
        jiff::Timestamp::from_second(second).ok()
    }
    async fn mint(&self, now: jiff::Timestamp) -> Result<MintedToken, ProviderError> {
        let expires_at = now + Duration::from_secs(3600);
        Ok(MintedToken {
            token: format!("xks-{}", expires_at.as_second()),
            expires_at,
        })
    }
}

/// The cloud side: every method is a line or a few over the in-memory state.
impl ControlPlaneCloud for Xks {
    type Object = XKSControlPlane;
    type Infra = ();
    type Scope = String;
    type Detail = ();
    type Extra = ();
    type Change = bool;
    type Status = XKSControlPlaneStatus;
    type Tokens<'a> = XksTokens;

    fn profile(&self) -> ControlPlaneProfile {
        ControlPlaneProfile {
            cloud: "XKS",
            minors_only: true,
            token_limits: &EKS_REQUEST_TOKEN,
            poll: Duration::from_millis(300),
            rest: Duration::from_secs(60),
        }
    }
    async fn infrastructure(
        &self,
        _: &XKSControlPlane,
        _: &Cluster,
        _: &kube::Client,
    ) -> Result<((), bool), ProviderError> {
        Ok(((), true))
    }
    async fn cleanup_infrastructure(
        &self,
        _: &XKSControlPlane,
        _: Option<&Cluster>,
        _: &kube::Client,
        _: &str,
    ) -> Result<Option<()>, ProviderError> {
        Ok(Some(()))
    }
    async fn connect(
        &self,
        cp: &XKSControlPlane,
        _: (),
        _: &kube::Client,
        _: &CloudCalls,
        cluster_name: &str,
    ) -> Result<String, ProviderError> {
        self.with(|s| s.connects += 1);
        Ok(cp
            .spec
            .common
            .cloud_name
            .clone()
            .unwrap_or_else(|| format!("{NS}-{cluster_name}")))
    }
    fn name<'s>(&self, scope: &'s String) -> &'s str {
        scope
    }
    fn additional_tags<'s>(&self, _: &'s String) -> &'s BTreeMap<String, String> {
        static NONE: BTreeMap<String, String> = BTreeMap::new();
        &NONE
    }
    async fn describe(&self, name: &String) -> Result<Option<ManagedCluster<()>>, ProviderError> {
        Ok(self
            .with(|s| {
                s.describes += 1;
                let c = s.clusters.get_mut(name)?;
                // The cloud moves one step per look.
                if c.lifecycle == Lifecycle::Creating {
                    c.lifecycle = Lifecycle::Running;
                    return Some((c.clone(), Lifecycle::Creating));
                }
                Some((c.clone(), c.lifecycle.clone()))
            })
            .map(|(c, lifecycle)| ManagedCluster {
                id: format!("xks://{name}"),
                lifecycle,
                version: c.version.to_string(),
                endpoints: vec![Endpoint {
                    name: EndpointName::Public,
                    host: format!("{name}.xks.example"),
                    port: 443,
                }],
                ca_pem: Ok(Some(
                    b"-----BEGIN CERTIFICATE-----\nWEtT\n-----END CERTIFICATE-----\n".to_vec(),
                )),
                tags: c.tags,
                detail: (),
            }))
    }
    async fn operation_state(
        &self,
        name: &String,
        _: &Operation,
    ) -> Result<Option<OperationState>, ProviderError> {
        Ok(self.with(|s| {
            let c = s.clusters.get_mut(name)?;
            if let Some(to) = c.upgrading_to.take() {
                c.version = to;
                c.lifecycle = Lifecycle::Running;
                return Some(OperationState::Running);
            }
            Some(OperationState::Succeeded)
        }))
    }
    async fn observe_more(&self, _: &String, _: &XKSControlPlane) -> Result<(), ProviderError> {
        Ok(())
    }
    fn diff(&self, cp: &XKSControlPlane, cluster: &ManagedCluster<()>, _: &()) -> CloudStep<bool> {
        let name = cluster.id.trim_start_matches("xks://").to_string();
        let audit = self.with(|s| s.clusters.get(&name).map(|c| c.audit_logs));
        match audit {
            Some(have) if have != cp.spec.common.logging.audit => {
                CloudStep::Change(cp.spec.common.logging.audit)
            }
            _ => CloudStep::Nothing,
        }
    }
    fn describe_change(&self, audit: &bool, name: &str) -> String {
        format!(
            "XKS is turning audit logs of {name} {}",
            if *audit { "on" } else { "off" }
        )
    }
    async fn create(
        &self,
        name: &String,
        cp: &XKSControlPlane,
        version: &KubeVersion,
        request: &Request,
    ) -> Result<Created<()>, ProviderError> {
        self.with(|s| {
            s.writes.push(format!("create {name} {version}"));
            s.clusters.insert(
                name.clone(),
                XksCluster {
                    version: version.without_patch(),
                    lifecycle: Lifecycle::Creating,
                    tags: request.tags.clone(),
                    audit_logs: cp.spec.common.logging.audit,
                    upgrading_to: None,
                },
            );
        });
        Ok(Created {
            id: format!("xks://{name}"),
            overrides: None,
            cluster: None,
        })
    }
    async fn adopt(&self, name: &String, _: &str, request: &Request) -> Result<(), ProviderError> {
        self.with(|s| {
            s.writes.push(format!("adopt {name}"));
            if let Some(c) = s.clusters.get_mut(name) {
                c.tags.extend(request.tags.clone());
            }
        });
        Ok(())
    }
    async fn upgrade(
        &self,
        name: &String,
        to: &KubeVersion,
        _: &Request,
    ) -> Result<Started, ProviderError> {
        self.with(|s| {
            s.writes.push(format!("upgrade {name} {to}"));
            let c = s.clusters.get_mut(name).unwrap();
            c.lifecycle = Lifecycle::Updating;
            c.upgrading_to = Some(*to);
        });
        Ok(Started::Operation(format!("op-{to}")))
    }
    async fn update(
        &self,
        name: &String,
        _: &XKSControlPlane,
        audit: &bool,
        _: &Request,
    ) -> Result<Started, ProviderError> {
        self.with(|s| {
            s.writes.push(format!("logging {name} audit={audit}"));
            s.clusters.get_mut(name).unwrap().audit_logs = *audit;
        });
        Ok(Started::Done)
    }
    async fn delete(&self, name: &String) -> Result<Deletion, ProviderError> {
        Ok(self.with(|s| {
            s.writes.push(format!("delete {name}"));
            match s.clusters.remove(name) {
                Some(_) => Deletion::Started,
                None => Deletion::Gone,
            }
        }))
    }
    fn tokens<'a>(&'a self, _: &'a String) -> XksTokens {
        XksTokens
    }
    fn exec_plugin(&self, name: &String) -> ExecPlugin {
        ExecPlugin::new("xks", ["get-token", name.as_str()])
    }
    fn status(
        &self,
        common: ControlPlaneStatusCommon,
        request_overrides: Option<RequestOverridesStatus>,
        _: Option<&ManagedCluster<()>>,
    ) -> XKSControlPlaneStatus {
        XKSControlPlaneStatus {
            common,
            observed_generation: None,
            request_overrides,
        }
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
        operator
            .controller::<XKSControlPlane, _>(ControlPlaneReconciler::new(PROVIDER, xks.clone()))
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
