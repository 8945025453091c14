//! Benchmark (not run by default): time from applying a Cluster to `Provisioned` (and to nodes
//! Ready) with 0 s and 30 s emulated EKS provisioning delays, and the provider's resident memory
//! idle and with 10 clusters.
//!
//!     cargo build -p provider-aws && cargo test -p demo --test provisioning_benchmark -- --ignored --nocapture
//!
//! Writes `target/bench/eks-provisioning.json`. Numbers are reported, never asserted.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use demo::env::{EnvOptions, Environment};
use demo::progress::Tracker;
use serde_json::json;

fn rss_mib(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            l.strip_prefix("VmRSS:").map(|v| {
                v.trim()
                    .trim_end_matches(" kB")
                    .trim()
                    .parse::<f64>()
                    .unwrap_or(0.0)
            })
        })
        .unwrap_or(0.0)
        / 1024.0
}

/// Applies `count` clusters (one worker each) and returns (seconds to all Provisioned, seconds to
/// all settled with nodes).
async fn provision(env: &mut Environment, ns: &str, count: usize) -> (f64, f64) {
    let client = env.plane.client().await.unwrap();
    test_support::create_namespace(&client, ns).await;
    let mut docs = String::new();
    for i in 0..count {
        docs.push_str(
            &env.generate_cluster(&format!("c{i}"), ns, "v1.31.0", 1)
                .await
                .unwrap(),
        );
        docs.push_str("\n---\n");
    }
    let started = Instant::now();
    env.apply_yaml(&docs, ns).await.unwrap();
    let mut provisioned_at = None;
    let mut tracker = Tracker::quiet();
    loop {
        env.ensure_provider_running().unwrap();
        let s = tracker.poll(&client, ns).await.unwrap();
        let clusters = s
            .cluster_phases
            .values()
            .filter(|p| p.as_str() == "Provisioned")
            .count();
        if clusters == count && provisioned_at.is_none() {
            provisioned_at = Some(started.elapsed().as_secs_f64());
        }
        let settled = s.pools.len() == count
            && s.pools
                .values()
                .all(|(d, refs, phase)| *refs as i64 == *d && phase == "Running");
        if provisioned_at.is_some() && settled {
            return (
                provisioned_at.unwrap_or_default(),
                started.elapsed().as_secs_f64(),
            );
        }
        assert!(
            started.elapsed() < Duration::from_secs(900),
            "not provisioned in time: {s:?}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

#[tokio::test]
#[ignore = "benchmark: run with --ignored"]
async fn eks_provisioning_and_provider_memory() {
    let mut results = Vec::new();
    for delay in [0.0, 30.0] {
        let mut env = Environment::start(EnvOptions {
            cluster_delay: delay,
            pool_delay: delay / 3.0,
            poll_interval: "2s",
            ..EnvOptions::default()
        })
        .await
        .unwrap();
        let pid = env.provider_pid().unwrap();
        tokio::time::sleep(Duration::from_secs(3)).await;
        let idle = rss_mib(pid);
        let (provisioned, settled) = provision(&mut env, "one", 1).await;
        let mut entry = json!({
            "emulated_cluster_delay_s": delay,
            "emulated_pool_delay_s": delay / 3.0,
            "poll_interval_s": 2,
            "apply_to_provisioned_s": provisioned,
            "apply_to_nodes_ready_s": settled,
            "provider_idle_rss_mib": idle,
        });
        if delay == 0.0 {
            let (p10, s10) = provision(&mut env, "ten", 10).await;
            tokio::time::sleep(Duration::from_secs(5)).await;
            entry["ten_more_clusters_apply_to_provisioned_s"] = json!(p10);
            entry["ten_more_clusters_apply_to_nodes_ready_s"] = json!(s10);
            entry["provider_rss_with_11_clusters_mib"] = json!(rss_mib(pid));
        }
        println!("{entry}");
        results.push(entry);
        env.stop().await;
    }
    let text = serde_json::to_string_pretty(&results).unwrap();
    println!("{text}");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("eks-provisioning.json"), text).unwrap();
}
