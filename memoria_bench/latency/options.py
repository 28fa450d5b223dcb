"""What one `memoria bench latency` run measures, and where its sentences come from by default."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SENTENCES = REPO_ROOT.parent / "shared" / "bench" / "persona-sentences" / "sentences.txt"
# Recalls run over every leg, per scope, before anything is timed (`--cache-warmup`). PostgreSQL that
# has just started reads each page once from the OS cache into shared_buffers; on a large corpus the
# graph leg's pages take a few hundred recalls to come in, so the first recalls after a restart are
# several times slower than later ones, and a server that has been running is past that.
CACHE_WARMUP = 300


@dataclass(frozen=True, slots=True)
class LatencyOptions:
    memories: int = 100_000
    namespaces: int = 10
    requests: int = 300
    concurrency: tuple[int, ...] = (1, 8)
    hnsw_queries: int = 1000
    sentences: Path = DEFAULT_SENTENCES
    concepts: bool = False  # extract the concept graph too (slow: see `load.index_concepts`)
    bulk: bool = False  # load with COPY and build the indexes after (`bulk.bulk_store`)
    cache_warmup: int = CACHE_WARMUP  # untimed recalls per scope first
    mid_scope: bool = False  # time a middle-sized namespace too (`scopes.resolve_scopes`)
    whole_scope: bool = False  # time every namespace of the user's at once too
