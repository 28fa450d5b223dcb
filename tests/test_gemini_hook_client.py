"""The hook client with `--agent gemini`, without the CLI: the events Gemini CLI 0.61.0 sent in a
recorded run (tests/fixtures/gemini/) go to Gemini's routes, its answer is printed as one JSON
object, and capture reads the recorded session file (the real CLI: tests/test_gemini_cli_hooks.py)."""

from __future__ import annotations

import io
import json
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memoria_hook_client.capture_worker import main as capture_main
from tests.test_hook_command import canned_server, run_hook
from tests.test_spool import Stub

FIXTURES = Path(__file__).parent / "fixtures" / "gemini"
SESSION = FIXTURES / "session-resumed-with-tool-call.jsonl"
SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "memoria-hook"
PROMPT = "Which port does the walrus gateway listen on? Check gateway.toml."


def _recorded(event_name: str) -> dict[str, Any]:
    lines = (FIXTURES / "hooks-resumed-with-tool-call.jsonl").read_text().splitlines()
    event: dict[str, Any] = next(e for e in map(json.loads, lines) if e["hook_event_name"] == event_name)
    return event


def test_the_prompt_hook_sends_gemini_s_before_agent_prompt_without_hook_context_to_its_route(
    tmp_path: Path,
) -> None:
    received: list[tuple[bytes, bytes]] = []
    context = {"hookSpecificOutput": {"hookEventName": "BeforeAgent", "additionalContext": "#1 a memory"}}
    body = json.dumps(context).encode()
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    argv = [sys.executable, "-S", str(SCRIPT), "user-prompt-submit", "--agent", "gemini"]
    with canned_server(answer, received) as url:
        run = run_hook(tmp_path, json.dumps(_recorded("BeforeAgent")).encode(), url=url, argv=argv)
    assert (run.returncode, run.stderr) == (0, "")
    assert json.loads(run.stdout) == context
    ((head, sent),) = received
    assert head.startswith(b"POST /v1/hooks/gemini/user-prompt-submit"), head
    event = json.loads(sent)
    assert (event["prompt"], event["hook_event_name"]) == (PROMPT, "BeforeAgent")
    assert "transcript_path" not in event and "cwd" not in event


def test_with_no_server_the_prompt_hook_prints_nothing_on_either_stream(tmp_path: Path) -> None:
    argv = [sys.executable, "-S", str(SCRIPT), "session-start", "--agent", "gemini"]
    stdin = json.dumps(_recorded("SessionStart")).encode()
    run = run_hook(tmp_path, stdin, url="http://127.0.0.1:9", argv=argv)
    # Gemini CLI shows a hook's stderr (when its stdout is empty) as a system message
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")


@pytest.fixture
def stub() -> Iterator[Stub]:
    server = Stub()
    thread = threading.Thread(target=server.server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.server.shutdown()
    server.server.server_close()
    thread.join(timeout=5)


def test_capture_at_after_agent_sends_the_recorded_session_to_gemini_s_capture_route(
    tmp_path: Path, stub: Stub
) -> None:
    repo = tmp_path / "quokka-9"
    (repo / ".git").mkdir(parents=True)
    env = {
        "MEMORIA_CLIENT__STATE_DIR": str(tmp_path / "state"),
        "MEMORIA_CLIENT__HOOK_LOG": str(tmp_path / "hook.log"),
        "MEMORIA_CLIENT__API_KEY": "mem_test_key",
        "MEMORIA_CLIENT__URL": stub.url,
        "MEMORIA_CLIENT__CAPTURE_FLUSH": "inline",
        "MEMORIA_CLIENT__HOOK_BUDGET_S": "10",
    }
    event = {**_recorded("AfterAgent"), "transcript_path": str(SESSION), "cwd": str(repo)}
    out = io.StringIO()
    stdin = io.BytesIO(json.dumps(event).encode())
    assert capture_main(["capture", "--agent", "gemini"], stdin, out, env) == 0
    assert out.getvalue() == ""
    ((path, _, exchanges),) = stub.requests
    assert path == "/v1/capture/gemini?namespace=repo%3Aquokka-9"
    assert [(e["turn"], e["prompt"], e["hook_event"]) for e in exchanges] == [
        (0, PROMPT, "AfterAgent"),
        (1, "And the proxy in front of it?", "AfterAgent"),
    ]
