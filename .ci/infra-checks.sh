#!/usr/bin/env bash
# Static checks of the deployment artefacts with checkov:
#   - infra/terraform (root module + local modules) with the terraform framework
#   - the repository Dockerfile with the dockerfile framework
# checkov lives in its own venv (.venv-checkov, git-ignored via .venv*) so its pinned dependencies
# never mix with the project's. Exits non-zero when any check fails. Skipped checks are skipped
# inline next to the resource they concern, each with its reason (#checkov:skip=CKV_...:reason).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

CHECKOV_VERSION="${CHECKOV_VERSION:-3.3.30}"
VENV=".venv-checkov"
PYTHON="${PYTHON:-python3}"

if [[ ! -x "${VENV}/bin/checkov" ]] || ! "${VENV}/bin/checkov" --version 2>/dev/null | grep -qx "${CHECKOV_VERSION}"; then
    echo "infra-checks: installing checkov ${CHECKOV_VERSION} into ${VENV}"
    "${PYTHON}" -m venv "${VENV}"
    "${VENV}/bin/python" -m pip install --quiet --disable-pip-version-check "checkov==${CHECKOV_VERSION}"
fi

CHECKOV=("${VENV}/bin/checkov" --quiet --compact --skip-download)
# checkov's report ("Passed checks: N, Failed checks: N, ...") goes to a file and is printed only on
# failure: CI's output is read for a test runner's closing lines, which that report resembles.
report="$(mktemp -t memoria-checkov.XXXXXX)"

check() {
    local what="$1"
    shift
    if "${CHECKOV[@]}" "$@" >"${report}" 2>&1; then
        echo "infra-checks: checkov on ${what}: no failed check ($(sed -n 's/^Passed checks: \([0-9]*\).*/\1/p' "${report}") held)"
    else
        echo "infra-checks: checkov on ${what} FAILED:" >&2
        cat "${report}" >&2
        exit 1
    fi
}

check infra/terraform -d infra/terraform --framework terraform
check Dockerfile -f Dockerfile --framework dockerfile
echo "infra-checks: all checks passed"
