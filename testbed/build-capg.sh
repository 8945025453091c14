#!/usr/bin/env bash
# Builds the Go peer for GKE: Cluster API Provider GCP (its GKE path), from its published
# Go module (module mode, its root `main` package, nothing patched), into a cache directory keyed
# by the version, with its CRDs beside it. A second run with the same version does nothing.
#
#   testbed/build-capg.sh            # builds (if needed) and prints the directory
#
# The directory holds `cluster-api-provider-gcp` and `crds/` (the module's config/crd/bases).
#
# Environment:
#   CAPG_ASSETS         use this directory as is (must hold the binary and crds/); nothing is built
#   TESTBED_CACHE_DIR   where built assets are kept (default: ${XDG_CACHE_HOME:-$HOME/.cache}/capi-managed-testbed)
set -euo pipefail

# CAPG's GKE controllers speak the v1beta1 contract, which Cluster API v1.14 accepts; they run
# only with its GKE feature gate on.
CAPG_VERSION=v1.13.1
MODULE=sigs.k8s.io/cluster-api-provider-gcp

cache=${TESTBED_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/capi-managed-testbed}
out="$cache/capg-$CAPG_VERSION"
bin=cluster-api-provider-gcp

log() { printf '[build-capg] %s\n' "$*" >&2; }

if [ -n "${CAPG_ASSETS:-}" ]; then
  [ -x "$CAPG_ASSETS/$bin" ] && [ -d "$CAPG_ASSETS/crds" ] || { log "CAPG_ASSETS=$CAPG_ASSETS lacks $bin or crds/"; exit 1; }
  echo "$CAPG_ASSETS"
  exit 0
fi

complete() { [ -x "$out/$bin" ] && [ -d "$out/crds" ]; }
if complete; then echo "$out"; exit 0; fi

mkdir -p "$cache"
exec 9>"$cache/.capg-$CAPG_VERSION.lock"
if ! flock -n 9; then
  log "another build of CAPG $CAPG_VERSION is under way; waiting for it"
  flock 9
fi
if complete; then echo "$out"; exit 0; fi

command -v go >/dev/null || { log "go is required to build CAPG"; exit 1; }
mkdir -p "$out"
export CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=local
start=$(date +%s)
log "building $MODULE@$CAPG_VERSION"
# The module has no replace lines, so `go install` builds its root package as released.
GOBIN="$out/.bin" go install -trimpath -ldflags "-s -w" "$MODULE@$CAPG_VERSION"
moddir=$(go mod download -json "$MODULE@$CAPG_VERSION" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')
rm -rf "$out/crds.tmp" && mkdir -p "$out/crds.tmp"
cp "$moddir"/config/crd/bases/*.yaml "$out/crds.tmp/"
chmod -R u+w "$out/crds.tmp"
mv "$out/.bin/$bin" "$out/$bin.tmp" && rmdir "$out/.bin"
mv "$out/crds.tmp" "$out/crds"
mv "$out/$bin.tmp" "$out/$bin"
log "CAPG $CAPG_VERSION ready in $out ($(( $(date +%s) - start ))s)"
echo "$out"
