//! The phases of a fault run and their timing: create, stillness of the settled cluster,
//! upgrade, scale-down and delete, each driven to its end while the plan's kills fall, and the
//! convergence after each fault measured against its limit.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::Result;
use serde_json::{Value, json};

use super::harness::FaultRun;
use super::plan::Phase;
use super::{CONFLICT_RATE, CONVERGENCE_LIMIT, oracle, proxy};
use crate::objects;
use crate::run::Ctx;
use crate::run::lifecycle::{self, CLUSTER, NS, Names, State};
use crate::run::setup;

/// How long the provider must have sent no write before a settled cluster's stillness is watched.
const QUIET: Duration = Duration::from_secs(5);
/// How long it has to get there.
const QUIET_WITHIN: Duration = Duration::from_secs(60);

impl FaultRun {
    /// Drives one phase: kills the provider after each of the plan's gaps, restarting it at
    /// once, until the kills are spent and `done` holds; returns how long the phase took.
    pub(super) async fn drive(
        &mut self,
        phase: Phase,
        done: impl Fn(&State) -> bool,
        timeout: Duration,
    ) -> Result<Duration> {
        let gaps = self.plan.gaps(phase).to_vec();
        let start = Instant::now();
        let mut gaps = gaps.into_iter();
        let mut kill_at = gaps.next().map(|g| start + g);
        let mut first_done: Option<Duration> = None;
        loop {
            self.ensure_provider()?;
            let now_done = done(&self.state().await?);
            if now_done && first_done.is_none() {
                first_done = Some(start.elapsed());
            }
            if let Some(at) = kill_at
                && Instant::now() >= at
            {
                self.kill_and_restart(!now_done).await?;
                kill_at = gaps.next().map(|g| Instant::now() + g);
                continue;
            }
            if now_done && kill_at.is_none() {
                let took = first_done.unwrap_or_else(|| start.elapsed());
                self.figures
                    .phase_secs
                    .insert(phase.name().to_string(), took.as_secs_f64());
                eprintln!(
                    "faults: {} done in {:.1}s",
                    phase.name(),
                    took.as_secs_f64()
                );
                return Ok(took);
            }
            if start.elapsed() > timeout {
                let why = lifecycle::unsettled(&self.state().await?, false).join("; ");
                anyhow::bail!(
                    "{} did not finish within {timeout:?} under its faults: {why}",
                    phase.name()
                );
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// Waits (no kills) until `done`, recording the time as the convergence after `kind`,
    /// judged against [`CONVERGENCE_LIMIT`].
    pub(super) async fn converge(
        &mut self,
        kind: &str,
        since: Instant,
        done: impl Fn(&State) -> bool,
        timeout: Duration,
    ) -> Result<()> {
        loop {
            self.ensure_provider()?;
            if done(&self.state().await?) {
                break;
            }
            if since.elapsed() > timeout {
                let why = lifecycle::unsettled(&self.state().await?, false).join("; ");
                self.finding(
                    "convergence",
                    format!("not converged {timeout:?} after {kind}: {why}"),
                );
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        let took = since.elapsed();
        eprintln!("faults: converged {:.1}s after {kind}", took.as_secs_f64());
        let slot = self
            .figures
            .convergence_secs
            .entry(kind.to_string())
            .or_default();
        *slot = slot.max(took.as_secs_f64());
        if took > CONVERGENCE_LIMIT {
            self.finding(
                "convergence",
                format!(
                    "{:.1}s after {kind}, more than {CONVERGENCE_LIMIT:?}",
                    took.as_secs_f64()
                ),
            );
        }
        Ok(())
    }

    pub(super) async fn create(&mut self) -> Result<()> {
        let mut docs = self.docs.clone();
        setup::label_for_provider(&mut docs);
        eprintln!("faults: applying Cluster {NS}/{CLUSTER}");
        let before = self
            .inject(
                "429 + Retry-After (create)",
                json!({"kind": "throttle", "retryAfterSeconds": 2}),
                0.1,
            )
            .await;
        // From here to the end of delete, a share of the provider's updates is refused.
        self.set_conflict_rate(CONFLICT_RATE);
        eprintln!(
            "faults: {:.0}% of the provider's updates answered 409 Conflict from now on",
            CONFLICT_RATE * 100.0
        );
        for d in &docs {
            objects::apply(&self.ctx.kinds, &self.bed.client, NS, d).await?;
        }
        let timeout = self.ctx.profile.timeouts.provision * 2;
        let outcome = self
            .drive(
                Phase::Create,
                |s| lifecycle::unsettled(s, true).is_empty(),
                timeout,
            )
            .await;
        self.clear("429 + Retry-After (create)", before).await;
        outcome.map(|_| ())
    }

    /// resourceVersions of every object of the settled cluster, still for `self.still`.
    pub(super) async fn stillness(&mut self) -> Result<()> {
        let Some(recorder) = self.recorder.clone() else {
            return Ok(());
        };
        eprintln!(
            "faults: watching the settled cluster for {:?} (resourceVersions must not move)",
            self.still
        );
        // Settled means the provider has nothing left to write: a pass the cloud throttled just
        // before the faults were cleared still retries and writes its recovery. So the watch
        // starts once the provider has written nothing (Leases aside) for QUIET; one that never
        // stops writing is a finding of its own.
        self.quiet().await;
        let from = Instant::now();
        let writes_before = self.proxy.as_ref().map(|p| p.stats().writes());
        tokio::time::sleep(self.still).await;
        if let (Some(before), Some(p)) = (writes_before, &self.proxy) {
            let writes = proxy::writes_since(&before, &p.stats().writes());
            self.figures.writes_while_still = proxy::total(&writes);
            if !writes.is_empty() {
                self.finding(
                    "stillness",
                    format!(
                        "the provider wrote while the settled cluster was watched for {:?}: {}",
                        self.still,
                        proxy::describe(&writes)
                    ),
                );
            }
        }
        let mut moved: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
        let mut last: BTreeMap<(String, String), Value> = BTreeMap::new();
        let mut kinds: Vec<String> = vec!["Cluster".into(), "MachinePool".into(), "Secret".into()];
        kinds.extend(self.names.provider_objects().into_iter().map(|(k, _)| k));
        kinds.sort();
        kinds.dedup();
        for kind in &kinds {
            for seen in recorder.all_of(kind) {
                let key = (seen.kind.clone(), seen.name.clone());
                if let Some(prev) = last.get(&key)
                    && seen.at >= from
                    && objects::rv(prev) != objects::rv(&seen.obj)
                {
                    let fields = oracle::changed_fields(prev, &seen.obj);
                    moved.entry(key.clone()).or_default().extend(fields);
                }
                last.insert(key, seen.obj);
            }
        }
        // Every change counts, a kubeconfig Secret's refresh included: the fault run's profile
        // sets a token lifetime long enough that no refresh falls in the window.
        self.figures.unstill_objects = moved.len();
        for ((kind, name), mut fields) in moved {
            fields.sort();
            fields.dedup();
            self.finding(
                "stillness",
                format!(
                    "{kind}/{name} changed while the settled cluster was watched for {:?}: {}",
                    self.still,
                    fields.join(", ")
                ),
            );
        }
        Ok(())
    }

    /// Waits until the provider has sent no write (Leases aside) for [`QUIET`], at most
    /// [`QUIET_WITHIN`]; two seconds without a proxy to count writes.
    pub(super) async fn quiet(&mut self) {
        let Some(stats) = self.proxy.as_ref().map(|p| p.stats()) else {
            tokio::time::sleep(Duration::from_secs(2)).await;
            return;
        };
        let start = stats.writes();
        let deadline = Instant::now() + QUIET_WITHIN;
        let mut last = start.clone();
        let mut since = Instant::now();
        while since.elapsed() < QUIET {
            if Instant::now() >= deadline {
                self.finding(
                    "stillness",
                    format!(
                        "the provider never stopped writing for {QUIET:?} within {QUIET_WITHIN:?} of \
                         the cluster settling: {}",
                        proxy::describe(&proxy::writes_since(&start, &stats.writes()))
                    ),
                );
                return;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
            let now = stats.writes();
            if proxy::total(&proxy::writes_since(&last, &now)) > 0 {
                since = Instant::now();
            }
            last = now;
        }
    }

    pub(super) async fn scale_pools(&mut self, delta: i64) -> Result<BTreeMap<String, i64>> {
        let mut wanted = BTreeMap::new();
        for (mp, _, _) in self.names.pools.clone() {
            let pool = objects::get(&self.ctx.kinds, &self.bed.client, "MachinePool", NS, &mp)
                .await?
                .unwrap_or(Value::Null);
            let n = pool["spec"]["replicas"].as_i64().unwrap_or(0) + delta;
            objects::merge(
                &self.ctx.kinds,
                &self.bed.client,
                "MachinePool",
                NS,
                &mp,
                &json!({"spec": {"replicas": n}}),
            )
            .await?;
            wanted.insert(mp, n);
        }
        Ok(wanted)
    }

    pub(super) async fn upgrade(&mut self) -> Result<()> {
        let Some(to) = self.ctx.profile.faults.upgrade_to.clone() else {
            self.not_run
                .push("upgrade: the profile has no faults.upgradeTo".into());
            return Ok(());
        };
        let before = self
            .inject(
                "503 (upgrade)",
                json!({"kind": "serverError", "status": 503}),
                0.1,
            )
            .await;
        eprintln!("faults: upgrading the control plane and pools to {to}");
        ask_upgrade(&self.ctx, &self.bed.client, &self.names, &to).await?;
        let target = minor(&to);
        let timeout = self.ctx.profile.timeouts.provision * 2;
        let outcome = self
            .drive(
                Phase::Upgrade,
                move |s| upgraded(s, target) && lifecycle::unsettled(s, false).is_empty(),
                timeout,
            )
            .await;
        self.clear("503 (upgrade)", before).await;
        outcome.map(|_| ())
    }

    pub(super) async fn scale_down(&mut self) -> Result<()> {
        let before = self
            .inject("dropped connection (scale)", json!({"kind": "drop"}), 0.1)
            .await;
        let slow = self
            .inject(
                "20 s latency (scale)",
                json!({"kind": "latency", "millis": 20_000}),
                0.1,
            )
            .await;
        let wanted = self.scale_pools(-1).await?;
        eprintln!("faults: scaling pools to {wanted:?}");
        let names = self.names.clone();
        let timeout = self.ctx.profile.timeouts.provision * 2;
        let outcome = self
            .drive(
                Phase::Scale,
                move |s| pools_at(s, &names, &wanted) && lifecycle::unsettled(s, false).is_empty(),
                timeout,
            )
            .await;
        self.clear("dropped connection (scale)", before).await;
        // Both rules were cleared at once; what was answered since the first is split by the
        // emulator's own counters (faults and delays are counted apart).
        self.clear("20 s latency (scale)", slow).await;
        outcome.map(|_| ())
    }

    pub(super) async fn delete(&mut self) -> Result<()> {
        eprintln!("faults: deleting Cluster {NS}/{CLUSTER}");
        objects::delete(&self.ctx.kinds, &self.bed.client, "Cluster", NS, CLUSTER).await?;
        let timeout = self.ctx.profile.timeouts.delete * 2;
        self.drive(Phase::Delete, all_gone, timeout)
            .await
            .map(|_| ())
    }
}

/// Asks for `to` on the control plane (`spec.version`) and every MachinePool
/// (`spec.template.spec.version`).
pub(super) async fn ask_upgrade(
    ctx: &Ctx,
    client: &kube::Client,
    names: &Names,
    to: &str,
) -> Result<()> {
    let (cp_kind, cp_name) = &names.control_plane;
    objects::merge(
        &ctx.kinds,
        client,
        cp_kind,
        NS,
        cp_name,
        &json!({"spec": {"version": to}}),
    )
    .await?;
    for (mp, _, _) in &names.pools {
        objects::merge(
            &ctx.kinds,
            client,
            "MachinePool",
            NS,
            mp,
            &json!({"spec": {"template": {"spec": {"version": to}}}}),
        )
        .await?;
    }
    Ok(())
}

/// Whether the Cluster and every object of it are gone.
pub(super) fn all_gone(s: &State) -> bool {
    s.cluster.is_null()
        && s.control_plane.is_null()
        && s.infra.is_null()
        && s.pools
            .values()
            .all(|(mp, infra)| mp.is_null() && infra.is_null())
}

/// `(major, minor)` of `v1.32`, `1.32.0`, …
pub(super) fn minor(version: &str) -> Option<(u64, u64)> {
    let mut parts = version.trim_start_matches('v').split('.');
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

/// Whether the control plane and every pool report `target`'s minor.
pub(super) fn upgraded(state: &State, target: Option<(u64, u64)>) -> bool {
    let at = |v: &Value| v.as_str().and_then(minor) == target;
    at(&state.control_plane["status"]["version"])
        && state
            .pools
            .values()
            .all(|(_, infra)| at(&infra["status"]["version"]))
}

/// Whether every pool's MachinePool asks for its `wanted` replicas (and the rest is settled:
/// [`lifecycle::unsettled`] compares what each pool has with what it asks).
pub(super) fn pools_at(state: &State, names: &Names, wanted: &BTreeMap<String, i64>) -> bool {
    names.pools.iter().all(|(mp, _, _)| {
        state
            .pools
            .get(mp)
            .is_some_and(|(pool, _)| pool["spec"]["replicas"].as_i64() == wanted.get(mp).copied())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minors_are_read_with_or_without_v_and_patch() {
        assert_eq!(minor("v1.32"), Some((1, 32)));
        assert_eq!(minor("1.32.4"), Some((1, 32)));
        assert_eq!(minor("latest"), None);
    }
}
