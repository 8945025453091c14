//! The cloud's node instances over time, read from the profile's `instancesUrl`, for C51: a
//! provider ID may leave a pool's `providerIDList` only once the cloud no longer lists its
//! instance. Counting IDs against `status.replicas` cannot see a provider that drops an ID and
//! lowers its count together while the instance is still shutting down; the cloud's own list can.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::Value;

/// How often the list is read while a scale-down runs.
const EVERY: Duration = Duration::from_millis(200);

/// One read of the cloud's list.
#[derive(Debug, Clone)]
pub struct Observation {
    /// When the request was sent: the list reflects the cloud at this moment or later.
    pub sent: Instant,
    /// Provider ID → the cloud's state for it (`running`, `shutting-down`, …).
    pub instances: BTreeMap<String, String>,
}

/// Reads the list every [`EVERY`] until stopped.
#[derive(Debug)]
pub struct InstanceLog {
    seen: Arc<Mutex<Vec<Observation>>>,
    failures: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl InstanceLog {
    /// Starts reading `url`; fails when the first read fails (a wrong URL is the profile's error,
    /// not the provider's).
    pub async fn start(url: String) -> Result<Self> {
        let first = read(&url).await?;
        let seen = Arc::new(Mutex::new(vec![first]));
        let failures = Arc::new(Mutex::new(Vec::new()));
        let task = tokio::spawn({
            let seen = Arc::clone(&seen);
            let failures = Arc::clone(&failures);
            async move {
                loop {
                    tokio::time::sleep(EVERY).await;
                    match read(&url).await {
                        Ok(o) => seen.lock().unwrap_or_else(PoisonError::into_inner).push(o),
                        Err(e) => failures
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .push(format!("{e:#}")),
                    }
                }
            }
        });
        Ok(Self {
            seen,
            failures,
            task,
        })
    }

    /// Stops reading; the observations in order, and the reads that failed.
    pub fn stop(self) -> (Vec<Observation>, Vec<String>) {
        self.task.abort();
        (take(&self.seen), take(&self.failures))
    }
}

impl Drop for InstanceLog {
    fn drop(&mut self) {
        // A run cut short between start and stop does not leave the reads going.
        self.task.abort();
    }
}

fn take<T>(m: &Mutex<Vec<T>>) -> Vec<T> {
    std::mem::take(&mut *m.lock().unwrap_or_else(PoisonError::into_inner))
}

/// One read: `{"instances": [{"providerID": "...", "state": "..."}, …]}`.
async fn read(url: &str) -> Result<Observation> {
    let sent = Instant::now();
    let body = crate::procs::http_get(url).await?;
    let instances = parse(&body).with_context(|| format!("instancesUrl {url}"))?;
    Ok(Observation { sent, instances })
}

fn parse(body: &str) -> Result<BTreeMap<String, String>> {
    let v: Value = serde_json::from_str(body).context("not JSON")?;
    let Some(list) = v["instances"].as_array() else {
        bail!("no \"instances\" array");
    };
    let mut out = BTreeMap::new();
    for i in list {
        let Some(id) = i["providerID"].as_str() else {
            bail!("an instance without a providerID: {i}");
        };
        let state = i["state"].as_str().unwrap_or("unknown");
        out.insert(id.to_string(), state.to_string());
    }
    Ok(out)
}

/// One version of a pool's `providerIDList`, as the suite saw it.
#[derive(Debug, Clone)]
pub struct ListVersion {
    /// When the suite saw it (after it was written).
    pub at: Instant,
    /// Its resourceVersion, for the message.
    pub resource_version: String,
    /// The IDs.
    pub ids: Vec<String>,
}

/// Every provider ID that left the list while the cloud still listed its instance: an ID absent
/// from a version while a read sent after the suite saw that version still names the instance.
/// `start` is the list before the first version. Each problem names the pool, the ID, the
/// resourceVersion and the state the cloud reported.
pub fn premature_drops(
    pool: &str,
    start: &[String],
    versions: &[ListVersion],
    log: &[Observation],
) -> Vec<String> {
    let mut problems = Vec::new();
    let mut listed: BTreeSet<&str> = start.iter().map(String::as_str).collect();
    let mut judged: BTreeSet<&str> = BTreeSet::new();
    for v in versions {
        let now: BTreeSet<&str> = v.ids.iter().map(String::as_str).collect();
        for id in listed.difference(&now) {
            if !judged.insert(id) {
                continue;
            }
            if !log.iter().any(|o| o.sent > v.at) {
                problems.push(format!(
                    "{pool}: {id} left providerIDList at resourceVersion {} and no read of the cloud's instances came after it, so C51 could not judge it",
                    v.resource_version
                ));
                continue;
            }
            let still = log
                .iter()
                .find(|o| o.sent > v.at && o.instances.contains_key(*id));
            if let Some(o) = still {
                problems.push(format!(
                    "{pool}: {id} left providerIDList at resourceVersion {} while the cloud still listed its instance ({}) {:.1}s later",
                    v.resource_version,
                    o.instances[*id],
                    o.sent.duration_since(v.at).as_secs_f64()
                ));
            }
        }
        listed = now;
    }
    problems
}

/// The IDs of `ids` that no read names: a profile whose list does not cover the pool's
/// instances cannot judge C51.
pub fn never_listed<'a>(ids: &'a [String], log: &[Observation]) -> Vec<&'a str> {
    ids.iter()
        .filter(|id| !log.iter().any(|o| o.instances.contains_key(*id)))
        .map(String::as_str)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(t0: Instant, ms: u64, ids: &[(&str, &str)]) -> Observation {
        Observation {
            sent: t0 + Duration::from_millis(ms),
            instances: ids
                .iter()
                .map(|(i, s)| (i.to_string(), s.to_string()))
                .collect(),
        }
    }

    fn version(t0: Instant, ms: u64, rv: &str, ids: &[&str]) -> ListVersion {
        ListVersion {
            at: t0 + Duration::from_millis(ms),
            resource_version: rv.into(),
            ids: ids.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn an_id_dropped_while_its_instance_shuts_down_is_named_and_one_dropped_after_it_is_gone_is_not()
     {
        let t0 = Instant::now();
        let start = vec!["p://a".to_string(), "p://b".to_string()];
        let log = vec![
            obs(t0, 0, &[("p://a", "running"), ("p://b", "running")]),
            obs(t0, 200, &[("p://a", "running"), ("p://b", "shutting-down")]),
            obs(t0, 400, &[("p://a", "running"), ("p://b", "shutting-down")]),
            obs(t0, 600, &[("p://a", "running")]),
        ];
        let early = premature_drops("mp", &start, &[version(t0, 300, "7", &["p://a"])], &log);
        assert_eq!(early.len(), 1, "{early:?}");
        assert!(
            early[0].contains("p://b")
                && early[0].contains("resourceVersion 7")
                && early[0].contains("shutting-down"),
            "{}",
            early[0]
        );
        let on_time = premature_drops("mp", &start, &[version(t0, 500, "8", &["p://a"])], &log);
        assert!(on_time.is_empty(), "{on_time:?}");
        // A read sent before the suite saw the version proves nothing about it; with no read
        // after it at all, the drop is reported as unjudged rather than passed.
        let unknown = premature_drops(
            "mp",
            &start,
            &[version(t0, 450, "9", &["p://a"])],
            &log[..3],
        );
        assert_eq!(unknown.len(), 1, "{unknown:?}");
        assert!(unknown[0].contains("could not judge"), "{}", unknown[0]);
    }

    #[test]
    fn the_list_format_is_read_and_a_list_without_the_pools_ids_is_reported() {
        let parsed = parse(r#"{"instances":[{"providerID":"aws:///us-west-2a/i-1","state":"shutting-down","pool":"c/ng"}]}"#).unwrap();
        assert_eq!(parsed["aws:///us-west-2a/i-1"], "shutting-down");
        assert!(parse(r#"{"items":[]}"#).is_err());
        assert!(parse(r#"{"instances":[{"id":"i-1"}]}"#).is_err());
        let t0 = Instant::now();
        let ids = vec![
            "aws:///us-west-2a/i-1".to_string(),
            "aws:///us-west-2b/i-2".to_string(),
        ];
        let log = vec![Observation {
            sent: t0,
            instances: parsed,
        }];
        assert_eq!(never_listed(&ids, &log), ["aws:///us-west-2b/i-2"]);
    }
}
