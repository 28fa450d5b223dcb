"""Concept precision: the share of extracted concepts that are specific, on a labelled dev sample
(`memories.jsonl`, `labels.jsonl`; README.md says how they were made and labelled)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.graph.extract import extract_concepts

HERE = Path(__file__).parent
MEMORIES = HERE / "memories.jsonl"
LABELS = HERE / "labels.jsonl"


@dataclass(frozen=True, slots=True)
class Precision:
    """Of `labelled` extracted concepts, `specific` are; `unlabelled` ones the labels do not cover."""

    specific: int
    labelled: int
    unlabelled: list[str]

    @property
    def share(self) -> float:
        return self.specific / self.labelled if self.labelled else 0.0

    def wilson(self, z: float = 1.96) -> tuple[float, float]:
        """95% Wilson score interval of the share."""
        n = self.labelled
        if not n:
            return (0.0, 0.0)
        p = self.share
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        return (round(centre - half, 4), round(centre + half, 4))


def _read(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def labels(path: Path = LABELS) -> dict[str, str]:
    """Concept key -> `specific` or `generic`."""
    return {row["concept"]: row["label"] for row in _read(path)}


def precision(concepts: list[str], labelled: dict[str, str]) -> Precision:
    known = [c for c in concepts if c in labelled]
    return Precision(
        specific=sum(labelled[c] == "specific" for c in known),
        labelled=len(known),
        unlabelled=sorted({c for c in concepts if c not in labelled}),
    )


def bench_concepts(memories: Path = MEMORIES, label_file: Path = LABELS) -> dict[str, Any]:
    """Precision before (the sample of concepts the extractor before issue 38 produced, stored with
    each memory) and now (every concept `extract_concepts` yields for the same memories)."""
    rows = _read(memories)
    labelled = labels(label_file)
    before = precision([c for row in rows for c in row["before_sampled"]], labelled)
    now = precision(
        [c.name for row in rows for c in extract_concepts(row["content"])],
        labelled,
    )
    report: dict[str, Any] = {"memories": len(rows)}
    for name, figures in (("before", before), ("now", now)):
        report[name] = {
            "specific": figures.specific,
            "labelled": figures.labelled,
            "precision": round(figures.share, 4),
            "ci95": figures.wilson(),
            "unlabelled": figures.unlabelled,
        }
    return report
