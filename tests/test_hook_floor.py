"""The prompt hook's relevance floor and its question-only episodes: a prompt no recalled memory is
close to gets nothing (REST recall still answers it), an episode must clear the floor itself to be
injected (curated memories come with an answer that clears it), and an episode that is only a
question never takes the place of its answer.

The floor's figures come from `memoria bench quality --floor`; here it is pinned by behaviour: an
unrelated prompt in a namespace about something else is left alone, a related one is not, and each
prompt left alone is counted by reason."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import asyncpg
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.embeddings import LocalEmbedder
from app.factory import create_app
from app.hooks.context import question_only, without_bare_questions
from app.hooks.floor import RelevanceFloor, relevance_floor, similarity
from app.hooks.routes import OUTCOME_HEADER
from app.recall.schemas import HitExplanation, Kind, RecallHit
from app.settings import HookSettings, Settings

Client = AsyncTestClient[Litestar]
PROMPT = "/v1/hooks/claude-code/user-prompt-submit"
NAMESPACE = "repo:shop-api"
ROOMY = 10_000  # a budget a busy machine cannot make these tests race

FACTS = [
    "The staging database runs in eu-west-1 (Ireland).",
    "We deploy with Terraform; never run kubectl apply by hand.",
    "Use pnpm, not npm, for the frontend workspace.",
]


def hit(
    memory_id: int,
    content: str = "a memory",
    *,
    distance: float | None = None,
    lexical: float | None = None,
    kind: Kind = "memory",
    explained: bool = True,
) -> RecallHit:
    explanation = HitExplanation(
        kind=kind,
        lexical_rank=1 if lexical is not None else None,
        dense_rank=1 if distance is not None else None,
        graph_rank=None,
        graph_path=None,
        lexical_score=lexical,
        dense_distance=distance,
        fused_score=0.03,
        final_score=0.03,
    )
    return RecallHit(
        id=memory_id,
        namespace=NAMESPACE,
        content=content,
        category=None,
        tags=[],
        importance=0.5,
        is_sensitive=False,
        created_at=datetime.now(UTC),
        score=0.03,
        kind=kind,
        explain=explanation if explained else None,
    )


def test_one_hit_close_enough_clears_the_floor_for_the_whole_answer() -> None:
    floor = RelevanceFloor(min_similarity=0.3, min_lexical_score=None)
    assert floor.clears([hit(1, distance=0.9), hit(2, distance=0.65)])  # similarity 0.35
    assert not floor.clears([hit(1, distance=0.9), hit(2, distance=0.75)])  # 0.1 and 0.25


def test_the_lexical_bar_clears_a_hit_the_dense_leg_found_far_away() -> None:
    floor = RelevanceFloor(min_similarity=0.3, min_lexical_score=0.1)
    assert floor.clears([hit(1, distance=0.9, lexical=0.2)])
    assert not floor.clears([hit(1, distance=0.9, lexical=0.05)])


def test_without_dense_signals_the_floor_judges_by_the_lexical_bar_or_lets_the_answer_through() -> None:
    lexical_only = [hit(1, lexical=0.05)]
    assert RelevanceFloor(min_similarity=0.3, min_lexical_score=None).clears(lexical_only)
    assert not RelevanceFloor(min_similarity=0.3, min_lexical_score=0.1).clears(lexical_only)


def test_a_floor_with_both_bars_off_clears_everything() -> None:
    floor = RelevanceFloor(None, None)
    assert not floor.enabled
    assert floor.clears([hit(1, distance=1.9)])


def test_the_settings_describe_the_floor_and_minus_one_turns_the_dense_bar_off() -> None:
    assert relevance_floor(HookSettings(min_similarity=0.3)) == RelevanceFloor(0.3, None)
    lexical_only = HookSettings(min_similarity=-1, min_lexical_score=0.2)
    assert relevance_floor(lexical_only) == RelevanceFloor(None, 0.2)
    assert not relevance_floor(HookSettings(min_similarity=-1)).enabled


def test_an_episode_stays_only_when_it_clears_the_floor_itself_and_curated_memories_stay() -> None:
    floor = RelevanceFloor(min_similarity=0.3, min_lexical_score=None)
    close = hit(1, distance=0.6, kind="episode")  # similarity 0.4
    far_memory = hit(2, distance=0.85)  # 0.15: comes with the answer
    far = hit(3, distance=0.85, kind="episode")
    unreached = hit(4, lexical=0.5, kind="episode")  # the dense leg did not find it
    answer = [close, far_memory, far, unreached]
    assert floor.without_far_episodes(answer, answer) == [close, far_memory]


def test_the_lexical_bar_keeps_an_episode_sharing_rare_words_with_the_prompt() -> None:
    floor = RelevanceFloor(min_similarity=0.3, min_lexical_score=0.1)
    named = hit(1, distance=0.9, lexical=0.2, kind="episode")
    answer = [named, hit(2, distance=0.9, lexical=0.05, kind="episode")]
    assert floor.without_far_episodes(answer, answer) == [named]


def test_episodes_all_stay_when_the_floor_cannot_judge_them() -> None:
    far = [hit(1, distance=0.95, kind="episode"), hit(2, lexical=0.01, kind="episode")]
    assert RelevanceFloor(None, None).without_far_episodes(far, far) == far  # the floor is off
    lexical_only = [hit(1, lexical=0.01, kind="episode")]  # the dense leg did not run
    assert RelevanceFloor(0.3, None).without_far_episodes(lexical_only, lexical_only) == lexical_only
    assert RelevanceFloor(0.3, 0.1).without_far_episodes(lexical_only, lexical_only) == []


def test_similarity_is_one_minus_the_cosine_distance() -> None:
    assert similarity(0.0) == 1.0 and similarity(1.0) == 0.0 and similarity(2.0) == -1.0


QUESTION = "User: Which region does the staging database run in?"


@pytest.mark.parametrize(
    "content",
    [
        QUESTION,
        QUESTION + "\n\nAssistant: I don't know which region staging runs in.",
        QUESTION + '\n\nAssistant: API Error: 529 {"type":"overloaded_error"}',
        "User: where do the staging logs go\n\nAssistant: [Request interrupted by user]",
    ],
    ids=["no-reply", "unanswered", "api-error", "interrupted"],
)
def test_an_episode_holding_only_a_question_is_recognised(content: str) -> None:
    assert question_only(hit(1, content, kind="episode"))


@pytest.mark.parametrize(
    ("content", "kind"),
    [
        (QUESTION + "\n\nAssistant: It runs in eu-west-1 (Ireland).", "episode"),
        ("User: The staging database moved to eu-west-2 today.", "episode"),
        (QUESTION + "\n\nTools: commands psql -c 'show region'", "episode"),
        ("Which region does the staging database run in?", "memory"),
    ],
    ids=["answered", "a-statement", "tools-ran", "curated"],
)
def test_an_answered_exchange_a_statement_or_a_curated_memory_is_not_question_only(
    content: str, kind: Kind
) -> None:
    assert not question_only(hit(1, content, kind=kind))


def test_a_question_only_episode_never_outranks_its_answer() -> None:
    bare = hit(1, QUESTION, kind="episode")
    answer = hit(2, "The staging database runs in eu-west-1 (Ireland).")
    answered = hit(3, QUESTION + "\n\nAssistant: eu-west-1.", kind="episode")
    assert without_bare_questions([bare, answer]) == [answer]
    assert without_bare_questions([bare, answered]) == [answered]
    assert without_bare_questions([bare]) == [bare]  # alone, the question is all there is


@pytest.fixture
def hook_settings() -> HookSettings:
    return HookSettings(budget_ms=ROOMY)


@pytest.fixture
async def app(settings: Settings, embedder: LocalEmbedder, hook_settings: HookSettings) -> Litestar:
    return create_app(settings.model_copy(update={"hooks": hook_settings}), embedder=embedder)


@pytest.fixture
async def client(app: Litestar) -> AsyncIterator[Client]:
    async with AsyncTestClient(app=app) as test_client:
        yield test_client


async def store(client: Client, headers: dict[str, str], contents: list[str]) -> list[int]:
    body = [{"content": content, "namespace": NAMESPACE} for content in contents]
    response = await client.post("/v1/memories", json=body, headers=headers)
    assert response.status_code == 201, response.text
    return [int(result["id"]) for result in response.json()["results"]]


async def prompt(client: Client, headers: dict[str, str], text: str) -> Any:
    payload = {"hook_event_name": "UserPromptSubmit", "prompt": text}
    response = await client.post(PROMPT, json=payload, headers=headers, params={"namespace": NAMESPACE})
    assert response.status_code == 200, response.text
    return response


def without_context(app: Litestar, reason: str) -> float:
    value = app.state.metrics.registry.get_sample_value(
        "memoria_hook_prompts_without_context_total", {"reason": reason}
    )
    return float(value or 0.0)


@pytest.mark.parametrize(
    "text",
    [
        "what is a monad, in one paragraph?",
        "Please write a haiku about compilers.",
        "What's the capital of Australia?",
    ],
)
async def test_a_prompt_no_memory_is_close_to_gets_nothing(
    app: Litestar, client: Client, alice: dict[str, str], text: str
) -> None:
    await store(client, alice, FACTS)
    response = await prompt(client, alice, text)
    assert (response.json(), response.headers[OUTCOME_HEADER]) == ({}, "below-floor")
    assert without_context(app, "floor") == 1


async def test_a_prompt_about_a_memory_clears_the_floor(
    app: Litestar, client: Client, alice: dict[str, str]
) -> None:
    ids = await store(client, alice, FACTS)
    response = await prompt(client, alice, "Which region does the staging database run in?")
    assert response.headers[OUTCOME_HEADER].startswith("injected:")
    text = response.json()["hookSpecificOutput"]["additionalContext"]
    assert f"#{ids[0]} " in text
    registry = app.state.metrics.registry
    chars = registry.get_sample_value("memoria_hook_context_chars_total", {"event": "prompt"})
    assert (chars, without_context(app, "floor")) == (len(text), 0)


async def test_rest_recall_answers_a_prompt_below_the_floor_as_before(
    client: Client, alice: dict[str, str]
) -> None:
    await store(client, alice, FACTS)
    body = {"query": "what is a monad, in one paragraph?", "namespace": NAMESPACE, "explain": True}
    response = await client.post("/v1/recall", json=body, headers=alice)
    assert response.status_code == 200 and response.json()["results"]
    assert all("dense_distance" in hit["explain"] for hit in response.json()["results"])


@pytest.mark.parametrize("hook_settings", [HookSettings(budget_ms=ROOMY, min_similarity=-1)])
async def test_a_floor_switched_off_gives_every_prompt_its_hits(
    client: Client, alice: dict[str, str]
) -> None:
    await store(client, alice, FACTS)
    response = await prompt(client, alice, "what is a monad, in one paragraph?")
    assert response.headers[OUTCOME_HEADER].startswith("injected:")


async def test_trivial_prompts_are_counted_as_left_without_context(
    app: Litestar, client: Client, alice: dict[str, str]
) -> None:
    await store(client, alice, FACTS)
    for text in ("/compact", "thanks, that works!", "ok"):
        assert (await prompt(client, alice, text)).headers[OUTCOME_HEADER].startswith("skipped:")
    assert without_context(app, "trivial") == 3
    assert without_context(app, "floor") == 0


async def make_episodes(
    client: Client, headers: dict[str, str], conn: asyncpg.Connection, contents: list[str]
) -> list[int]:
    """Episodes as capture leaves them: stored, then marked captured (low importance, expiring)."""
    ids = await store(client, headers, contents)
    await conn.execute(
        "UPDATE memories SET kind = 'episode', importance = 0.2, expires_at = now() + interval '10 days' "
        "WHERE public_id = ANY($1::bigint[])",
        ids,
    )
    return ids


async def test_the_same_question_asked_in_many_sessions_never_takes_the_place_of_its_answer(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    replies = [
        "I couldn't find which region staging uses.",
        "I don't know which region the staging database runs in.",
        "I'm not sure, nothing in the repository says.",
    ]
    asked = [f"{QUESTION}\n\nAssistant: {reply}" for reply in replies]
    bare = await make_episodes(client, alice, conn, [QUESTION, *asked])
    (answer,) = await store(client, alice, [FACTS[0]])
    response = await prompt(client, alice, "Which region does the staging database run in?")
    text = response.json()["hookSpecificOutput"]["additionalContext"]
    assert f"#{answer} " in text
    assert not any(f"#{episode} " in text for episode in bare), text


async def test_a_question_asked_before_is_shown_when_nothing_answers_it(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    (bare,) = await make_episodes(client, alice, conn, [QUESTION])
    response = await prompt(client, alice, "Which region does the staging database run in?")
    assert f"#{bare} " in response.json()["hookSpecificOutput"]["additionalContext"]


REGION_PROMPT = "Which region does the staging database run in?"
CLOSE_EPISODE = (
    "User: how do I connect to the staging database?\n\n"
    "Assistant: Use psql with STAGING_DATABASE_URL from the vault."
)
FAR_EPISODE = "User: run the tests\n\nAssistant: All 118 tests pass."
NO_EPISODE_BAR = 0.0
"""`episode_min_score_ratio` out of the way: the floor alone decides which episodes are injected."""


async def similarities(client: Client, headers: dict[str, str], text: str) -> dict[int, float]:
    """Each memory REST recall finds for `text`, with its similarity to it (what the floor reads)."""
    body = {"query": text, "namespace": NAMESPACE, "explain": True}
    response = await client.post("/v1/recall", json=body, headers=headers)
    assert response.status_code == 200, response.text
    return {
        int(found["id"]): similarity(found["explain"]["dense_distance"])
        for found in response.json()["results"]
        if found["explain"].get("dense_distance") is not None
    }


def injected_ids(response: Any) -> set[int]:
    assert response.headers[OUTCOME_HEADER].startswith("injected:"), response.headers[OUTCOME_HEADER]
    text: str = response.json()["hookSpecificOutput"]["additionalContext"]
    return {int(line[3:].split(" ", 1)[0]) for line in text.splitlines() if line.startswith("- #")}


@pytest.mark.parametrize(
    "hook_settings", [HookSettings(budget_ms=ROOMY, episode_min_score_ratio=NO_EPISODE_BAR)]
)
async def test_an_episode_below_the_floor_is_left_out_while_the_curated_memory_is_injected(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection, hook_settings: HookSettings
) -> None:
    (far,) = await make_episodes(client, alice, conn, [FAR_EPISODE])
    (fact,) = await store(client, alice, [FACTS[0]])
    (unrelated,) = await store(client, alice, [FACTS[2]])
    close_enough = await similarities(client, alice, REGION_PROMPT)
    # recall finds all three; the fact clears the floor, the other two do not
    assert (
        close_enough[fact] >= hook_settings.min_similarity > max(close_enough[far], close_enough[unrelated])
    )
    shown = injected_ids(await prompt(client, alice, REGION_PROMPT))
    assert shown == {fact, unrelated}  # the curated memory comes with the answer, the episode does not


@pytest.mark.parametrize(
    "hook_settings", [HookSettings(budget_ms=ROOMY, episode_min_score_ratio=NO_EPISODE_BAR)]
)
async def test_an_episode_that_clears_the_floor_is_injected_with_the_curated_memory(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection, hook_settings: HookSettings
) -> None:
    (close,) = await make_episodes(client, alice, conn, [CLOSE_EPISODE])
    (fact,) = await store(client, alice, [FACTS[0]])
    assert (await similarities(client, alice, REGION_PROMPT))[close] >= hook_settings.min_similarity
    assert injected_ids(await prompt(client, alice, REGION_PROMPT)) == {fact, close}


@pytest.mark.parametrize(
    "hook_settings",
    [HookSettings(budget_ms=ROOMY, min_similarity=-1, episode_min_score_ratio=NO_EPISODE_BAR)],
)
async def test_with_the_floor_off_an_episode_far_from_the_prompt_is_injected(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    (far,) = await make_episodes(client, alice, conn, [FAR_EPISODE])
    (fact,) = await store(client, alice, [FACTS[0]])
    assert injected_ids(await prompt(client, alice, REGION_PROMPT)) == {fact, far}
