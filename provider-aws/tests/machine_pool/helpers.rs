//! What several phases share: the instance and Node views of a pool, waiting for a pool to
//! settle, and the objects the test creates.

use std::collections::BTreeSet;
use std::time::Duration;

use aws_sdk_ec2::types::Filter;
use contract::capi::MachinePool;
use k8s_openapi::api::core::v1::Node;
use kube::api::{DeleteParams, ListParams, PostParams};
use kube::{Api, ResourceExt};
use provider_aws::api::EKSMachinePool;
use provider_aws::client::Clients;
use serde_json::{Value, json};

use crate::setup::Ctx;
use crate::support::{condition, eventually};
use crate::{ACCOUNT, CLUSTER, EKS_NAME, NODEGROUP, NS, POOL};

/// The provider IDs of the node group's instances that moto does not list as terminated.
pub async fn moto_provider_ids(clients: &Clients) -> BTreeSet<String> {
    let out = clients
        .ec2
        .describe_instances()
        .filters(
            Filter::builder()
                .name("tag:eks:cluster-name")
                .values(EKS_NAME)
                .build(),
        )
        .filters(
            Filter::builder()
                .name("tag:eks:nodegroup-name")
                .values(NODEGROUP)
                .build(),
        )
        .send()
        .await
        .unwrap();
    out.reservations()
        .iter()
        .flat_map(|r| r.instances())
        .filter(|i| i.state().and_then(|s| s.name()).map(|n| n.as_str()) != Some("terminated"))
        .map(|i| {
            let zone = i
                .placement()
                .and_then(|p| p.availability_zone())
                .unwrap_or_default();
            format!("aws:///{zone}/{}", i.instance_id().unwrap_or_default())
        })
        .collect()
}

/// The provider IDs of the workload cluster's Nodes.
async fn node_provider_ids(workload: &kube::Client) -> BTreeSet<String> {
    Api::<Node>::all(workload.clone())
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|n| n.spec.and_then(|s| s.provider_id))
        .collect()
}

/// Waits until the pool has settled at `replicas` (C47) with IDs matching moto and the Nodes.
pub async fn settled_at(replicas: i32, ctx: &Ctx) -> EKSMachinePool {
    let pool = eventually(
        &format!("the pool to settle at {replicas} nodes"),
        Duration::from_secs(120),
        || async {
            let p = ctx.pools.get(POOL).await.ok()?;
            let mp = ctx.machine_pools.get(POOL).await.ok()?;
            let ids = &p.spec.common.provider_id_list;
            let status = p.status.as_ref()?;
            let ready = condition(&p, "Ready").is_some_and(|c| c.status == "True");
            let n = usize::try_from(replicas).unwrap();
            (ready
                && ids.len() == n
                && status.common.replicas == Some(replicas)
                && mp.spec.replicas == Some(replicas))
            .then_some(p)
        },
    )
    .await;
    let ids: BTreeSet<String> = pool.spec.common.provider_id_list.iter().cloned().collect();
    eventually(
        "moto's instances to match providerIDList",
        Duration::from_secs(30),
        || async { (moto_provider_ids(&ctx.aws).await == ids).then_some(()) },
    )
    .await;
    eventually(
        "the workload Nodes to match providerIDList",
        Duration::from_secs(30),
        || async { (node_provider_ids(&ctx.workload).await == ids).then_some(()) },
    )
    .await;
    eventually(
        "core's nodeRefs to list every Node",
        Duration::from_secs(90),
        || async {
            let mp = ctx.machine_pools.get(POOL).await.ok()?;
            (mp.status.as_ref()?.node_refs.len() == ids.len()).then_some(())
        },
    )
    .await;
    pool
}

/// Waits until the garbage collector has let `name`'s dependents go (the `orphan` finalizer of
/// an orphaning delete is gone), so dropping the other finalizers cannot take them with it.
pub async fn orphaned(api: &Api<kube::api::DynamicObject>, name: &str) {
    eventually(
        "the dependents orphaned",
        Duration::from_secs(60),
        || async {
            let obj = api.get_opt(name).await.ok()??;
            (!obj.finalizers().iter().any(|f| f == "orphan")).then_some(())
        },
    )
    .await;
}

/// Core's MachinePools in the test's namespace, untyped (to delete them with options and patch
/// their metadata).
pub fn machine_pools_api(client: &kube::Client) -> Api<kube::api::DynamicObject> {
    Api::namespaced_with(client.clone(), NS, &machine_pool_resource())
}

/// Deletes the MachinePool `name` (and with it, through core, its EKSMachinePool).
pub async fn delete_machine_pool(client: &kube::Client, name: &str) {
    machine_pools_api(client)
        .delete(name, &DeleteParams::default())
        .await
        .unwrap();
}

/// Creates core's MachinePool `name` of `replicas`, pointing at the EKSMachinePool `name`.
pub async fn create_machine_pool(client: &kube::Client, name: &str, replicas: i32) {
    machine_pools_api(client)
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "apiVersion": "cluster.x-k8s.io/v1beta2",
                "kind": "MachinePool",
                "metadata": {"name": name},
                "spec": {
                    "clusterName": CLUSTER,
                    "replicas": replicas,
                    "template": {"spec": {
                        "clusterName": CLUSTER,
                        "version": "v1.31.13",
                        "bootstrap": {"dataSecretName": ""},
                        "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "EKSMachinePool", "name": name},
                    }},
                },
            }))
            .unwrap(),
        )
        .await
        .expect("MachinePool");
}

/// An EKSMachinePool `name` of t3.medium nodes, with the top-level spec fields of `extra` set
/// over that.
pub fn pool_object(name: &str, extra: Value) -> EKSMachinePool {
    let mut spec = json!({
        "machineType": "t3.medium",
        "eks": {"nodeRoleARN": format!("arn:aws:iam::{ACCOUNT}:role/eks-nodes")},
    });
    if let (Some(s), Some(e)) = (spec.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            s.insert(k.clone(), v.clone());
        }
    }
    serde_json::from_value(json!({
        "apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1",
        "kind": "EKSMachinePool",
        "metadata": {"name": name},
        "spec": spec,
    }))
    .unwrap()
}

/// Core's Cluster kind, for untyped APIs.
pub fn cluster_resource() -> kube::api::ApiResource {
    kube::api::ApiResource::erase::<contract::capi::Cluster>(&())
}

/// Core's MachinePool kind, for untyped APIs.
fn machine_pool_resource() -> kube::api::ApiResource {
    kube::api::ApiResource::erase::<MachinePool>(&())
}

/// Standard base64, decoded.
pub fn base64_decode(data: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap()
}

/// Waits until the EKSMachinePool `name` is gone; `what` names it in the failure message.
pub async fn pool_gone(ctx: &Ctx, what: &str, name: &str, within: Duration) {
    eventually(what, within, || async {
        ctx.pools.get_opt(name).await.ok()?.is_none().then_some(())
    })
    .await;
}
