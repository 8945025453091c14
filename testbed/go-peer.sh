# Sourced by the build scripts of the Go peers whose module has no replace lines (CAPA, CAPG):
# builds `go install <module>@<version>` (module mode, its root `main` package, nothing
# patched) into a cache directory keyed by the version, with the module's CRDs beside it, and
# prints that directory. A second run with the same version does nothing.
#
#   build_go_peer <name> <version> <module> <binary> <assets variable>
#
# Environment:
#   <assets variable>   use this directory as is (must hold the binary and crds/); nothing is built
#   TESTBED_CACHE_DIR   where built assets are kept (default: ${XDG_CACHE_HOME:-$HOME/.cache}/capi-managed-testbed)

build_go_peer() {
  local name=$1 version=$2 module=$3 bin=$4 assets_var=$5
  local assets=${!assets_var:-}
  local cache=${TESTBED_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/capi-managed-testbed}
  local out="$cache/$name-$version"
  log() { printf '[build-%s] %s\n' "$name" "$*" >&2; }

  if [ -n "$assets" ]; then
    [ -x "$assets/$bin" ] && [ -d "$assets/crds" ] || { log "$assets_var=$assets lacks $bin or crds/"; return 1; }
    echo "$assets"
    return 0
  fi

  complete() { [ -x "$out/$bin" ] && [ -d "$out/crds" ]; }
  if complete; then echo "$out"; return 0; fi

  mkdir -p "$cache"
  exec 9>"$cache/.$name-$version.lock"
  if ! flock -n 9; then
    log "another build of $name $version is under way; waiting for it"
    flock 9
  fi
  if complete; then echo "$out"; return 0; fi

  command -v go >/dev/null || { log "go is required to build $name"; return 1; }
  mkdir -p "$out"
  export CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=local
  local start
  start=$(date +%s)
  log "building $module@$version"
  GOBIN="$out/.bin" go install -trimpath -ldflags "-s -w" "$module@$version"
  local moddir
  moddir=$(go mod download -json "$module@$version" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')
  rm -rf "$out/crds.tmp" && mkdir -p "$out/crds.tmp"
  cp "$moddir"/config/crd/bases/*.yaml "$out/crds.tmp/"
  chmod -R u+w "$out/crds.tmp"
  mv "$out/.bin/$bin" "$out/$bin.tmp" && rmdir "$out/.bin"
  mv "$out/crds.tmp" "$out/crds"
  mv "$out/$bin.tmp" "$out/$bin"
  log "$name $version ready in $out ($(( $(date +%s) - start ))s)"
  echo "$out"
}
