"""`POST /v1/capture/claude-code` leaves out what carries nothing and folds what repeats.

Through the real app and database: the answer's skip counts per reason and the
`memoria_capture_skipped{reason}` counter; a repeated exchange (the same question and answer in
another session, in any case or punctuation) counted into the episode it repeats — its
`seen_count`, `last_seen_at` and expiry — instead of stored; a spool sent again counting nothing
twice; repeats inside one batch; and what is not a repeat (another answer, another namespace, a
deleted episode, a long chunked exchange).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg

from app.capture.rules import API_ERROR, GREETING, INTERRUPTED, PROGRESS_ONLY, UNANSWERED
from tests.test_capture_route import Client, Headers, capture, exchange, read

QUESTION = "What region is the staging database in?"
ANSWER = "The staging database runs in eu-west-1, in the shop-staging account."


def asked(session: str, turn: int, at: str, prompt: str = QUESTION, reply: str = ANSWER) -> dict[str, Any]:
    return exchange(turn, session=session, prompt=prompt, reply=reply, started_at=at)


def skipped_total(client: Client, reason: str) -> float:
    value = client.app.state.metrics.registry.get_sample_value(
        "memoria_capture_skipped_total", {"reason": reason}
    )
    return value or 0.0


def folded_total(client: Client) -> float:
    return client.app.state.metrics.registry.get_sample_value("memoria_capture_folded_total") or 0.0


async def test_exchanges_with_nothing_to_remember_are_counted_per_reason_and_not_stored(
    client: Client, alice: Headers, conn: asyncpg.Connection
) -> None:
    before = skipped_total(client, GREETING)
    answer = await capture(
        client,
        alice,
        [
            exchange(0, prompt="hi", reply="Hello! How can I help you today?"),
            exchange(
                1,
                prompt=QUESTION,
                reply='API Error: 529 {"type":"error","error":{"type":"overloaded_error"}}',
            ),
            exchange(2, prompt="Explain the retry policy", reply="[Request interrupted by user]"),
            exchange(
                3, prompt="run the tests", reply="All tests passed.", digest={"commands": ["pytest -q"]}
            ),
            exchange(4, prompt=QUESTION, reply="I couldn't find it anywhere in this repository."),
            exchange(5, prompt=QUESTION, reply=ANSWER),
            exchange(6, prompt="great, thanks!", reply="You're welcome!"),
        ],
    )
    assert {k: answer[k] for k in ("stored", "duplicates", "folded", "skipped", "skipped_reasons")} == {
        "stored": 1,
        "duplicates": 0,
        "folded": 0,
        "skipped": 6,
        "skipped_reasons": {API_ERROR: 1, GREETING: 2, INTERRUPTED: 1, PROGRESS_ONLY: 1, UNANSWERED: 1},
    }
    assert [r["turn"] for r in answer["results"]] == [5], "one result per exchange stored"
    assert await conn.fetchval("SELECT count(*) FROM memories") == 1
    assert skipped_total(client, GREETING) - before == 2
    assert skipped_total(client, PROGRESS_ONLY) >= 1


async def test_a_repeated_exchange_folds_into_its_episode_with_a_seen_count_and_a_later_expiry(
    client: Client, alice: Headers, conn: asyncpg.Connection
) -> None:
    first = await capture(client, alice, [asked("s-1", 0, "2026-11-20T09:00:00Z")])
    episode = first["results"][0]["ids"][0]
    # an old episode, about to expire: its repeat must keep it
    await conn.execute("UPDATE memories SET expires_at = now() + interval '1 day'")
    before = folded_total(client)

    again = await capture(
        client,
        alice,
        [asked("s-2", 3, "2026-11-25T14:00:00Z", QUESTION.lower().rstrip("?"), ANSWER.upper())],
    )
    assert {k: again[k] for k in ("stored", "duplicates", "folded", "skipped")} == {
        "stored": 0,
        "duplicates": 0,
        "folded": 1,
        "skipped": 0,
    }
    assert again["results"] == [
        {"session_id": "s-2", "turn": 3, "ids": [episode], "duplicate": False, "folded": True}
    ]
    assert await conn.fetchval("SELECT count(*) FROM memories") == 1
    memory = await read(client, alice, episode)
    assert memory["seen_count"] == 2
    assert datetime.fromisoformat(memory["last_seen_at"]) == datetime(2026, 11, 25, 14, tzinfo=UTC)
    assert datetime.fromisoformat(memory["expires_at"]) > datetime.now(UTC) + timedelta(days=20)
    assert memory["content"].startswith(f"User: {QUESTION}"), "the first wording is kept"
    assert folded_total(client) - before == 1


async def test_a_folded_exchange_sent_again_counts_once(client: Client, alice: Headers) -> None:
    first = await capture(client, alice, [asked("s-1", 0, "2026-11-20T09:00:00Z")])
    episode = first["results"][0]["ids"][0]
    repeat = [asked("s-2", 0, "2026-11-21T09:00:00Z"), asked("s-3", 0, "2026-11-22T09:00:00Z")]
    assert (await capture(client, alice, repeat))["folded"] == 2

    for batch in (repeat, repeat[:1], [asked("s-1", 0, "2026-11-20T09:00:00Z")]):  # a spool flushed again
        answer = await capture(client, alice, batch)
        assert (answer["stored"], answer["folded"], answer["duplicates"]) == (0, 0, len(batch))
        assert {r["ids"][0] for r in answer["results"]} == {episode}
    memory = await read(client, alice, episode)
    assert memory["seen_count"] == 3
    assert datetime.fromisoformat(memory["last_seen_at"]) == datetime(2026, 11, 22, 9, tzinfo=UTC)


async def test_repeats_inside_one_batch_fold_into_the_first_of_them(
    client: Client, alice: Headers, conn: asyncpg.Connection
) -> None:
    answer = await capture(
        client,
        alice,
        [
            asked("s-1", 0, "2026-11-20T09:00:00Z"),
            exchange(
                1, session="s-1", prompt="How do we deploy?", reply="With Terraform, from the infra repo."
            ),
            asked("s-2", 0, "2026-11-21T09:00:00Z"),
            asked("s-3", 0, "2026-11-22T09:00:00Z"),
        ],
    )
    assert (answer["stored"], answer["folded"]) == (2, 2)
    ids = [r["ids"][0] for r in answer["results"]]
    assert ids[0] == ids[2] == ids[3] != ids[1]
    assert [r["folded"] for r in answer["results"]] == [False, False, True, True]
    assert (await read(client, alice, ids[0]))["seen_count"] == 3
    assert await conn.fetchval("SELECT count(*) FROM memories") == 2


async def test_another_answer_another_namespace_or_a_deleted_episode_is_no_repeat(
    client: Client, alice: Headers, bob: Headers, conn: asyncpg.Connection
) -> None:
    first = await capture(client, alice, [asked("s-1", 0, "2026-11-20T09:00:00Z")])
    episode = first["results"][0]["ids"][0]
    changed = await capture(
        client,
        alice,
        [asked("s-2", 0, "2026-11-21T09:00:00Z", reply="It moved to eu-central-1 in November.")],
    )
    elsewhere = await capture(
        client, alice, [asked("s-3", 0, "2026-11-21T10:00:00Z")], namespace="repo:other"
    )
    bobs = await capture(client, bob, [asked("s-4", 0, "2026-11-21T11:00:00Z")])
    for answer in (changed, elsewhere, bobs):
        assert (answer["stored"], answer["folded"]) == (1, 0)
    assert (await read(client, alice, episode))["seen_count"] == 1

    assert (await client.delete(f"/v1/memories/{episode}", headers=alice)).status_code == 204
    after = await capture(client, alice, [asked("s-5", 0, "2026-11-22T09:00:00Z")])
    assert (after["stored"], after["folded"]) == (1, 0)
    assert after["results"][0]["ids"][0] != episode


async def test_a_long_exchange_stored_in_chunks_is_not_folded(
    client: Client, alice: Headers, conn: asyncpg.Connection
) -> None:
    long_reply = "\n\n".join(
        f"Paragraph {i}: " + "the deploy pipeline does this step. " * 20 for i in range(12)
    )
    first = await capture(client, alice, [asked("s-1", 0, "2026-11-20T09:00:00Z", reply=long_reply)])
    second = await capture(client, alice, [asked("s-2", 0, "2026-11-21T09:00:00Z", reply=long_reply)])
    assert len(first["results"][0]["ids"]) > 1
    assert second["folded"] == 0
    assert second["duplicates"] == 1, "the same chunks are live memories already"
    assert await conn.fetchval("SELECT count(*) FROM memories WHERE fold_key IS NOT NULL") == 0
