"""The web UI's pages and forms, through the app (the real browser tests are tests/browser).

What is pinned here: sign-in sets an HttpOnly SameSite=Strict cookie and keeps the key nowhere;
every page needs a live session, every POST the session's CSRF token; bad form input re-renders the
form with the message (4xx, nothing stored); one user never sees another's memories; signing out
or revoking the key ends the session at once; the pages carry a CSP that allows only this origin.
"""

from __future__ import annotations

import asyncio
import base64
import os
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from pydantic import SecretStr

from app.auth.service import revoke_key
from app.auth.settings import AuthSettings
from app.embeddings import LocalEmbedder
from app.factory import create_app
from app.secrets import SecretSettings
from app.settings import Settings
from tests.scoped_keys import scoped_key

Client = AsyncTestClient[Litestar]
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


def csrf_of(html: str) -> str:
    found = CSRF.search(html)
    assert found is not None, "the page has no CSRF token"
    return found.group(1)


async def sign_in(client: Client, key: str) -> str:
    """Signs `client` in with `key`; the session's CSRF token (from the page signed in to)."""
    form = await client.get("/signin")
    answer = await client.post(
        "/signin", data={"key": key, "csrf_token": csrf_of(form.text), "next": "/memories"}
    )
    assert answer.status_code == 303, answer.text
    assert answer.headers["location"] == "/memories"
    page = await client.get("/memories")
    assert page.status_code == 200
    return csrf_of(page.text)


async def add_memory(client: Client, csrf: str, content: str, **fields: str) -> int:
    answer = await client.post("/memories/new", data={"csrf_token": csrf, "content": content, **fields})
    assert answer.status_code == 303, answer.text
    location = answer.headers["location"]
    match = re.fullmatch(r"/memories/(\d+)\?done=saved", location)
    assert match is not None, location
    return int(match.group(1))


async def capture_episode(client: Client, key: str, namespace: str = "default") -> int:
    """One exchange captured as an episode through the hooks' route; its public id."""
    exchange = {"session_id": "s-1", "turn": 1, "prompt": "Which queue?", "reply": "The invoices queue."}
    captured = await client.post(
        f"/v1/capture/claude-code?namespace={namespace}",
        json={"exchanges": [exchange]},
        headers={"Authorization": f"Bearer {key}"},
    )
    assert captured.status_code == 200, captured.text
    (episode_id,) = captured.json()["results"][0]["ids"]
    return int(episode_id)


@asynccontextmanager
async def browser(app: Litestar) -> AsyncIterator[Client]:
    """A client that, like a test of redirects needs, does not follow them."""
    async with AsyncTestClient(app=app) as client:
        client.follow_redirects = False
        yield client


@pytest.fixture
async def client(app: Litestar) -> AsyncIterator[Client]:
    async with browser(app) as test_client:
        yield test_client


async def drain_jobs(client: Client, app: Litestar) -> None:
    """Runs the queued jobs (concept indexing) now, on the app's own loop, as the worker would."""
    jobs = app.state.jobs
    await asyncio.to_thread(lambda: client.blocking_portal.call(jobs.run_pending))


@pytest.fixture
async def alice_key(conn: asyncpg.Connection) -> str:
    return (await scoped_key(conn, "alice", ["read", "write"])).key


async def test_signing_in_sets_an_httponly_samesite_strict_cookie_that_holds_no_key(
    client: Client, alice_key: str
) -> None:
    form = await client.get("/signin")
    assert form.status_code == 200
    assert 'type="password"' in form.text and "API key" in form.text
    answer = await client.post("/signin", data={"key": alice_key, "csrf_token": csrf_of(form.text)})
    assert answer.status_code == 303
    cookie = next(v for k, v in answer.headers.multi_items() if k == "set-cookie" and "memoria_session=" in v)
    assert "HttpOnly" in cookie and "samesite=strict" in cookie.lower() and "Path=/" in cookie
    assert alice_key not in cookie
    assert "Secure" not in cookie  # plain http here; `auto` sets it behind https


