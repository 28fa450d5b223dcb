"""Move every memory to another embedding model (and width) without losing data or serving gaps.

Plan: add side columns (`embedding_next halfvec(D')`, its model and the content hash it was
computed from), fill them in id-ordered batches, build mirrors of the indexes that use the
embedding columns CONCURRENTLY, then swap in one short transaction: drop the old columns, rename
the new ones and their indexes, record D' and the model in `memoria_meta`. A run that stops is
resumed by the next one (same target), which only embeds rows whose side vector is missing or
stale. Rows the live service inserts or edits meanwhile are caught up before the swap; the few
that race the swap lock are embedded right after it by a backfill pass.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import anyio
import asyncpg

from app.embeddings.backfill import backfill
from app.embeddings.inputs import NO_CONTEXT, TurnContext
from app.embeddings.jobs import (
    JobError,
    Progress,
    embed_pending,
    read_meta,
    recorded_dimension,
    updated_count,
    write_meta,
)
from app.embeddings.sensitive import SensitiveRouter

SIDE, SIDE_MODEL, SIDE_HASH = "embedding_next", "embedding_model_next", "embedding_next_hash"
TARGET_KEY = "reembed_target"
ADVISORY_LOCK = 0x6D656D6F72696101  # one reembed per database at a time

# Expected model per row: $1 for ordinary rows, $2 (NULL: must stay unembedded) for sensitive ones.
_EXPECTED = "(CASE WHEN is_sensitive THEN $2::text ELSE $1::text END)"
COUNT_WRONG_MODEL = f"""
SELECT count(*) FROM memories
WHERE deleted_at IS NULL AND embedding_model IS NOT NULL AND embedding_model IS DISTINCT FROM {_EXPECTED}
"""
COPY_SAME_MODEL = f"""
UPDATE memories SET {SIDE} = embedding, {SIDE_MODEL} = embedding_model, {SIDE_HASH} = content_hash
WHERE id > $3 AND id <= $4 AND {SIDE} IS NULL AND embedding IS NOT NULL AND embedding_model = {_EXPECTED}
"""
_TODO = f"""
FROM memories
WHERE deleted_at IS NULL AND (NOT is_sensitive OR $1)
  AND ({SIDE} IS NULL OR {SIDE_HASH} IS DISTINCT FROM content_hash)
"""
COUNT_TODO = "SELECT count(*) " + _TODO
NEXT_TODO = "SELECT id " + _TODO + " AND id > $2 ORDER BY id LIMIT $3"
WRITE_SIDE = f"""
UPDATE memories SET {SIDE} = $2, {SIDE_MODEL} = $3, {SIDE_HASH} = $4 WHERE id = $1 AND content_hash = $4
"""
SCOPE_VECTORS_INDEX = "memories_scope_vectors_idx"
# Migration 0011's definition of it. A database on a model too wide for it has none: a re-embed to a
# width that fits builds it again (tests/test_embeddings_commands.py holds the two definitions equal).
SCOPE_VECTORS_DEFINITION = (
    f"CREATE INDEX {SCOPE_VECTORS_INDEX} ON memories USING btree (namespace_id) "
    "INCLUDE (id, is_sensitive, embedding_model, embedding) "
    "WHERE ((deleted_at IS NULL) AND (embedding IS NOT NULL))"
)
BTREE_VECTOR_INDEXES = frozenset({SCOPE_VECTORS_INDEX})
MAX_BTREE_VECTOR_DIMENSION = 1024
INDEXES_ON = """
SELECT DISTINCT c.relname AS name, pg_get_indexdef(i.indexrelid) AS definition
FROM pg_index i
JOIN pg_class c ON c.oid = i.indexrelid
JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = i.indexrelid
                AND d.refclassid = 'pg_class'::regclass AND d.refobjid = i.indrelid
JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = d.refobjsubid
WHERE i.indrelid = 'memories'::regclass AND a.attname = ANY($1::text[])
ORDER BY 1
"""
COLUMN_TYPE = """
SELECT format_type(atttypid, atttypmod) FROM pg_attribute
WHERE attrelid = 'memories'::regclass AND attname = $1 AND NOT attisdropped
"""
OTHER_VECTOR_COLUMNS = """
SELECT c.relname AS rel, a.attname AS col
FROM pg_attribute a
JOIN pg_class c ON c.oid = a.attrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND c.relname <> 'memories'
  AND a.attnum > 0 AND NOT a.attisdropped AND format_type(a.atttypid, a.atttypmod) = $1
ORDER BY 1, 2
"""


@dataclass(frozen=True, slots=True)
class ReembedOptions:
    batch_size: int = 128
    copy_chunk: int = 10_000
    context: TurnContext = NO_CONTEXT
    """What captured turns are embedded with: the service's setting, so that the new vectors are the
    ones the service writes (app.embeddings.inputs)."""
    lock_timeout_s: float = 5.0
    swap_attempts: int = 5


@dataclass(slots=True)
class ReembedReport:
    model: str
    dimension: int
    nothing_to_do: bool = False
    copied: int = 0
    embedded: int = 0
    raced_swap: int = 0
    cleared_columns: list[str] = field(default_factory=list)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def mirror_name(index: str) -> str:
    return f"{index[:58]}_next"


def mirror_definition(definition: str, mirror: str) -> str:
    """The CREATE INDEX of `definition` over the side columns, named `mirror`, built CONCURRENTLY."""
    match = re.fullmatch(r"CREATE (UNIQUE )?INDEX \S+ ON (.*)", definition, re.DOTALL)
    if match is None:
        raise JobError(f"cannot mirror index definition: {definition}")
    body = re.sub(r"\bembedding_model\b", SIDE_MODEL, match[2])
    body = re.sub(r"\bembedding\b", SIDE, body)
    return f"CREATE {match[1] or ''}INDEX CONCURRENTLY IF NOT EXISTS {_quote(mirror)} ON {body}"


async def reembed(
    conn: asyncpg.Connection, router: SensitiveRouter, *, options: ReembedOptions, progress: Progress
) -> ReembedReport:
    """Re-embed every memory with `router` (already loaded). Needs a direct, non-pooled connection."""
    if not await conn.fetchval("SELECT pg_try_advisory_lock($1)", ADVISORY_LOCK):
        raise JobError("another `memoria embeddings reembed` is running against this database")
    try:
        return await _reembed(conn, router, options, progress)
    finally:
        await conn.execute("SELECT pg_advisory_unlock($1)", ADVISORY_LOCK)


async def _reembed(
    conn: asyncpg.Connection, router: SensitiveRouter, options: ReembedOptions, progress: Progress
) -> ReembedReport:
    report = ReembedReport(model=router.model_id, dimension=router.dimension)
    current = await recorded_dimension(conn)
    previous_model = await read_meta(conn, "embedding_model")
    expected = (router.model_id, router.sensitive_model_id)
    if current == router.dimension and not await conn.fetchval(COUNT_WRONG_MODEL, *expected):
        if await conn.fetchval(COLUMN_TYPE, SIDE) is not None:
            await _drop_side(conn, options)
        await write_meta(conn, "embedding_model", router.model_id)
        report.nothing_to_do = True
        report.embedded = (
            await backfill(
                conn, router, batch_size=options.batch_size, progress=progress, context=options.context
            )
        ).embedded
        return report

    await _prepare_side(conn, router, options)
    if current == router.dimension:
        report.copied = await _copy_same_model(conn, router, options)
    report.embedded = await _fill(conn, router, options, progress, "embed")
    await _mirror_indexes(conn, router.dimension)
    report.embedded += await _fill(conn, router, options, progress, "catch up")
    await _mirror_indexes(conn, router.dimension)  # an index added meanwhile gets its mirror too
    # Other vectors (the concept graph's) are of the old model: keep them only when nothing changed.
    reset_others = current != router.dimension or previous_model != router.model_id
    report.raced_swap, report.cleared_columns = await _swap(conn, router, current, reset_others, options)
    report.embedded += (
        await backfill(
            conn, router, batch_size=options.batch_size, progress=progress, context=options.context
        )
    ).embedded
    return report


def _target(router: SensitiveRouter) -> str:
    return f"{router.model_id}|{router.dimension}|{router.sensitive_model_id or ''}"


async def _set_lock_timeout(conn: asyncpg.Connection, options: ReembedOptions) -> None:
    """DDL on `memories` queues behind long transactions; never stall the service for long."""
    await conn.execute(f"SET LOCAL lock_timeout = '{int(options.lock_timeout_s * 1000)}ms'")


async def _drop_side(conn: asyncpg.Connection, options: ReembedOptions) -> None:
    """Remove what an abandoned run (or one for another target) left; its indexes go with it."""
    async with conn.transaction():
        await _set_lock_timeout(conn, options)
        await conn.execute(
            f"ALTER TABLE memories DROP COLUMN IF EXISTS {SIDE}, DROP COLUMN IF EXISTS {SIDE_MODEL}, "
            f"DROP COLUMN IF EXISTS {SIDE_HASH}"
        )
        await conn.execute("DELETE FROM memoria_meta WHERE key = $1", TARGET_KEY)


async def _prepare_side(conn: asyncpg.Connection, router: SensitiveRouter, options: ReembedOptions) -> None:
    column = await conn.fetchval(COLUMN_TYPE, SIDE)
    resumable = column == f"halfvec({router.dimension})" and await read_meta(conn, TARGET_KEY) == _target(
        router
    )
    if column is not None and not resumable:
        await _drop_side(conn, options)
    async with conn.transaction():
        await _set_lock_timeout(conn, options)
        await conn.execute(
            f"ALTER TABLE memories ADD COLUMN IF NOT EXISTS {SIDE} halfvec({router.dimension:d}), "
            f"ADD COLUMN IF NOT EXISTS {SIDE_MODEL} text, ADD COLUMN IF NOT EXISTS {SIDE_HASH} bytea"
        )
        await write_meta(conn, TARGET_KEY, _target(router))


async def _copy_same_model(conn: asyncpg.Connection, router: SensitiveRouter, options: ReembedOptions) -> int:
    """Same width: rows already embedded by the target model keep their vectors (no API calls)."""
    top = int(await conn.fetchval("SELECT coalesce(max(id), 0) FROM memories"))
    copied = 0
    for low in range(0, top, options.copy_chunk):
        status = await conn.execute(
            COPY_SAME_MODEL, router.model_id, router.sensitive_model_id, low, low + options.copy_chunk
        )
        copied += updated_count(status)
    return copied


async def _fill(
    conn: asyncpg.Connection, router: SensitiveRouter, options: ReembedOptions, progress: Progress, phase: str
) -> int:
    return await embed_pending(
        conn,
        router,
        count_sql=COUNT_TODO,
        next_sql=NEXT_TODO,
        write_sql=WRITE_SIDE,
        batch_size=options.batch_size,
        progress=progress,
        phase=phase,
        context=options.context,
    )


def holds_width(index: str, dimension: int) -> bool:
    """Whether `index` can hold vectors of `dimension`: a btree entry holds about 2.7 KB, so the
    per-namespace vectors index (migration 0011) is made only up to 1,024 dimensions."""
    return index not in BTREE_VECTOR_INDEXES or dimension <= MAX_BTREE_VECTOR_DIMENSION


async def _indexes_to_keep(conn: asyncpg.Connection, dimension: int) -> dict[str, str]:
    """Name → definition of the indexes on the embedding columns after the swap: those there now
    that can hold the new width (one that cannot goes with the old column), and the scope vectors
    index when the new width fits it and a wider model had left the database without it."""
    indexes = {
        row["name"]: row["definition"]
        for row in await conn.fetch(INDEXES_ON, ["embedding", "embedding_model"])
        if holds_width(row["name"], dimension)
    }
    if holds_width(SCOPE_VECTORS_INDEX, dimension):
        indexes.setdefault(SCOPE_VECTORS_INDEX, SCOPE_VECTORS_DEFINITION)
    return indexes


async def _mirror_indexes(conn: asyncpg.Connection, dimension: int) -> None:
    """Build (or finish) the side columns' copies of the indexes the swap keeps."""
    for name, definition in (await _indexes_to_keep(conn, dimension)).items():
        mirror = mirror_name(name)
        valid = await conn.fetchval(
            "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "WHERE c.relname = $1 AND i.indrelid = 'memories'::regclass",
            mirror,
        )
        if valid is False:  # a CONCURRENTLY build that was interrupted leaves an invalid index
            await conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {_quote(mirror)}")
        if valid is not True:
            await conn.execute(mirror_definition(definition, mirror))


