#!/usr/bin/env bash
# Builds the Go peer for OKE: Cluster API Provider for OCI (CAPOCI), from its published Go module
# (its root `main` package, nothing patched), into a cache directory keyed by the version, with
# its CRDs beside it. A second run with the same version does nothing.
#
#   testbed/build-capoci.sh            # builds (if needed) and prints the directory
#
# CAPOCI's go.mod pins Cluster API with a `replace`, so `go install module@version` refuses to
# build it; a throw-away wrapper module that requires CAPOCI and repeats that one replace builds
# the same package graph.
#
# Environment:
#   CAPOCI_ASSETS       use this directory as is (must hold the binary and crds/); nothing is built
#   TESTBED_CACHE_DIR   where built assets are kept (default: ${XDG_CACHE_HOME:-$HOME/.cache}/capi-managed-testbed)
set -euo pipefail

CAPOCI_VERSION=v0.24.0
MODULE=github.com/oracle/cluster-api-provider-oci
# CAPOCI's own replace line, repeated verbatim.
CLUSTER_API_REPLACE="sigs.k8s.io/cluster-api => sigs.k8s.io/cluster-api v1.12.3"

cache=${TESTBED_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/capi-managed-testbed}
out="$cache/capoci-$CAPOCI_VERSION"
bin=cluster-api-provider-oci

log() { printf '[build-capoci] %s\n' "$*" >&2; }

if [ -n "${CAPOCI_ASSETS:-}" ]; then
  [ -x "$CAPOCI_ASSETS/$bin" ] && [ -d "$CAPOCI_ASSETS/crds" ] || { log "CAPOCI_ASSETS=$CAPOCI_ASSETS lacks $bin or crds/"; exit 1; }
  echo "$CAPOCI_ASSETS"
  exit 0
fi

complete() { [ -x "$out/$bin" ] && [ -d "$out/crds" ]; }
if complete; then echo "$out"; exit 0; fi

mkdir -p "$cache"
exec 9>"$cache/.capoci-$CAPOCI_VERSION.lock"
if ! flock -n 9; then
  log "another build of CAPOCI $CAPOCI_VERSION is under way; waiting for it"
  flock 9
fi
if complete; then echo "$out"; exit 0; fi

command -v go >/dev/null || { log "go is required to build CAPOCI"; exit 1; }
mkdir -p "$out"
export CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=local
start=$(date +%s)
log "building $MODULE@$CAPOCI_VERSION"
wrapper="$out/.wrapper"
rm -rf "$wrapper" && mkdir -p "$wrapper"
cat > "$wrapper/go.mod" <<MOD
module local.test/capoci-build

go 1.24.0

require $MODULE $CAPOCI_VERSION

replace $CLUSTER_API_REPLACE
MOD
cat > "$wrapper/tools.go" <<'GO'
//go:build tools

package tools

import _ "github.com/oracle/cluster-api-provider-oci"
GO
(cd "$wrapper" && go mod tidy >&2 && go build -trimpath -ldflags "-s -w" -o "$out/$bin.tmp" "$MODULE")
moddir=$(go mod download -json "$MODULE@$CAPOCI_VERSION" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')
rm -rf "$out/crds.tmp" && mkdir -p "$out/crds.tmp"
cp "$moddir"/config/crd/bases/*.yaml "$out/crds.tmp/"
chmod -R u+w "$out/crds.tmp"
rm -rf "$wrapper"
mv "$out/crds.tmp" "$out/crds"
mv "$out/$bin.tmp" "$out/$bin"
log "CAPOCI $CAPOCI_VERSION ready in $out ($(( $(date +%s) - start ))s)"
echo "$out"