async def test_a_wrong_key_shows_the_form_again_with_an_alert(client: Client) -> None:
    form = await client.get("/signin")
    answer = await client.post("/signin", data={"key": "mem_nope", "csrf_token": csrf_of(form.text)})
    assert answer.status_code == 401
    assert 'role="alert"' in answer.text and "does not work" in answer.text
    assert "memoria_session=" not in answer.headers.get("set-cookie", "")
    alert = answer.text.split('role="alert"')[1].split("</p>")[0]
    assert "`" not in alert, "the command is rendered as code, not in literal backticks"
    assert "<code>memoria keys create --user NAME --create-user</code>" in alert


async def test_the_signin_page_names_a_command_that_creates_a_key_for_a_new_user(client: Client) -> None:
    page = (await client.get("/signin")).text
    assert "<code>memoria keys create --user NAME --create-user</code> prints one" in page
    assert "`" not in page


async def test_signing_in_without_the_forms_token_is_refused(client: Client, alice_key: str) -> None:
    answer = await client.post("/signin", data={"key": alice_key})
    assert answer.status_code == 403
    assert "memoria_session=" not in answer.headers.get("set-cookie", "")


async def test_an_empty_key_asks_for_one(client: Client) -> None:
    form = await client.get("/signin")
    answer = await client.post("/signin", data={"key": "  ", "csrf_token": csrf_of(form.text)})
    assert answer.status_code == 400 and "Paste an API key" in answer.text


@pytest.mark.parametrize(
    "path",
    ["/namespaces", "/memories", "/memories/new", "/memories/1", "/recall?q=x", "/concepts", "/health"],
)
async def test_pages_send_a_visitor_without_a_session_to_sign_in(client: Client, path: str) -> None:
    answer = await client.get(path)
    assert answer.status_code == 303
    assert answer.headers["location"].startswith("/signin?next=")


async def test_the_root_sends_to_sign_in_then_to_the_memories(client: Client, alice_key: str) -> None:
    assert (await client.get("/")).headers["location"] == "/signin"
    await sign_in(client, alice_key)
    assert (await client.get("/")).headers["location"] == "/memories"


async def test_sign_in_never_redirects_off_site(client: Client, alice_key: str) -> None:
    form = await client.get("/signin?next=//evil.example/x")
    assert 'value="/memories"' in form.text
    answer = await client.post(
        "/signin", data={"key": alice_key, "csrf_token": csrf_of(form.text), "next": "https://evil.example"}
    )
    assert answer.headers["location"] == "/memories"


async def test_every_page_renders_for_a_signed_in_user(client: Client, alice_key: str, app: Litestar) -> None:
    csrf = await sign_in(client, alice_key)
    memory_id = await add_memory(client, csrf, "Priya deploys the billing API from Lisbon with Terraform")
    await drain_jobs(client, app)
    concepts = await client.get("/concepts")
    concept_ids = re.findall(r'href="/concepts/(\d+)"', concepts.text)
    assert concept_ids, concepts.text
    for path in [
        "/namespaces",
        "/memories",
        f"/memories/{memory_id}",
        f"/memories/{memory_id}/edit",
        f"/memories/{memory_id}/purge",
        "/memories/new",
        "/recall",
        "/recall?q=billing+deploy",
        "/concepts",
        "/concepts?q=priya",
        f"/concepts/{concept_ids[0]}",
        "/health",
    ]:
        answer = await client.get(path)
        assert answer.status_code == 200, (path, answer.text[:500])
        assert answer.headers["content-type"].startswith("text/html")
        assert "Sign out" in answer.text, path
    graph = await client.get(f"/concepts/{concept_ids[0]}/neighborhood.json")
    assert graph.status_code == 200
    assert {"nodes", "edges"} <= graph.json().keys()
    assert graph.json()["nodes"][0]["depth"] == 0


