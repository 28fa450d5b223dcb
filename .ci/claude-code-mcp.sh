#!/usr/bin/env bash
# The real Claude Code against Memoria's MCP endpoint (tests/test_claude_code_mcp.py).
#
#   bash .ci/claude-code-mcp.sh                 install Claude Code if missing, then run the test
#   bash .ci/claude-code-mcp.sh --install-only  only install it; prints the `claude` binary's path last
#
# Claude Code comes from npm (@anthropic-ai/claude-code, version CLAUDE_CODE_VERSION) into a local
# folder (CLAUDE_CODE_DIR, default ~/.cache/memoria-ci/claude-code-<version>), never globally. The
# test points it at a fake Anthropic Messages API on 127.0.0.1 and at a `memoria serve` with its
# embedded PostgreSQL, in a temporary HOME; nothing leaves the machine but the npm install.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=run
case "${1:-}" in
  "") ;;
  --install-only) mode=install ;;
  *) echo "usage: $0 [--install-only]" >&2; exit 2 ;;
esac

version="${CLAUDE_CODE_VERSION:-2.1.332}"
dir="${CLAUDE_CODE_DIR:-${HOME}/.cache/memoria-ci/claude-code-${version}}"
claude="${dir}/node_modules/.bin/claude"

if ! [ -x "${claude}" ] || ! timeout 60 "${claude}" --version >/dev/null 2>&1; then
  if ! command -v npm >/dev/null 2>&1; then
    echo "npm is not installed: install Node.js 18+ (apt-get install -y nodejs npm)" >&2
    exit 1
  fi
  echo "installing @anthropic-ai/claude-code@${version} into ${dir}" >&2
  mkdir -p "${dir}"
  timeout 600 npm install --prefix "${dir}" --no-audit --no-fund --loglevel=error \
    "@anthropic-ai/claude-code@${version}" >&2
  timeout 60 "${claude}" --version >&2
fi

if [ "${mode}" = install ]; then
  echo "${claude}"
  exit 0
fi

export CLAUDE_CODE_BIN="${claude}"
export HF_HUB_OFFLINE=1
make venv >/dev/null
timeout 300 .venv/bin/pytest -q tests/test_claude_code_mcp.py \
  --basetemp "$(mktemp -d /tmp/claude-code-mcp-XXXXXX)"
