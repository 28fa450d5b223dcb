"""The Concepts pages, through the app, on concepts and links written straight into the graph's
tables (what extraction finds is tests/test_graph.py's business; here only how the pages show it).

What is pinned here: the list is ordered by how many memories mention a concept unless asked for
another order, filtered to one of the user's namespaces (another's is 404, never listed), searched
by name, paged with the filters kept; a concept's page lists its strongest links heaviest first,
a few at a time with a way to see more, and its graph data holds only those; query parameters that
do not read answer 4xx with what to fix, never 500.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import asyncpg
import pytest
from litestar import Litestar

from tests.scoped_keys import bearer, scoped_key
from tests.test_ui_pages import Client, browser, sign_in


@pytest.fixture
async def client(app: Litestar) -> AsyncIterator[Client]:
    async with browser(app) as test_client:
        yield test_client


@pytest.fixture
async def alice_key(conn: asyncpg.Connection) -> str:
    return (await scoped_key(conn, "alice", ["read", "write"])).key


async def namespace(conn: asyncpg.Connection, owner: str, name: str) -> int:
    user_id = await conn.fetchval("SELECT id FROM users WHERE name = $1", owner)
    found: int = await conn.fetchval(
        "INSERT INTO namespaces (user_id, name) VALUES ($1, $2) "
        "ON CONFLICT (user_id, name) DO UPDATE SET name = EXCLUDED.name RETURNING id",
        user_id,
        name,
    )
    return found


async def concept(
    conn: asyncpg.Connection, namespace_id: int, name: str, doc_freq: int, age_days: int = 0
) -> int:
    """A concept's internal id; `age_days` back-dates when it was last mentioned."""
    found: int = await conn.fetchval(
        "INSERT INTO concepts (namespace_id, name, display_name, doc_freq, updated_at) "
        "VALUES ($1, lower($2), $2, $3, now() - make_interval(days => $4)) RETURNING id",
        namespace_id,
        name,
        doc_freq,
        age_days,
    )
    return found


async def public(conn: asyncpg.Connection, concept_id: int) -> int:
    found: int = await conn.fetchval("SELECT public_id FROM concepts WHERE id = $1", concept_id)
    return found


async def edge(conn: asyncpg.Connection, namespace_id: int, a: int, b: int, weight: float) -> None:
    await conn.execute(
        "INSERT INTO concept_edges (namespace_id, source_id, target_id, weight) VALUES ($1, $2, $3, $4)",
        namespace_id,
        min(a, b),
        max(a, b),
        weight,
    )


def listed(html: str) -> list[str]:
    """The concept names the list page shows, in its order."""
    grid = html.split('class="concept-grid"', 1)[1].split("</ol>", 1)[0] if "concept-grid" in html else ""
    return re.findall(r'<a href="/concepts/\d+">([^<]+)</a>', grid)


async def test_the_list_puts_the_most_mentioned_concepts_first_and_sorts_by_name_or_recency(
    client: Client, alice_key: str, conn: asyncpg.Connection
) -> None:
    await sign_in(client, alice_key)
    ns = await namespace(conn, "alice", "default")
    await concept(conn, ns, "Kafka", 3, age_days=1)
    await concept(conn, ns, "Postgres", 9, age_days=5)
    await concept(conn, ns, "Alembic", 1, age_days=0)

    by_count = await client.get("/concepts")
    assert by_count.status_code == 200
    assert listed(by_count.text) == ["Postgres", "Kafka", "Alembic"]
    assert re.search(r'title="mentioned in 9 memories">9<', by_count.text), "the count is shown"
    assert "1\u20133 of 3 concepts" in by_count.text
    assert listed((await client.get("/concepts?sort=name")).text) == ["Alembic", "Kafka", "Postgres"]
    assert listed((await client.get("/concepts?sort=recent")).text) == ["Alembic", "Kafka", "Postgres"]
    assert listed((await client.get("/concepts?q=gres")).text) == ["Postgres"]
    assert '<option value="name" selected>' in (await client.get("/concepts?sort=name")).text


