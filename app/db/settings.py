"""The database section: where PostgreSQL is (or the embedded one lives) and how the pool behaves."""

from __future__ import annotations

from pathlib import Path

import platformdirs
from pydantic import Field

from app.core.settings import Section


class DatabaseSettings(Section):
    url: str | None = Field(
        default=None,
        description="PostgreSQL URL for writes (and reads unless read_url is set). Unset = embedded.",
    )
    read_url: str | None = Field(
        default=None,
        description="Optional URL of a streaming replica (or a pooler in front of replicas) that reads go "
        "to: recall, the hook routes, graph and UI pages; writes never (docs/operate/read-replicas.md).",
    )
    replica_max_lag_s: float = Field(
        default=5.0,
        gt=0,
        description="Reads go to the primary while the replica is further behind than this.",
    )
    replica_acquire_timeout_s: float = Field(
        default=0.25,
        gt=0,
        description="Longest wait for a replica connection (a new one's connect included); past it the "
        "read goes to the primary in the same request.",
    )
    replica_backoff_s: float = Field(
        default=5.0,
        gt=0,
        description="After the replica failed, reads go to the primary this long before it is tried again.",
    )
    replica_probe_interval_s: float = Field(
        default=0.5,
        gt=0,
        description="How often the replica's lag is measured; a writer's reads return to the replica about "
        "this long (plus the lag) after its write.",
    )
    data_dir: Path = Field(
        default_factory=lambda: Path(platformdirs.user_data_dir("memoria")) / "pgdata",
        description="Data directory of the embedded PostgreSQL (used only when url is unset).",
    )
    database: str = Field(default="memoria", description="Database name inside the embedded server.")
    embedded_shared_buffers: str = Field(
        default="auto",
        pattern=r"^(auto|[1-9][0-9]{0,6}(kB|MB|GB))$",
        description="shared_buffers of the embedded server (applied when it starts), e.g. 512MB or 1GB; "
        "auto: its data files plus a quarter, at least 512MB, at most a quarter of the machine's memory "
        "(or of its cgroup's limit) and 8GB",
    )
    embedded_restart_attempts: int = Field(
        default=8,
        ge=1,
        description="`memoria serve` restarts its embedded PostgreSQL when it dies; after this many failed "
        "restarts in a row it gives up and exits 1, so whatever supervises it takes over.",
    )
    embedded_restart_max_backoff_s: float = Field(
        default=30.0,
        gt=0,
        description="The wait before each restart doubles from 0.5 s up to this.",
    )
    warmup_timeout_s: float = Field(
        default=30.0,
        ge=0,
        description="Longest warm-up of the recall tables and indexes (at start and after PostgreSQL "
        "restarts; not ready meanwhile). 0 turns warm-up off.",
    )
    statement_cache_size: int = Field(
        default=100,
        ge=0,
        description="asyncpg prepared-statement cache; 0 behind PgBouncer < 1.21 in transaction mode.",
    )
    pool_min_size: int = Field(default=1, ge=0, description="Connections each pool keeps open when idle.")
    pool_max_size: int = Field(
        default=10,
        ge=1,
        description="Most connections a pool opens; more requests wait for one (bounded by the deadline).",
    )
    command_timeout_s: float = Field(
        default=10.0,
        gt=0,
        description="Client-side timeout of one SQL statement, a backstop behind the request deadline; on a "
        "hung database it is what answers the 503 of the routes that embed what they write (their write "
        "deadline is longer).",
    )
    connect_timeout_s: float = Field(
        default=5.0,
        gt=0,
        description="Longest wait for a new connection (asyncpg's default is 60 s; a stopped server "
        "accepts the socket and then never answers).",
    )
    acquire_timeout_s: float = Field(
        default=10.0,
        gt=0,
        description="Longest wait for a pool connection, a new one's connect included. Inside a request "
        "the request's deadline bounds it further.",
    )
