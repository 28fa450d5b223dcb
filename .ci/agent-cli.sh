#!/usr/bin/env bash
# A coding agent from npm, for the tests that drive it: one script for every agent.
#
#   bash .ci/agent-cli.sh AGENT                 install AGENT's pinned CLI if missing, then run its tests
#   bash .ci/agent-cli.sh AGENT --install-only  only install it; prints the binary's path last
#   bash .ci/agent-cli.sh AGENT --latest        its tests with npm's latest release, unless that is the
#                                               pinned one; one report line on stdout, exit 0 even when
#                                               they fail (allowed to fail, never silently skipped)
#
# AGENT is claude-code, codex, gemini, qwen, opencode or copilot. The CLI comes from npm (version
# <PREFIX>_VERSION, default the pinned one below) into a local folder (<PREFIX>_DIR, default
# ~/.cache/memoria-ci/<folder>-<version>), never globally; its path goes to the tests in <PREFIX>_BIN.
# The tests point it at a fake model API on 127.0.0.1 and at a `memoria serve` with its embedded
# PostgreSQL, in a temporary HOME; nothing leaves the machine but the npm install.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  echo "usage: $0 claude-code|codex|gemini|qwen|opencode|copilot [--install-only|--latest]" >&2
  exit 2
}

agent="${1:-}"
# Per agent: its label, npm package, pinned version (raise it when a new release passes --latest), the
# binary, the environment variables' prefix, the cache folder's name, and the tests that drive it
# (`run`: what the script runs alone; `latest`: what a new release must pass).
case "${agent}" in
  claude-code)
    label="Claude Code" package=@anthropic-ai/claude-code pinned=2.1.332 binary=claude
    prefix=CLAUDE_CODE folder=claude-code
    run_tests="tests/test_claude_code_mcp.py"
    latest_tests="tests/test_claude_code_mcp.py tests/test_claude_code_hooks.py" ;;
  codex)
    label="Codex CLI" package=@openai/codex pinned=0.171.0 binary=codex prefix=CODEX folder=codex
    run_tests="tests/test_codex_cli.py" latest_tests="${run_tests}" ;;
  gemini)
    label="Gemini CLI" package=@google/gemini-cli pinned=0.61.0 binary=gemini prefix=GEMINI_CLI
    folder=gemini-cli run_tests="$(echo tests/test_gemini_cli_*.py)" latest_tests="${run_tests}" ;;
  qwen)
    label="Qwen Code" package=@qwen-code/qwen-code pinned=0.24.4 binary=qwen prefix=QWEN_CODE
    folder=qwen-code run_tests="$(echo tests/test_qwen_code_*.py)" latest_tests="${run_tests}" ;;
  opencode)
    label="OpenCode" package=opencode-ai pinned=1.18.33 binary=opencode prefix=OPENCODE folder=opencode
    run_tests="$(echo tests/test_opencode_*.py)" latest_tests="${run_tests}" ;;
  copilot)
    label="GitHub Copilot CLI" package=@github/copilot pinned=1.0.102 binary=copilot prefix=COPILOT_CLI
    folder=copilot-cli run_tests="$(echo tests/test_copilot_cli_*.py)" latest_tests="${run_tests}" ;;
  *) usage ;;
esac

mode=run
case "${2:-}" in
  "") ;;
  --install-only) mode=install ;;
  --latest) mode=latest ;;
  *) usage ;;
esac

if [ "${mode}" = latest ]; then
  # a client change shows up here as a red line in CI's last lines, never as a user's bug report
  if ! latest="$(timeout 60 npm view "${package}" version 2>/dev/null)" || [ -z "${latest}" ]; then
    echo "${label} latest: NOT TESTED: npm did not answer which version is the latest (pinned ${pinned} tested)"
    exit 0
  fi
  if [ "${latest}" = "${pinned}" ]; then
    echo "${label} latest: ${latest} is the pinned version, tested by make test; no second run"
    exit 0
  fi
  if ! bin="$(env "${prefix}_VERSION=${latest}" bash "$0" "${agent}" --install-only 2>&1 | tail -n 1)" \
    || ! [ -x "${bin}" ]; then
    echo "${label} latest: FAILED (allowed): installing ${latest} from npm failed: ${bin}"
    exit 0
  fi
  started=$(date +%s)
  # shellcheck disable=SC2086  # the test list is words
  if env "${prefix}_BIN=${bin}" HF_HUB_OFFLINE=1 timeout 600 .venv/bin/pytest -q -p no:cacheprovider \
    ${latest_tests} --basetemp "$(mktemp -d "/tmp/${folder}-latest-XXXXXX")" >&2; then
    echo "${label} latest: ${latest} passed the real-CLI tests in $(( $(date +%s) - started ))s" \
      "(pinned ${pinned}): raise its pin in .ci/agent-cli.sh"
  else
    echo "${label} latest: FAILED (allowed): ${latest} fails the real-CLI tests that pinned ${pinned}" \
      "passes; see the pytest output above"
  fi
  exit 0
fi

version_var="${prefix}_VERSION"
dir_var="${prefix}_DIR"
version="${!version_var:-${pinned}}"
dir="${!dir_var:-${HOME}/.cache/memoria-ci/${folder}-${version}}"
bin="${dir}/node_modules/.bin/${binary}"
if [ "${agent}" = copilot ]; then
  # Copilot CLI unpacks its runtime at first start: once, here, not in every test's fresh HOME
  export COPILOT_PKG_CACHE_HOME="${dir}/pkg-cache"
fi

if ! [ -x "${bin}" ] || ! timeout 120 "${bin}" --version >/dev/null 2>&1; then
  if ! command -v npm >/dev/null 2>&1; then
    echo "npm is not installed: install Node.js 20+ (apt-get install -y nodejs npm)" >&2
    exit 1
  fi
  echo "installing ${package}@${version} into ${dir}" >&2
  mkdir -p "${dir}"
  timeout 600 npm install --prefix "${dir}" --no-audit --no-fund --loglevel=error \
    "${package}@${version}" >&2
  timeout 120 "${bin}" --version >&2
fi

if [ "${agent}" = opencode ] && ! [ -d "${dir}/config-deps/node_modules/@opencode-ai/plugin" ]; then
  # What OpenCode installs into its config folder at its first start on a machine online (its own
  # plugin package at its own version), installed once here; the tests and `memoria bench session`
  # link each HOME's config folder to it (memoria_bench/clis/opencode.py), so no run retries the
  # install offline, which OpenCode waits for before the first prompt when a plugin is present.
  mkdir -p "${dir}/config-deps"
  printf '{\n  "dependencies": {\n    "@opencode-ai/plugin": "%s"\n  }\n}\n' "${version}" \
    >"${dir}/config-deps/package.json"
  timeout 600 npm install --prefix "${dir}/config-deps" --no-audit --no-fund --loglevel=error >&2
fi

if [ "${mode}" = install ]; then
  echo "${bin}"
  exit 0
fi

export "${prefix}_BIN=${bin}"
export HF_HUB_OFFLINE=1
make venv >/dev/null
# shellcheck disable=SC2086  # the test list is words
timeout 300 .venv/bin/pytest -q ${run_tests} --basetemp "$(mktemp -d "/tmp/${folder}-XXXXXX")"
