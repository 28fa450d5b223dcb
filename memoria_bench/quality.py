"""`memoria bench quality`: recall quality on a LoCoMo-format folder, through the real store and recall.

Systems are recall modes (`memoria_bench.modes`), not copies of the SQL: request leg weights that switch
legs off with a weight of 0, and `all`, the configured defaults. A `--graph-weights` sweep adds
`all@graph=<w>` systems, each compared with `lexical+dense`. Every run also scores `all` with
shape-aware fusion switched the other way than configured (`all@shapes=on` or `all@shapes=off`), and
`all+rerank`, the top candidates re-ordered by the packaged re-ranker. `--systems` runs only the ones named.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from app.capture.service import capture_key
from app.db import Database
from app.embeddings import Embedder
from app.embeddings.backfill import EMBED_JOB
from app.graph import GraphIndexer
from app.jobs import JobSettings
from app.jobs.worker import JobWorker
from app.memories.schemas import MemoryIn
from app.memories.service import EpisodeIn, MemoryService
from app.recall.schemas import LegWeights, RecallRequest
from app.recall.service import RecallService
from app.recall.term_counts import TermCounts
from memoria_bench.config import BenchConfig
from memoria_bench.modes import ALL, DENSE, LEXICAL, LEXICAL_DENSE, MODE_WEIGHTS

METRICS = ("recall@1", "recall@5", "recall@10", "ndcg@10", "mrr", "session@10")
#: The metrics every paired difference gets a CI for: R@10 is near saturation on some sets, where
#: R@1 and MRR still tell systems apart.
CI_METRICS = ("recall@10", "recall@1", "mrr")
#: Every mode is a system; a graph-weight sweep adds more.
SYSTEMS: dict[str, LegWeights | None] = dict(MODE_WEIGHTS)
#: Every leg at the defaults, fused by normalised scores instead of ranks (`MEMORIA_RECALL__FUSION`).
SCORE_FUSION = f"{ALL}@fusion=scores"
#: Every leg at the defaults, with shape-aware fusion on (leg weights scaled by the query's shape,
#: `MEMORIA_RECALL__QUERY_SHAPES`) or off (the configured weights for every query): the run adds the
#: one that `all` is not, and compares the two.
SHAPES_ON = f"{ALL}@shapes=on"
SHAPES_OFF = f"{ALL}@shapes=off"
#: Every leg at the defaults, then the top candidates re-ordered by the packaged re-ranker (the
#: request's `rerank`, app/recall/rerank.py), compared with `all`.
RERANK = f"{ALL}+rerank"
#: Corpora whose rows are conversation turns, stored as the capture route stores an exchange.
TURN_CORPORA = frozenset({"turns"})
#: The source of the turns' capture keys (`<source>:<session>:<turn>:<chunk>`).
TURN_SOURCE = "bench"
#: The lexical leg alone and every leg, with term rarity switched the other way round from the
#: configuration (`MEMORIA_RECALL__LEXICAL_IDF`): `@idf` when it is off, `@no-idf` when it is on.
IDF_MODES = (LEXICAL, ALL)
#: The key of a report's per-query metrics (`--per-query` writes them apart; `bench compare` reads them).
PER_QUERY = "per_query"
#: The paired differences the report gives a bootstrap CI for (better, other).
PAIRS = ((LEXICAL_DENSE, LEXICAL), (LEXICAL_DENSE, DENSE), (ALL, LEXICAL_DENSE), (ALL, SCORE_FUSION))


@dataclass(frozen=True, slots=True)
class Query:
    query_id: str
    namespace: str
    text: str
    stratum: str
    relevant: frozenset[str]


@dataclass(slots=True)
class Benchmark:
    """One corpus of a LoCoMo-format folder (memory rows) with the queries that have evidence in it."""

    rows: list[dict[str, Any]]
    queries: list[Query]
    memory_to_docs: dict[int, set[str]] = field(default_factory=lambda: defaultdict(set))

    def session_of(self) -> dict[str, str]:
        """Each document's session, as `<namespace>/<session>` (sessions are named per namespace); a
        row without one is in none."""
        return {
            row["id"]: f"{row['namespace']}/{row['session']}"
            for row in self.rows
            if row.get("session") is not None
        }


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def read_benchmark(data: Path, corpus: str) -> Benchmark:
    """`<corpus>.jsonl`, its qrels and the queries with at least one relevant document."""
    rows = _read_jsonl(data / f"{corpus}.jsonl")
    qrels = {r["query_id"]: frozenset(r["relevant_ids"]) for r in _read_jsonl(data / f"qrels_{corpus}.jsonl")}
    queries = [
        Query(q["query_id"], q["namespace"], q["text"], q["stratum"], qrels[q["query_id"]])
        for q in _read_jsonl(data / "queries.jsonl")
        if qrels.get(q["query_id"])
    ]
    return Benchmark(rows=rows, queries=queries)


def query_metrics(
    ranked_docs: Sequence[frozenset[str]],
    relevant: frozenset[str],
    session_of: Mapping[str, str] | None = None,
) -> dict[str, float]:
    """Binary-relevance metrics for one query; each ranked item may stand for several documents.

    `session@10` is session-level recall, as LoCoMo session-level figures are published: 1 when any
    of the query's evidence sessions is the session of one of the top 10 hits (0 without sessions).
    """

    def recall_at(k: int) -> float:
        found = set().union(*ranked_docs[:k]) & relevant if ranked_docs[:k] else set()
        return len(found) / len(relevant)

    gains = [1.0 if docs & relevant else 0.0 for docs in ranked_docs[:10]]
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(relevant), 10)))
    first = next((i for i, g in enumerate(gains) if g), None)
    return {
        "recall@1": recall_at(1),
        "recall@5": recall_at(5),
        "recall@10": recall_at(10),
        "ndcg@10": dcg / ideal if ideal else 0.0,
        "mrr": 1.0 / (first + 1) if first is not None else 0.0,
        "session@10": session_recall(ranked_docs[:10], relevant, session_of or {}),
    }


def session_recall(
    ranked_docs: Sequence[frozenset[str]], relevant: frozenset[str], session_of: Mapping[str, str]
) -> float:
    """1.0 when a hit comes from one of the evidence sessions."""
    evidence = {session_of[doc] for doc in relevant if doc in session_of}
    found = {session_of[doc] for docs in ranked_docs for doc in docs if doc in session_of}
    return 1.0 if evidence & found else 0.0


def paired_bootstrap_ci(
    a: Sequence[float], b: Sequence[float], draws: int = 10_000, seed: int = 7
) -> tuple[float, float]:
    """95% CI of mean(a - b), resampling queries with replacement."""
    diff = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    if diff.size == 0:
        return (0.0, 0.0)
    rng = np.random.default_rng(seed)
    means = diff[rng.integers(0, diff.size, size=(draws, diff.size))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return (round(float(low), 4), round(float(high), 4))


def fit_content_limit(config: BenchConfig, benchmark: Benchmark) -> BenchConfig:
    """The configuration with `max_content_chars` raised to the corpus's longest row: the benchmark
    measures recall over the data as given (one LongMemEval turn is 5,425 characters), not the
    store's size limit, which answers a longer memory with a 422."""
    longest = max((len(row["content"]) for row in benchmark.rows), default=0)
    if longest <= config.memories.max_content_chars:
        return config
    return replace(config, memories=config.memories.model_copy(update={"max_content_chars": longest}))


