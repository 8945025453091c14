//! Deleting the cluster: the Cluster deleted, each provider object polled until it starts going
//! and until it is gone (with the cloud's call counters at both moments), the kubeconfig Secret
//! waited for until garbage-collected, and the watches given time to deliver the deletions that
//! the order is judged on (C32, C40–C43).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::Result;

use super::{CLUSTER, NS, Names};
use crate::checks::Results;
use crate::objects::{self, Recorder};
use crate::procs::Calls;
use crate::run::Ctx;
use crate::run::judge::{self, deletion::Deletion};

/// Deletes the Cluster, records how it went and judges it; fails when the Cluster stayed.
pub(super) async fn delete_and_judge(
    ctx: &Ctx,
    client: &kube::Client,
    names: &Names,
    recorder: &Recorder,
    results: &mut Results,
) -> Result<()> {
    eprintln!("conformance: deleting Cluster {NS}/{CLUSTER}");
    // The counters before anything was asked to go: the window an object's deletion is judged
    // on when the 200 ms polls below missed its start (a provider that deletes in milliseconds).
    let before_delete = ctx.calls().await;
    objects::delete(&ctx.kinds, client, "Cluster", NS, CLUSTER).await?;
    let objects_ = names.provider_objects();
    let mut started: BTreeMap<(String, String), Option<Calls>> = BTreeMap::new();
    let mut ended: BTreeMap<(String, String), Option<Calls>> = BTreeMap::new();
    let deadline = Instant::now() + ctx.profile.timeouts.delete;
    let mut cluster_gone = false;
    while Instant::now() < deadline {
        for (kind, name) in &objects_ {
            let key = (kind.clone(), name.clone());
            if ended.contains_key(&key) {
                continue;
            }
            let obj = objects::get(&ctx.kinds, client, kind, NS, name).await?;
            match obj {
                Some(o)
                    if !o["metadata"]["deletionTimestamp"].is_null()
                        && !started.contains_key(&key) =>
                {
                    started.insert(key, ctx.calls().await);
                }
                None => {
                    ended.insert(key, ctx.calls().await);
                }
                _ => {}
            }
        }
        if objects::get(&ctx.kinds, client, "Cluster", NS, CLUSTER)
            .await?
            .is_none()
        {
            cluster_gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // The Secret goes by garbage collection once its owner is gone: kube-controller-manager's
    // collector, in its own time (slower on a loaded machine).
    let secret_name = format!("{CLUSTER}-kubeconfig");
    let gc_wait = ctx.profile.timeouts.delete.min(Duration::from_secs(120));
    let gc_deadline = Instant::now() + gc_wait;
    let mut secret_gone = false;
    while Instant::now() < gc_deadline {
        if objects::get(&ctx.kinds, client, "Secret", NS, &secret_name)
            .await?
            .is_none()
        {
            secret_gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    // The recorder's watch may deliver a deletion after a read has already missed the Secret or
    // the Cluster (a loaded API server streams late): give it time to, since the order is judged
    // on it.
    let watch_deadline = Instant::now() + Duration::from_secs(30);
    let recorded_gone =
        |kind: &str, name: &str| recorder.history(kind, name).iter().any(|s| s.deleted);
    while Instant::now() < watch_deadline
        && ((secret_gone && !recorded_gone("Secret", &secret_name))
            || (cluster_gone && !recorded_gone("Cluster", CLUSTER)))
    {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    results.extend(judge::deletion::deletion(&Deletion {
        names: names.clone(),
        recorded: recorder.recorded(),
        before_delete,
        started,
        ended,
        timeout: ctx.profile.timeouts.delete,
        secret_gone,
        gc_wait,
    }));
    if !cluster_gone {
        for (kind, name) in &objects_ {
            objects::strip_finalizers(&ctx.kinds, client, kind, NS, name).await;
        }
        anyhow::bail!(
            "the Cluster was not deleted within {:?}",
            ctx.profile.timeouts.delete
        );
    }
    Ok(())
}
