#!/usr/bin/env bash
# Qwen Code from npm for the tests that drive it (pinned, installed and run by .ci/agent-cli.sh):
#
#   bash .ci/qwen-code.sh                 install it if missing, then run its tests
#   bash .ci/qwen-code.sh --install-only  only install it; prints the binary's path last
#   bash .ci/qwen-code.sh --latest        its tests with npm's latest release (allowed to fail, one report line)
set -euo pipefail
exec bash "$(dirname "$0")/agent-cli.sh" qwen "$@"
