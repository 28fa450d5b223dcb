"""The automatic supersede: after a memory is written, which older memories of its namespace it
replaces (the rule is `app.links.supersede_rule`; this module reads what the rule needs).

`find_supersede` runs in the writer's transaction, right after the INSERT: the new memory's few
nearest current memories of its namespace (`supersede.sql`), each judged by the rule. The writer
links the `confident` ones (origin `auto`, the verdict's reason as the link's reason) and offers
the `suggest` ones in its answer; `auto_supersede` does both. A memory written without a vector
(a captured episode: capture never waits for embeddings) is judged when its embedding job writes
the vector (`supersede_when_embedded`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import asyncpg

from app.errors import ApiError
from app.links.service import link
from app.links.settings import LinkSettings
from app.links.supersede_named import gone_names
from app.links.supersede_queries import (
    SupersedeCandidatesOfMany,
    SupersedeOwners,
    SupersedeSubjects,
)
from app.links.supersede_rule import DEFAULT_THRESHOLDS, Side, Thresholds, Verdict, judge
from app.links.supersede_text import fact_text

log = logging.getLogger(__name__)

CANDIDATES = 5
"""Nearest older memories judged per new memory: a changed fact sits among the very nearest."""

EXACT_BELOW = 1000
"""Live vectors under which a namespace's candidates are found by an exact scan rather than the HNSW
walk: the scan's cost grows with the namespace, the walk's hardly (the Ingest section of
docs/operate/background-jobs.md)."""

CANDIDATE_PLANNER = (
    "SET LOCAL enable_sort = off; SET LOCAL enable_incremental_sort = off; "
    "SET LOCAL hnsw.iterative_scan = relaxed_order"
)
"""The planner for the candidates read (supersede.sql), set in the writer's transaction around it.
The statement picks the exact scan or the HNSW walk by counting; what the planner must not do is
answer the walk's `ORDER BY distance LIMIT` by sorting the namespace, which it does while its
statistics see the namespace as empty (after a bulk import, until the next ANALYZE), so that each
stored memory read its whole namespace. Every other ORDER BY of the statement has no index that
could serve it, so only the walk's plan changes. The iterative scan keeps a filtered walk
full, as recall's (`MEMORIA_RECALL__ITERATIVE_SCAN`)."""

PLANNER_RESTORED = (
    "SET LOCAL enable_sort TO DEFAULT; SET LOCAL enable_incremental_sort TO DEFAULT; "
    "SET LOCAL hnsw.iterative_scan TO DEFAULT"
)


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
    """The verdicts on the nearest older memories of memory `memory_id` (internal id), and on the
    older ones naming a value it says is gone (`supersede_named.gone_names`), confident
    ones first, then suggestions, each by similarity; none is left out (`none` verdicts included),
    so a caller can show why nothing was linked. Empty for a memory without a vector or a
    sensitive one."""
    return (await find_supersede_many(conn, [memory_id], limit=limit, thresholds=thresholds))[memory_id]


async def find_supersede_many(
    conn: asyncpg.Connection,
    memory_ids: Sequence[int],
    *,
    limit: int = CANDIDATES,
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
) -> dict[int, list[Candidate]]:
    """`find_supersede` of each memory of a batch just written, in two statements instead of two
    per memory (a store of 100 spent more time on the round trips than on the reads). The same
    reads and verdicts, provided nothing the reads depend on changes in between: a caller that
    links one of them (which ends the old memory's validity) asks again for the rest."""
    if not memory_ids:
        return {}
    subjects = {r["id"]: _side(r) for r in await SupersedeSubjects(memory_ids=list(memory_ids)).fetch(conn)}
    judged: dict[int, list[Candidate]] = {memory_id: [] for memory_id in memory_ids}
    ids = [memory_id for memory_id in memory_ids if memory_id in subjects]
    if not ids:
        return judged
    candidates = SupersedeCandidatesOfMany(
        memory_ids=ids,
        gone_names=[_gone(subjects[i], thresholds) for i in ids],
        limit=limit,
        exact_below=EXACT_BELOW,
    )
    await conn.execute(CANDIDATE_PLANNER)
    rows = await candidates.fetch(conn)  # a failure aborts the transaction, its SET LOCALs with it
    await conn.execute(PLANNER_RESTORED)
    found: dict[int, list[asyncpg.Record]] = {}
    for row in rows:
        found.setdefault(row["subject_id"], []).append(row)
    for memory_id in ids:
        judged[memory_id] = _judged(subjects[memory_id], found.get(memory_id, []), thresholds)
    return judged


def _gone(new: Side, thresholds: Thresholds) -> str | None:
    names = gone_names(fact_text(new.text, new.kind), thresholds)
    return " ".join(names) if names else None


def _judged(new: Side, rows: Sequence[asyncpg.Record], thresholds: Thresholds) -> list[Candidate]:
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
    found: list[Candidate] | None = None,
) -> AutoSupersede:
    """Judge the new memory (internal `memory_id`, public `public_id`) against its nearest older
    memories, in the writer's transaction; link the confident ones (at most one: the nearest, a
    memory restates one fact), offer the suggestions. A link the links service refuses (the old
    memory is superseded by another already, a cycle) is offered instead: each attempt runs in a
    savepoint, so a refusal leaves the write's transaction whole. `found`: the verdicts already read
    (`find_supersede_many`) while still current; None reads them now."""
    if found is None:
        found = await find_supersede(conn, memory_id, limit=limit, thresholds=thresholds)
    superseded: list[int] = []
    suggestions: list[Suggestion] = []
    for candidate in found:
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


def auto_link(user_id: int) -> MakeLink:
    """The rule's links, made through the links service as `user_id` (who wrote the newer memory,
    or its namespace's owner), with origin `auto` and the rule's reason."""

    async def make(conn: asyncpg.Connection, source: int, target: int, reason: str) -> None:
        await link(conn, user_id, source, "supersedes", target, origin="auto", reason=reason)

    return make


def supersede_when_embedded(
    settings: LinkSettings,
) -> Callable[[asyncpg.Connection, Sequence[int]], Awaitable[None]]:
    """The automatic supersede of memories that get their vector after they are written (captured
    episodes, whose embedding job runs after the capture answered; a store whose embedding failed):
    run by the embedding job in the transaction that writes the vectors, oldest first, each linked
    as its namespace's owner. Nobody reads a suggestion there, so only confident links are made."""

    async def judge_embedded(conn: asyncpg.Connection, memory_ids: Sequence[int]) -> None:
        if not settings.auto_supersede:
            return
        for row in await SupersedeOwners(memory_ids=list(memory_ids)).fetch(conn):
            await auto_supersede(
                conn,
                row["id"],
                row["public_id"],
                auto_link(row["user_id"]),
                limit=settings.supersede_candidates,
            )

    return judge_embedded
