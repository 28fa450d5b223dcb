"""Every memory write path stores credentials as placeholders, and seals their originals with it.

Store (one and batch), PATCH (and so `memoria import`, which posts batches) redact content,
category, tags, expanded keywords, source and metadata's strings with one numbering; the content
hash, the embedding (local and hosted), the concept graph and the logs see only placeholders. With a
key, the originals are sealed in the memory's own transaction; without one they are kept nowhere.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import logging
import os
import random
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import asyncpg
import msgspec
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from pydantic import SecretStr

from app.embeddings import Embedder, LocalEmbedder
from app.factory import create_app
from app.jobs import JobWorker
from app.memories import MemoryService
from app.memories.schemas import Memory
from app.memories.settings import MemorySettings
from app.secrets import SecretSettings, Vault, read_sealed
from app.settings import DatabaseSettings, Settings
from memoria_bench.secrets.dev_corpus import POSITIVES
from tests.fakes.apps import headers_for
from tests.fakes.embedding_server import FakeEmbeddingServer
from tests.fakes.providers import openai_compatible, openai_settings

Client = AsyncTestClient[Litestar]
Headers = dict[str, str]

GITHUB = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
AWS_ID = "AKIAQ3EGRZ7WXMPLT4NV"
PASSWORD = "Sup3r$ecret!"
DB_PASSWORD = "Zq8Lm3Np5Rt7x"
SLACK = "xoxb-2841937465-9182736450-Kq8ZpL3mN7rT5vX1yW9cB4dF"
ORIGINALS = (GITHUB, AWS_ID, PASSWORD, DB_PASSWORD, SLACK)

FULL = {
    "content": f"CI pushes with {GITHUB}; the deploy user logs in with password={PASSWORD}",
    "namespace": "shop",
    "category": "credentials",
    "tags": ["deploy", GITHUB],
    "expanded_keywords": f"aws {AWS_ID} github token",
    "source": f"postgres://app:{DB_PASSWORD}@db.internal:5432/shop",
    "metadata": {"ci": {"slack": f"notify with {SLACK}", "steps": ["build", f"push {GITHUB}"]}, "n": 3},
}


def value_of(kind: str, seed: int = 0) -> str:
    """A credential of `kind` in its provider's format, from the dev corpus' seeded generator."""
    generate, _ = POSITIVES[kind]
    return generate(random.Random(f"{kind}-{seed}"))


def new_key() -> str:
    return base64.b64encode(os.urandom(32)).decode()


def sealing(settings: Settings, **extra: Any) -> Settings:
    """`settings` with one encryption key: originals are sealed under `k1`."""
    secrets = SecretSettings(keys={"k1": SecretStr(new_key())}, **extra)
    return settings.model_copy(update={"secrets": secrets})


@asynccontextmanager
async def running(settings: Settings, embedder: Embedder) -> AsyncIterator[Client]:
    async with AsyncTestClient(app=create_app(settings, embedder=embedder)) as client:
        yield client


async def store(client: Client, headers: Headers, body: Any, status: int = 201) -> Any:
    response = await client.post("/v1/memories", json=body, headers=headers)
    assert response.status_code == status, response.text
    return response.json()


async def everything_stored(conn: asyncpg.Connection) -> str:
    """Every row of every table that holds memory text or what was derived from it, as text."""
    parts = []
    for table in ("memories", "concepts", "memory_concepts", "concept_edges", "jobs", "namespaces"):
        parts.append(await conn.fetchval(f"SELECT coalesce(string_agg(t::text, E'\\n'), '') FROM {table} t"))
    return "\n".join(parts)


def leaked(text: str, originals: Sequence[str] = ORIGINALS) -> list[str]:
    """The originals (or their lower-case forms: concepts are normalised) found in `text`."""
    lowered = text.lower()
    return [original for original in originals if original in text or original.lower() in lowered]


async def drain(client: Client) -> None:
    """Run every due job (concept indexing, embedding) on the app's own loop."""
    jobs: JobWorker = client.app.state.jobs
    await asyncio.to_thread(lambda: client.blocking_portal.call(jobs.run_pending))


