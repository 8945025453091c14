//! The benchmark's smoke size, so the command cannot rot: `bench --sizes 1,2 --rest-seconds 20`
//! (P5 and P6 with one cluster kept CREATING for 5 s each) with debug builds, and `bench
//! --provider capa --sizes 1` (with the same P5 and P6) for the Go peer. It checks that every figure
//! the command claims was measured (numbers, not their values: speed is reported by the
//! benchmark, never asserted by a test).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[test]
fn the_benchmark_runs_at_its_smoke_size_and_reports_every_figure() {
    let out = tempfile::tempdir().unwrap();
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_bench"))
        .args([
            "--sizes",
            "1,2",
            "--rest-seconds",
            "20",
            "--poll-interval",
            "1s",
            "--timeout-seconds",
            "300",
            "--active-clusters",
            "1",
            "--active-delay-seconds",
            "5",
            "--delayed-clusters",
            "1",
            "--delayed-seconds",
            "5",
            "--out",
        ])
        .arg(out.path())
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "bench failed: {status}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("eks-bench.json")).unwrap())
            .unwrap();
    let f = &report["figures"];
    for (figure, field) in [
        ("P1", "idleRssMiB"),
        ("P2", "rssSlopeMiBPerCluster"),
        ("P3", "peakRssMiB"),
        ("P4", "secondsToReady"),
        ("P7", "cloudReadsPerClusterHour"),
        ("P7", "cloudWritesAtRest"),
        ("P8", "apiWritesAtRest"),
        ("P5", "p50Seconds"),
        ("P9", "secondsToReady"),
        ("P9", "callsBeforeRetryAfter"),
        ("P10", "mCpuAtRest"),
        ("P11", "applyToProvisionedSeconds"),
        ("P12", "cloudCallsOneCluster"),
    ] {
        assert!(f[figure][field].is_number(), "{figure}.{field}: {f}");
    }
    assert!(f["P1"]["idleRssMiB"].as_f64().unwrap() > 0.0, "{f}");
    // The audit log tells the provider's writes apart (else P8's count proves nothing).
    assert!(f["P8"]["writesWhileCreating"].as_u64().unwrap() > 0, "{f}");
    // P5 matched its cluster's ACTIVE milestone to its initialization.
    assert_eq!(f["P5"]["matched"], 1, "{f}");
    // P6 read the provider's reconcile histogram over its cluster's creation.
    assert!(f["P6"]["secondsToReady"].is_number(), "{f}");
    assert!(f["P6"]["reconciles"].as_u64().unwrap() > 0, "{f}");
    // The throttled batch met the fault (its first two answers are 429 for certain).
    assert!(f["P9"]["answered429"].as_u64().unwrap() >= 2, "{f}");
    // One cluster's creation reached both clouds' APIs.
    let calls = f["P12"]["byOperation"].as_object().unwrap();
    assert!(calls.keys().any(|k| k.starts_with("eks/")), "{calls:?}");
    assert!(calls.keys().any(|k| k.starts_with("ec2/")), "{calls:?}");
    assert_eq!(
        report["series"].as_array().unwrap().len(),
        3,
        "0, 1, 2 clusters"
    );
    for plot in ["eks-rss.svg", "eks-time.svg"] {
        let svg = std::fs::read_to_string(out.path().join(plot)).unwrap();
        assert!(svg.contains("<polyline"), "{plot}");
    }
}

/// The Go peer through the same command: CAPA v2.13.0 (built once by `testbed/build-capa.sh`)
/// brings one cluster on a brought network to ready against the same emulator and moto. It
/// checks that CAPA's own call counter was read and that its path through the emulator's Auto
/// Scaling group (where it reads its provider IDs) was taken.
#[test]
fn the_go_peer_runs_at_its_smoke_size_through_the_same_command() {
    let out = tempfile::tempdir().unwrap();
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_bench"))
        .args([
            "--provider",
            "capa",
            "--sizes",
            "1",
            "--rest-seconds",
            "10",
            "--timeout-seconds",
            "600",
            "--no-relist",
            "--no-throttled",
            "--active-clusters",
            "1",
            "--active-delay-seconds",
            "5",
            "--delayed-clusters",
            "1",
            "--delayed-seconds",
            "5",
            "--out",
        ])
        .arg(out.path())
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "bench --provider capa failed: {status}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("capa-bench.json")).unwrap())
            .unwrap();
    assert_eq!(report["provider"], "capa");
    let f = &report["figures"];
    for (figure, field) in [
        ("P1", "idleRssMiB"),
        ("P4", "secondsToReady"),
        ("P8", "apiWritesAtRest"),
        ("P10", "mCpuAtRest"),
        ("P11", "applyToProvisionedSeconds"),
        ("P12", "cloudCallsOneCluster"),
    ] {
        assert!(f[figure][field].is_number(), "{figure}.{field}: {f}");
    }
    assert!(f["P8"]["writesWhileCreating"].as_u64().unwrap() > 0, "{f}");
    // Its control plane's `status.initialized` (the v1beta1 contract) matched to the
    // emulator's ACTIVE by its `eksClusterName`, and controller-runtime's histogram read.
    assert_eq!(f["P5"]["matched"], 1, "{f}");
    assert!(f["P6"]["reconciles"].as_u64().unwrap() > 0, "{f}");
    let calls = f["P12"]["byOperation"].as_object().unwrap();
    for op in [
        "EKS/CreateCluster",
        "EKS/CreateNodegroup",
        "Auto Scaling/DescribeAutoScalingGroups",
    ] {
        assert!(calls.contains_key(op), "{op} in {calls:?}");
    }
    assert_eq!(
        report["series"].as_array().unwrap().len(),
        2,
        "0, 1 clusters"
    );
}
