#!/usr/bin/env bash
# Runs every test of the workspace against the real management plane.
# On a fresh machine it first builds the plane's programs from their Go modules (cached afterwards).
# With CI_TIMINGS=<file> it appends how long each phase and each test binary took.
set -euo pipefail
cd "$(dirname "$0")/.."
timings=${CI_TIMINGS:-/dev/null}

# Runs `cargo test ARGS…`, passing its output through, and records each test binary's wall time
# (from its "Running" line to the next one) in $timings.
timed_cargo_test() {
  local label=$1 status
  shift
  set +e
  cargo test "$@" 2>&1 | {
    current="" began=$(date +%s)
    record() { [ -n "$current" ] && printf '  %-42s %5ss\n' "$current" "$(( $(date +%s) - began ))" >> "$timings"; }
    while IFS= read -r line; do
      printf '%s\n' "$line"
      case "$line" in
        *"Running "*"("*")"|*"Doc-tests "*)
          record
          began=$(date +%s)
          if [[ $line == *"Doc-tests "* ]]; then
            current="doc-tests ${line##*Doc-tests }"
          else
            exe=${line##*/}; exe=${exe%)}; source=${line#*Running }; source=${source%% (*}
            current="${exe%-*} (${source})"
          fi
          ;;
        *"Compiling "*|*"Finished "*)
          [[ $line == *"Finished "* ]] && { record; current=""; }
          ;;
      esac
    done
    record
  }
  status=${PIPESTATUS[0]}
  set -e
  printf '%-44s\n' "$label" >> "$timings"
  return "$status"
}

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
# Each integration test starts its own plane; two at a time fit this machine's two cores.
# The conformance suite's negative tests (conformance/tests/negative.rs, named breaking_*) run
# after, four at a time: each mostly waits on its toy cloud and on Cluster API core.
t0=$(date +%s)
timed_cargo_test "every test binary (above)" --workspace --all-targets -- --test-threads="${TEST_THREADS:-2}" --skip breaking_
printf '%-44s %5ss\n' "  all of them" "$(( $(date +%s) - t0 ))" >> "$timings"
echo "== conformance suite: every check fails on its broken variant (toy-provider --break ...)"
t0=$(date +%s)
cargo test -p conformance --test negative -- --test-threads="${NEGATIVE_TEST_THREADS:-4}" breaking_
printf '%-44s %5ss\n' "negative tests (broken toy variants)" "$(( $(date +%s) - t0 ))" >> "$timings"
t0=$(date +%s)
cargo test --workspace --doc
printf '%-44s %5ss\n' "doc tests" "$(( $(date +%s) - t0 ))" >> "$timings"
