#!/usr/bin/env bash
# The real Gemini CLI against Memoria's hooks (tests/test_gemini_cli_*.py).
#
#   bash .ci/gemini-cli.sh                 install Gemini CLI if missing, then run its tests
#   bash .ci/gemini-cli.sh --install-only  only install it; prints the `gemini` binary's path last
#
# Gemini CLI comes from npm (@google/gemini-cli, version GEMINI_CLI_VERSION) into a folder of its own
# (GEMINI_CLI_DIR, default ~/.cache/memoria-ci/gemini-cli-<version>), never globally. The tests point
# it at a fake Gemini API on 127.0.0.1 (GOOGLE_GEMINI_BASE_URL) and at a `memoria serve` with its
# embedded PostgreSQL, in a temporary HOME; nothing leaves the machine but the npm install.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=run
case "${1:-}" in
  "") ;;
  --install-only) mode=install ;;
  *) echo "usage: $0 [--install-only]" >&2; exit 2 ;;
esac

version="${GEMINI_CLI_VERSION:-0.61.0}"
dir="${GEMINI_CLI_DIR:-${HOME}/.cache/memoria-ci/gemini-cli-${version}}"
gemini="${dir}/node_modules/.bin/gemini"

if ! [ -x "${gemini}" ] || ! timeout 60 "${gemini}" --version >/dev/null 2>&1; then
  if ! command -v npm >/dev/null 2>&1; then
    echo "npm is not installed: install Node.js 20+ (apt-get install -y nodejs npm)" >&2
    exit 1
  fi
  echo "installing @google/gemini-cli@${version} into ${dir}" >&2
  mkdir -p "${dir}"
  timeout 600 npm install --prefix "${dir}" --no-audit --no-fund --loglevel=error \
    "@google/gemini-cli@${version}" >&2
  timeout 60 "${gemini}" --version >&2
fi

if [ "${mode}" = install ]; then
  echo "${gemini}"
  exit 0
fi

export GEMINI_CLI_BIN="${gemini}"
export HF_HUB_OFFLINE=1
make venv >/dev/null
timeout 300 .venv/bin/pytest -q tests/test_gemini_cli_smoke.py tests/test_gemini_cli_hooks.py tests/test_gemini_cli_mcp.py \
  --basetemp "$(mktemp -d /tmp/gemini-cli-XXXXXX)"
