//! Adoption and orphaning (C61–C65), on Clusters with only a `controlPlaneRef` (the profile's
//! `controlPlaneOnlyFlavor`, whose control plane brings its network): a Cluster made and then
//! deleted with `deletionPolicy: Orphan`; a second one adopting the cloud cluster it left, first
//! as a plan, then accepted; a third asking for it while the second owns it. The cloud is read
//! through the emulator's inventory at each step; [`judge::adoption`] judges the record. The
//! adopter is deleted at the end with the default policy, so nothing is left (C60).

use std::time::{Duration, Instant};

use anyhow::Result;
use serde_json::{Value, json};

use super::Ctx;
use super::judge::adoption::{self as judge, ADOPTER, Adoption, ORPHANED, SIBLING, owned_by};
use super::setup::{label_for_provider, render};
use crate::checks::{CheckId, Outcome, Results};
use crate::faults::cloud::read_inventory;
use crate::faults::oracle::Item;
use crate::objects::{self, condition};

const NS: &str = "conf-adopt";

/// The checks this scenario judges.
pub const IDS: &[CheckId] = &[
    CheckId::C61,
    CheckId::C62,
    CheckId::C63,
    CheckId::C64,
    CheckId::C65,
];

/// Runs the scenario and records C61–C65.
pub async fn adoption(
    ctx: &Ctx,
    client: &kube::Client,
    kubeconfig: &std::path::Path,
    results: &mut Results,
) -> Result<()> {
    let skip = |results: &mut Results, why: &str| {
        for id in IDS {
            results.record(*id, Outcome::Skip(why.into()));
        }
    };
    let Some(flavor) = ctx.profile.template.control_plane_only_flavor.clone() else {
        skip(results, "the profile names no controlPlaneOnlyFlavor");
        return Ok(());
    };
    let Some(url) = ctx.inventory_url() else {
        skip(results, "the profile has no emulator.inventoryUrl");
        return Ok(());
    };
    objects::ensure_namespace(client, NS).await?;
    let s = Scenario {
        ctx,
        client,
        kubeconfig,
        flavor,
        url,
    };
    let seen = s.run().await;
    // Whatever happened, nothing of the scenario stays behind.
    for name in [SIBLING, ADOPTER, ORPHANED] {
        s.delete(name).await?;
    }
    results.extend(judge::adoption(&seen?));
    Ok(())
}

struct Scenario<'a> {
    ctx: &'a Ctx,
    client: &'a kube::Client,
    kubeconfig: &'a std::path::Path,
    flavor: String,
    url: String,
}

