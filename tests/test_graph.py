"""Concept graph: extraction on store, maintenance on change and delete, the graph leg, the routes."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.graph import sql as graph_sql
from app.graph.extract import extract_concepts, normalise, query_concept_names
from app.graph.indexer import GRAPH_LOCK_BASE, lock_graph
from app.graph.rebuild import rebuild_graph
from app.jobs import JobWorker
from app.settings import GraphSettings
from tests.ids import internal_id, internal_ids

Client = AsyncTestClient[Litestar]

CHAIN = [
    "Zephyr leads the Quokka migration.",
    "The Quokka migration runs in the Lisbon datacenter.",
    "Lisbon datacenter badge access requires a signed ticket.",
]


def test_extraction_finds_names_technical_values_phrases_tags_and_keywords() -> None:
    concepts = extract_concepts(
        "Yesterday Caroline went to an LGBTQ support group; we deploy with CloudNativePG and next.js."
        " Pin `make lint` in app/graph before v2.3.1 and the dessert recipes.",
        tags=["Community"],
        expanded_keywords="peer support, counseling",
    )
    names = {c.name: c.kind for c in concepts}
    assert names["caroline"] == "name" and names["lgbtq"] == "name" and names["cloudnativepg"] == "name"
    assert names["next.js"] == "identifier" or names["next.js"] == "file"
    assert names["make lint"] == "command" and names["app/graph"] == "path" and names["v2.3.1"] == "version"
    assert names["dessert recipe"] == "phrase"
    assert names["community"] == "tag" and names["peer support"] == "keyword"


def test_everyday_words_and_clause_fragments_are_no_concepts() -> None:
    """The concepts a new user saw with 20 ordinary memories (issue 38): every one is an everyday
    English word or a fragment of a clause, and none may come back."""
    texts = [
        "Rotate the Terraform state bucket credentials every 90 days.",
        "Run the test suite before pushing to main.",
        "Fixed the flaky mode statements in the billing service.",
        "We use time-machine instead of freezegun in tests.",
    ]
    names = {c.name for text in texts for c in extract_concepts(text)}
    generic = {"every", "run", "mode", "statement", "service", "test", "pushing", "fixed"}
    assert not names & generic, names
    assert not [n for n in names if n.startswith("credentials every") or n.endswith("instead")], names
    assert {"terraform", "freezegun"} <= names


def test_a_rare_verb_or_adjective_is_no_concept_but_a_rare_noun_or_unlisted_technical_term_is() -> None:
    """Frequency alone let "rotate", "creamy" and "heartfelt" through; the lexicon's parts of speech
    keep only words that can name a thing, and words it lacks only when they are rare in English."""
    texts = [
        "rotate the creamy heartfelt sorta keys with kubectl.",
        "Commend the pottery class; woah, we tried asyncpg pooling.",
    ]
    names = {c.name for text in texts for c in extract_concepts(text)}
    assert not names & {"rotate", "creamy", "heartfelt", "sorta", "commend", "woah"}, names
    assert {"kubectl", "pottery", "asyncpg"} <= names


def test_phrases_are_noun_compounds_not_descriptions_or_clauses() -> None:
    names = {
        c.name
        for text in ("I had a tough breakup.", "We avoid collision.", "Bake the dessert recipes.")
        for c in extract_concepts(text)
    }
    assert "dessert recipe" in names
    assert not names & {"tough breakup", "avoid collision"}, names


def test_a_name_holds_its_connecting_words_and_an_opening_unlisted_word_is_a_name() -> None:
    names = {
        c.name: c.kind
        for c in extract_concepts("Gina: I have watched Game of Thrones with Lord of the Rings fans.")
    }
    assert names["game of thrones"] == "name" and names["lord of the rings"] == "name"
    assert names["gina"] == "name"
    assert "game" not in names and "thrones" not in names


def test_a_random_token_the_detector_missed_never_becomes_a_concept_but_a_commit_does() -> None:
    token = "Zq8Lm3Np5Rt7xWv2Kc9Hb4"  # letters of both cases and digits, as a credential is made
    names = [
        c.name for c in extract_concepts(f"Deploy uses {token} with pgvector at commit 3f9a2c7e1b8d4f6a0c5e")
    ]
    assert not [name for name in names if token.lower() in name]
    assert "pgvector" in names and any("3f9a2c7e1b8d4f6a0c5e" in name for name in names)


def test_normalisation_folds_case_plurals_and_punctuation() -> None:
    assert normalise("Support Groups") == "support group"
    assert normalise("Batteries,") == "batteries," or normalise("Batteries") == "battery"
    assert normalise("'Kids'") == "kid"
    assert query_concept_names("Where is the Lisbon datacenter?") == ["lisbon", "datacenter"]


async def drain(client: Client) -> None:
    """Run the jobs the requests left behind (concept indexing) before the test looks at the graph;
    on the app's own event loop (the test client runs the app in a portal thread)."""
    jobs: JobWorker = client.app.state.jobs
    await asyncio.to_thread(lambda: client.blocking_portal.call(jobs.run_pending))


