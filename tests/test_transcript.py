"""Claude Code transcripts read into exchanges (`memoria_hook_client.transcript`), private spans removed.

`session-tools-compact.jsonl` is built in Claude Code's JSONL shape: tool use (Read, Edit, Bash with
an error, a Task whose subagent ran inline as sidechain entries, MultiEdit, Write), a `/compact`
(meta caveat, command wrapper, local-command output, compact boundary, compact summary), a prompt
interrupted before any reply, and a partial last line. `real-claude-p*.jsonl` were recorded from a
real `claude -p` run (see the README next to them).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memoria_hook_client import transcript
from memoria_hook_client.private import strip_private
from memoria_hook_client.transcript import (
    MAX_DIGEST_ITEM_CHARS,
    MAX_DIGEST_ITEMS,
    MAX_LINE_CHARS,
    MAX_TEXT_CHARS,
    parse_delta,
    read_delta,
)

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
TOOLS = FIXTURES / "session-tools-compact.jsonl"
REAL = FIXTURES / "real-claude-p.jsonl"
SID = "5f0c2a8e-3b1d-4e7a-9c62-0d4b8e1f7a93"


def _line(entry: dict[str, Any]) -> bytes:
    return json.dumps(entry).encode() + b"\n"


def _prompt(text: str, stamp: str = "2026-11-20T10:00:00.000Z") -> dict[str, Any]:
    return {
        "type": "user",
        "isSidechain": False,
        "message": {"role": "user", "content": text},
        "uuid": "u",
        "timestamp": stamp,
        "cwd": "/w",
        "gitBranch": "",
        "sessionId": SID,
    }


def _assistant(*blocks: dict[str, Any], stamp: str = "2026-11-20T10:00:01.000Z") -> dict[str, Any]:
    return {
        "type": "assistant",
        "isSidechain": False,
        "message": {"role": "assistant", "content": list(blocks), "stop_reason": "end_turn"},
        "uuid": "a",
        "timestamp": stamp,
        "sessionId": SID,
    }


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _tool(name: str, **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": "t", "name": name, "input": tool_input}


def _result(content: Any, is_error: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": "t", "content": content}
    if is_error:
        block["is_error"] = True
    return {
        "type": "user",
        "isSidechain": False,
        "message": {"role": "user", "content": [block]},
        "toolUseResult": content,
        "timestamp": "2026-11-20T10:00:02.000Z",
    }


def test_each_prompt_is_paired_with_the_final_text_reply_of_its_turn() -> None:
    delta = read_delta(str(TOOLS), 0, 0, SID)
    pairs = [(e["turn"], e["prompt"], e["reply"]) for e in delta.exchanges]
    assert pairs == [
        (
            0,
            "Where is the retry policy configured in this repo?",
            "The retry policy lives in app/retry.py: three attempts with exponential backoff (factor 2.0).",
        ),
        (
            1,
            "Raise the attempts to five and run the tests. <private>staging password is hunter2</private>",
            "ATTEMPTS is now 5 in app/retry.py and the test expects 5; the retry tests pass.",
        ),
        (2, "Thanks. Now document the change in the README.", "README.md now documents the five attempts."),
    ]
    first = delta.exchanges[0]
    assert first["session_id"] == SID
    assert first["started_at"] == "2026-11-20T09:00:00.000Z"
    assert first["ended_at"] == "2026-11-20T09:00:05.185Z"
    assert (first["cwd"], first["git_branch"]) == ("/home/dev/projects/retry-demo", "main")


def test_the_digest_names_files_commands_errors_and_subagents_once_each_in_order() -> None:
    digest = read_delta(str(TOOLS), 0, 0, SID).exchanges[1]["digest"]
    assert digest == {
        "files_touched": [
            "/home/dev/projects/retry-demo/app/retry.py",
            "/home/dev/projects/retry-demo/tests/test_retry.py",
        ],
        "files_read": [],
        # both runs' first line is the same command: listed once
        "commands": ["pytest -q tests/test_retry.py"],
        "errors": ["FAILED tests/test_retry.py::test_attempts - assert 3 == 5"],
        "subagents": ["Find other retry settings"],
    }


def test_sidechain_entries_are_neither_prompts_nor_replies() -> None:
    text = json.dumps(read_delta(str(TOOLS), 0, 0, SID, final=True).exchanges)
    assert "SIDECHAIN REPLY" not in text
    assert "Search the repository for other places" not in text
    assert "config.yaml" not in text  # the subagent's Read is its own, not the main thread's


def test_compact_summary_and_slash_command_entries_are_not_turns() -> None:
    delta = read_delta(str(TOOLS), 0, 0, SID, final=True)
    assert [e["turn"] for e in delta.exchanges] == [0, 1, 2, 3]
    text = json.dumps(delta.exchanges)
    for absent in ("being continued from a previous conversation", "/compact", "Compacted.", "Caveat:"):
        assert absent not in text
    assert delta.turn == 4


def test_a_prompt_without_a_reply_stays_pending_with_the_cursor_on_its_line() -> None:
    data = TOOLS.read_bytes()
    delta = read_delta(str(TOOLS), 0, 0, SID)
    assert delta.pending
    assert (delta.turn, len(delta.exchanges)) == (3, 3)
    assert json.loads(data[delta.offset : data.index(b"\n", delta.offset)])["message"]["content"] == (
        "Also bump the version to 1.4.0."
    )
    again = read_delta(str(TOOLS), delta.offset, delta.turn, SID)
    assert (again.exchanges, again.offset, again.turn, again.pending) == ([], delta.offset, 3, True)


def test_session_end_stores_the_unanswered_exchange_with_what_there_is() -> None:
    first = read_delta(str(TOOLS), 0, 0, SID)
    last = read_delta(str(TOOLS), first.offset, first.turn, SID, final=True)
    assert [(e["turn"], e["prompt"], e["reply"]) for e in last.exchanges] == [
        (3, "Also bump the version to 1.4.0.", "[Request interrupted by user for tool use]")
    ], "the interruption is the reply: the server's skip rules see it"
    assert last.exchanges[0]["digest"]["commands"] == ["sed -i 's/1.3.0/1.4.0/' pyproject.toml"]
    assert not last.pending


def test_a_partial_last_line_is_left_for_the_next_read() -> None:
    data = TOOLS.read_bytes()
    assert not data.endswith(b"\n")
    delta = read_delta(str(TOOLS), 0, 0, SID, final=True)
    assert delta.offset == data.rfind(b"\n") + 1 < len(data)


def test_reading_line_by_line_gives_the_same_exchanges_as_one_read() -> None:
    data = TOOLS.read_bytes()
    whole = parse_delta(data, 0, 0, SID).exchanges
    offset, turn, pieces = 0, 0, []
    for end in range(1, len(data) + 1, 97):  # cut anywhere, even inside lines
        delta = parse_delta(data[offset:end], offset, turn, SID)
        pieces += delta.exchanges
        offset, turn = delta.offset, delta.turn
    delta = parse_delta(data[offset:], offset, turn, SID)
    assert pieces + delta.exchanges == whole


def test_a_reply_finishes_the_turn_only_once_no_tool_call_is_outstanding() -> None:
    prompt = _line(_prompt("Fix the bug"))
    talking = prompt + _line(_assistant(_text("Let me look."), _tool("Read", file_path="/w/a.py")))
    assert parse_delta(talking, 0, 0, SID).pending
    answered = talking + _line(_result("code")) + _line(_assistant(_text("Fixed in a.py.")))
    (exchange,) = parse_delta(answered, 0, 0, SID).exchanges
    assert exchange["reply"] == "Fixed in a.py."
    assert exchange["digest"]["files_read"] == ["/w/a.py"]
    assert exchange["git_branch"] is None  # "" outside a repository


def test_text_without_a_stop_reason_is_final_only_when_the_event_says_the_turn_is_over() -> None:
    streaming = {
        **_assistant(_text("Let me check first.")),
        "message": {"role": "assistant", "stop_reason": None, "content": [_text("Let me check first.")]},
    }
    data = _line(_prompt("Fix it")) + _line(streaming)
    assert parse_delta(data, 0, 0, SID).pending  # its tool_use may still be on the way (PreCompact)
    (exchange,) = parse_delta(data, 0, 0, SID, turn_over=True).exchanges  # Stop: the turn ended
    assert exchange["reply"] == "Let me check first."


def test_a_reply_split_over_entries_of_one_message_is_joined() -> None:
    data = (
        _line(_prompt("Explain"))
        + _line(_assistant({"type": "thinking", "thinking": "hmm", "signature": "s"}))
        + _line(_assistant(_text("Part one.")))
        + _line(_assistant(_text("Part two.")))
    )
    (exchange,) = parse_delta(data, 0, 0, SID).exchanges
    assert exchange["reply"] == "Part one.\n\nPart two."


def test_meta_and_interruption_entries_are_not_prompts() -> None:
    meta = {**_prompt("Caveat: local commands"), "isMeta": True}
    data = (
        _line(_prompt("Real question"))
        + _line(_assistant(_text("Answer.")))
        + _line(meta)
        + _line(_prompt("<command-name>/clear</command-name>"))
        + _line(_prompt("<local-command-stdout>done</local-command-stdout>"))
        + _line(_prompt("<bash-input>ls</bash-input>"))
        + _line(_prompt("[Request interrupted by user]"))
    )
    delta = parse_delta(data, 0, 0, SID)
    assert [e["prompt"] for e in delta.exchanges] == ["Real question"]
    assert delta.turn == 1


def test_what_the_server_would_refuse_is_cleaned_here() -> None:
    data = _line(_prompt("Q\x00uery", stamp="yesterday")) + _line(
        _assistant(_tool("Bash", command="echo \x00hi"), _text("A\x00."), stamp="2026-11-20T10:00:01+02:00")
    )
    (exchange,) = parse_delta(data, 0, 0, SID).exchanges
    assert (exchange["prompt"], exchange["reply"], exchange["digest"]["commands"]) == (
        "Query",
        "A.",
        ["echo hi"],
    )
    assert (exchange["started_at"], exchange["ended_at"]) == (None, "2026-11-20T10:00:01+02:00")


def test_broken_lines_are_skipped_without_losing_the_rest() -> None:
    data = _line(_prompt("Q")) + b"{not json\n" + b"\xff\xfe\n" + b"[1, 2]\n" + _line(_assistant(_text("A.")))
    (exchange,) = parse_delta(data, 0, 0, SID).exchanges
    assert (exchange["prompt"], exchange["reply"]) == ("Q", "A.")


def test_digest_items_and_texts_are_capped_to_what_the_server_accepts() -> None:
    tools = [_tool("Bash", command=f"make target-{i}") for i in range(MAX_DIGEST_ITEMS + 10)]
    tools.append(_tool("Write", file_path="/w/" + "x" * 1000))
    tools.append(_tool("Bash", command="y" * 1000 + "\nsecond line"))
    data = (
        _line(_prompt("p" * (MAX_TEXT_CHARS + 50)))
        + _line(_assistant(*tools))
        + _line(_result([{"type": "text", "text": "\n  boom: " + "z" * 1000}], is_error=True))
        + _line(_assistant(_text("r" * (MAX_TEXT_CHARS + 50))))
    )
    (exchange,) = parse_delta(data, 0, 0, SID).exchanges
    digest = exchange["digest"]
    assert len(digest["commands"]) == MAX_DIGEST_ITEMS
    assert digest["commands"][:2] == ["make target-0", "make target-1"]
    assert len(digest["files_touched"][0]) == MAX_DIGEST_ITEM_CHARS
    assert digest["errors"][0].startswith("boom: ") and len(digest["errors"][0]) == MAX_LINE_CHARS
    assert len(exchange["prompt"]) == len(exchange["reply"]) == MAX_TEXT_CHARS


def test_a_transcript_shorter_than_the_cursor_is_read_again_from_the_top(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(_line(_prompt("Q")) + _line(_assistant(_text("A."))))
    delta = read_delta(str(path), 10_000, 7, SID)
    assert [(e["turn"], e["prompt"]) for e in delta.exchanges] == [(0, "Q")]


def test_a_long_transcript_is_read_in_bounded_steps_and_a_huge_turn_still_moves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(transcript, "MAX_READ_BYTES", 2000)
    path = tmp_path / "t.jsonl"
    path.write_bytes(TOOLS.read_bytes()[: TOOLS.read_bytes().rfind(b"\n") + 1])
    whole = read_delta(str(TOOLS), 0, 0, SID, final=True).exchanges
    offset, turn, exchanges, runs = 0, 0, [], 0
    while runs < 50:
        runs += 1
        delta = read_delta(str(path), offset, turn, SID)
        exchanges += delta.exchanges
        if (delta.offset, delta.turn) == (offset, turn):
            break
        offset, turn = delta.offset, delta.turn
    assert runs > 3  # several bounded reads, each one moving on
    assert exchanges == whole[:3]  # the fourth turn has no reply yet
    assert read_delta(str(path), offset, turn, SID, final=True).exchanges == whole[3:]


def test_a_real_claude_p_transcript_yields_its_three_turns_with_digests() -> None:
    delta = read_delta(str(REAL), 0, 0, SID)
    assert not delta.pending
    assert [(e["turn"], e["prompt"], e["reply"]) for e in delta.exchanges] == [
        (
            0,
            "List the files here, write notes.txt with hello, then show does-not-exist.txt",
            "I listed the files, wrote notes.txt, and the missing file could not be read.",
        ),
        (
            1,
            "This is the second prompt: change hello to hello world in notes.txt",
            "I edited notes.txt to say hello world.",
        ),
        (
            2,
            "This is the third prompt: ask a subagent to list the files",
            "The subagent reports README.md and notes.txt.",
        ),
    ]
    first, second, third = (e["digest"] for e in delta.exchanges)
    assert first["commands"] == ["ls", "cat does-not-exist.txt"]
    assert first["errors"] == ["Exit code 1"]
    assert first["files_touched"] == ["/home/dev/demo-project/notes.txt"]
    assert second["files_touched"] == ["/home/dev/demo-project/notes.txt"]
    assert third["subagents"] == ["List project files"]
    assert delta.exchanges[0]["git_branch"] == "master"
    assert delta.offset == REAL.stat().st_size


def test_a_real_subagent_transcript_has_no_exchanges_of_its_own() -> None:
    delta = read_delta(str(FIXTURES / "real-claude-p-subagent.jsonl"), 0, 0, SID, final=True)
    assert (delta.exchanges, delta.turn) == ([], 0)


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("keep <private>secret</private> this", "keep  this"),
        ("a <PRIVATE>x\ny</Private> b <private>z</private>c", "a  b c"),
        ("before <private>never closed\nall of this", "before "),
        ("stray </private> close", "stray  close"),
        ("nothing private here", "nothing private here"),
    ],
)
def test_private_spans_are_removed(text: str, kept: str) -> None:
    assert strip_private(text) == kept
