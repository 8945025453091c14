#!/usr/bin/env python3
"""Runs the workspace's test binaries side by side, within a CPU budget.

Cargo runs test binaries one after another; most of ours spend their time waiting on real
management planes, emulated clouds and Cluster API core, so on a two-core machine several fit at
once. This runner takes the binaries `cargo test --no-run --message-format=json` built (on stdin),
runs each as cargo would (in its package's directory), several at a time within `--capacity`
(a job counts as many units as the test threads it runs, a heavy one more: see HEAVY; the
negative tests are split into several jobs), the longest that fits first as
the previous run
measured them, and prints each job's output when it ends. It exits non-zero when any job failed,
after every job has run.

Usage: cargo test --workspace --all-targets --no-run --message-format=json \
         | python3 scripts/run-tests.py [--capacity N] [--timings FILE]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

# The conformance suite's negative tests: the unbroken toy as one job, the broken toys as
# NEGATIVE_JOBS jobs (default one: libtest hands the next test to whichever thread is free) of
# NEGATIVE_THREADS test threads each (every broken toy mostly waits on its toy cloud and on
# Cluster API core).
NEGATIVE = "conformance/negative"


def test_count(exe):
    """How many tests a binary holds."""
    listed = subprocess.run([exe, "--list"], capture_output=True, text=True, check=True).stdout
    return sum(1 for line in listed.splitlines() if line.endswith(": test"))


def negative_jobs(exe):
    """The negative binary's jobs: (label, arguments, weight)."""
    listed = subprocess.run([exe, "--list"], capture_output=True, text=True, check=True).stdout
    broken = sorted(
        line.split(":")[0] for line in listed.splitlines()
        if line.endswith(": test") and line.startswith("breaking_")
    )
    parts = int(os.environ.get("NEGATIVE_JOBS", "1"))
    threads = int(os.environ.get("NEGATIVE_THREADS", "6"))
    jobs = [(f"{NEGATIVE} (unbroken toy)", ["--skip", "breaking_"], 1)]
    for i in range(parts):
        names = broken[i::parts]
        if names:
            label = f"{NEGATIVE} (broken toys)" if parts == 1 else f"{NEGATIVE} (broken toys {i + 1}/{parts})"
            jobs.append((label,
                         [f"--test-threads={threads}", "--exact", *names], threads))
    return jobs


# Jobs that weigh more than their test threads: a provider's whole conformance run (two
# management planes, its emulator with real workload API servers, its provider, clusterctl:
# PROFILE_WEIGHT) and the comparison of every cloud in one bed (moto, four emulators, four
# providers).
PROFILE_WEIGHT = int(os.environ.get("PROFILE_WEIGHT", "2"))
HEAVY = {
    "conformance/eks": PROFILE_WEIGHT,
    "conformance/gke": PROFILE_WEIGHT,
    "conformance/aks": PROFILE_WEIGHT,
    "conformance/oke": PROFILE_WEIGHT,
    "conformance/faults_eks": PROFILE_WEIGHT,
    "conformance/faults_gke": PROFILE_WEIGHT,
    "conformance/faults_aks": PROFILE_WEIGHT,
    "conformance/faults_oke": PROFILE_WEIGHT,
    "conformance/private_eks": PROFILE_WEIGHT,
    "demo/two_clouds": 2,
    "kubectl-managed/capa": 2,
}

# First-run estimates (seconds) for the ordering, until a run has measured them.
DEFAULT_SECONDS = {
    f"{NEGATIVE} (broken toys)": 700,
    "conformance/eks": 330,
    "conformance/gke": 300,
    "conformance/aks": 290,
    "conformance/oke": 300,
    "conformance/faults_eks": 330,
    "conformance/faults_gke": 330,
    "conformance/faults_aks": 330,
    "conformance/faults_oke": 330,
    "conformance/private_eks": 110,
    f"{NEGATIVE} (unbroken toy)": 150,
    "demo/eks_end_to_end": 110,
    "demo/two_clouds": 120,
    "demo/bench_smoke": 120,
    "demo/capoci": 110,
    "demo/capg": 270,
    "demo/bench_peers": 300,
    "kubectl-managed/capa": 170,
    "kubectl-managed/capg": 45,
    "kubectl-managed/capoci": 35,
    "kubectl-managed/capz": 65,
    "provider-aws/control_plane": 70,
    "provider-aws/cluster": 65,
    "provider-aws/machine_pool": 60,
    "toy-provider/end_to_end": 55,
    "conformance/management_plane": 35,
}


def artifacts(stream):
    """The test executables of cargo's JSON messages: (package, name, kind, executable, dir)."""
    for line in stream:
        line = line.strip()
        if not line.startswith("{"):
            continue
        message = json.loads(line)
        if message.get("reason") != "compiler-artifact":
            continue
        if not message.get("profile", {}).get("test") or not message.get("executable"):
            continue
        target = message["target"]
        kind = target["kind"][0]
        package_dir = str(Path(message["manifest_path"]).parent)
        yield Path(package_dir).name, target["name"], kind, message["executable"], package_dir


