//! What the suite's own tests share: where cargo put the binaries the profiles start, and a
//! whole run of a provider's profile.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// `target/<profile>`: this test's executable lives in its `deps/`.
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    exe.ancestors()
        .nth(2)
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// The workspace root (profiles name their binaries relative to it).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Fails with how to build them when `names` are not in [`target_dir`].
pub fn require_binaries(names: &[&str], package_hint: &str) {
    let bin = target_dir();
    for needed in names {
        assert!(
            bin.join(needed).is_file(),
            "{} is missing: build it with `cargo build {package_hint}`",
            bin.join(needed).display()
        );
    }
}

/// The checks the suite's v1 cannot judge for a managed-node-pool provider.
pub const EXPECTED_SKIPS: &[&str] = &["C43"];

/// Runs `conformance run --profile <profile>` exactly as a provider maintainer does (the real
/// binaries named by the profile, two real management planes, the real clusterctl, the cloud's
/// emulator) and fails unless every applicable check passes and only [`EXPECTED_SKIPS`] skip.
pub fn passes_every_applicable_check(
    cloud: &str,
    profile: &str,
    binaries: &[&str],
    packages: &str,
) {
    let junit = target_dir().join(format!("conformance-{cloud}.xml"));
    let (success, stdout) = conformance(
        &[
            "run",
            "--profile",
            profile,
            "--junit",
            &junit.display().to_string(),
        ],
        binaries,
        packages,
        40,
    );
    assert!(success, "conformance run failed for {cloud}");
    let xml = std::fs::read_to_string(&junit).unwrap_or_default();
    assert!(
        xml.contains("failures=\"0\""),
        "JUnit shows failures:\n{xml}"
    );
    let skipped: Vec<&str> = stdout
        .lines()
        .filter_map(|l| {
            let mut parts = l.split_whitespace();
            let id = parts.next()?;
            (parts.next()? == "skip").then_some(id)
        })
        .collect();
    assert_eq!(
        skipped, EXPECTED_SKIPS,
        "only the checks the suite cannot judge for managed pools may be skipped"
    );
}

/// Runs the conformance binary from the workspace root with `args` and `--set=BIN_DIR=<target
/// dir>`, once `binaries` are built; shows its stdout and the last `tail_lines` of its stderr;
/// returns whether it succeeded, and its stdout.
fn conformance(
    args: &[&str],
    binaries: &[&str],
    packages: &str,
    tail_lines: usize,
) -> (bool, String) {
    let bin = target_dir();
    require_binaries(binaries, packages);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_conformance"))
        .current_dir(root())
        .args(args)
        .arg(format!("--set=BIN_DIR={}", bin.display()))
        .output()
        .unwrap_or_else(|e| panic!("running conformance {}: {e}", args[0]));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    eprintln!(
        "--- stdout\n{stdout}\n--- stderr (tail)\n{}",
        lines[lines.len().saturating_sub(tail_lines)..].join("\n")
    );
    (out.status.success(), stdout)
}

/// Runs `conformance faults --profile <profile>` exactly as a provider maintainer does (seed
/// `FAULTS_SEED`, default 20261202; 20 SIGKILLs; `FAULTS_STILL` seconds of stillness, default 30)
/// and fails unless every oracle held and the run did all it claims: every planned kill, one
/// kube-apiserver restart, a pool and the cluster deleted behind the provider's back, every
/// cloud fault kind answered, updates refused with 409, the leader seen writing (so the
/// standby's none means something), logs searched, nothing left out for want of a way in.
pub fn holds_every_fault_oracle(cloud: &str, profile: &str, binaries: &[&str], packages: &str) {
    let json = target_dir().join(format!("faults-{cloud}.json"));
    let seed = std::env::var("FAULTS_SEED").unwrap_or_else(|_| "20261202".into());
    let still = std::env::var("FAULTS_STILL").unwrap_or_else(|_| "30".into());
    let (success, _) = conformance(
        &[
            "faults",
            "--profile",
            profile,
            "--kills",
            "20",
            "--seed",
            &seed,
            "--still",
            &still,
            "--json",
            &json.display().to_string(),
        ],
        binaries,
        packages,
        60,
    );
    assert!(success, "conformance faults failed for {cloud}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap_or_default())
            .unwrap_or_default();
    let figures = &report["figures"];
    // The run must have done what it claims: every planned kill, every fault kind answered.
    assert_eq!(figures["kills"], 20, "{figures}");
    assert_eq!(figures["apiServerRestarts"], 1, "{figures}");
    assert_eq!(
        figures["outsideDeletions"], 2,
        "a node group, then the EKS cluster: {figures}"
    );
    for kind in ["429", "503", "dropped", "latency"] {
        let answered = figures["cloudFaults"]
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, _)| k.contains(kind))
            .map(|(_, v)| v.as_u64().unwrap_or(0))
            .sum::<u64>();
        assert!(answered > 0, "no {kind} fault was answered: {figures}");
    }
    assert!(
        figures["conflictsInjected"].as_u64().unwrap_or(0) > 0,
        "no update was answered 409: {figures}"
    );
    assert!(
        figures["leaderWrites"].as_u64().unwrap_or(0) > 0,
        "the proxy saw no write from the leader, so the standby's 0 proves nothing: {figures}"
    );
    assert!(
        figures["logBytes"].as_u64().unwrap_or(0) > 0,
        "no provider log was searched: {figures}"
    );
    assert_eq!(
        report["notRun"],
        serde_json::json!([]),
        "the {cloud} profile gives every fault a way in"
    );
}

/// `conformance private` on `profile`: a private-only cluster created, upgraded, scaled and
/// deleted from the cloud API alone, with core unable to reach it and the pools saying so.
pub fn manages_a_private_only_cluster(
    cloud: &str,
    profile: &str,
    binaries: &[&str],
    packages: &str,
) {
    let json = target_dir().join(format!("private-{cloud}.json"));
    let (success, _) = conformance(
        &[
            "private",
            "--profile",
            profile,
            "--json",
            &json.display().to_string(),
        ],
        binaries,
        packages,
        60,
    );
    assert!(success, "conformance private failed for {cloud}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap_or_default())
            .unwrap_or_default();
    // The run did what it claims: every step reached, core kept out, every pool saying so.
    let steps: Vec<&str> = report["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| s["reached"] == true)
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert_eq!(steps, ["create", "upgrade", "scale", "delete"], "{report}");
    assert_eq!(
        report["coreView"]["remoteConnectionProbe"], "False",
        "{report}"
    );
    let visible = report["nodesVisible"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(!visible.is_empty(), "{report}");
    for c in &visible {
        assert_eq!(c["reason"], "WorkloadUnreachable", "{c}");
    }
    assert_eq!(report["notRun"], serde_json::json!([]), "{report}");
}
