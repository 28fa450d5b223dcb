# ruff: noqa: E501, S108 - SQL reads best on one line; the /tmp defaults are scratch paths, all overridable
"""Per-tenant dense recall on one table against partitioned tables, and HNSW build cost per million.

Why a script and not a migration: the service keeps one `memories` table with one HNSW index (and
the per-namespace vectors index of migration 0011 for small scopes). Whether partitioning by
namespace would serve a tenant's recall better is a question for a scratch database, answered here
before anyone writes a migration (docs/operate/scaling.md has the figures and the plan).

What it does, on an embedded server of its own (`--data-dir`, port-free: a Unix socket):

- `embed`: embeds `--sentences` persona statements as documents and `--queries` others as queries
  with the service's local model, cached in `--cache` (an .npz). Memories are sums of one to three
  statements' vectors, normalised: the latency bench builds its corpus from one to three statements
  too, and real vectors keep HNSW's behaviour realistic; embedding 300k texts here would take an
  hour of both cores.
- `load`: three tables of the same rows (namespace_id, halfvec) spread over `--tenants` tenants by
  a 1/rank law (the largest holds ~19% of the rows, the smallest ~0.2%): `single` (one HNSW, the
  service's btree (namespace) INCLUDE (embedding) for exact scans), `by_list` (one partition per
  tenant, an HNSW in each), `by_hash` (`--hash-partitions` partitions by hash of the tenant, an HNSW
  in each). Times each HNSW build (m 16, ef_construction 128, as migration 0012) with
  `maintenance_work_mem` and one parallel worker as `memoria bench latency --bulk` builds it, and
  reads the building backend's peak RSS (VmHWM). The table first holds `--first` rows (built and
  timed), then all of them (built again from scratch and timed).
- `time`: per-tenant top-10 dense queries at c=1 on the largest, a middle and the smallest tenant:
  the single table's HNSW walk (filtered, iterative scan, the ef_search the service would use), its
  exact scan (the service's path for small scopes), and the partitions' HNSW. recall@10 against
  exact top-10 computed in numpy from the same float16 vectors.

Run `embed` and `load` under /work/shared/tools/heavy and `time` under /work/shared/tools/quiet.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import platform
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from pgvector import HalfVector
from pgvector.psycopg import register_vector

from app.db.embedded import start_server
from app.recall.ef_search import ef_search_for
from app.recall.settings import RecallSettings

DIM = 384
HNSW = "USING hnsw (embedding halfvec_cosine_ops) WITH (m = 16, ef_construction = 128)"
MAINTENANCE_WORK_MEM = "2GB"  # as memoria_bench/latency/bulk.py builds the index
SEED = 39


def log(msg: str) -> None:
    print(f"{datetime.now(UTC):%H:%M:%S} {msg}", flush=True)


def embed(args: argparse.Namespace) -> None:
    from app.embeddings.factory import build_embedder
    from app.embeddings.settings import EmbeddingSettings

    lines = [s for s in Path(args.sentences).read_text().splitlines() if s.strip()]
    rng = np.random.default_rng(SEED)
    order = rng.permutation(len(lines))
    docs = [lines[i] for i in order[: args.n_sentences]]
    queries = [lines[i] for i in order[args.n_sentences : args.n_sentences + args.queries]]
    embedder = build_embedder(EmbeddingSettings())

    async def run() -> tuple[np.ndarray, np.ndarray]:
        await embedder.load()  # type: ignore[attr-defined]
        out: list[Any] = []
        began = time.perf_counter()
        for start in range(0, len(docs), 512):
            batch = docs[start : start + 512]
            half = -(-len(batch) // 2)
            parts = await asyncio.gather(
                embedder.embed_documents(batch[:half]), embedder.embed_documents(batch[half:])
            )
            out.extend(v for p in parts for v in p)
            if start % 2048 == 0:
                log(f"embedded {len(out)} in {time.perf_counter() - began:.0f}s")
        q = [await embedder.embed_query(t) for t in queries]
        return np.asarray(out, dtype=np.float32), np.asarray(q, dtype=np.float32)

    d, q = asyncio.run(run())
    np.savez(args.cache, docs=d, queries=q, model=np.array(getattr(embedder, "model_id", "?")))
    log(f"saved {d.shape} docs and {q.shape} queries to {args.cache}")


def corpus(args: argparse.Namespace) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(tenant of each row, float16 vectors, query vectors), rows in insertion order."""
    cache = np.load(args.cache)
    docs, queries = cache["docs"], cache["queries"]
    rng = np.random.default_rng(SEED)
    n = args.rows
    pick = rng.integers(0, len(docs), size=(n, 3))
    count = rng.integers(1, 4, size=n)
    vecs = docs[pick[:, 0]].copy()
    vecs += docs[pick[:, 1]] * (count >= 2)[:, None]
    vecs += docs[pick[:, 2]] * (count >= 3)[:, None]
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    weights = 1.0 / np.arange(1, args.tenants + 1)
    sizes = np.floor(weights / weights.sum() * n).astype(int)
    sizes[0] += n - sizes.sum()
    tenants = np.repeat(np.arange(1, args.tenants + 1), sizes)
    rng.shuffle(tenants)  # every prefix of the table holds the tenants in the same proportions
    return tenants, vecs.astype(np.float16), queries


