//! What is injected besides the kills of each phase, and when: cloud faults by rule (429s,
//! 503s, dropped connections, slow answers) over a window with what each kind answered
//! counted; kube-apiserver restarted after an etcd compaction; and a pool or the whole cloud
//! cluster deleted behind the provider's back, each followed by the time to converge.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use anyhow::Result;
use serde_json::{Value, json};

use super::CONVERGENCE_LIMIT;
use super::cloud::{owned_names, read_inventory};
use super::harness::FaultRun;
use super::phases::pools_at;
use crate::procs::{http_get, http_send};
use crate::run::lifecycle::{self, CLUSTER, NS};

/// A window of injected faults: the counters when it began, and whether its kind is counted as
/// delays (latency) or as fault answers.
#[derive(Debug, Clone, Copy)]
pub(super) struct Window {
    before: (u64, u64),
    delays: bool,
}

impl FaultRun {
    /// Adds one fault rule for every operation; `None` when the profile has no fault endpoint.
    pub(super) async fn inject(&mut self, kind: &str, fault: Value, rate: f64) -> Option<Window> {
        let Some(url) = self.url(|f| f.faults_url.as_ref()) else {
            self.not_run.push(format!(
                "cloud fault {kind}: the profile has no faults.faultsUrl"
            ));
            return None;
        };
        // The next two calls fail for certain (so every kind is answered at least twice, however
        // few calls a phase makes), then a share of the rest.
        let before = self.faults_answered().await;
        for trigger in [json!({"count": 2}), json!({"rate": rate})] {
            let rule = json!({"operation": "*", "fault": fault, "trigger": trigger});
            if let Err(e) = http_send("POST", &url, Some(&rule)).await {
                self.finding("inject", format!("adding fault rule {rule}: {e:#}"));
                return None;
            }
        }
        eprintln!(
            "faults: {kind} on the next 2 cloud calls and {:.0}% of the rest",
            rate * 100.0
        );
        Some(Window {
            before,
            delays: fault["kind"] == "latency",
        })
    }

    /// Clears the rules (all of them) and counts what the window's kind answered since it began.
    pub(super) async fn clear(&mut self, kind: &str, window: Option<Window>) {
        let Some(window) = window else { return };
        if let Some(url) = self.url(|f| f.faults_url.as_ref())
            && let Err(e) = http_send("DELETE", &url, None).await
        {
            self.finding("inject", format!("clearing fault rules: {e:#}"));
        }
        let (faults, delays) = self.faults_answered().await;
        let n = if window.delays {
            delays.saturating_sub(window.before.1)
        } else {
            faults.saturating_sub(window.before.0)
        };
        *self
            .figures
            .cloud_faults
            .entry(kind.to_string())
            .or_default() += n;
    }

    /// Faults answered so far: calls answered with an injected fault, and calls held back by an
    /// injected latency (`emulator_delayed_calls_total`).
    pub(super) async fn faults_answered(&self) -> (u64, u64) {
        let Some(url) = self.ctx.calls_url() else {
            return (0, 0);
        };
        let Ok(text) = http_get(&url).await else {
            return (0, 0);
        };
        let faults: u64 = crate::procs::Calls::parse(&text)
            .0
            .iter()
            .filter(|((_, outcome), _)| outcome == "fault")
            .map(|(_, n)| *n)
            .sum();
        let delayed: u64 = text
            .lines()
            .filter(|l| l.starts_with("emulator_delayed_calls_total{"))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .map(|n| n as u64)
            .sum();
        (faults, delayed)
    }

    /// etcd compacted and kube-apiserver restarted; a pool scaled up right after, which the
    /// provider sees only once its watches, answered 410 Gone, list again.
    pub(super) async fn restart_api_server(&mut self) -> Result<()> {
        let revision = self.bed.plane.compact_etcd().await?;
        self.figures.etcd_compactions += 1;
        eprintln!("faults: etcd compacted to revision {revision}; restarting kube-apiserver");
        let down = self
            .bed
            .plane
            .restart_apiserver(Duration::from_secs(3), true)
            .await?;
        self.figures.api_server_restarts += 1;
        eprintln!(
            "faults: kube-apiserver back after {:.1}s",
            down.as_secs_f64()
        );
        let back = Instant::now();
        // A change made right after: the provider's watches get 410 Gone and must list again
        // to see it.
        let wanted = self.scale_pools(1).await?;
        let names = self.names.clone();
        self.converge(
            "kube-apiserver restart + etcd compaction (a pool scaled up)",
            back,
            move |s| pools_at(s, &names, &wanted) && lifecycle::unsettled(s, false).is_empty(),
            self.ctx.profile.timeouts.provision,
        )
        .await
    }

