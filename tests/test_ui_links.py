"""Links in the web UI, through the app (the real browser walk is tests/browser/test_ui_links.py).

What is pinned here: a memory's page lists its links both ways (kind, direction, the other memory,
who made it and why) and its validity; a superseded memory carries a banner naming its successor;
the add-a-link form and each link's Undo go through the links service with the session's CSRF
token; every refusal (a cycle, another namespace, an id that is not yours, a kind or id that does
not read) shows the memory's page again with the message at a 4xx status and changes nothing; the
list hides superseded memories unless asked and marks them; recall names what a hit replaces and
the problem a fix came with.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import asyncpg
import pytest
from litestar import Litestar

from app.links import link
from app.links.settings import LinkSettings
from app.settings import Settings
from tests.scoped_keys import bearer, scoped_key
from tests.test_ui_pages import Client, browser, sign_in

OLD = "Background jobs run on Celery with RabbitMQ as the broker"
NEW = "We moved background jobs to Dramatiq on Redis streams"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """The pages' links are made by hand here: the automatic supersede (tests/test_auto_supersede.py)
    would link OLD and NEW on store, before the form does."""
    return settings.model_copy(update={"links": LinkSettings(auto_supersede=False)})


@pytest.fixture
async def client(app: Litestar) -> AsyncIterator[Client]:
    async with browser(app) as test_client:
        yield test_client


@pytest.fixture
async def alice_key(conn: asyncpg.Connection) -> str:
    return (await scoped_key(conn, "alice", ["read", "write"])).key


async def stored(client: Client, key: str, content: str, **fields: object) -> int:
    answer = await client.post("/v1/memories", json={"content": content, **fields}, headers=bearer(key))
    assert answer.status_code == 201, answer.text
    return int(answer.json()["id"])


async def link_rows(conn: asyncpg.Connection) -> list[tuple[int, str, int]]:
    rows = await conn.fetch(
        "SELECT s.public_id, l.kind, t.public_id FROM memory_links l"
        " JOIN memories s ON s.id = l.source_id JOIN memories t ON t.id = l.target_id ORDER BY l.id"
    )
    return [(r[0], r[1], r[2]) for r in rows]


def links_table(html: str) -> list[tuple[str, str, str]]:
    """(kind, direction, other id) of each row the page's links table shows."""
    return re.findall(r'data-kind="([^"]+)" data-direction="([^"]+)" data-other="(\d+)"', html)


async def test_adding_a_supersede_shows_it_both_ways_with_the_banner_and_undo_gives_it_back(
    client: Client, alice_key: str, conn: asyncpg.Connection
) -> None:
    csrf = await sign_in(client, alice_key)
    old, new = await stored(client, alice_key, OLD), await stored(client, alice_key, NEW)
    before = await client.get(f"/memories/{old}")
    assert "No links yet." in before.text and "Superseded by" not in before.text
    assert "now (it still holds)" in before.text

    added = await client.post(
        f"/memories/{new}/links", data={"csrf_token": csrf, "kind": "supersedes", "target": f"#{old}"}
    )
    assert added.status_code == 303, added.text
    assert added.headers["location"] == f"/memories/{new}?done=linked"
    assert await link_rows(conn) == [(new, "supersedes", old)]

    newer = await client.get(f"/memories/{new}?done=linked")
    assert "Linked." in newer.text
    assert links_table(newer.text) == [("supersedes", "out", str(old))]
    assert "Supersedes" in newer.text and OLD in newer.text and ">user, <" in newer.text
    older = await client.get(f"/memories/{old}")
    assert links_table(older.text) == [("supersedes", "in", str(new))]
    banner = re.search(r'<div role="status" class="flash warn superseded">(.*?)</div>', older.text, re.S)
    assert banner is not None, older.text
    assert f'Superseded by <a href="/memories/{new}">#{new}</a>' in banner.group(1)
    assert "stopped holding on" in banner.group(1)

    # undone from the old memory's page, where the link points in
    undone = await client.post(
        f"/memories/{old}/unlink",
        data={"csrf_token": csrf, "kind": "supersedes", "direction": "in", "other": str(new)},
    )
    assert undone.status_code == 303, undone.text
    assert undone.headers["location"] == f"/memories/{old}?done=unlinked"
    assert await link_rows(conn) == []
    again = await client.get(f"/memories/{old}?done=unlinked")
    assert "Link undone." in again.text and "flash warn superseded" not in again.text
    assert "now (it still holds)" in again.text


async def test_an_automatic_link_shows_its_origin_and_reason(
    client: Client, alice_key: str, conn: asyncpg.Connection
) -> None:
    await sign_in(client, alice_key)
    old, new = await stored(client, alice_key, OLD), await stored(client, alice_key, NEW)
    user_id = await conn.fetchval("SELECT id FROM users WHERE name = 'alice'")
    async with conn.transaction():
        await link(conn, user_id, new, "supersedes", old, origin="auto", reason="same subject <b>jobs</b>")
    page = await client.get(f"/memories/{old}")
    assert '<span class="badge">auto</span> same subject &lt;b&gt;jobs&lt;/b&gt;' in page.text


