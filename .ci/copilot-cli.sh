#!/usr/bin/env bash
# GitHub Copilot CLI from npm for the tests that drive it (pinned, installed and run by .ci/agent-cli.sh):
#
#   bash .ci/copilot-cli.sh                 install it if missing, then run its tests
#   bash .ci/copilot-cli.sh --install-only  only install it; prints the binary's path last
#   bash .ci/copilot-cli.sh --latest        its tests with npm's latest release (allowed to fail, one report line)
set -euo pipefail
exec bash "$(dirname "$0")/agent-cli.sh" copilot "$@"
