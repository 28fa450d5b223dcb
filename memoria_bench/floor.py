"""`memoria bench quality --floor`: what the prompt hook's relevance floor costs and what it saves.

The floor (`app.hooks.floor`) leaves a prompt without context when no recalled memory clears it.
Two figures say whether a floor is right, and this bench prints both:

- the benchmark's own questions, each about its namespace: recall with the floor (a question whose
  hits all fall below it finds nothing) against recall without, paired per question, with paired
  bootstrap CIs of the difference of R@10, R@1 and MRR. A good floor costs no more than noise;
- unrelated prompts (`memoria_bench.unrelated_prompts`), each asked in every namespace: the share
  left with nothing. A good floor leaves most of them alone.

Each question is recalled once, as the hook recalls (its candidate count, the signals asked for),
and the floor is applied afterwards, so a sweep of floors (`--floor-sweep`) costs no more recalls.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from app.db import Database
from app.embeddings import Embedder
from app.hooks.floor import RelevanceFloor, relevance_floor
from app.hooks.policy import judge
from app.recall.schemas import RecallHit, RecallRequest
from app.recall.service import RecallService
from memoria_bench.config import BenchConfig
from memoria_bench.quality import Benchmark, load_benchmark, paired_bootstrap_ci, query_metrics
from memoria_bench.unrelated_prompts import UNRELATED_PROMPTS

FLOOR_METRICS = ("recall@10", "recall@1", "mrr")


@dataclass(frozen=True, slots=True)
class Asked:
    """One recall as the hook makes it: the ranked documents and the hits with their signals."""

    ranked: list[frozenset[str]]
    hits: list[RecallHit]


def hook_candidates(config: BenchConfig) -> int:
    """How many hits the prompt hook asks recall for (with the ledger: three times what it injects)."""
    return min(3 * config.hooks.max_results, 100)


async def ask(
    recall: RecallService, user_id: int, text: str, namespace: str, limit: int, min_prompt_chars: int
) -> Asked | None:
    """The hook's recall of `text` (its query as the hook's policy cuts it), or None when the hook
    would not recall at all (a trivial prompt)."""
    verdict = judge(text, min_prompt_chars)
    if verdict.query is None:
        return None
    response = await recall.recall(
        user_id, RecallRequest(query=verdict.query, namespace=namespace, limit=limit, explain=True)
    )
    return Asked([], response.results)


def floored_metrics(
    benchmark: Benchmark, asked: Sequence[Asked], floor: RelevanceFloor
) -> list[dict[str, float]]:
    """Per question, the metrics of what the hook would inject: its hits, or nothing below the floor."""
    session_of = benchmark.session_of()
    rows = []
    for query, answer in zip(benchmark.queries, asked, strict=True):
        ranked = answer.ranked if floor.clears(answer.hits) else []
        metrics = query_metrics(ranked, query.relevant, session_of)
        found = set(ranked[0]) & query.relevant if ranked else set()
        metrics["recall@1"] = len(found) / len(query.relevant)
        rows.append(metrics)
    return rows


def left_alone(unrelated: Sequence[Asked | None], floor: RelevanceFloor) -> int:
    """How many unrelated prompts the hook would leave without context."""
    return sum(answer is None or not answer.hits or not floor.clears(answer.hits) for answer in unrelated)


def compare(
    without: Sequence[Mapping[str, float]], with_floor: Sequence[Mapping[str, float]]
) -> dict[str, Any]:
    """Means without and with the floor, and the paired 95% CI of (with - without), per metric."""
    return {
        metric: {
            "without": round(float(np.mean([row[metric] for row in without])), 4),
            "with": round(float(np.mean([row[metric] for row in with_floor])), 4),
            "ci": list(
                paired_bootstrap_ci([row[metric] for row in with_floor], [row[metric] for row in without])
            ),
        }
        for metric in FLOOR_METRICS
    }


def evaluate(
    benchmark: Benchmark,
    asked: Sequence[Asked],
    unrelated: Sequence[Asked | None],
    floor: RelevanceFloor,
) -> dict[str, Any]:
    """The report's figures for one floor."""
    no_floor = RelevanceFloor(None, None)
    return {
        "min_similarity": floor.min_similarity,
        "min_lexical_score": floor.min_lexical_score,
        "questions": compare(
            floored_metrics(benchmark, asked, no_floor), floored_metrics(benchmark, asked, floor)
        ),
        "questions_left_alone": sum(not floor.clears(answer.hits) for answer in asked),
        "unrelated_left_alone": left_alone(unrelated, floor),
        "unrelated_without_floor_left_alone": left_alone(unrelated, no_floor),
    }


