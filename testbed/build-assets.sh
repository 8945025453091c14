#!/usr/bin/env bash
# Builds the real management-plane programs the tests run against, from their published Go modules,
# pinned, into a cache directory keyed by the versions. A second run with the same versions does nothing.
#
#   testbed/build-assets.sh            # builds (if needed) and prints the asset directory
#
# Environment:
#   TESTBED_ASSETS      use this directory as is (must hold every binary); nothing is built
#   TESTBED_CACHE_DIR   where built assets are kept (default: ${XDG_CACHE_HOME:-$HOME/.cache}/capi-managed-testbed)
set -euo pipefail

KUBERNETES_VERSION=v1.36.3
K8S_STAGING_VERSION=v0.36.3
CAPI_VERSION=v1.14.2
ETCD_VERSION=v3.6.16

here=$(cd "$(dirname "$0")" && pwd)
key="k8s-${KUBERNETES_VERSION}_capi-${CAPI_VERSION}_etcd-${ETCD_VERSION}"
cache=${TESTBED_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/capi-managed-testbed}
out="$cache/$key"
bins=(etcd kube-apiserver kube-controller-manager capi-manager clusterctl)

log() { printf '[build-assets] %s\n' "$*" >&2; }

if [ -n "${TESTBED_ASSETS:-}" ]; then
  for b in "${bins[@]}"; do
    [ -x "$TESTBED_ASSETS/$b" ] || { log "TESTBED_ASSETS=$TESTBED_ASSETS lacks $b"; exit 1; }
  done
  echo "$TESTBED_ASSETS"
  exit 0
fi

complete() {
  for b in "${bins[@]}"; do [ -x "$out/$b" ] || return 1; done
  [ -d "$out/capi-config" ] && [ -f "$out/capi-metadata.yaml" ]
}
if complete; then echo "$out"; exit 0; fi

# One build at a time per cache entry: CI starts this script in the background while cargo
# builds, and the test script's own call then waits here for it instead of building again.
mkdir -p "$cache"
exec 9>"$cache/.$key.lock"
if ! flock -n 9; then
  log "another build of $key is under way; waiting for it"
  flock 9
fi
if complete; then echo "$out"; exit 0; fi

command -v go >/dev/null || { log "go is required to build the test bed"; exit 1; }
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=local
start=$(date +%s)

# --- etcd: its server module carries replace lines, so build from a throwaway module ---------------
if [ ! -x "$out/etcd" ]; then
  log "building etcd $ETCD_VERSION"
  mkdir -p "$work/etcd" && cd "$work/etcd"
  cat > go.mod <<MOD
module testbed/etcd
go 1.26.0
require go.etcd.io/etcd/server/v3 $ETCD_VERSION
MOD
  cat > tools.go <<'GO'
//go:build tools
package tools
import _ "go.etcd.io/etcd/server/v3"
GO
  go mod tidy >/dev/null 2>&1 || go get go.etcd.io/etcd/server/v3@$ETCD_VERSION
  go build -trimpath -ldflags "-s -w" -o "$out/etcd.tmp" go.etcd.io/etcd/server/v3
  mv "$out/etcd.tmp" "$out/etcd"
fi

# --- Kubernetes: a throwaway module pinning every staging repo ------------------------------------
if [ ! -x "$out/kube-apiserver" ] || [ ! -x "$out/kube-controller-manager" ]; then
  log "building kube-apiserver and kube-controller-manager $KUBERNETES_VERSION"
  mkdir -p "$work/k8s" && cd "$work/k8s"
  moddir=$(go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')
  {
    echo "module testbed/k8s"
    echo "go 1.26.0"
    echo "require k8s.io/kubernetes $KUBERNETES_VERSION"
    grep -E '^\s*k8s.io/[a-z0-9-]+ => ./staging/' "$moddir/go.mod" \
      | awk -v v="$K8S_STAGING_VERSION" '{print "replace " $1 " => " $1 " " v}'
  } > go.mod
  cat > tools.go <<'GO'
//go:build tools
package tools
import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
)
GO
  go mod tidy
  minor=${KUBERNETES_VERSION#v1.}; minor=${minor%%.*}
  ld="-s -w -X k8s.io/component-base/version.gitVersion=$KUBERNETES_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
  go build -trimpath -ldflags "$ld" -o "$out/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver
  mv "$out/kube-apiserver.tmp" "$out/kube-apiserver"
  go build -trimpath -ldflags "$ld" -o "$out/kube-controller-manager.tmp" k8s.io/kubernetes/cmd/kube-controller-manager
  mv "$out/kube-controller-manager.tmp" "$out/kube-controller-manager"
fi

# --- Cluster API core manager and clusterctl: require both the root and the api module ------------
if [ ! -x "$out/capi-manager" ] || [ ! -x "$out/clusterctl" ] || [ ! -d "$out/capi-config" ]; then
  log "building Cluster API $CAPI_VERSION (core manager, clusterctl)"
  mkdir -p "$work/capi" && cd "$work/capi"
  cat > go.mod <<MOD
module testbed/capi
go 1.26.0
require (
	sigs.k8s.io/cluster-api $CAPI_VERSION
	sigs.k8s.io/cluster-api/api $CAPI_VERSION
)
MOD
  cat > tools.go <<'GO'
//go:build tools
package tools
import (
	_ "sigs.k8s.io/cluster-api/core"
	_ "sigs.k8s.io/cluster-api/cmd/clusterctl"
)
GO
  go mod tidy
  minor=${CAPI_VERSION#v1.}; minor=${minor%%.*}
  ld="-s -w -X sigs.k8s.io/cluster-api/version.gitVersion=$CAPI_VERSION -X sigs.k8s.io/cluster-api/version.gitMajor=1 -X sigs.k8s.io/cluster-api/version.gitMinor=$minor -X sigs.k8s.io/cluster-api/version.gitTreeState=clean"
  go build -trimpath -ldflags "$ld" -o "$out/capi-manager.tmp" sigs.k8s.io/cluster-api/core
  mv "$out/capi-manager.tmp" "$out/capi-manager"
  go build -trimpath -ldflags "$ld" -o "$out/clusterctl.tmp" sigs.k8s.io/cluster-api/cmd/clusterctl
  mv "$out/clusterctl.tmp" "$out/clusterctl"
  capidir=$(go mod download -json "sigs.k8s.io/cluster-api@$CAPI_VERSION" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')
  rm -rf "$out/capi-config.tmp" && mkdir -p "$out/capi-config.tmp"
  cp -r "$capidir/core/config/crd/bases" "$out/capi-config.tmp/crd"
  cp "$capidir/core/config/webhook/manifests.yaml" "$out/capi-config.tmp/webhooks.yaml"
  chmod -R u+w "$out/capi-config.tmp"
  cp "$capidir/metadata.yaml" "$out/capi-metadata.yaml"
  chmod u+w "$out/capi-metadata.yaml"
  rm -rf "$out/capi-config" && mv "$out/capi-config.tmp" "$out/capi-config"
fi

cat > "$out/VERSIONS" <<V
kubernetes $KUBERNETES_VERSION
etcd $ETCD_VERSION
cluster-api $CAPI_VERSION
V
log "assets ready in $out ($(( $(date +%s) - start ))s)"
echo "$out"