@dataclass(frozen=True, slots=True)
class TurnStore:
    """How rows are stored when they are conversation turns: as captured episodes."""

    importance: float
    """The capture's (`MEMORIA_CAPTURE__IMPORTANCE`)."""
    expires_at: datetime


def row_time(row: Mapping[str, Any]) -> datetime | None:
    """A row's `created_at` (ISO 8601; without a zone: UTC), or None."""
    value = row.get("created_at")
    if not value:
        return None
    moment = datetime.fromisoformat(value)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def turn_numbers(rows: Sequence[Mapping[str, Any]]) -> list[int]:
    """Each row's place in its session (namespace and session), counted in file order from 0: the
    turn a capture would number it."""
    seen: dict[tuple[str, str], int] = defaultdict(int)
    numbers = []
    for row in rows:
        key = (row["namespace"], str(row.get("session")))
        numbers.append(seen[key])
        seen[key] += 1
    return numbers


def as_episode(row: Mapping[str, Any], turn: int, turns: TurnStore) -> EpisodeIn:
    """A turn as the capture route stores an exchange of one chunk: an `episode` with the session's
    id, the turn and the chunk in its metadata, its capture key, its expiry, and the time it was
    said as `created_at`."""
    session = str(row.get("session"))
    when = row_time(row)
    return EpisodeIn(
        memory=MemoryIn(
            content=row["content"],
            namespace=row["namespace"],
            importance=turns.importance,
            source=TURN_SOURCE,
            metadata={
                "session_id": session,
                "turn": turn,
                "chunk": 0,
                "chunks": 1,
                "started_at": when.isoformat() if when is not None else None,
            },
        ),
        capture_key=capture_key(session, turn, 0, TURN_SOURCE),
        expires_at=turns.expires_at,
        created_at=when,
    )


