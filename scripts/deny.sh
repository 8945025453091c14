#!/usr/bin/env bash
# cargo deny on the workspace's dependency tree (deny.toml): licenses, duplicate versions and
# sources always; advisories against the RustSec database, from ADVISORY_DB_GIT (a local clone of
# github.com/rustsec/advisory-db) or else fetched from GitHub. Without either it says that
# advisories were not checked, and does not fail for it.
# cargo-deny itself is built once (release, no debug info) into a cached folder.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=0.20.2
tools="${XDG_CACHE_HOME:-$HOME/.cache}/capi-managed-tools"
deny="$tools/bin/cargo-deny"
if ! { [ -x "$deny" ] && "$deny" --version 2>/dev/null | grep -q " $VERSION"; }; then
  echo "[deny] building cargo-deny $VERSION into $tools (once)"
  # A checker run once per CI on a few hundred crates: built at opt-level 1, without the fat LTO
  # and single codegen unit of its own release profile, which made most of its build's time.
  CARGO_TARGET_DIR="$tools/build" CARGO_PROFILE_RELEASE_DEBUG=0 CARGO_PROFILE_RELEASE_OPT_LEVEL=1 \
    CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
    cargo install --quiet --locked --version "$VERSION" --root "$tools" cargo-deny
  rm -rf "$tools/build"
fi
export PATH="$tools/bin:$PATH"
cargo deny --version
# cargo-deny reads `cargo metadata` for every platform, so crates no Linux build downloads
# (android_system_properties, …) must be fetched first: on a fresh machine --offline alone fails.
cargo fetch --locked --quiet
cargo deny --locked --offline check licenses bans sources

export ADVISORY_DB_PATH="$tools/advisory-dbs"
# Where cargo-deny 0.20 keeps its clone of the default database (github.com/rustsec/advisory-db).
db="$ADVISORY_DB_PATH/advisory-db-3157b0e258782691"
if [ -n "${ADVISORY_DB_GIT:-}" ]; then
  # A local clone (this machine reaches no GitHub): cargo-deny refuses a file:// URL, so the
  # clone is put where it would have fetched to, and checked without fetching.
  rm -rf "$db"
  mkdir -p "$ADVISORY_DB_PATH"
  git clone --quiet "$ADVISORY_DB_GIT" "$db"
  echo "[deny] advisories from $ADVISORY_DB_GIT ($(git -C "$db" log -1 --format=%cs))"
  cargo deny --locked --offline check advisories
elif timeout 120 cargo deny --locked fetch db >/dev/null 2>&1; then
  echo "[deny] advisories from the RustSec database of $(git -C "$db" log -1 --format=%cs 2>/dev/null || echo '?')"
  cargo deny --locked --offline check advisories
else
  echo "[deny] advisories NOT checked: github.com/rustsec/advisory-db could not be fetched" >&2
  echo "[deny] (set ADVISORY_DB_GIT to a local clone of it)" >&2
fi
