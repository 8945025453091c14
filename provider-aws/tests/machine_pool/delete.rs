//! Deleting the pool.

use std::time::Duration;

use crate::helpers::{delete_machine_pool, moto_provider_ids, pool_gone};
use crate::setup::Ctx;
use crate::{EKS_NAME, NODEGROUP, POOL};

/// Proves that deleting the MachinePool removes the EKSMachinePool, deletes its node group and
/// terminates every one of its instances in moto.
pub async fn removes_the_node_group(ctx: &Ctx) {
    delete_machine_pool(&ctx.client, POOL).await;
    pool_gone(
        ctx,
        "the EKSMachinePool to be gone",
        POOL,
        Duration::from_secs(120),
    )
    .await;
    let gone = ctx
        .aws
        .eks
        .describe_nodegroup()
        .cluster_name(EKS_NAME)
        .nodegroup_name(NODEGROUP)
        .send()
        .await;
    assert!(gone.is_err(), "the node group is deleted");
    assert!(
        moto_provider_ids(&ctx.aws).await.is_empty(),
        "every instance is terminated in moto"
    );
}
