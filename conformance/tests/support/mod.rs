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
    let root = root();
    let bin = target_dir();
    require_binaries(binaries, packages);
    let junit = bin.join(format!("conformance-{cloud}.xml"));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_conformance"))
        .current_dir(&root)
        .args(["run", "--profile", profile, "--junit"])
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
    assert!(out.status.success(), "conformance run failed for {cloud}");
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
