//! Scaling through the MachinePool.

use kube::api::{Patch, PatchParams};
use serde_json::json;

use crate::POOL;
use crate::helpers::settled_at;
use crate::setup::Ctx;

/// Proves that changing the MachinePool's replicas scales the node group 2 → 3 → 1, each time
/// with providerIDList, moto's instances, the workload's Nodes and core's nodeRefs agreeing.
pub async fn follows_the_machine_pool(ctx: &Ctx) {
    for replicas in [3, 1] {
        ctx.machine_pools
            .patch(
                POOL,
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"replicas": replicas}})),
            )
            .await
            .unwrap();
        settled_at(replicas, ctx).await;
    }
}