async def load_into(
    benchmark: Benchmark,
    memories: MemoryService,
    user_id: int,
    graph: GraphIndexer | None = None,
    progress: Progress | None = None,
    turns: TurnStore | None = None,
) -> None:
    """Store every row through the real store path (and concept extraction, as the API does after
    each store), recording which memory holds which document. With `turns`, rows are conversation
    turns stored as captured episodes (`store_episodes`, whose vectors the embedding job computes:
    run `embed_pending` after); without, curated memories (`store`)."""
    task = progress.add_task("storing", total=len(benchmark.rows)) if progress else None
    numbers = turn_numbers(benchmark.rows)
    for start in range(0, len(benchmark.rows), 100):
        chunk = benchmark.rows[start : start + 100]
        if turns is not None:
            results = await memories.store_episodes(
                user_id, [as_episode(row, numbers[start + i], turns) for i, row in enumerate(chunk)]
            )
        else:
            items = [MemoryIn(content=row["content"], namespace=row["namespace"]) for row in chunk]
            results = await memories.store(user_id, items)
        for row, result in zip(chunk, results, strict=True):
            benchmark.memory_to_docs[result.id].add(row["id"])
        if graph is not None:
            # the graph indexes by internal id; the store answers public ones
            stored = await memories.internal_ids([r.id for r in results if not r.duplicate])
            await graph.index(stored, fresh=True)
        if progress and task is not None:
            progress.advance(task, len(chunk))


async def load_benchmark(
    config: BenchConfig, embedder: Embedder, db: Database, user_id: int, data: Path, corpus_name: str
) -> tuple[BenchConfig, Benchmark]:
    """Read a benchmark and store it in the scratch database as the API would, progress on stderr;
    returns the configuration fitted to its longest row (`fit_content_limit`), which recall must
    use too, and the benchmark with its memory-to-document map filled."""
    benchmark = read_benchmark(data, corpus_name)
    config = fit_content_limit(config, benchmark)
    console = Console(stderr=True)
    turns = None
    if corpus_name in TURN_CORPORA:
        ttl = timedelta(days=config.memories.episode_ttl_days)
        turns = TurnStore(importance=config.capture.importance, expires_at=datetime.now(UTC) + ttl)
    with Progress(console=console, transient=True) as progress:
        await load_into(
            benchmark,
            config.memory_service(db, embedder),
            user_id,
            config.graph_indexer(db, embedder),
            progress,
            turns,
        )
    await embed_pending(config, db, embedder)
    # The term counts, as the workers keep them after each store (the lexical leg's term rarity).
    await TermCounts(db.write).count_pending()
    # Planner statistics, as autovacuum leaves them on a live system: the lexical leg reads its
    # common lexemes from them, so every run must see them.
    await db.write.execute("ANALYZE memories, concepts, memory_concepts, concept_edges")
    return config, benchmark


async def embed_pending(config: BenchConfig, db: Database, embedder: Embedder) -> int:
    """Run the embedding jobs the stores left (captured episodes get their vectors there), as the
    service's job worker would; returns how many ran."""
    worker = JobWorker(db.write, JobSettings())
    worker.register(EMBED_JOB, config.embedding_jobs(db, embedder).run)
    ran = await worker.run_pending(within_s=3600.0)
    missing = await db.write.fetchval(
        "SELECT count(*) FROM memories WHERE embedding IS NULL AND deleted_at IS NULL"
    )
    if missing:  # a job left waiting out a backoff: the figures would not be the product's
        raise RuntimeError(f"{missing} memories were left without a vector")
    return ran


