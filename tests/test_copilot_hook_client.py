"""The hook client with `--agent copilot`, without the CLI: the events GitHub Copilot CLI 1.0.102 sent in
a recorded run (tests/fixtures/copilot/) go to Copilot's routes under the field names the server
reads, Copilot's answer shape is printed as it came, and with no server nothing is printed at all
(the real CLI: tests/test_copilot_cli_hooks.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from app.hooks.hosts import COPILOT
from tests.test_hook_command import canned_server, run_hook

FIXTURES = Path(__file__).parent / "fixtures" / "copilot"
SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "memoria-hook"
PROMPT = "Which branch does wombat-4 ship its releases from?"


def _recorded(event_name: str) -> dict[str, Any]:
    lines = (FIXTURES / "hooks-1.0.102.jsonl").read_text().splitlines()
    stdin: dict[str, Any] = next(e["stdin"] for e in map(json.loads, lines) if e["event"] == event_name)
    return stdin


def test_copilots_answer_carries_the_context_at_the_top_of_the_object() -> None:
    assert COPILOT.context(COPILOT.prompt_event, "#1 a memory") == {"additionalContext": "#1 a memory"}


def test_the_prompt_hook_sends_copilots_camel_case_event_to_its_route_under_the_servers_names(
    tmp_path: Path,
) -> None:
    received: list[tuple[bytes, bytes]] = []
    body = json.dumps({"additionalContext": "#1 a memory"}).encode()
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    argv = [sys.executable, "-S", str(SCRIPT), "user-prompt-submit", "--agent", "copilot"]
    with canned_server(answer, received) as url:
        run = run_hook(tmp_path, json.dumps(_recorded("userPromptSubmitted")).encode(), url=url, argv=argv)
    assert (run.returncode, run.stderr) == (0, "")
    assert json.loads(run.stdout) == {"additionalContext": "#1 a memory"}
    ((head, sent),) = received
    assert head.startswith(b"POST /v1/hooks/copilot/user-prompt-submit"), head
    event = json.loads(sent)
    assert event["prompt"] == PROMPT
    assert event.get("session_id") == _recorded("userPromptSubmitted")["sessionId"]


def test_with_no_server_the_session_start_hook_prints_nothing_on_either_stream(tmp_path: Path) -> None:
    argv = [sys.executable, "-S", str(SCRIPT), "session-start", "--agent", "copilot"]
    run = run_hook(
        tmp_path, json.dumps(_recorded("sessionStart")).encode(), url="http://127.0.0.1:9", argv=argv
    )
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")
