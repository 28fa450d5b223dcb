"""Links in the web UI, in a real browser: add a supersede from the newer memory's page, see the
older one's banner and the list's mark, undo it from the older one's page; a refused link shows the
message on the page."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import MemoriaServer, unique_word

pytestmark = pytest.mark.e2e


def test_add_a_supersede_see_the_banner_and_undo_it(signed_in: Page, memoria_server: MemoriaServer) -> None:
    page = signed_in
    word = unique_word()
    old = memoria_server.store(f"The {word} nightly backup runs at 02:00 UTC")
    new = memoria_server.store(f"The {word} nightly backup moved to 03:30 UTC")

    page.goto(f"/memories/{new}")
    expect(page.get_by_text("No links yet.")).to_be_visible()
    form = page.get_by_role("form", name="Add a link")
    form.get_by_label("This memory").select_option("supersedes")
    form.get_by_label("Other memory's id").fill(str(old))
    form.get_by_role("button", name="Add link").click()
    page.wait_for_url(re.compile(rf"/memories/{new}\?done=linked$"))
    expect(page.locator("p.flash[role='status']")).to_have_text("Linked.")
    row = page.locator(f"tr.link[data-other='{old}']")
    expect(row).to_contain_text("Supersedes")
    expect(row).to_contain_text("02:00 UTC")
    expect(row).to_contain_text("user")

    # the older memory: a banner naming its successor, and the link pointing in
    row.get_by_role("link", name=f"#{old}").click()
    page.wait_for_url(re.compile(rf"/memories/{old}$"))
    banner = page.locator(".flash.superseded[role='status']")
    expect(banner).to_contain_text(f"Superseded by #{new}")
    expect(page.locator(f"tr.link[data-other='{new}']")).to_contain_text("Superseded by")

    # the list leaves it out, unless superseded ones are asked for: then it is marked
    page.goto("/memories")
    expect(page.locator(f"article.memory#memory-{old}")).to_have_count(0)
    page.get_by_label("Show superseded").check()
    page.get_by_role("button", name="Filter").click()
    marked = page.locator(f"article.memory#memory-{old}")
    expect(marked.get_by_role("link", name=f"superseded by #{new}")).to_be_visible()

    # undo, from the older memory's page: it holds again
    page.goto(f"/memories/{old}")
    page.get_by_role("button", name=f"Undo the supersedes link with memory {new}").click()
    page.wait_for_url(re.compile(rf"/memories/{old}\?done=unlinked$"))
    expect(page.locator("p.flash[role='status']")).to_have_text("Link undone.")
    expect(page.locator(".flash.superseded")).to_have_count(0)
    expect(page.get_by_text("No links yet.")).to_be_visible()
    with memoria_server.api() as api:
        assert api.get(f"/memories/{old}").json()["valid_to"] is None


def test_a_refused_link_shows_why_on_the_page(signed_in: Page, memoria_server: MemoriaServer) -> None:
    page = signed_in
    word = unique_word()
    first = memoria_server.store(f"The {word} API is rate limited to 100 requests a minute")
    second = memoria_server.store(f"The {word} API limit rose to 300 requests a minute", supersedes=[first])

    page.goto(f"/memories/{first}")
    form = page.get_by_role("form", name="Add a link")
    form.get_by_label("This memory").select_option("supersedes")
    form.get_by_label("Other memory's id").fill(str(second))
    with page.expect_response(lambda r: r.request.method == "POST") as answer:
        form.get_by_role("button", name="Add link").click()
    assert answer.value.status == 409
    expect(page.locator("[role='alert']")).to_contain_text("cycle")
    expect(page.get_by_label("Other memory's id")).to_have_value(str(second))