async def test_a_post_without_the_sessions_token_is_refused_and_changes_nothing(
    client: Client, alice_key: str
) -> None:
    csrf = await sign_in(client, alice_key)
    memory_id = await add_memory(client, csrf, "The staging database is on port 5433")
    for data in ({}, {"csrf_token": "forged"}):
        answer = await client.post(f"/memories/{memory_id}/forget", data=data)
        assert answer.status_code == 403, answer.text
        assert "text/html" in answer.headers["content-type"]
    assert "deleted" not in (await client.get(f"/memories/{memory_id}")).text.lower()
    assert "Forgotten on" not in (await client.get(f"/memories/{memory_id}")).text


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"content": "   "}, "Content: write what should be remembered"),
        ({"content": "x", "importance": "7"}, "Importance: a number between 0 and 1"),
        ({"content": "x", "importance": "lots"}, "Importance: a number between 0 and 1"),
        ({"content": "x", "namespace": "bad name!"}, "namespace"),
        ({"content": "x" * 70_000}, "content"),
    ],
)
async def test_bad_input_shows_the_form_again_with_the_message_and_stores_nothing(
    client: Client, alice_key: str, conn: asyncpg.Connection, fields: dict[str, str], message: str
) -> None:
    csrf = await sign_in(client, alice_key)
    answer = await client.post("/memories/new", data={"csrf_token": csrf, **fields})
    assert 400 <= answer.status_code < 500, answer.text[:300]
    assert 'role="alert"' in answer.text
    assert message.lower() in answer.text.lower()
    if len(fields["content"]) < 100 and fields["content"].strip():
        assert f">{fields['content']}</textarea>" in answer.text  # what was typed is kept
    assert await conn.fetchval("SELECT count(*) FROM memories") == 0


async def test_add_edit_forget_undo_and_purge(
    client: Client, alice_key: str, conn: asyncpg.Connection
) -> None:
    csrf = await sign_in(client, alice_key)
    memory_id = await add_memory(
        client, csrf, "Use pnpm, not npm, in the web repo", category="preference", tags="tooling, js"
    )
    shown = await client.get(f"/memories/{memory_id}?done=saved")
    assert "Saved." in shown.text and "#tooling" in shown.text and "preference" in shown.text

    edited = await client.post(
        f"/memories/{memory_id}/edit",
        data={"csrf_token": csrf, "content": "Use pnpm 9 in the web repo", "importance": "0.8", "tags": "js"},
    )
    assert edited.status_code == 303
    page = (await client.get(f"/memories/{memory_id}")).text
    assert "Use pnpm 9 in the web repo" in page and "0.80" in page

    forgot = await client.post(f"/memories/{memory_id}/forget", data={"csrf_token": csrf})
    assert forgot.headers["location"] == f"/memories?forgotten_id={memory_id}"
    listing = (await client.get(forgot.headers["location"])).text
    assert f"Forgot memory {memory_id}." in listing and "Undo" in listing
    assert f'id="memory-{memory_id}"' not in listing
    assert f'id="memory-{memory_id}"' in (await client.get("/memories?forgotten=1")).text

    undo = await client.post(f"/memories/{memory_id}/restore", data={"csrf_token": csrf})
    assert undo.headers["location"] == f"/memories/{memory_id}?done=restored"
    assert f'id="memory-{memory_id}"' in (await client.get("/memories")).text

    unconfirmed = await client.post(f"/memories/{memory_id}/purge", data={"csrf_token": csrf})
    assert unconfirmed.status_code == 422 and "confirmation" in unconfirmed.text
    purged = await client.post(f"/memories/{memory_id}/purge", data={"csrf_token": csrf, "confirm": "purge"})
    assert purged.status_code == 303
    assert await conn.fetchval("SELECT count(*) FROM memories") == 0
    assert (await client.get(f"/memories/{memory_id}")).status_code == 404


async def test_the_date_filters_and_times_are_iso_8601_utc_not_the_browsers_locale(
    client: Client, alice_key: str
) -> None:
    csrf = await sign_in(client, alice_key)
    await add_memory(client, csrf, "Dates are written the ISO way")
    page = (await client.get("/memories?since=2020-01-31")).text
    assert 'type="date"' not in page and "datetime-local" not in page
    since = page[page.index('id="f-since"') :].split(">")[0]
    assert 'value="2020-01-31"' in since and 'placeholder="YYYY-MM-DD"' in since
    assert "From (UTC)" in page and "To (UTC)" in page
    shown = re.search(r'<time datetime="([^"]+)">([^<]+)</time>', page)
    assert shown is not None
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z", shown[1])
    assert shown[2] == shown[1][:16] + "Z"