async def run_system(
    benchmark: Benchmark,
    recall: RecallService,
    user_id: int,
    weights: LegWeights | None,
    rerank: bool = False,
) -> list[dict[str, float]]:
    per_query = []
    session_of = benchmark.session_of()
    for query in benchmark.queries:
        ask = RecallRequest(
            query=query.text, namespace=query.namespace, limit=10, weights=weights, rerank=rerank
        )
        response = await recall.recall(user_id, ask)
        ranked = [frozenset(benchmark.memory_to_docs.get(hit.id, ())) for hit in response.results]
        per_query.append(query_metrics(ranked, query.relevant, session_of))
    return per_query


def summarise(
    benchmark: Benchmark,
    per_system: Mapping[str, list[dict[str, float]]],
    name: str,
    pairs: Sequence[tuple[str, str]] = PAIRS,
) -> dict[str, Any]:
    """Mean metrics per system, overall and per stratum, and paired CIs of the R@10 differences for
    every stratum the queries carry."""
    strata = sorted({q.stratum for q in benchmark.queries})

    def mean_of(rows: list[dict[str, float]], idx: list[int]) -> dict[str, float]:
        return {m: round(float(np.mean([rows[i][m] for i in idx])), 4) if idx else 0.0 for m in METRICS}

    everyone = list(range(len(benchmark.queries)))
    by_stratum = {s: [i for i, q in enumerate(benchmark.queries) if q.stratum == s] for s in strata}
    systems = {
        system: {
            "overall": mean_of(rows, everyone),
            "by_stratum": {s: mean_of(rows, idx) for s, idx in by_stratum.items()},
        }
        for system, rows in per_system.items()
    }
    paired = {
        pair_name(best, other): paired_cis(per_system[best], per_system[other], everyone, by_stratum)
        for best, other in pairs
        if best in per_system and other in per_system
    }
    per_query = {
        "queries": [{"query_id": q.query_id, "stratum": q.stratum} for q in benchmark.queries],
        "systems": {
            system: [[round(row[m], 4) for m in CI_METRICS] for row in rows]
            for system, rows in per_system.items()
        },
        "metrics": list(CI_METRICS),
    }
    return {
        "corpus": name,
        "queries": len(benchmark.queries),
        "systems": systems,
        "paired_ci": paired,
        PER_QUERY: per_query,
    }


def paired_cis(
    a: Sequence[Mapping[str, float]],
    b: Sequence[Mapping[str, float]],
    everyone: Sequence[int],
    by_stratum: Mapping[str, Sequence[int]],
) -> dict[str, Any]:
    """The 95% CI of the mean difference a - b of every `CI_METRICS` metric, overall and per stratum."""

    def cis(idx: Sequence[int]) -> dict[str, list[float]]:
        return {
            metric: list(paired_bootstrap_ci([a[i][metric] for i in idx], [b[i][metric] for i in idx]))
            for metric in CI_METRICS
        }

    return {"overall": cis(everyone), "by_stratum": {s: cis(idx) for s, idx in by_stratum.items()}}


async def run_shapes_flipped(
    config: BenchConfig, benchmark: Benchmark, db: Database, embedder: Embedder, user_id: int
) -> dict[str, list[dict[str, float]]]:
    """`all` with shape-aware fusion the other way than configured: `SHAPES_ON` when it is off,
    `SHAPES_OFF` when on, so one run compares shape-aware fusion with the fixed weights."""
    shapes = not config.recall.query_shapes
    flipped = replace(config, recall=config.recall.model_copy(update={"query_shapes": shapes}))
    recall = flipped.recall_service(db, embedder)
    per_query = await run_system(benchmark, recall, user_id, MODE_WEIGHTS[ALL])
    return {SHAPES_ON if shapes else SHAPES_OFF: per_query}


def known_systems() -> frozenset[str]:
    """Every system name `--systems` may pick (the sweeps' own are added by their options)."""
    extra = {RERANK, SCORE_FUSION, SHAPES_ON, SHAPES_OFF}
    extra |= {f"{mode}@idf" for mode in IDF_MODES} | {f"{mode}@no-idf" for mode in IDF_MODES}
    return frozenset(SYSTEMS) | extra


def pair_name(best: str, other: str) -> str:
    """`lexical+dense - lexical`: spaced, since a mode name may itself hold a `+`."""
    return f"{best} - {other}"