async def store(client: Client, headers: dict[str, str], content: str, **extra: Any) -> int:
    response = await client.post(
        "/v1/memories", json={"content": content, "namespace": "g", **extra}, headers=headers
    )
    assert response.status_code == 201, response.text
    await drain(client)
    return int(response.json()["id"])


async def test_store_links_concepts_and_counts_cooccurrence(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    first, second = await internal_ids(
        conn, [await store(client, alice, CHAIN[0]), await store(client, alice, CHAIN[1])]
    )
    quokka = await conn.fetchrow("SELECT id, doc_freq FROM concepts WHERE name = 'quokka'")
    assert quokka["doc_freq"] == 2
    linked = {
        r["memory_id"]
        for r in await conn.fetch("SELECT memory_id FROM memory_concepts WHERE concept_id = $1", quokka["id"])
    }
    assert linked == {first, second}
    edge = await conn.fetchrow(
        """SELECT e.weight, e.evidence_memory_ids FROM concept_edges e
           JOIN concepts a ON a.id = e.source_id JOIN concepts b ON b.id = e.target_id
           WHERE (a.name, b.name) IN (('lisbon', 'quokka'), ('quokka', 'lisbon'))"""
    )
    assert edge["weight"] == 1 and edge["evidence_memory_ids"] == [second]


async def test_recall_reaches_a_memory_only_through_a_two_hop_concept_path(
    client: Client, alice: dict[str, str]
) -> None:
    ids = [await store(client, alice, text) for text in CHAIN]
    body = {"query": "Who works with Zephyr?", "namespace": "g", "explain": True}
    graph_only = (
        await client.post("/v1/recall", json=body | {"weights": {"lexical": 0, "dense": 0}}, headers=alice)
    ).json()
    hits = {h["id"]: h["explain"] for h in graph_only["results"]}
    assert ids[2] in hits, graph_only
    path = hits[ids[2]]["graph_path"].split(" > ")
    assert path[0] == "Zephyr" and len(path) == 3
    # the target shares no word with the query: the lexical leg cannot find it
    lexical = (
        await client.post("/v1/recall", json=body | {"weights": {"dense": 0, "graph": 0}}, headers=alice)
    ).json()
    assert ids[2] not in {h["id"] for h in lexical["results"]}
    fused = (await client.post("/v1/recall", json=body, headers=alice)).json()
    target = next(h for h in fused["results"] if h["id"] == ids[2])
    assert target["explain"]["graph_rank"] is not None


async def test_graph_leg_follows_the_rare_concepts_of_the_first_stage_hits(
    client: Client, alice: dict[str, str]
) -> None:
    found = await store(client, alice, "Zephyr signed the Quokka lease yesterday.")
    related = await store(client, alice, "Quokka payments are due every March.")
    await store(client, alice, "The cafeteria serves soup on Fridays.")
    body = {"query": "Who signed the lease?", "namespace": "g", "explain": True, "weights": {"dense": 0}}
    response = await client.post("/v1/recall", json=body, headers=alice)
    hits = {h["id"]: h["explain"] for h in response.json()["results"]}
    assert hits[found]["lexical_rank"] == 1
    # no word of the query: reached through "Quokka", a concept of the lexical hit (feedback
    # outweighs the walk from the query's own concepts, so the path names the hits)
    assert hits[related]["lexical_rank"] is None and hits[related]["graph_rank"] is not None
    assert hits[related]["graph_path"] == "hits > Quokka"


async def test_graph_leg_applies_the_request_filters(client: Client, alice: dict[str, str]) -> None:
    ids = [await store(client, alice, text, category="infra") for text in CHAIN]
    body = {"query": "Who works with Zephyr?", "namespace": "g", "weights": {"lexical": 0, "dense": 0}}

    async def found(**filters: Any) -> set[int]:
        response = await client.post("/v1/recall", json=body | {"filters": filters}, headers=alice)
        assert response.status_code == 200, response.text
        return {h["id"] for h in response.json()["results"]}

    assert ids[2] in await found()
    assert ids[2] in await found(category="infra")
    assert await found(category="runbook") == set()
    assert await found(created_until="2000-01-01T00:00:00Z") == set()


async def test_a_memory_deleted_or_made_sensitive_behind_the_graphs_back_is_never_recalled(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    ids = [await store(client, alice, text) for text in CHAIN]  # indexed: linked in the graph
    body = {"query": "Who works with Zephyr?", "namespace": "g", "weights": {"lexical": 0, "dense": 0}}

    async def found(**extra: Any) -> set[int]:
        response = await client.post("/v1/recall", json=body | extra, headers=alice)
        assert response.status_code == 200, response.text
        return {h["id"] for h in response.json()["results"]}

    assert {ids[1], ids[2]} <= await found()
    # by hand, in SQL: the links stay (the API's delete and PATCH unlink in the same transaction)
    internal = await internal_ids(conn, ids)
    await conn.execute("UPDATE memories SET deleted_at = now() WHERE id = $1", internal[2])
    await conn.execute("UPDATE memories SET is_sensitive = true WHERE id = $1", internal[1])
    linked = "SELECT count(DISTINCT memory_id) FROM memory_concepts WHERE memory_id = ANY($1::bigint[])"
    assert await conn.fetchval(linked, internal[1:]) == 2
    assert await found() & {ids[1], ids[2]} == set()
    # a caller who asks for sensitive memories gets that one back; never the deleted one
    assert await found(filters={"include_sensitive": True}) & {ids[1], ids[2]} == {ids[1]}


async def test_delete_removes_evidence_and_orphaned_concepts(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    ids = [await store(client, alice, text) for text in CHAIN]
    assert (await client.delete(f"/v1/memories/{ids[1]}", headers=alice)).status_code == 204
    assert await conn.fetchval("SELECT count(*) FROM memory_concepts WHERE memory_id = $1", ids[1]) == 0
    # the quokka-lisbon edge had only the deleted memory as evidence
    rows = await conn.fetch(
        """SELECT 1 FROM concept_edges e
           JOIN concepts a ON a.id = e.source_id JOIN concepts b ON b.id = e.target_id
           WHERE (a.name, b.name) IN (('lisbon','quokka'), ('quokka','lisbon'))"""
    )
    assert rows == []
    assert await conn.fetchval("SELECT doc_freq FROM concepts WHERE name = 'quokka'") == 1
    assert (
        await conn.fetchval("SELECT count(*) FROM concept_edges WHERE $1 = ANY(evidence_memory_ids)", ids[1])
        == 0
    )
    body = {"query": "Who works with Zephyr?", "namespace": "g", "weights": {"lexical": 0, "dense": 0}}
    hits = (await client.post("/v1/recall", json=body, headers=alice)).json()["results"]
    assert ids[2] not in {h["id"] for h in hits}
    # purge of the last mention drops the concept
    await client.delete(f"/v1/memories/{ids[0]}?purge=true", headers=alice)
    assert await conn.fetchval("SELECT count(*) FROM concepts WHERE name IN ('zephyr', 'quokka')") == 0


async def test_content_update_re_extracts(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    memory_id = await store(client, alice, "Kafka handles the billing events.")
    await client.patch(
        f"/v1/memories/{memory_id}", json={"content": "Pulsar handles the billing events."}, headers=alice
    )
    await drain(client)
    names = {
        r["name"]
        for r in await conn.fetch(
            "SELECT c.name FROM memory_concepts mc JOIN concepts c ON c.id = mc.concept_id "
            "WHERE mc.memory_id = $1",
            await internal_id(conn, memory_id),
        )
    }
    assert "pulsar" in names and "kafka" not in names
    assert await conn.fetchval("SELECT count(*) FROM concepts WHERE name = 'kafka'") == 0


async def test_sensitive_memories_stay_out_of_the_graph(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    await store(client, alice, "The Hunter2 password opens the Vault.", is_sensitive=True)
    assert await conn.fetchval("SELECT count(*) FROM concepts") == 0


async def test_graph_routes_browse_and_merge(
    client: Client, alice: dict[str, str], bob: dict[str, str]
) -> None:
    ids = [await store(client, alice, text) for text in CHAIN]
    await store(client, alice, "Zeph approved the Quokka budget.")
    found = (await client.get("/v1/graph/concepts", params={"q": "quokka"}, headers=alice)).json()
    quokka = next(c for c in found if c["name"] == "quokka")
    assert quokka["doc_freq"] == 3 and quokka["namespace"] == "g"

    detail = (await client.get(f"/v1/graph/concepts/{quokka['id']}", headers=alice)).json()
    assert {m["id"] for m in detail["memories"]} >= {ids[0], ids[1]}

    near = (await client.get(f"/v1/graph/concepts/{quokka['id']}/neighborhood?depth=1", headers=alice)).json()
    names = {n["name"] for n in near["nodes"]}
    assert {"quokka", "zephyr", "lisbon"} <= names
    assert all(e["source"] in {n["id"] for n in near["nodes"]} for e in near["edges"])
    deeper = (
        await client.get(f"/v1/graph/concepts/{quokka['id']}/neighborhood?depth=2", headers=alice)
    ).json()
    assert len(deeper["nodes"]) >= len(near["nodes"])

    zephyr = next(
        c
        for c in (await client.get("/v1/graph/concepts?q=zeph", headers=alice)).json()
        if c["name"] == "zephyr"
    )
    bulk = (
        await client.post(
            "/v1/graph/neighbors", json={"concept_ids": [quokka["id"], zephyr["id"]]}, headers=alice
        )
    ).json()
    assert "zephyr" in {n["name"] for n in bulk[str(quokka["id"])]}

    zeph = next(
        c
        for c in (await client.get("/v1/graph/concepts?q=zeph", headers=alice)).json()
        if c["name"] == "zeph"
    )
    merged = await client.post(
        f"/v1/graph/concepts/{zeph['id']}/merge", json={"into": zephyr["id"]}, headers=alice
    )
    assert merged.status_code == 200, merged.text
    assert "zeph" in merged.json()["aliases"] and merged.json()["doc_freq"] == 2
    gone = await client.get(f"/v1/graph/concepts/{zeph['id']}", headers=alice)
    assert gone.status_code == 404
    # a later memory that says "Zeph" links to the concept the alias now belongs to
    await store(client, alice, "Zeph approved the rollout.")
    after = await client.get(f"/v1/graph/concepts/{zephyr['id']}", headers=alice)
    assert after.json()["doc_freq"] == 3

    # another user sees none of it
    for method, path, body in [
        ("GET", f"/v1/graph/concepts/{quokka['id']}", None),
        ("GET", f"/v1/graph/concepts/{quokka['id']}/neighborhood", None),
        ("POST", "/v1/graph/neighbors", {"concept_ids": [quokka["id"]]}),
        ("POST", f"/v1/graph/concepts/{quokka['id']}/merge", {"into": zephyr["id"]}),
    ]:
        assert (await client.request(method, path, json=body, headers=bob)).status_code == 404
    assert (await client.get("/v1/graph/concepts", headers=bob)).json() == []


@pytest.mark.parametrize(
    ("method", "path", "body", "status"),
    [
        ("GET", "/v1/graph/concepts/1/neighborhood?depth=0", None, 422),
        ("GET", "/v1/graph/concepts/1/neighborhood?depth=4", None, 422),
        ("GET", "/v1/graph/concepts/0", None, 422),
        ("GET", "/v1/graph/concepts/999999", None, 404),
        ("POST", "/v1/graph/neighbors", {"concept_ids": []}, 422),
        ("POST", "/v1/graph/neighbors", {"concept_ids": ["x"]}, 422),
        ("POST", "/v1/graph/concepts/5/merge", {"into": 5}, 422),
        ("GET", "/v1/graph/concepts?namespace=nope", None, 404),
    ],
)
async def test_bad_graph_requests_are_4xx(
    client: Client, alice: dict[str, str], method: str, path: str, body: Any, status: int
) -> None:
    response = await client.request(method, path, json=body, headers=alice)
    assert response.status_code == status, response.text


async def test_hub_concepts_do_not_connect_everything(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection, app: Litestar
) -> None:
    # "Mallory" appears in every memory: above the hub ceiling it seeds and bridges nothing.
    for i in range(30):
        await store(client, alice, f"Mallory mentioned topic{i} at standup.")
    body = {"query": "What did Mallory say?", "namespace": "g", "weights": {"lexical": 0, "dense": 0}}
    assert (await client.post("/v1/recall", json=body, headers=alice)).json()["results"] == []
    assert await conn.fetchval("SELECT doc_freq FROM concepts WHERE name = 'mallory'") == 30


async def test_rebuild_recreates_the_same_graph(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection, db_url: str
) -> None:
    for text in CHAIN:
        await store(client, alice, text)
    before = await conn.fetch(
        "SELECT c.name, count(*) FROM memory_concepts mc JOIN concepts c ON c.id = mc.concept_id "
        "GROUP BY 1 ORDER BY 1"
    )
    edges_before = await conn.fetchval("SELECT sum(weight) FROM concept_edges")
    await conn.execute("DELETE FROM concepts")
    pool = await asyncpg.create_pool(db_url, min_size=1, max_size=2)
    try:
        namespaces, memories = await rebuild_graph(pool, GraphSettings(), None)
    finally:
        await pool.close()
    assert (namespaces, memories) == (1, 3)
    after = await conn.fetch(
        "SELECT c.name, count(*) FROM memory_concepts mc JOIN concepts c ON c.id = mc.concept_id "
        "GROUP BY 1 ORDER BY 1"
    )
    assert after == before
    assert await conn.fetchval("SELECT sum(weight) FROM concept_edges") == edges_before
    assert await conn.fetchval("SELECT graph_memories FROM namespaces WHERE name = 'g'") == 3


async def test_patch_that_touches_no_extracted_field_keeps_the_graph_as_is(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    memory_id = await store(client, alice, "Kafka handles the billing events.")
    before = await conn.fetch(
        "SELECT concept_id FROM memory_concepts WHERE memory_id = $1 ORDER BY 1", memory_id
    )
    await client.patch(f"/v1/memories/{memory_id}", json={"importance": 0.9}, headers=alice)
    after = await conn.fetch(
        "SELECT concept_id FROM memory_concepts WHERE memory_id = $1 ORDER BY 1", memory_id
    )
    assert after == before  # re-extraction would have dropped and recreated the concepts with new ids
    await client.patch(f"/v1/memories/{memory_id}", json={"is_sensitive": True}, headers=alice)
    assert await conn.fetchval("SELECT count(*) FROM memory_concepts WHERE memory_id = $1", memory_id) == 0


async def test_graph_locks_of_a_store_cover_each_namespace_until_commit(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection, db_url: str
) -> None:
    stored = [
        await store(client, alice, "Zephyr owns billing."),
        await store(client, alice, "Zephyr", namespace="h"),
    ]
    ids = await internal_ids(conn, stored)
    namespaces = await conn.fetch("SELECT DISTINCT namespace_id FROM memories ORDER BY 1")
    other = await asyncpg.connect(db_url)
    try:
        for take in (
            lambda: conn.fetch(graph_sql.LOCK_GRAPHS_OF_MEMORIES, ids, GRAPH_LOCK_BASE),
            lambda: lock_graph(conn, {r["namespace_id"] for r in namespaces}),
        ):
            async with conn.transaction():
                await take()
                for r in namespaces:
                    key = GRAPH_LOCK_BASE + r["namespace_id"]
                    assert not await other.fetchval("SELECT pg_try_advisory_xact_lock($1::bigint)", key)
            for r in namespaces:  # released with the transaction
                async with other.transaction():
                    key = GRAPH_LOCK_BASE + r["namespace_id"]
                    assert await other.fetchval("SELECT pg_try_advisory_xact_lock($1::bigint)", key)
    finally:
        await other.close()


async def test_recall_reaches_no_unrelated_memory_through_an_everyday_word(
    client: Client, alice: dict[str, str]
) -> None:
    """Issue 38's example: "database connection pooling" ranked the Terraform and test-suite
    memories through the concepts "every" and "Run" (`hits > every`, `hits > Run`)."""
    pooling = await store(
        client, alice, "Database connection pooling goes through PgBouncer in transaction mode every time."
    )
    unrelated = [
        await store(client, alice, text)
        for text in (
            "Rotate the Terraform state bucket credentials every 90 days.",
            "Run the test suite before pushing every change.",
            "Run the linters every morning before standup.",
            "Every Friday the billing service sends invoices.",
        )
    ]
    body = {"query": "database connection pooling", "namespace": "g", "explain": True}
    results = (await client.post("/v1/recall", json=body, headers=alice)).json()["results"]
    hits = {h["id"]: h["explain"] for h in results}
    assert results[0]["id"] == pooling
    through_graph = {i: hits[i]["graph_path"] for i in unrelated if i in hits and hits[i]["graph_rank"]}
    assert not through_graph, through_graph


async def test_links_are_weighed_by_association_a_pair_always_together_beats_a_tie_to_a_widespread_concept(
    client: Client, alice: dict[str, str]
) -> None:
    for day in ("Monday", "Tuesday"):
        await store(client, alice, f"Zephyr tuned the Quokka cluster on {day}.")
    for city in ("Lisbon", "Porto", "Madrid", "Seville"):
        await store(client, alice, f"Zephyr visited {city} in spring.")
    found = (await client.get("/v1/graph/concepts", params={"q": "quokka"}, headers=alice)).json()
    quokka = next(c for c in found if c["name"] == "quokka")
    bulk = (
        await client.post("/v1/graph/neighbors", json={"concept_ids": [quokka["id"]]}, headers=alice)
    ).json()
    neighbours = {n["name"]: n for n in bulk[str(quokka["id"])]}
    # quokka and cluster: together in both of their memories; quokka and zephyr: 2 of zephyr's 6
    assert neighbours["cluster"]["association"] > neighbours["zephyr"]["association"] > 0
    assert neighbours["cluster"]["weight"] == neighbours["zephyr"]["weight"] == 2
    assert bulk[str(quokka["id"])][0]["name"] == "cluster"
    around = (
        await client.get(f"/v1/graph/concepts/{quokka['id']}/neighborhood?depth=1", headers=alice)
    ).json()
    assert {round(e["association"], 3) for e in around["edges"]} >= {round(2 / (2 + 2 - 2 + 1), 3)}
