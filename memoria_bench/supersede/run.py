"""The supersede rule on labelled pairs: its precision and recall, with bootstrap confidence intervals.

Each pair is an older and a newer memory of one namespace and a label written by hand: `supersedes`
(the newer one makes the older one stale) or `not` (an elaboration, an addition, a paraphrase that
says the same, a different subject in similar words, a question...). Both texts are embedded with
the configured embedder exactly as the store embeds a memory (`embed_documents`), their cosine
similarity computed, and the rule judges the pair as the store would. A `confident` verdict is a
link made without anyone asking, so its precision is the figure that matters first (a wrong link
hides a true fact); `suggest` is only offered to the agent, so confident+suggest is reported
beside it. The intervals are percentile bootstraps over pairs (resampled with replacement).

The dev set (`dev_pairs.jsonl`) is the one the thresholds were tuned on. A held-out set is built the
same way, by someone who has not seen the rule's mistakes: the same groups in the same proportions,
new subjects and phrasings, written before the rule is run on them, and never used to tune.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from rich.console import Console
from rich.table import Table
from scipy.stats import binomtest

from app.embeddings import Embedder
from app.links.supersede_rule import DEFAULT_THRESHOLDS, Side, Thresholds, Verdict, judge

DEV_PAIRS = Path(__file__).with_name("dev_pairs.jsonl")
LABELS = ("supersedes", "not")


@dataclass(frozen=True, slots=True)
class Pair:
    """One labelled pair."""

    id: str
    group: str
    label: str
    old: Side
    new: Side


def load_pairs(path: Path) -> list[Pair]:
    """The pairs of a JSONL file (one object a line: id, group, label, old, new, their kinds and
    creation times); ValueError naming the line for a malformed one."""
    pairs: list[Pair] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if row["label"] not in LABELS:
                raise ValueError(f"label {row['label']!r} is none of {LABELS}")
            pairs.append(
                Pair(
                    id=row["id"],
                    group=row["group"],
                    label=row["label"],
                    old=Side(
                        row["old"],
                        datetime.fromisoformat(row["old_created_at"]),
                        row.get("old_kind", "memory"),
                    ),
                    new=Side(
                        row["new"],
                        datetime.fromisoformat(row["new_created_at"]),
                        row.get("new_kind", "memory"),
                    ),
                )
            )
        except (KeyError, ValueError, TypeError) as exc:
            raise ValueError(f"{path}:{number}: {exc}") from exc
    return pairs


def _cosines(old: ArrayLike, new: ArrayLike) -> list[float]:
    a, b = np.asarray(old, dtype=np.float64), np.asarray(new, dtype=np.float64)
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    b /= np.linalg.norm(b, axis=1, keepdims=True)
    return [float(x) for x in np.einsum("ij,ij->i", a, b)]


def _rates(called: np.ndarray, positive: np.ndarray) -> tuple[float, float]:
    """(precision, recall) of the calls; NaN where undefined (no call, no positive)."""
    tp = float(np.sum(called & positive))
    calls, positives = float(np.sum(called)), float(np.sum(positive))
    return (tp / calls if calls else float("nan"), tp / positives if positives else float("nan"))


def _scores(called: np.ndarray, positive: np.ndarray, rounds: int, seed: int) -> dict[str, Any]:
    """Precision and recall of `called` against `positive`, each with its 95% bootstrap interval."""
    precision, recall = _rates(called, positive)
    rng = np.random.default_rng(seed)
    samples = [_rates(called[i], positive[i]) for i in rng.integers(0, len(called), (rounds, len(called)))]
    p = np.array([s[0] for s in samples])
    r = np.array([s[1] for s in samples])

    def interval(values: np.ndarray) -> list[float]:
        low, high = np.nanpercentile(values, [2.5, 97.5])
        return [round(float(low), 3), round(float(high), 3)]

    tp, calls = int(np.sum(called & positive)), int(np.sum(called))
    return {
        "precision": round(precision, 3),
        "precision_ci95": interval(p),
        # exact for a proportion even when no call was wrong, where every bootstrap sample is 1.0
        "precision_wilson95": _wilson(tp, calls),
        "recall": round(recall, 3),
        "recall_ci95": interval(r),
        "true_positives": int(np.sum(called & positive)),
        "false_positives": int(np.sum(called & ~positive)),
        "false_negatives": int(np.sum(~called & positive)),
    }


def _wilson(successes: int, trials: int) -> list[float] | None:
    if not trials:
        return None
    ci = binomtest(successes, trials).proportion_ci(confidence_level=0.95, method="wilson")
    return [round(float(ci.low), 3), round(float(ci.high), 3)]


def _call(pair: Pair, verdict: Verdict) -> dict[str, Any]:
    return {
        "id": pair.id,
        "group": pair.group,
        "label": pair.label,
        "decision": verdict.decision,
        "blocked_by": verdict.blocked_by,
        "similarity": round(verdict.similarity, 3),
        "old": pair.old.text,
        "new": pair.new.text,
        "reason": verdict.reason,
    }


async def bench_supersede(
    pairs: Sequence[Pair],
    embedder: Embedder,
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
    bootstrap: int = 2000,
    seed: int = 35,
) -> dict[str, Any]:
    """Judge every pair (texts embedded by `embedder`) and score the verdicts against the labels."""
    olds = await embedder.embed_documents([p.old.text for p in pairs])
    news = await embedder.embed_documents([p.new.text for p in pairs])
    verdicts = [
        judge(p.new, p.old, similarity, thresholds)
        for p, similarity in zip(pairs, _cosines(olds, news), strict=True)
    ]
    positive = np.array([p.label == "supersedes" for p in pairs])
    confident = np.array([v.decision == "confident" for v in verdicts])
    offered = np.array([v.decision != "none" for v in verdicts])
    groups: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for p, v in zip(pairs, verdicts, strict=True):
        groups[(p.label, p.group)][v.decision] += 1
    wrong = [
        _call(p, v)
        for p, v in zip(pairs, verdicts, strict=True)
        if (v.decision == "confident") != (p.label == "supersedes")
    ]
    return {
        "model": embedder.model_id,
        "pairs": len(pairs),
        "positives": int(positive.sum()),
        "thresholds": asdict(thresholds),
        "bootstrap": {"rounds": bootstrap, "seed": seed},
        "confident": _scores(confident, positive, bootstrap, seed),
        "confident_or_suggest": _scores(offered, positive, bootstrap, seed),
        "by_group": [
            {
                "label": label,
                "group": group,
                "n": sum(c.values()),
                **{d: c[d] for d in ("confident", "suggest", "none")},
            }
            for (label, group), c in sorted(groups.items())
        ],
        "missed_by_rule": dict(
            Counter(
                v.blocked_by or v.decision
                for p, v in zip(pairs, verdicts, strict=True)
                if p.label == "supersedes" and v.decision != "confident"
            ).most_common()
        ),
        "wrong_calls": wrong,
    }


def print_report(report: dict[str, Any], console: Console) -> None:
    console.print(
        f"[bold]{report['pairs']} pairs, {report['positives']} supersedes[/bold] "
        f"(embeddings: {report['model']}; 95% intervals: bootstrap of {report['bootstrap']['rounds']})"
    )
    scores = Table(
        "called", "precision", "95% CI", "Wilson 95%", "recall", "95% CI", "TP", "FP", "FN", title="the rule"
    )
    for name in ("confident", "confident_or_suggest"):
        s = report[name]
        scores.add_row(
            name.replace("_", " "),
            f"{s['precision']:.3f}",
            f"{s['precision_ci95'][0]:.3f}-{s['precision_ci95'][1]:.3f}",
            "-" if s["precision_wilson95"] is None else "{:.3f}-{:.3f}".format(*s["precision_wilson95"]),
            f"{s['recall']:.3f}",
            f"{s['recall_ci95'][0]:.3f}-{s['recall_ci95'][1]:.3f}",
            str(s["true_positives"]),
            str(s["false_positives"]),
            str(s["false_negatives"]),
        )
    console.print(scores)
    groups = Table("label", "group", "n", "confident", "suggest", "none", title="verdicts by group")
    for row in report["by_group"]:
        groups.add_row(*(str(row[k]) for k in ("label", "group", "n", "confident", "suggest", "none")))
    console.print(groups)
    console.print(f"supersedes not called confident, by what held them back: {report['missed_by_rule']}")
    for call in report["wrong_calls"]:
        if call["decision"] == "confident":
            console.print(
                f"[red]wrong confident[/red] {call['id']} ({call['group']}): "
                f"{call['old']!r} -> {call['new']!r}: {call['reason']}"
            )
