"""`memoria bench usage`: scenario files are checked with errors that say where and what; each metric
counts what it says (pinned on hook calls built by hand); and a tiny scenario replayed end to end
through the hooks `memoria hook install` writes, against a real `memoria serve`, gives figures that
agree with what the hooks printed and leaves on the server what the capture hook sent."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from rich.console import Console

from memoria_bench.usage import SCENARIOS_DIR, ScenarioError, UsageOptions, bench_usage, load_scenario
from memoria_bench.usage.hooks import additional_context
from memoria_bench.usage.links import Link, judge, supersede_precision
from memoria_bench.usage.metrics import context_items, is_marked, measure
from memoria_bench.usage.replay import HookCall
from memoria_bench.usage.run import targets
from memoria_bench.usage.scenario import Scenario

FACTS = {
    "queue": {"versions": [{"key": "Huey task queue"}, {"key": "arq worker pool"}]},
    "port": {"versions": [{"key": "port 6543"}]},
}


def scenario_dict(**changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": "tiny",
        "projects": ["billing-api"],
        "facts": FACTS,
        "sessions": [
            {
                "id": "s1",
                "project": "billing-api",
                "turns": [
                    {"user": "hi", "assistant": "Hello! How can I help you today?"},
                    {
                        "user": "Note for later: background jobs here run on the Huey task queue.",
                        "assistant": "Got it, new jobs go into the Huey task queue in app/tasks.py.",
                        "says": ["queue@1"],
                    },
                    {
                        "user": "The local Postgres for this service listens on port 6543, not 5432.",
                        "assistant": "Understood: the development database is on port 6543.",
                        "says": ["port@1"],
                    },
                ],
            },
            {
                "id": "s2",
                "project": "billing-api",
                "turns": [
                    {
                        "user": "We replaced Huey: background jobs now run on an arq worker pool.",
                        "assistant": "Noted, the receipt job moved to the arq worker pool in app/worker.py.",
                        "says": ["queue@2"],
                    },
                    {"user": "what region is staging in?", "api_error": "API Error: 529 overloaded"},
                ],
            },
            {
                "id": "q1",
                "project": "billing-api",
                "turns": [
                    {"user": "Which port does the local Postgres use?", "assistant": "6543.", "asks": "port"},
                    {"user": "Which job system do we use?", "assistant": "arq.", "asks": "queue"},
                    {
                        "user": "what is a monad, in one paragraph?",
                        "assistant": "A pattern for chaining computations that carry context.",
                        "unrelated": True,
                    },
                ],
            },
        ],
    }
    body.update(changes)
    return body


def write(tmp_path: Path, body: dict[str, Any], name: str = "tiny.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(body))
    return path


def tiny(tmp_path: Path) -> Scenario:
    return load_scenario(write(tmp_path, scenario_dict()))


# --- scenario files ---------------------------------------------------------------------------


def test_the_shipped_dev_scenarios_each_ask_15_questions_and_3_unrelated_prompts_in_two_projects() -> None:
    files = sorted(SCENARIOS_DIR.glob("*.json"))
    assert len(files) >= 2
    for path in files:
        scenario = load_scenario(path)
        assert (scenario.questions, scenario.unrelated, len(scenario.projects)) == (15, 3, 2), path
        assert len(scenario.sessions) >= 30, path
        assert any(len(versions) > 1 for versions in scenario.facts.values()), path


def test_a_turn_that_does_not_contain_the_key_of_the_version_it_says_is_refused_with_its_place(
    tmp_path: Path,
) -> None:
    body = scenario_dict()
    body["sessions"][0]["turns"][2]["says"] = ["queue@1"]
    path = write(tmp_path, body)
    with pytest.raises(ScenarioError) as refused:
        load_scenario(path)
    message = str(refused.value)
    assert str(path) in message
    assert "sessions[0] (s1).turns[2].says[0]" in message
    assert "'Huey task queue'" in message


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"facts": {**FACTS, "bad": {"versions": [{"key": "Huey task"}]}}}, "overlaps the key"),
        ({"projects": ["billing-api"], "extra": 1}, "unknown field(s) extra"),
        ({"facts": {}}, "facts: must be a non-empty object"),
    ],
)
def test_a_scenario_breaking_a_rule_is_refused_saying_which(
    tmp_path: Path, change: dict[str, Any], says: str
) -> None:
    with pytest.raises(ScenarioError, match=says.replace("(", r"\(").replace(")", r"\)")):
        load_scenario(write(tmp_path, scenario_dict(**change)))


def test_a_question_about_a_fact_not_said_yet_is_refused(tmp_path: Path) -> None:
    body = scenario_dict()
    body["sessions"].insert(
        0, {"id": "early", "project": "billing-api", "turns": [body["sessions"][2]["turns"][0]]}
    )
    with pytest.raises(ScenarioError, match=r"sessions\[0\] \(early\)\.turns\[0\]\.asks: asks about port"):
        load_scenario(write(tmp_path, body))


def test_a_question_naming_an_old_version_is_refused(tmp_path: Path) -> None:
    body = scenario_dict()
    body["sessions"][2]["turns"][1]["asks"] = "queue@1"
    with pytest.raises(ScenarioError, match="expects queue@1 but the newest said so far is @2"):
        load_scenario(write(tmp_path, body))


def test_a_turn_ending_in_an_api_error_has_no_reply(tmp_path: Path) -> None:
    body = scenario_dict()
    body["sessions"][1]["turns"][1]["assistant"] = "Sure."
    with pytest.raises(ScenarioError, match="a turn that ends with api_error has no reply"):
        load_scenario(write(tmp_path, body))


def test_an_unreadable_scenario_file_is_a_scenario_error(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text("{not json")
    with pytest.raises(ScenarioError, match="broken.json: not JSON"):
        load_scenario(path)


# --- parsing what a hook printed --------------------------------------------------------------


def test_the_context_is_the_additional_context_of_the_hooks_json_or_its_plain_text() -> None:
    answer = {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "ctx"}}
    assert additional_context(json.dumps(answer)) == "ctx"
    assert additional_context("") == ""
    assert additional_context("{}") == ""
    assert additional_context("plain words\n") == "plain words"


def test_each_memory_line_is_one_item_with_its_indented_lines_and_headings_are_not_items() -> None:
    context = (
        "Memories recalled by Memoria from namespace repo:x (…):\n"
        "Pinned:\n"
        "- #12 [decision] jobs use the arq worker pool\n"
        "  (supersedes #11)\n"
        "- #13 [episode 2026-11-27] User: hi Assistant: Hello\n"
    )
    items = context_items(context)
    assert [item.memory_id for item in items] == [12, 13]
    assert items[0].text == "[decision] jobs use the arq worker pool\n(supersedes #11)"
    assert items[1].content == "user: hi assistant: hello"
    assert not is_marked(items[0])
    assert is_marked(context_items("- #11 [fact] jobs use the Huey task queue (superseded by #12)")[0])


# --- what each metric counts ------------------------------------------------------------------


def call(session: str, event: str, context: str, said: dict[str, int], **extra: Any) -> HookCall:
    return HookCall(session, f"id-{session}", event, context, "injected", said, **extra)


def test_each_metric_counts_what_it_says(tmp_path: Path) -> None:
    scenario = tiny(tmp_path)
    port, queue_new = scenario.facts["port"][0], scenario.facts["queue"][1]
    said = {"queue": 2, "port": 1}
    calls = [
        # a history session: its repeat counts, its items are not measured for noise
        call("s2", "SessionStart", "- #1 greeting", {"queue": 1, "port": 1}, source="startup"),
        call("s2", "UserPromptSubmit", "- #1 greeting", {"queue": 1, "port": 1}, prompt="x"),
        # the question session: SessionStart gives the port, stale Huey unmarked, a marked Huey
        call(
            "q1",
            "SessionStart",
            "head\n- #5 dev db on port 6543\n- #6 jobs: Huey task queue\n- #7 Huey task queue (superseded)",
            said,
            source="startup",
        ),
        call("q1", "UserPromptSubmit", "", said, prompt="port?", asks=port),
        # the same text again under another id is a repeat; the answer comes with this prompt
        call(
            "q1",
            "UserPromptSubmit",
            "h\n- #8 jobs: Huey task queue\n- #9 moved to the arq worker pool",
            said,
            prompt="jobs?",
            asks=queue_new,
        ),
        call("q1", "UserPromptSubmit", "", said, prompt="monad?", unrelated=True),
    ]
    figures = measure(scenario, calls)
    assert figures["answers_injected"] == 2
    assert figures["stale_unmarked"] == 2  # #6 and #8; #7 is marked
    assert figures["changed_questions_with_stale_unmarked"] == 1
    assert figures["items_injected"] == 5  # the question session's only
    assert figures["noise_items"] == 0
    assert figures["repeats"] == 2  # #1 in s2, and #8 (the text of #6) in q1
    assert figures["unrelated_left_alone"] == 1
    assert figures["measured_prompts"] == 3
    # per prompt: SessionStart's context comes with the first prompt; the third prompt got nothing
    first, second = len(calls[2].context), len(calls[4].context)
    assert figures["context_chars_median"] == float(min(first, second))


def test_an_automatic_supersede_is_judged_by_the_labels(tmp_path: Path) -> None:
    versions = tiny(tmp_path).versions()
    assert judge(Link("now the arq worker pool", "the Huey task queue", "auto"), versions) == "correct"
    assert judge(Link("the Huey task queue", "the arq worker pool", "auto"), versions) == "wrong"
    assert judge(Link("on port 6543", "the Huey task queue", "auto"), versions) == "wrong"
    assert judge(Link("hello", "hi there", "auto"), versions) == "unjudged"


# --- end to end -------------------------------------------------------------------------------


@pytest.mark.e2e
async def test_a_tiny_scenario_replayed_through_the_installed_hooks_gives_figures_that_agree_with_them(
    db_url: str, tmp_path: Path
) -> None:
    scenario = tiny(tmp_path)
    calls_file = tmp_path / "calls.jsonl"
    options = UsageOptions(scenarios=[scenario], calls_out=calls_file)

    report = await bench_usage(db_url, options, Console(file=io.StringIO()))

    (row,) = report["scenarios"]
    assert row["capture_waits_timed_out"] == 0
    assert (row["questions"], row["unrelated_prompts"], row["sessions"]) == (2, 1, 3)
    calls = [json.loads(line) for line in calls_file.read_text().splitlines()]
    assert [(c["session"], c["event"]) for c in calls][:2] == [
        ("s1", "SessionStart"),
        ("s1", "UserPromptSubmit"),
    ]
    assert not any(c["outcome"] in ("unauthorized", "no-key", "failed", "timeout") for c in calls), calls
    # the figures agree with what the hooks printed, recomputed here the simple way
    keys = {"port": "port 6543", "queue": "arq worker pool"}
    answered = 0
    for i, c in enumerate(calls):
        if c["asks"]:
            given = " ".join(p["context"] for p in calls[: i + 1] if p["session"] == c["session"]).lower()
            answered += keys[c["asks"].split("@")[0]] in given
    assert row["answers_injected"] == answered
    assert row["unrelated_left_alone"] == sum(1 for c in calls if c["unrelated"] and not c["context"])
    assert row["prompts"] == sum(1 for c in calls if c["event"] == "UserPromptSubmit") == 8
    assert row["supersede"]["available"] in (True, False)
    # capture went through the real capture hook: the facts are stored, the greeting skipped
    conn = await asyncpg.connect(db_url)
    try:
        episodes = [
            r["content"] for r in await conn.fetch("SELECT content FROM memories WHERE kind = 'episode'")
        ]
    finally:
        await conn.close()
    assert any("port 6543" in text for text in episodes), episodes
    assert any("arq worker pool" in text for text in episodes), episodes
    assert not any(text.startswith("User: hi\n") for text in episodes), episodes
    assert [target["target"].split(" <=")[0].split(" >=")[0] for target in report["targets"]][:2] == [
        "answers injected",
        "stale versions injected unmarked",
    ]


def test_14_of_15_answers_meets_the_answers_target_and_13_does_not() -> None:
    row = {"context_chars_median": 0.0}
    for answered, met in ((28, True), (27, False)):
        total = {"answers_share": round(answered / 30, 3), "stale_unmarked": 0}
        (answers, _) = targets(total, [row])
        assert answers["met"] is met, (answered, answers)


async def test_the_supersede_links_are_read_from_the_links_route_and_only_automatic_ones_are_judged(
    client: AsyncTestClient[Litestar], alice: dict[str, str], conn: asyncpg.Connection, tmp_path: Path
) -> None:
    ids: dict[str, int] = {}
    texts = {
        "old": "jobs run on the Huey task queue",
        "new": "jobs now run on the arq worker pool",
        "fact": "the dev database is on port 6543",
        "chat": "hello there",
        "a": "hi",
        "b": "hey",
    }
    for name, content in texts.items():
        answer = await client.post(
            "/v1/memories", json={"content": content, "namespace": "repo:billing-api"}, headers=alice
        )
        assert answer.status_code == 201, answer.text
        ids[name] = int(answer.json()["id"])
    for source, target in (("new", "old"), ("chat", "fact")):  # as the rule would make them
        await conn.execute(
            "INSERT INTO memory_links (source_id, target_id, kind, origin, reason) "
            "SELECT s.id, t.id, 'supersedes', 'auto', 'test' FROM memories s, memories t "
            "WHERE s.public_id = $1 AND t.public_id = $2",
            ids[source],
            ids[target],
        )
    made = await client.post(
        f"/v1/memories/{ids['b']}/links", json={"kind": "supersedes", "target": ids["a"]}, headers=alice
    )
    assert made.status_code == 201, made.text
    client.headers.update(alice)

    found = await supersede_precision(client, ["repo:billing-api"], tiny(tmp_path).versions())

    assert {name: found[name] for name in ("available", "auto_links", "correct", "wrong", "user_links")} == {
        "available": True,
        "auto_links": 2,
        "correct": 1,
        "wrong": 1,
        "user_links": 1,
    }
    assert found["precision"] == 0.5


def test_a_question_asked_in_another_project_than_its_facts_is_refused(tmp_path: Path) -> None:
    body = scenario_dict(projects=["billing-api", "storefront"])
    body["sessions"][2]["project"] = "storefront"
    with pytest.raises(ScenarioError, match="asks about port in storefront, but it is said in billing-api"):
        load_scenario(write(tmp_path, body))


def test_stale_and_noise_items_are_told_apart_by_hook_and_kind(tmp_path: Path) -> None:
    scenario = tiny(tmp_path)
    said = {"queue": 2, "port": 1}
    calls = [
        call("q1", "SessionStart", "- #1 [episode 2026-11-27] User: hi\n- #2 [fact] Huey task queue", said),
        call("q1", "UserPromptSubmit", "- #3 [episode 2026-11-27] the Huey task queue", said, prompt="?"),
    ]
    figures = measure(scenario, calls)
    assert figures["noise_from"] == {"SessionStart:episode": 1}
    assert figures["stale_unmarked_from"] == {"SessionStart:memory": 1, "UserPromptSubmit:episode": 1}
