"""Memoria's OpenCode plugin (`app/hooks/opencode_plugin.js`) run by Node with OpenCode's hook calls
played by a small driver and the hook client played by a script: what it adds to a prompt's message,
what it hands the client, that a slow, silent or missing client adds nothing within the plugin's
timeout, and what it writes for capture when a session goes idle. The real OpenCode runs it in
tests/test_opencode_hooks.py; these pin what one real run cannot show."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from app.hooks.install_opencode import rendered

NODE = shutil.which("node")
"""Node.js, which the project needs anyway (npm); the plugin's runtime in OpenCode is Bun."""

PROMPT_PART = {
    "id": "prt_21feecdb6001tId81biVVELITJ",
    "sessionID": "ses_1",
    "messageID": "msg_1",
    "type": "text",
    "text": "Which branch ships?",
}
#: Longer than one read from a pipe (64 KiB on Linux), of 2- and 3-byte characters, and laid out so
#: that the first reads end inside a character: read chunk by chunk into a string, it would break.
RECALLED = "Recalled: " + "Σημείωση: η ομάδα κρατά το κλειδί ✓ " * 3000

#: Plays the hook client: appends its stdin to argv[1], then acts as argv[2] says (answering with
#: the text in the file argv[3]).
FAKE_CLIENT = """
import json, sys, time
with open(sys.argv[1], "a", encoding="utf-8") as log:
    log.write(sys.stdin.read() + "\\n")
mode = sys.argv[2]
if mode == "answer":
    answer = {"hookSpecificOutput": {"additionalContext": open(sys.argv[3], encoding="utf-8").read()}}
    print(json.dumps(answer, ensure_ascii=False))
elif mode == "sleep":
    time.sleep(10)
elif mode == "garbage":
    print("not json")
"""

DRIVER = """
import { MemoriaMemory } from "./memoria.mjs";
const mode = process.argv[2];
const messages = JSON.parse(process.env.MESSAGES ?? "[]");
const client = { session: { messages: async () => ({ data: messages }) } };
const hooks = await MemoriaMemory({ directory: "/repo", client });
if (mode === "prompt") {
  await hooks.event({ event: { type: "session.created", properties: { info: { id: "ses_1" } } } });
  const output = { message: {}, parts: [JSON.parse(process.env.PROMPT_PART)] };
  const started = Date.now();
  await hooks["chat.message"]({ sessionID: "ses_1" }, output);
  console.log(JSON.stringify({ parts: output.parts, ms: Date.now() - started }));
} else {
  await hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_1" } } });
}
"""


def _client(tmp_path: Path, log: str, mode: str, text: str = "") -> list[str]:
    script = tmp_path / "fake_client.py"
    script.write_text(FAKE_CLIENT)
    answer = tmp_path / f"{log}.answer"
    answer.write_text(text, encoding="utf-8")
    return [sys.executable, str(script), str(tmp_path / log), mode, str(answer)]


