#!/usr/bin/env bash
# The real OpenCode against Memoria's plugin and MCP server (tests/test_opencode_*.py).
#
#   bash .ci/opencode.sh                 install OpenCode if missing, then run its tests
#   bash .ci/opencode.sh --install-only  only install it; prints the `opencode` binary's path last
#
# OpenCode comes from npm (opencode-ai, version OPENCODE_VERSION) into a folder of its own
# (OPENCODE_DIR, default ~/.cache/memoria-ci/opencode-<version>), never globally. The tests point
# it at a fake OpenAI Chat Completions API on 127.0.0.1 (a custom provider in opencode.json) and at a
# `memoria serve` with its embedded PostgreSQL, in a temporary HOME; nothing leaves the machine but
# the npm install.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=run
case "${1:-}" in
  "") ;;
  --install-only) mode=install ;;
  *) echo "usage: $0 [--install-only]" >&2; exit 2 ;;
esac

version="${OPENCODE_VERSION:-1.18.33}"
dir="${OPENCODE_DIR:-${HOME}/.cache/memoria-ci/opencode-${version}}"
opencode="${dir}/node_modules/.bin/opencode"

if ! [ -x "${opencode}" ] || ! timeout 60 "${opencode}" --version >/dev/null 2>&1; then
  if ! command -v npm >/dev/null 2>&1; then
    echo "npm is not installed: install Node.js 20+ (apt-get install -y nodejs npm)" >&2
    exit 1
  fi
  echo "installing opencode-ai@${version} into ${dir}" >&2
  mkdir -p "${dir}"
  timeout 600 npm install --prefix "${dir}" --no-audit --no-fund --loglevel=error \
    "opencode-ai@${version}" >&2
  timeout 60 "${opencode}" --version >&2
fi

if [ "${mode}" = install ]; then
  echo "${opencode}"
  exit 0
fi

export OPENCODE_BIN="${opencode}"
export HF_HUB_OFFLINE=1
make venv >/dev/null
timeout 300 .venv/bin/pytest -q tests/test_opencode_*.py \
  --basetemp "$(mktemp -d /tmp/opencode-XXXXXX)"
