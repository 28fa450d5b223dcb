"""The issue's latency targets and the ratios they are judged by: reported, never asserted."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.bench.modes import ALL, LEXICAL, LEXICAL_DENSE

TARGETS = {"http_p50_ms": 15.0, "http_p95_ms": 30.0, "ratio_to_lexical": 2.0, "hnsw_recall@10": 0.98}


def ratios_to_lexical(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each fused mode over lexical-only, from rows of the same run (path, scope, concurrency)."""
    by_key = {(r["path"], r["scope"], r["concurrency"], r["mode"]): r for r in rows}
    out = []
    for (path, scope, concurrency, mode), fused in by_key.items():
        lexical = by_key.get((path, scope, concurrency, LEXICAL))
        if mode != LEXICAL and lexical:
            out.append(
                {
                    "path": path,
                    "scope": scope,
                    "concurrency": concurrency,
                    "mode": mode,
                    "p50": round(fused["p50"] / lexical["p50"], 2),
                    "p95": round(fused["p95"] / lexical["p95"], 2),
                }
            )
    return out


def target_checks(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The targets over HTTP at concurrency 1: for `lexical+dense` (the fused recall the targets were
    set for) and for `all` (the default recall, every leg), and HNSW recall@10 per scope."""
    http = {
        (r["scope"], r["mode"]): r for r in report["latency"] if r["path"] == "http" and r["concurrency"] == 1
    }
    ratios = {
        (r["scope"], r["mode"]): r for r in report["ratios"] if r["path"] == "http" and r["concurrency"] == 1
    }
    checks: list[dict[str, Any]] = []
    for scope in ("big", "small"):
        for mode in (LEXICAL_DENSE, ALL):
            fused, ratio = http.get((scope, mode)), ratios.get((scope, mode))
            if fused is None or ratio is None:
                continue
            checks += [
                _check(
                    f"HTTP {mode} p50, c=1, {scope}", fused["p50"], TARGETS["http_p50_ms"], "ms", low=True
                ),
                _check(
                    f"HTTP {mode} p95, c=1, {scope}", fused["p95"], TARGETS["http_p95_ms"], "ms", low=True
                ),
                _check(
                    f"{mode}/lexical p50, c=1, {scope}",
                    ratio["p50"],
                    TARGETS["ratio_to_lexical"],
                    "x",
                    low=True,
                ),
            ]
    checks += [
        _check(f"HNSW recall@10, {h['scope']}", h["recall@10"], TARGETS["hnsw_recall@10"], "", low=False)
        for h in report["hnsw"]
    ]
    return checks


def _check(name: str, value: float, target: float, unit: str, low: bool) -> dict[str, Any]:
    met = value <= target if low else value >= target
    return {"target": name, "value": value, "goal": f"{'≤' if low else '≥'} {target:g}{unit}", "met": met}
