#!/usr/bin/env bash
# The app through a real PgBouncer (transaction pooling, as in production).
#
#   bash .ci/pgbouncer-tests.sh                 install PgBouncer if missing, then run the pooler suite
#   bash .ci/pgbouncer-tests.sh --install-only  only install PgBouncer (run before `make test`: the
#                                               always-on tests/test_pooler_*.py need it and fail without)
#
# The suite: with PGBOUNCER_TESTS=1 the `settings`/`app`/`client` fixtures reach each per-test database
# through a PgBouncer the session starts (127.0.0.1, free port, statement_cache_size=0); the admin
# connections (CREATE/DROP DATABASE, template migration) and the `conn` fixture stay direct.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=run
case "${1:-}" in
  "") ;;
  --install-only) mode=install ;;
  *) echo "usage: $0 [--install-only]" >&2; exit 2 ;;
esac

have_pgbouncer() {
  command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ]
}

if ! have_pgbouncer; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "pgbouncer is not installed and this is not root: apt-get install -y pgbouncer" >&2
    exit 1
  fi
  echo "installing pgbouncer (apt)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq pgbouncer >/dev/null
  # The Debian package's own service (127.0.0.1:6432) is not used: the tests start their own
  # pgbouncer on a free port. Stop and disable it if the install started it (containers usually
  # refuse to start services anyway).
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet pgbouncer 2>/dev/null; then
    systemctl stop pgbouncer || true
  fi
  if command -v systemctl >/dev/null 2>&1; then
    systemctl disable --quiet pgbouncer 2>/dev/null || true
  fi
  if [ -x /etc/init.d/pgbouncer ]; then
    /etc/init.d/pgbouncer stop >/dev/null 2>&1 || true
  fi
fi
pgbouncer_bin=$(command -v pgbouncer || echo /usr/sbin/pgbouncer)
echo "$("$pgbouncer_bin" --version | head -n 1) at $pgbouncer_bin"

if [ "$mode" = install ]; then
  exit 0
fi

if [ ! -x .venv/bin/pytest ]; then
  echo ".venv is missing: run \`make venv\` (or \`make test\`) first" >&2
  exit 1
fi

tests=(tests/test_memories_crud.py tests/test_pooler_set_local.py tests/test_read_replica.py)
for file in tests/test_recall*.py; do
  # test_recall_scale.py opens its own pools on a database it builds itself (never the app fixtures),
  # so PGBOUNCER_TESTS changes nothing there; it already runs in `make test`.
  if [ -e "$file" ] && [ "$file" != tests/test_recall_scale.py ]; then
    tests+=("$file")
  fi
done

start=$(date +%s)
PGBOUNCER_TESTS=1 HF_HUB_OFFLINE=1 .venv/bin/pytest -q -p no:warnings "${tests[@]}"
echo "pgbouncer tests finished in $(( $(date +%s) - start ))s"