async def test_the_list_filters_and_pages(client: Client, alice_key: str, app: Litestar) -> None:
    csrf = await sign_in(client, alice_key)
    for i in range(3):
        await add_memory(
            client, csrf, f"Runbook step {i}: restart the worker", category="runbook", namespace="ops"
        )
    await add_memory(client, csrf, "Prefers dark mode", category="preference")
    ops = (await client.get("/memories?namespace=ops")).text
    assert ops.count('class="memory"') == 3
    assert (await client.get("/memories?category=preference")).text.count('class="memory"') == 1
    captured = {"content": "Codex ran the migrations", "source": "codex"}
    bearer = {"Authorization": f"Bearer {alice_key}"}
    stored = await client.post("/v1/memories", json=captured, headers=bearer)
    assert stored.status_code == 201, stored.text
    from_codex = (await client.get("/memories?source=codex")).text
    assert from_codex.count('class="memory"') == 1 and "Codex ran the migrations" in from_codex
    bad = await client.get("/memories?since=yesterday")
    assert bad.status_code == 400 and "From: a date" in bad.text
    unknown = await client.get("/memories?namespace=nope")
    assert unknown.status_code == 400 and "nope" in unknown.text
    # one per page: the "Older" link keeps the filter and walks the list
    settings = app.state.ui_settings
    app.state.ui_settings = settings.model_copy(update={"page_size": 1})
    first = (await client.get("/memories?namespace=ops")).text
    older = re.search(r'href="/memories\?([^"]+)">Older', first)
    assert older is not None and "namespace=ops" in older.group(1)
    second = (await client.get("/memories?" + older.group(1).replace("&amp;", "&"))).text
    assert second.count('class="memory"') == 1
    assert re.findall(r'id="memory-(\d+)"', first) != re.findall(r'id="memory-(\d+)"', second)


async def test_one_user_never_sees_anothers_memories(
    client: Client, alice_key: str, conn: asyncpg.Connection
) -> None:
    bob_key = (await scoped_key(conn, "bob", ["read", "write"])).key
    alice_csrf = await sign_in(client, alice_key)
    memory_id = await add_memory(client, alice_csrf, "Alice's recovery codes live in the vault")
    client.cookies.clear()
    bob_csrf = await sign_in(client, bob_key)
    assert (await client.get(f"/memories/{memory_id}")).status_code == 404
    assert (await client.get(f"/memories/{memory_id}/edit")).status_code == 404
    assert "recovery codes" not in (await client.get("/memories")).text
    assert '<li class="hit">' not in (await client.get("/recall?q=recovery+codes+vault")).text
    forget = await client.post(f"/memories/{memory_id}/forget", data={"csrf_token": bob_csrf})
    assert forget.status_code == 404
    # Alice's token is hers: Bob's session cannot use it
    stolen = await client.post(f"/memories/{memory_id}/forget", data={"csrf_token": alice_csrf})
    assert stolen.status_code == 403
    client.cookies.clear()
    await sign_in(client, alice_key)
    assert "Forgotten on" not in (await client.get(f"/memories/{memory_id}")).text


async def test_a_write_share_grantee_can_neither_restore_nor_purge_the_owners_trash_from_the_forms(
    client: Client, alice_key: str, conn: asyncpg.Connection
) -> None:
    bob_key = (await scoped_key(conn, "bob", ["read", "write"])).key
    alice_csrf = await sign_in(client, alice_key)
    memory_id = await add_memory(client, alice_csrf, "Alice's old runbook", namespace="team")
    forgot = await client.post(f"/memories/{memory_id}/forget", data={"csrf_token": alice_csrf})
    assert forgot.status_code == 303
    await conn.execute(
        "INSERT INTO namespace_shares (namespace_id, grantee_id, permission)"
        " SELECT n.id, u.id, 'write' FROM namespaces n, users u WHERE n.name = 'team' AND u.name = 'bob'"
    )
    client.cookies.clear()
    bob_csrf = await sign_in(client, bob_key)
    restore = await client.post(f"/memories/{memory_id}/restore", data={"csrf_token": bob_csrf})
    assert restore.status_code == 404, restore.text
    purge = await client.post(
        f"/memories/{memory_id}/purge", data={"csrf_token": bob_csrf, "confirm": "purge"}
    )
    assert purge.status_code == 404, purge.text
    assert await conn.fetchval("SELECT deleted_at IS NOT NULL FROM memories") is True