async def opened(conn: asyncpg.Connection, vault: Vault, memory_id: int) -> dict[int, str]:
    """The originals sealed for the memory with public id `memory_id` (the API's), opened."""
    internal = await conn.fetchval("SELECT id FROM memories WHERE public_id = $1", memory_id)
    return {secret.number: secret.original for secret in vault.open(await read_sealed(conn, internal))}


# --- store -----------------------------------------------------------------------------------------


async def test_store_redacts_every_free_text_field_with_one_numbering_and_seals_the_originals(
    settings: Settings, embedder: LocalEmbedder, conn: asyncpg.Connection, alice: Headers
) -> None:
    configured = sealing(settings)
    vault = Vault.from_settings(configured.secrets)
    async with running(configured, embedder) as client:
        stored = await store(client, alice, FULL)
        memory = (await client.get(f"/v1/memories/{stored['id']}", headers=alice)).json()

    assert memory["content"] == (
        "CI pushes with [secret:github-token#1]; the deploy user logs in with password=[secret:password#2]"
    )
    assert memory["tags"] == ["deploy", "[secret:github-token#1]"]  # the same token: the same number
    assert memory["expanded_keywords"] == "aws [secret:aws-access-key#3] github token"
    assert memory["source"] == "postgres://app:[secret:url-password#4]@db.internal:5432/shop"
    assert memory["metadata"] == {
        "ci": {
            "slack": "notify with [secret:slack-token#5]",
            "steps": ["build", "push [secret:github-token#1]"],
        },
        "n": 3,
    }
    assert memory["has_secrets"] is True
    assert leaked(await everything_stored(conn)) == []
    assert await opened(conn, vault, stored["id"]) == {
        1: GITHUB,
        2: PASSWORD,
        3: AWS_ID,
        4: DB_PASSWORD,
        5: SLACK,
    }
    same_transaction = await conn.fetchval(
        "SELECT bool_and(s.xmin::text = m.xmin::text)"
        " FROM memory_secrets s JOIN memories m ON m.id = s.memory_id"
    )
    assert same_transaction is True, "the originals are written by the memory's own transaction"


async def test_a_memory_without_credentials_is_stored_as_given_and_holds_no_secrets(
    client: Client, conn: asyncpg.Connection, alice: Headers
) -> None:
    body = {"content": "Deploy with Terraform; commit a1b2c3d4e5f60718293a4b5c6d7e8f9012345678 is live"}
    stored = await store(client, alice, body)
    memory = (await client.get(f"/v1/memories/{stored['id']}", headers=alice)).json()
    assert memory["content"] == body["content"] and memory["has_secrets"] is False
    assert await conn.fetchval("SELECT count(*) FROM memory_secrets") == 0


async def test_a_batch_redacts_each_memory_and_seals_each_under_its_own_id(
    settings: Settings, embedder: LocalEmbedder, conn: asyncpg.Connection, alice: Headers
) -> None:
    configured = sealing(settings)
    vault = Vault.from_settings(configured.secrets)
    body = [
        {"content": f"the CI token is {GITHUB}"},
        {"content": "nothing secret here, just a runbook step"},
        {"content": f"the bot posts with {SLACK}", "tags": [AWS_ID]},
    ]
    async with running(configured, embedder) as client:
        results = (await store(client, alice, body))["results"]
        first, plain, third = [
            (await client.get(f"/v1/memories/{r['id']}", headers=alice)).json() for r in results
        ]
    assert first["content"] == "the CI token is [secret:github-token#1]"
    assert third["content"] == "the bot posts with [secret:slack-token#1]"  # numbers count per memory
    assert third["tags"] == ["[secret:aws-access-key#2]"]
    assert [m["has_secrets"] for m in (first, plain, third)] == [True, False, True]
    assert await opened(conn, vault, first["id"]) == {1: GITHUB}
    assert await opened(conn, vault, plain["id"]) == {}
    assert await opened(conn, vault, third["id"]) == {1: SLACK, 2: AWS_ID}


