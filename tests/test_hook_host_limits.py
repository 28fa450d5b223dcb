"""Each host's injected context stays within the limit it documents (issue #37), through its own
routes on the server: with the settings at their most generous and more memories than fit, the
prompt hook's and the session-start hook's answers hold at most the host's `max_context_chars`
characters (and `max_context_bytes` bytes of UTF-8 for a host that counts bytes). The registry's
limits against each host's documentation are pinned by tests/test_hook_hosts.py."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.hooks.hosts import HOSTS, Host
from app.hooks.routes import OUTCOME_HEADER
from app.settings import HookSettings
from tests.hook_client import ROOMY, client, hook_settings
from tests.test_hook_hosts import FACTS, NAMESPACE

__all__ = ["client", "hook_settings"]

Client = AsyncTestClient[Litestar]
#: The most the settings allow (their upper bounds): only the host's limit can hold an answer back.
GENEROUS = HookSettings(
    budget_ms=ROOMY, max_results=50, max_context_chars=9_000, session_start_max_chars=9_000
)


def _context(answer: Any) -> str:
    """The longest text in a host's answer: its context, whatever shape the host reads it in."""
    if isinstance(answer, str):
        return answer
    if isinstance(answer, dict):
        answer = list(answer.values())
    if isinstance(answer, list):
        return max((_context(item) for item in answer), key=len, default="")
    return ""


def _assert_within(host: Host, context: str) -> None:
    assert context, f"{host.name}: no context injected"
    assert len(context) <= host.max_context_chars, (host.name, len(context))
    if host.max_context_bytes is not None:
        assert len(context.encode()) <= host.max_context_bytes, (host.name, len(context.encode()))


def test_the_memories_stored_here_are_more_than_any_host_takes() -> None:
    stored = "\n".join(FACTS)
    assert all(len(stored) > host.max_context_chars for host in HOSTS.values())


@pytest.mark.parametrize("hook_settings", [GENEROUS])
@pytest.mark.parametrize("host", list(HOSTS.values()), ids=list(HOSTS))
async def test_each_hosts_prompt_hook_context_stays_within_its_limit(
    client: Client, alice: dict[str, str], host: Host
) -> None:
    body = [{"content": fact, "namespace": NAMESPACE, "category": "fact"} for fact in FACTS]
    assert (await client.post("/v1/memories", json=body, headers=alice)).status_code == 201
    event = {
        "session_id": f"limits-{host.name}",
        "hook_event_name": host.prompt_event,
        "prompt": "How does the quokka deploy step run terraform plan and apply?",
    }
    response = await client.post(
        f"/v1/hooks/{host.name}/user-prompt-submit",
        json=event,
        headers=alice,
        params={"namespace": NAMESPACE},
    )
    assert response.status_code == 200, response.text
    assert response.headers[OUTCOME_HEADER].startswith("injected:"), response.headers[OUTCOME_HEADER]
    _assert_within(host, _context(response.json()))


@pytest.mark.parametrize("hook_settings", [GENEROUS])
@pytest.mark.parametrize("host", list(HOSTS.values()), ids=list(HOSTS))
async def test_each_hosts_session_start_context_stays_within_its_limit(
    client: Client, alice: dict[str, str], host: Host
) -> None:
    body = [{"content": fact, "namespace": NAMESPACE, "pinned": True} for fact in FACTS]
    assert (await client.post("/v1/memories", json=body, headers=alice)).status_code == 201
    event = {
        "session_id": f"limits-start-{host.name}",
        "hook_event_name": host.start_event,
        "source": "startup",
    }
    response = await client.post(
        f"/v1/hooks/{host.name}/session-start", json=event, headers=alice, params={"namespace": NAMESPACE}
    )
    assert response.status_code == 200, response.text
    context = _context(response.json())
    assert "The quokka deploy step" in context
    _assert_within(host, context)