def failure_report(output, limit=6000):
    """What libtest says about its failures (from its first `failures:` heading: each panic's
    message), cut to `limit` characters; the output's end when there is no such heading (a crash)."""
    # libtest prints "failures:" twice: the reports, then the list of names; both are kept.
    first = output.find("\nfailures:\n")
    text = output[first:] if first != -1 else output[-limit:]
    if len(text) > limit:
        text = text[:limit // 2] + "\n[…]\n" + text[-limit // 2:]
    return text.strip()


def with_toolchain_libraries():
    """Lets test binaries that link the toolchain's libstd dynamically (a proc-macro crate's
    unit tests) find it, as `cargo test` does when it runs them itself."""
    libdir = subprocess.run(["rustc", "--print", "target-libdir"], capture_output=True,
                            text=True, check=True).stdout.strip()
    paths = [libdir]
    if os.environ.get("LD_LIBRARY_PATH"):
        paths.append(os.environ["LD_LIBRARY_PATH"])
    os.environ["LD_LIBRARY_PATH"] = os.pathsep.join(paths)


def main():
    with_toolchain_libraries()
    parser = argparse.ArgumentParser()
    parser.add_argument("--capacity", type=int, default=int(os.environ.get("TEST_CAPACITY", "10")))
    parser.add_argument("--timings", default=os.environ.get("CI_TIMINGS", os.devnull))
    parser.add_argument(
        "--durations",
        default=os.path.join(os.environ.get("CARGO_TARGET_DIR", "target"), "test-durations.json"),
    )
    parser.add_argument(
        "--failures", default=os.environ.get("CI_FAILURES", os.devnull),
        help="where each failed job's failure report is written again, so that the end of a CI "
             "log carries it whatever was printed after the job",
    )
    args = parser.parse_args()

    try:
        known = json.loads(Path(args.durations).read_text())
    except (OSError, ValueError):
        known = {}

    jobs = []
    for package, name, kind, exe, cwd in artifacts(sys.stdin):
        # Integration tests labelled package/test; unit tests package::target (kind).
        base = f"{package}/{name}" if kind == "test" else f"{package}::{name} ({kind})"
        if base == NEGATIVE:
            splits = negative_jobs(exe)
        elif base in HEAVY:
            splits = [(base, ["--test-threads=2"], HEAVY[base])]
        else:
            # A job weighs the threads its tests can use: two at most, one for a single test.
            weight = max(1, min(2, test_count(exe))) if kind == "test" else 1
            splits = [(base, ["--test-threads=2"], weight)]
        for label, extra, weight in splits:
            estimate = known.get(label, DEFAULT_SECONDS.get(label, 20 if kind == "test" else 2))
            jobs.append({"label": label, "argv": [exe, *extra], "cwd": cwd, "weight": weight,
                         "estimate": estimate})
    if not jobs:
        print("run-tests: no test executables on stdin", file=sys.stderr)
        return 2
    # Longest first: the long jobs start at once and the short ones fill the gaps.
    jobs.sort(key=lambda j: -j["estimate"])
    capacity = max(args.capacity, max(j["weight"] for j in jobs))

    lock = threading.Condition()
    state = {"used": 0, "failed": [], "measured": {}}
    started = time.monotonic()

    def run(job):
        t0 = time.monotonic()
        with tempfile.TemporaryFile(mode="w+") as out:
            rc = subprocess.call(job["argv"], cwd=job["cwd"], stdout=out, stderr=subprocess.STDOUT)
            out.seek(0)
            output = out.read()
        seconds = time.monotonic() - t0
        with lock:
            state["used"] -= job["weight"]
            state["measured"][job["label"]] = round(seconds)
            status = "ok" if rc == 0 else f"FAILED (exit {rc})"
            if rc != 0:
                state["failed"].append(job["label"])
            # Whole output for a failure; the summary lines for a pass.
            shown = output if rc != 0 else "\n".join(
                l for l in output.splitlines() if l.startswith("test result:")
            )
            print(f"==== {job['label']}: {status} in {seconds:.0f}s "
                  f"(at {time.monotonic() - started:.0f}s)\n{shown}", flush=True)
            if rc != 0:
                with open(args.failures, "a") as f:
                    f.write(f"==== {job['label']}: {status}\n{failure_report(output)}\n")
            with open(args.timings, "a") as t:
                t.write(f"  {job['label']:<42} {seconds:5.0f}s{'' if rc == 0 else '  FAILED'}\n")
            lock.notify_all()

    # The longest job that fits starts first; a heavy job waiting for room does not hold back
    # lighter ones behind it.
    threads = []
    pending = list(jobs)
    while pending:
        with lock:
            lock.wait_for(lambda: any(state["used"] + j["weight"] <= capacity for j in pending))
            job = next(j for j in pending if state["used"] + j["weight"] <= capacity)
            pending.remove(job)
            state["used"] += job["weight"]
        thread = threading.Thread(target=run, args=(job,))
        thread.start()
        threads.append(thread)
    for thread in threads:
        thread.join()

    try:
        Path(args.durations).write_text(json.dumps({**known, **state["measured"]}, indent=1))
    except OSError as e:
        print(f"run-tests: could not record durations: {e}", file=sys.stderr)
    total = time.monotonic() - started
    print(f"run-tests: {len(jobs)} jobs in {total:.0f}s, capacity {capacity}", flush=True)
    if state["failed"]:
        print("run-tests: failed: " + ", ".join(state["failed"]), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
