"""The concept graph view: the one page that needs JavaScript (graph.js draws with cytoscape)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import wait_for_concept

pytestmark = pytest.mark.e2e

GRAPH_READY_TIMEOUT_MS = 30_000


def test_concept_graph_view_draws_the_neighbourhood(signed_in: Page, graph_seeded: str) -> None:
    page = signed_in
    href = wait_for_concept(page, graph_seeded)
    concept_id = int(href.rsplit("/", 1)[1])

    page.goto(href)
    graph = page.locator("#graph")
    expect(graph).to_have_attribute("data-src", f"{href}/neighborhood.json")
    expect(graph).to_have_attribute("data-concept", str(concept_id))
    expect(graph).to_have_attribute("aria-label", "Concept graph")
    expect(page.locator("script[type='module'][src='/ui/static/graph.js']")).to_have_count(1)
    # the memories that mention it, as links to them
    expect(page.locator("body")).to_contain_text("Priya")
    memory_links = page.locator("a[href^='/memories/']")
    expect(memory_links.first).to_be_attached()
    hrefs = [memory_links.nth(i).get_attribute("href") or "" for i in range(memory_links.count())]
    assert any(re.fullmatch(r"/memories/\d+", h) for h in hrefs), f"no link to a memory: {hrefs}"

    page.wait_for_selector("#graph[data-ready='true']", timeout=GRAPH_READY_TIMEOUT_MS)
    expect(graph.locator("canvas").first).to_be_attached()
    box = graph.bounding_box()
    assert box is not None and box["width"] > 100 and box["height"] > 100, f"#graph is not drawn large: {box}"

    answer = page.request.get(f"{href}/neighborhood.json")
    assert answer.status == 200, answer.text()
    data = answer.json()
    ids = {node["id"] for node in data["nodes"]}
    assert concept_id in ids, f"the concept itself is not a node: {data}"
    for node in data["nodes"]:
        assert set(node) >= {"id", "label", "doc_freq", "depth"}, node
    for edge in data["edges"]:
        assert set(edge) >= {"source", "target", "weight"}, edge
        assert edge["source"] in ids and edge["target"] in ids, f"an edge to a missing node: {edge}"
    assert data["edges"], "memories naming Priya, Lisbon and Rust together gave the concept no edges"

    # the keyboard path to a neighbour: focus the graph, arrow keys (the concept itself comes
    # first, then its neighbours), Enter opens the focused concept's page
    graph.focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    opened = re.search(r"/concepts/(\d+)$", page.url)
    assert opened, f"Enter on a graph node did not open a concept page: {page.url}"
    assert int(opened.group(1)) != concept_id, "Enter on a neighbour reopened the same concept"
    assert int(opened.group(1)) in ids, f"opened a concept outside the neighbourhood: {page.url}"
    expect(page.locator("#graph")).to_have_attribute("data-concept", opened.group(1))
