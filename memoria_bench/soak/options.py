"""What one soak run does."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class SoakOptions:
    duration_s: float = 30 * 60
    clients: int = 8
    store_share: float = 0.2
    namespaces: int = 4
    preload: int = 1000  # memories stored (batches of 100) before the clock starts
    warmup_s: float = 60.0  # resident memory grows to its working size first; growth counts after
    kill_postgres_at_s: float | None = None  # kill -9 the embedded postmaster once, this far in
    request_timeout_s: float = 10.0
    sentences: Path = Path()
    data_dir: Path | None = None  # the embedded PostgreSQL's data; a temporary one by default
