"""What one `memoria bench ingest` run does, and the bar the issue sets for it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The issue's bar: memories per second, over HTTP in batches of 100, with the graph on.
TARGET_PER_S = 300.0


@dataclass(frozen=True, slots=True)
class IngestOptions:
    sentences: Path
    memories: int = 5000
    batch: int = 100
    concurrency: int = 2
    namespaces: int = 1  # one repository's memories: one graph lock, as an agent's import takes it
    warmup_batches: int = 1  # stored (and indexed) first, untimed, in a namespace of their own
    drain_timeout_s: float = 600.0  # how long the queue may take to empty after the last store
    poll_s: float = 0.05  # how often the jobs table is read (the resolution of the job figures)
    seed: int = 29
    hosted_embedder_ms: float | None = None
    """Embed through a stand-in hosted API answering after this many ms (`hosted.py`); None: the
    served process's own embedder (the local model by default)."""
    dimension: int = 384  # the scratch database's, which the stand-in's vectors must match
    served: dict[str, Any] = field(default_factory=dict)
    """The settings the served process runs with (graph, jobs, embeddings), for the report only:
    the benchmark never reads the environment, the command reads them and passes them here."""