def _drive(
    tmp_path: Path, commands: dict[str, list[str]], mode: str, timeout_ms: int = 3000, **env: str
) -> subprocess.CompletedProcess[str]:
    assert NODE is not None, "Node.js is not installed"
    (tmp_path / "memoria.mjs").write_text(rendered(commands, timeout_ms))
    (tmp_path / "driver.mjs").write_text(DRIVER)
    return subprocess.run(
        [NODE, str(tmp_path / "driver.mjs"), mode],
        cwd=tmp_path,
        env={**os.environ, "PROMPT_PART": json.dumps(PROMPT_PART), **env},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def _prompted(run: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert (run.returncode, run.stderr) == (0, ""), run
    result: dict[str, Any] = json.loads(run.stdout)
    return result


def _payloads(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_the_clients_context_follows_the_prompt_as_synthetic_parts_and_it_gets_claude_codes_payload(
    tmp_path: Path,
) -> None:
    commands = {
        "session-start": _client(tmp_path, "start.log", "answer", "Pinned: the key facts."),
        "user-prompt-submit": _client(tmp_path, "recall.log", "answer", RECALLED),
    }
    parts = _prompted(_drive(tmp_path, commands, "prompt"))["parts"]
    assert parts[0] == PROMPT_PART
    assert [(p["type"], p["text"], p["synthetic"]) for p in parts[1:]] == [
        ("text", "Pinned: the key facts.", True),
        ("text", RECALLED, True),  # whole: no character split between chunks
    ]
    assert all((p["sessionID"], p["messageID"]) == ("ses_1", "msg_1") for p in parts)
    # OpenCode orders a message's parts by id: the context comes after the prompt, in order
    ids = [p["id"] for p in parts]
    assert ids == sorted(ids) and len(set(ids)) == 3 and all(len(i) == len(ids[0]) for i in ids)
    assert _payloads(tmp_path / "start.log") == [
        {"session_id": "ses_1", "cwd": "/repo", "hook_event_name": "SessionStart", "source": "startup"}
    ]
    assert _payloads(tmp_path / "recall.log") == [
        {
            "session_id": "ses_1",
            "cwd": "/repo",
            "hook_event_name": "UserPromptSubmit",
            "prompt": "Which branch ships?",
        }
    ]


@pytest.mark.parametrize("mode", ["sleep", "garbage", "missing"])
def test_a_slow_silent_or_missing_client_adds_nothing_within_the_plugins_timeout(
    tmp_path: Path, mode: str
) -> None:
    command = [str(tmp_path / "no-such-client")] if mode == "missing" else _client(tmp_path, "log", mode)
    result = _prompted(_drive(tmp_path, {"user-prompt-submit": command}, "prompt", timeout_ms=300))
    assert result["parts"] == [PROMPT_PART]
    assert result["ms"] < 2500  # the sleeping client is killed at 300 ms, not waited for (10 s)


def test_at_session_idle_the_finished_messages_go_to_a_private_file_and_capture_runs_on_it(
    tmp_path: Path,
) -> None:
    synthetic = {"type": "text", "text": "<memoria>recalled</memoria>", "synthetic": True}
    tool = {
        "type": "tool",
        "tool": "read",
        "callID": "c1",
        "state": {"status": "completed", "input": {"filePath": "a"}, "output": "long"},
    }
    messages = [
        {"info": {"id": "msg_1", "role": "user", "time": {"created": 1}}, "parts": [PROMPT_PART, synthetic]},
        {
            "info": {
                "id": "msg_2",
                "role": "assistant",
                "time": {"created": 2, "completed": 3},
                "finish": "stop",
                "path": {"cwd": "/repo"},
                "cost": 0,
            },
            "parts": [tool, {"type": "text", "text": "release-train"}],
        },
        {"info": {"id": "msg_3", "role": "user", "time": {"created": 4}}, "parts": [PROMPT_PART]},
        {"info": {"id": "msg_4", "role": "assistant", "time": {"created": 5}}, "parts": []},  # being written
    ]
    state = tmp_path / "state"
    commands = {"capture": _client(tmp_path, "capture.log", "answer", "")}
    run = _drive(
        tmp_path, commands, "idle", MEMORIA_CLIENT__STATE_DIR=str(state), MESSAGES=json.dumps(messages)
    )
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")
    deadline = time.monotonic() + 20  # the capture command runs detached
    while not (tmp_path / "capture.log").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    [payload] = _payloads(tmp_path / "capture.log")
    transcript = state / "opencode" / "ses_1.jsonl"
    assert payload == {
        "session_id": "ses_1",
        "transcript_path": str(transcript),
        "cwd": "/repo",
        "hook_event_name": "Stop",
    }
    assert stat.S_IMODE(transcript.stat().st_mode) == 0o600
    lines = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert [line["info"]["id"] for line in lines] == ["msg_1", "msg_2", "msg_3"]
    assert lines[0]["parts"] == [{"type": "text", "text": "Which branch ships?"}]
    assert lines[1] == {
        "info": {
            "id": "msg_2",
            "role": "assistant",
            "time": {"created": 2, "completed": 3},
            "finish": "stop",
            "path": {"cwd": "/repo"},
        },
        "parts": [
            {"type": "tool", "tool": "read", "state": {"status": "completed", "input": {"filePath": "a"}}},
            {"type": "text", "text": "release-train"},
        ],
    }
