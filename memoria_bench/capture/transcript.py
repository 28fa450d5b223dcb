"""Claude Code transcripts synthesised for `memoria bench capture`, in the JSONL shape Claude Code 2.1
writes (read off a real `claude -p` run, see tests/fixtures/transcripts/real-claude-p.jsonl): per
exchange a prompt, a tool call and its result (every tenth a failing command), an edit, and the final
text reply, with the entries between a tool call and the reply that the capture hook walks over."""

from __future__ import annotations

import json
import random
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any


def _stamp(start: datetime, seconds: float) -> str:
    return (start + timedelta(seconds=seconds)).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _assistant(
    message_id: str, content: list[dict[str, Any]], stop_reason: str = "tool_use"
) -> dict[str, Any]:
    """An assistant entry of a Claude Code 2.1 transcript."""
    message = {"id": message_id, "type": "message", "role": "assistant", "model": "claude-opus-4-8"}
    return {"type": "assistant", "message": {**message, "content": content, "stop_reason": stop_reason}}


def _tool_result(tool_id: str, content: str, is_error: bool | None = None) -> dict[str, Any]:
    """The user entry carrying a tool's result (`is_error` only where Claude Code writes one)."""
    result: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_id, "content": content}
    if is_error is not None:
        result["is_error"] = is_error
    return {"type": "user", "message": {"role": "user", "content": [result]}}


def synthetic_transcript(session_id: str, cwd: str, exchanges: int, seed: int) -> str:
    """`exchanges` prompt → tool call → tool result → reply turns as Claude Code 2.1 writes them."""
    rng = random.Random(seed)
    start = datetime(2026, 11, 24, 9, 0, tzinfo=UTC)
    common = {
        "isSidechain": False,
        "userType": "external",
        "entrypoint": "cli",
        "cwd": cwd,
        "sessionId": session_id,
        "version": "2.1.197",
        "gitBranch": "main",
    }
    lines: list[dict[str, Any]] = []
    parent: str | None = None
    clock = 0.0

    def add(entry: dict[str, Any]) -> None:
        nonlocal parent, clock
        clock += rng.uniform(0.05, 3.0)
        uid = str(uuid.UUID(int=rng.getrandbits(128)))
        lines.append(
            {"parentUuid": parent, **entry, "uuid": uid, "timestamp": _stamp(start, clock), **common}
        )
        parent = uid

    for turn in range(exchanges):
        topic = rng.choice(TOPICS)
        prompt = f"{topic} (step {turn}): {rng.choice(DETAILS)} Keep the change small and explain it."
        tool_id = f"toolu_bench_{turn:04d}"
        failing = turn % 10 == 9
        command = f"pytest -q tests/test_{topic.split()[0].lower()}_{turn}.py"
        lines.append({"type": "queue-operation", "operation": "enqueue", "sessionId": session_id})
        add({"type": "user", "message": {"role": "user", "content": prompt}, "promptId": str(uuid.uuid4())})
        add(
            _assistant(
                f"msg_bench_{turn}a",
                [
                    {"type": "text", "text": "Let me run the tests first."},
                    {"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": command}},
                ],
            )
        )
        output = "Exit code 1\nFAILED: assertion error in test_case" if failing else "12 passed in 0.41s"
        add(
            {
                **_tool_result(tool_id, output, is_error=failing),
                "toolUseResult": {"stdout": output, "stderr": "", "interrupted": False},
            }
        )
        edit_id = f"toolu_bench_{turn:04d}e"
        path = f"{cwd}/src/{topic.split()[0].lower()}_{turn % 17}.py"
        edit = {"file_path": path, "old_string": "x = 1", "new_string": "x = 2"}
        add(
            _assistant(
                f"msg_bench_{turn}b", [{"type": "tool_use", "id": edit_id, "name": "Edit", "input": edit}]
            )
        )
        add(_tool_result(edit_id, f"The file {path} was updated."))
        reply = " ".join(rng.choice(REPLY_SENTENCES) for _ in range(rng.randint(3, 7)))
        text = {"type": "text", "text": f"Done with step {turn}. {reply}"}
        add(_assistant(f"msg_bench_{turn}c", [text], stop_reason="end_turn"))
        lines.append({"type": "last-prompt", "lastPrompt": prompt, "sessionId": session_id})
    return "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines)


TOPICS = [
    "Billing retries after a declined card",
    "Migration of the orders table to bigint ids",
    "Flaky integration test for the search indexer",
    "Rate limiting of the public API",
    "Frontend build moving from webpack to vite",
    "Release checklist for the mobile app",
    "Caching of the pricing service responses",
    "Logging format for the worker processes",
]
DETAILS = [
    "The staging deploy broke after yesterday's merge.",
    "We agreed to keep backwards compatibility for one release.",
    "The on-call engineer saw timeouts around midnight.",
    "Product wants this behind a feature flag first.",
    "The database team asked us to avoid long transactions.",
]
REPLY_SENTENCES = [
    "I changed the retry loop to back off exponentially with jitter.",
    "The failing test depended on the wall clock; it now uses a fixed time.",
    "I added an index on the foreign key, which removes the sequential scan.",
    "The configuration default moved to the settings module so both services read it.",
    "I left the old code path behind the flag so we can roll back quickly.",
    "The error came from a missing await in the worker's shutdown handler.",
    "I documented the decision in the architecture notes of the repository.",
    "The benchmark shows the p95 dropped from 180 ms to 40 ms after the change.",
]