def connect(url: str) -> psycopg.Connection[Any]:
    conn = psycopg.connect(url, autocommit=True)
    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    register_vector(conn)
    return conn


def peak_rss_kb(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def build(url: str, sql: str, work_mem: str = MAINTENANCE_WORK_MEM) -> dict[str, Any]:
    """Run one CREATE INDEX in a fresh backend; seconds, the backend's peak RSS and its notices
    (pgvector says when the graph no longer fits in maintenance_work_mem)."""
    with connect(url) as conn:
        notices: list[str] = []
        conn.add_notice_handler(lambda d: notices.append(str(d.message_primary)))
        pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]  # type: ignore[index]
        conn.execute(f"SET maintenance_work_mem = '{work_mem}'")
        conn.execute("SET max_parallel_maintenance_workers = 1")
        began = time.perf_counter()
        conn.execute(sql)
        seconds = time.perf_counter() - began
        rss = peak_rss_kb(pid)
    return {
        "seconds": round(seconds, 1),
        "leader_peak_rss_mb": None if rss is None else round(rss / 1024),
        "maintenance_work_mem": work_mem,
        "notices": notices,
    }


def index_mb(conn: psycopg.Connection[Any], pattern: str) -> float:
    row = conn.execute(
        "SELECT coalesce(sum(pg_relation_size(c.oid)), 0) FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid "
        "JOIN pg_am a ON a.oid = c.relam WHERE a.amname = 'hnsw' AND c.relname LIKE %s",
        (pattern,),
    ).fetchone()
    return round(int(row[0]) / 2**20, 1)  # type: ignore[index]


def copy_rows(
    conn: psycopg.Connection[Any], table: str, tenants: np.ndarray, vecs: np.ndarray, start: int
) -> None:
    with conn.cursor().copy(
        f"COPY {table} (id, namespace_id, embedding) FROM STDIN WITH (FORMAT BINARY)"
    ) as cp:
        cp.set_types(["int8", "int8", "halfvec"])
        for i in range(len(tenants)):
            cp.write_row((start + i + 1, int(tenants[i]), HalfVector(vecs[i])))


def create_single(conn: psycopg.Connection[Any], table: str) -> None:
    conn.execute(
        f"CREATE TABLE {table} (id bigint PRIMARY KEY, namespace_id bigint NOT NULL, embedding halfvec({DIM}) NOT NULL)"
    )


