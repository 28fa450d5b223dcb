#!/usr/bin/env bash
# Claude Code from npm for the tests that drive it (pinned, installed and run by .ci/agent-cli.sh):
#
#   bash .ci/claude-code-mcp.sh                 install it if missing, then run its tests
#   bash .ci/claude-code-mcp.sh --install-only  only install it; prints the binary's path last
#   bash .ci/claude-code-mcp.sh --latest        its tests with npm's latest release (allowed to fail, one report line)
set -euo pipefail
exec bash "$(dirname "$0")/agent-cli.sh" claude-code "$@"