async def test_a_failed_batch_leaves_neither_memories_nor_sealed_originals(
    settings: Settings, embedder: LocalEmbedder, conn: asyncpg.Connection, alice: Headers
) -> None:
    async with running(sealing(settings), embedder) as client:
        # the jobs are the last thing the store's transaction writes, after the sealed originals
        await conn.execute(
            """
            CREATE FUNCTION refuse_jobs() RETURNS trigger LANGUAGE plpgsql AS
            $$ BEGIN RAISE EXCEPTION 'no jobs today'; END $$;
            CREATE TRIGGER refuse_jobs BEFORE INSERT ON jobs
                FOR EACH STATEMENT EXECUTE FUNCTION refuse_jobs();
            """
        )
        response = await client.post(
            "/v1/memories",
            json=[{"content": f"token {GITHUB}"}, {"content": f"password={PASSWORD} for the db"}],
            headers=alice,
        )
    assert response.status_code == 500
    assert await conn.fetchval("SELECT count(*) FROM memories") == 0
    assert await conn.fetchval("SELECT count(*) FROM memory_secrets") == 0


async def test_duplicates_are_found_by_the_redacted_text(
    settings: Settings, embedder: LocalEmbedder, conn: asyncpg.Connection, alice: Headers
) -> None:
    configured = sealing(settings)
    vault = Vault.from_settings(configured.secrets)
    other = "ghp_Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2H1g0"
    async with running(configured, embedder) as client:
        first = await store(client, alice, {"content": f"the CI token is {GITHUB}"})
        again = await store(client, alice, {"content": f"the CI token is {other}"}, status=200)
    assert again["duplicate"] is True and again["id"] == first["id"]
    stored_hash = await conn.fetchval("SELECT content_hash FROM memories WHERE public_id = $1", first["id"])
    assert bytes(stored_hash) == hashlib.sha256(b"the CI token is [secret:github-token#1]").digest()
    assert await opened(conn, vault, first["id"]) == {1: GITHUB}, "the duplicate's original is not kept"
    assert leaked(await everything_stored(conn), [other]) == []


async def test_without_a_key_credentials_are_redacted_and_kept_nowhere(
    client: Client, conn: asyncpg.Connection, alice: Headers
) -> None:
    stored = await store(client, alice, FULL)
    memory = (await client.get(f"/v1/memories/{stored['id']}", headers=alice)).json()
    assert memory["has_secrets"] is True and "[secret:github-token#1]" in memory["content"]
    assert leaked(await everything_stored(conn)) == []
    assert await conn.fetchval("SELECT count(*) FROM memory_secrets") == 0


async def test_with_redaction_off_text_is_stored_as_given(
    settings: Settings, embedder: LocalEmbedder, conn: asyncpg.Connection, alice: Headers
) -> None:
    configured = sealing(settings, redact=False)
    async with running(configured, embedder) as client:
        stored = await store(client, alice, {"content": f"the CI token is {GITHUB}", "tags": [AWS_ID]})
        memory = (await client.get(f"/v1/memories/{stored['id']}", headers=alice)).json()
        patched = await client.patch(
            f"/v1/memories/{stored['id']}", json={"source": f"password={PASSWORD}"}, headers=alice
        )
    assert memory["content"] == f"the CI token is {GITHUB}" and memory["tags"] == [AWS_ID]
    assert memory["has_secrets"] is False
    assert patched.json()["source"] == f"password={PASSWORD}"
    assert await conn.fetchval("SELECT count(*) FROM memory_secrets") == 0


# --- names --------------------------------------------------------------------------------------------