def load(args: argparse.Namespace, url: str, out: dict[str, Any]) -> None:
    tenants, vecs, _ = corpus(args)
    conn = connect(url)
    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    conn.execute("DROP TABLE IF EXISTS small, single, by_list, by_hash")
    builds: dict[str, Any] = {}
    out["builds"] = builds
    first, n = args.first, len(tenants)
    for table, rows in (("small", first), ("single", n)):
        create_single(conn, table)
        began = time.perf_counter()
        copy_rows(conn, table, tenants[:rows], vecs[:rows], 0)
        log(f"copied {rows} rows into {table} in {time.perf_counter() - began:.0f}s")
        conn.execute(f"VACUUM ANALYZE {table}")
        builds[table] = build(url, f"CREATE INDEX {table}_hnsw ON {table} {HNSW}") | {
            "rows": rows,
            "index_mb": index_mb(conn, f"{table}_hnsw"),
        }
        log(f"HNSW on {table}: {builds[table]}")
        save(args, out)
        conn.execute(f"CREATE INDEX {table}_ns ON {table} (namespace_id) INCLUDE (id, embedding)")
        conn.execute(f"VACUUM ANALYZE {table}")
    conn.execute(
        f"CREATE TABLE by_list (id bigint NOT NULL, namespace_id bigint NOT NULL, embedding halfvec({DIM}) NOT NULL) "
        "PARTITION BY LIST (namespace_id)"
    )
    for t in range(1, args.tenants + 1):
        conn.execute(f"CREATE TABLE by_list_{t} PARTITION OF by_list FOR VALUES IN ({t})")
    conn.execute("INSERT INTO by_list SELECT * FROM single")
    conn.execute(
        f"CREATE TABLE by_hash (id bigint NOT NULL, namespace_id bigint NOT NULL, embedding halfvec({DIM}) NOT NULL) "
        "PARTITION BY HASH (namespace_id)"
    )
    for p in range(args.hash_partitions):
        conn.execute(
            f"CREATE TABLE by_hash_{p} PARTITION OF by_hash FOR VALUES WITH (MODULUS {args.hash_partitions}, REMAINDER {p})"
        )
    conn.execute("INSERT INTO by_hash SELECT * FROM single")
    conn.execute("VACUUM ANALYZE by_list")
    conn.execute("VACUUM ANALYZE by_hash")
    for table in ("by_list", "by_hash"):
        builds[table] = build(url, f"CREATE INDEX {table}_hnsw ON {table} {HNSW}") | {
            "rows": n,
            "index_mb": index_mb(conn, f"{table}_%"),
        }
        log(f"HNSW on {table}: {builds[table]}")
        save(args, out)
    conn.execute("CHECKPOINT")
    conn.close()


