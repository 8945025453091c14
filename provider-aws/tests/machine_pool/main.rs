//! EKSMachinePool against the real management plane (kube-apiserver, Cluster API core v1.14),
//! moto (EC2) and the EKS emulator with workload API servers: the node group is created, its
//! instances become `spec.providerIDList` and core's nodeRefs, it scales 2 → 3 → 1, an
//! autoscaled pool's outside change is written back to the MachinePool, and deletion removes the
//! node group and terminates its instances, also for a pool deleted after its Cluster.
//!
//! The provider reads its AWS endpoints from `AWS_ENDPOINT_URL` / `AWS_ENDPOINT_URL_EKS`, so the
//! test body runs as a child process beside moto (see `support::run_in_child_with_moto`).
//!
//! The EKS cluster and its EKSControlPlane are made by the test (the cluster through the SDK, the
//! control plane object with an initialized status and a kubeconfig Secret), so this exercises
//! the machine-pool reconciler alone.
//!
//! The scenario runs in phases, one module each, in the order [`child`] calls them; every phase
//! takes the [`setup::Ctx`] the set-up leaves.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

#[path = "../support/mod.rs"]
mod support;

mod autoscale;
mod create;
mod delete;
mod helpers;
mod leftovers;
mod refusals;
mod scale;
mod setup;

use std::sync::Arc;
use std::time::Duration;

use provider_aws::api::EKSMachinePool;
use provider_aws::reconcile::machine_pool;
use provider_aws::scope::Shared;
use provider_runtime::pacing::Pacing;

const TEST: &str = "an_eks_machine_pool_creates_scales_autoscales_and_deletes_its_node_group";
const CHILD: &str = "EKS_MACHINE_POOL_TEST_CHILD";
const PORT_VAR: &str = "EKS_MACHINE_POOL_TEST_EKS_PORT";
const REGION: &str = "us-west-2";
const ACCOUNT: &str = "123456789012";
const ACCESS_KEY: &str = "AKIDMACHINEPOOLTEST0";
const SECRET_KEY: &str = "machine-pool-test-secret-key";
const NS: &str = "pools";
const CLUSTER: &str = "prod";
const EKS_NAME: &str = "pools-prod";
const POOL: &str = "workers";
const NODEGROUP: &str = "pools-workers";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_eks_machine_pool_creates_scales_autoscales_and_deletes_its_node_group() {
    if support::is_child(CHILD) {
        child().await;
    } else {
        // The child serves the EKS emulator on this port.
        let eks_port = support::free_port();
        let env = [
            (PORT_VAR, eks_port.to_string()),
            (
                "AWS_ENDPOINT_URL_EKS",
                format!("http://127.0.0.1:{eks_port}"),
            ),
        ];
        support::run_in_child_with_moto(TEST, CHILD, "eks-machine-pool-test", &env).await;
    }
}

/// The test body: the bed and the management objects, then each phase in turn, then the bed
/// stopped.
async fn child() {
    let (bed, ctx) = setup::start().await;
    refusals::surge_is_rejected(&ctx).await;

    // The provider, in-process, polling every second.
    let shared = Arc::new(Shared {
        pacing: Pacing {
            poll: Duration::from_secs(1),
            rest: Duration::from_secs(2),
            ..Shared::default().pacing
        },
        ..Shared::default()
    });
    let (stop_tx, provider) = support::spawn_provider(
        &ctx.client,
        &[
            "--health-probe-bind-address=0".into(),
            "--metrics-bind-address=0".into(),
        ],
        |operator| operator.controller::<EKSMachinePool, _>(machine_pool::reconciler(shared)),
    );

    create::creates_the_node_group(&ctx).await;
    create::only_reads_at_rest(&ctx).await;
    scale::follows_the_machine_pool(&ctx).await;
    autoscale::writes_back_an_outside_change(&ctx).await;
    delete::removes_the_node_group(&ctx).await;
    refusals::leaves_a_foreign_node_group_alone(&ctx).await;
    refusals::adopts_a_node_group_after_its_plan_and_orphans_it(&ctx).await;
    refusals::reports_a_failed_launch_without_a_hot_loop(&ctx).await;
    leftovers::deletes_a_pool_that_outlived_its_cluster(&ctx).await;

    let _ = stop_tx.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), provider).await;
    bed.stop().await;
}
