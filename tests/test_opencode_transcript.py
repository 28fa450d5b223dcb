"""OpenCode sessions, as Memoria's plugin writes them, turned into exchanges
(`memoria_hook_client.opencode_transcript`), on a session recorded from the real OpenCode 1.18.33
(tests/fixtures/opencode/README.md) and on lines written in its shape for what one run does not show."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memoria_hook_client.opencode_transcript import parse_delta, read_delta

FIXTURES = Path(__file__).parent / "fixtures" / "opencode"
SESSION = FIXTURES / "session-continued-with-tool-calls.jsonl"
SESSION_ID = "ses_de0092b0effefoGqrULe7LTs84"
FIRST_PROMPT = '"Which port does the walrus gateway listen on? Check the repo first."'
REPLY = "The walrus gateway listens on port 7341; see gateway.toml."


def _lines(*records: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(record).encode() + b"\n" for record in records)


def _user(id: str, text: str, *extra: dict[str, Any]) -> dict[str, Any]:
    parts = [{"type": "text", "text": text}, *extra]
    return {"info": {"id": id, "role": "user", "time": {"created": 1795832599870}}, "parts": parts}


def _assistant(id: str, finish: str, *parts: dict[str, Any]) -> dict[str, Any]:
    info = {"id": id, "role": "assistant", "time": {"created": 1, "completed": 2}, "finish": finish}
    return {"info": info, "parts": list(parts)}


def test_a_recorded_continued_session_gives_each_prompt_its_final_reply_and_the_tools_used() -> None:
    delta = read_delta(str(SESSION), 0, 0, SESSION_ID, turn_over=True)
    assert [(e["turn"], e["prompt"], e["reply"]) for e in delta.exchanges] == [
        (0, FIRST_PROMPT, REPLY),
        (1, '"And the proxy in front of it?"', REPLY),
    ]
    first = delta.exchanges[0]
    assert first["digest"]["files_read"] == ["gateway.toml"]
    assert first["digest"]["commands"] == ["grep -n port gateway.toml"]
    assert (first["started_at"], first["ended_at"]) == (
        "2026-11-28T02:23:19.870Z",
        "2026-11-28T02:23:21.775Z",
    )
    assert first["cwd"] == "/tmp/h37-opencode-exp/proj2"
    assert (delta.offset, delta.turn, delta.pending) == (SESSION.stat().st_size, 2, False)


def test_reading_on_from_the_cursor_gives_only_the_turns_written_since() -> None:
    data = SESSION.read_bytes()
    # the first run wrote four messages (its prompt, two tool round trips, the answer)
    first_run_end = sum(len(line) for line in data.splitlines(keepends=True)[:4])
    first = parse_delta(data[:first_run_end], 0, 0, SESSION_ID, turn_over=True)
    assert [e["turn"] for e in first.exchanges] == [0]
    rest = parse_delta(data[first.offset :], first.offset, first.turn, SESSION_ID, turn_over=True)
    assert [(e["turn"], e["reply"]) for e in rest.exchanges] == [(1, REPLY)]


def test_a_turn_whose_last_message_ends_in_tool_calls_waits_for_the_answer() -> None:
    call = {
        "type": "tool",
        "tool": "bash",
        "state": {"status": "completed", "input": {"command": "pytest -x"}},
    }
    data = _lines(
        _user("m1", "Fix it"), _assistant("m2", "tool-calls", {"type": "text", "text": "Looking."}, call)
    )
    delta = parse_delta(data, 0, 0, "s")
    assert (delta.exchanges, delta.pending, delta.offset, delta.turn) == ([], True, 0, 0)


def test_synthetic_parts_memorias_context_among_them_are_never_captured() -> None:
    context = {"type": "text", "text": "<memoria>the pinned memory</memoria>", "synthetic": True}
    data = _lines(
        _user("m1", "Which branch ships?", context),
        _assistant("m2", "stop", {"type": "text", "text": "release-train", "synthetic": False}),
    )
    [exchange] = parse_delta(data, 0, 0, "s").exchanges
    assert (exchange["prompt"], exchange["reply"]) == ("Which branch ships?", "release-train")


def test_a_failed_tool_call_and_an_edit_land_in_the_digest() -> None:
    edit = {
        "type": "tool",
        "tool": "edit",
        "state": {"status": "completed", "input": {"filePath": "/r/app.py"}},
    }
    failed = {
        "type": "tool",
        "tool": "bash",
        "state": {"status": "error", "input": {"command": "make"}, "error": "make: *** no rule\nmore"},
    }
    data = _lines(
        _user("m1", "Fix the build"),
        _assistant("m2", "tool-calls", edit, failed),
        _assistant("m3", "stop", {"type": "text", "text": "Fixed."}),
    )
    [exchange] = parse_delta(data, 0, 0, "s").exchanges
    assert exchange["digest"]["files_touched"] == ["/r/app.py"]
    assert exchange["digest"]["commands"] == ["make"]
    assert exchange["digest"]["errors"] == ["make: *** no rule"]


def test_broken_lines_are_skipped_and_a_partial_last_line_waits() -> None:
    data = b"not json\n" + _lines(
        _user("m1", "Hi"), _assistant("m2", "stop", {"type": "text", "text": "Hello."})
    )
    whole = parse_delta(data, 0, 0, "s")
    assert [(e["prompt"], e["reply"]) for e in whole.exchanges] == [("Hi", "Hello.")]
    partial = parse_delta(data[:-5], 0, 0, "s")
    assert partial.exchanges == [] and partial.pending
