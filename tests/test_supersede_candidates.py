"""The automatic supersede's SQL on a real database: which older memories a just-written one is
judged against (`supersede_candidates_of_many`), and `find_supersede`'s verdicts on them."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from app.auth.service import get_or_create_user
from app.embeddings import LocalEmbedder
from app.errors import Conflict
from app.links.supersede import (
    CANDIDATE_PLANNER,
    EXACT_BELOW,
    PLANNER_RESTORED,
    auto_supersede,
    find_supersede,
)
from app.links.supersede_queries import SupersedeCandidatesOfMany
from app.namespaces.service import ensure_namespaces

DAY = timedelta(days=1)
T0 = datetime(2026, 9, 1, tzinfo=UTC)


class Namespace:
    """Memories written straight into one namespace, with the local model's vectors."""

    def __init__(self, conn: asyncpg.Connection, embedder: LocalEmbedder, namespace_id: int) -> None:
        self.conn, self.embedder, self.namespace_id = conn, embedder, namespace_id

    async def add(
        self,
        content: str,
        created_at: datetime,
        *,
        sensitive: bool = False,
        deleted: bool = False,
        valid_to: datetime | None = None,
        model: str | None = None,
        namespace_id: int | None = None,
    ) -> int:
        (vector,) = await self.embedder.embed_documents([content])
        memory_id: int = await self.conn.fetchval(
            """
            INSERT INTO memories (namespace_id, content_hash, content, embedding, embedding_model,
                                  is_sensitive, deleted_at, valid_to, created_at)
            VALUES ($1, $2, $3, $4::text::halfvec, $5, $6, $7, $8, $9)
            RETURNING id
            """,
            namespace_id or self.namespace_id,
            hashlib.sha256(content.encode()).digest(),
            content,
            "[" + ",".join(f"{x:.6f}" for x in vector) + "]",
            model or self.embedder.model_id,
            sensitive,
            created_at if deleted else None,
            valid_to,
            created_at,
        )
        return memory_id


async def _namespaces(conn: asyncpg.Connection, *names: str) -> dict[str, int]:
    user_id = await get_or_create_user(conn, "alice")
    async with conn.transaction():
        return await ensure_namespaces(conn, user_id, names, max_per_user=10)


#: The two ways the statement finds the nearest: the exact scan of a namespace under the size
#: (every test namespace here), and the HNSW walk, which a size of 0 makes it take for any namespace.
READS = pytest.mark.parametrize("exact_below", [EXACT_BELOW, 0], ids=["exact-scan", "hnsw-walk"])


async def _candidates(
    conn: asyncpg.Connection,
    memory_id: int,
    limit: int,
    gone_names: str | None = None,
    exact_below: int = EXACT_BELOW,
) -> list[asyncpg.Record]:
    """The candidate rows of one memory, nearest first (the batch query asked for one), read with
    the planner the store reads them with."""
    query = SupersedeCandidatesOfMany(
        memory_ids=[memory_id], gone_names=[gone_names], exact_below=exact_below, limit=limit
    )
    async with conn.transaction():
        await conn.execute(CANDIDATE_PLANNER)
        rows = list(await query.fetch(conn))
        await conn.execute(PLANNER_RESTORED)
    return rows


@READS
async def test_candidates_are_the_older_current_visible_memories_of_the_namespace(
    conn: asyncpg.Connection, embedder: LocalEmbedder, exact_below: int
) -> None:
    ids = await _namespaces(conn, "work", "other")
    ns = Namespace(conn, embedder, ids["work"])
    fact = "The API listens on port 8080."
    older = await ns.add(fact, T0)
    unrelated = await ns.add("Alice prefers squash merges for feature branches.", T0)
    await ns.add(fact + " (sensitive)", T0, sensitive=True)
    await ns.add(fact + " (deleted)", T0, deleted=True)
    await ns.add(fact + " (superseded)", T0, valid_to=T0 + DAY)
    await ns.add(fact + " (other model)", T0, model="another-model")
    await ns.add(fact + " (other namespace)", T0, namespace_id=ids["other"])
    new = await ns.add("The API listens on port 9000.", T0 + 2 * DAY)
    await ns.add("The API listens on port 9001.", T0 + 3 * DAY)  # newer than `new`

    rows = await _candidates(conn, new, 5, exact_below=exact_below)

    assert [r["id"] for r in rows] == [older, unrelated]
    assert rows[0]["similarity"] > 0.8 > rows[1]["similarity"]


@READS
async def test_the_candidate_limit_keeps_the_nearest(
    conn: asyncpg.Connection, embedder: LocalEmbedder, exact_below: int
) -> None:
    ns = Namespace(conn, embedder, (await _namespaces(conn, "work"))["work"])
    nearest = await ns.add("The API listens on port 8080.", T0)
    await ns.add("Invoices are generated as PDFs with WeasyPrint.", T0)
    await ns.add("The design system uses an 8px spacing grid.", T0)
    new = await ns.add("The API listens on port 9000.", T0 + DAY)

    rows = await _candidates(conn, new, 1, exact_below=exact_below)

    assert [r["id"] for r in rows] == [nearest]


