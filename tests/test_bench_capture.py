"""`memoria bench capture` run tiny against a real `memoria serve` on the test's database: the report's
shape and that what it times really happened (every captured exchange stored, SessionStart answered
with the pinned memories), never the figures themselves.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import asyncpg
import pytest
from rich.console import Console

from memoria_bench.capture import (
    COLUMNS,
    NAMESPACE,
    CaptureBenchOptions,
    bench_capture,
    print_report,
    synthetic_transcript,
)
from memoria_bench.hook_latency import bench_hook_latency

pytestmark = pytest.mark.e2e

MEASURES = [
    "http endpoint",
    "command hook, server up",
    "command hook, server down",
    "session-start hook process",
    "session-start endpoint",
    "capture hook process (Stop)",
    "capture: spawn until all stored",
    "capture: spawn until all embedded",
]


def test_the_synthetic_transcript_has_one_prompt_and_one_final_reply_per_exchange() -> None:
    lines = [json.loads(line) for line in synthetic_transcript("s-1", "/p", 12, 3).splitlines()]
    prompts = [e for e in lines if e.get("type") == "user" and isinstance(e["message"]["content"], str)]
    replies = [e for e in lines if e.get("type") == "assistant" and e["message"]["stop_reason"] == "end_turn"]
    assert len(prompts) == len(replies) == 12
    errors = [
        block
        for e in lines
        if e.get("type") == "user" and isinstance(e["message"]["content"], list)
        for block in e["message"]["content"]
        if block.get("is_error")
    ]
    assert len(errors) == 1  # every tenth command fails
    assert all(e["sessionId"] == "s-1" for e in lines)


async def test_the_capture_bench_reports_each_measure_and_stores_every_captured_exchange(
    db_url: str, tmp_path: Path
) -> None:
    sentences = tmp_path / "sentences.txt"
    sentences.write_text(
        "\n".join(f"I keep {i} notebooks about the garden and the bike trip number {i}." for i in range(200))
    )
    options = CaptureBenchOptions(sentences=sentences, memories=20, pinned=2, runs=2, warmup=1, exchanges=5)

    report = await bench_capture(db_url, options, Console(file=io.StringIO()), bench_hook_latency)

    assert [row["measure"] for row in report["rows"]] == MEASURES
    for row in report["rows"]:
        assert set(row) == set(COLUMNS)
        assert row["runs"] == 2, row
        assert 0 < row["p50_ms"] <= row["p95_ms"] <= row["max_ms"], row
    rows = {row["measure"]: row for row in report["rows"]}
    assert rows["session-start hook process"]["note"].startswith("injected 2"), rows
    assert [target["target"].split(" <=")[0] for target in report["targets"]] == [
        "capture hook p95",
        "SessionStart end to end p95",
        "UserPromptSubmit endpoint p95",
    ]
    assert all(isinstance(target["met"], bool) for target in report["targets"])
    assert set(report["jobs_pending_at_start"]) == {"user-prompt-submit", "session-start"}

    conn = await asyncpg.connect(db_url)
    try:
        episodes = await conn.fetchval(
            "SELECT count(*) FROM memories m JOIN namespaces n ON n.id = m.namespace_id "
            "WHERE n.name = $1 AND m.kind = 'episode'",
            NAMESPACE,
        )
    finally:
        await conn.close()
    assert episodes == (options.warmup + options.runs) * options.exchanges

    printed = io.StringIO()
    print_report(report, Console(file=printed, width=200))
    text = printed.getvalue()
    assert "memoria bench capture: 20 memories, 2 runs, 5-exchange capture delta" in text
    assert all(measure in text for measure in MEASURES)
