#!/usr/bin/env bash
# The real GitHub Copilot CLI against Memoria's hooks and MCP tools (tests/test_copilot_cli_*.py).
#
#   bash .ci/copilot-cli.sh                 install Copilot CLI if missing, then run its tests
#   bash .ci/copilot-cli.sh --install-only  only install it; prints the `copilot` binary's path last
#
# Copilot CLI comes from npm (@github/copilot, version COPILOT_CLI_VERSION) into a folder of its own
# (COPILOT_CLI_DIR, default ~/.cache/memoria-ci/copilot-cli-<version>), never globally. Its binary
# unpacks its runtime (~235 MB) at first start into COPILOT_PKG_CACHE_HOME: here `pkg-cache` in that
# folder, once, so a test's fresh HOME does not unpack it again. The tests point it at a fake OpenAI
# Chat Completions API on 127.0.0.1 (COPILOT_PROVIDER_BASE_URL, COPILOT_OFFLINE=true: no GitHub
# sign-in) and at a `memoria serve` with its embedded PostgreSQL, in a temporary HOME; nothing leaves
# the machine but the npm install.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=run
case "${1:-}" in
  "") ;;
  --install-only) mode=install ;;
  *) echo "usage: $0 [--install-only]" >&2; exit 2 ;;
esac

version="${COPILOT_CLI_VERSION:-1.0.102}"
dir="${COPILOT_CLI_DIR:-${HOME}/.cache/memoria-ci/copilot-cli-${version}}"
copilot="${dir}/node_modules/.bin/copilot"

export COPILOT_PKG_CACHE_HOME="${dir}/pkg-cache"
if ! [ -x "${copilot}" ] || ! timeout 120 "${copilot}" --version >/dev/null 2>&1; then
  if ! command -v npm >/dev/null 2>&1; then
    echo "npm is not installed: install Node.js 20+ (apt-get install -y nodejs npm)" >&2
    exit 1
  fi
  echo "installing @github/copilot@${version} into ${dir}" >&2
  mkdir -p "${dir}"
  timeout 600 npm install --prefix "${dir}" --no-audit --no-fund --loglevel=error \
    "@github/copilot@${version}" >&2
  timeout 120 "${copilot}" --version >&2
fi

if [ "${mode}" = install ]; then
  echo "${copilot}"
  exit 0
fi

export COPILOT_CLI_BIN="${copilot}"
export HF_HUB_OFFLINE=1
make venv >/dev/null
timeout 300 .venv/bin/pytest -q tests/test_copilot_cli_*.py \
  --basetemp "$(mktemp -d /tmp/copilot-cli-XXXXXX)"
