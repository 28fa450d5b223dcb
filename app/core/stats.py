"""Latency summaries every benchmark prints the same way."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def latency_summary(samples_ms: Sequence[float], wall_s: float | None = None) -> dict[str, float]:
    """n, p50, p95, p99, mean and max in milliseconds; with the wall time, the rate per second."""
    values = np.asarray(samples_ms, dtype=np.float64)
    if values.size == 0:
        return {"n": 0.0}
    p50, p95, p99 = np.percentile(values, [50, 95, 99])
    out = {
        "n": float(values.size),
        "p50": round(float(p50), 2),
        "p95": round(float(p95), 2),
        "p99": round(float(p99), 2),
        "mean": round(float(values.mean()), 2),
        "max": round(float(values.max()), 2),
    }
    if wall_s:
        out["per_second"] = round(values.size / wall_s, 1)
    return out
