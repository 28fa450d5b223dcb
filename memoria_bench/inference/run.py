"""One `memoria bench inference` run: a scratch database, two users, a `memoria serve` process."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import asyncpg
import httpx
from rich.console import Console

from app.auth.service import create_key, get_or_create_user
from memoria_bench.corpus import generate_memories, load_pool
from memoria_bench.inference.options import ABSENT, CONTROL, WORD, InferenceOptions
from memoria_bench.inference.probe import Tenant, probe
from memoria_bench.serve import served_api

#: What B's memories say about the word: everyday sentences, the word in a different place in each.
_MENTIONS = (
    "The {w} rollout is on hold.",
    "Ask about {w} before Friday.",
    "We moved {w} to the new cluster.",
    "Keep {w} out of the release notes.",
)


def corpora(sentences: Path, options: InferenceOptions) -> tuple[list[str], list[str]]:
    """(B's memories, each holding WORD; A's own, holding none of the probe words), from the persona
    sentences the other benchmarks use, so both tenants' text looks like real memories."""
    pool = load_pool(sentences)
    words = (WORD, ABSENT, CONTROL)
    texts = [
        m.content
        for m in generate_memories(pool, options.others_memories + options.own_memories, 1, options.seed)
        if not any(w in m.content for w in words)
    ]
    others = [
        f"{text} {_MENTIONS[i % len(_MENTIONS)].format(w=WORD)}"
        for i, text in enumerate(texts[: options.others_memories])
    ]
    return others, texts[options.others_memories :]


async def _tenant(url: str, name: str) -> Tenant:
    conn = await asyncpg.connect(url)
    try:
        await get_or_create_user(conn, name)
        key = (await create_key(conn, name, label="bench inference")).key
    finally:
        await conn.close()
    return Tenant(name, {"Authorization": f"Bearer {key}"})


async def bench_inference(url: str, options: InferenceOptions, console: Console) -> dict[str, Any]:
    """The report of `probe` against a `memoria serve` on the migrated scratch database `url`."""
    loadavg_start = os.getloadavg()
    others, own = corpora(options.sentences, options)
    a, b = await _tenant(url, "tenant-a"), await _tenant(url, "tenant-b")

    async def analyze() -> None:
        conn = await asyncpg.connect(url)
        try:
            await conn.execute("ANALYZE memories")
        finally:
            await conn.close()

    # Rate limits off: they bound how fast a tenant can ask, not what each answer's timing tells it.
    env = {"MEMORIA_DATABASE__URL": url, "MEMORIA_AUTH__RATE_LIMITS": "false"}
    async with (
        served_api(env, "--no-migrate", unset=["MEMORIA_DATABASE__READ_URL"]) as api,
        httpx.AsyncClient(base_url=api.base, timeout=30.0) as http,
    ):
        report = await probe(http, a, b, others, own, options, analyze, console.print)
    report["machine"] = {
        "cpus": os.cpu_count(),
        "loadavg_start": loadavg_start,
        "loadavg_end": os.getloadavg(),
    }
    return report
