"""Gemini CLI session files turned into exchanges (`memoria_hook_client.gemini_transcript`), on a
session recorded from the real Gemini CLI 0.61.0 (tests/fixtures/gemini/README.md) and on lines
written in its shape for what one run does not show."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memoria_hook_client.gemini import normalised
from memoria_hook_client.gemini_transcript import parse_delta, read_delta, without_hook_context

FIXTURES = Path(__file__).parent / "fixtures" / "gemini"
SESSION = FIXTURES / "session-resumed-with-tool-call.jsonl"
SESSION_ID = "cbc4b5ad-53e1-418b-9d59-7a6a33ebb152"


def _lines(*records: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(record).encode() + b"\n" for record in records)


def test_a_recorded_resumed_session_gives_its_prompts_without_hook_context_and_final_replies() -> None:
    delta = read_delta(str(SESSION), 0, 0, SESSION_ID, turn_over=True)
    assert [(e["turn"], e["prompt"], e["reply"]) for e in delta.exchanges] == [
        (
            0,
            "Which port does the walrus gateway listen on? Check gateway.toml.",
            "The walrus gateway listens on port 7341, see gateway.toml.",
        ),
        (1, "And the proxy in front of it?", "The amber proxy sits in front of it."),
    ]
    assert delta.exchanges[0]["digest"]["files_read"] == ["gateway.toml"]
    assert delta.exchanges[0]["started_at"] == "2026-11-27T22:57:22.344Z"
    assert (delta.offset, delta.turn, delta.pending) == (SESSION.stat().st_size, 2, False)


def test_reading_on_from_the_cursor_gives_only_the_turns_written_since() -> None:
    data = SESSION.read_bytes()
    first_run_end = data.index(b'{"sessionId"', 1)  # the resumed run appends a second header
    first = parse_delta(data[:first_run_end], 0, 0, SESSION_ID, turn_over=True)
    assert [e["turn"] for e in first.exchanges] == [0]
    rest = parse_delta(data[first.offset :], first.offset, first.turn, SESSION_ID, turn_over=True)
    assert [(e["turn"], e["prompt"]) for e in rest.exchanges] == [(1, "And the proxy in front of it?")]


def test_a_turn_whose_model_still_owes_an_answer_to_its_tool_call_waits_for_it() -> None:
    prompt = {
        "id": "u1",
        "timestamp": "2026-11-27T10:00:00.000Z",
        "type": "user",
        "content": [{"text": "Fix it"}],
    }
    call = {
        "id": "g1",
        "timestamp": "2026-11-27T10:00:01.000Z",
        "type": "gemini",
        "content": "Let me look first.",
        "toolCalls": [{"id": "c1", "name": "run_shell_command", "args": {"command": "pytest -x\nmore"}}],
    }
    waiting = parse_delta(_lines(prompt, call), 100, 3, "s")
    assert (waiting.exchanges, waiting.offset, waiting.turn, waiting.pending) == ([], 100, 3, True)
    result = {
        "id": "u2",
        "timestamp": "2026-11-27T10:00:02.000Z",
        "type": "user",
        "content": [{"functionResponse": {}}],
    }
    answer = {
        "id": "g2",
        "timestamp": "2026-11-27T10:00:03.000Z",
        "type": "gemini",
        "content": "Fixed: tests pass.",
    }
    done = parse_delta(_lines(prompt, call, result, answer), 100, 3, "s")
    assert [(e["turn"], e["reply"], e["digest"]["commands"]) for e in done.exchanges] == [
        (3, "Fixed: tests pass.", ["pytest -x"])
    ]
    assert done.exchanges[0]["ended_at"] == "2026-11-27T10:00:03.000Z"


def test_a_record_written_again_under_its_id_replaces_the_earlier_text() -> None:
    prompt = {"id": "u1", "type": "user", "content": "Say it"}
    partial = {"id": "g1", "type": "gemini", "content": "Hel"}
    whole = {"id": "g1", "type": "gemini", "content": "Hello there."}
    delta = parse_delta(_lines(prompt, partial, whole), 0, 0, "s")
    assert [e["reply"] for e in delta.exchanges] == ["Hello there."]


def test_context_and_tool_results_are_never_taken_for_prompts() -> None:
    only_context = {
        "id": "u0",
        "type": "user",
        "content": [{"text": "<hook_context>#1 a memory</hook_context>"}],
    }
    session_context = {
        "id": "u1",
        "type": "user",
        "content": [{"text": "<session_context>\nThis is the Gemini CLI."}],
    }
    tool_result = {"id": "u2", "type": "user", "content": [{"functionResponse": {"name": "read_file"}}]}
    delta = parse_delta(_lines(only_context, session_context, tool_result), 0, 0, "s", final=True)
    assert (delta.exchanges, delta.turn) == ([], 0)


def test_an_error_record_is_the_reply_of_a_turn_the_model_never_answered_and_a_failed_tool_is_noted() -> None:
    prompt = {"id": "u1", "type": "user", "content": "Deploy"}
    failed = {
        "id": "g1",
        "type": "gemini",
        "content": "",
        "toolCalls": [
            {
                "id": "c1",
                "name": "write_file",
                "args": {"file_path": "a.txt"},
                "status": "error",
                "resultDisplay": "denied\n",
            }
        ],
    }
    error = {"id": "e1", "type": "error", "content": "[API Error: quota exceeded]\ndetails"}
    delta = parse_delta(_lines(prompt, failed, error), 0, 0, "s", final=True)
    assert [(e["reply"], e["digest"]["files_touched"], e["digest"]["errors"]) for e in delta.exchanges] == [
        ("[API Error: quota exceeded]", ["a.txt"], ["denied"])
    ]


def test_hook_context_spans_are_cut_wherever_they_sit() -> None:
    assert without_hook_context(
        "<hook_context>a\nb</hook_context>\n\nThe question <hook_context>c</hook_context>"
    ) == ("The question")


def test_the_prompt_a_gemini_before_agent_event_carries_loses_the_session_start_context() -> None:
    events = [
        json.loads(line)
        for line in (FIXTURES / "hooks-resumed-with-tool-call.jsonl").read_text().splitlines()
    ]
    before_agent = next(event for event in events if event["hook_event_name"] == "BeforeAgent")
    assert before_agent["prompt"].startswith("<hook_context>CTX-FROM-SessionStart")
    assert normalised(before_agent) == {
        **before_agent,
        "prompt": "Which port does the walrus gateway listen on? Check gateway.toml.",
    }
    start = next(event for event in events if event["hook_event_name"] == "SessionStart")
    assert normalised(start) == start
