"""The recall statement resolves its own scope (`in_scope` in recall.sql): no round trip before it,
yet what is in scope is what the database holds at that very recall."""

from __future__ import annotations

from typing import Any

import asyncpg
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.test_shares import PLAN, Headers, recall, share, store, user_key

Client = AsyncTestClient[Litestar]


@pytest.fixture
async def owner(conn: asyncpg.Connection) -> Headers:
    return await user_key(conn, "alice")


@pytest.fixture
async def grantee(conn: asyncpg.Connection) -> Headers:
    return await user_key(conn, "bob")


def _namespaces(answer: Any) -> set[str]:
    return {hit["namespace"] for hit in answer.json()["results"]}


async def test_a_namespace_stored_into_after_a_recall_is_in_the_next_one_at_once(
    client: Client, owner: Headers
) -> None:
    await store(client, owner, PLAN, "shop")
    assert _namespaces(await recall(client, owner)) == {"shop"}
    await store(client, owner, "The shop deploys from the release branch every Tuesday", "ops")
    assert _namespaces(await recall(client, owner)) == {"shop", "ops"}


async def test_a_share_revoked_between_two_recalls_of_several_namespaces_is_a_404_naming_it(
    client: Client, owner: Headers, grantee: Headers
) -> None:
    await store(client, owner, PLAN, "shop")
    await store(client, grantee, "Bob deploys his shop on Fridays", "mine")
    await share(client, owner, "shop", "bob")
    both = await recall(client, grantee, namespaces=["mine", "@alice/shop"])
    assert both.status_code == 200 and _namespaces(both) == {"mine", "@alice/shop"}
    assert (await client.delete("/v1/shares?namespace=shop&user=bob", headers=owner)).status_code == 204
    refused = await recall(client, grantee, namespaces=["mine", "@alice/shop"])
    assert refused.status_code == 404 and "@alice/shop" in refused.json()["detail"]


async def test_a_named_namespace_that_holds_nothing_is_an_empty_answer_and_an_unknown_one_a_404(
    client: Client, owner: Headers, conn: asyncpg.Connection
) -> None:
    await store(client, owner, PLAN, "shop")
    await conn.execute("UPDATE memories SET deleted_at = now()")
    empty = await recall(client, owner, namespace="shop")
    assert empty.status_code == 200 and empty.json()["results"] == []
    unknown = await recall(client, owner, namespace="nowhere")
    assert unknown.status_code == 404 and "nowhere" in unknown.json()["detail"]
