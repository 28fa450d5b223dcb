"""The automatic supersede: after a memory is written, which older memories of its namespace it
replaces (the rule is `app.links.supersede_rule`; this module reads what the rule needs).

`find_supersede` runs in the writer's transaction, right after the INSERT: the new memory's few
nearest current memories of its namespace (`supersede.sql`), each judged by the rule. The writer
links the `confident` ones (origin `auto`, the verdict's reason as the link's reason) and offers
the `suggest` ones in its answer; `auto_supersede` does both.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import asyncpg

from app.errors import ApiError
from app.links.supersede_queries import SupersedeCandidates, SupersedeSubject
from app.links.supersede_rule import DEFAULT_THRESHOLDS, Side, Thresholds, Verdict, judge

log = logging.getLogger(__name__)

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


PREVIEW_CHARS = 160
"""How much of a suggested memory's content the store's answer quotes."""


@dataclass(frozen=True, slots=True)
class Suggestion:
    """An older memory the new one looks like it replaces: offered to the agent, not linked."""

    id: int
    """Public id (what the agent passes to link it)."""
    preview: str
    reason: str


@dataclass(frozen=True, slots=True)
class AutoSupersede:
    """What the automatic supersede did for one new memory."""

    superseded: list[int]
    """Public ids of the older memories it now supersedes (`auto` links made)."""
    suggestions: list[Suggestion]


MakeLink = Callable[[asyncpg.Connection, int, int, str], Awaitable[object]]
"""`(conn, new public id, old public id, reason)`: makes the `supersedes` link with origin `auto`
in the caller's transaction (the links service's `link`); an `ApiError` refuses it."""


def _preview(content: str) -> str:
    flat = " ".join(content.split())
    return flat if len(flat) <= PREVIEW_CHARS else flat[: PREVIEW_CHARS - 1] + "\u2026"


async def auto_supersede(
    conn: asyncpg.Connection,
    memory_id: int,
    public_id: int,
    make_link: MakeLink,
    *,
    limit: int = CANDIDATES,
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
) -> AutoSupersede:
    """Judge the new memory (internal `memory_id`, public `public_id`) against its nearest older
    memories, in the writer's transaction; link the confident ones (at most one: the nearest, a
    memory restates one fact), offer the suggestions. A link the links service refuses (the old
    memory is superseded by another already, a cycle) is offered instead: each attempt runs in a
    savepoint, so a refusal leaves the write's transaction whole."""
    superseded: list[int] = []
    suggestions: list[Suggestion] = []
    for candidate in await find_supersede(conn, memory_id, limit=limit, thresholds=thresholds):
        verdict = candidate.verdict
        if verdict.decision == "confident" and not superseded:
            try:
                async with conn.transaction():
                    await make_link(conn, public_id, candidate.public_id, verdict.reason)
            except ApiError:
                log.info(
                    "automatic supersede %s -> %s refused", public_id, candidate.public_id, exc_info=True
                )
            else:
                superseded.append(candidate.public_id)
                continue
        if verdict.decision != "none":
            suggestions.append(Suggestion(candidate.public_id, _preview(candidate.content), verdict.reason))
    return AutoSupersede(superseded, suggestions)
