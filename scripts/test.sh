#!/usr/bin/env bash
# Runs every test of the workspace against the real management plane.
# On a fresh machine it first builds the plane's programs from their Go modules (cached afterwards).
# With CI_TIMINGS=<file> it appends how long each phase and each test binary took.
# TEST_CAPACITY (default 10) bounds how many test threads run at once across binaries.
set -euo pipefail
cd "$(dirname "$0")/.."
timings=${CI_TIMINGS:-/dev/null}

t0=$(date +%s)
echo "== test-bed assets (etcd, kube-apiserver, kube-controller-manager, Cluster API core, clusterctl)"
assets=$(bash testbed/build-assets.sh)
export TESTBED_ASSETS="$assets"
cat "$assets/VERSIONS"
echo "== moto $(grep -o 'MOTO_VERSION=[0-9.]*' emulators/moto/ensure-moto.sh | cut -d= -f2) (EC2, IAM, STS) in a cached virtualenv"
MOTO_SERVER=$(bash emulators/moto/ensure-moto.sh)
export MOTO_SERVER
printf '%-44s %5ss\n' "test bed and moto (built or cached)" "$(( $(date +%s) - t0 ))" >> "$timings"

echo "== cargo test"
t0=$(date +%s)
cargo test --workspace --all-targets --no-run --quiet
printf '%-44s %5ss\n' "build the test binaries" "$(( $(date +%s) - t0 ))" >> "$timings"
# Cargo runs test binaries one after another; ours mostly wait on real planes, clouds and Cluster
# API core, so scripts/run-tests.py runs them side by side within a budget (TEST_CAPACITY, in
# test threads; the conformance suite's negative tests are one job of NEGATIVE_THREADS (6)
# threads), the
# longest first, and shows each one's output as it ends.
t0=$(date +%s)
status=0
cargo test --workspace --all-targets --no-run --quiet --message-format=json \
  | python3 scripts/run-tests.py || status=$?
printf '%-44s %5ss\n' "  every test binary (above), side by side" "$(( $(date +%s) - t0 ))" >> "$timings"
[ "$status" -eq 0 ] || exit "$status"
t0=$(date +%s)
cargo test --workspace --doc
printf '%-44s %5ss\n' "doc tests" "$(( $(date +%s) - t0 ))" >> "$timings"

# The release set a user installs, for EKS (the others are built the same way by the same code):
# the static binary, its image archive and the clusterctl repository, held against ldd, skopeo, podman
# and umoci (scripts/ensure-release-tools.sh installs the musl target and those tools when missing).
# Built with the release profile less its optimisation (Cargo.toml's release-check), which
# changes nothing the check holds and saves most of a fresh machine's build.
echo "== release set (EKS): cargo run -p xtask -- release --providers eks --check --cargo-profile release-check"
t0=$(date +%s)
bash scripts/ensure-release-tools.sh
cargo run -q -p xtask -- release --providers eks --check --cargo-profile release-check \
  --out "${CARGO_TARGET_DIR:-target}/release-set"
printf '%-44s %5ss\n' "release set (EKS), built and checked" "$(( $(date +%s) - t0 ))" >> "$timings"