async def test_the_namespace_pickers_offer_the_users_own_namespaces_by_name(
    client: Client, alice_key: str, conn: asyncpg.Connection
) -> None:
    bob_key = (await scoped_key(conn, "bob", ["read", "write"])).key
    csrf = await sign_in(client, bob_key)
    await add_memory(client, csrf, "Bob's own note", namespace="bobs-project")
    client.cookies.clear()
    csrf = await sign_in(client, alice_key)
    await add_memory(client, csrf, "Deploys go out on Tuesdays", namespace="work")
    await add_memory(client, csrf, "The cat's name is Miso", namespace="home")
    for path in ("/recall?namespace=work", "/memories?namespace=work"):
        html = (await client.get(path)).text
        picker = re.search(r'<select id="[a-z]-namespace" name="namespace">(.*?)</select>', html, re.S)
        assert picker is not None, path
        assert re.findall(r'<option value="([^"]*)"', picker.group(1)) == ["", "home", "work"], path
        assert '<option value="work" selected>' in picker.group(1), path


async def test_signing_out_ends_the_session_on_the_server(client: Client, alice_key: str) -> None:
    csrf = await sign_in(client, alice_key)
    copied = client.cookies.get("memoria_session")
    assert copied
    out = await client.post("/signout", data={"csrf_token": csrf})
    assert out.status_code == 303 and out.headers["location"] == "/signin"
    assert (await client.get("/memories")).status_code == 303
    client.cookies.set("memoria_session", copied)  # a copy of the cookie opens nothing now
    assert (await client.get("/memories")).status_code == 303


async def test_revoking_the_key_signs_its_browsers_out(client: Client, conn: asyncpg.Connection) -> None:
    created = await scoped_key(conn, "carol", ["read", "write"])
    await sign_in(client, created.key)
    await revoke_key(conn, str(created.id))
    assert (await client.get("/memories")).status_code == 303


async def test_pages_count_against_the_keys_rate_limit_with_its_api_requests(
    settings: Settings, embedder: LocalEmbedder, conn: asyncpg.Connection
) -> None:
    slow = 0.001  # tokens per second: nothing refills while the test runs
    limits = AuthSettings(key_requests_per_s=slow, key_burst=4)
    created = await scoped_key(conn, "erin", ["read", "write"])
    async with browser(create_app(settings.model_copy(update={"auth": limits}), embedder=embedder)) as client:
        await sign_in(client, created.key)  # the sign-in and the page it lands on: 2 of the key's 4
        api = await client.get("/v1/namespaces", headers={"Authorization": f"Bearer {created.key}"})
        assert api.status_code == 200  # the key's API requests take from the same bucket: 3
        assert (await client.get("/namespaces")).status_code == 200  # 4
        refused = await client.get("/memories")
        assert refused.status_code == 429
        assert refused.headers["content-type"].startswith("text/html") and "requests" in refused.text
        assert refused.headers["retry-after"] == "1000"  # one token at 0.001 per second
        api = await client.get("/v1/namespaces", headers={"Authorization": f"Bearer {created.key}"})
        assert api.status_code == 429
        await conn.execute(  # as if one token's worth of time had passed
            "UPDATE rate_limits SET updated_at = updated_at - make_interval(secs => $2) WHERE bucket = $1",
            f"key:{created.id}",
            1 / slow,
        )
        assert (await client.get("/memories")).status_code == 200


async def test_a_read_only_key_can_look_but_not_change(client: Client, conn: asyncpg.Connection) -> None:
    reader = await scoped_key(conn, "dave", ["read"])
    csrf = await sign_in(client, reader.key)
    answer = await client.post("/memories/new", data={"csrf_token": csrf, "content": "nope"})
    assert answer.status_code == 403 and "write" in answer.text


