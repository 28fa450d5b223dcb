"""GitHub Copilot CLI session files turned into exchanges (`memoria_hook_client.copilot_transcript`),
on a session recorded from the real Copilot CLI 1.0.102 (tests/fixtures/copilot/README.md) and on
lines written in its shape for what one run does not show."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memoria_hook_client import agents
from memoria_hook_client.copilot_transcript import parse_delta, read_delta

FIXTURES = Path(__file__).parent / "fixtures" / "copilot"
SESSION = FIXTURES / "events-continued-with-tool-call.jsonl"
HOOKS = FIXTURES / "hooks-continued-with-tool-call.jsonl"
SESSION_ID = "7716c23d-f8cb-487c-b901-aa134b2e7807"


def _lines(*records: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(record).encode() + b"\n" for record in records)


def _user(text: str) -> dict[str, Any]:
    return {
        "type": "user.message",
        "data": {"content": text, "transformedContent": f"{text}\n\n<system_reminder>x</system_reminder>"},
        "timestamp": "2026-11-28T10:00:00.000Z",
    }


def _assistant(text: str, *calls: dict[str, Any], at: str = "2026-11-28T10:00:01.000Z") -> dict[str, Any]:
    return {
        "type": "assistant.message",
        "data": {"content": text, "toolRequests": list(calls)},
        "timestamp": at,
    }


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"toolCallId": "c1", "name": name, "arguments": arguments, "type": "function"}


def test_a_recorded_continued_session_gives_what_the_person_typed_and_the_final_replies() -> None:
    delta = read_delta(str(SESSION), 0, 0, SESSION_ID, turn_over=True)
    assert [(e["turn"], e["prompt"], e["reply"]) for e in delta.exchanges] == [
        (
            0,
            "Which port does the walrus gateway listen on? Check gateway.toml.",
            "The walrus gateway listens on port 8443.",
        ),
        (1, "And the proxy in front of it?", "The proxy in front of it listens on port 443."),
    ]
    first = delta.exchanges[0]
    assert first["digest"]["commands"] == ["cat gateway.toml"]
    assert (first["cwd"], first["git_branch"]) == ("/home/dev/quokka-9", "master")
    assert first["started_at"] == "2026-11-28T03:32:25.038Z"
    # the recording's hooks answered with <memoria-context>: it is in the file, never in an exchange
    assert "memoria-context" in SESSION.read_text()
    assert "memoria-context" not in json.dumps(delta.exchanges)
    assert (delta.offset, delta.turn, delta.pending) == (SESSION.stat().st_size, 2, False)


def test_reading_on_from_the_cursor_gives_only_the_turns_written_since() -> None:
    data = SESSION.read_bytes()
    resumed = data.index(b'"type":"session.resume"')
    first_run_end = data.rindex(b"\n", 0, resumed) + 1
    first = parse_delta(data[:first_run_end], 0, 0, SESSION_ID, turn_over=True)
    assert [e["turn"] for e in first.exchanges] == [0]
    rest = parse_delta(data[first.offset :], first.offset, first.turn, SESSION_ID, turn_over=True)
    assert [(e["turn"], e["prompt"], e["cwd"]) for e in rest.exchanges] == [
        (1, "And the proxy in front of it?", "/home/dev/quokka-9")
    ]


def test_a_turn_whose_model_still_owes_an_answer_to_its_tool_request_waits_for_it() -> None:
    prompt = _user("Fix it")
    call = _assistant("Let me run the tests.", _call("bash", command="pytest -x\nmore"))
    waiting = parse_delta(_lines(prompt, call), 100, 3, "s")
    assert (waiting.exchanges, waiting.offset, waiting.turn, waiting.pending) == ([], 100, 3, True)
    failed = {
        "type": "tool.execution_complete",
        "data": {"toolCallId": "c1", "success": False, "error": {"message": "exit 1\nlong trace"}},
    }
    edit = _assistant("", _call("edit", path="/r/app.py"), _call("view", path="/r/README.md"))
    done = _assistant("Fixed.", at="2026-11-28T10:00:09.000Z")
    delta = parse_delta(_lines(prompt, call, failed, edit, done), 100, 3, "s")
    (exchange,) = delta.exchanges
    assert (exchange["turn"], exchange["prompt"], exchange["reply"]) == (3, "Fix it", "Fixed.")
    assert exchange["ended_at"] == "2026-11-28T10:00:09.000Z"
    assert {k: v for k, v in exchange["digest"].items() if v} == {
        "commands": ["pytest -x"],
        "errors": ["exit 1"],
        "files_touched": ["/r/app.py"],
        "files_read": ["/r/README.md"],
    }


def test_the_prompt_is_what_the_person_typed_not_what_hooks_added_to_it() -> None:
    delta = parse_delta(_lines(_user("  Why?  "), _assistant("Because.")), 0, 0, "s")
    assert [(e["prompt"], e["reply"]) for e in delta.exchanges] == [("Why?", "Because.")]


def test_the_recorded_agent_stop_payload_is_read_as_a_turn_over_event_with_its_session_file() -> None:
    payloads = [json.loads(line) for line in HOOKS.read_text().splitlines()]
    names = [agents.normalised_event("copilot", p["stdin"]).get("hook_event_name") for p in payloads]
    assert names == [None, None, None, "agentStop", None, None, None, "agentStop", None]
    stop = agents.normalised_event("copilot", payloads[3]["stdin"])
    assert stop["transcript_path"].endswith(f"/session-state/{SESSION_ID}/events.jsonl")
    assert stop["session_id"] == SESSION_ID
    assert agents.TRANSCRIPTS["copilot"] == "memoria_hook_client.copilot_transcript"
