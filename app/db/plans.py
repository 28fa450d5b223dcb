"""What a statement cost: elapsed times from asyncpg's query logger, and summaries of EXPLAIN plans.

Benchmarks print these and the plan tests assert on them (which index each part of a statement
uses), so they live here, beside the pool, rather than inside either.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True, eq=False)  # hashable by identity: asyncpg keeps loggers in a set
class StatementTimer:
    """asyncpg query logger keeping the elapsed time (ms) and arguments of each run of `statement`."""

    statement: str
    records: list[tuple[float, tuple[Any, ...]]] = field(default_factory=list)

    def __call__(self, record: Any) -> None:
        if record.query == self.statement and record.exception is None:
            self.records.append((record.elapsed * 1000.0, tuple(record.args)))


def walk_plan(node: dict[str, Any], part: str = "main") -> Iterator[tuple[str, bool, dict[str, Any]]]:
    """(part, starts_part, node) for every plan node. A part is a materialised CTE or subplan
    ("CTE dense_ann", "InitPlan 2") or a subquery the planner inlined ("inlined lexical_broad")."""
    starts = "Subplan Name" in node or (node["Node Type"] == "Subquery Scan" and "Alias" in node)
    if starts:
        part = node["Subplan Name"] if "Subplan Name" in node else f"inlined {node['Alias']}"
    yield part, starts, node
    for child in node.get("Plans", []):
        yield from walk_plan(child, part)


def plan_summary(plan: dict[str, Any]) -> dict[str, Any]:
    """Time per part and the indexes each one used, from an EXPLAIN (ANALYZE, FORMAT JSON).

    A part's time includes the parts it calls (a CTE that counts another CTE's rows includes it).
    """
    parts: dict[str, dict[str, Any]] = {}
    for name, starts, node in walk_plan(plan["Plan"]):
        entry = parts.setdefault(name, {"ms": 0.0, "rows": 0, "indexes": set(), "nodes": set()})
        if (starts or node is plan["Plan"]) and "Actual Total Time" in node:
            entry["ms"] = round(entry["ms"] + node["Actual Total Time"] * node.get("Actual Loops", 1), 2)
            entry["rows"] = node["Actual Rows"]
        if "Index Name" in node:
            entry["indexes"].add(node["Index Name"])
        entry["nodes"].add(node["Node Type"])
    return {
        "execution_ms": plan.get("Execution Time"),
        "planning_ms": plan.get("Planning Time"),
        "parts": {
            name: {**e, "indexes": sorted(e["indexes"]), "nodes": sorted(e["nodes"])}
            for name, e in parts.items()
        },
    }
