"""Launching the system Chromium, signing in to the web UI, and its first contentful paint.

Independent of pytest: the browser tests use it, and so can a script measuring a running server:

    .venv/bin/python -m tests.browser.paint http://127.0.0.1:8080 < key-file   # prints FCP ms per run
"""

from __future__ import annotations

import os
import shutil
import sys
from typing import Any

from playwright.sync_api import Browser, Page, Playwright, sync_playwright

SIGN_IN_TIMEOUT_MS = 15_000


def chromium_path() -> str:
    """The system Chromium (Playwright's downloaded browsers are never used): `CHROMIUM_BIN`, else
    `chromium` on PATH, else Debian's /usr/bin/chromium."""
    return os.environ.get("CHROMIUM_BIN") or shutil.which("chromium") or "/usr/bin/chromium"


def launch_options() -> dict[str, Any]:
    args = ["--disable-dev-shm-usage"]  # containers give /dev/shm 64 MB: Chromium would crash tabs
    if os.geteuid() == 0:
        args.append("--no-sandbox")  # Chromium refuses to run as root with its sandbox
    return {"executable_path": chromium_path(), "headless": True, "args": args}


def launch(playwright: Playwright) -> Browser:
    return playwright.chromium.launch(**launch_options())


def sign_in(page: Page, base_url: str, key: str) -> None:
    """Through the sign-in form, as a person would; ends on /memories."""
    page.goto(f"{base_url}/signin")
    page.get_by_label("API key").fill(key)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{base_url}/memories**", timeout=SIGN_IN_TIMEOUT_MS)


def first_contentful_paint_ms(page: Page, base_url: str) -> float:
    """Opens /memories (the page must be signed in) and returns its first-contentful-paint, in ms
    since navigation start, from `performance.getEntriesByType('paint')`."""
    page.goto(f"{base_url}/memories", wait_until="load")
    value = page.evaluate(
        """() => new Promise((resolve) => {
            const find = () => performance.getEntriesByType('paint')
                .find((e) => e.name === 'first-contentful-paint');
            const now = find();
            if (now) { resolve(now.startTime); return; }
            new PerformanceObserver((list, observer) => {
                const entry = list.getEntries().find((e) => e.name === 'first-contentful-paint');
                if (entry) { observer.disconnect(); resolve(entry.startTime); }
            }).observe({ type: 'paint', buffered: true });
            setTimeout(() => resolve(null), 5000);
        })"""
    )
    if value is None:
        raise RuntimeError("no first-contentful-paint entry on /memories within 5 s")
    return float(value)


def measure(base_url: str, key: str, runs: int = 5) -> list[float]:
    """First contentful paint of /memories, `runs` times in one signed-in browser context."""
    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            page = browser.new_context().new_page()
            sign_in(page, base_url, key)
            return [first_contentful_paint_ms(page, base_url) for _ in range(runs)]
        finally:
            browser.close()


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print(f"usage: {argv[0]} BASE_URL [RUNS]  (the API key on stdin)", file=sys.stderr)
        return 2
    key = sys.stdin.readline().strip()
    runs = int(argv[2]) if len(argv) == 3 else 5
    for ms in measure(argv[1].rstrip("/"), key, runs):
        print(f"{ms:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