def signals(answer: Asked | None) -> dict[str, float | None]:
    """The best similarity and lexical score among an answer's hits (for calibrating by hand)."""
    hits = answer.hits if answer is not None else []
    distances = [h.explain.dense_distance for h in hits if h.explain and h.explain.dense_distance is not None]
    lexical = [h.explain.lexical_score for h in hits if h.explain and h.explain.lexical_score is not None]
    return {
        "best_similarity": round(1.0 - min(distances), 4) if distances else None,
        "best_lexical_score": round(max(lexical), 4) if lexical else None,
    }


async def bench_floor(
    config: BenchConfig,
    embedder: Embedder,
    db: Database,
    user_id: int,
    data: Path,
    corpus_name: str,
    sweep: Sequence[RelevanceFloor] = (),
    prompts: Sequence[str] = UNRELATED_PROMPTS,
) -> dict[str, Any]:
    """The configured floor's figures (`config.hooks`), and each of `sweep`'s."""
    config, benchmark = await load_benchmark(config, embedder, db, user_id, data, corpus_name)
    recall = config.recall_service(db, embedder)
    limit = hook_candidates(config)
    asked: list[Asked] = []
    for query in benchmark.queries:  # every question is one the hook recalls for (none is trivial)
        response = await recall.recall(
            user_id, RecallRequest(query=query.text, namespace=query.namespace, limit=limit, explain=True)
        )
        ranked = [frozenset(benchmark.memory_to_docs.get(hit.id, ())) for hit in response.results]
        asked.append(Asked(ranked, response.results))
    namespaces = sorted({query.namespace for query in benchmark.queries})
    min_chars = config.hooks.min_prompt_chars
    unrelated = [
        await ask(recall, user_id, text, namespace, limit, min_chars)
        for namespace in namespaces
        for text in prompts
    ]
    configured = relevance_floor(config.hooks)
    return {
        "corpus": corpus_name,
        "queries": len(benchmark.queries),
        "unrelated_prompts": len(unrelated),
        "candidates": limit,
        "configured": evaluate(benchmark, asked, unrelated, configured),
        "sweep": [evaluate(benchmark, asked, unrelated, floor) for floor in sweep],
        "signals": {
            "questions": [signals(answer) for answer in asked],
            "unrelated": [signals(answer) for answer in unrelated],
        },
    }


def _floor_label(figures: Mapping[str, Any]) -> str:
    parts = [
        f"{name}>={figures[key]:g}"
        for name, key in (("sim", "min_similarity"), ("lex", "min_lexical_score"))
        if figures[key] is not None
    ]
    return " or ".join(parts) or "off"


def print_floor_report(report: Mapping[str, Any], console: Console) -> None:
    """One row per floor: the means without and with it, the paired CIs, what it leaves alone."""
    table = Table(
        title=f"relevance floor — corpus {report['corpus']} ({report['queries']} questions, "
        f"{report['unrelated_prompts']} unrelated prompts, {report['candidates']} candidates each); "
        "paired bootstrap 95% CI of (with - without), 10,000 draws"
    )
    table.add_column("floor")
    for metric in FLOOR_METRICS:
        table.add_column(f"{metric} without → with", justify="right")
        table.add_column(f"{metric} CI", justify="right")
    table.add_column("questions left alone", justify="right")
    table.add_column("unrelated left alone", justify="right")
    for name, figures in [("configured", report["configured"])] + [("", f) for f in report["sweep"]]:
        cells = [f"{name} {_floor_label(figures)}".strip()]
        for metric in FLOOR_METRICS:
            values = figures["questions"][metric]
            cells.append(f"{values['without']:.3f} → {values['with']:.3f}")
            cells.append(f"[{values['ci'][0]:+.3f}, {values['ci'][1]:+.3f}]")
        cells.append(f"{figures['questions_left_alone']}/{report['queries']}")
        cells.append(
            f"{figures['unrelated_left_alone']}/{report['unrelated_prompts']} "
            f"(without: {figures['unrelated_without_floor_left_alone']})"
        )
        table.add_row(*cells)
    console.print(table)


def parse_floors(text: str) -> list[RelevanceFloor]:
    """`0.25,0.3/0.1,-/0.1`: floors, each a similarity or similarity/lexical score, `-` a bar off."""

    def bar(value: str) -> float | None:
        return None if value.strip() in ("-", "") else float(value)

    floors = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        similarity, _, lexical = item.partition("/")
        try:
            floors.append(RelevanceFloor(bar(similarity), bar(lexical)))
        except ValueError:
            raise ValueError(f"not a floor (similarity or similarity/lexical): {item!r}") from None
    return floors