@pytest.mark.parametrize(
    ("form", "status", "message"),
    [
        pytest.param({"kind": "replaces", "target": "{a}"}, 400, "Kind: one of supersedes", id="bad-kind"),
        pytest.param({"kind": "see-also", "target": "abc"}, 400, "a memory&#39;s id", id="not-an-id"),
        pytest.param({"kind": "see-also", "target": "0"}, 400, "a memory&#39;s id", id="zero"),
        pytest.param({"kind": "see-also", "target": "-3"}, 400, "a memory&#39;s id", id="negative"),
        pytest.param({"kind": "see-also", "target": str(2**63)}, 400, "a memory&#39;s id", id="huge"),
        pytest.param({"kind": "see-also", "target": ""}, 400, "a memory&#39;s id", id="empty"),
        pytest.param({"kind": "see-also", "target": "{b}"}, 422, "linked to itself", id="itself"),
        pytest.param({"kind": "supersedes", "target": "{c}"}, 409, "cycle", id="cycle"),
        pytest.param(
            {"kind": "see-also", "target": "{other_ns}"}, 422, "different namespaces", id="namespace"
        ),
        pytest.param({"kind": "see-also", "target": "{bobs}"}, 404, "not found", id="other-tenant"),
        pytest.param({"kind": "see-also", "target": "999999999"}, 404, "not found", id="missing"),
    ],
)
async def test_a_refused_link_shows_the_page_again_with_the_message_and_changes_nothing(
    client: Client,
    alice_key: str,
    conn: asyncpg.Connection,
    form: dict[str, str],
    status: int,
    message: str,
) -> None:
    csrf = await sign_in(client, alice_key)
    a = await stored(client, alice_key, "Deploys go out on Tuesdays")
    b = await stored(client, alice_key, "Deploys go out on Thursdays", supersedes=[a])
    c = await stored(client, alice_key, "Deploys go out on Fridays", supersedes=[b])
    other_ns = await stored(client, alice_key, "Another project deploys daily", namespace="other")
    bob_key = (await scoped_key(conn, "bob", ["read", "write"])).key
    bobs = await stored(client, bob_key, "Bob deploys on Mondays")
    ids = {"a": a, "b": b, "c": c, "other_ns": other_ns, "bobs": bobs}
    links_before = await link_rows(conn)
    answer = await client.post(
        f"/memories/{b}/links",
        data={"csrf_token": csrf, "kind": form["kind"], "target": form["target"].format(**ids)},
    )
    assert answer.status_code == status, answer.text[:500]
    assert answer.headers["content-type"].startswith("text/html")
    alert = re.search(r'<p role="alert" class="error">(.*?)</p>', answer.text)
    assert alert is not None and message in alert.group(1), answer.text[:2000]
    assert f"Memory {b}" in answer.text  # the memory's own page, with its links still listed
    assert links_table(answer.text) == [("supersedes", "out", str(a)), ("supersedes", "in", str(c))]
    assert f'name="target" value="{form["target"].format(**ids)}"' in answer.text  # as typed
    assert await link_rows(conn) == links_before
    if form["target"] == "{bobs}":  # nothing of bob's memory shows, not even that it exists
        assert "Bob deploys" not in answer.text


async def test_undo_of_a_link_that_is_not_there_or_not_yours_is_a_page_not_an_error(
    client: Client, alice_key: str, conn: asyncpg.Connection
) -> None:
    csrf = await sign_in(client, alice_key)
    mine = await stored(client, alice_key, "The API listens on port 8080")
    other = await stored(client, alice_key, "The worker listens on port 8081")
    bob_key = (await scoped_key(conn, "bob", ["read", "write"])).key
    bobs = await stored(client, bob_key, "Bob's API listens on port 7070")
    bobs_other = await stored(client, bob_key, "Bob's worker listens on port 7071", supersedes=[bobs])
    for data, status in [
        ({"kind": "see-also", "direction": "out", "other": str(other)}, 404),
        ({"kind": "supersedes", "direction": "in", "other": str(bobs_other)}, 404),
        ({"kind": "nonsense", "direction": "out", "other": str(other)}, 400),
        ({"kind": "see-also", "direction": "sideways", "other": str(other)}, 400),
        ({"kind": "see-also", "direction": "out", "other": "x"}, 400),
    ]:
        answer = await client.post(f"/memories/{mine}/unlink", data={"csrf_token": csrf, **data})
        assert answer.status_code == status, (data, answer.text[:500])
        assert 'role="alert"' in answer.text
    # bob's memory, by its own page: not found, and his link stays
    undo = {"csrf_token": csrf, "kind": "supersedes", "direction": "out", "other": str(bobs)}
    assert (await client.post(f"/memories/{bobs_other}/unlink", data=undo)).status_code == 404
    add = {"csrf_token": csrf, "kind": "see-also", "target": str(mine)}
    assert (await client.post(f"/memories/{bobs}/links", data=add)).status_code == 404
    assert len(await link_rows(conn)) == 1


