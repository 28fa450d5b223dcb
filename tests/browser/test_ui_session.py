"""Signing in to the web UI: the form, a wrong key, the session cookie, the keyboard."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import NAV, MemoriaServer, wrong_key

pytestmark = pytest.mark.e2e


def test_sign_in_with_the_key_after_a_wrong_key_shows_the_alert(
    page: Page, memoria_server: MemoriaServer
) -> None:
    page.goto("/namespaces")
    expect(page).to_have_url(re.compile(r"/signin\?next=(%2F|/)namespaces$"))

    page.get_by_label("API key").fill(wrong_key(memoria_server.key_a))
    with page.expect_response(lambda r: r.request.method == "POST" and "/signin" in r.url) as answer:
        page.get_by_role("button", name="Sign in").click()
    assert answer.value.status == 401
    expect(page.locator("p.error[role='alert']")).to_be_visible()
    expect(page.get_by_label("API key")).to_be_visible()  # the form again
    expect(page.locator("input[type='hidden'][name='csrf_token']")).to_have_count(1)

    page.get_by_label("API key").fill(memoria_server.key_a)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r"/namespaces(\?.*)?$"))  # back where the visit started
    expect(page.locator("p.error[role='alert']")).to_have_count(0)
    nav = page.get_by_role("navigation")
    for label, href in NAV.items():
        expect(nav.get_by_role("link", name=label, exact=True)).to_have_attribute("href", href)
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()

    cookie = next(c for c in page.context.cookies() if c["name"] == "memoria_session")
    assert cookie["httpOnly"] is True
    assert cookie["sameSite"] == "Strict"
    assert cookie["path"] == "/"
    assert cookie["value"] != memoria_server.key_a, "the session cookie must not be the API key itself"

    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url(re.compile(r"/signin"))
    page.goto("/memories")
    expect(page).to_have_url(re.compile(r"/signin\?next="))

    # `next` never leads off the site
    page.goto("/signin?next=//evil.example/steal")
    page.get_by_label("API key").fill(memoria_server.key_a)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_load_state()
    assert page.url.startswith(memoria_server.base + "/"), f"signed in, then sent off-site: {page.url}"


def test_a_post_without_the_session_csrf_token_is_refused(
    signed_in: Page, memoria_server: MemoriaServer
) -> None:
    memory_id = memoria_server.store("A memory no forged form may forget")
    forms: list[dict[str, str | float | bool]] = [{}, {"csrf_token": "forged-token"}]
    for form in forms:
        answer = signed_in.request.post(f"/memories/{memory_id}/forget", form=form, max_redirects=0)
        assert answer.status == 403, f"POST /memories/{memory_id}/forget with {form}: HTTP {answer.status}"
        assert "text/html" in answer.headers.get("content-type", ""), "the 403 is not an HTML page"
    with memoria_server.api() as api:
        still = api.get(f"/memories/{memory_id}")
    assert still.status_code == 200, still.text
    signed_in.goto("/memories")
    expect(signed_in.locator(f"article.memory#memory-{memory_id}")).to_have_count(1)


def _focused(page: Page) -> dict[str, str]:
    info: dict[str, str] = page.evaluate(
        """() => {
            const e = document.activeElement;
            return {
                tag: e ? e.tagName.toLowerCase() : '',
                id: (e && e.id) || '',
                href: (e && e.getAttribute('href')) || '',
                text: ((e && (e.textContent || e.value)) || '').trim(),
                in_nav: String(!!(e && e.closest('nav'))),
            };
        }"""
    )
    return info


def _tab_until(
    page: Page, wanted: str, done: Callable[[dict[str, str]], bool], presses: int = 15
) -> list[dict[str, str]]:
    seen: list[dict[str, str]] = []
    for _ in range(presses):
        page.keyboard.press("Tab")
        seen.append(_focused(page))
        if done(seen[-1]):
            return seen
    raise AssertionError(f"{presses} presses of Tab never reached {wanted}; focus went through {seen}")


def test_keyboard_tab_reaches_the_nav_links_and_enter_signs_in(
    page: Page, memoria_server: MemoriaServer
) -> None:
    page.goto("/signin")
    _tab_until(page, "the API key field", lambda f: f["id"] == "key")
    page.keyboard.type(memoria_server.key_a)
    _tab_until(
        page, "the Sign in button", lambda f: f["tag"] in ("button", "input") and f["text"] == "Sign in"
    )
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/memories(\?.*)?$"))

    page.goto("/memories")  # focus starts at the top of a fresh page
    reached: set[str] = set()

    def all_nav_links(focus: dict[str, str]) -> bool:
        if focus["tag"] == "a" and focus["in_nav"] == "true":
            reached.add(focus["href"])
        return set(NAV.values()) <= reached

    _tab_until(page, f"every nav link {sorted(NAV.values())}", all_nav_links, presses=20)
