//! The generic InfraCluster reconciler over a made-up cloud, on the real management plane
//! (kube-apiserver, etcd, Cluster API core).
//!
//! The cloud here is the whole of what a provider writes for the role: an in-memory "XKS" whose
//! networks take a pass to create, and whose own rule is that a block may be no larger than /20.
//! The kernel does the rest: the spec refused with the cloud's sentence and no call, the shared
//! status (failure domains, the `provisioned` milestone that drift does not undo), NetworkReady
//! and Ready, a brought network read and never touched, and deletion of only what is ours.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::BTreeMap;
use std::time::Duration;

use contract::api::{ClusterSpecCommon, InfraClusterStatusCommon, NetworkStatus, SubnetStatus};
use contract::capi::Cluster;
use contract::conditions::{ConditionType, DesiredCondition, Reason};
use contract::ownership::Owner;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::{ApiResource, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::{Api, CustomResource, CustomResourceExt};
use provider_runtime::infra_cluster::{
    InfraClusterCloud, InfraClusterReconciler, ManagedInfraCluster, NetworkMode, NetworkReport,
    Reach, ReportOf, SeenNetwork,
};
use provider_runtime::{Cleanup, PassContext, ProviderError, ProviderObject, Role};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use support::{message_of, reason_of};
use test_support::eventually;

const PROVIDER: &str = "xks";
const NS: &str = "kernel-infra";

/// An InfraCluster kind with the shared blocks and a network block of the cloud's.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(
    group = "infrastructure.cluster.x-k8s.io",
    version = "v1alpha1",
    kind = "XKSCluster",
    namespaced,
    status = "XKSClusterStatus"
)]
#[serde(rename_all = "camelCase")]
pub struct XKSClusterSpec {
    #[serde(flatten)]
    pub common: ClusterSpecCommon,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct XKSClusterStatus {
    #[serde(flatten)]
    pub common: InfraClusterStatusCommon,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xks: Option<XksObserved>,
}

/// What only XKS reports of a network.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct XksObserved {
    pub gateway: String,
}

impl ProviderObject for XKSCluster {
    const ROLE: Role = Role::InfraCluster;
    fn conditions(&self) -> &[Condition] {
        self.status
            .as_ref()
            .map(|s| s.common.conditions.as_slice())
            .unwrap_or_default()
    }
}

impl ManagedInfraCluster for XKSCluster {
    type Observed = XksObserved;
    type Status = XKSClusterStatus;
    fn spec_common(&self) -> &ClusterSpecCommon {
        &self.spec.common
    }
    fn status_common(&self) -> Option<&InfraClusterStatusCommon> {
        self.status.as_ref().map(|s| &s.common)
    }
    fn observed(&self) -> Option<&XksObserved> {
        self.status.as_ref()?.xks.as_ref()
    }
    fn status_of(common: InfraClusterStatusCommon, xks: Option<XksObserved>) -> XKSClusterStatus {
        XKSClusterStatus {
            common,
            observed_generation: None,
            xks,
        }
    }
}

/// An XKS network: one subnet per zone.
fn xks_network(id: &str, managed: bool) -> SeenNetwork<XksObserved> {
    SeenNetwork {
        shared: NetworkStatus {
            id: id.to_string(),
            cidr_block: None,
            managed,
            subnets: ZONES
                .iter()
                .map(|z| SubnetStatus {
                    id: format!("{id}-{z}"),
                    cidr_block: None,
                    zones: vec![z.to_string()],
                    public: false,
                })
                .collect(),
        },
        own: XksObserved {
            gateway: format!("gw-{id}"),
        },
    }
}

#[derive(Default)]
struct XksState {
    /// Network id → (owner tag value or none for a brought one, ready).
    networks: BTreeMap<String, (Option<String>, bool)>,
    /// Every call that changes something, in order.
    writes: Vec<String>,
    /// Networks being created stay so.
    stuck: bool,
}

type Xks = support::Cloud<XksState>;

const ZONES: [&str; 2] = ["xk-1a", "xk-1b"];
const SOON: Duration = Duration::from_millis(300);