async def test_the_namespace_filter_offers_and_shows_only_the_users_own_namespaces(
    client: Client, alice_key: str, conn: asyncpg.Connection
) -> None:
    await scoped_key(conn, "bob", ["read", "write"])
    await sign_in(client, alice_key)
    work = await namespace(conn, "alice", "work")
    home = await namespace(conn, "alice", "home")
    bobs = await namespace(conn, "bob", "secret-project")
    await concept(conn, work, "Terraform", 4)
    await concept(conn, home, "Sourdough", 2)
    await concept(conn, bobs, "Bobs-Plan", 8)

    everything = await client.get("/concepts")
    assert listed(everything.text) == ["Terraform", "Sourdough"]
    options = re.findall(
        r'<option value="([^"]*)"', everything.text.split('id="f-namespace"')[1].split("</select>")[0]
    )
    assert options == ["", "home", "work"]
    only_home = await client.get("/concepts?namespace=home")
    assert listed(only_home.text) == ["Sourdough"]
    assert '<option value="home" selected>' in only_home.text

    for name in ["secret-project", "@bob/secret-project", "no-such-namespace"]:
        answer = await client.get("/concepts", params={"namespace": name})
        assert answer.status_code == 404, (name, answer.text[:300])
        assert 'role="alert"' in answer.text and "not found" in answer.text
        assert "Bobs-Plan" not in answer.text


async def test_the_list_pages_keeping_its_filters_so_a_hundred_concepts_are_never_one_long_page(
    client: Client, alice_key: str, conn: asyncpg.Connection
) -> None:
    await sign_in(client, alice_key)
    ns = await namespace(conn, "alice", "default")
    for n in range(100):
        await concept(conn, ns, f"Term{n:03d}", 100 - n)

    first = await client.get("/concepts?sort=name")
    assert len(listed(first.text)) == 60 and listed(first.text)[0] == "Term000"
    assert "1\u201360 of 100 concepts · page 1 of 2" in first.text
    more = re.search(r'href="/concepts\?([^"]+)" rel="next">More<', first.text)
    assert more is not None and more.group(1) == "sort=name&amp;page=2"
    second = await client.get("/concepts?sort=name&page=2")
    assert listed(second.text)[0] == "Term060" and len(listed(second.text)) == 40
    assert 'rel="next"' not in second.text
    assert re.search(r'href="/concepts\?sort=name" rel="prev">Previous<', second.text)
    past = await client.get("/concepts?page=9")
    assert past.status_code == 200 and "No concepts on page 9" in past.text


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("sort=popularity", "sort: one of memories, name, recent"),
        ("page=0", "page: a whole number from 1 to"),
        ("page=two", "page: a whole number from 1 to"),
        ("page=99999999999999999999999", "page: a whole number from 1 to"),
        ("page=%C2%B2", "page: a whole number from 1 to"),
    ],
)
async def test_a_list_query_that_does_not_read_answers_400_with_what_to_fix(
    client: Client, alice_key: str, query: str, message: str
) -> None:
    await sign_in(client, alice_key)
    answer = await client.get(f"/concepts?{query}")
    assert answer.status_code == 400, answer.text[:300]
    alert = answer.text.split('role="alert"')[1].split("</p>")[0]
    assert message in alert, alert
    assert 'aria-label="Filter concepts"' in answer.text, "the form is shown again"


