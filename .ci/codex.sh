#!/usr/bin/env bash
# The real Codex CLI with Memoria's hooks (tests/test_codex_cli.py).
#
#   bash .ci/codex.sh                 install Codex if missing, then run the test
#   bash .ci/codex.sh --install-only  only install it; prints the `codex` binary's path last
#
# Codex comes from npm (@openai/codex, version CODEX_VERSION) into a local folder (CODEX_DIR, default
# ~/.cache/memoria-ci/codex-<version>), never globally. The test points it at a fake OpenAI Responses
# API on 127.0.0.1 (a custom model provider in its config.toml) and at a `memoria serve` with its
# embedded PostgreSQL, in a temporary HOME; nothing leaves the machine but the npm install.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=run
case "${1:-}" in
  "") ;;
  --install-only) mode=install ;;
  *) echo "usage: $0 [--install-only]" >&2; exit 2 ;;
esac

version="${CODEX_VERSION:-0.171.0}"
dir="${CODEX_DIR:-${HOME}/.cache/memoria-ci/codex-${version}}"
codex="${dir}/node_modules/.bin/codex"

if ! [ -x "${codex}" ] || ! timeout 60 "${codex}" --version >/dev/null 2>&1; then
  if ! command -v npm >/dev/null 2>&1; then
    echo "npm is not installed: install Node.js 18+ (apt-get install -y nodejs npm)" >&2
    exit 1
  fi
  echo "installing @openai/codex@${version} into ${dir}" >&2
  mkdir -p "${dir}"
  timeout 600 npm install --prefix "${dir}" --no-audit --no-fund --loglevel=error \
    "@openai/codex@${version}" >&2
  timeout 60 "${codex}" --version >&2
fi

if [ "${mode}" = install ]; then
  echo "${codex}"
  exit 0
fi

export CODEX_BIN="${codex}"
export HF_HUB_OFFLINE=1
make venv >/dev/null
timeout 300 .venv/bin/pytest -q tests/test_codex_cli.py --basetemp "$(mktemp -d /tmp/codex-cli-XXXXXX)"
