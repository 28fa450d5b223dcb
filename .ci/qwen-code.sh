#!/usr/bin/env bash
# The real Qwen Code against Memoria's hooks (tests/test_qwen_code_*.py).
#
#   bash .ci/qwen-code.sh                 install Qwen Code if missing, then run its tests
#   bash .ci/qwen-code.sh --install-only  only install it; prints the `qwen` binary's path last
#
# Qwen Code comes from npm (@qwen-code/qwen-code, version QWEN_CODE_VERSION) into a folder of its own
# (QWEN_CODE_DIR, default ~/.cache/memoria-ci/qwen-code-<version>), never globally. The tests point
# it at a fake OpenAI Chat Completions API on 127.0.0.1 (OPENAI_BASE_URL) and at a `memoria serve` with its
# embedded PostgreSQL, in a temporary HOME; nothing leaves the machine but the npm install.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=run
case "${1:-}" in
  "") ;;
  --install-only) mode=install ;;
  *) echo "usage: $0 [--install-only]" >&2; exit 2 ;;
esac

version="${QWEN_CODE_VERSION:-0.24.4}"
dir="${QWEN_CODE_DIR:-${HOME}/.cache/memoria-ci/qwen-code-${version}}"
qwen="${dir}/node_modules/.bin/qwen"

if ! [ -x "${qwen}" ] || ! timeout 60 "${qwen}" --version >/dev/null 2>&1; then
  if ! command -v npm >/dev/null 2>&1; then
    echo "npm is not installed: install Node.js 20+ (apt-get install -y nodejs npm)" >&2
    exit 1
  fi
  echo "installing @qwen-code/qwen-code@${version} into ${dir}" >&2
  mkdir -p "${dir}"
  timeout 600 npm install --prefix "${dir}" --no-audit --no-fund --loglevel=error \
    "@qwen-code/qwen-code@${version}" >&2
  timeout 60 "${qwen}" --version >&2
fi

if [ "${mode}" = install ]; then
  echo "${qwen}"
  exit 0
fi

export QWEN_CODE_BIN="${qwen}"
export HF_HUB_OFFLINE=1
make venv >/dev/null
timeout 300 .venv/bin/pytest -q tests/test_qwen_code_*.py \
  --basetemp "$(mktemp -d /tmp/qwen-code-XXXXXX)"
