//! The EKS provider passes every applicable check of the suite, run exactly as a provider
//! maintainer runs it: `conformance run --profile provider-aws/conformance.yaml` (the real
//! binary, two real management planes, the real clusterctl, the EKS emulator and moto).
//!
//! The suite's crate does not depend on the provider: the profile names the binaries, which
//! `cargo test --workspace --all-targets` (scripts/test.sh) builds.

mod support;

use std::process::Command;
use support::{require_binaries, root, target_dir};

/// The checks the suite's v1 cannot judge for a managed-node-pool provider.
const EXPECTED_SKIPS: &[&str] = &["C43"];

#[test]
fn the_eks_provider_passes_every_applicable_check() {
    let root = root();
    let bin = target_dir();
    require_binaries(
        &["provider-aws", "emulator"],
        "-p provider-aws -p emulators",
    );
    let junit = bin.join("conformance-eks.xml");
    let out = Command::new(env!("CARGO_BIN_EXE_conformance"))
        .current_dir(&root)
        .args([
            "run",
            "--profile",
            "provider-aws/conformance.yaml",
            "--junit",
        ])
        .arg(&junit)
        .arg(format!("--set=BIN_DIR={}", bin.display()))
        .output()
        .unwrap_or_else(|e| panic!("running conformance: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!(
        "--- stdout\n{stdout}\n--- stderr (tail)\n{}",
        tail(&stderr, 40)
    );
    assert!(out.status.success(), "conformance run failed for EKS");

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

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}
