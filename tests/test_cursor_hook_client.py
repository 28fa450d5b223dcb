"""Cursor's adapter without Cursor: the events its hook reference documents (tests/fixtures/cursor/,
whose header says where each came from) go through the real hook client to Cursor's routes, with its
workspace standing in for the `cwd` it does not send and its conversation as the session; its own
paths and the person's e-mail stay on this machine; the answer is printed in Cursor's snake_case
shape; and with no server nothing is printed at all. No Cursor binary can be installed here
(docs/agents/cursor.md), so nothing in this file proves what Cursor itself does with the answer."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.hooks.hosts import CURSOR
from app.hooks.routes import OUTCOME_HEADER
from app.settings import HookSettings
from memoria_hook_client.agents import normalised_event
from tests.hook_client import ROOMY, client, hook_settings
from tests.test_hook_command import canned_server, run_hook

__all__ = ["client", "hook_settings"]

FIXTURES = Path(__file__).parent / "fixtures" / "cursor"
SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "memoria-hook"
NAMESPACE = "repo:numbat-7"


def _documented(event_name: str) -> dict[str, Any]:
    events = json.loads((FIXTURES / "documented-events.json").read_text())["events"]
    return {name: value for name, value in events[event_name].items() if not name.startswith("_")}


def test_cursors_answer_carries_the_context_as_snake_case_additional_context() -> None:
    assert CURSOR.context(CURSOR.start_event, "#1 a memory") == {"additional_context": "#1 a memory"}


def test_a_cursor_event_reads_its_workspace_as_cwd_and_its_conversation_as_the_session() -> None:
    prompt = _documented("beforeSubmitPrompt")
    event = normalised_event("cursor", prompt)
    assert event["cwd"] == "/home/dev/numbat-7"
    assert event["session_id"] == prompt["conversation_id"]
    assert "workspace_roots" not in event and "user_email" not in event
    # sessionStart names its session itself (the same id); an explicit cwd is kept
    start = normalised_event("cursor", {**_documented("sessionStart"), "cwd": "/srv/elsewhere"})
    assert (start["session_id"], start["cwd"]) == (
        _documented("sessionStart")["session_id"],
        "/srv/elsewhere",
    )


def test_the_session_start_hook_sends_cursors_event_to_its_route_and_prints_the_answer_as_it_came(
    tmp_path: Path,
) -> None:
    received: list[tuple[bytes, bytes]] = []
    body = json.dumps({"additional_context": "#1 a memory"}).encode()
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    argv = [sys.executable, "-S", str(SCRIPT), "session-start", "--agent", "cursor"]
    with canned_server(answer, received) as url:
        run = run_hook(tmp_path, json.dumps(_documented("sessionStart")).encode(), url=url, argv=argv)
    assert (run.returncode, run.stderr) == (0, "")
    assert json.loads(run.stdout) == {"additional_context": "#1 a memory"}
    ((head, sent),) = received
    request_line = unquote(head.split(b"\r\n")[0].decode())
    assert request_line.startswith(f"POST /v1/hooks/cursor/session-start?namespace={NAMESPACE} "), (
        request_line
    )
    event = json.loads(sent)
    assert (event["hook_event_name"], event["session_id"]) == (
        "sessionStart",
        _documented("sessionStart")["session_id"],
    )
    # paths on this machine and the person's e-mail address are not sent
    assert not {"cwd", "transcript_path", "workspace_roots", "user_email"} & set(event)


def test_with_no_server_the_session_start_hook_prints_nothing_on_either_stream(tmp_path: Path) -> None:
    argv = [sys.executable, "-S", str(SCRIPT), "session-start", "--agent", "cursor"]
    run = run_hook(
        tmp_path, json.dumps(_documented("sessionStart")).encode(), url="http://127.0.0.1:9", argv=argv
    )
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")


Client = AsyncTestClient[Litestar]


@pytest.mark.parametrize("hook_settings", [HookSettings(budget_ms=ROOMY)])
async def test_cursors_session_start_route_answers_additional_context_once_per_conversation(
    client: Client, alice: dict[str, str]
) -> None:
    fact = "Numbat-7 publishes its invoices to the amber-ledger queue, never to the legacy one."
    stored = await client.post(
        "/v1/memories", json=[{"content": fact, "namespace": NAMESPACE, "pinned": True}], headers=alice
    )
    assert stored.status_code == 201, stored.text
    start = normalised_event("cursor", _documented("sessionStart"))
    start = {name: value for name, value in start.items() if name not in ("cwd", "transcript_path")}
    first = await client.post(
        "/v1/hooks/cursor/session-start", json=start, headers=alice, params={"namespace": NAMESPACE}
    )
    assert first.status_code == 200, first.text
    assert first.headers[OUTCOME_HEADER].startswith("injected:"), first.headers[OUTCOME_HEADER]
    assert list(first.json()) == ["additional_context"] and fact in first.json()["additional_context"]
    # The same conversation started again through Claude Code's hooks, which Cursor also runs when
    # its third-party hooks are on: the session's ledger keeps the memory from coming twice.
    again = {"hook_event_name": "SessionStart", "source": "startup", "session_id": start["session_id"]}
    second = await client.post(
        "/v1/hooks/claude-code/session-start", json=again, headers=alice, params={"namespace": NAMESPACE}
    )
    assert second.status_code == 200, second.text
    assert fact not in json.dumps(second.json()), second.json()
