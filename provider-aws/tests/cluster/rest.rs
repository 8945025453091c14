//! The managed cluster at rest, and after a restart that lost its status.

use provider_aws::network::AwsNetwork;
use std::time::Duration;

use kube::api::{Patch, PatchParams};
use serde_json::json;

use crate::MANAGED;
use crate::created::Managed;
use crate::helpers::{endpoint_untouched, owned};
use crate::provider::Provider;
use crate::setup::Ctx;
use crate::support::eventually;

/// Proves that at rest passes still run (rest interval 2 s), each reading eight times and
/// writing nothing to EC2, and that `spec.controlPlaneEndpoint` stays untouched.
pub async fn only_reads_at_rest(ctx: &Ctx, provider: &Provider) {
    let (writes, reads, before) = (
        provider.ec2_writes().await,
        provider.ec2_reads().await,
        provider.passes().await,
    );
    tokio::time::sleep(Duration::from_secs(7)).await;
    assert_eq!(provider.ec2_writes().await, writes, "no EC2 write at rest");
    let runs = provider.passes().await - before;
    let read = provider.ec2_reads().await - reads;
    assert!(runs >= 2, "passes at rest: {runs}");
    assert!(
        read + 8 >= 8 * runs && read <= 8 * (runs + 1),
        "{read} Describe calls in {runs} passes at rest"
    );
    assert!(endpoint_untouched(&ctx.dynamic, MANAGED).await);
}

/// Proves that a provider restarted after the status was lost (as after clusterctl move) finds
/// everything by its tags: status.network comes back the same, nothing is created and nothing
/// is written to EC2. Stops `provider` and returns the restarted one.
pub async fn a_restart_finds_everything_by_tags(
    ctx: &Ctx,
    provider: Provider,
    managed: &Managed,
) -> Provider {
    provider.stop().await;
    ctx.eks
        .patch_status(
            MANAGED,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"network": null}})),
        )
        .await
        .unwrap();
    assert!(
        ctx.eks
            .get(MANAGED)
            .await
            .unwrap()
            .status
            .unwrap()
            .common
            .network
            .is_none()
    );
    let provider = Provider::start(&ctx.client);
    eventually(
        "the restarted reconciler to rebuild status.network",
        Duration::from_secs(60),
        || async {
            let c = ctx.eks.get(MANAGED).await.ok()?;
            (AwsNetwork::of(&c)?.vpc_id.as_deref() == Some(managed.vpc_id.as_str())).then_some(())
        },
    )
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        owned(&ctx.ec2, MANAGED).await,
        managed.inventory,
        "the restart created nothing"
    );
    assert_eq!(
        provider.ec2_writes().await,
        0,
        "the restart wrote nothing to EC2"
    );
    assert_eq!(
        AwsNetwork::of(&ctx.eks.get(MANAGED).await.unwrap()),
        AwsNetwork::of(&managed.object)
    );
    provider
}
