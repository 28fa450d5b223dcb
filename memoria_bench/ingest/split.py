"""Where a store request's time goes, from its `Server-Timing` phases.

The store path records, one after the other: `auth` (the key lookup, `app.auth.middleware`),
`prepare` (checks and credential redaction), `lookup` (namespaces and the duplicate check), `embed`
(the model, for the memories that are new) and `sql` (the INSERT transaction, commit included),
all in `app.memories.service`. `other` is the rest of `app`, the time inside the application:
routing, JSON decoding and validation, serialization; `outside` is what the client waited beyond
it: the network, the HTTP server, the client itself.

Each phase is given per batch (the median over requests) and per memory (each request's phase over
its batch size, then the median), and summed over the run with its share of all `app` time. With
several requests in flight the sums exceed the wall time; the shares still say what dominates.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from memoria_bench.ingest.load import StoreSample

STORE_PHASES = ("auth", "prepare", "lookup", "embed", "sql")
SPLIT_COLUMNS = (*STORE_PHASES, "other", "app", "outside")


def request_split(phases: dict[str, float], client_ms: float) -> dict[str, float]:
    """One request's time by phase (ms), `other` and `outside` included."""
    app = phases.get("app", 0.0)
    split = {phase: phases.get(phase, 0.0) for phase in STORE_PHASES}
    split["other"] = max(app - sum(split.values()), 0.0)
    split["app"] = app
    split["outside"] = max(client_ms - app, 0.0)
    return split


def phase_split(samples: Sequence[StoreSample]) -> dict[str, Any]:
    """The split over the accepted requests that carried `Server-Timing` (empty without one)."""
    timed = [(s.size, request_split(s.phases, s.client_ms)) for s in samples if s.phases and s.error is None]
    if not timed:
        return {}
    total_app = sum(split["app"] for _, split in timed)
    totals = {column: sum(split[column] for _, split in timed) for column in SPLIT_COLUMNS}
    return {
        "requests": len(timed),
        "per_batch_ms": {c: round(statistics.median(s[c] for _, s in timed), 2) for c in SPLIT_COLUMNS},
        "per_memory_ms": {
            c: round(statistics.median(s[c] / size for size, s in timed), 3) for c in SPLIT_COLUMNS
        },
        "total_s": {c: round(ms / 1000.0, 3) for c, ms in totals.items()},
        "share_of_app": {
            c: round(totals[c] / total_app, 3) if total_app else None for c in (*STORE_PHASES, "other")
        },
    }