async def test_a_namespace_or_session_id_holding_a_credential_is_refused_and_nothing_is_stored(
    client: Client, conn: asyncpg.Connection, alice: Headers
) -> None:
    # names are stored and shown as given (a placeholder would make another name): refused, not redacted
    named = f"proj-{GITHUB}"
    exchange = {"session_id": "s-1", "turn": 0, "prompt": "Which queue?", "reply": "The invoices one."}
    refused = [
        await client.post(
            "/v1/memories", json={"content": "Deploys run from main", "namespace": named}, headers=alice
        ),
        await client.post(
            "/v1/memories", json=[{"content": "one"}, {"content": "two", "namespace": named}], headers=alice
        ),
        await client.post(
            "/v1/capture/claude-code",
            params={"namespace": named},
            json={"exchanges": [exchange]},
            headers=alice,
        ),
        await client.post(
            "/v1/capture/claude-code",
            json={"exchanges": [exchange, {**exchange, "turn": 1, "session_id": f"s-{GITHUB}"}]},
            headers=alice,
        ),
    ]
    for answer, where in zip(
        refused, ["namespace", "[1].namespace", "namespace", "exchanges[1].session_id"], strict=True
    ):
        assert answer.status_code == 422, answer.text
        assert answer.headers["content-type"].startswith("application/problem+json")
        detail = answer.json()["detail"]
        assert detail.startswith(f"{where} holds what looks like a credential (github-token)"), detail
        assert GITHUB not in answer.text
    assert leaked(await everything_stored(conn)) == []
    assert await conn.fetchval("SELECT count(*) FROM memories") == 0


# --- length limits -----------------------------------------------------------------------------------


async def test_placeholders_that_outgrow_a_column_answer_422_not_500(
    settings: Settings, embedder: LocalEmbedder, conn: asyncpg.Connection, alice: Headers
) -> None:
    roomy = settings.model_copy(update={"memories": MemorySettings(max_content_chars=100_000)})
    short_password = "pwd: Xk9#q2Lm!z"  # 10 characters become `[secret:password#1]` (19)
    content = "x" * (100_000 - len(short_password) - 1) + " " + short_password
    category = "c" * (64 - len(short_password) - 1) + " " + short_password
    async with running(roomy, embedder) as client:
        long = await client.post("/v1/memories", json={"content": content}, headers=alice)
        labelled = await client.post(
            "/v1/memories", json={"content": "a note", "category": category}, headers=alice
        )
        fits = await client.post(
            "/v1/memories", json={"content": f"the db password is {PASSWORD}"}, headers=alice
        )
        edited = await client.patch(
            f"/v1/memories/{fits.json()['id']}", json={"category": category}, headers=alice
        )
    for response, field in ((long, "content"), (labelled, "category"), (edited, "category")):
        assert response.status_code == 422, response.text
        assert field in response.json()["detail"] and "placeholders" in response.json()["detail"]
    assert fits.status_code == 201
    assert await conn.fetchval("SELECT count(*) FROM memories") == 1


# --- PATCH -------------------------------------------------------------------------------------------


async def test_patch_numbers_new_credentials_after_the_memorys_and_drops_originals_no_field_holds(
    settings: Settings, embedder: LocalEmbedder, conn: asyncpg.Connection, alice: Headers
) -> None:
    configured = sealing(settings)
    vault = Vault.from_settings(configured.secrets)
    async with running(configured, embedder) as client:
        stored = await store(
            client,
            alice,
            {"content": f"token {GITHUB} and password={PASSWORD}", "tags": [SLACK]},
        )
        url = f"/v1/memories/{stored['id']}"
        # #1 github stays in the content, #2 password leaves it, #3 slack stays in the tags
        first = await client.patch(
            url, json={"content": f"token [secret:github-token#1] and aws {AWS_ID}"}, headers=alice
        )
        assert first.status_code == 200, first.text
        assert first.json()["content"] == "token [secret:github-token#1] and aws [secret:aws-access-key#4]"
        assert await opened(conn, vault, stored["id"]) == {1: GITHUB, 3: SLACK, 4: AWS_ID}

        # a change that leaves every placeholder where it is keeps every original
        kept = await client.patch(url, json={"importance": 0.9, "category": "ops"}, headers=alice)
        assert kept.status_code == 200 and kept.json()["has_secrets"] is True
        assert await opened(conn, vault, stored["id"]) == {1: GITHUB, 3: SLACK, 4: AWS_ID}

        # a placeholder moved to another field keeps its original; one gone from all fields does not
        moved = await client.patch(
            url,
            json={"tags": ["[secret:aws-access-key#4]"], "metadata": {"bot": f"{SLACK}"}},
            headers=alice,
        )
        assert moved.json()["metadata"] == {"bot": "[secret:slack-token#5]"}
        assert await opened(conn, vault, stored["id"]) == {1: GITHUB, 4: AWS_ID, 5: SLACK}

        cleared = await client.patch(
            url, json={"content": "no secrets any more", "tags": [], "metadata": {}}, headers=alice
        )
        assert cleared.json()["has_secrets"] is False
        assert await opened(conn, vault, stored["id"]) == {}
    assert leaked(await everything_stored(conn)) == []