impl InfraClusterCloud for Xks {
    type Object = XKSCluster;
    type Clients = ();
    type Plan = String;
    fn mode(&self, obj: &XKSCluster) -> Result<NetworkMode<String>, String> {
        let network = obj.spec.common.network.clone().unwrap_or_default();
        if network.is_bring_your_own() {
            return Ok(NetworkMode::Brought);
        }
        let block = network.cidr_block.unwrap_or_else(|| "10.0.0.0/20".into());
        let prefix: u8 = block
            .rsplit_once('/')
            .and_then(|(_, p)| p.parse().ok())
            .unwrap_or(0);
        if prefix < 20 {
            return Err(format!(
                "spec.network.cidrBlock {block} is larger than an XKS network may be (/20 at most)"
            ));
        }
        Ok(NetworkMode::Create(block))
    }

    async fn connect(&self, reach: Reach<'_, XKSCluster>) -> Result<(), ProviderError> {
        if reach.object.spec.common.region.is_empty() {
            return Err(ProviderError::terminal(
                Reason::InvalidSpec,
                "no XKS region: set spec.region",
            ));
        }
        Ok(())
    }

    async fn observe_brought(&self, obj: &XKSCluster, _: &()) -> ReportOf<XKSCluster> {
        let id = obj
            .spec
            .common
            .network
            .as_ref()
            .and_then(|n| n.id.clone())
            .unwrap_or_default();
        if self.with(|s| s.networks.contains_key(&id)) {
            let network = xks_network(&id, false);
            NetworkReport::ready(network, format!("using the brought network {id}"), SOON)
        } else {
            NetworkReport::failed(ProviderError::terminal(
                Reason::InvalidSpec,
                format!("the brought network {id} does not exist"),
            ))
        }
    }

    async fn build(
        &self,
        _: &XKSCluster,
        _: &PassContext,
        _: &(),
        owner: Owner,
        block: String,
    ) -> Result<ReportOf<XKSCluster>, ProviderError> {
        let (_, tag) = owner.tag();
        let id = format!("net-{}-{}", owner.namespace(), owner.cluster());
        let ready = self.with(|s| match s.networks.get_mut(&id) {
            Some((_, ready)) => {
                *ready = !s.stuck;
                *ready
            }
            None => {
                s.networks.insert(id.clone(), (Some(tag), false));
                s.writes.push(format!("create {id} {block}"));
                false
            }
        });
        let network = xks_network(&id, true);
        Ok(if ready {
            NetworkReport::ready(network, format!("network {id} is ready"), SOON)
        } else {
            NetworkReport {
                network: Some(network),
                complete: false,
                condition: DesiredCondition::false_(
                    ConditionType::NetworkReady,
                    Reason::Creating,
                    format!("creating network {id}"),
                ),
                requeue: SOON,
                error: None,
            }
        })
    }

    async fn release(&self, _: &(), owner: Owner) -> Result<Option<String>, ProviderError> {
        let (_, tag) = owner.tag();
        self.with(|s| {
            for (id, (t, _)) in &mut s.networks {
                if t.as_deref() == Some(tag.as_str()) {
                    *t = None;
                    s.writes.push(format!("untag {id}"));
                }
            }
        });
        Ok(None)
    }

    async fn tear_down(&self, _: &(), owner: Owner) -> Result<Cleanup, ProviderError> {
        let (_, tag) = owner.tag();
        let ours = self.with(|s| {
            s.networks
                .iter()
                .find(|(_, (t, _))| t.as_deref() == Some(tag.as_str()))
                .map(|(id, _)| id.clone())
        });
        Ok(match ours {
            Some(id) => {
                self.with(|s| {
                    s.networks.remove(&id);
                    s.writes.push(format!("delete {id}"));
                });
                Cleanup::pending(SOON, format!("deleting network {id}"))
            }
            None => Cleanup::Done,
        })
    }
}

fn cluster(name: &str, infra: &str) -> Cluster {
    serde_json::from_value(json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "Cluster",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"infrastructureRef": {
            "apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "XKSCluster", "name": infra
        }}
    }))
    .unwrap()
}