async def _swap(
    conn: asyncpg.Connection,
    router: SensitiveRouter,
    current: int,
    reset_others: bool,
    options: ReembedOptions,
) -> tuple[int, list[str]]:
    for attempt in range(options.swap_attempts):
        try:
            async with conn.transaction():
                return await _swap_once(conn, router, current, reset_others, options)
        except asyncpg.LockNotAvailableError:
            if attempt + 1 == options.swap_attempts:
                break
            await anyio.sleep(min(2.0**attempt, 10.0))
    raise JobError(
        "could not lock `memories` for the swap (long transactions?); everything is prepared: re-run"
    )


async def _swap_once(
    conn: asyncpg.Connection,
    router: SensitiveRouter,
    current: int,
    reset_others: bool,
    options: ReembedOptions,
) -> tuple[int, list[str]]:
    await _set_lock_timeout(conn, options)
    await conn.execute("LOCK TABLE memories IN ACCESS EXCLUSIVE MODE")
    # Edited since their side vector was computed: leave them NULL for the backfill pass.
    raced = updated_count(
        await conn.execute(
            f"UPDATE memories SET {SIDE} = NULL, {SIDE_MODEL} = NULL "
            f"WHERE {SIDE} IS NOT NULL AND {SIDE_HASH} IS DISTINCT FROM content_hash"
        )
    )
    kept = await _indexes_to_keep(conn, router.dimension)
    await conn.execute(
        f"ALTER TABLE memories DROP COLUMN embedding, DROP COLUMN embedding_model, DROP COLUMN {SIDE_HASH}"
    )
    await conn.execute(f"ALTER TABLE memories RENAME COLUMN {SIDE} TO embedding")
    await conn.execute(f"ALTER TABLE memories RENAME COLUMN {SIDE_MODEL} TO embedding_model")
    for name in kept:
        await conn.execute(f"ALTER INDEX {_quote(mirror_name(name))} RENAME TO {_quote(name)}")
    cleared: list[str] = []
    if reset_others:
        # Vectors of the old model elsewhere (concepts.embedding) are meaningless now: reset them
        # to NULL at the new width (`memoria graph rebuild` recomputes them).
        for row in await conn.fetch(OTHER_VECTOR_COLUMNS, f"halfvec({current})"):
            await conn.execute(
                f"ALTER TABLE {_quote(row['rel'])} ALTER COLUMN {_quote(row['col'])} "
                f"TYPE halfvec({router.dimension:d}) USING NULL"
            )
            cleared.append(f"{row['rel']}.{row['col']}")
    await write_meta(conn, "embedding_dimension", str(router.dimension))
    await write_meta(conn, "embedding_model", router.model_id)
    await conn.execute("DELETE FROM memoria_meta WHERE key = $1", TARGET_KEY)
    return raced, cleared
