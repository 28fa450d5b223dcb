"""Two latency samples compared the way a tenant guessing from timings would: quartiles, whether the
interquartile ranges overlap, and a Mann-Whitney U p-value (scipy's when it is installed, else a
permutation test of the same statistic)."""

from __future__ import annotations

import importlib
import random
from collections.abc import Sequence
from typing import Any

import numpy as np


def quartiles(samples: Sequence[float]) -> dict[str, float]:
    q1, median, q3 = np.percentile(np.asarray(samples, dtype=np.float64), [25, 50, 75])
    return {
        "n": len(samples),
        "q1": round(float(q1), 3),
        "median": round(float(median), 3),
        "q3": round(float(q3), 3),
    }


def _u_statistic(a: Sequence[float], b: Sequence[float]) -> float:
    """Mann-Whitney U of `a` (ties count a half), from the ranks of the pooled sample."""
    pooled = np.concatenate([np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)])
    order = pooled.argsort(kind="mergesort")
    ranks = np.empty(len(pooled), dtype=np.float64)
    ranks[order] = np.arange(1, len(pooled) + 1)
    for value in np.unique(pooled):  # average ranks over ties
        tied = pooled == value
        if tied.sum() > 1:
            ranks[tied] = ranks[tied].mean()
    return float(ranks[: len(a)].sum() - len(a) * (len(a) + 1) / 2)


def permutation_p(a: Sequence[float], b: Sequence[float], permutations: int, seed: int) -> float:
    """Two-sided p of U by relabelling the pooled samples `permutations` times (+1 smoothing)."""
    centre = len(a) * len(b) / 2
    observed = abs(_u_statistic(a, b) - centre)
    pooled = [*a, *b]
    rng = random.Random(seed)
    extreme = 0
    for _ in range(permutations):
        rng.shuffle(pooled)
        if abs(_u_statistic(pooled[: len(a)], pooled[len(a) :]) - centre) >= observed:
            extreme += 1
    return (extreme + 1) / (permutations + 1)


def mann_whitney_p(a: Sequence[float], b: Sequence[float], permutations: int, seed: int) -> tuple[float, str]:
    """(two-sided p, how it was computed)."""
    try:
        scipy_stats: Any = importlib.import_module("scipy.stats")
    except ImportError:
        return permutation_p(a, b, permutations, seed), f"permutation test ({permutations:,} relabellings)"
    result = scipy_stats.mannwhitneyu(a, b, alternative="two-sided")
    return float(result.pvalue), "scipy.stats.mannwhitneyu, two-sided"


def compare(a: Sequence[float], b: Sequence[float], permutations: int, seed: int) -> dict[str, Any]:
    """Quartiles of each, their median difference, whether the IQRs overlap, and the p-value."""
    qa, qb = quartiles(a), quartiles(b)
    p, method = mann_whitney_p(a, b, permutations, seed)
    return {
        "a": qa,
        "b": qb,
        "median_difference_ms": round(qa["median"] - qb["median"], 3),
        "iqr_overlap": not (qa["q1"] > qb["q3"] or qb["q1"] > qa["q3"]),
        "p_value": p,
        "p_method": method,
    }
