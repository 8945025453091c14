//! Every check can fail: the suite judges `toy-provider` (an independent provider with its own
//! kinds, cloud and release) once unbroken — everything passes — and once per `--break`, each of
//! which breaks one rule of the contract. Each broken run judges the checks of the steps the
//! break touches (`--only`), and exactly the checks the break concerns must fail: the others of
//! those steps keep passing.
//!
//! Release breaks rewrite the release folder (`toy-provider release <dir> --break …`); behaviour
//! breaks are passed to the running controller (`TOY_BREAK`). The binaries come from
//! `cargo test --workspace --all-targets`.

mod support;

use std::process::Command;
use support::{require_binaries, root, target_dir};

/// The steps of a run, as `--only` sets.
const STATIC: &str = "C01,C02,C03,C04,C05,C06,C55,C56";
const INSTALL: &str = "C07,C08,C24,C57,C58";
const QUIET: &str = "C11,C38,C39";
const PROVISION: &str = "C09,C12,C13,C14,C15,C16,C18,C19,C20,C21,C22,C23,C25,C26,C27,C28,C29,C30,C31,C32,C34,C44,C46,C47,C48";
const PAUSE: &str = "C35,C36,C37,C49,C51";
const DELETE: &str = "C40,C41,C42,C60";
const CONTROL_PLANE_ONLY: &str = "C17,C52";
const ADOPTION: &str = "C61,C62,C63,C64,C65";

/// (failed, skipped) check IDs of one run, and its output.
fn judge(only: Option<&str>, set: &[String]) -> (Vec<String>, Vec<String>, String) {
    let bin = target_dir();
    require_binaries(&["toy-provider"], "-p toy-provider");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_conformance"));
    cmd.current_dir(root())
        .args(["run", "--profile", "toy-provider/conformance.yaml"])
        .arg(format!("--set=BIN_DIR={}", bin.display()));
    if let Some(only) = only {
        // A broken run is expected to fail: do not keep its planes.
        cmd.arg(format!("--only={only}")).arg("--discard");
    }
    for s in set {
        cmd.arg(format!("--set={s}"));
    }
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("running conformance: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let pick = |label: &str| -> Vec<String> {
        stdout
            .lines()
            .filter_map(|l| {
                let mut parts = l.split_whitespace();
                let id = parts.next()?;
                (id.starts_with('C') && parts.next()? == label).then(|| id.to_string())
            })
            .collect()
    };
    let failed = pick("FAIL");
    let skipped = pick("skip");
    assert_eq!(
        out.status.success(),
        failed.is_empty(),
        "the exit status disagrees with the table:\n{stdout}\n{stderr}"
    );
    let tail: Vec<&str> = stderr.lines().rev().take(15).collect();
    let report = format!(
        "{stdout}\n--- stderr (tail)\n{}",
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    );
    (failed, skipped, report)
}

