//! What the cloud shows of the provider over a fault run: its inventory read before the
//! provider starts and sampled every five seconds after, judged at the end (no duplicate, no
//! leak, nothing deleted that was not the provider's), and the calls it sent before a 429's
//! `Retry-After` was over.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use anyhow::Result;
use serde_json::Value;

use super::harness::FaultRun;
use super::oracle::{self, Item};
use crate::procs::http_get;

/// What the inventory sampler has seen.
#[derive(Debug, Default)]
pub(super) struct Sampled {
    pub(super) duplicates: BTreeSet<String>,
    pub(super) owners: BTreeSet<String>,
    pub(super) errors: usize,
    pub(super) samples: usize,
}

impl FaultRun {
    pub(super) async fn start_inventory(&mut self) {
        let Some(url) = self.ctx.inventory_url() else {
            self.not_run.push(
                "duplicates, leaks and wrong deletions: the profile has no emulator.inventoryUrl"
                    .into(),
            );
            return;
        };
        match read_inventory(&url).await {
            Ok(items) => self.inventory_before = items,
            Err(e) => {
                self.finding(
                    "inventory",
                    format!("the first read of {url} failed: {e:#}"),
                );
                return;
            }
        }
        let sampled = self.sampled.clone();
        self.sampler = Some(tokio::spawn(async move {
            loop {
                let read = read_inventory(&url).await;
                {
                    let mut s = sampled
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    s.samples += 1;
                    match read {
                        Ok(items) => {
                            for d in oracle::duplicates(&items) {
                                s.duplicates.insert(d);
                            }
                            for i in items {
                                if let Some(o) = i.owner {
                                    s.owners.insert(o);
                                }
                            }
                        }
                        Err(_) => s.errors += 1,
                    }
                }
                tokio::time::sleep(Duration::from_secs(5)).await;
            }
        }));
    }

    pub(super) async fn final_inventory(&mut self) {
        let Some(url) = self.ctx.inventory_url() else {
            return;
        };
        if let Some(s) = self.sampler.take() {
            s.abort();
        }
        let (duplicates, owners, errors, samples) = {
            let s = self
                .sampled
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            (s.duplicates.clone(), s.owners.clone(), s.errors, s.samples)
        };
        eprintln!(
            "faults: the inventory was read {samples} times ({errors} failed reads); owners seen: {owners:?}"
        );
        self.figures.duplicates = duplicates.len();
        for d in duplicates {
            self.finding("no duplicate", d);
        }
        // The Cluster is gone; what the cloud still deletes gets a minute.
        let (leaks, after) = match after_deletion(&url, &owners).await {
            Ok(found) => found,
            Err(e) => {
                self.finding("inventory", format!("reading {url}: {e:#}"));
                return;
            }
        };
        self.figures.leaks = leaks.len();
        for l in leaks {
            self.finding(
                "no leak",
                format!("{l} is left after the Cluster was deleted"),
            );
        }
        let wrong = oracle::deleted_foreign(&self.inventory_before, &after);
        self.figures.wrong_deletions = wrong.len();
        for w in wrong {
            self.finding(
                "nothing deleted that was not ours",
                format!("{w} existed before the provider ran and is gone"),
            );
        }
    }

    pub(super) async fn early_calls(&mut self) {
        let Some(url) = self.url(|f| f.early_url.as_ref()) else {
            self.not_run
                .push("calls before Retry-After: the profile has no faults.earlyUrl".into());
            return;
        };
        match http_get(&url).await {
            Ok(text) => {
                let parsed: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                let all = parsed["early"].as_array().cloned().unwrap_or_default();
                // A call from a process started after the 429 (its predecessor was stopped or
                // killed in between) comes from one that was never told to wait.
                let (early, after_restart): (Vec<Value>, Vec<Value>) =
                    all.into_iter().partition(|e| {
                        let (from, to) = (
                            e["throttledAtMillis"].as_u64().unwrap_or(0),
                            e["atMillis"].as_u64().unwrap_or(u64::MAX),
                        );
                        !self.stops_at.iter().any(|s| (from..=to).contains(s))
                    });
                self.figures.early_calls_after_restart = after_restart.len();
                self.figures.early_calls = early.len();
                for e in early.iter().take(10) {
                    self.finding(
                        "no call before Retry-After",
                        format!(
                            "{} {} came {} ms before its Retry-After was over",
                            e["operation"].as_str().unwrap_or("?"),
                            e["target"].as_str().unwrap_or("?"),
                            e["earlyByMillis"]
                        ),
                    );
                }
                if early.len() > 10 {
                    self.finding(
                        "no call before Retry-After",
                        format!("and {} more", early.len() - 10),
                    );
                }
            }
            Err(e) => self.finding(
                "no call before Retry-After",
                format!("reading {url}: {e:#}"),
            ),
        }
    }
}

/// The cloud's inventory at `url`.
pub(crate) async fn read_inventory(url: &str) -> Result<Vec<Item>> {
    oracle::parse_inventory(&http_get(url).await?)
}

/// The owned, named, live resources of an inventory: `kind parent/name`.
pub(super) fn owned_names(items: &[Item]) -> BTreeSet<String> {
    items
        .iter()
        .filter(|i| i.owner.is_some() && !i.name.is_empty() && !i.leaving())
        .map(|i| format!("{} {}/{}", i.kind, i.parent, i.name))
        .collect()
}

/// The owned resources still in the inventory at `url`, waited for up to a minute (what the
/// cloud still deletes), and the inventory then.
pub(super) async fn after_deletion(
    url: &str,
    owners: &BTreeSet<String>,
) -> Result<(Vec<String>, Vec<Item>)> {
    settled(url, |items| oracle::leaks(items, owners)).await
}

/// What `left` finds in the inventory at `url` once it finds nothing, or after a minute (what
/// the cloud still deletes gets that long), and the inventory then.
pub(crate) async fn settled(
    url: &str,
    left: impl Fn(&[Item]) -> Vec<String>,
) -> Result<(Vec<String>, Vec<Item>)> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let items = read_inventory(url).await?;
        let found = left(&items);
        if found.is_empty() || Instant::now() > deadline {
            return Ok((found, items));
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}
