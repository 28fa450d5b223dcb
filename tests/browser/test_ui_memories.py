"""Memories in the web UI: add, list, edit, forget and undo, recall with explain, per-user isolation."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import MemoriaServer, PageFactory, unique_word
from tests.browser.paint import sign_in

pytestmark = pytest.mark.e2e

MEMORY_URL = re.compile(r"/memories/(\d+)(\?.*)?$")  # a query string may carry the flash
LIST_URL = re.compile(r"/memories(\?.*)?$")


def _memory_id(page: Page) -> int:
    found = MEMORY_URL.search(page.url)
    assert found, f"not on a memory's page: {page.url}"
    return int(found.group(1))


def test_store_a_memory_through_add_a_memory_and_see_it_on_memories(signed_in: Page) -> None:
    page = signed_in
    word = unique_word()
    content = f"The {word} deploy train leaves on Fridays"

    page.get_by_role("link", name="Add a memory").first.click()
    page.wait_for_url(re.compile(r"/memories/new$"))
    expect(page.get_by_label("Namespace")).to_have_value("default")
    expect(page.get_by_label("Importance")).to_have_value(re.compile(r"^0?\.50*$"))
    page.get_by_label("Content").fill(content)
    page.get_by_label("Category").fill("ops")
    page.get_by_label("Tags").fill("deploy, fridays")
    page.get_by_label("Importance").fill("0.7")
    page.get_by_role("button", name="Save", exact=True).click()

    page.wait_for_url(MEMORY_URL)
    memory_id = _memory_id(page)
    expect(page.locator("p.flash[role='status']")).to_have_text("Saved.")
    expect(page.locator("body")).to_contain_text(content)
    expect(page.locator("body")).to_contain_text("deploy")

    page.get_by_role("navigation").get_by_role("link", name="Memories", exact=True).click()
    page.wait_for_url(LIST_URL)
    article = page.locator(f"article.memory#memory-{memory_id}")
    expect(article).to_contain_text(content)
    expect(article.get_by_role("link", name="Open")).to_have_attribute("href", f"/memories/{memory_id}")


def test_store_with_empty_content_keeps_the_values_and_shows_the_alert(signed_in: Page) -> None:
    page = signed_in
    page.goto("/memories/new")
    page.get_by_label("Tags").fill("kept, values")
    with page.expect_response(lambda r: r.request.method == "POST") as answer:
        # a browser-side `required` would stop the form: the server's own check is what is tested
        page.locator("textarea[name='content']").evaluate("e => e.removeAttribute('required')")
        page.get_by_role("button", name="Save", exact=True).click()
    assert answer.value.status == 400
    expect(page.locator("[role='alert']")).to_be_visible()
    expect(page.get_by_label("Tags")).to_have_value("kept, values")


def test_recall_with_explain_shows_the_hit_with_leg_badges(
    signed_in: Page, memoria_server: MemoriaServer
) -> None:
    page = signed_in
    word = unique_word()
    content = f"Remember that {word} is the codename of the billing rewrite"
    memoria_server.store(content)

    page.get_by_role("navigation").get_by_role("link", name="Recall", exact=True).click()
    page.get_by_label("Query").fill(f"{word} codename")
    page.get_by_role("button", name="Recall", exact=True).click()
    page.wait_for_url(re.compile(r"/recall\?.*q="))

    hit = page.locator("ol.hits > li.hit").filter(has_text=word)
    expect(hit).to_have_count(1)
    expect(hit).to_contain_text(content)
    expect(hit.locator("dl.explain")).to_be_visible()
    for leg in ("lexical", "dense", "graph"):
        expect(hit.locator(f".leg.{leg}")).to_have_count(1)
    expect(hit.locator(".leg.lexical.found")).to_have_count(1)  # the made-up word is in the text
    expect(hit.locator(".leg.dense.found")).to_have_count(1)  # one of very few memories: nearest


def test_edit_a_memory_content_and_see_it_changed(signed_in: Page, memoria_server: MemoriaServer) -> None:
    page = signed_in
    word = unique_word()
    before = f"The {word} standup is at nine"
    after = f"The {word} standup moved to half past nine"
    memory_id = memoria_server.store(before, tags=["meetings"])

    page.goto(f"/memories/{memory_id}")
    page.get_by_role("link", name="Edit", exact=True).click()
    page.wait_for_url(re.compile(rf"/memories/{memory_id}/edit(\?.*)?$"))
    content = page.get_by_label("Content")
    expect(content).to_have_value(before)
    content.fill(after)
    page.get_by_role("button", name="Save changes").click()

    page.wait_for_url(re.compile(rf"/memories/{memory_id}(\?.*)?$"))
    expect(page.locator("p.flash[role='status']")).to_have_text("Saved.")
    expect(page.locator("body")).to_contain_text(after)
    expect(page.locator("body")).not_to_contain_text(before)
    with memoria_server.api() as api:
        assert api.get(f"/memories/{memory_id}").json()["content"] == after


def test_forget_then_undo_restores_the_memory(signed_in: Page, memoria_server: MemoriaServer) -> None:
    page = signed_in
    word = unique_word()
    content = f"The {word} printer needs a new toner cartridge"
    memory_id = memoria_server.store(content)

    page.goto(f"/memories/{memory_id}")
    page.get_by_role("button", name="Forget", exact=True).click()
    page.wait_for_url(LIST_URL)
    flash = page.locator(".flash[role='status']").filter(has_text=f"Forgot memory {memory_id}.")
    expect(flash).to_have_count(1)
    expect(page.locator(f"#memory-{memory_id}")).to_have_count(0)
    with memoria_server.api() as api:
        recalled = api.post("/recall", json={"query": word})
    assert recalled.status_code == 200, recalled.text
    assert all(hit["id"] != memory_id for hit in recalled.json()["results"]), "forgotten, still recalled"

    page.get_by_role("button", name="Undo").click()
    page.wait_for_url(re.compile(rf"/memories/{memory_id}(\?.*)?$"))
    expect(page.locator("p.flash[role='status']")).to_have_text("Restored.")
    expect(page.locator("body")).to_contain_text(content)
    page.goto("/memories")
    expect(page.locator(f"article.memory#memory-{memory_id}")).to_contain_text(content)


def test_user_b_cannot_open_or_list_user_a_memory(
    new_page: PageFactory, memoria_server: MemoriaServer
) -> None:
    word = unique_word()
    content = f"Alice keeps the {word} safe combination in her head"
    memory_id = memoria_server.store(content)  # alice's

    bob = new_page("bob")
    sign_in(bob, memoria_server.base, memoria_server.key_b)
    for path in (f"/memories/{memory_id}", f"/memories/{memory_id}/edit", f"/memories/{memory_id}/purge"):
        answer = bob.goto(path)
        assert answer is not None
        assert answer.status == 404, f"bob opened {path}: HTTP {answer.status}"
        assert "text/html" in answer.headers.get("content-type", ""), f"{path}: not an HTML 404 page"
        expect(bob.locator("body")).not_to_contain_text(word)
    bob.goto("/memories")
    expect(bob.locator(f"#memory-{memory_id}")).to_have_count(0)
    expect(bob.locator("body")).not_to_contain_text(word)
    bob.goto(f"/recall?q={word}")
    expect(bob.locator("body")).not_to_contain_text(word + " safe")

    # a forged form POST with bob's own valid CSRF token still cannot touch alice's memory
    bob.goto("/memories/new")
    token = bob.locator("input[name='csrf_token']").first.get_attribute("value")
    assert token
    forged = bob.request.post(f"/memories/{memory_id}/forget", form={"csrf_token": token}, max_redirects=0)
    assert forged.status in (403, 404), f"bob's POST /memories/{memory_id}/forget: HTTP {forged.status}"
    with memoria_server.api() as api:
        still = api.get(f"/memories/{memory_id}")
    assert still.status_code == 200 and still.json()["content"] == content

    alice = new_page("alice")
    sign_in(alice, memoria_server.base, memoria_server.key_a)
    alice.goto("/memories")
    expect(alice.locator(f"article.memory#memory-{memory_id}")).to_contain_text(content)
