//! Leader election under faults: two replicas, each through its own proxy; only the Lease's
//! holder may write while both run, and when the holder is SIGKILLed the other takes the Lease
//! over within its duration and acts.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::Result;
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, ListParams};

use super::harness::{FaultRun, now_millis};
use super::phases::pools_at;
use super::proxy;
use crate::run::lifecycle;

impl FaultRun {
    /// Two replicas with leader election: the first takes the Lease; the second starts; the
    /// first is SIGKILLed; the second must take the Lease within the Lease's duration (plus the
    /// one renewal period a standby may be behind) and act (a pool scaled down converges).
    pub(super) async fn leader_takeover(&mut self) -> Result<()> {
        let Some(args) = self.ctx.profile.faults.leader_elect_args.clone() else {
            self.not_run
                .push("leader election: the profile has no faults.leaderElectArgs".into());
            return Ok(());
        };
        let ns = self.provider_namespace()?;
        let leases: Api<Lease> = Api::namespaced(self.bed.client.clone(), &ns);
        // The provider without election stops in order first.
        if let Some(mut p) = self.provider.take() {
            p.stop(Duration::from_secs(10)).await;
            self.stops_at.push(now_millis());
        }
        let before: BTreeMap<String, String> = holders(&leases).await?;
        let leader_before = self
            .proxy
            .as_ref()
            .map(|p| p.stats().writes())
            .unwrap_or_default();
        let kubeconfig = self.provider_kubeconfig.clone();
        let mut first = self.spawn_provider(&args, &kubeconfig)?;
        let deadline = Instant::now() + Duration::from_secs(60);
        let (lease, holder, duration) = loop {
            let now = holders_full(&leases).await?;
            if let Some((name, holder, duration)) = now
                .into_iter()
                .find(|(name, holder, _)| before.get(name) != Some(holder))
            {
                break (name, holder, duration);
            }
            if Instant::now() > deadline {
                first.stop(Duration::from_secs(5)).await;
                self.start_provider()?;
                self.finding(
                    "leader election",
                    format!("no Lease in {ns} got a new holder within 60s of a replica starting with {args:?}"),
                );
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        };
        eprintln!(
            "faults: Lease {ns}/{lease} held by {holder} (duration {duration}s); starting a second replica"
        );
        let (standby_proxy, standby_kubeconfig) = self.proxied("standby").await?;
        let second = self.spawn_provider(&args, &standby_kubeconfig)?;
        tokio::time::sleep(Duration::from_secs(3)).await;
        let still_first = holders(&leases).await?.get(&lease) == Some(&holder);
        if !still_first {
            self.finding(
                "leader election",
                "the Lease changed holder when a second replica started",
            );
        }
        // One acts: a pool scaled while both run converges, and only the holder wrote.
        let since = Instant::now();
        let wanted = self.scale_pools(-1).await?;
        let names = self.names.clone();
        self.converge(
            "a pool scaled down with two replicas (the leader acts)",
            since,
            move |s| pools_at(s, &names, &wanted) && lifecycle::unsettled(s, false).is_empty(),
            self.ctx.profile.timeouts.provision,
        )
        .await?;
        let leader_writes = proxy::writes_since(
            &leader_before,
            &self
                .proxy
                .as_ref()
                .map(|p| p.stats().writes())
                .unwrap_or_default(),
        );
        let standby_writes = proxy::writes_since(&BTreeMap::new(), &standby_proxy.stats().writes());
        self.figures.leader_writes = proxy::total(&leader_writes);
        self.figures.standby_writes = proxy::total(&standby_writes);
        eprintln!(
            "faults: with two replicas the leader wrote {} times, the standby {}",
            self.figures.leader_writes, self.figures.standby_writes
        );
        if !standby_writes.is_empty() {
            self.finding(
                "leader election",
                format!(
                    "the standby wrote without holding the Lease: {}",
                    proxy::describe(&standby_writes)
                ),
            );
        }
        if leader_writes.is_empty() {
            self.finding(
                "leader election",
                "the proxy saw no write from the Lease's holder while a pool was scaled (the check of the standby proves nothing)",
            );
        }
        first.kill().await;
        self.stops_at.push(now_millis());
        let killed = Instant::now();
        let limit = Duration::from_secs(u64::try_from(duration).unwrap_or(15) + 5);
        let taken = loop {
            if let Some(h) = holders(&leases).await?.get(&lease)
                && *h != holder
            {
                break Some(killed.elapsed());
            }
            if killed.elapsed() > limit * 2 {
                break None;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        self.provider = Some(second);
        match taken {
            Some(took) => {
                eprintln!(
                    "faults: the second replica took the Lease {:.1}s after the holder was killed",
                    took.as_secs_f64()
                );
                self.figures.convergence_secs.insert(
                    "leader killed (Lease taken over)".into(),
                    took.as_secs_f64(),
                );
                if took > limit {
                    self.finding(
                        "leader election",
                        format!(
                            "the Lease was taken over {:.1}s after its holder died, more than its duration + 5s ({limit:?})",
                            took.as_secs_f64()
                        ),
                    );
                }
            }
            None => self.finding(
                "leader election",
                format!(
                    "nobody took the Lease {:?} after its holder died",
                    limit * 2
                ),
            ),
        }
        // The new leader acts.
        let since = Instant::now();
        let wanted = self.scale_pools(1).await?;
        let names = self.names.clone();
        self.converge(
            "a leader killed (the standby scales a pool up)",
            since,
            move |s| pools_at(s, &names, &wanted) && lifecycle::unsettled(s, false).is_empty(),
            self.ctx.profile.timeouts.provision,
        )
        .await?;
        // Back to one replica without election (a restarted replica would wait out the Lease).
        if let Some(mut p) = self.provider.take() {
            p.stop(Duration::from_secs(10)).await;
            self.stops_at.push(now_millis());
        }
        self.figures.conflicts_injected += standby_proxy.stats().conflicts();
        drop(standby_proxy);
        self.start_provider()
    }
}

/// Each Lease's holder in a namespace.
async fn holders(leases: &Api<Lease>) -> Result<BTreeMap<String, String>> {
    Ok(holders_full(leases)
        .await?
        .into_iter()
        .map(|(name, holder, _)| (name, holder))
        .collect())
}

/// Each held Lease: (name, holder, duration seconds).
async fn holders_full(leases: &Api<Lease>) -> Result<Vec<(String, String, i32)>> {
    Ok(leases
        .list(&ListParams::default())
        .await?
        .into_iter()
        .filter_map(|l| {
            let spec = l.spec?;
            let holder = spec.holder_identity.filter(|h| !h.is_empty())?;
            Some((
                l.metadata.name.unwrap_or_default(),
                holder,
                spec.lease_duration_seconds.unwrap_or(15),
            ))
        })
        .collect())
}