def pick_tenants(tenants: np.ndarray) -> dict[str, int]:
    ids, counts = np.unique(tenants, return_counts=True)
    order = ids[np.argsort(-counts, kind="stable")]
    return {"largest": int(order[0]), "middle": int(order[len(order) // 10]), "smallest": int(order[-1])}


SQL = {
    "small_hnsw": "SELECT id FROM small WHERE namespace_id + 0 = %s ORDER BY embedding <=> %s LIMIT 10",
    "small_exact": "SELECT id FROM small WHERE namespace_id = %s ORDER BY (embedding <=> %s) + 0 LIMIT 10",
    # the namespace test written so that no btree can serve it: the plan walks the HNSW index
    "single_hnsw": "SELECT id FROM single WHERE namespace_id + 0 = %s ORDER BY embedding <=> %s LIMIT 10",
    # the service's exact path for a small scope: index-only scan of the scope's vectors
    "single_exact": "SELECT id FROM single WHERE namespace_id = %s ORDER BY (embedding <=> %s) + 0 LIMIT 10",
    "by_list_hnsw": "SELECT id FROM by_list WHERE namespace_id = %s ORDER BY embedding <=> %s LIMIT 10",
    # the tenant's partition read whole: what a small tenant's partition costs without its index
    "by_list_exact": "SELECT id FROM by_list WHERE namespace_id = %s ORDER BY (embedding <=> %s) + 0 LIMIT 10",
    "by_hash_hnsw": "SELECT id FROM by_hash WHERE namespace_id = %s ORDER BY embedding <=> %s LIMIT 10",
}


def time_queries(
    args: argparse.Namespace,
    url: str,
    tenants: np.ndarray,
    vecs: np.ndarray,
    stage: int,
    tables: tuple[str, ...],
) -> dict[str, Any]:
    queries = np.load(args.cache)["queries"][: args.n_queries]
    q16 = queries.astype(np.float16)
    chosen = pick_tenants(tenants)
    ef = ef_search_for(stage, RecallSettings())
    result: dict[str, Any] = {
        "table_rows": stage,
        "ef_search": ef,
        "queries_per_cell": len(queries),
        "cells": {},
    }
    with connect(url) as conn:
        conn.execute(
            f"SET hnsw.ef_search = {ef}; SET hnsw.iterative_scan = relaxed_order; SET hnsw.max_scan_tuples = 20000; "
            "SET max_parallel_workers_per_gather = 0; SET jit = off"
        )
        for label, tenant in chosen.items():
            rows = np.flatnonzero(tenants == tenant)
            sims = (vecs[rows].astype(np.float32)) @ q16.astype(np.float32).T
            exact = [
                set((rows[np.argsort(-sims[:, j], kind="stable")[:10]] + 1).tolist())
                for j in range(len(queries))
            ]
            for name, sql in SQL.items():
                if not any(name.startswith(t) for t in tables):
                    continue
                # an *_hnsw cell measures the walk: no sequential scan instead
                conn.execute(f"SET enable_seqscan = {'off' if name.endswith('_hnsw') else 'on'}")
                plan = conn.execute("EXPLAIN (COSTS OFF) " + sql, (tenant, HalfVector(q16[0]))).fetchall()
                for j in range(min(20, len(queries))):  # warm the pages this tenant's walk reads
                    conn.execute(sql, (tenant, HalfVector(q16[j])), prepare=True).fetchall()
                times: list[float] = []
                recalls: list[float] = []
                for j in range(len(queries)):
                    began = time.perf_counter()
                    got = conn.execute(sql, (tenant, HalfVector(q16[j])), prepare=True).fetchall()
                    times.append((time.perf_counter() - began) * 1000)
                    recalls.append(len({r[0] for r in got} & exact[j]) / 10)
                times.sort()
                cell = {
                    "tenant": tenant,
                    "tenant_rows": len(rows),
                    "p50_ms": round(statistics.median(times), 2),
                    "p95_ms": round(times[math.ceil(0.95 * len(times)) - 1], 2),
                    "recall@10": round(float(np.mean(recalls)), 4),
                    "plan": " / ".join(r[0].strip() for r in plan if "Scan" in r[0])[:200],
                }
                result["cells"][f"{label}:{name}"] = cell
                log(f"{stage} {label} ({len(rows)}) {name}: {cell}")
    return result


def report(data: dict[str, Any]) -> str:
    """The markdown tables of a run's JSON (docs/benchmarks/reports/), written by this script only."""
    c = data["corpus"]
    lines = [
        f"### Per-tenant dense recall: one table or partitions, and HNSW build cost ({data['date']})",
        "",
        "Rendered by `python scripts/scale_partitions.py report` from the JSON the run wrote "
        "(same name, `.json`); not edited by hand.",
        "",
        "Commands (in order): " + "; ".join(f"`{x}`" for x in data["command"]) + ".",
        f"PostgreSQL {data['postgres']}, pgvector {data['pgvector'][0]}, {data['machine']['cpus']} CPUs "
        f"shared with other work, shared_buffers {c['shared_buffers']}. Corpus: {c['rows']:,} rows over "
        f"{c['tenants']} tenants ({c['distribution']}), vectors {c['vectors']}; HNSW {c['hnsw']}, "
        f"maintenance_work_mem {c['maintenance_work_mem']}, max_parallel_maintenance_workers "
        f"{c['max_parallel_maintenance_workers']}.",
        "",
        "#### HNSW builds",
        "",
        "| index | rows | maintenance_work_mem | build (s) | s per million rows | index (MB) | MB per million rows "
        "| leader peak RSS (MB) | notices |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, b in data["builds"].items():
        per = 1e6 / b["rows"]
        notices = ("; ".join(b["notices"]) or "none") if "notices" in b else "not recorded"
        lines.append(
            f"| {name} | {b['rows']:,} | {b.get('maintenance_work_mem', c['maintenance_work_mem'])} | {b['seconds']} | "
            f"{b['seconds'] * per:,.0f} | {b['index_mb']} | {b['index_mb'] * per:,.0f} | {b['leader_peak_rss_mb']} | "
            f"{notices} |"
        )
    for key in ("timing_small", "timing"):
        t = data.get(key)
        if not t:
            continue
        lines += [
            "",
            f"#### Top-10 dense queries per tenant, table of {t['table_rows']:,} rows (c=1, ef_search "
            f"{t['ef_search']}, {t['queries_per_cell']} queries a cell)",
            "",
            "| tenant | tenant rows | path | p50 (ms) | p95 (ms) | recall@10 | plan |",
            "|---|---|---|---|---|---|---|",
        ]
        for cell_name, cell in t["cells"].items():
            label, path = cell_name.split(":")
            lines.append(
                f"| {label} | {cell['tenant_rows']:,} | {path} | {cell['p50_ms']} | {cell['p95_ms']} | "
                f"{cell['recall@10']} | {cell['plan'].replace('->', '').strip()} |"
            )
        if "load_average_before" in t:
            lines += [
                "",
                f"Load average before / after: {t['load_average_before']} / {t['load_average_after']}.",
            ]
    return "\n".join(lines) + "\n"


def save(args: argparse.Namespace, out: dict[str, Any]) -> None:
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("phase", choices=("embed", "load", "time", "small-memory", "report"))
    p.add_argument("--small-memory", default="128MB", help="maintenance_work_mem of the small-memory build")
    p.add_argument("--data-dir", default="/tmp/scale-pg/pgdata")
    p.add_argument("--cache", default="/tmp/scale-vectors.npz")
    p.add_argument("--sentences", default="/work/shared/bench/persona-sentences/sentences.txt")
    p.add_argument("--n-sentences", type=int, default=30000)
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--n-queries", type=int, default=100)
    p.add_argument("--rows", type=int, default=300_000)
    p.add_argument("--first", type=int, default=100_000)
    p.add_argument("--tenants", type=int, default=100)
    p.add_argument("--hash-partitions", type=int, default=16)
    p.add_argument("--shared-buffers", default="3GB")
    p.add_argument("--out", default="/tmp/scale-partitions.json")
    args = p.parse_args()
    if args.phase == "embed":
        embed(args)
        return
    if args.phase == "report":
        data = json.loads(Path(args.out).read_text())
        Path(args.out).with_suffix(".md").write_text(report(data))
        return
    out: dict[str, Any] = json.loads(Path(args.out).read_text()) if Path(args.out).exists() else {}
    out.setdefault("command", [])
    out["command"].append(" ".join(["python scripts/scale_partitions.py", *sys.argv[1:]]))
    out["date"] = f"{datetime.now(UTC):%Y-%m-%d}"
    out["machine"] = {"cpus": __import__("os").cpu_count(), "platform": platform.platform()}
    out["corpus"] = {
        "rows": args.rows, "tenants": args.tenants, "distribution": "1/rank", "hash_partitions": args.hash_partitions,
        "vectors": f"sums of 1-3 of {args.n_sentences} persona statements' vectors (local model), normalised",
        "maintenance_work_mem": MAINTENANCE_WORK_MEM, "max_parallel_maintenance_workers": 1,
        "hnsw": "m 16, ef_construction 128", "shared_buffers": args.shared_buffers,
    }  # fmt: skip
    Path(args.data_dir).parent.mkdir(parents=True, exist_ok=True)
    server = start_server(Path(args.data_dir), args.shared_buffers)
    try:
        url = server.get_uri()
        with connect(url) as conn:
            out["postgres"] = conn.execute("SHOW server_version").fetchone()[0]  # type: ignore[index]
            out["pgvector"] = conn.execute(
                "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
            ).fetchone()
        if args.phase == "load":
            load(args, url, out)
        elif args.phase == "small-memory":  # the same 300k build again with less maintenance_work_mem
            sql = f"CREATE INDEX single_hnsw_small_memory ON single {HNSW}"
            out["builds"]["single_small_memory"] = build(url, sql, args.small_memory) | {"rows": args.rows}
            with connect(url) as conn:
                out["builds"]["single_small_memory"]["index_mb"] = index_mb(conn, "single_hnsw_small_memory")
                conn.execute("DROP INDEX single_hnsw_small_memory")
            log(f"small-memory build: {out['builds']['single_small_memory']}")
        else:
            load_avg = Path("/proc/loadavg").read_text().split()[:3]
            tenants, vecs, _ = corpus(args)
            first = args.first
            out["timing_small"] = time_queries(args, url, tenants[:first], vecs[:first], first, ("small",))
            out["timing"] = time_queries(
                args, url, tenants, vecs, len(tenants), ("single", "by_list", "by_hash")
            )
            out["timing"]["load_average_before"] = load_avg
            out["timing"]["load_average_after"] = Path("/proc/loadavg").read_text().split()[:3]
        save(args, out)
    finally:
        server.cleanup()
    subprocess.run(["true"], check=False)


if __name__ == "__main__":
    main()
