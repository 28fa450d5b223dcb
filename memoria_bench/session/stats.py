"""The arithmetic of `memoria bench session`: what the hooks add to a session, with its uncertainty.

Each arm's runs (hooks installed, no hooks) are summarised alike; the added time is the hooked
arm's figure less the bare arm's (median and p95). The median difference comes with a percentile
bootstrap confidence interval: both arms resampled with replacement, the difference of their
medians taken each time, its 2.5th and 97.5th percentiles kept. Seeded, so a report's interval can
be computed again from its samples.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence
from typing import Any

import numpy as np

#: Issue #37's target: a full session (start, prompt, capture) adds at most this over no hooks.
TARGET_ADDED_MS = 150.0
RESAMPLES = 2_000
CONFIDENCE = 0.95


def arm_summary(millis: Sequence[float]) -> dict[str, float]:
    """Runs, median, p95 and max of one arm, in ms."""
    values = np.asarray(millis, dtype=np.float64)
    return {
        "runs": len(millis),
        "median_ms": round(float(np.median(values)), 1),
        "p95_ms": round(float(np.percentile(values, 95)), 1),
        "max_ms": round(float(values.max()), 1),
    }


def median_difference_ci(
    hooked: Sequence[float], bare: Sequence[float], seed: int = 37, resamples: int = RESAMPLES
) -> tuple[float, float]:
    """The percentile bootstrap interval (CONFIDENCE) of median(hooked) - median(bare)."""
    rng = random.Random(seed)
    differences = sorted(
        statistics.median(rng.choices(hooked, k=len(hooked)))
        - statistics.median(rng.choices(bare, k=len(bare)))
        for _ in range(resamples)
    )
    tail = (1 - CONFIDENCE) / 2
    low = float(np.percentile(differences, 100 * tail))
    high = float(np.percentile(differences, 100 * (1 - tail)))
    return round(low, 1), round(high, 1)


def session_summary(hooked: Sequence[float], bare: Sequence[float], seed: int = 37) -> dict[str, Any]:
    """Both arms, the time the hooks add (median and p95), the median's bootstrap interval, and the
    target check on the median added."""
    with_hooks, without = arm_summary(hooked), arm_summary(bare)
    added_median = round(with_hooks["median_ms"] - without["median_ms"], 1)
    low, high = median_difference_ci(hooked, bare, seed)
    return {
        "targets": [
            {
                "target": f"median added <= {TARGET_ADDED_MS:g} ms",
                "value": added_median,
                "met": added_median <= TARGET_ADDED_MS,
            }
        ],
        "added": {
            "median_ms": added_median,
            "p95_ms": round(with_hooks["p95_ms"] - without["p95_ms"], 1),
            "median_ci95_low_ms": low,
            "median_ci95_high_ms": high,
        },
        "arms": {"hooks": with_hooks, "no hooks": without},
    }
