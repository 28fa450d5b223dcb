"""`memoria bench quality`: recall quality on a LoCoMo-format folder, through the real store and recall.

Systems are recall settings, not copies of the SQL: `lexical` and `dense` switch the other leg off
with a weight of 0, `hybrid` runs the configured defaults.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from app.db import Database
from app.embeddings import Embedder
from app.graph.indexer import GraphIndexer
from app.memories.schemas import MemoryIn
from app.memories.service import MemoryService
from app.recall.schemas import LegWeights, RecallRequest
from app.recall.service import RecallService
from app.settings import Settings

METRICS = ("recall@5", "recall@10", "ndcg@10", "mrr")
SYSTEMS: dict[str, LegWeights | None] = {
    "lexical": LegWeights(dense=0.0, graph=0.0),
    "dense": LegWeights(lexical=0.0, graph=0.0),
    "graph": LegWeights(lexical=0.0, dense=0.0),
    "hybrid": LegWeights(graph=0.0),  # lexical + dense
    "all": None,  # lexical + dense + graph, the configured defaults
}
#: The paired differences the report gives a bootstrap CI for.
PAIRS = (("hybrid", "lexical"), ("hybrid", "dense"), ("all", "hybrid"))


@dataclass(frozen=True, slots=True)
class Query:
    query_id: str
    namespace: str
    text: str
    stratum: str
    relevant: frozenset[str]


@dataclass(slots=True)
class Corpus:
    rows: list[dict[str, Any]]
    queries: list[Query]
    memory_to_docs: dict[int, set[str]] = field(default_factory=lambda: defaultdict(set))


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def load_corpus(data: Path, corpus: str) -> Corpus:
    rows = _read_jsonl(data / f"{corpus}.jsonl")
    qrels = {r["query_id"]: frozenset(r["relevant_ids"]) for r in _read_jsonl(data / f"qrels_{corpus}.jsonl")}
    queries = [
        Query(q["query_id"], q["namespace"], q["text"], q["stratum"], qrels[q["query_id"]])
        for q in _read_jsonl(data / "queries.jsonl")
        if qrels.get(q["query_id"])
    ]
    return Corpus(rows=rows, queries=queries)


def query_metrics(ranked_docs: Sequence[frozenset[str]], relevant: frozenset[str]) -> dict[str, float]:
    """Binary-relevance metrics for one query; each ranked item may stand for several documents."""

    def recall_at(k: int) -> float:
        found = set().union(*ranked_docs[:k]) & relevant if ranked_docs[:k] else set()
        return len(found) / len(relevant)

    gains = [1.0 if docs & relevant else 0.0 for docs in ranked_docs[:10]]
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(relevant), 10)))
    first = next((i for i, g in enumerate(gains) if g), None)
    return {
        "recall@5": recall_at(5),
        "recall@10": recall_at(10),
        "ndcg@10": dcg / ideal if ideal else 0.0,
        "mrr": 1.0 / (first + 1) if first is not None else 0.0,
    }


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


async def load_into(
    corpus: Corpus,
    memories: MemoryService,
    user_id: int,
    graph: GraphIndexer | None = None,
    progress: Progress | None = None,
) -> None:
    """Store every row through the real store path (and concept extraction, as the API does after
    each store), recording which memory holds which document."""
    task = progress.add_task("storing", total=len(corpus.rows)) if progress else None
    for start in range(0, len(corpus.rows), 100):
        chunk = corpus.rows[start : start + 100]
        items = [MemoryIn(content=row["content"], namespace=row["namespace"]) for row in chunk]
        results = await memories.store(user_id, items)
        for row, result in zip(chunk, results, strict=True):
            corpus.memory_to_docs[result.id].add(row["id"])
        if graph is not None:
            await graph.index([r.id for r in results if not r.duplicate], fresh=True)
        if progress and task is not None:
            progress.advance(task, len(chunk))


async def run_system(
    corpus: Corpus, recall: RecallService, user_id: int, weights: LegWeights | None
) -> list[dict[str, float]]:
    per_query = []
    for query in corpus.queries:
        response = await recall.recall(
            user_id, RecallRequest(query=query.text, namespace=query.namespace, limit=10, weights=weights)
        )
        ranked = [frozenset(corpus.memory_to_docs.get(hit.id, ())) for hit in response.results]
        per_query.append(query_metrics(ranked, query.relevant))
    return per_query


def summarise(corpus: Corpus, per_system: Mapping[str, list[dict[str, float]]], name: str) -> dict[str, Any]:
    strata = sorted({q.stratum for q in corpus.queries})

    def mean_of(rows: list[dict[str, float]], idx: list[int]) -> dict[str, float]:
        return {m: round(float(np.mean([rows[i][m] for i in idx])), 4) if idx else 0.0 for m in METRICS}

    everyone = list(range(len(corpus.queries)))
    by_stratum = {s: [i for i, q in enumerate(corpus.queries) if q.stratum == s] for s in strata}
    systems = {
        system: {
            "overall": mean_of(rows, everyone),
            "by_stratum": {s: mean_of(rows, idx) for s, idx in by_stratum.items()},
        }
        for system, rows in per_system.items()
    }
    paired: dict[str, Any] = {}
    for best, other in PAIRS:
        if best not in per_system or other not in per_system:
            continue
        a, b = per_system[best], per_system[other]

        def ci(idx: list[int], a: list[dict[str, float]] = a, b: list[dict[str, float]] = b) -> list[float]:
            return list(
                paired_bootstrap_ci([a[i]["recall@10"] for i in idx], [b[i]["recall@10"] for i in idx])
            )

        paired[f"{best}-{other}"] = {
            "overall": {"recall@10": ci(everyone)},
            "by_stratum": {s: {"recall@10": ci(idx)} for s, idx in by_stratum.items()},
        }
    return {"corpus": name, "queries": len(corpus.queries), "systems": systems, "paired_ci": paired}


def print_report(report: dict[str, Any], console: Console) -> None:
    table = Table(title=f"recall quality — corpus {report['corpus']} ({report['queries']} queries)")
    for column in ("system", "stratum", *METRICS):
        table.add_column(column, justify="left" if column in ("system", "stratum") else "right")
    for system, figures in report["systems"].items():
        table.add_row(system, "overall", *(f"{figures['overall'][m]:.3f}" for m in METRICS))
        for stratum, values in figures["by_stratum"].items():
            table.add_row("", stratum, *(f"{values[m]:.3f}" for m in METRICS))
    console.print(table)
    ci_table = Table(title="paired bootstrap 95% CI of the R@10 difference (10,000 draws)")
    ci_table.add_column("pair")
    ci_table.add_column("overall", justify="right")
    strata = sorted(next(iter(report["paired_ci"].values()))["by_stratum"]) if report["paired_ci"] else []
    for stratum in strata:
        ci_table.add_column(stratum, justify="right")
    for pair, figures in report["paired_ci"].items():
        cells = [figures["overall"]["recall@10"]]
        cells += [figures["by_stratum"].get(s, {}).get("recall@10") for s in strata]
        ci_table.add_row(pair, *(f"[{c[0]:+.3f}, {c[1]:+.3f}]" if c else "" for c in cells))
    console.print(ci_table)


async def bench_quality(
    settings: Settings,
    embedder: Embedder,
    db: Database,
    user_id: int,
    data: Path,
    corpus_name: str,
    graph_weights: Sequence[float] = (),
) -> dict[str, Any]:
    corpus = load_corpus(data, corpus_name)
    memories = MemoryService(db, embedder, settings.memories)
    indexer = GraphIndexer(db.write, embedder if settings.graph.concept_embeddings else None, settings.graph)
    recall = RecallService(db, embedder, settings.recall, settings.memories.tag_limits, settings.graph)
    console = Console(stderr=True)
    with Progress(console=console, transient=True) as progress:
        await load_into(corpus, memories, user_id, indexer, progress)
    # Planner statistics, as autovacuum leaves them on a live system: the lexical leg reads its
    # common lexemes from them, so every run must see them.
    await db.write.execute("ANALYZE memories, concepts, memory_concepts, concept_edges")
    systems = dict(SYSTEMS)
    for weight in graph_weights:
        systems[f"all@graph={weight:g}"] = LegWeights(graph=weight)
    per_system = {name: await run_system(corpus, recall, user_id, w) for name, w in systems.items()}
    report = summarise(corpus, per_system, corpus_name)
    for weight in graph_weights:
        name = f"all@graph={weight:g}"
        a, b = per_system[name], per_system["hybrid"]
        everyone = list(range(len(corpus.queries)))
        multi = [i for i, q in enumerate(corpus.queries) if q.stratum == "multi-hop"]
        report["paired_ci"][f"{name}-hybrid"] = {
            "overall": {"recall@10": list(paired_bootstrap_ci(*_r10(a, b, everyone)))},
            "by_stratum": {"multi-hop": {"recall@10": list(paired_bootstrap_ci(*_r10(a, b, multi)))}},
        }
    return report


def _r10(
    a: list[dict[str, float]], b: list[dict[str, float]], idx: list[int]
) -> tuple[list[float], list[float]]:
    return [a[i]["recall@10"] for i in idx], [b[i]["recall@10"] for i in idx]
