#!/usr/bin/env bash
# The demo on the local default: a real management plane on loopback, each component proven by
# using it, and the Cluster API objects on it. Ctrl-C stops everything.
set -euo pipefail
cd "$(dirname "$0")/.."
assets=$(bash testbed/build-assets.sh)
export TESTBED_ASSETS="$assets"
exec cargo run --quiet -p conformance -- demo "$@"