async def test_patch_redacts_every_field_it_sets(
    settings: Settings, embedder: LocalEmbedder, conn: asyncpg.Connection, alice: Headers
) -> None:
    configured = sealing(settings)
    vault = Vault.from_settings(configured.secrets)
    async with running(configured, embedder) as client:
        stored = await store(client, alice, {"content": "a plain note"})
        patch = {key: value for key, value in FULL.items() if key != "namespace"}
        response = await client.patch(f"/v1/memories/{stored['id']}", json=patch, headers=alice)
    assert response.status_code == 200, response.text
    memory = response.json()
    assert memory["has_secrets"] is True
    assert leaked(str(memory)) == []
    assert leaked(await everything_stored(conn)) == []
    assert sorted((await opened(conn, vault, stored["id"])).values()) == sorted(ORIGINALS)


async def test_patch_content_that_duplicates_another_memory_once_redacted_is_a_conflict(
    client: Client, alice: Headers
) -> None:
    first = await store(client, alice, {"content": f"the CI token is {GITHUB}"})
    second = await store(client, alice, {"content": "something else"})
    other = "ghp_Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2H1g0"
    response = await client.patch(
        f"/v1/memories/{second['id']}", json={"content": f"the CI token is {other}"}, headers=alice
    )
    assert response.status_code == 409 and response.json()["existing_id"] == first["id"]


# --- what reads the stored text ----------------------------------------------------------------------


async def test_the_concept_graph_never_holds_a_credential(
    settings: Settings, embedder: LocalEmbedder, conn: asyncpg.Connection, alice: Headers
) -> None:
    async with running(sealing(settings), embedder) as client:
        stored = await store(client, alice, FULL)
        await store(client, alice, {"content": f"Shop API deploys need {GITHUB} and the {AWS_ID} key"})
        await client.patch(
            f"/v1/memories/{stored['id']}",
            json={"content": f"Slack bot {SLACK} posts releases"},
            headers=alice,
        )
        await drain(client)
    assert await conn.fetchval("SELECT count(*) FROM jobs") == 0
    assert await conn.fetchval("SELECT count(*) FROM concepts") > 0, "the graph was built"
    assert await conn.fetchval("SELECT count(*) FROM memory_concepts") > 0
    assert leaked(await everything_stored(conn)) == []


async def test_credentials_known_by_context_or_a_catalog_format_never_become_concept_names(
    settings: Settings, embedder: LocalEmbedder, conn: asyncpg.Connection, alice: Headers
) -> None:
    originals = tuple(value_of(kind) for kind in ("telegram-bot-token", "linear-api-key", "age-secret-key"))
    password, mysql_password = value_of("prose-password", 3), value_of("mysql-password")
    content = (
        f"Ops notes: alerts go through the bot {originals[0]}; triage uses {originals[1]}; "
        f"the sops key is {originals[2]}. Router login admin / {password}. "
        f"Backups: mysqldump -u app -p{mysql_password} Shop"
    )
    async with running(settings, embedder) as client:
        await store(client, alice, {"content": content})
        await drain(client)
    assert await conn.fetchval("SELECT count(*) FROM concepts") > 0, "the graph was built"
    assert leaked(await everything_stored(conn), (*originals, password, mysql_password)) == []


