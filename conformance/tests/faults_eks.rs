//! The EKS provider holds every oracle of the fault suite for a seeded plan of 20 SIGKILLs over
//! create, upgrade, scale and delete, a kube-apiserver restart after an etcd compaction, cloud
//! 429s, 503s, dropped connections and 20-second answers, a fifth of its updates answered 409
//! Conflict, two replicas of which only the Lease's holder may write, and a node group, then the
//! whole EKS cluster, deleted behind its back, running under its generated RBAC with trace logs searched for its secrets:
//! `conformance faults --profile provider-aws/conformance.yaml`, exactly as a provider maintainer
//! runs it. CI watches the settled cluster for 30 s (the full two minutes by hand).

mod support;

#[test]
fn the_eks_provider_holds_every_fault_oracle() {
    let root = support::root();
    let bin = support::target_dir();
    support::require_binaries(
        &["provider-aws", "emulator"],
        "-p provider-aws -p emulators",
    );
    let json = bin.join("faults-eks.json");
    let seed = std::env::var("FAULTS_SEED").unwrap_or_else(|_| "20261202".into());
    let still = std::env::var("FAULTS_STILL").unwrap_or_else(|_| "30".into());
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_conformance"))
        .current_dir(&root)
        .args([
            "faults",
            "--profile",
            "provider-aws/conformance.yaml",
            "--kills",
            "20",
            "--seed",
            &seed,
            "--still",
            &still,
            "--json",
        ])
        .arg(&json)
        .arg(format!("--set=BIN_DIR={}", bin.display()))
        .output()
        .unwrap_or_else(|e| panic!("running conformance faults: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    eprintln!(
        "--- stdout\n{stdout}\n--- stderr (tail)\n{}",
        lines[lines.len().saturating_sub(60)..].join("\n")
    );
    assert!(out.status.success(), "conformance faults failed for eks");
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
        "the EKS profile gives every fault a way in"
    );
}