async def test_link_forms_need_the_sessions_token(
    client: Client, alice_key: str, conn: asyncpg.Connection
) -> None:
    await sign_in(client, alice_key)
    old, new = await stored(client, alice_key, OLD), await stored(client, alice_key, NEW)
    third = await stored(client, alice_key, "A third memory", supersedes=[old])
    for data in ({}, {"csrf_token": "forged"}):
        add = {**data, "kind": "see-also", "target": str(old)}
        assert (await client.post(f"/memories/{new}/links", data=add)).status_code == 403
        undo = {**data, "kind": "supersedes", "direction": "in", "other": str(third)}
        assert (await client.post(f"/memories/{old}/unlink", data=undo)).status_code == 403
    assert await link_rows(conn) == [(third, "supersedes", old)]


async def test_the_list_hides_superseded_memories_unless_asked_and_marks_them(
    client: Client, alice_key: str
) -> None:
    await sign_in(client, alice_key)
    old = await stored(client, alice_key, OLD)
    new = await stored(client, alice_key, NEW, supersedes=[old])
    listed = await client.get("/memories")
    assert f'id="memory-{new}"' in listed.text and f'id="memory-{old}"' not in listed.text
    assert 'name="superseded"' in listed.text
    everything = await client.get("/memories?superseded=1")
    assert f'id="memory-{old}"' in everything.text
    assert f'<a class="badge warn" href="/memories/{new}">superseded by #{new}</a>' in everything.text
    assert re.search(r'id="f-superseded" name="superseded" value="1" checked', everything.text)


async def test_recall_names_what_a_hit_replaces_and_the_problem_a_fix_came_with(
    client: Client, alice_key: str
) -> None:
    await sign_in(client, alice_key)
    old = await stored(client, alice_key, OLD)
    new = await stored(client, alice_key, NEW, supersedes=[old])
    problem = await stored(client, alice_key, "CI fails with 'too many open files' on the integration suite")
    fix = await stored(client, alice_key, "Raise ulimit -n to 65536 in the runner image")
    answer = await client.post(
        f"/v1/memories/{problem}/links",
        json={"kind": "resolved-by", "target": fix},
        headers=bearer(alice_key),
    )
    assert answer.status_code == 201, answer.text

    replaced = await client.get("/recall?q=Celery+RabbitMQ+broker")
    assert replaced.status_code == 200
    assert f'replaces <a href="/memories/{old}">#{old}</a>' in replaced.text
    assert f'href="/memories/{new}">{NEW}</a>' in replaced.text
    marked = await client.get("/recall?q=Celery+RabbitMQ+broker&superseded=1")
    assert f'<a class="badge warn" href="/memories/{new}">superseded by #{new}</a>' in marked.text

    fixes = await client.get("/recall?q=too+many+open+files+integration+suite&limit=1")
    assert f'came with <a href="/memories/{problem}">#{problem}</a>' in fixes.text


async def test_a_read_share_shows_a_shared_memorys_links_but_its_forms_are_refused(
    client: Client, conn: asyncpg.Connection
) -> None:
    alice = (await scoped_key(conn, "alice", ["read", "write", "admin"])).key
    old = await stored(client, alice, OLD, namespace="team")
    new = await stored(client, alice, NEW, namespace="team", supersedes=[old])
    bob = (await scoped_key(conn, "bob", ["read", "write"])).key
    granted = await client.post(
        "/v1/shares", json={"namespace": "team", "user": "bob", "permission": "read"}, headers=bearer(alice)
    )
    assert granted.status_code == 201, granted.text
    csrf = await sign_in(client, bob)

    seen = await client.get(f"/memories/{old}")
    assert seen.status_code == 200, seen.text[:500]
    assert links_table(seen.text) == [("supersedes", "in", str(new))]
    assert f'Superseded by <a href="/memories/{new}">#{new}</a>' in seen.text
    before = await link_rows(conn)
    added = await client.post(
        f"/memories/{old}/links", data={"csrf_token": csrf, "kind": "see-also", "target": new}
    )
    undone = await client.post(
        f"/memories/{old}/unlink",
        data={"csrf_token": csrf, "kind": "supersedes", "direction": "in", "other": new},
    )
    for answer in (added, undone):
        assert answer.status_code == 403, answer.text[:500]
        assert re.search(r'<p role="alert" class="error">[^<]*read-only', answer.text), answer.text[:2000]
    assert await link_rows(conn) == before