    /// A pool's cloud resource, or the whole cloud cluster, deleted behind the provider's back
    /// (`faults.outsideDelete`, `faults.outsideDeleteCluster`): the provider must create what
    /// is missing again (the kernel's rule: a cloud resource of ours that is gone is created
    /// again) within its resync period and [`CONVERGENCE_LIMIT`].
    pub(super) async fn delete_behind_back(&mut self, whole_cluster: bool) -> Result<()> {
        let (command, field, kind) = if whole_cluster {
            (
                self.ctx.profile.faults.outside_delete_cluster.clone(),
                "outsideDeleteCluster",
                "the cloud cluster deleted behind its back",
            )
        } else {
            (
                self.ctx.profile.faults.outside_delete.clone(),
                "outsideDelete",
                "a pool deleted behind its back",
            )
        };
        let Some(command) = command else {
            self.not_run
                .push(format!("{kind}: the profile has no faults.{field}"));
            return Ok(());
        };
        let Some((_, _, pool)) = self.names.pools.first().cloned() else {
            self.not_run
                .push("a pool deleted behind the provider's back: the template has no pool".into());
            return Ok(());
        };
        let inventory = self.ctx.inventory_url();
        let owned_before = match &inventory {
            Some(url) => owned_names(&read_inventory(url).await?),
            None => BTreeSet::new(),
        };
        let argv = self.ctx.vars.expand_all(&command)?;
        let env: BTreeMap<String, String> = [
            ("CLUSTER_NAMESPACE".to_string(), NS.to_string()),
            ("CLUSTER_NAME".to_string(), CLUSTER.to_string()),
            ("POOL_NAME".to_string(), pool.clone()),
        ]
        .into();
        if whole_cluster {
            eprintln!("faults: deleting the cloud cluster behind the provider's back");
        } else {
            eprintln!("faults: deleting pool {pool}'s cloud resource behind the provider's back");
        }
        let deleted = Instant::now();
        let out = crate::procs::run_to_end(
            &argv,
            &env,
            &self.ctx.profile.workdir(),
            Duration::from_secs(180),
        )
        .await;
        match out {
            Ok(text) => {
                self.figures.outside_deletions += 1;
                eprintln!("faults: {}", text.trim());
            }
            Err(e) => {
                self.finding("outside delete", format!("{e:#}"));
                return Ok(());
            }
        }
        // Converged: every named resource the cloud held for us before is there again (the
        // deleted one recreated) and the cluster is settled (the pool's nodes back). A provider at
        // rest looks at the cloud once per resync period, so that much more is allowed; a whole
        // cluster created again may also take as long as its first creation took.
        let resync = self.ctx.profile.faults.resync.unwrap_or_default();
        let creation = if whole_cluster {
            let secs = self
                .figures
                .phase_secs
                .get("create")
                .copied()
                .unwrap_or(0.0);
            Duration::from_secs_f64(secs)
        } else {
            Duration::ZERO
        };
        let limit = resync + CONVERGENCE_LIMIT + creation;
        let timeout = self.ctx.profile.timeouts.provision.max(limit * 2);
        let mut missing = BTreeSet::new();
        loop {
            self.ensure_provider()?;
            if let Some(url) = &inventory
                && let Ok(items) = read_inventory(url).await
            {
                missing = owned_before
                    .difference(&owned_names(&items))
                    .cloned()
                    .collect();
            }
            if missing.is_empty() && lifecycle::unsettled(&self.state().await?, false).is_empty() {
                let took = deleted.elapsed();
                eprintln!("faults: converged {:.1}s after {kind}", took.as_secs_f64());
                self.figures
                    .convergence_secs
                    .insert(kind.to_string(), took.as_secs_f64());
                if took > limit {
                    self.finding(
                        "convergence",
                        format!(
                            "{:.1}s after {kind}, more than its resync period ({resync:?}) + {CONVERGENCE_LIMIT:?} + the first creation's {:.1}s",
                            took.as_secs_f64(),
                            creation.as_secs_f64()
                        ),
                    );
                }
                break;
            }
            if deleted.elapsed() > timeout {
                let why = lifecycle::unsettled(&self.state().await?, false);
                self.finding(
                    "convergence",
                    format!(
                        "not converged {timeout:?} after {kind}: missing in the cloud {missing:?}; {}",
                        why.join("; ")
                    ),
                );
                break;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        Ok(())
    }
}