async def test_find_supersede_judges_a_changed_fact_confident_and_an_unrelated_one_none(
    conn: asyncpg.Connection, embedder: LocalEmbedder
) -> None:
    ns = Namespace(conn, embedder, (await _namespaces(conn, "work"))["work"])
    older = await ns.add("The staging database runs in eu-west-1.", T0)
    await ns.add("The design system uses an 8px spacing grid.", T0)
    new = await ns.add("The staging database now runs in eu-central-1.", T0 + DAY)

    found = await find_supersede(conn, new)

    assert (found[0].id, found[0].verdict.decision) == (older, "confident")
    assert "eu-west-1 \u2192 eu-central-1" in found[0].verdict.reason
    assert {c.verdict.decision for c in found[1:]} == {"none"}


async def test_a_sensitive_memory_is_never_judged(conn: asyncpg.Connection, embedder: LocalEmbedder) -> None:
    ns = Namespace(conn, embedder, (await _namespaces(conn, "work"))["work"])
    await ns.add("The API listens on port 8080.", T0)
    new = await ns.add("The API listens on port 9000.", T0 + DAY, sensitive=True)

    assert await find_supersede(conn, new) == []


async def test_auto_supersede_links_the_confident_one_and_offers_a_refused_link_instead(
    conn: asyncpg.Connection, embedder: LocalEmbedder
) -> None:
    ns = Namespace(conn, embedder, (await _namespaces(conn, "work"))["work"])
    older = await ns.add("The staging database runs in eu-west-1.", T0)
    new = await ns.add("The staging database now runs in eu-central-1.", T0 + DAY)
    public = "SELECT public_id FROM memories WHERE id = $1"
    old_public: int = await conn.fetchval(public, older)
    new_public: int = await conn.fetchval(public, new)
    made: list[tuple[int, int, str]] = []

    async def link(_conn: asyncpg.Connection, source: int, target: int, reason: str) -> None:
        made.append((source, target, reason))

    async def refuse(_conn: asyncpg.Connection, source: int, target: int, reason: str) -> None:
        await _conn.execute("SELECT 1")
        raise Conflict(f"memory {target} is superseded by another already")

    async with conn.transaction():
        linked = await auto_supersede(conn, new, new_public, link)
    assert linked.superseded == [old_public]
    assert [(s, t) for s, t, _ in made] == [(new_public, old_public)]
    assert "eu-west-1" in made[0][2]

    async with conn.transaction():
        offered = await auto_supersede(conn, new, new_public, refuse)
        assert await conn.fetchval("SELECT 1") == 1  # the write's transaction is still whole
    assert offered.superseded == []
    assert [s.id for s in offered.suggestions] == [old_public]
    assert offered.suggestions[0].preview == "The staging database runs in eu-west-1."


async def test_an_older_memory_naming_a_value_the_new_one_says_is_gone_is_a_candidate_however_far(
    conn: asyncpg.Connection, embedder: LocalEmbedder
) -> None:
    ids = await _namespaces(conn, "work")
    ns = Namespace(conn, embedder, ids["work"])
    far = await ns.add("The payment webhook swallowed exceptions, so nothing reached Sentry.", T0)
    near = await ns.add("We moved error tracking settings into one module.", T0)
    new = await ns.add("We moved error tracking from Sentry to GlitchTip.", T0 + DAY)

    nearest = await _candidates(conn, new, 1)
    named = await _candidates(conn, new, 1, gone_names="Sentry")

    assert [row["id"] for row in nearest] == [near]
    assert far in {row["id"] for row in named}
    assert near in {row["id"] for row in named}


async def test_a_gone_name_is_read_as_a_prefix(conn: asyncpg.Connection, embedder: LocalEmbedder) -> None:
    ids = await _namespaces(conn, "work")
    ns = Namespace(conn, embedder, ids["work"])
    old = await ns.add("FYI positions are stored in TimescaleDB, in the positions hypertable.", T0)
    nearer = await ns.add("Positions of moving devices are sampled every sprint review.", T0)
    new = await ns.add("Positions moved from Timescale to ClickHouse last sprint.", T0 + DAY)

    found = await find_supersede(conn, new, limit=1)

    by_id = {c.id: c.verdict.decision for c in found}
    assert by_id == {nearer: "none", old: "confident"}


async def test_a_namespace_at_the_size_is_walked_through_the_hnsw_index_whatever_the_statistics(
    conn: asyncpg.Connection, embedder: LocalEmbedder
) -> None:
    # The namespace was never analysed: the planner sees it empty, as right after a bulk import, and
    # without CANDIDATE_PLANNER it would answer the walk's ORDER BY by sorting the namespace.
    ns = Namespace(conn, embedder, (await _namespaces(conn, "work"))["work"])
    await ns.add("The API listens on port 8080.", T0)
    new = await ns.add("The API listens on port 9000.", T0 + DAY)
    query = SupersedeCandidatesOfMany(memory_ids=[new], gone_names=[None], exact_below=0, limit=5)
    async with conn.transaction():
        await conn.execute(CANDIDATE_PLANNER)
        plan = "\n".join(r[0] for r in await conn.fetch("EXPLAIN " + query.statement(), *query.values()))
        await conn.execute(PLANNER_RESTORED)
        assert await conn.fetchval("SHOW enable_sort") == "on"

    assert "memories_embedding_hnsw_idx" in plan
