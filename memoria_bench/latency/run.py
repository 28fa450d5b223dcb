"""One `memoria bench latency` run: load (or resume) the corpus, then measure scope by scope."""

from __future__ import annotations

import os
from typing import Any

from rich.console import Console

from app.db import create_database
from app.embeddings import Embedder
from app.recall.ef_search import ef_search_for
from app.recall.term_counts import TermCounts
from memoria_bench.config import BenchConfig
from memoria_bench.corpus import generate_memories, load_pool, make_queries
from memoria_bench.latency.bulk import bulk_store
from memoria_bench.latency.explain import explain_profile
from memoria_bench.latency.hnsw import hnsw_recall
from memoria_bench.latency.http import api_key, http_latency
from memoria_bench.latency.load import index_concepts, store_corpus
from memoria_bench.latency.options import LatencyOptions
from memoria_bench.latency.schedule import FUSED_MODES, WARMUP, QueryFeed
from memoria_bench.latency.scopes import live_counts, resolve_scopes
from memoria_bench.latency.server import served_api
from memoria_bench.latency.sql import sql_latency, warm_caches
from memoria_bench.latency.targets import ratios_to_lexical, target_checks
from memoria_bench.scratch import bench_user

# What a corpus of this size takes on disk (bytes): the table with its TOAST, and its two big indexes.
SIZES = """
SELECT pg_table_size('memories') AS table_bytes,
       pg_relation_size('memories_embedding_hnsw_idx') AS hnsw_bytes,
       pg_relation_size('memories_search_idx') AS text_index_bytes
"""

# The table's size as the planner estimates it, which `ScopeSizes` reads for the service.
TABLE_ROWS_ESTIMATE = "SELECT greatest(reltuples, 0)::bigint FROM pg_class WHERE oid = 'memories'::regclass"


async def bench_latency(
    url: str, config: BenchConfig, embedder: Embedder, options: LatencyOptions, console: Console
) -> dict[str, Any]:
    """The whole report: every scope's SQL, embedding, EXPLAIN and HNSW figures in this process,
    then HTTP against a `memoria serve` process; progress goes to `console`."""
    loadavg_start = os.getloadavg()
    await embedder.load()
    pool_of = load_pool(options.sentences)
    user = f"latency-{options.memories}x{options.namespaces}"
    user_id = await bench_user(url, user)
    db = await create_database(url, config.database)
    report: dict[str, Any] = {"corpus": {"memories": options.memories, "user": user}}
    try:
        console.print(f"generating {options.memories:,} memories from {options.sentences}")
        memories = list(generate_memories(pool_of, options.memories, options.namespaces))
        load = bulk_store if options.bulk else store_corpus
        report["load"] = await load(db, embedder, config.memories, user_id, memories, console)
        # the lexical leg's term counts, as the workers keep them after each store
        report["corpus"]["term_counted_now"] = await TermCounts(db.write).count_pending()
        await db.write.execute("ANALYZE term_counts, namespace_terms")
        if options.concepts:
            report["graph"] = await index_concepts(db, embedder, config, user_id, console)
        report["corpus"]["concept_links"] = await db.write.fetchval("SELECT count(*) FROM memory_concepts")
        report["corpus"]["namespaces"] = await live_counts(db.write, user_id)
        report["corpus"]["table_rows"] = await db.write.fetchval("SELECT count(*) FROM memories")
        report["corpus"]["sizes"] = dict(await db.write.fetchrow(SIZES) or {})
        shared_buffers = await db.write.fetchval("SHOW shared_buffers")  # decides the p95 at a million
        # the candidate list the service walks this table with: it grows with the planner's estimate
        ef_search = ef_search_for(await db.write.fetchval(TABLE_ROWS_ESTIMATE), config.recall)
        scopes = await resolve_scopes(
            db.write, user_id, options.namespaces, options.mid_scope, options.whole_scope
        )
        http_texts = (WARMUP + options.requests) * len(FUSED_MODES)
        timed = WARMUP + options.requests + http_texts * len(options.concurrency) + options.hnsw_queries
        per_scope = options.cache_warmup + timed
        feed = QueryFeed(make_queries(pool_of, per_scope * len(scopes)))
        rows: list[dict[str, Any]] = []
        explains: dict[str, Any] = {}
        hnsw: list[dict[str, Any]] = []
        for scope in scopes:
            console.print(f"{scope.label} scope: warming the caches with {options.cache_warmup} recalls")
            await warm_caches(db, embedder, config, user_id, scope, feed.take(options.cache_warmup))
            console.print(
                f"{scope.label} scope: {scope.namespace} ({scope.rows:,} memories): recall SQL alone"
            )
            sql = await sql_latency(
                url, config, embedder, user_id, scope, feed.take(WARMUP + options.requests)
            )
            for mode, stats in sql["stats"].items():
                rows.append({"path": "sql", "scope": scope.label, "concurrency": 1, "mode": mode, **stats})
            rows.append(
                {"path": "embed", "scope": scope.label, "concurrency": 1, "mode": "query", **sql["embed"]}
            )
            for mode, (ms, args, text) in sql["slowest"].items():
                profile = await explain_profile(url, config.recall, sql["sampled"][mode], args, ef_search)
                profile["slowest"].update(query=text, timed_ms=round(ms, 2))
                explains[f"{scope.label}/{mode}"] = profile
            console.print(f"{scope.label} scope: HNSW recall@10 over {options.hnsw_queries} queries")
            hnsw.append(
                {"scope": scope.label, "namespace": scope.namespace, "rows": scope.rows,
                 **await hnsw_recall(db, embedder, config, user_id, scope, feed.take(options.hnsw_queries))}
            )  # fmt: skip
        key = await api_key(url, user)
        async with served_api(url) as base:
            for scope in scopes:
                for concurrency in options.concurrency:
                    console.print(f"{scope.label} scope: HTTP at concurrency {concurrency}")
                    texts = feed.take(http_texts)
                    for mode, stats in (await http_latency(base, key, scope, concurrency, texts)).items():
                        rows.append(
                            {
                                "path": "http",
                                "scope": scope.label,
                                "concurrency": concurrency,
                                "mode": mode,
                                **stats,
                            }
                        )
    finally:
        await db.close()
    report.update(
        settings={**config.recall.model_dump(), "ef_search_used": ef_search},
        scopes=[
            {"label": s.label, "namespace": s.namespace, "namespaces": len(s.namespace_ids), "rows": s.rows}
            for s in scopes
        ],
        latency=rows,
        ratios=ratios_to_lexical(rows),
        hnsw=hnsw,
        explain=explains,
        machine={
            "cpus": os.cpu_count(),
            "loadavg_start": loadavg_start,
            "loadavg_end": os.getloadavg(),
            "shared_buffers": shared_buffers,
        },
    )
    report["targets"] = target_checks(report)
    return report
