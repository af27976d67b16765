#!/usr/bin/env bash
# Install the Debian packages profsum needs, only those that are missing.
# Usage: bash .ci/deps.sh [extra-package ...]
# Runs apt-get as root (or through sudo when available); does nothing when
# everything is already installed.
set -euo pipefail
pkgs=(gcc make pkg-config libsqlite3-dev zlib1g-dev libisal-dev libcurl4-openssl-dev isal
      sqlite3 python3 gzip ca-certificates locales
      python3-setuptools python3-wheel python3-venv python3-apsw nodejs
      chromium sqlite-utils python3-pandas "$@")
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Debian's python3 must be the one at /usr/bin/python3 (its sqlite3 module
# can load extensions).
[ -x /usr/bin/python3 ] || missing+=(python3)
# npm: Debian's package, unless a nodejs that bundles npm (NodeSource's)
# already provides the command; asking for Debian's npm there would
# replace that nodejs with Debian's older one.
command -v npm >/dev/null || missing+=(npm)
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "profsum: installing missing Debian packages: ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null; then SUDO=sudo; else
    echo "profsum: need root to install: ${missing[*]} (run: apt-get install ${missing[*]})" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
