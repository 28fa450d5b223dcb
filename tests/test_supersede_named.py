"""A change said in one clause (app/links/supersede_named.py), through the rule's `judge`: captured
exchanges of the shape coding sessions produce, where the older exchange says the old value among
other things and the newer one says the change in one clause.

Similarities are about what the local model gives such pairs; the text evidence is what is pinned.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.links.supersede_named import gone_names, named_change
from app.links.supersede_rule import DEFAULT_THRESHOLDS, Side, Verdict, judge
from app.links.supersede_text import fact_text

OLD_AT = datetime(2026, 9, 1, tzinfo=UTC)
NEW_AT = OLD_AT + timedelta(days=14)


def _episode(user: str, assistant: str) -> str:
    return f"User: {user}\n\nAssistant: {assistant}"


def _judge(
    old: str, new: str, similarity: float, *, old_kind: str = "episode", new_kind: str = "episode"
) -> Verdict:
    return judge(Side(new, NEW_AT, new_kind), Side(old, OLD_AT, old_kind), similarity)


TIMESCALE = _episode(
    "The ingest service drops positions under load. FYI positions are stored in TimescaleDB, in the "
    "positions hypertable.",
    "The insert into the TimescaleDB hypertable used one transaction per position; I switched it to COPY "
    "in batches of 500, which keeps up with the load test.",
)
CLICKHOUSE = _episode(
    "Positions moved from Timescale to ClickHouse last sprint; the reader in internal/store still queries "
    "the old tables.",
    "internal/store/positions.go now reads from the ClickHouse positions table with the same query shape.",
)
INTERVAL_30 = _episode(
    "Devices report their position every 30 seconds; the staleness check should allow three missed reports.",
    "The staleness check now flags a device after 90 s without a report: three missed reports at one "
    "report every 30 seconds.",
)
INTERVAL_10 = _episode(
    "Product changed the firmware: devices now report every 10 seconds. Adjust the staleness check.",
    "The staleness threshold is now 30 s: three missed reports at one report every 10 seconds.",
)


@pytest.mark.parametrize(
    ("old", "new", "similarity", "values"),
    [
        pytest.param(TIMESCALE, CLICKHOUSE, 0.49, ("TimescaleDB", "ClickHouse"), id="from-x-to-y-prefix"),
        pytest.param(
            _episode("The ingress returns 502s for the websocket endpoint. We run ingress-nginx.",
                     "ingress-nginx closed idle websocket connections after 60 s; I set "
                     "proxy-read-timeout to 3600 on the tracker's Ingress."),
            _episode("We replaced ingress-nginx with Traefik in all clusters; port the timeout setting.",
                     "I moved the timeout into a Traefik ServersTransport for the tracker and removed "
                     "the old annotations."),
            0.78,
            ("ingress-nginx", "Traefik"),
            id="replaced-x-with-y",
        ),
        pytest.param(
            _episode("Exceptions from the payment webhook are not showing up in Sentry.",
                     "The handler only logged every exception, so nothing reached Sentry; it re-raises now."),
            _episode("We moved error tracking from Sentry to GlitchTip; the DSN is in GLITCHTIP_DSN now.",
                     "I pointed the SDK at GLITCHTIP_DSN."),
            0.39,
            ("Sentry", "GlitchTip"),
            id="far-apart-exchanges-one-name",
        ),
        pytest.param(INTERVAL_30, INTERVAL_10, 0.75, ("30", "10"), id="same-slot-every-n-seconds"),
        pytest.param(
            _episode("The production cluster is in eu-north-1; set the default region in the provider block.",
                     "The AWS provider now defaults to eu-north-1, matching the production cluster."),
            _episode("Production moved: the cluster runs in eu-central-1 since the migration.",
                     "I updated the provider to default to eu-central-1."),
            0.72,
            ("eu-north-1", "eu-central-1"),
            id="same-slot-value-anchored-by-its-form",
        ),
        pytest.param(
            _episode("Add a rate limiter to the public API. We agreed on 300 requests per minute per "
                     "API key.",
                     "I added a token-bucket limiter that allows 300 requests per minute per API key."),
            _episode("Partners complained about 429s. We agreed to raise the public API limit to 900 "
                     "requests per minute per key.",
                     "I raised the limiter to 900 requests per minute per API key."),
            0.88,
            ("300", "900"),
            id="same-slot-raised-limit",
        ),
    ],
)  # fmt: skip
def test_a_clause_saying_the_value_changed_supersedes_the_older_exchange(
    old: str, new: str, similarity: float, values: tuple[str, str]
) -> None:
    assert _judge(old, new, similarity).decision == "confident"
    change = named_change(fact_text(new, "episode"), fact_text(old, "episode"), DEFAULT_THRESHOLDS)
    assert change is not None
    assert (change.old_value, change.new_value) == values


def test_the_reason_quotes_the_clause_that_says_the_change() -> None:
    verdict = _judge(TIMESCALE, CLICKHOUSE, 0.49)
    assert "Positions moved from Timescale to ClickHouse last sprint" in verdict.reason
    assert "TimescaleDB \u2192 ClickHouse" in verdict.reason


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param(
            "We use Sentry for error tracking.",
            "We also moved performance tracing from Datadog to Sentry.",
            id="an-addition",
        ),
        pytest.param(
            "Background jobs run on Dramatiq with Redis streams.",
            "Before that, we moved background jobs from Celery to Dramatiq.",
            id="history",
        ),
        pytest.param(
            "We compared Sentry and GlitchTip for error tracking and kept Sentry.",
            "We moved error tracking from Sentry to GlitchTip.",
            id="the-old-memory-names-the-new-value-too",
        ),
        pytest.param(
            "Translations are managed in Lokalise.",
            "Pull the German strings from Lokalise to the repository.",
            id="from-x-to-y-without-a-change",
        ),
        pytest.param(
            "The request timeout is 30 seconds.",
            "The database statement timeout is now 5 seconds.",
            id="a-qualifier-makes-it-another-setting",
        ),
        pytest.param(
            "The maximum upload size is 10 MB.",
            "The maximum avatar upload size is now 2 MB.",
            id="a-qualifier-inside-the-subject",
        ),
        pytest.param(
            "Devices report their position every 30 seconds.",
            "Backups now run every 6 hours.",
            id="same-slot-words-but-another-subject",
        ),
        pytest.param(
            "Server web-1 is in eu-west-1.",
            "Server web-2 is now in eu-west-1.",
            id="siblings",
        ),
    ],
)
def test_what_is_not_a_change_of_the_older_value_is_no_named_change(old: str, new: str) -> None:
    assert named_change(new, old, DEFAULT_THRESHOLDS) is None


def test_an_episode_naming_a_curated_memorys_value_as_gone_is_only_suggested() -> None:
    curated = "Error tracking: exceptions go to Sentry."
    exchange = _episode(
        "We moved error tracking from Sentry to GlitchTip.", "I pointed the SDK at GlitchTip."
    )
    verdict = _judge(curated, exchange, 0.6, old_kind="memory")
    assert (verdict.decision, verdict.blocked_by) == ("suggest", "episode_over_memory")


def test_a_named_change_needs_the_similarity_bar() -> None:
    assert _judge(TIMESCALE, CLICKHOUSE, DEFAULT_THRESHOLDS.named_similarity - 0.01).decision != "confident"


def test_gone_names_are_the_specifics_a_change_leaves_behind() -> None:
    assert gone_names("Positions moved from Timescale to ClickHouse last sprint.", DEFAULT_THRESHOLDS) == [
        "Timescale"
    ]
    assert gone_names("We replaced ingress-nginx with Traefik; Jest was removed.", DEFAULT_THRESHOLDS) == [
        "ingress-nginx",
        "Jest",
    ]
    assert gone_names("Before that, we moved from Celery to Dramatiq.", DEFAULT_THRESHOLDS) == []


@pytest.mark.parametrize(
    ("said", "gone"),
    [
        pytest.param(
            "Traefik replaced ingress-nginx in every cluster.", ["ingress-nginx"], id="y-replaced-x"
        ),
        pytest.param("Jest was replaced by Vitest.", ["Jest"], id="x-was-replaced-by-y"),
        pytest.param("We migrated away from Heroku last quarter.", ["Heroku"], id="away-from-x"),
        pytest.param("We don't use Celery anymore.", ["Celery"], id="not-anymore"),
        pytest.param("Pull the strings away from Lokalise.", [], id="away-from-without-a-change-verb"),
    ],
)
def test_the_ways_a_change_names_the_old_value(said: str, gone: list[str]) -> None:
    assert gone_names(said, DEFAULT_THRESHOLDS) == gone


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param(
            "The web request timeout is 30 seconds.",
            "The worker job timeout is now 300 seconds.",
            id="a-qualifier-before-the-value",
        ),
        pytest.param(
            "The API allows 100 requests per minute per key.",
            "The admin API now allows 20 requests per minute per key.",
            id="a-new-word-naming-which-one",
        ),
    ],
)
def test_a_change_of_another_thing_of_the_same_kind_is_only_suggested(old: str, new: str) -> None:
    verdict = _judge(old, new, 0.9, old_kind="memory", new_kind="memory")
    assert (verdict.decision, verdict.blocked_by) == ("suggest", "qualifier")