impl Scenario<'_> {
    async fn run(&self) -> Result<Adoption> {
        let mut seen = Adoption {
            namespace: NS.into(),
            ..Adoption::default()
        };
        let provision = self.ctx.profile.timeouts.provision;

        eprintln!(
            "conformance: adoption: a Cluster made, then deleted with deletionPolicy: Orphan"
        );
        self.apply(ORPHANED, json!({"deletionPolicy": "Orphan"}))
            .await?;
        seen.made = self.wait(ORPHANED, provision, ready).await?;
        let items = read_inventory(&self.url).await?;
        seen.owned = items
            .into_iter()
            .filter(|i| owned_by(i, NS, ORPHANED) && !i.leaving())
            .collect();
        self.delete(ORPHANED).await?;
        seen.after_orphan = self
            .settled(|items| items.iter().any(|i| owned_by(i, NS, ORPHANED)))
            .await?;
        let cloud_name = seen.made["status"]["cloudName"].clone();
        let cloud_id = seen.made["status"]["cloudID"].clone();

        eprintln!("conformance: adoption: a second Cluster adopts what it left, as a plan first");
        let mut adoption = json!({});
        if cloud_id.is_string() {
            adoption["id"] = cloud_id;
        }
        self.apply(
            ADOPTER,
            json!({"cloudName": cloud_name, "adoption": adoption}),
        )
        .await?;
        seen.planned = self
            .wait(ADOPTER, provision, |cp| {
                ready(cp) || !cp["status"]["adoption"]["phase"].is_null()
            })
            .await?;
        // A provider that writes after its plan would do it within the quiet time.
        tokio::time::sleep(self.ctx.profile.timeouts.quiet).await;
        seen.planned = self.control_plane(ADOPTER).await?;
        seen.during_plan = read_inventory(&self.url).await?;

        eprintln!("conformance: adoption: the plan accepted");
        let cp_kind = self.ctx.roles.control_plane.clone();
        let accept = json!({"spec": {"adoption": {"accept": true}}});
        objects::merge(&self.ctx.kinds, self.client, &cp_kind, NS, ADOPTER, &accept).await?;
        seen.accepted = self
            .wait(ADOPTER, provision, |cp| {
                let phase = &cp["status"]["adoption"]["phase"];
                ready(cp) && phase == "Adopted" || phase == "Refused"
            })
            .await?;
        seen.kubeconfig = objects::get(
            &self.ctx.kinds,
            self.client,
            "Secret",
            NS,
            &format!("{ADOPTER}-kubeconfig"),
        )
        .await
        .ok()
        .flatten()
        .is_some();
        seen.after_accept = read_inventory(&self.url).await?;

        eprintln!("conformance: adoption: a third Cluster asks for it while the second owns it");
        self.apply(
            SIBLING,
            json!({"cloudName": cloud_name, "adoption": {"accept": true}}),
        )
        .await?;
        seen.sibling = self
            .wait(SIBLING, provision, |cp| {
                ready(cp)
                    || !cp["status"]["adoption"]["phase"].is_null()
                    || condition(cp, "Ready").is_some_and(|c| c["reason"] == "NameConflict")
            })
            .await?;
        tokio::time::sleep(self.ctx.profile.timeouts.quiet).await;
        seen.sibling = self.control_plane(SIBLING).await?;
        seen.after_sibling = read_inventory(&self.url).await?;
        Ok(seen)
    }

    /// Renders the control-plane-only flavor for `name`, merges `spec` into its control plane,
    /// and applies it.
    async fn apply(&self, name: &str, spec: Value) -> Result<()> {
        let ctx = self.ctx;
        let mut docs = render(ctx, self.kubeconfig, name, NS, &self.flavor).await?;
        docs.retain(|d| {
            d["kind"] != "MachinePool" && ctx.roles.pool.as_deref() != d["kind"].as_str()
        });
        label_for_provider(&mut docs);
        for d in &mut docs {
            if d["kind"] == ctx.roles.control_plane.as_str()
                && let (Some(into), Some(from)) = (d["spec"].as_object_mut(), spec.as_object())
            {
                into.extend(from.clone());
            }
        }
        for d in &docs {
            objects::apply(&ctx.kinds, self.client, NS, d).await?;
        }
        Ok(())
    }

    async fn control_plane(&self, name: &str) -> Result<Value> {
        let kind = &self.ctx.roles.control_plane;
        Ok(objects::get(&self.ctx.kinds, self.client, kind, NS, name)
            .await?
            .unwrap_or(Value::Null))
    }

    /// The control plane `name` once `done` holds of it, or as it is when `timeout` is over.
    async fn wait(
        &self,
        name: &str,
        timeout: Duration,
        done: impl Fn(&Value) -> bool,
    ) -> Result<Value> {
        let start = Instant::now();
        loop {
            let cp = self.control_plane(name).await?;
            if done(&cp) || start.elapsed() > timeout {
                return Ok(cp);
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// The inventory once `still` no longer holds of it (at most a minute).
    async fn settled(&self, still: impl Fn(&[Item]) -> bool) -> Result<Vec<Item>> {
        let start = Instant::now();
        loop {
            let items = read_inventory(&self.url).await?;
            if !still(&items) || start.elapsed() > Duration::from_secs(60) {
                return Ok(items);
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }

    /// Deletes the Cluster `name` and waits for it to go (its finalizers stripped when it
    /// does not go in time).
    async fn delete(&self, name: &str) -> Result<()> {
        let ctx = self.ctx;
        objects::delete(&ctx.kinds, self.client, "Cluster", NS, name).await?;
        let deadline = Instant::now() + ctx.profile.timeouts.delete;
        let gone = || async {
            objects::get(&ctx.kinds, self.client, "Cluster", NS, name)
                .await
                .map(|c| c.is_none())
        };
        while Instant::now() < deadline && !gone().await? {
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        if !gone().await? {
            let kind = &ctx.roles.control_plane;
            objects::strip_finalizers(&ctx.kinds, self.client, kind, NS, name).await;
        }
        Ok(())
    }
}

fn ready(cp: &Value) -> bool {
    condition(cp, "Ready").is_some_and(|c| c["status"] == "True")
}
