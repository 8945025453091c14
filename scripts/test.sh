#!/usr/bin/env bash
# Runs every test of the workspace against the real management plane.
# On a fresh machine it first builds the plane's programs from their Go modules (cached afterwards).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== test-bed assets (etcd, kube-apiserver, kube-controller-manager, Cluster API core, clusterctl)"
assets=$(bash testbed/build-assets.sh)
export TESTBED_ASSETS="$assets"
cat "$assets/VERSIONS"

echo "== moto $(grep -o 'MOTO_VERSION=[0-9.]*' emulators/moto/ensure-moto.sh | cut -d= -f2) (EC2, IAM, STS) in a cached virtualenv"
MOTO_SERVER=$(bash emulators/moto/ensure-moto.sh)
export MOTO_SERVER

echo "== cargo test"
# Each integration test starts its own plane; two at a time fit this machine's two cores.
# The conformance suite's negative tests (conformance/tests/negative.rs, named breaking_*) run
# after, four at a time: each mostly waits on its toy cloud and on Cluster API core.
cargo test --workspace --all-targets -- --test-threads="${TEST_THREADS:-2}" --skip breaking_
echo "== conformance suite: every check fails on its broken variant (toy-provider --break ...)"
cargo test -p conformance --test negative -- --test-threads="${NEGATIVE_TEST_THREADS:-4}" breaking_
cargo test --workspace --doc
