#!/usr/bin/env bash
# The web UI in a real browser: Playwright (Python) driving the system Chromium against a real
# `memoria serve` on an embedded PostgreSQL (tests/browser). Playwright's own browser downloads are
# never used: the tests launch Debian's `chromium` by its path.
#
#   bash .ci/browser-tests.sh                 install Chromium if missing, then run tests/browser
#   bash .ci/browser-tests.sh --install-only  only install Chromium and print its path
#
# Screenshots (one per test, full page) and paint.json land in artifacts/browser/ (MEMORIA_ARTIFACTS_DIR
# replaces artifacts/). Extra arguments after the mode go to pytest, e.g. `-k isolation -x`.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=run
case "${1:-}" in
  --install-only) mode=install; shift ;;
  --) shift ;;
  -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
esac

find_chromium() {
  command -v chromium 2>/dev/null || command -v chromium-browser 2>/dev/null \
    || { [ -x /usr/bin/chromium ] && echo /usr/bin/chromium; } || true
}

chromium_bin=$(find_chromium)
if [ -z "$chromium_bin" ]; then
  if [ "$(id -u)" -eq 0 ]; then
    as_root=()
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root=(sudo -n env DEBIAN_FRONTEND=noninteractive)
  else
    echo "chromium is not installed and this is neither root nor passwordless sudo:" \
      "apt-get install -y chromium" >&2
    exit 1
  fi
  echo "installing chromium (apt)"
  export DEBIAN_FRONTEND=noninteractive
  timeout 300 "${as_root[@]}" apt-get update -qq
  timeout 900 "${as_root[@]}" apt-get install -y -qq chromium >/dev/null
  chromium_bin=$(find_chromium)
  if [ -z "$chromium_bin" ]; then
    echo "apt-get installed chromium but no chromium executable was found" >&2
    exit 1
  fi
fi
# Debian's launcher script prints a harmless shell warning on some kernels: keep only the version.
version=$(timeout 30 "$chromium_bin" --version 2>/dev/null | head -n 1 || true)
echo "${version:-chromium} at $chromium_bin"

if [ "$mode" = install ]; then
  exit 0
fi

if [ ! -x .venv/bin/pytest ]; then
  echo ".venv is missing: run \`make venv\` (or \`make test\`) first" >&2
  exit 1
fi
if ! .venv/bin/python -c "import playwright" 2>/dev/null; then
  echo "the Python package playwright is missing from .venv: .venv/bin/pip install playwright" >&2
  exit 1
fi

start=$(date +%s)
CHROMIUM_BIN="$chromium_bin" HF_HUB_OFFLINE=1 timeout 1800 \
  .venv/bin/pytest -q -p no:warnings -p no:cacheprovider tests/browser "$@"
echo "browser tests finished in $(( $(date +%s) - start ))s; screenshots in ${MEMORIA_ARTIFACTS_DIR:-artifacts}/browser"
