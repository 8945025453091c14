#!/usr/bin/env bash
# Installs moto (pinned) into a virtualenv in the per-user cache and prints the path of its
# `moto_server`. A second run with the same version does nothing.
#
#   MOTO_SERVER   use this moto_server as is; nothing is installed
#   TESTBED_CACHE_DIR   where the virtualenv is kept (default: ${XDG_CACHE_HOME:-$HOME/.cache}/capi-managed-testbed)
set -euo pipefail
MOTO_VERSION=5.2.5

if [ -n "${MOTO_SERVER:-}" ]; then
  [ -x "$MOTO_SERVER" ] || { echo "MOTO_SERVER=$MOTO_SERVER is not executable" >&2; exit 1; }
  echo "$MOTO_SERVER"; exit 0
fi
cache=${TESTBED_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/capi-managed-testbed}
venv="$cache/moto-$MOTO_VERSION"
if [ -x "$venv/bin/moto_server" ] && [ -f "$venv/.complete" ]; then
  echo "$venv/bin/moto_server"; exit 0
fi
# One install at a time (CI starts this script in the background while cargo builds).
mkdir -p "$cache"
exec 9>"$cache/.moto-$MOTO_VERSION.lock"
flock 9
if [ -x "$venv/bin/moto_server" ] && [ -f "$venv/.complete" ]; then
  echo "$venv/bin/moto_server"; exit 0
fi
python=$(command -v python3 || true)
[ -n "$python" ] || { echo "python3 is required for moto" >&2; exit 1; }
echo "[ensure-moto] installing moto[server]==$MOTO_VERSION into $venv" >&2
rm -rf "$venv"
if ! "$python" -m venv "$venv" >&2 2>/dev/null; then
  # Debian's python3 lacks ensurepip until python3-venv is installed.
  if command -v apt-get >/dev/null; then
    (apt-get update -qq && apt-get install -y -qq python3-venv) >&2
  fi
  "$python" -m venv "$venv" >&2
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check "moto[server]==$MOTO_VERSION" >&2
touch "$venv/.complete"
echo "$venv/bin/moto_server"
