//! The Go peers of GKE and OKE through the benchmark's command at its smoke size, so `bench
//! --provider capg` and `--provider capoci` cannot rot: each brings one cluster on a brought
//! network to ready against its emulator (P11, P12, then a short rest), and the figures read from it are there (numbers, not
//! their values: speed is reported by the benchmark, never asserted by a test). Their cloud
//! calls are the emulator's counts (neither peer counts its own).

#![allow(clippy::unwrap_used, clippy::expect_used)]

fn bench(args: &[&str], stem: &str) -> serde_json::Value {
    let out = tempfile::tempdir().unwrap();
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_bench"))
        .args(args)
        // One cluster (P11, P12) and no sizes beyond it: a peer takes its time (CAPG looks again
        // a minute after each step, CAPOCI 30 s), and the sizes' path is the one ours and CAPA
        // smoke-test already.
        .args([
            "--sizes",
            "0",
            "--rest-seconds",
            "10",
            "--timeout-seconds",
            "600",
            "--no-relist",
            "--no-throttled",
            "--out",
        ])
        .arg(out.path())
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "bench {args:?} failed: {status}");
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.path().join(format!("{stem}-bench.json"))).unwrap(),
    )
    .unwrap();
    assert_eq!(report["provider"], stem);
    let f = &report["figures"];
    for (figure, field) in [
        ("P1", "idleRssMiB"),
        ("P7", "cloudReadsPerClusterHour"),
        ("P8", "apiWritesAtRest"),
        ("P10", "mCpuAtRest"),
        ("P11", "applyToProvisionedSeconds"),
        ("P12", "cloudCallsOneCluster"),
    ] {
        assert!(f[figure][field].is_number(), "{figure}.{field}: {f}");
    }
    assert!(f["P8"]["writesWhileCreating"].as_u64().unwrap() > 0, "{f}");
    report
}

/// CAPG v1.13.1: its calls reach the emulator over gRPC and REST through the proxy.
#[test]
fn capg_runs_at_its_smoke_size_through_the_benchmark() {
    let report = bench(
        &[
            "--provider",
            "capg",
            "--active-clusters",
            "0",
            "--delayed-clusters",
            "0",
        ],
        "capg",
    );
    let calls = report["figures"]["P12"]["byOperation"]
        .as_object()
        .unwrap()
        .clone();
    for op in ["CreateCluster", "GetNodePool", "GenerateAccessToken"] {
        assert!(calls.contains_key(op), "{op} in {calls:?}");
    }
}

/// CAPOCI v0.24.0, with P5 at one cluster: its control plane's `status.initialized` matched to
/// the emulator's ACTIVE by the OKE cluster's name.
#[test]
fn capoci_runs_at_its_smoke_size_through_the_benchmark() {
    let report = bench(
        &[
            "--provider",
            "capoci",
            "--active-clusters",
            "1",
            "--active-delay-seconds",
            "5",
            "--delayed-clusters",
            "0",
        ],
        "capoci",
    );
    let f = &report["figures"];
    assert_eq!(f["P5"]["matched"], 1, "{f}");
    let calls = f["P12"]["byOperation"].as_object().unwrap();
    for op in ["CreateCluster", "CreateNodePool"] {
        assert!(calls.contains_key(op), "{op} in {calls:?}");
    }
}
