#!/usr/bin/env bash
# cargo deny on the workspace's dependency tree (deny.toml): licenses, duplicate versions and
# sources always; advisories when the RustSec database can be fetched, from ADVISORY_DB_GIT (a
# local clone of github.com/rustsec/advisory-db, e.g. a mirror) or else from GitHub. Without
# either it says that advisories were not checked, and does not fail for it.
# cargo-deny itself is built once (release, no debug info) into a cached folder.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=0.20.2
tools="${XDG_CACHE_HOME:-$HOME/.cache}/capi-managed-tools"
deny="$tools/bin/cargo-deny"
if ! { [ -x "$deny" ] && "$deny" --version 2>/dev/null | grep -q " $VERSION"; }; then
  echo "[deny] building cargo-deny $VERSION into $tools (once)"
  CARGO_TARGET_DIR="$tools/build" CARGO_PROFILE_RELEASE_DEBUG=0 \
    cargo install --quiet --locked --version "$VERSION" --root "$tools" cargo-deny
  rm -rf "$tools/build"
fi
export PATH="$tools/bin:$PATH"
cargo deny --version
cargo deny check --disable-fetch licenses bans sources

export ADVISORY_DB_PATH="$tools/advisory-dbs"
config=$(mktemp)
trap 'rm -f "$config"' EXIT
url="https://github.com/rustsec/advisory-db"
if [ -n "${ADVISORY_DB_GIT:-}" ]; then
  url="file://$(cd "$ADVISORY_DB_GIT" && pwd)"
fi
sed "s|^unmaintained = |db-urls = [\"$url\"]\nunmaintained = |" deny.toml > "$config"
if timeout 120 cargo deny fetch --config "$config" db >/dev/null 2>&1; then
  cargo deny check --config "$config" --disable-fetch advisories
else
  echo "[deny] advisories NOT checked: the advisory database could not be fetched from $url" >&2
  echo "[deny] (set ADVISORY_DB_GIT to a local clone of github.com/rustsec/advisory-db)" >&2
fi
