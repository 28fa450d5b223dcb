"""The hand-written migration builds, tears down and rebuilds the schema cleanly."""

from __future__ import annotations

import asyncpg
import pytest

from app.auth.service import create_user
from app.db.migrate import current_revision, downgrade_to, head_revision, upgrade_to_head
from app.db.schema_check import SchemaMismatch, check_embedding_dimension

EXPECTED_TABLES = {
    "memoria_meta",
    "users",
    "api_keys",
    "namespaces",
    "memories",
    "concepts",
    "concept_edges",
    "memory_concepts",
}


async def _tables(url: str) -> set[str]:
    conn = await asyncpg.connect(url)
    try:
        rows = await conn.fetch("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        return {r["tablename"] for r in rows}
    finally:
        await conn.close()


async def test_upgrade_downgrade_upgrade_round_trip(fresh_database: str) -> None:
    upgrade_to_head(fresh_database, 384)
    assert current_revision(fresh_database) == head_revision()
    assert await _tables(fresh_database) >= EXPECTED_TABLES

    downgrade_to(fresh_database, "base")
    assert current_revision(fresh_database) is None
    assert (await _tables(fresh_database)) & EXPECTED_TABLES == set()

    upgrade_to_head(fresh_database, 1024)
    conn = await asyncpg.connect(fresh_database)
    try:
        column = await conn.fetchval(
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
            "WHERE attrelid = 'memories'::regclass AND attname = 'embedding'"
        )
        assert column == "halfvec(1024)"
        assert (
            await conn.fetchval("SELECT value FROM memoria_meta WHERE key = 'embedding_dimension'") == "1024"
        )
    finally:
        await conn.close()


async def test_hot_path_indexes_exist(conn: asyncpg.Connection) -> None:
    indexes = {
        r["indexname"]: r["indexdef"]
        for r in await conn.fetch("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'memories'")
    }
    hnsw = indexes["memories_embedding_hnsw_idx"]
    assert "USING hnsw (embedding halfvec_cosine_ops)" in hnsw
    assert "m='16'" in hnsw and "ef_construction='128'" in hnsw
    assert "USING gin (search_vector)" in indexes["memories_search_idx"]
    assert "(namespace_id, created_at DESC, id DESC)" in indexes["memories_ns_created_idx"]
    assert "UNIQUE" in indexes["memories_ns_hash_live_idx"]
    valid = await conn.fetchval(
        "SELECT indisvalid FROM pg_index WHERE indexrelid = 'memories_embedding_hnsw_idx'::regclass"
    )
    assert valid is True


async def test_service_refuses_an_embedder_of_another_width(db_url: str) -> None:
    pool = await asyncpg.create_pool(db_url, min_size=1, max_size=1)
    try:
        await check_embedding_dimension(pool, "all-MiniLM-L6-v2", 384)
        with pytest.raises(SchemaMismatch, match="stores 384-dimensional embeddings.*produces 1024"):
            await check_embedding_dimension(pool, "voyage-3.5", 1024)
    finally:
        await pool.close()


async def test_unmigrated_database_is_refused_with_a_hint(fresh_database: str) -> None:
    pool = await asyncpg.create_pool(fresh_database, min_size=1, max_size=1)
    try:
        with pytest.raises(SchemaMismatch, match="memoria migrate"):
            await check_embedding_dimension(pool, "all-MiniLM-L6-v2", 384)
    finally:
        await pool.close()


async def test_each_edge_end_leads_an_unconditional_index_so_deleting_a_concept_reads_no_edge_table(
    conn: asyncpg.Connection,
) -> None:
    """`ON DELETE CASCADE` from `concepts` looks edges up by `source_id` and by `target_id`; a partial
    index cannot serve that lookup, and without one every deleted concept scans `concept_edges`."""
    rows = await conn.fetch(
        """
        SELECT a.attname AS leading, i.indpred IS NULL AS unconditional
        FROM pg_index i
        JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
        WHERE i.indrelid = 'concept_edges'::regclass
        """
    )
    leading = {r["leading"] for r in rows if r["unconditional"]}
    assert {"source_id", "target_id"} <= leading


async def test_the_graph_holds_no_column_that_nothing_writes(conn: asyncpg.Connection) -> None:
    columns = {
        (r["table_name"], r["column_name"])
        for r in await conn.fetch(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_name IN ('concept_edges', 'memory_concepts')"
        )
    }
    assert ("concept_edges", "valid_to") not in columns
    assert ("memory_concepts", "weight") not in columns


async def _scope_indexes(conn: asyncpg.Connection) -> set[str]:
    rows = await conn.fetch("SELECT indexname FROM pg_indexes WHERE indexname LIKE 'memories_scope_%'")
    return {r["indexname"] for r in rows}


async def _store_one(conn: asyncpg.Connection, dimension: int) -> None:
    user_id = await create_user(conn, "wide")
    namespace_id = await conn.fetchval(
        "INSERT INTO namespaces (user_id, name) VALUES ($1, 'wide') RETURNING id", user_id
    )
    vector = "[" + ",".join(["0.123"] * dimension) + "]"
    await conn.execute(
        "INSERT INTO memories (namespace_id, content, content_hash, embedding, embedding_model) "
        "VALUES ($1, 'a wide vector', sha256('a wide vector'), $2::halfvec, 'voyage-3.5')",
        namespace_id,
        vector,
    )


async def test_a_voyage_width_vector_fits_the_scope_vectors_index(fresh_database: str) -> None:
    upgrade_to_head(fresh_database, 1024)
    conn = await asyncpg.connect(fresh_database)
    try:
        assert await _scope_indexes(conn) == {"memories_scope_vectors_idx", "memories_scope_search_idx"}
        await _store_one(conn, 1024)  # a btree entry holds ~2.7 KB; this one is ~2.1 KB
    finally:
        await conn.close()


async def test_wider_vectors_than_a_btree_entry_holds_get_no_scope_vectors_index(fresh_database: str) -> None:
    upgrade_to_head(fresh_database, 1536)
    conn = await asyncpg.connect(fresh_database)
    try:
        assert await _scope_indexes(conn) == {"memories_scope_search_idx"}
        await _store_one(conn, 1536)
    finally:
        await conn.close()


async def test_an_interrupted_hnsw_rebuild_is_built_again_not_put_in_place(fresh_database: str) -> None:
    upgrade_to_head(fresh_database, 384)
    downgrade_to(fresh_database, "0011")
    conn = await asyncpg.connect(fresh_database)
    try:
        # what a CREATE INDEX CONCURRENTLY cut off midway leaves: an index marked invalid
        await conn.execute(
            "CREATE INDEX memories_embedding_hnsw_next ON memories USING hnsw (embedding halfvec_cosine_ops)"
        )
        await conn.execute(
            "UPDATE pg_index SET indisvalid = false "
            "WHERE indexrelid = 'memories_embedding_hnsw_next'::regclass"
        )
        upgrade_to_head(fresh_database, 384)
        row = await conn.fetchrow(
            "SELECT i.indisvalid, pg_get_indexdef(i.indexrelid) AS definition FROM pg_index i "
            "WHERE i.indexrelid = 'memories_embedding_hnsw_idx'::regclass"
        )
    finally:
        await conn.close()
    assert row is not None and row["indisvalid"] is True
    assert "ef_construction='128'" in row["definition"]
