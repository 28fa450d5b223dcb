"""`GET /v1/memories/{id}/secrets`: the originals of a memory's placeholders, for its owner alone.

End to end: a stored credential comes back as its placeholder from every read (REST recall with
explain, the recall hook, the memory, the list) and as itself only here, with a `secrets:read` key
of its owner; each read is audited. A shared namespace's grantee, another user, a key without the
scope, a removed key and a tampered row all get a clear answer, never an original or a 500.
"""

from __future__ import annotations

import base64
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg
from litestar import Litestar
from litestar.testing import AsyncTestClient
from pydantic import SecretStr

from app.auth.scopes import READ, SECRETS_READ, WRITE
from app.auth.service import create_key, get_or_create_user
from app.embeddings import LocalEmbedder
from app.factory import create_app
from app.secrets import SecretSettings
from app.settings import HookSettings, Settings

Client = AsyncTestClient[Litestar]
Headers = dict[str, str]

HOOK = "/v1/hooks/claude-code/user-prompt-submit"
NAMESPACE = "repo:shop-api"
GITHUB = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
NOTE = f"CI pushes release tags to GitHub with the token {GITHUB}"


def key_setting() -> str:
    return base64.b64encode(os.urandom(32)).decode()


def configured(settings: Settings, keys: dict[str, str] | None) -> Settings:
    secrets = SecretSettings(keys={key_id: SecretStr(key) for key_id, key in (keys or {}).items()})
    return settings.model_copy(update={"secrets": secrets, "hooks": HookSettings(budget_ms=10_000)})


@asynccontextmanager
async def running(settings: Settings, embedder: LocalEmbedder) -> AsyncIterator[Client]:
    async with AsyncTestClient(app=create_app(settings, embedder=embedder)) as client:
        yield client


async def key_for(conn: asyncpg.Connection, user: str, *scopes: str) -> tuple[int, Headers]:
    await get_or_create_user(conn, user)
    created = await create_key(conn, user, scopes=scopes)
    return created.id, {"Authorization": f"Bearer {created.key}"}


async def store(client: Client, headers: Headers, content: str = NOTE) -> int:
    response = await client.post(
        "/v1/memories", json={"content": content, "namespace": NAMESPACE}, headers=headers
    )
    assert response.status_code == 201, response.text
    memory_id: int = response.json()["id"]
    return memory_id


async def secrets_of(client: Client, memory_id: int, headers: Headers) -> Any:
    return await client.get(f"/v1/memories/{memory_id}/secrets", headers=headers)


async def audit(conn: asyncpg.Connection) -> list[asyncpg.Record]:
    """The audit rows, `memory_id` as the API names the memory (the table keeps its internal id)."""
    return list(
        await conn.fetch(
            "SELECT r.id, m.public_id AS memory_id, r.user_id, r.key_id, r.secrets, r.client, r.read_at"
            " FROM secret_reads r LEFT JOIN memories m ON m.id = r.memory_id ORDER BY r.id"
        )
    )


async def test_a_stored_secret_is_only_a_placeholder_everywhere_but_its_owners_secrets_read(
    settings: Settings, embedder: LocalEmbedder, conn: asyncpg.Connection
) -> None:
    _, writer = await key_for(conn, "alice", READ, WRITE)
    reader_id, reader = await key_for(conn, "alice", SECRETS_READ)
    async with running(configured(settings, {"k1": key_setting()}), embedder) as client:
        memory_id = await store(client, writer)
        placeholder = "[secret:github-token#1]"

        recalled = await client.post(
            "/v1/recall",
            json={
                "query": "how does CI push release tags to GitHub?",
                "namespace": NAMESPACE,
                "explain": True,
            },
            headers=writer,
        )
        assert recalled.status_code == 200
        assert [hit["id"] for hit in recalled.json()["results"]][:1] == [memory_id]
        assert placeholder in recalled.json()["results"][0]["content"]

        event = {
            "session_id": "9f1c2d4e-0000-4000-8000-000000000000",
            "hook_event_name": "UserPromptSubmit",
            "cwd": "/home/dev/shop-api",
            "prompt": "How does CI push the release tags to GitHub?",
        }
        hooked = await client.post(HOOK, json=event, headers=writer, params={"namespace": NAMESPACE})
        assert hooked.status_code == 200, hooked.text
        context = hooked.json()["hookSpecificOutput"]["additionalContext"]
        assert f"#{memory_id}" in context and placeholder in context

        read = await client.get(f"/v1/memories/{memory_id}", headers=writer)
        listed = await client.get(f"/v1/memories?namespace={NAMESPACE}", headers=writer)
        assert read.json()["has_secrets"] is True and read.json()["content"].endswith(placeholder)
        for response in (recalled, hooked, read, listed):
            assert GITHUB not in response.text

        refused = await secrets_of(client, memory_id, writer)  # read+write, not secrets:read
        assert refused.status_code == 403 and SECRETS_READ in refused.json()["detail"]
        assert await audit(conn) == []

        opened = await secrets_of(client, memory_id, reader)
    assert opened.status_code == 200, opened.text
    assert opened.headers["cache-control"] == "no-store"
    assert opened.json() == {
        "memory_id": memory_id,
        "secrets": [{"placeholder": placeholder, "kind": "github-token", "number": 1, "original": GITHUB}],
        "originals_kept": True,
        "not_kept": [],
        "detail": None,
    }
    (row,) = await audit(conn)
    alice_id = await conn.fetchval("SELECT id FROM users WHERE name = 'alice'")
    assert (row["memory_id"], row["user_id"], row["key_id"], row["secrets"]) == (
        memory_id,
        alice_id,
        reader_id,
        1,
    )
    assert row["client"], "the reader's address is recorded"


