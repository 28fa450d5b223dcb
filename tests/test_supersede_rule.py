"""The automatic supersede rule (app/links/supersede_rule.py) on labelled pairs: a changed fact is
confident, an elaboration, an addition, a paraphrase, a question or another subject is not.

Similarities here are what the local model gives such pairs (the bench measures them for real);
the rule's text evidence is what these tests pin.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.links.supersede_rule import Side, judge

OLD_AT = datetime(2026, 9, 1, tzinfo=UTC)
NEW_AT = OLD_AT + timedelta(days=7)


def _judge(
    old: str, new: str, similarity: float, *, old_kind: str = "memory", new_kind: str = "memory"
) -> str:
    return judge(Side(new, NEW_AT, new_kind), Side(old, OLD_AT, old_kind), similarity).decision


@pytest.mark.parametrize(
    ("old", "new", "similarity"),
    [
        pytest.param(
            "The staging database runs in eu-west-1.",
            "The staging database now runs in eu-central-1.",
            0.93,
            id="region-move",
        ),
        pytest.param(
            "The API listens on port 8080.", "The API listens on port 9000.", 0.93, id="port-change"
        ),
        pytest.param(
            "The backend runs on Python 3.10.", "The backend runs on Python 3.12.", 0.95, id="version-bump"
        ),
        pytest.param(
            "Background jobs run on Celery with RabbitMQ as the broker.",
            "We moved background jobs to Dramatiq on Redis streams.",
            0.53,
            id="tech-swap-with-cue",
        ),
        pytest.param(
            "The on-call lead for the data pipeline is Maria.",
            "The on-call lead for the data pipeline is Tom.",
            0.7,
            id="owner-change",
        ),
    ],
)
def test_a_changed_fact_is_a_confident_supersede(old: str, new: str, similarity: float) -> None:
    assert _judge(old, new, similarity) == "confident"


@pytest.mark.parametrize(
    ("old", "new", "similarity"),
    [
        pytest.param(
            "The staging database runs in eu-west-1.",
            "The staging database runs in eu-west-1 on an RDS db.t3.medium instance with Multi-AZ disabled.",
            0.85,
            id="elaboration",
        ),
        pytest.param(
            "We use Sentry for error tracking.",
            "We also use Sentry for performance tracing now.",
            0.79,
            id="addition",
        ),
        pytest.param(
            "The staging database runs in eu-west-1.",
            "Staging's database is hosted in the eu-west-1 region.",
            0.92,
            id="paraphrase",
        ),
        pytest.param(
            "Alice owns the billing service.", "The billing service is owned by Alice.", 0.97, id="passive"
        ),
        pytest.param(
            "The staging database runs in eu-west-1.",
            "Which region is the staging database in now?",
            0.85,
            id="question-new",
        ),
        pytest.param(
            "Which region does the staging database run in?",
            "The staging database runs in eu-central-1.",
            0.85,
            id="question-old",
        ),
        pytest.param(
            "We moved background jobs to Dramatiq on Redis streams.",
            "Before Dramatiq, background jobs ran on Celery with RabbitMQ.",
            0.63,
            id="history",
        ),
    ],
)
def test_what_changes_nothing_is_no_confident_supersede(old: str, new: str, similarity: float) -> None:
    assert _judge(old, new, similarity) != "confident"


def test_an_elaboration_keeps_every_specific_so_nothing_is_offered() -> None:
    verdict = judge(
        Side("CI runs on GitHub Actions, with a nightly job for the slow tests.", NEW_AT),
        Side("CI runs on GitHub Actions.", OLD_AT),
        0.8,
    )
    assert (verdict.decision, verdict.blocked_by) == ("none", "nothing_removed")


def test_a_paraphrase_restating_the_value_is_a_duplicate_not_a_change() -> None:
    verdict = judge(
        Side("Port 8080 is where the API listens.", NEW_AT),
        Side("The API listens on port 8080.", OLD_AT),
        0.95,
    )
    assert verdict.decision == "none"


def test_a_question_never_supersedes_however_similar() -> None:
    verdict = judge(
        Side("Is the API on port 9000 now?", NEW_AT), Side("The API listens on port 8080.", OLD_AT), 0.99
    )
    assert (verdict.decision, verdict.blocked_by) == ("none", "question")


def test_a_different_subject_in_the_same_words_is_at_most_a_suggestion() -> None:
    verdict = judge(
        Side("The internal API rate limit is 5000 requests per minute.", NEW_AT),
        Side("The public API rate limit is 100 requests per minute.", OLD_AT),
        0.90,
    )
    assert verdict.decision == "suggest"


def test_only_a_newer_memory_supersedes() -> None:
    verdict = judge(
        Side("The API listens on port 9000.", OLD_AT), Side("The API listens on port 8080.", NEW_AT), 0.93
    )
    assert (verdict.decision, verdict.blocked_by) == ("none", "not_newer")


def test_an_episode_only_suggests_replacing_a_curated_memory() -> None:
    old = "Background jobs run on Celery with RabbitMQ as the broker."
    new = (
        "User: we switched background jobs to Dramatiq on Redis streams\n\n"
        "Assistant: Noted: jobs now run on Dramatiq."
    )
    assert _judge(old, new, 0.7, new_kind="episode") == "suggest"
    assert _judge(old, new.replace("User: ", "").split("\n\n")[0], 0.7) == "confident"


def test_an_episode_supersedes_an_older_episode() -> None:
    old = "User: what port does the api use locally?\n\nAssistant: The API listens on port 8080."
    new = "User: what port does the api use locally now?\n\nAssistant: The API listens on port 9000."
    assert _judge(old, new, 0.9, old_kind="episode", new_kind="episode") == "confident"


def test_memories_of_different_categories_never_supersede() -> None:
    verdict = judge(
        Side("The API listens on port 9000.", NEW_AT, category="prod"),
        Side("The API listens on port 8080.", OLD_AT, category="dev"),
        0.93,
    )
    assert verdict.blocked_by == "category"


def test_the_reason_names_the_old_and_new_specifics() -> None:
    verdict = judge(
        Side("The API listens on port 9000.", NEW_AT), Side("The API listens on port 8080.", OLD_AT), 0.93
    )
    assert verdict.decision == "confident"
    assert "8080 \u2192 9000" in verdict.reason
    assert (verdict.removed, verdict.added) == (("8080",), ("9000",))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param("Runbook step 1: restart the worker", "Runbook step 2: restart the worker", id="steps"),
        pytest.param("Exported memory number 4", "Exported memory number 3", id="numbered"),
    ],
)
def test_numbered_items_are_siblings_not_versions(old: str, new: str) -> None:
    assert _judge(old, new, 0.97) == "none"


def test_a_small_setting_after_is_or_a_share_is_still_a_value() -> None:
    assert _judge("The worker concurrency is 4.", "The worker concurrency is 16.", 0.95) == "confident"
    assert (
        _judge("Test coverage must stay above 80%.", "Test coverage must stay above 90%.", 0.95)
        == "confident"
    )


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param("Server web-1 is in eu-west-1.", "Server web-2 is in eu-west-1.", id="hosts"),
        pytest.param(
            "The billing service of Acme is owned by Alice.",
            "The billing service of Globex is owned by Alice.",
            id="companies",
        ),
    ],
)
def test_a_change_before_what_is_said_of_it_is_only_suggested(old: str, new: str) -> None:
    # what changed is what the sentence is about (two hosts, two companies): never linked alone
    verdict = judge(Side(new, NEW_AT), Side(old, OLD_AT), 0.9)
    assert (verdict.decision, verdict.blocked_by) == ("suggest", "what_changed_is_the_subject")


def test_one_statement_of_an_exchange_restating_one_of_an_older_exchange_is_enough() -> None:
    old = (
        "User: Add a rate limiter to the public API.\n\nAssistant: I added a token-bucket limiter in "
        "app/middleware/ratelimit.py. It allows 300 requests per minute per API key."
    )
    new = (
        "User: Partners complained about 429s, raise the limit.\n\nAssistant: I updated the limits page "
        "in the docs. The limiter now allows 900 requests per minute per API key."
    )
    verdict = judge(Side(new, NEW_AT, "episode"), Side(old, OLD_AT, "episode"), 0.75)
    assert verdict.decision == "confident"
    assert "300" in verdict.removed and "900" in verdict.added
