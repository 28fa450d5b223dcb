"""The supersede rule's precision: the automatic `supersedes` links among a scenario's memories,
each judged right or wrong by the scenario's labels.

The links are read through REST, `GET /v1/memories/{id}/links`, for every memory of the scenario's
namespaces (`read_links` is the one place that knows the answer's shape). A link from memory A to
memory B (A supersedes B) is **correct** when some fact has a version in A newer than a version of
it in B; **wrong** when B holds a labelled fact version and it is not correct (a true fact hidden);
**unjudged** when B holds no labelled fact (two pieces of noise linked: harmless, not scored).
A server without the route answers "n/a", not an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from memoria_bench.usage.metrics import matches
from memoria_bench.usage.scenario import FactVersion

PAGE = 200


@dataclass(frozen=True, slots=True)
class Link:
    """`source` supersedes `target` (their texts), set by the rule (`origin` auto) or a person."""

    source: str
    target: str
    origin: str


class NoLinkRoute(Exception):
    """The server has no links route (it predates typed links)."""


async def list_memories(http: httpx.AsyncClient, namespaces: Sequence[str]) -> list[dict[str, Any]]:
    """Every memory of `namespaces`, superseded ones included where the server can say so."""
    memories: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        params: dict[str, Any] = {"namespace": list(namespaces), "limit": PAGE, "include_superseded": "true"}
        if cursor:
            params["cursor"] = cursor
        answer = await http.get("/v1/memories", params=params)
        answer.raise_for_status()
        page = answer.json()
        memories += page["items"]
        cursor = page.get("next_cursor")
        if not cursor:
            return memories


async def read_links(http: httpx.AsyncClient, memory: dict[str, Any]) -> list[Link]:
    """The `supersedes` links going out of `memory`; NoLinkRoute when the server has no such route.

    The answer: {"links": [{"kind", "direction": "out"|"in", "memory": {"id", "content"}, "origin",
    "reason"}]}; only outgoing links are taken, so each link is counted once."""
    answer = await http.get(f"/v1/memories/{memory['id']}/links")
    if answer.status_code in (404, 405):
        raise NoLinkRoute(answer.text[:200])
    answer.raise_for_status()
    return [
        Link(memory["content"], str(link["memory"]["content"]), str(link.get("origin", "")))
        for link in answer.json().get("links", [])
        if link.get("kind") == "supersedes" and link.get("direction") == "out"
    ]


def judge(link: Link, versions: Sequence[FactVersion]) -> str:
    """`correct`, `wrong` or `unjudged` (the module docstring says when)."""
    old = matches(link.target, versions)
    if not old:
        return "unjudged"
    new = matches(link.source, versions)
    if any(n.fact == o.fact and n.version > o.version for n in new for o in old):
        return "correct"
    return "wrong"


async def supersede_precision(
    http: httpx.AsyncClient, namespaces: Sequence[str], versions: Sequence[FactVersion]
) -> dict[str, Any]:
    """The automatic supersede links of `namespaces` judged; `{"available": False}` without the route."""
    memories = await list_memories(http, namespaces)
    verdicts = {"correct": 0, "wrong": 0, "unjudged": 0}
    wrong: list[str] = []
    by_user = 0
    try:
        for memory in memories:
            for link in await read_links(http, memory):
                if link.origin != "auto":
                    by_user += 1
                    continue
                verdict = judge(link, versions)
                verdicts[verdict] += 1
                if verdict == "wrong":
                    wrong.append(f"{link.source[:80]!r} -> {link.target[:80]!r}")
    except NoLinkRoute:
        return {"available": False}
    judged = verdicts["correct"] + verdicts["wrong"]
    return {
        "available": True,
        "auto_links": sum(verdicts.values()),
        **verdicts,
        "precision": round(verdicts["correct"] / judged, 3) if judged else None,
        "user_links": by_user,
        "wrong_links": wrong,
    }