async def test_a_concepts_page_lists_its_strongest_links_first_and_offers_more(
    client: Client, alice_key: str, conn: asyncpg.Connection
) -> None:
    await sign_in(client, alice_key)
    ns = await namespace(conn, "alice", "default")
    seed = await concept(conn, ns, "Postgres", 30)
    strong = await concept(conn, ns, "Pgbouncer", 6)
    await edge(conn, ns, seed, strong, 5.0)
    middle = await concept(conn, ns, "Alembic", 4)
    await edge(conn, ns, seed, middle, 3.0)
    weak = [await concept(conn, ns, f"Once{n:02d}", 1) for n in range(20)]
    for other in weak:
        await edge(conn, ns, seed, other, 1.0)
    await edge(conn, ns, strong, middle, 2.0)
    seed_id = await public(conn, seed)

    answer = await client.get(f"/concepts/{seed_id}")
    assert answer.status_code == 200
    table = answer.text.split("<tbody>")[1].split("</tbody>")[0]
    rows = re.findall(
        r'<a href="/concepts/\d+">([^<]+)</a></td><td class="num">\d+</td>'
        r'<td class="num">(\d+)</td><td class="num">([\d.]+)<',
        table,
    )
    assert len(rows) == 12, rows
    # association: memories naming both / (naming either + 1), e.g. 5 / (30 + 6 - 5 + 1)
    assert rows[:3] == [("Pgbouncer", "5", "0.16"), ("Alembic", "3", "0.09"), ("Once00", "1", "0.03")]
    assert "12 of 22 linked concepts, strongest first" in answer.text
    assert f'href="/concepts/{seed_id}?links=48">Show more links<' in answer.text
    assert f'data-src="/concepts/{seed_id}/neighborhood.json"' in answer.text

    everything = await client.get(f"/concepts/{seed_id}?links=48")
    assert "22 of 22 linked concepts" in everything.text and "Show more links" not in everything.text
    assert f'data-src="/concepts/{seed_id}/neighborhood.json?links=48"' in everything.text

    graph = (await client.get(f"/concepts/{seed_id}/neighborhood.json?links=2")).json()
    names = {n["id"]: n["label"] for n in graph["nodes"]}
    assert [n["label"] for n in graph["nodes"]] == ["Postgres", "Pgbouncer", "Alembic"]
    assert [n["depth"] for n in graph["nodes"]] == [0, 1, 1]
    drawn = sorted((names[e["source"]], names[e["target"]], e["weight"]) for e in graph["edges"])
    # the concept's two heaviest links, and the one between those two neighbours (source: the older)
    assert drawn == [
        ("Pgbouncer", "Alembic", 2.0),
        ("Postgres", "Alembic", 3.0),
        ("Postgres", "Pgbouncer", 5.0),
    ]


@pytest.mark.parametrize("links", ["0", "201", "x", "-3"])
async def test_a_concept_page_with_a_links_count_that_does_not_read_answers_400(
    client: Client, alice_key: str, conn: asyncpg.Connection, links: str
) -> None:
    await sign_in(client, alice_key)
    ns = await namespace(conn, "alice", "default")
    seed_id = await public(conn, await concept(conn, ns, "Postgres", 3))
    page = await client.get(f"/concepts/{seed_id}", params={"links": links})
    assert page.status_code == 400, page.text[:300]
    assert "links: a whole number from 1 to 200" in page.text
    graph = await client.get(f"/concepts/{seed_id}/neighborhood.json", params={"links": links})
    assert graph.status_code == 400 and "links: a whole number from 1 to 60" in graph.text


async def test_the_concepts_route_sorts_on_request_and_keeps_its_default_order(
    client: Client, alice_key: str, conn: asyncpg.Connection
) -> None:
    ns = await namespace(conn, "alice", "default")
    await concept(conn, ns, "Kafka", 3, age_days=1)
    await concept(conn, ns, "Postgres", 9, age_days=5)
    await concept(conn, ns, "Alembic", 1)

    async def names(query: str) -> list[str]:
        answer = await client.get(f"/v1/graph/concepts{query}", headers=bearer(alice_key))
        assert answer.status_code == 200, answer.text
        return [c["display_name"] for c in answer.json()]

    assert await names("") == ["Postgres", "Kafka", "Alembic"]
    assert await names("?sort=memories") == ["Postgres", "Kafka", "Alembic"]
    assert await names("?sort=name") == ["Alembic", "Kafka", "Postgres"]
    assert await names("?sort=recent&limit=2") == ["Alembic", "Kafka"]
    assert await names("?namespace=default&sort=name&q=a") == ["Alembic", "Kafka"]
    bad = await client.get("/v1/graph/concepts?sort=popularity", headers=bearer(alice_key))
    assert 400 <= bad.status_code < 500 and "sort" in bad.text
