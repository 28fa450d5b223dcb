"""`memoria share add | list | revoke` against the real app served on 127.0.0.1."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import asyncpg
import httpx
import pytest
import uvicorn
from click.testing import CliRunner, Result
from litestar import Litestar

from app.cli import main
from app.core.net import free_port
from tests.test_shares import user_key

START_TIMEOUT_S = 60.0


@pytest.fixture
def served(app: Litestar) -> Iterator[str]:
    """The test app behind uvicorn in a thread (the CLI speaks real HTTP); its URL."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT_S
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "uvicorn did not start"
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=START_TIMEOUT_S)


@pytest.fixture
async def alice_key(conn: asyncpg.Connection) -> str:
    return (await user_key(conn, "alice"))["Authorization"].removeprefix("Bearer ")


@pytest.fixture
async def bob_key(conn: asyncpg.Connection) -> str:
    return (await user_key(conn, "bob"))["Authorization"].removeprefix("Bearer ")


def memoria(url: str, key: str, *args: str) -> Result:
    env = {"MEMORIA_CLIENT__URL": url, "MEMORIA_CLIENT__API_KEY": key, "COLUMNS": "200"}
    return CliRunner().invoke(main, list(args), env=env)


def ok(result: Result) -> str:
    assert result.exit_code == 0, result.output
    return result.output


def test_share_add_list_and_revoke_through_the_api(served: str, alice_key: str, bob_key: str) -> None:
    alice, bob = alice_key, bob_key
    stored = httpx.post(
        f"{served}/v1/memories",
        json={"content": "The shop deploys with Terraform", "namespace": "shop"},
        headers={"Authorization": f"Bearer {alice}"},
    )
    assert stored.status_code == 201, stored.text

    added = ok(memoria(served, alice, "share", "add", "shop", "bob"))
    assert "shared shop with bob (read)" in added and "@alice/shop" in added
    changed = ok(memoria(served, alice, "share", "add", "shop", "bob", "--write"))
    assert "now sharing shop with bob (write)" in changed

    assert ok(memoria(served, alice, "share", "list")).splitlines() == [
        "shared by you:",
        "  shop  ->  bob  (write)",
        "shared with you: none",
    ]
    assert ok(memoria(served, bob, "share", "list")).splitlines() == [
        "shared by you: none",
        "shared with you:",
        "  @alice/shop  (write)",
    ]
    found = ok(memoria(served, bob, "list", "-n", "@alice/shop", "--json"))
    assert "Terraform" in found and '"namespace": "@alice/shop"' in found

    assert ok(memoria(served, alice, "share", "revoke", "shop", "bob")).strip() == "bob no longer has shop"
    assert "shared with you: none" in ok(memoria(served, bob, "share", "list"))
    refused = memoria(served, bob, "list", "-n", "@alice/shop")
    assert refused.exit_code == 1 and "404" in refused.output


def test_share_errors_are_one_readable_line(served: str, alice_key: str) -> None:
    alice = alice_key
    unknown = memoria(served, alice, "share", "add", "nothing", "bob")
    assert unknown.exit_code == 1
    assert unknown.output.strip() == "Error: 404 Not Found: namespace 'nothing' not found"
    never = memoria(served, alice, "share", "revoke", "nothing", "bob")
    assert never.exit_code == 1 and "is not shared with 'bob'" in never.output
