#!/usr/bin/env python3
"""Runs the workspace's test binaries side by side, within a CPU budget.

Cargo runs test binaries one after another; most of ours spend their time waiting on real
management planes, emulated clouds and Cluster API core, so on a two-core machine several fit at
once. This runner takes the binaries `cargo test --no-run --message-format=json` built (on stdin),
runs each as cargo would (in its package's directory), several at a time within `--capacity`
(a job counts as many units as the test threads it runs), the longest first as the previous run
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

# Jobs beyond "run the binary": (binary name, label, arguments, weight). The conformance
# suite's negative tests run as their own job, four at a time.
SPLITS = {
    "negative": [
        ("negative (unbroken toy)", ["--skip", "breaking_"], 1),
        ("negative (broken toys)", ["--test-threads=4", "breaking_"], 4),
    ],
}

# First-run estimates (seconds) for the ordering, until a run has measured them.
DEFAULT_SECONDS = {
    "negative (broken toys)": 900,
    "eks": 300,
    "negative (unbroken toy)": 150,
    "eks_end_to_end": 110,
    "machine_pool": 70,
    "cluster": 60,
    "end_to_end": 55,
    "control_plane": 40,
    "management_plane": 35,
}


def artifacts(stream):
    """The test executables of cargo's JSON messages: (name, kind, executable, package dir)."""
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
        yield target["name"], kind, message["executable"], package_dir


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--capacity", type=int, default=int(os.environ.get("TEST_CAPACITY", "8")))
    parser.add_argument("--timings", default=os.environ.get("CI_TIMINGS", os.devnull))
    parser.add_argument(
        "--durations",
        default=os.path.join(os.environ.get("CARGO_TARGET_DIR", "target"), "test-durations.json"),
    )
    args = parser.parse_args()

    try:
        known = json.loads(Path(args.durations).read_text())
    except (OSError, ValueError):
        known = {}

    jobs = []
    for name, kind, exe, cwd in artifacts(sys.stdin):
        # Unit tests of a library or binary: labelled by package; integration tests by name.
        base = name if kind == "test" else f"{Path(cwd).name} ({kind})"
        splits = SPLITS.get(name) if kind == "test" else None
        for label, extra, weight in splits or [(base, ["--test-threads=2"], 2 if kind == "test" else 1)]:
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
            with open(args.timings, "a") as t:
                t.write(f"  {job['label']:<42} {seconds:5.0f}s{'' if rc == 0 else '  FAILED'}\n")
            lock.notify_all()

    threads = []
    for job in jobs:
        with lock:
            lock.wait_for(lambda: state["used"] + job["weight"] <= capacity)
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