fn infra(name: &str, network: serde_json::Value) -> XKSCluster {
    serde_json::from_value(json!({
        "apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1",
        "kind": "XKSCluster",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"region": "xk-1", "network": network},
    }))
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cloud_written_on_the_kernel_gets_the_whole_infra_cluster_contract() {
    let (plane, client) = support::plane_with(XKSCluster::crd(), NS).await;
    let infras: Api<XKSCluster> = Api::namespaced(client.clone(), NS);
    let clusters: Api<Cluster> = Api::namespaced(client.clone(), NS);

    let xks = Xks::default();
    xks.with(|s| {
        s.networks.insert("net-shared".into(), (None, true));
    });

    let provider = support::run(PROVIDER, &client, |operator| {
        operator.controller::<XKSCluster, _>(InfraClusterReconciler::new(PROVIDER, xks.clone()))
    });

    for (name, network) in [
        ("made", json!({"cidrBlock": "10.1.0.0/20"})),
        ("brought", json!({"id": "net-shared"})),
        ("toolarge", json!({"cidrBlock": "10.0.0.0/16"})),
    ] {
        infras
            .create(&PostParams::default(), &infra(name, network))
            .await
            .unwrap();
        clusters
            .create(&PostParams::default(), &cluster(name, name))
            .await
            .unwrap();
    }

    // Created over two passes: the shared status and both conditions.
    let made = eventually("made is ready", Duration::from_secs(90), || async {
        let c = infras.get("made").await.ok()?;
        (reason_of(&c, "Ready") == "True/Ready").then_some(c)
    })
    .await;
    let status = made.status.clone().unwrap();
    assert_eq!(reason_of(&made, "NetworkReady"), "True/Ready");
    assert_eq!(
        status.common.initialization.and_then(|i| i.provisioned),
        Some(true)
    );
    assert!(status.common.ready, "the v1beta1 field too");
    let zones: Vec<&str> = status
        .common
        .failure_domains
        .iter()
        .map(|d| d.name.as_str())
        .collect();
    assert_eq!(zones, ZONES);
    assert_eq!(
        status.common.network.map(|n| n.id).as_deref(),
        Some("net-kernel-infra-made")
    );

    // Brought: read, ready, never written.
    let brought = eventually("brought is ready", Duration::from_secs(60), || async {
        let c = infras.get("brought").await.ok()?;
        (reason_of(&c, "NetworkReady") == "True/Ready").then_some(c)
    })
    .await;
    assert_eq!(
        message_of(&brought, "NetworkReady"),
        "Using the brought network net-shared.",
        "in a sentence"
    );

    // The cloud's own rule: refused with its sentence, nothing created, not provisioned.
    let refused = eventually("toolarge is refused", Duration::from_secs(60), || async {
        let c = infras.get("toolarge").await.ok()?;
        (reason_of(&c, "NetworkReady") == "False/InvalidSpec").then_some(c)
    })
    .await;
    assert!(
        message_of(&refused, "NetworkReady").starts_with("spec.network.cidrBlock 10.0.0.0/16"),
        "{}",
        message_of(&refused, "NetworkReady")
    );
    assert!(
        refused
            .status
            .as_ref()
            .and_then(|s| s.common.initialization.as_ref())
            .is_none()
    );

    // Drift: the network vanishes behind the provider's back and is made again; while it is
    // being made, NetworkReady and Ready say so and the milestone stays reached.
    xks.with(|s| {
        s.stuck = true;
        s.networks.remove("net-kernel-infra-made");
    });
    let drifted = eventually(
        "made is being made again",
        Duration::from_secs(60),
        || async {
            let c = infras.get("made").await.ok()?;
            (reason_of(&c, "NetworkReady") == "False/Creating").then_some(c)
        },
    )
    .await;
    assert_eq!(reason_of(&drifted, "Ready"), "False/Creating");
    let common = drifted.status.unwrap().common;
    assert_eq!(
        common.initialization.and_then(|i| i.provisioned),
        Some(true),
        "provisioned is a milestone"
    );
    assert!(common.ready);
    xks.with(|s| s.stuck = false);
    eventually("made is ready again", Duration::from_secs(60), || async {
        let c = infras.get("made").await.ok()?;
        (reason_of(&c, "Ready") == "True/Ready").then_some(())
    })
    .await;

    // Deletion: ours goes, the brought one stays.
    for name in ["made", "brought", "toolarge"] {
        clusters
            .delete(name, &DeleteParams::default())
            .await
            .unwrap();
    }
    eventually(
        "every XKSCluster is gone",
        Duration::from_secs(90),
        || async {
            let left = infras.list(&Default::default()).await.ok()?.items;
            left.is_empty().then_some(())
        },
    )
    .await;
    xks.with(|s| {
        assert!(
            s.networks.contains_key("net-shared"),
            "the brought network stays"
        );
        assert!(!s.networks.contains_key("net-kernel-infra-made"));
        assert_eq!(
            s.writes,
            [
                "create net-kernel-infra-made 10.1.0.0/20",
                "create net-kernel-infra-made 10.1.0.0/20",
                "delete net-kernel-infra-made",
            ],
            "nothing for the brought network or the refused spec"
        );
    });

    // Orphan: the network stays, without this Cluster's tag.
    let mut kept = infra("kept", json!({"cidrBlock": "10.2.0.0/20"}));
    kept.spec.common.deletion_policy = contract::api::DeletionPolicy::Orphan;
    infras.create(&PostParams::default(), &kept).await.unwrap();
    clusters
        .create(&PostParams::default(), &cluster("kept", "kept"))
        .await
        .unwrap();
    eventually("kept is ready", Duration::from_secs(60), || async {
        let c = infras.get("kept").await.ok()?;
        (reason_of(&c, "Ready") == "True/Ready").then_some(())
    })
    .await;
    clusters
        .delete("kept", &DeleteParams::default())
        .await
        .unwrap();
    eventually("kept is gone", Duration::from_secs(60), || async {
        infras.get_opt("kept").await.ok()?.is_none().then_some(())
    })
    .await;
    xks.with(|s| {
        assert_eq!(
            s.networks
                .get("net-kernel-infra-kept")
                .map(|(tag, _)| tag.clone()),
            Some(None),
            "the orphaned network stays, untagged"
        );
        assert_eq!(
            s.writes.last().map(String::as_str),
            Some("untag net-kernel-infra-kept")
        );
    });
    a_credential_is_read_in_the_object_s_namespace_only(&client).await;
    provider.stop().await;
    drop(plane);
}

