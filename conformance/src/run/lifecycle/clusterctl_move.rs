//! `clusterctl move` of the settled cluster to a second plane running its own controller
//! (C59): what the move answered, whether the target settled, what was left on the source and
//! which cloud calls it cost.

use anyhow::Result;

use super::{CLUSTER, NS, Names, calls_between, wait_settled};
use crate::objects;
use crate::run::judge::clusterctl::Move;
use crate::run::{Bed, Ctx};

/// Starts plane b, installs the release there, moves the cluster to it; returns plane b (its
/// controller running) and what the move showed.
pub(super) async fn move_cluster(ctx: &Ctx, a: &mut Bed, names: &Names) -> Result<(Bed, Move)> {
    eprintln!("conformance: starting management plane b for clusterctl move");
    let mut b = Bed::start("b").await?;
    let init = ctx.clusterctl.init(b.kubeconfig()).await?;
    if !init.success {
        return Ok((b, Move::InitFailed(init.stderr.trim().to_string())));
    }
    b.start_provider(ctx)?;
    let calls_before = ctx.calls().await;
    let target = b.kubeconfig().display().to_string();
    let out = ctx
        .clusterctl
        .run(
            a.kubeconfig(),
            &["move", "--namespace", NS, "--to-kubeconfig", &target],
            &[],
        )
        .await?;
    if !out.success {
        return Ok((b, Move::Failed(out.stderr.trim().to_string())));
    }
    let settled =
        wait_settled(ctx, &b.client, names, false, ctx.profile.timeouts.provision).await?;
    b.ensure_provider()?;
    let left = objects::get(&ctx.kinds, &a.client, "Cluster", NS, CLUSTER).await?;
    let calls = calls_between(calls_before, ctx.calls().await);
    Ok((
        b,
        Move::Moved {
            settled,
            left_on_source: left.is_some(),
            calls,
            create_operations: ctx.create_operations(),
        },
    ))
}
