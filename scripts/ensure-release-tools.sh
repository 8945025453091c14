#!/usr/bin/env bash
# Installs what `cargo run -p xtask -- release` needs besides Rust, when missing: the musl target
# (rustup), musl-gcc for ring's C and assembly (Debian's musl-tools), and the tools its --check
# holds the result against (Debian's skopeo, umoci and podman). A second run does nothing.
set -euo pipefail
target=x86_64-unknown-linux-musl
if ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
  echo "[ensure-release-tools] rustup target add $target" >&2
  rustup target add "$target" >&2
fi
missing=()
command -v musl-gcc >/dev/null || missing+=(musl-tools)
command -v skopeo >/dev/null || missing+=(skopeo)
command -v umoci >/dev/null || missing+=(umoci)
command -v podman >/dev/null || missing+=(podman)
if [ "${#missing[@]}" -gt 0 ]; then
  command -v apt-get >/dev/null || { echo "install ${missing[*]} (no apt-get here)" >&2; exit 1; }
  echo "[ensure-release-tools] apt-get install ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
