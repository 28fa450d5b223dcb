"""The automatic supersede: after a memory is written, which older memories of its namespace it
replaces (the rule is `app.links.supersede_rule`; this module reads what the rule needs).

`find_supersede` runs in the writer's transaction, right after the INSERT: the new memory's few
nearest current memories of its namespace (`supersede.sql`), each judged by the rule. The writer
links the `confident` ones (origin `auto`, the verdict's reason as the link's reason) and offers
the `suggest` ones in its answer.
"""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

from app.links.supersede_queries import SupersedeCandidates, SupersedeSubject
from app.links.supersede_rule import DEFAULT_THRESHOLDS, Side, Thresholds, Verdict, judge

CANDIDATES = 5
"""Nearest older memories judged per new memory: a changed fact sits among the very nearest."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """An older memory the new one may replace, and the rule's verdict on the pair."""

    id: int
    """Internal id."""
    public_id: int
    content: str
    kind: str
    similarity: float
    verdict: Verdict


def _side(row: asyncpg.Record) -> Side:
    return Side(
        text=row["content"],
        created_at=row["created_at"],
        kind=row["kind"],
        category=row["category"],
        tags=tuple(row["tags"] or ()),
    )


async def find_supersede(
    conn: asyncpg.Connection,
    memory_id: int,
    *,
    limit: int = CANDIDATES,
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
) -> list[Candidate]:
    """The verdicts on the nearest older memories of memory `memory_id` (internal id), confident
    ones first, then suggestions, each by similarity; none is left out (`none` verdicts included),
    so a caller can show why nothing was linked. Empty for a memory without a vector or a
    sensitive one."""
    subject = await SupersedeSubject(memory_id=memory_id).fetchrow(conn)
    if subject is None:
        return []
    new = _side(subject)
    rows = await SupersedeCandidates(memory_id=memory_id, limit=limit).fetch(conn)
    found = [
        Candidate(
            id=row["id"],
            public_id=row["public_id"],
            content=row["content"],
            kind=row["kind"],
            similarity=row["similarity"],
            verdict=judge(new, _side(row), row["similarity"], thresholds),
        )
        for row in rows
    ]
    order = {"confident": 0, "suggest": 1, "none": 2}
    return sorted(found, key=lambda c: (order[c.verdict.decision], -c.similarity))