async def test_recall_shows_which_leg_found_each_hit(client: Client, alice_key: str) -> None:
    csrf = await sign_in(client, alice_key)
    await add_memory(client, csrf, "The billing service deploys with Terraform on Fridays")
    await add_memory(client, csrf, "Lunch is at noon")
    page = (await client.get("/recall?q=terraform+billing+deploys&w_graph=0")).text
    assert '<li class="hit">' in page
    first = page[page.index('<li class="hit">') :]
    assert "Terraform" in first[:600]
    assert 'class="leg lexical found"' in first and 'class="leg dense found"' in first
    assert "Fused" in first and "Final" in first
    # how the legs were weighed, and where each weight came from (the graph's: this request)
    assert "weights lexical 1 (settings), dense 1 (settings), graph 0 (request)" in page
    bad = await client.get("/recall?q=x&w_dense=99")
    assert bad.status_code == 400 and "Dense weight" in bad.text
    nothing = await client.get("/recall?q=x&namespace=nope")
    assert nothing.status_code == 400 and 'role="alert"' in nothing.text


async def test_secrets_show_as_placeholders_and_revealing_needs_the_scope(
    client: Client, conn: asyncpg.Connection
) -> None:
    plain = await scoped_key(conn, "erin", ["read", "write"])
    csrf = await sign_in(client, plain.key)
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    memory_id = await add_memory(client, csrf, f"The CI token is {token}")
    page = (await client.get(f"/memories/{memory_id}")).text
    assert token not in page and "Reveal secrets" not in page
    refused = await client.post(f"/memories/{memory_id}/secrets", data={"csrf_token": csrf})
    assert refused.status_code == 403
    assert await conn.fetchval("SELECT count(*) FROM secret_reads") == 0


async def test_pages_allow_only_this_origin_and_are_never_cached(client: Client, alice_key: str) -> None:
    await sign_in(client, alice_key)
    answer = await client.get("/memories")
    csp = answer.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert "unsafe-inline" not in csp
    assert answer.headers["cache-control"] == "no-store"
    static = await client.get("/ui/static/ui.css")
    assert static.status_code == 200 and "text/css" in static.headers["content-type"]
    api = await client.get("/healthz")
    assert api.headers["content-security-policy"].startswith("default-src 'none'")


async def test_ui_routes_stay_out_of_the_api_document(client: Client) -> None:
    paths: dict[str, Any] = (await client.get("/schema/openapi.json")).json()["paths"]
    assert not [p for p in paths if not p.startswith(("/v1", "/healthz", "/readyz", "/metrics", "/mcp"))]


async def test_errors_are_pages_not_json(client: Client, alice_key: str) -> None:
    await sign_in(client, alice_key)
    missing = await client.get("/memories/999999999")
    assert missing.status_code == 404 and "text/html" in missing.headers["content-type"]
    assert "Not found" in missing.text and "Back to your memories" in missing.text
    too_big = await client.get(f"/memories/{2**70}")
    assert too_big.status_code == 400 and "text/html" in too_big.headers["content-type"]


async def test_the_list_links_each_memory_to_its_concepts(
    client: Client, alice_key: str, app: Litestar
) -> None:
    csrf = await sign_in(client, alice_key)
    memory_id = await add_memory(client, csrf, "Priya reviews the Terraform plan in Lisbon")
    await drain_jobs(client, app)
    listing = (await client.get("/memories")).text
    item = listing[listing.index(f'id="memory-{memory_id}"') :]
    item = item[: item.index("</article>")]
    assert re.search(r'<a class="tag" href="/concepts/\d+">Priya</a>', item), item


async def test_recall_filters_by_category_and_kind(client: Client, alice_key: str) -> None:
    csrf = await sign_in(client, alice_key)
    await add_memory(client, csrf, "Deploys go out on Tuesdays", category="runbook")
    await add_memory(client, csrf, "Deploys are frozen in December", category="decision")
    page = (await client.get("/recall?q=deploys&category=runbook")).text
    assert "Tuesdays" in page and "December" not in page
    assert 'value="runbook"' in page  # the filter is shown again
    episodes = (await client.get("/recall?q=deploys&kind=episode")).text
    assert "Nothing matched" in episodes
    bad = await client.get("/recall?q=deploys&kind=dream")
    assert bad.status_code == 400 and "Kind: memory or episode" in bad.text


