#!/usr/bin/env bash
# The web UI's vendored browser libraries (today only cytoscape, for the concept graph).
#
#   bash .ci/ui-assets.sh
#
# Installs app/ui/assets/package-lock.json with `npm ci` (skipped when node_modules already matches
# the lock, checked against a stamp holding the lock's sha256), then copies cytoscape's ESM build
# and its licence to app/ui/static/vendor/, which the app serves under /ui/static/vendor/. Both
# node_modules and static/vendor are git-ignored. Idempotent; the second run does no npm work.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

assets="app/ui/assets"
vendor="app/ui/static/vendor"
lock="${assets}/package-lock.json"
stamp="${assets}/node_modules/.memoria-lock.sha256"
pkg="${assets}/node_modules/cytoscape"

if ! command -v npm >/dev/null 2>&1; then
  echo "ui-assets: npm is not installed: install Node.js 18+ with npm (e.g. apt-get install -y nodejs npm)" >&2
  exit 1
fi

want="$(sha256sum "${lock}" | cut -d' ' -f1)"
if [[ ! -f "${stamp}" || "$(cat "${stamp}")" != "${want}" || ! -f "${pkg}/package.json" ]]; then
  echo "ui-assets: npm ci in ${assets}" >&2
  (cd "${assets}" && timeout 300 npm ci --no-audit --no-fund --loglevel=error)
  echo "${want}" >"${stamp}"
fi

src="${pkg}/dist/cytoscape.esm.min.mjs"
if [[ ! -f "${src}" ]]; then
  echo "ui-assets: ${src} is missing (did cytoscape's package layout change?)" >&2
  exit 1
fi

mkdir -p "${vendor}"
copy() {
  # Copy only when the content differs, so repeated runs leave mtimes (and HTTP caches) alone.
  if ! cmp -s "$1" "$2"; then
    cp "$1" "$2.tmp.$$" && mv -f "$2.tmp.$$" "$2"
    echo "ui-assets: wrote $2" >&2
  fi
}
copy "${src}" "${vendor}/cytoscape.esm.min.mjs"
copy "${pkg}/LICENSE" "${vendor}/cytoscape.LICENSE"
