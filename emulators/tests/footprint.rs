//! Benchmark (not run by default): the EKS emulator's resident memory and start-up time with
//! 100 clusters (workload API servers off) and with 3 clusters (on).
//!
//!     cargo test -p emulators --test footprint -- --ignored --nocapture
//!
//! Writes `target/bench/emulator-footprint.json`. Numbers, not assertions: speed is reported,
//! never asserted in a test.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use aws_sdk_eks::types::{ClusterStatus, VpcConfigRequest};
use common::{AKID, SECRET};

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            l.strip_prefix("VmRSS:")
                .map(|v| v.trim().trim_end_matches(" kB").trim().parse().unwrap_or(0))
        })
        .unwrap_or(0)
}

/// RSS of `pid` and of every descendant (the workload kube-apiservers and their etcd).
fn tree_rss_kib(pid: u32) -> u64 {
    let mut total = rss_kib(pid);
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{child}/stat")).unwrap_or_default();
        let ppid = stat
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(pid) {
            total += tree_rss_kib(child);
        }
    }
    total
}

async fn run(clusters: usize, workload: bool) -> serde_json::Value {
    let started = Instant::now();
    let mut args = vec!["eks", "--cluster-delay", "0", "--pool-delay", "0"];
    let credential = format!("{AKID}:{SECRET}");
    args.extend(["--credential", credential.as_str()]);
    if workload {
        args.push("--workload-servers");
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_emulator"))
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap()
        .to_string();
    let startup = started.elapsed();
    let idle_rss = rss_kib(child.id());

    let config = aws_sdk_eks::config::Builder::new()
        .behavior_version_latest()
        .endpoint_url(&url)
        .region(aws_sdk_eks::config::Region::new("us-west-2"))
        .credentials_provider(aws_sdk_eks::config::Credentials::new(
            AKID, SECRET, None, None, "bench",
        ))
        .http_client(
            aws_smithy_http_client::Builder::new()
                .tls_provider(aws_smithy_http_client::tls::Provider::Rustls(
                    aws_smithy_http_client::tls::rustls_provider::CryptoMode::Ring,
                ))
                .build_https(),
        )
        .build();
    let eks = aws_sdk_eks::Client::from_conf(config);
    let create_start = Instant::now();
    for i in 0..clusters {
        eks.create_cluster()
            .name(format!("bench-{i}"))
            .role_arn("arn:aws:iam::123456789012:role/eks")
            .resources_vpc_config(
                VpcConfigRequest::builder()
                    .subnet_ids("subnet-a")
                    .subnet_ids("subnet-b")
                    .build(),
            )
            .send()
            .await
            .unwrap();
    }
    loop {
        let mut active = 0;
        for i in 0..clusters {
            let c = eks
                .describe_cluster()
                .name(format!("bench-{i}"))
                .send()
                .await
                .unwrap();
            if c.cluster().and_then(|c| c.status()) == Some(&ClusterStatus::Active) {
                active += 1;
            }
        }
        if active == clusters {
            break;
        }
        assert!(
            create_start.elapsed() < Duration::from_secs(300),
            "clusters not ACTIVE in time"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let all_active = create_start.elapsed();
    let emulator_rss = rss_kib(child.id());
    let tree_rss = tree_rss_kib(child.id());
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let _ = child.wait();
    serde_json::json!({
        "clusters": clusters,
        "workload_servers": workload,
        "startup_to_listening_ms": startup.as_millis(),
        "idle_rss_mib": idle_rss as f64 / 1024.0,
        "create_to_all_active_ms": all_active.as_millis(),
        "emulator_rss_mib": emulator_rss as f64 / 1024.0,
        "emulator_and_workload_servers_rss_mib": tree_rss as f64 / 1024.0,
    })
}

#[tokio::test]
#[ignore = "benchmark: run with --ignored"]
async fn emulator_footprint() {
    let results = vec![run(100, false).await, run(3, true).await];
    let text = serde_json::to_string_pretty(&results).unwrap();
    println!("{text}");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("emulator-footprint.json"), text).unwrap();
}
