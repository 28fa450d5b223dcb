"""Qwen Code session files turned into exchanges (`memoria_hook_client.qwen_transcript`), on a
session recorded from the real Qwen Code 0.24.4 (tests/fixtures/qwen/README.md) and on lines written
in its shape for what one run does not show."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memoria_hook_client.qwen_transcript import parse_delta, read_delta, without_hook_context

FIXTURES = Path(__file__).parent / "fixtures" / "qwen"
SESSION = FIXTURES / "session-continued-with-tool-call.jsonl"
SESSION_ID = "78c17526-0340-4f7d-8dac-0b3f1a9b5e73"


def _lines(*records: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(record).encode() + b"\n" for record in records)


def _user(text: str, **extra: Any) -> dict[str, Any]:
    return {
        "uuid": "u",
        "timestamp": "2026-11-28T10:00:00.000Z",
        "type": "user",
        "provenance": "real_user",
        "message": {"role": "user", "parts": [{"text": text}]},
        **extra,
    }


def _assistant(*parts: dict[str, Any], at: str = "2026-11-28T10:00:01.000Z") -> dict[str, Any]:
    return {
        "uuid": "a",
        "timestamp": at,
        "type": "assistant",
        "message": {"role": "model", "parts": list(parts)},
    }


def test_a_recorded_continued_session_gives_what_the_person_typed_and_the_final_replies() -> None:
    delta = read_delta(str(SESSION), 0, 0, SESSION_ID, turn_over=True)
    assert [(e["turn"], e["prompt"], e["reply"]) for e in delta.exchanges] == [
        (
            0,
            "Which port does the walrus gateway listen on? Check gateway.toml.",
            "The walrus gateway listens on port 7341, see gateway.toml.",
        ),
        (1, "And the proxy in front of it?", "The amber proxy sits in front of it."),
    ]
    first = delta.exchanges[0]
    assert first["digest"]["files_read"] == ["/home/dev/quokka-9/gateway.toml"]
    assert (first["cwd"], first["started_at"]) == ("/home/dev/quokka-9", "2026-11-28T02:47:46.295Z")
    assert "memoria-context" not in json.dumps(delta.exchanges)
    assert (delta.offset, delta.turn, delta.pending) == (SESSION.stat().st_size, 2, False)


def test_reading_on_from_the_cursor_gives_only_the_turns_written_since() -> None:
    data = SESSION.read_bytes()
    second_prompt = data.index(b'"text":"And the proxy')
    first_run_end = data.rindex(b"\n", 0, second_prompt) + 1
    first = parse_delta(data[:first_run_end], 0, 0, SESSION_ID, turn_over=True)
    assert [e["turn"] for e in first.exchanges] == [0]
    rest = parse_delta(data[first.offset :], first.offset, first.turn, SESSION_ID, turn_over=True)
    assert [(e["turn"], e["prompt"]) for e in rest.exchanges] == [(1, "And the proxy in front of it?")]


def test_a_turn_whose_model_still_owes_an_answer_to_its_function_call_waits_for_it() -> None:
    prompt = _user("Fix it")
    call = _assistant(
        {"text": "Let me run the tests."},
        {"functionCall": {"id": "c1", "name": "run_shell_command", "args": {"command": "pytest -x\nmore"}}},
    )
    waiting = parse_delta(_lines(prompt, call), 100, 3, "s")
    assert (waiting.exchanges, waiting.offset, waiting.turn, waiting.pending) == ([], 100, 3, True)
    result = {
        "uuid": "r",
        "type": "tool_result",
        "message": {
            "role": "user",
            "parts": [{"functionResponse": {"id": "c1", "name": "run_shell_command"}}],
        },
        "toolCallResult": {"callId": "c1", "status": "error", "error": {"message": "exit 1\nstack"}},
    }
    answer = _assistant(
        {"text": "thinking it over", "thought": True},
        {"text": "Fixed: tests pass."},
        at="2026-11-28T10:00:03.000Z",
    )
    done = parse_delta(_lines(prompt, call, result, answer), 100, 3, "s")
    assert [
        (e["turn"], e["reply"], e["digest"]["commands"], e["digest"]["errors"]) for e in done.exchanges
    ] == [(3, "Fixed: tests pass.", ["pytest -x"], ["exit 1"])]
    assert done.exchanges[0]["ended_at"] == "2026-11-28T10:00:03.000Z"


def test_messages_not_typed_as_a_prompt_open_no_exchange() -> None:
    records = [
        _user("Deploy it"),
        _user("also check the logs", subtype="mid_turn_user_message"),
        _user("goal: keep going", provenance="goal_runtime"),
        _assistant({"text": "Deployed."}),
    ]
    delta = parse_delta(_lines(*records), 0, 0, "s")
    assert [(e["prompt"], e["reply"]) for e in delta.exchanges] == [("Deploy it", "Deployed.")]


def test_without_a_display_text_the_prompt_is_its_text_without_hook_context() -> None:
    context = (
        "<qwen:user-prompt-submit-context>\n&lt;memoria-context&gt;x&lt;/memoria-context&gt;\n"
        "</qwen:user-prompt-submit-context>"
    )
    record = _user("Which branch?")
    record["message"]["parts"].append({"text": context})
    delta = parse_delta(_lines(record, _assistant({"text": "main"})), 0, 0, "s")
    assert [e["prompt"] for e in delta.exchanges] == ["Which branch?"]
    assert without_hook_context(context) == ""