async def test_without_a_key_the_answer_says_the_originals_are_not_kept(
    settings: Settings, embedder: LocalEmbedder, conn: asyncpg.Connection
) -> None:
    _, owner = await key_for(conn, "alice", READ, WRITE, SECRETS_READ)
    async with running(configured(settings, None), embedder) as client:
        memory_id = await store(client, owner)
        response = await secrets_of(client, memory_id, owner)
    assert response.status_code == 200
    body = response.json()
    assert body["secrets"] == [] and body["originals_kept"] is False
    assert body["not_kept"] == ["[secret:github-token#1]"]
    assert "MEMORIA_SECRETS__KEYS" in body["detail"] and "keeps nothing" in body["detail"]
    assert [(row["memory_id"], row["secrets"]) for row in await audit(conn)] == [(memory_id, 0)]


async def test_only_the_owner_reads_originals_even_of_a_shared_namespace(
    settings: Settings, embedder: LocalEmbedder, conn: asyncpg.Connection
) -> None:
    _, owner = await key_for(conn, "alice", READ, WRITE)
    _, grantee = await key_for(conn, "bob", READ, WRITE, SECRETS_READ)
    _, stranger = await key_for(conn, "carol", READ, SECRETS_READ)
    async with running(configured(settings, {"k1": key_setting()}), embedder) as client:
        memory_id = await store(client, owner)
        await conn.execute(
            """
            INSERT INTO namespace_shares (namespace_id, grantee_id, permission)
            SELECT n.id, (SELECT id FROM users WHERE name = 'bob'), 'write'
            FROM namespaces n WHERE n.name = $1
            """,
            NAMESPACE,
        )
        seen = await client.get(f"/v1/memories/{memory_id}", headers=grantee)
        assert seen.status_code == 200 and GITHUB not in seen.text, "the grantee sees the placeholder"
        for headers in (grantee, stranger):
            response = await secrets_of(client, memory_id, headers)
            assert response.status_code == 404 and GITHUB not in response.text
        assert (await secrets_of(client, memory_id + 1000, grantee)).status_code == 404

        _, owner_reader = await key_for(conn, "alice", SECRETS_READ)
        await client.delete(f"/v1/memories/{memory_id}", headers=owner)
        assert (await secrets_of(client, memory_id, owner_reader)).status_code == 404
    assert await audit(conn) == []


async def test_a_removed_key_or_a_tampered_row_is_a_clear_409_and_no_read(
    settings: Settings, embedder: LocalEmbedder, conn: asyncpg.Connection
) -> None:
    _, owner = await key_for(conn, "alice", READ, WRITE, SECRETS_READ)
    async with running(configured(settings, {"old-key": key_setting()}), embedder) as client:
        memory_id = await store(client, owner)
    async with running(configured(settings, {"new-key": key_setting()}), embedder) as client:
        removed = await secrets_of(client, memory_id, owner)
    assert removed.status_code == 409
    assert removed.headers["content-type"].startswith("application/problem+json")
    assert "'old-key'" in removed.json()["detail"] and GITHUB not in removed.text

    good = key_setting()
    async with running(configured(settings, {"k1": good}), embedder) as client:
        other = await store(client, owner, f"the deploy bot uses {GITHUB[:-4]}Zz9Q as its token")
        await conn.execute(
            "UPDATE memory_secrets SET ciphertext = set_byte(ciphertext, 0, get_byte(ciphertext, 0) # 1)"
            " WHERE memory_id = (SELECT id FROM memories WHERE public_id = $1)",
            other,
        )
        tampered = await secrets_of(client, other, owner)
    assert tampered.status_code == 409
    assert "does not authenticate" in tampered.json()["detail"]
    assert await audit(conn) == []


async def test_the_memory_schema_and_the_route_are_in_the_openapi_document(client: Client) -> None:
    spec = (await client.get("/schema/openapi.json")).json()
    memory = spec["components"]["schemas"]["Memory"]
    assert memory["properties"]["has_secrets"]["type"] == "boolean" and "has_secrets" in memory["required"]
    route = spec["paths"]["/v1/memories/{memory_id}/secrets"]["get"]
    assert {"200", "403", "404", "409"} <= set(route["responses"])