/// A credential is not used across namespaces. The kernel's `identityRef`
/// has no namespace (no credential allows another namespace, so none may be used from one): a
/// namespace written into it is refused by server-side apply and by strict field validation
/// with the field named, pruned from a plain create, and a Secret of that name in the other
/// namespace is never read.
async fn a_credential_is_read_in_the_object_s_namespace_only(client: &kube::Client) {
    const OTHER: &str = "kernel-infra-credentials";
    test_support::create_namespace(client, OTHER).await;
    let secret = |ns: &str| -> Secret {
        serde_json::from_value(json!({
            "metadata": {"name": "creds", "namespace": ns},
            "stringData": {"key": format!("secret-of-{ns}")},
        }))
        .unwrap()
    };
    Api::<Secret>::namespaced(client.clone(), OTHER)
        .create(&PostParams::default(), &secret(OTHER))
        .await
        .unwrap();
    let crossing = json!({
        "apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1",
        "kind": "XKSCluster",
        "metadata": {"name": "crossing", "namespace": NS},
        "spec": {
            "region": "xk-1",
            "identityRef": {"kind": "Secret", "name": "creds", "namespace": OTHER},
        },
    });
    let dynamic: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), NS, &ApiResource::erase::<XKSCluster>(&()));
    let strict = dynamic
        .patch(
            "crossing",
            &PatchParams::apply("kernel-test")
                .validation_strict()
                .dry_run(),
            &Patch::Apply(&crossing),
        )
        .await;
    match strict {
        Err(kube::Error::Api(status)) => assert!(
            status.message.contains("spec.identityRef.namespace"),
            "the refusal names the field: {}",
            status.message
        ),
        other => panic!("a namespace in identityRef must be refused: {other:?}"),
    }
    // A create without strict validation (kube-apiserver's default is to warn): admitted, with
    // the undeclared field pruned. (A server-side apply is refused whatever the validation.)
    let admitted = dynamic
        .create(
            &PostParams {
                dry_run: true,
                ..PostParams::default()
            },
            &serde_json::from_value(crossing.clone()).unwrap(),
        )
        .await
        .unwrap();
    let stored = &admitted.data["spec"]["identityRef"];
    assert_eq!(
        stored,
        &json!({"kind": "Secret", "name": "creds"}),
        "the namespace is dropped as a field the schema does not declare"
    );
    let reference: contract::api::IdentityRef = serde_json::from_value(stored.clone()).unwrap();
    let refused = provider_runtime::identity::identity(client, NS, Some(&reference))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains(&format!("identity Secret {NS}/creds not found")),
        "the Secret of the other namespace is not read: {refused}"
    );
    Api::<Secret>::namespaced(client.clone(), NS)
        .create(&PostParams::default(), &secret(NS))
        .await
        .unwrap();
    match provider_runtime::identity::identity(client, NS, Some(&reference)).await {
        Ok(provider_runtime::identity::Identity::Secret(found)) => {
            assert_eq!(found.describe(), format!("identity Secret {NS}/creds"));
            assert_eq!(found.get("key"), Some(format!("secret-of-{NS}").as_str()));
        }
        other => panic!("the object's own namespace's Secret is read: {other:?}"),
    }
}