async def test_promoting_an_episode_makes_it_a_curated_memory(
    client: Client, alice_key: str, conn: asyncpg.Connection
) -> None:
    episode_id = await capture_episode(client, alice_key)
    csrf = await sign_in(client, alice_key)
    page = (await client.get(f"/memories/{episode_id}")).text
    assert "Promote" in page and "expires" in page
    promoted = await client.post(f"/memories/{episode_id}/promote", data={"csrf_token": csrf})
    assert promoted.headers["location"] == f"/memories/{episode_id}?done=promoted"
    after = (await client.get(promoted.headers["location"])).text
    assert "Promoted" in after and ">Promote<" not in after
    assert await conn.fetchval("SELECT kind FROM memories WHERE public_id = $1", episode_id) == "memory"


async def test_revealing_secrets_with_the_scope_shows_the_original_once_and_audits_it(
    settings: Settings, embedder: LocalEmbedder, conn: asyncpg.Connection
) -> None:
    sealing = SecretSettings(keys={"k1": SecretStr(base64.b64encode(os.urandom(32)).decode())})
    app = create_app(settings.model_copy(update={"secrets": sealing}), embedder=embedder)
    key = (await scoped_key(conn, "frank", ["read", "write", "secrets:read"])).key
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    async with browser(app) as client:
        csrf = await sign_in(client, key)
        memory_id = await add_memory(client, csrf, f"The CI token is {token}")
        page = (await client.get(f"/memories/{memory_id}")).text
        assert token not in page and "Reveal secrets" in page
        revealed = await client.post(f"/memories/{memory_id}/secrets", data={"csrf_token": csrf})
        assert revealed.status_code == 200 and token in revealed.text
        assert revealed.headers["cache-control"] == "no-store"
        assert token not in (await client.get(f"/memories/{memory_id}")).text
    assert await conn.fetchval("SELECT count(*) FROM secret_reads") == 1


async def test_the_namespaces_page_counts_live_memories_episodes_and_concepts(
    client: Client, alice_key: str, app: Litestar, conn: asyncpg.Connection
) -> None:
    csrf = await sign_in(client, alice_key)
    await add_memory(client, csrf, "Priya owns the Lisbon on-call rota", namespace="ops")
    await add_memory(client, csrf, "Deploys need two approvals", namespace="ops")
    forgotten = await add_memory(client, csrf, "The old runbook lives in the wiki", namespace="ops")
    assert (await client.post(f"/memories/{forgotten}/forget", data={"csrf_token": csrf})).status_code == 303
    await capture_episode(client, alice_key, namespace="ops")
    await drain_jobs(client, app)
    page = (await client.get("/namespaces")).text
    row = page[page.index('href="/memories?namespace=ops"') :]
    row = row[: row.index("</tr>")]
    counts = [int(n) for n in re.findall(r'<td class="num">(\d+)</td>', row)]
    assert counts[:2] == [2, 1] and counts[2] > 0, row  # live memories, episodes, concepts
    newest = await conn.fetchval(
        "SELECT max(m.created_at) FROM memories m JOIN namespaces n ON n.id = m.namespace_id "
        "WHERE n.name = 'ops' AND m.deleted_at IS NULL"
    )
    assert newest.strftime(">%Y-%m-%dT%H:%MZ<") in row  # when the newest live item (the episode) came, in UTC
    assert "Nothing shared" in page


async def test_an_episode_page_shows_how_often_its_exchange_was_seen(client: Client, alice_key: str) -> None:
    csrf = await sign_in(client, alice_key)
    assert csrf
    exchanges = [
        {
            "session_id": f"s-{n}",
            "turn": 0,
            "prompt": "Which queue holds refunds?",
            "reply": "The refunds queue.",
            "started_at": f"2026-11-2{n}T09:00:00Z",
        }
        for n in (1, 2)
    ]
    captured = await client.post(
        "/v1/capture/claude-code",
        json={"exchanges": exchanges},
        headers={"Authorization": f"Bearer {alice_key}"},
    )
    assert captured.status_code == 200, captured.text
    assert captured.json()["folded"] == 1
    episode_id = captured.json()["results"][0]["ids"][0]
    page = (await client.get(f"/memories/{episode_id}")).text
    assert (
        '<dt>Seen</dt><dd>2 times, last on <time datetime="2026-11-22T09:00:00Z">2026-11-22T09:00Z</time>'
        in page
    )
    once = await capture_episode(client, alice_key)
    assert "<dt>Seen</dt>" not in (await client.get(f"/memories/{once}")).text
