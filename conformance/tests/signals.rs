//! `conformance testbed` stops everything it started however it is stopped: SIGTERM (as
//! `timeout`, systemd and CI stop things), SIGINT (Ctrl-C), SIGHUP (the terminal went away), and
//! SIGKILL of the bed itself (its children carry a parent-death signal).
//!
//! Linux only (it reads `/proc`); runs against the real bed (`TESTBED_ASSETS`, as the other
//! tests).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::collections::BTreeMap;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

/// Every process on the machine: pid → (parent pid, command name, state).
fn processes() -> BTreeMap<u32, (u32, String, char)> {
    let mut out = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return out;
    };
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid …`; comm may hold spaces and parentheses, so split at the last ')'.
        let Some((head, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let comm = head.split_once('(').map(|(_, c)| c).unwrap_or_default();
        let mut fields = rest.split_whitespace();
        let state = fields.next().and_then(|s| s.chars().next()).unwrap_or('?');
        let ppid = fields.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        out.insert(pid, (ppid, comm.to_string(), state));
    }
    out
}

/// The live descendants of `root`, by pid with their names.
fn descendants(root: u32) -> BTreeMap<u32, String> {
    let all = processes();
    let mut found = BTreeMap::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for (pid, (ppid, comm, state)) in &all {
            if *ppid == parent && *state != 'Z' && !found.contains_key(pid) {
                found.insert(*pid, comm.clone());
                frontier.push(*pid);
            }
        }
    }
    found
}

/// Which of `pids` still run (a zombie has stopped).
fn still_running(pids: &BTreeMap<u32, String>) -> Vec<String> {
    let all = processes();
    pids.iter()
        .filter(|(pid, _)| all.get(pid).is_some_and(|(_, _, state)| *state != 'Z'))
        .map(|(pid, name)| format!("{name} ({pid})"))
        .collect()
}

/// Starts `conformance testbed`, waits until it prints its kubeconfig, sends `signal` to it
/// alone, and checks that every process it started is gone within 30 s.
async fn the_bed_stops_on(signal: &str) {
    let mut bed = Command::new(env!("CARGO_BIN_EXE_conformance"))
        .arg("testbed")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("conformance testbed starts");
    let pid = bed.id().expect("a pid");
    let stdout = bed.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    let kubeconfig = tokio::time::timeout(Duration::from_secs(180), lines.next_line())
        .await
        .expect("the bed prints its kubeconfig within 3 minutes")
        .expect("stdout readable")
        .expect("a kubeconfig line");
    assert!(kubeconfig.ends_with("kubeconfig"), "{kubeconfig}");

    let started = descendants(pid);
    for program in ["etcd", "kube-apiserver", "kube-controller", "capi-manager"] {
        assert!(
            started.values().any(|name| name.starts_with(program)),
            "{program} runs under the bed: {started:?}"
        );
    }

    let sent = std::process::Command::new("kill")
        .args([format!("-{signal}"), pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success(), "kill -{signal} {pid}");
    let _ = tokio::time::timeout(Duration::from_secs(40), bed.wait()).await;

    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let left = still_running(&started);
        if left.is_empty() {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "30 s after SIG{signal} to the bed these still run: {}",
            left.join(", ")
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

#[tokio::test]
async fn sigterm_stops_the_bed_and_everything_it_started() {
    the_bed_stops_on("TERM").await;
}

#[tokio::test]
async fn sighup_stops_the_bed_and_everything_it_started() {
    the_bed_stops_on("HUP").await;
}

#[tokio::test]
async fn ctrl_c_stops_the_bed_and_everything_it_started() {
    the_bed_stops_on("INT").await;
}

#[tokio::test]
async fn killing_the_bed_takes_everything_it_started_with_it() {
    the_bed_stops_on("KILL").await;
}
