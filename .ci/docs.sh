#!/usr/bin/env bash
# Builds the documentation site with `mkdocs build --strict` into a temporary directory: a broken
# internal link or anchor, a page missing from the nav, or a CLI command mkdocs-click cannot render
# fails the build. Installs the `docs` extra into .venv first (pinned versions, see pyproject.toml).
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=.venv/bin
"$BIN/pip" install --quiet -e '.[docs]'
site="$(mktemp -d)"
trap 'rm -rf "$site"' EXIT
HF_HUB_OFFLINE=1 NO_MKDOCS_2_WARNING=1 "$BIN/mkdocs" build --strict --site-dir "$site"
echo "docs: built $(find "$site" -name '*.html' | wc -l) pages"