def print_report(report: dict[str, Any], console: Console) -> None:
    model = f", embedded by {report['embedding_model']}" if report.get("embedding_model") else ""
    table = Table(title=f"recall quality — corpus {report['corpus']} ({report['queries']} queries{model})")
    for column in ("system", "stratum", *METRICS):
        table.add_column(column, justify="left" if column in ("system", "stratum") else "right")
    for system, figures in report["systems"].items():
        table.add_row(system, "overall", *(f"{figures['overall'][m]:.3f}" for m in METRICS))
        for stratum, values in figures["by_stratum"].items():
            table.add_row("", stratum, *(f"{values[m]:.3f}" for m in METRICS))
    console.print(table)
    strata = sorted(next(iter(report["paired_ci"].values()))["by_stratum"]) if report["paired_ci"] else []
    for metric in CI_METRICS:
        ci_table = Table(title=f"paired bootstrap 95% CI of the {metric} difference (10,000 draws)")
        ci_table.add_column("pair")
        ci_table.add_column("overall", justify="right")
        for stratum in strata:
            ci_table.add_column(stratum, justify="right")
        for pair, figures in report["paired_ci"].items():
            cells = [figures["overall"].get(metric)]
            cells += [figures["by_stratum"].get(s, {}).get(metric) for s in strata]
            ci_table.add_row(pair, *(f"[{c[0]:+.3f}, {c[1]:+.3f}]" if c else "" for c in cells))
        console.print(ci_table)


async def bench_quality(
    config: BenchConfig,
    embedder: Embedder,
    db: Database,
    user_id: int,
    data: Path,
    corpus_name: str,
    graph_weights: Sequence[float] = (),
    leg_depths: Sequence[int] = (),
    only: frozenset[str] | None = None,
) -> dict[str, Any]:
    """Every mode's figures; each of `graph_weights` adds `all@graph=<w>` (against lexical+dense),
    each of `leg_depths` adds `all@depth=<d>`, every leg reading `d` candidates instead of the
    configured `leg_depth` (against all: what a shallower, cheaper statement costs in quality).
    `only` names the systems to run (the sweeps' systems always run); None runs every one."""

    def wanted(name: str) -> bool:
        return only is None or name in only

    config, benchmark = await load_benchmark(config, embedder, db, user_id, data, corpus_name)
    systems = {name: w for name, w in SYSTEMS.items() if wanted(name)}
    pairs = list(PAIRS)
    for weight in graph_weights:
        systems[f"{ALL}@graph={weight:g}"] = LegWeights(graph=weight)
        pairs.append((f"{ALL}@graph={weight:g}", LEXICAL_DENSE))
    recall = config.recall_service(db, embedder)
    per_system = {name: await run_system(benchmark, recall, user_id, w) for name, w in systems.items()}
    if wanted(RERANK):
        per_system[RERANK] = await run_system(benchmark, recall, user_id, MODE_WEIGHTS[ALL], rerank=True)
        pairs.append((RERANK, ALL))
    if wanted(SCORE_FUSION):
        by_scores = replace(config, recall=config.recall.model_copy(update={"fusion": "scores"}))
        per_system[SCORE_FUSION] = await run_system(
            benchmark, by_scores.recall_service(db, embedder), user_id, MODE_WEIGHTS[ALL]
        )
    if wanted(SHAPES_ON) or wanted(SHAPES_OFF):
        per_system.update(await run_shapes_flipped(config, benchmark, db, embedder, user_id))
        pairs.append((SHAPES_ON, ALL) if SHAPES_ON in per_system else (ALL, SHAPES_OFF))
    # term rarity the other way round from the configuration, paired (on, off) with the mode
    idf_on = not config.recall.lexical_idf
    switched = replace(config, recall=config.recall.model_copy(update={"lexical_idf": idf_on}))
    for mode in IDF_MODES:
        name = f"{mode}@idf" if idf_on else f"{mode}@no-idf"
        if not wanted(name):
            continue
        per_system[name] = await run_system(
            benchmark, switched.recall_service(db, embedder), user_id, MODE_WEIGHTS[mode]
        )
        pairs.append((name, mode) if idf_on else (mode, name))
    for depth in leg_depths:
        shallow = replace(config, recall=config.recall.model_copy(update={"leg_depth": depth}))
        name = f"{ALL}@depth={depth}"
        per_system[name] = await run_system(
            benchmark, shallow.recall_service(db, embedder), user_id, MODE_WEIGHTS[ALL]
        )
        pairs.append((name, ALL))
    # the model the corpus and the queries were embedded with, as stored (`+int8`: the quantized one)
    return {**summarise(benchmark, per_system, corpus_name, pairs), "embedding_model": embedder.model_id}
