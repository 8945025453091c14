//! What a run does, step by step: one cluster, then the sizes, the rest, the API server's
//! restart, the throttled batch and the batches kept CREATING, each measured through the probes
//! and turned into its figure; and the batches themselves, rendered by `clusterctl` and applied
//! a few at a time.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use kube::api::Api;
use serde_json::{Value, json};

use super::probes::{
    audit_writes, cloud_calls, cpu_seconds, diff, initialized_control_planes, readiness,
    reconcile_durations, rss_mib, split_reads, unix_millis,
};
use super::statistics::{percentile, round, slope};
use super::subject::Subject;
use super::{BenchOptions, Point};
use crate::env::{Cloud, Environment};

/// The share of EKS answers P9 throttles, and the `Retry-After` they carry (seconds).
const THROTTLE_RATE: f64 = 0.1;
const THROTTLE_RETRY_AFTER: u64 = 2;

/// How many clusters of a batch are being applied at any moment.
const APPLY_CONCURRENCY: usize = 8;

/// Runs the steps of the module docs in order against `env`; returns the figures and the
/// scaling series (the idle point first).
pub(super) async fn measure(
    env: &mut Environment,
    options: &BenchOptions,
) -> Result<(Value, Vec<Point>)> {
    let started_at = jiff::Timestamp::now();
    let subject = options.subject;
    let cloud = subject.cloud();
    let pid = env.provider_pid().context("the provider is not running")?;
    let metrics = env
        .metrics_url(cloud)
        .context("the provider has no metrics page")?;
    let kit = env
        .kit(cloud)
        .with_context(|| format!("{} is not emulated here", cloud.kind_prefix()))?;
    let client = env.plane.client().await?;

    // P1.
    tokio::time::sleep(Duration::from_secs(5)).await;
    let idle = rss_mib(pid)?;
    eprintln!("bench: P1 idle RSS {idle:.1} MiB");

    // P11, P12: one cluster.
    let calls_before = cloud_calls(&metrics, &kit, subject).await?;
    let one = "bench-one";
    test_namespace(&client, one).await?;
    let yaml = subject.render(env, "one", one).await?;
    let start = Instant::now();
    env.apply_yaml(&yaml, one).await?;
    let mut provisioned = None;
    loop {
        env.ensure_provider_running()?;
        let state = readiness(&client, one, subject).await?;
        if provisioned.is_none() && state.provisioned == 1 {
            provisioned = Some(start.elapsed().as_secs_f64());
        }
        if state.ready == 1 {
            break;
        }
        if start.elapsed() > options.timeout {
            anyhow::bail!("one cluster was not ready within {:?}", options.timeout);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let one_ready = start.elapsed().as_secs_f64();
    let one_calls = diff(&calls_before, &cloud_calls(&metrics, &kit, subject).await?);
    let p11 = provisioned.unwrap_or(one_ready);
    eprintln!(
        "bench: P11 one cluster Provisioned after {p11:.1}s (ready {one_ready:.1}s), P12 {} cloud calls",
        one_calls.values().sum::<u64>()
    );

    // P2, P4: the sizes.
    let ns = "bench";
    test_namespace(&client, ns).await?;
    let mut series = vec![Point {
        clusters: 0,
        rss_mib: idle,
        seconds_to_ready: 0.0,
    }];
    let mut made = 0;
    for &size in &options.sizes {
        if size <= made {
            continue;
        }
        let clusters = batch(env, subject, ns, "c", made..size).await?;
        let start = Instant::now();
        apply_batch(env, &clusters, ns).await?;
        loop {
            env.ensure_provider_running()?;
            let state = readiness(&client, ns, subject).await?;
            if state.ready == size {
                break;
            }
            if start.elapsed() > options.timeout {
                anyhow::bail!(
                    "{} of {size} clusters ready after {:?}",
                    state.ready,
                    options.timeout
                );
            }
            tokio::time::sleep(poll_every(size)).await;
        }
        let seconds = start.elapsed().as_secs_f64();
        made = size;
        tokio::time::sleep(Duration::from_secs(5)).await;
        let rss = rss_mib(pid)?;
        eprintln!(
            "bench: {size} clusters: {} new ready after {seconds:.1}s, RSS {rss:.1} MiB",
            size - series.last().map_or(0, |p| p.clusters)
        );
        series.push(Point {
            clusters: size,
            rss_mib: rss,
            seconds_to_ready: seconds,
        });
    }
    let total = made + 1;

    // P7, P8, P10: at rest. What the last pass of each object still writes settles first.
    tokio::time::sleep(Duration::from_secs(15)).await;
    let calls_from = cloud_calls(&metrics, &kit, subject).await?;
    let cpu_from = cpu_seconds(pid)?;
    let window_from = jiff::Timestamp::now();
    let clock = Instant::now();
    tokio::time::sleep(options.rest).await;
    let seconds = clock.elapsed().as_secs_f64();
    let window_to = jiff::Timestamp::now();
    let cpu = cpu_seconds(pid)? - cpu_from;
    let at_rest = diff(&calls_from, &cloud_calls(&metrics, &kit, subject).await?);
    // The audit log is written in batches of up to a second.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let writes = audit_writes(
        &env.plane.audit_log(),
        subject.binary(),
        window_from,
        window_to,
    )?;
    // The same count over the creations: it shows the log sees the provider's writes at all.
    let writes_creating: u64 = audit_writes(
        &env.plane.audit_log(),
        subject.binary(),
        started_at,
        window_from,
    )?
    .values()
    .sum();
    let (reads, cloud_writes) = split_reads(&at_rest);
    let per_cluster_hour = |n: u64| round(n as f64 / total as f64 * 3600.0 / seconds);
    // `--rest-seconds 0` leaves the at-rest figures out (runs for the other figures only).
    let at_rest_measured = !options.rest.is_zero();
    let kubeconfig_refreshes: u64 = writes
        .iter()
        .filter(|(what, _)| what.starts_with("secrets "))
        .map(|(_, n)| n)
        .sum();
    let api_writes: u64 = writes.values().sum::<u64>() - kubeconfig_refreshes;
    eprintln!(
        "bench: at rest {seconds:.0}s with {total} clusters: {reads} cloud reads, {cloud_writes} cloud writes, {api_writes} API writes (+{kubeconfig_refreshes} kubeconfig), {:.1} mCPU",
        cpu / seconds * 1000.0
    );

    // P3.
    let relist = if options.relist {
        let steady = rss_mib(pid)?;
        let sampler = tokio::spawn(async move {
            let mut peak = 0.0f64;
            let until = Instant::now() + Duration::from_secs(40);
            while Instant::now() < until {
                peak = peak.max(rss_mib(pid).unwrap_or(0.0));
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            peak
        });
        let down = env
            .plane
            .restart_apiserver(Duration::from_secs(2), false)
            .await?;
        let peak = sampler.await?;
        env.ensure_provider_running()?;
        eprintln!(
            "bench: P3 steady {steady:.1} MiB, peak {peak:.1} MiB across a kube-apiserver restart"
        );
        json!({
            "steadyRssMiB": round(steady),
            "peakRssMiB": round(peak),
            "ratio": round(peak / steady),
            "apiServerDownSeconds": round(down.as_secs_f64()),
        })
    } else {
        Value::Null
    };

    // P9: the first size again, in a namespace of its own, applied at once while 10 % of the
    // emulator's answers are 429 + Retry-After (EKS's EC2 calls go to moto, which throttles
    // nothing).
    let throttled = match (options.throttled, series.get(1).copied()) {
        (true, Some(free)) => {
            let ns = "bench-throttled";
            test_namespace(&client, ns).await?;
            let clusters = batch(env, subject, ns, "t", 0..free.clusters).await?;
            let answered = |kit: &emulators::kit::Kit| -> u64 {
                kit.calls
                    .snapshot()
                    .values()
                    .filter_map(|outcomes| outcomes.get("fault"))
                    .sum()
            };
            let faults_before = answered(&kit);
            let early_before = kit.promises.early().len();
            let calls_before = cloud_calls(&metrics, &kit, subject).await?;
            // The next two answers for certain (so even a small size meets the fault), then a
            // share of the rest.
            for trigger in [json!({"count": 2}), json!({"rate": THROTTLE_RATE})] {
                kit.faults.add(serde_json::from_value(json!({
                    "operation": "*",
                    "fault": {"kind": "throttle", "retryAfterSeconds": THROTTLE_RETRY_AFTER},
                    "trigger": trigger,
                }))?);
            }
            let start = Instant::now();
            apply_batch(env, &clusters, ns).await?;
            let outcome = loop {
                env.ensure_provider_running()?;
                let state = readiness(&client, ns, subject).await?;
                if state.ready == free.clusters {
                    break Ok(start.elapsed().as_secs_f64());
                }
                if start.elapsed() > options.timeout {
                    break Err(anyhow::anyhow!(
                        "{} of {} throttled clusters ready after {:?}",
                        state.ready,
                        free.clusters,
                        options.timeout
                    ));
                }
                tokio::time::sleep(poll_every(free.clusters)).await;
            };
            kit.faults.clear();
            let seconds = outcome?;
            let calls = diff(&calls_before, &cloud_calls(&metrics, &kit, subject).await?);
            let early = kit.promises.early().len() - early_before;
            let throttled_answers = answered(&kit) - faults_before;
            eprintln!(
                "bench: P9 {} clusters with {:.0} % of {} answers 429: ready after {seconds:.1}s ({:.2}× the {:.1}s without), {throttled_answers} answered 429, {early} calls before Retry-After",
                free.clusters,
                THROTTLE_RATE * 100.0,
                cloud.kind_prefix(),
                seconds / free.seconds_to_ready,
                free.seconds_to_ready
            );
            json!({
                "clusters": free.clusters,
                "secondsToReady": round(seconds),
                "faultFreeSecondsToReady": round(free.seconds_to_ready),
                "ratio": round(seconds / free.seconds_to_ready),
                "answered429": throttled_answers,
                "callsBeforeRetryAfter": early,
                "cloudCalls": calls.values().sum::<u64>(),
                "retryAfterSeconds": THROTTLE_RETRY_AFTER,
                "rate": THROTTLE_RATE,
                "scope": if cloud == Cloud::Eks {
                    "EKS calls (the emulator); EC2 calls go to moto, unthrottled"
                } else {
                    "every call (the emulator)"
                },
                "target": "no call before Retry-After; ready within 1.5 × the fault-free time",
            })
        }
        _ => Value::Null,
    };

    // P5: clusters created at once while the emulator keeps each CREATING for `active_delay`;
    // for each, the time from the emulator's ACTIVE to its control plane initialized. Twice:
    // the first batch meets a provider that has never seen a create take that long, the second
    // one that has (ours paces its looks by what earlier creates took: `contract::pace`).
    let active = if options.active_clusters > 0 {
        let first = active_batch(env, &client, options, "bench-active", "a").await?;
        let second = active_batch(env, &client, options, "bench-active-again", "b").await?;
        let mut figure = first;
        figure["again"] = second;
        figure["target"] = json!("p50 ≤ 2 s, p99 ≤ 10 s (100 at once)");
        figure
    } else {
        Value::Null
    };

    // P6: clusters created at once while the emulator keeps each CREATING for `delayed_for`
    // (the target's scale: 200 for 14 minutes, a real EKS create): the time to all ready, and
    // whether a worker was held through the wait, from the provider's own reconcile-duration
    // histogram over the run (a provider that waits on the cloud inside a reconcile shows
    // reconciles as long as the create).
    let delayed = if options.delayed_clusters > 0 {
        let ns = "bench-delayed";
        test_namespace(&client, ns).await?;
        let n = options.delayed_clusters;
        let clusters = batch(env, subject, ns, "d", 0..n).await?;
        let before = hold_creates(&kit, options.delayed_for);
        let reconciles_before = reconcile_durations(&metrics, subject).await?;
        let calls_before = cloud_calls(&metrics, &kit, subject).await?;
        let start = Instant::now();
        apply_batch(env, &clusters, ns).await?;
        let limit = options.timeout + options.delayed_for;
        let mut provisioned_after = None;
        let outcome = loop {
            env.ensure_provider_running()?;
            let state = readiness(&client, ns, subject).await?;
            if provisioned_after.is_none() && state.provisioned == n {
                provisioned_after = Some(start.elapsed().as_secs_f64());
            }
            if state.ready == n {
                break Ok(start.elapsed().as_secs_f64());
            }
            if start.elapsed() > limit {
                break Err(anyhow::anyhow!(
                    "{} of {n} delayed clusters ready after {limit:?}",
                    state.ready
                ));
            }
            tokio::time::sleep(poll_every(n).max(Duration::from_secs(2))).await;
        };
        kit.set_timing(before);
        let seconds = outcome?;
        let reconciles = reconcile_durations(&metrics, subject)
            .await?
            .since(&reconciles_before);
        let calls = diff(&calls_before, &cloud_calls(&metrics, &kit, subject).await?);
        let over = reconciles.over(10.0);
        eprintln!(
            "bench: P6 {n} clusters CREATING {:.0}s each: all ready after {seconds:.1}s; {} reconciles, {} of them over {:.0}s, the longest {}",
            options.delayed_for.as_secs_f64(),
            reconciles.count(),
            over.1,
            over.0,
            reconciles.longest_text()
        );
        json!({
            "clusters": n,
            "creatingSeconds": options.delayed_for.as_secs_f64(),
            "secondsToProvisioned": provisioned_after.map(round),
            "secondsToReady": round(seconds),
            "overheadSeconds": round(seconds - options.delayed_for.as_secs_f64()),
            "reconciles": reconciles.count(),
            "reconcilesOverSeconds": {"seconds": over.0, "count": over.1},
            "longestReconcile": reconciles.longest_text(),
            "reconcileHistogram": reconciles.to_json(),
            "cloudCalls": calls.values().sum::<u64>(),
            "cloudCallsPerCluster": round(calls.values().sum::<u64>() as f64 / n as f64),
            "target": "200 clusters, 14 minutes each: all ready ≤ 15 min; no worker blocked on cloud I/O",
        })
    } else {
        Value::Null
    };

    // The slope is taken over the sizes, not from the idle point: the first cluster also pays
    // for what a provider loads once (cloud clients, caches), which P1 and this keep apart.
    let sized: Vec<(f64, f64)> = series
        .iter()
        .filter(|p| p.clusters > 0)
        .map(|p| (p.clusters as f64, p.rss_mib))
        .collect();
    let slope = slope(&sized);
    let largest = series.last().copied();
    let figures = json!({
        "P1": {"idleRssMiB": round(idle), "target": "≤ 12 MiB"},
        "P2": {
            "rssSlopeMiBPerCluster": slope.map(round),
            "from": series.get(1).map(|p| p.clusters),
            "to": largest.map(|p| p.clusters),
            "target": "≤ 0.15 MiB per cluster",
        },
        "P3": relist,
        "P4": {
            "clusters": largest.map(|p| p.clusters),
            "secondsToReady": largest.map(|p| round(p.seconds_to_ready)),
            "target": "1,000 clusters ≤ 10 min",
        },
        "P7": at_rest_measured.then(|| json!({
            "cloudReadsPerClusterHour": per_cluster_hour(reads),
            "cloudWritesAtRest": cloud_writes,
            "byOperation": at_rest,
            "target": "≤ 6 reads, 0 writes",
        })),
        "P8": if at_rest_measured {
            json!({
                "apiWritesAtRest": api_writes,
                "kubeconfigRefreshes": kubeconfig_refreshes,
                "writesWhileCreating": writes_creating,
                "byResource": writes,
                "windowSeconds": round(seconds),
                "clusters": total,
                "target": "0 (kubeconfig refreshes excepted and counted)",
            })
        } else {
            json!({"writesWhileCreating": writes_creating})
        },
        "P5": active,
        "P6": delayed,
        "P9": throttled,
        "P10": at_rest_measured.then(|| json!({"mCpuAtRest": round(cpu / seconds * 1000.0), "target": "≤ 50 mCPU"})),
        "P11": {"applyToProvisionedSeconds": round(p11), "applyToReadySeconds": round(one_ready), "target": "≤ 10 s"},
        "P12": {
            "cloudCallsOneCluster": one_calls.values().sum::<u64>(),
            "byOperation": one_calls,
            "target": "≤ 40",
        },
    });
    Ok((figures, series))
}

/// One P5 batch in `ns`: `active_clusters` applied at once while the emulator keeps each
/// CREATING for `active_delay`; for each, the emulator's ACTIVE (its ticker's milestone) to the
/// control plane seen initialized (polled every 200 ms); p50, p99 and the longest.
async fn active_batch(
    env: &mut Environment,
    client: &kube::Client,
    options: &BenchOptions,
    ns: &str,
    prefix: &str,
) -> Result<Value> {
    let kit = env
        .kit(options.subject.cloud())
        .context("the cloud is not emulated here")?;
    test_namespace(client, ns).await?;
    let n = options.active_clusters;
    let clusters = batch(env, options.subject, ns, prefix, 0..n).await?;
    let before = hold_creates(&kit, options.active_delay);
    apply_batch(env, &clusters, ns).await?;
    let start = Instant::now();
    let mut initialized: BTreeMap<String, u64> = BTreeMap::new();
    let outcome = loop {
        env.ensure_provider_running()?;
        let now = unix_millis();
        for cloud in initialized_control_planes(client, ns, options.subject).await? {
            initialized.entry(cloud).or_insert(now);
        }
        if initialized.len() == n {
            break Ok(());
        }
        if start.elapsed() > options.timeout {
            break Err(anyhow::anyhow!(
                "{} of {n} control planes initialized after {:?}",
                initialized.len(),
                options.timeout
            ));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    kit.set_timing(before);
    outcome?;
    let active_at: BTreeMap<String, u64> = kit
        .milestones
        .all()
        .into_iter()
        .filter(|m| m.state == options.subject.created_state())
        .filter_map(|m| {
            Some((
                m.resource.strip_prefix("cluster/")?.to_string(),
                m.at_millis,
            ))
        })
        .collect();
    let mut overheads: Vec<f64> = initialized
        .iter()
        .filter_map(|(name, done)| {
            let at = active_at.get(name)?;
            Some(done.saturating_sub(*at) as f64 / 1000.0)
        })
        .collect();
    overheads.sort_by(f64::total_cmp);
    let p50 = percentile(&overheads, 0.5);
    let p99 = percentile(&overheads, 0.99);
    eprintln!(
        "bench: P5 ({ns}) {n} clusters CREATING {:.0}s each: ACTIVE → initialized p50 {:.1}s, p99 {:.1}s ({} of {n} matched)",
        options.active_delay.as_secs_f64(),
        p50.unwrap_or(f64::NAN),
        p99.unwrap_or(f64::NAN),
        overheads.len()
    );
    Ok(json!({
        "clusters": n,
        "matched": overheads.len(),
        "creatingSeconds": options.active_delay.as_secs_f64(),
        "p50Seconds": p50.map(round),
        "p99Seconds": p99.map(round),
        "maxSeconds": overheads.last().copied().map(round),
    }))
}

/// Makes the emulator keep every cluster created from now on creating for `delay`; returns the
/// timing to put back.
fn hold_creates(kit: &emulators::kit::Kit, delay: Duration) -> emulators::kit::Timing {
    let before = kit.timing();
    let mut slow = before;
    slow.cluster.create = delay.as_secs_f64();
    kit.set_timing(slow);
    before
}

async fn test_namespace(client: &kube::Client, name: &str) -> Result<()> {
    use k8s_openapi::api::core::v1::Namespace;
    let api: Api<Namespace> = Api::all(client.clone());
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": name}}))?;
    match api.create(&Default::default(), &ns).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(e)) if e.code == 409 => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// The YAML of clusters `<prefix><i>` for every `i` of `range` in `ns` (one pool of one node
/// each, [`Subject::render`]), to apply at once.
async fn batch(
    env: &Environment,
    subject: Subject,
    ns: &str,
    prefix: &str,
    range: std::ops::Range<usize>,
) -> Result<Vec<String>> {
    use futures::{StreamExt, TryStreamExt};
    // Rendered a few at a time (each is a clusterctl process), kept in order.
    futures::stream::iter(range)
        .map(|i| async move { subject.render(env, &format!("{prefix}{i}"), ns).await })
        .buffered(APPLY_CONCURRENCY)
        .try_collect()
        .await
}

/// How often the bench lists a namespace of `clusters` clusters to see how many are ready:
/// every second up to 100, then every `clusters / 100` seconds. A list of 1,000 Clusters is
/// ~14 MB of JSON; listing them and their pools every second kept kube-apiserver — the one the
/// provider measured writes to — busy most of a core, and slowed what it measures.
fn poll_every(clusters: usize) -> Duration {
    Duration::from_millis(10 * clusters as u64).max(Duration::from_secs(1))
}

/// Applies a batch's clusters "at once": a few at a time over their own connections, as a
/// user's tooling (or `kubectl apply` of a directory) would; a thousand clusters' objects are
/// thousands of requests, which one after the other would spread "at once" over minutes.
async fn apply_batch(env: &Environment, clusters: &[String], ns: &str) -> Result<()> {
    use futures::TryStreamExt;
    futures::stream::iter(clusters.iter().map(Ok))
        .try_for_each_concurrent(APPLY_CONCURRENCY, |yaml| async move {
            env.apply_yaml(yaml, ns).await.map(drop)
        })
        .await
}