fn broken_release(name: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let out = Command::new(target_dir().join("toy-provider"))
        .arg("release")
        .arg(dir.path())
        .args(["--break", name])
        .output()
        .unwrap_or_else(|e| panic!("toy-provider release: {e}"));
    assert!(
        out.status.success(),
        "toy-provider release --break {name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let set = format!("TOY_RELEASE={}", dir.path().display());
    (dir, set)
}

fn expect(name: &str, release: bool, only: &str, failing: &[&str]) {
    let (_dir, set) = if release {
        let (d, s) = broken_release(name);
        (Some(d), s)
    } else {
        (None, format!("TOY_BREAK={name}"))
    };
    let (failed, _, report) = judge(Some(only), &[set]);
    let failing: Vec<String> = failing.iter().map(|s| s.to_string()).collect();
    assert_eq!(
        failed, failing,
        "break {name}: these checks failed, not exactly the expected ones:\n{report}"
    );
}

#[test]
fn the_unbroken_toy_passes_every_check_it_can_be_judged_on() {
    let (failed, skipped, report) = judge(None, &[]);
    assert!(failed.is_empty(), "the unbroken toy fails:\n{report}");
    // No token lifetime (its kubeconfig holds a client certificate), no worker Machines.
    assert_eq!(skipped, ["C33", "C43"], "{report}");
}

macro_rules! breaks {
    ($($test:ident: $name:literal, $kind:ident, $only:expr => [$($id:literal),*];)*) => {
        $(
            #[test]
            fn $test() {
                expect($name, stringify!($kind) == "release", $only, &[$($id),*]);
            }
        )*
    };
}

breaks! {
    // Release breaks: the static checks judge the folder alone.
    breaking_crd_cluster_scoped: "crd-cluster-scoped", release, STATIC => ["C01"];
    breaking_crd_bad_plural: "crd-bad-plural", release, STATIC => ["C02"];
    // The CRD's newest contract label is then v1beta1, which no longer matches metadata.yaml.
    breaking_crd_no_contract_label: "crd-no-contract-label", release, STATIC => ["C03", "C04"];
    breaking_metadata_contract_v1beta1: "metadata-contract-v1beta1", release, STATIC => ["C04"];
    breaking_crd_no_status: "crd-no-status", release, STATIC => ["C05"];
    breaking_crd_replicas_no_scale: "crd-replicas-no-scale", release, STATIC => ["C06"];
    // No release series for the version means no contract to compare the labels with either.
    breaking_metadata_old_version: "metadata-old-version", release, STATIC => ["C04", "C55"];
    breaking_no_manager_container: "no-manager-container", release, STATIC => ["C56"];
    // Release breaks judged on the installed release.
    breaking_no_aggregated_role: "no-aggregated-role", release, INSTALL => ["C07"];
    breaking_no_pool_template: "no-pool-template", release, INSTALL => ["C08"];
    breaking_no_version_rule: "no-version-rule", release, INSTALL => ["C24"];

    // Objects the controller must leave alone.
    breaking_no_owner_gate: "no-owner-gate", run, QUIET => ["C11"];
    breaking_ignore_watch_filter: "ignore-watch-filter", run, QUIET => ["C38"];
    breaking_ignore_managed_by: "ignore-managed-by", run, QUIET => ["C39"];

    // Provisioning.
    breaking_late_finalizer: "late-finalizer", run, PROVISION => ["C12"];
    // An InfraCluster that never reports provisioned holds the control plane back (it waits for
    // infrastructureProvisioned): no flag is ever set and nothing initializes.
    breaking_infra_not_provisioned: "infra-not-provisioned", run, PROVISION => [
        "C12", "C14", "C16", "C19", "C20", "C21", "C22", "C23", "C27", "C28", "C29", "C30",
        "C31", "C32", "C46", "C47", "C48"
    ];
    breaking_endpoint_on_infra: "endpoint-on-infra", run, PROVISION => ["C15"];
    // Without the endpoint core has none to copy, so the Secret's server matches nothing either.
    breaking_cp_no_endpoint: "cp-no-endpoint", run, PROVISION => ["C16", "C29"];
    breaking_no_infra_ready_condition: "no-infra-ready-condition", run, PROVISION => ["C18"];
    breaking_no_failure_domains: "no-failure-domains", run, PROVISION => ["C19"];
    // A control plane waiting for the Cluster's endpoint never initializes: everything that
    // follows initialization fails with it.
    breaking_wait_for_cluster_endpoint: "wait-for-cluster-endpoint", run, PROVISION => [
        "C16", "C20", "C21", "C22", "C23", "C27", "C28", "C29", "C30", "C31", "C32", "C46",
        "C47", "C48"
    ];
    breaking_no_external_managed: "no-external-managed", run, PROVISION => ["C22"];
    breaking_version_no_v: "version-no-v", run, PROVISION => ["C23"];
    breaking_no_available_condition: "no-available-condition", run, PROVISION => ["C25"];
    breaking_condition_no_reason: "condition-no-reason", run, PROVISION => ["C26"];
    breaking_secret_late: "secret-late", run, PROVISION => ["C27"];
    // Core only sees labelled Secrets: it cannot connect, so it neither probes nor finds Nodes.
    breaking_secret_no_label: "secret-no-label", run, PROVISION => ["C28", "C31", "C48"];
    breaking_secret_wrong_server: "secret-wrong-server", run, PROVISION => ["C29"];
    breaking_secret_bad_credentials: "secret-bad-credentials", run, PROVISION => ["C30", "C31", "C48"];
    breaking_secret_no_owner: "secret-no-owner", run, PROVISION => ["C32"];
    breaking_user_kubeconfig_static: "user-kubeconfig-static", run, PROVISION => ["C34"];
    // Core v1.14 reads status.ready for pools: without it the MachinePool never runs.
    breaking_no_pool_ready: "no-pool-ready", run, PROVISION => ["C46", "C48"];
    breaking_extra_provider_id: "extra-provider-id", run, PROVISION => ["C47", "C48"];

    // Pause and scaling.
    breaking_ignore_pause: "ignore-pause", run, PAUSE => ["C35", "C36"];
    breaking_no_paused_condition: "no-paused-condition", run, PAUSE => ["C35", "C36", "C37"];
    breaking_no_scaling: "no-scaling", run, PAUSE => ["C37", "C49", "C51"];
    breaking_drop_id_early: "drop-id-early", run, PAUSE => ["C51"];
    breaking_no_writeback: "no-writeback", run, "C50" => ["C50"];

    // Move and deletion.
    breaking_recreate_on_move: "recreate-on-move", run, "C59" => ["C59"];
    breaking_early_finalizer_removal: "early-finalizer-removal", run, DELETE => ["C42"];
    // The finalizer still waits for the cloud's answer, so only the inventory shows the leak.
    breaking_leave_network: "leave-network", run, DELETE => ["C60"];

    // Control-plane-only Clusters.
    breaking_override_cluster_endpoint: "override-cluster-endpoint", run, CONTROL_PLANE_ONLY => ["C17"];

    // Adoption and orphaning. A cluster deleted or left tagged on orphaning cannot be adopted
    // again, so those breaks fail the adoption checks too.
    breaking_plan_writes: "plan-writes", run, ADOPTION => ["C61"];
    breaking_accept_ignored: "accept-ignored", run, ADOPTION => ["C62", "C65"];
    breaking_orphan_deletes: "orphan-deletes", run, ADOPTION => ["C61", "C62", "C63", "C65"];
    breaking_adopts_siblings: "adopts-siblings", run, ADOPTION => ["C64"];
    breaking_orphan_keeps_tag: "orphan-keeps-tag", run, ADOPTION => ["C61", "C62", "C63", "C65"];
}

/// C33 on the real EKS provider: the emulator accepts tokens for 60 s, but the provider is told
/// they live 15 minutes, so it refreshes too late and the sampled kubeconfig stops working.
#[test]
fn breaking_eks_token_refreshed_too_late() {
    let bin = target_dir();
    require_binaries(
        &["provider-aws", "emulator"],
        "-p provider-aws -p emulators",
    );
    let out = Command::new(env!("CARGO_BIN_EXE_conformance"))
        .current_dir(root())
        .args([
            "run",
            "--discard",
            "--profile",
            "provider-aws/conformance.yaml",
            "--only=C33",
            "--set=EKS_TOKEN_LIFETIME=15m",
        ])
        .arg(format!("--set=BIN_DIR={}", bin.display()))
        .output()
        .unwrap_or_else(|e| panic!("running conformance: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !out.status.success(),
        "C33 passed with tokens refreshed too late:\n{stdout}"
    );
    let failed: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains(" FAIL "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(failed, ["C33"], "{stdout}");
}