async def test_a_hosted_embedding_provider_receives_only_redacted_text(
    db_url: str, conn: asyncpg.Connection
) -> None:
    with FakeEmbeddingServer(dimension=384) as fake:
        hosted = await openai_compatible(fake.url, 384)
        configured = Settings(
            database=DatabaseSettings(url=db_url),
            embeddings=openai_settings(fake.url, 384),
            secrets=SecretSettings(keys={"k1": SecretStr(new_key())}),
        )
        alice = await headers_for(db_url, "alice")
        async with running(configured, hosted) as client:
            stored = await store(client, alice, FULL)
            assert stored["embedded"] is True
            await client.patch(
                f"/v1/memories/{stored['id']}", json={"content": f"now with {SLACK} only"}, headers=alice
            )
            recalled = await client.post(
                "/v1/recall", json={"query": "how does CI push?", "namespace": "shop"}, headers=alice
            )
            assert recalled.status_code == 200
        sent = fake.raw_bodies().decode()
    assert "[secret:github-token#1]" in sent and "[secret:slack-token#6]" in sent
    assert leaked(sent) == []


async def test_nothing_logs_a_credential(
    client: Client, alice: Headers, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    stored = await store(client, alice, FULL)
    await client.patch(f"/v1/memories/{stored['id']}", json={"content": f"{SLACK} now"}, headers=alice)
    await client.post(
        "/v1/recall", json={"query": "CI token", "namespace": "shop", "explain": True}, headers=alice
    )
    await client.get("/v1/memories?namespace=shop", headers=alice)
    assert leaked(caplog.text) == []


async def test_a_patch_raced_by_another_renumbers_under_the_lock_instead_of_clashing(
    settings: Settings,
    embedder: LocalEmbedder,
    conn: asyncpg.Connection,
    alice: Headers,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    configured = sealing(settings)
    vault = Vault.from_settings(configured.secrets)
    async with running(configured, embedder) as client:
        stored = await store(client, alice, {"content": f"token {GITHUB}"})
        url = f"/v1/memories/{stored['id']}"
        # what the second PATCH reads before its lock: the memory before the first PATCH
        stale = msgspec.json.decode((await client.get(url, headers=alice)).content, type=Memory)
        first = await client.patch(
            url, json={"content": f"token [secret:github-token#1] and {AWS_ID}"}, headers=alice
        )
        assert first.json()["content"] == "token [secret:github-token#1] and [secret:aws-access-key#2]"

        service: MemoryService = client.app.state.memory_service
        real_get = service.reads.get  # the read the update path makes first
        reads = 0

        async def stale_once(user_id: int, memory_id: int, include_deleted: bool = False) -> Memory:
            nonlocal reads
            reads += 1
            return stale if reads == 1 else await real_get(user_id, memory_id, include_deleted)

        monkeypatch.setattr(service.reads, "get", stale_once)
        second = await client.patch(
            url, json={"content": f"token [secret:github-token#1], bot {SLACK}"}, headers=alice
        )
    assert second.status_code == 200, second.text
    # numbered after #2, which the memory held under the lock (the stale read knew only #1)
    assert second.json()["content"] == "token [secret:github-token#1], bot [secret:slack-token#3]"
    assert await opened(conn, vault, stored["id"]) == {1: GITHUB, 3: SLACK}
    assert second.json()["embedding_model"] is None, (
        "the text embedded before the lock was not the stored one"
    )
    embedded_or_queued = await conn.fetchval(
        "SELECT embedding IS NOT NULL OR EXISTS (SELECT 1 FROM jobs WHERE kind = 'embeddings.embed'"
        " AND memory_id = m.id) FROM memories m WHERE public_id = $1",
        stored["id"],
    )
    assert embedded_or_queued is True, "an embedding job embeds the stored text"
