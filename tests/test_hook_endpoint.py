"""POST /v1/hooks/claude-code/user-prompt-submit: real UserPromptSubmit payloads against a real app.

The namespace is the `namespace` query parameter (the command hook and project installs send it),
else the server's `default_namespace`; the event's `cwd` is a path on the client's machine and
never read here. Every answer a person could see as a hook error is a 200 `{}` instead: no key, an
unknown key, a pasted prompt over the server's body limit.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

import memoria_hook_client.namespace as client_namespace
from app.hooks.routes import OUTCOME_HEADER
from app.settings import HookSettings
from tests.hook_client import ROOMY, client, hook_settings

__all__ = ["client", "hook_settings"]  # the fixtures of tests/hook_client.py, used here

Client = AsyncTestClient[Litestar]
HOOK = "/v1/hooks/claude-code/user-prompt-submit"

MEMORIES = [
    {"content": "We deploy with Terraform; never run kubectl apply by hand.", "category": "decision"},
    {"content": "The staging database is refreshed from production every Sunday night.", "category": "fact"},
    {"content": "Use pnpm, not npm, for the frontend workspace.", "category": "preference"},
    {"content": "The deploy pipeline needs the DEPLOY_TOKEN secret set in the repository."},
]


def event(prompt: str, cwd: Path | str, **extra: Any) -> dict[str, Any]:
    """The payload Claude Code posts, including fields the endpoint does not use."""
    return {
        "session_id": "9f1c2d4e-0000-4000-8000-000000000000",
        "transcript_path": "/home/dev/.claude/projects/shop-api/9f1c2d4e.jsonl",
        "cwd": str(cwd),
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
        **extra,
    }


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git checkout named shop-api; sessions start in a subdirectory of it."""
    root = tmp_path / "shop-api"
    (root / ".git").mkdir(parents=True)
    (root / "src" / "deploy").mkdir(parents=True)
    return root


async def store(client: Client, headers: dict[str, str], namespace: str = "repo:shop-api") -> list[int]:
    body = [{**m, "namespace": namespace} for m in MEMORIES]
    response = await client.post("/v1/memories", json=body, headers=headers)
    assert response.status_code == 201, response.text
    return [r["id"] for r in response.json()["results"]]


async def hook(
    client: Client, headers: dict[str, str], payload: dict[str, Any], namespace: str | None = "repo:shop-api"
) -> Any:
    """POST `payload` naming `namespace` in the query, as the command hook and project installs do."""
    params = {"namespace": namespace} if namespace else {}
    response = await client.post(HOOK, json=payload, headers=headers, params=params)
    assert response.status_code == 200, response.text
    return response


async def test_prompt_in_a_repository_gets_its_memories_best_first(
    client: Client, alice: dict[str, str], repo: Path
) -> None:
    ids = await store(client, alice)
    response = await hook(client, alice, event("How do we deploy the service to production?", repo / "src"))
    output = response.json()["hookSpecificOutput"]
    assert output["hookEventName"] == "UserPromptSubmit"
    context = output["additionalContext"]
    assert "repo:shop-api" in context
    assert f"- #{ids[0]} [decision] We deploy with Terraform; never run kubectl apply by hand." in context
    lines = [line for line in context.splitlines() if line.startswith("- #")]
    assert lines[0].startswith(f"- #{ids[0]} ") or lines[0].startswith(f"- #{ids[3]} ")
    assert response.headers[OUTCOME_HEADER] == f"injected:{len(lines)}"


@pytest.mark.parametrize(
    ("prompt", "reason"),
    [
        ("", "empty"),
        ("   \n ", "empty"),
        ("yes", "too-short"),
        ("continue", "too-short"),
        ("ok thanks, that works, go ahead", "acknowledgement"),
        ("/clear", "slash-command"),
        ("/review deploy pipeline", "slash-command"),
        ('{"deploy": {"target": "production", "replicas": 3}}', "json"),
        (
            "Traceback (most recent call last):\n"
            '  File "deploy.py", line 12, in <module>\n'
            "    run()\n"
            "KeyError: 'DEPLOY_TOKEN'",
            "pasted-code",
        ),
        ("```\nterraform apply -auto-approve\n```", "pasted-code"),
    ],
)
async def test_prompts_without_a_topic_skip_recall(
    client: Client, alice: dict[str, str], repo: Path, prompt: str, reason: str
) -> None:
    await store(client, alice)
    response = await hook(client, alice, event(prompt, repo))
    assert response.json() == {}
    assert response.headers[OUTCOME_HEADER] == f"skipped:{reason}"


async def test_question_around_pasted_output_searches_with_the_question(
    client: Client, alice: dict[str, str], repo: Path
) -> None:
    await store(client, alice)
    prompt = (
        "The deploy fails with this, which secret is missing?\n"
        "```\n2024-05-01T10:00:00Z ERROR deploy: 401 Unauthorized\n```"
    )
    context = (await hook(client, alice, event(prompt, repo))).json()["hookSpecificOutput"]
    assert "DEPLOY_TOKEN" in context["additionalContext"]


async def test_unknown_namespace_answers_empty_not_404(
    client: Client, alice: dict[str, str], tmp_path: Path
) -> None:
    response = await hook(client, alice, event("How do we deploy the service?", tmp_path), "never-used")
    assert response.json() == {}
    assert response.headers[OUTCOME_HEADER] == "no-namespace"


async def test_without_a_namespace_or_a_server_default_there_is_nothing_to_recall(
    client: Client, alice: dict[str, str], repo: Path
) -> None:
    await store(client, alice, namespace="default")
    await store(client, alice)
    response = await hook(client, alice, event("How do we deploy the service?", repo), namespace=None)
    assert response.json() == {}
    assert response.headers[OUTCOME_HEADER] == "no-namespace"


@pytest.mark.parametrize("hook_settings", [HookSettings(default_namespace="team-platform", budget_ms=ROOMY)])
async def test_the_servers_default_namespace_serves_calls_naming_none(
    client: Client, alice: dict[str, str], repo: Path
) -> None:
    await store(client, alice, namespace="team-platform")
    response = await hook(client, alice, event("How do we deploy the service?", repo), namespace=None)
    assert "Terraform" in response.json()["hookSpecificOutput"]["additionalContext"]
    assert "team-platform" in response.json()["hookSpecificOutput"]["additionalContext"]


async def test_a_cwd_naming_a_checkout_on_the_server_tells_the_client_nothing(
    client: Client, alice: dict[str, str], repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client used to learn which server paths exist: a git checkout here answered `repo:<name>`,
    `/etc` nothing. Now the server never resolves the path, so every cwd gets the same answer."""
    await store(client, alice)  # `repo` is a checkout named shop-api on the server's filesystem

    def never(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the hook route resolved a client's path")

    for name in ("namespace_for_cwd", "git_root", "repo_namespace", "project_namespace", "_mapped"):
        monkeypatch.setattr(client_namespace, name, never)
    prompt = "How do we deploy the service to production?"
    cwds: list[Path | str] = [
        repo,
        repo / "src" / "deploy",
        "/etc",
        "/no/such/dir",
        "relative/../../etc",
        "\x00bad",
        "x" * 5000,
    ]
    for cwd in cwds:
        response = await hook(client, alice, event(prompt, cwd), namespace=None)
        assert (response.json(), response.headers[OUTCOME_HEADER]) == ({}, "no-namespace"), cwd
    named = await hook(client, alice, event(prompt, "/etc"), namespace="repo:shop-api")
    assert "Terraform" in named.json()["hookSpecificOutput"]["additionalContext"]


async def test_another_users_namespace_of_the_same_name_is_never_used(
    client: Client, alice: dict[str, str], bob: dict[str, str], repo: Path
) -> None:
    await store(client, alice)
    response = await hook(client, bob, event("How do we deploy the service to production?", repo))
    assert response.json() == {}


async def test_sensitive_memories_are_never_injected(
    client: Client, alice: dict[str, str], repo: Path
) -> None:
    secret = {"content": "Deploy password is hunter2", "namespace": "repo:shop-api", "is_sensitive": True}
    assert (await client.post("/v1/memories", json=secret, headers=alice)).status_code == 201
    response = await hook(client, alice, event("What is the deploy password?", repo))
    assert "hunter2" not in response.text


async def test_query_parameter_picks_the_namespace(
    client: Client, alice: dict[str, str], tmp_path: Path
) -> None:
    await store(client, alice, namespace="team-platform")
    response = await hook(
        client, alice, event("How do we deploy the service?", tmp_path), namespace="team-platform"
    )
    assert "Terraform" in response.json()["hookSpecificOutput"]["additionalContext"]


@pytest.mark.parametrize("hook_settings", [HookSettings(max_context_chars=300, budget_ms=ROOMY)])
async def test_context_stays_within_the_character_budget(
    client: Client, alice: dict[str, str], repo: Path
) -> None:
    long = [
        {"content": f"Deploy note {i}: " + "terraform plan output is reviewed before apply. " * 3}
        for i in range(10)
    ]
    body = [{**m, "namespace": "repo:shop-api"} for m in long]
    assert (await client.post("/v1/memories", json=body, headers=alice)).status_code == 201
    response = await hook(client, alice, event("How is terraform deploy reviewed?", repo))
    context = response.json()["hookSpecificOutput"]["additionalContext"]
    assert len(context) <= 300
    included = int(response.headers[OUTCOME_HEADER].split(":")[1])
    assert included == context.count("\n- #") >= 1


@pytest.mark.parametrize("hook_settings", [HookSettings(budget_ms=1)])
async def test_recall_slower_than_the_budget_answers_empty(
    client: Client, alice: dict[str, str], repo: Path
) -> None:
    await store(client, alice)
    response = await hook(client, alice, event("How do we deploy the service to production?", repo))
    assert response.json() == {}
    assert response.headers[OUTCOME_HEADER] == "timeout"


@pytest.mark.parametrize("hook_settings", [HookSettings(min_score=1e6, budget_ms=ROOMY)])
async def test_hits_below_the_minimum_score_are_left_out(
    client: Client, alice: dict[str, str], repo: Path
) -> None:
    await store(client, alice)
    response = await hook(client, alice, event("How do we deploy the service to production?", repo))
    assert response.json() == {}
    assert response.headers[OUTCOME_HEADER] == "no-results"


@pytest.mark.parametrize("hook_settings", [HookSettings(enabled=False)])
async def test_disabled_hook_answers_empty(client: Client, alice: dict[str, str], repo: Path) -> None:
    await store(client, alice)
    response = await hook(client, alice, event("How do we deploy the service to production?", repo))
    assert response.json() == {}


async def test_other_hook_events_are_not_answered(client: Client, alice: dict[str, str], repo: Path) -> None:
    await store(client, alice)
    payload = event("How do we deploy the service?", repo, hook_event_name="SessionStart")
    assert (await hook(client, alice, payload)).json() == {}


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer mem_not-a-key"}, {"Authorization": "Basic dXNlcjpwYXNz"}],
    ids=["no-key", "unknown-key", "not-bearer"],
)
async def test_a_missing_or_unknown_key_answers_empty_not_401(
    client: Client, alice: dict[str, str], repo: Path, headers: dict[str, str]
) -> None:
    """Claude Code shows a 401 as a hook error on every prompt; the hook says `{}` and names why."""
    await store(client, alice)
    response = await hook(client, headers, event("How do we deploy the service to production?", repo))
    assert response.json() == {}
    assert response.headers[OUTCOME_HEADER] == "unauthorized"


async def test_a_prompt_over_the_body_limit_is_skipped_not_refused(
    client: Client, alice: dict[str, str], repo: Path
) -> None:
    """A pasted log over the server's 1 MiB limit used to be a 413 (a hook error on screen)."""
    await store(client, alice)
    pasted = "How do we deploy this? " + "log line: deploy step finished\n" * 70_000
    assert len(pasted) > 2 * 1024 * 1024
    response = await hook(client, alice, event(pasted, repo))
    assert response.json() == {}
    assert response.headers[OUTCOME_HEADER] == "too-large"


async def test_a_body_over_the_hook_limit_is_still_refused(client: Client, alice: dict[str, str]) -> None:
    """The hook routes read bodies up to 8 MiB only to skip them; past that it is a 413 as elsewhere."""
    body = b'{"prompt": "' + b"x" * (9 * 1024 * 1024) + b'"}'
    response = await client.post(
        HOOK, content=body, headers=alice | {"content-type": "application/json"}, params={"namespace": "x"}
    )
    assert response.status_code == 413


async def test_other_routes_keep_the_normal_body_limit(client: Client, alice: dict[str, str]) -> None:
    body = {"content": "x" * (2 * 1024 * 1024), "namespace": "repo:shop-api"}
    assert (await client.post("/v1/memories", json=body, headers=alice)).status_code == 413


EPISODE = (
    "User: how do we deploy the service to production?\n\n"
    "Assistant: we deploy to production with Terraform from the release branch, never kubectl apply."
)


async def make_episode(
    client: Client, headers: dict[str, str], conn: asyncpg.Connection, content: str = EPISODE
) -> int:
    """An episode as capture leaves it: stored, then marked captured (low importance, expiring)."""
    response = await client.post(
        "/v1/memories", json={"content": content, "namespace": "repo:shop-api"}, headers=headers
    )
    assert response.status_code == 201, response.text
    memory_id = int(response.json()["id"])
    await conn.execute(
        "UPDATE memories SET kind = 'episode', importance = 0.2, expires_at = $2 WHERE public_id = $1",
        memory_id,
        datetime.now(UTC) + timedelta(days=10),
    )
    return memory_id


def memory_lines(response: Any) -> list[str]:
    context: str = response.json()["hookSpecificOutput"]["additionalContext"]
    return [line for line in context.splitlines() if line.startswith("- #")]


async def test_curated_memories_come_before_a_strong_episode(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection, repo: Path
) -> None:
    ids = await store(client, alice)
    episode = await make_episode(client, alice, conn)
    response = await hook(client, alice, event("How do we deploy the service to production?", repo))
    lines = memory_lines(response)
    day = datetime.now(UTC).strftime("%Y-%m-%d")
    episode_lines = [
        n for n, line in enumerate(lines) if line.startswith(f"- #{episode} [episode {day}] User:")
    ]
    curated_lines = [n for n, line in enumerate(lines) if line.startswith(tuple(f"- #{i} " for i in ids))]
    assert episode_lines and curated_lines, lines
    assert max(curated_lines) < min(episode_lines)
    assert response.headers[OUTCOME_HEADER] == f"injected:{len(lines)}"


@pytest.mark.parametrize("hook_settings", [HookSettings(episode_min_score_ratio=1.0, budget_ms=ROOMY)])
async def test_an_episode_scoring_below_the_bar_is_left_out(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection, repo: Path
) -> None:
    """With the bar at the best hit's own score, an episode that is not the best hit never shows,
    while the curated memories it trails still do."""
    await store(client, alice)
    weak = await make_episode(
        client, alice, conn, "User: what is for lunch?\n\nAssistant: the deploy team orders pizza on Fridays."
    )
    prompt = "How do we deploy the service to production?"
    candidates = await client.post(
        "/v1/recall", json={"query": prompt, "namespace": "repo:shop-api", "limit": 16}, headers=alice
    )
    assert weak in [hit["id"] for hit in candidates.json()["results"]]  # recall finds it; the bar drops it
    lines = memory_lines(await hook(client, alice, event(prompt, repo)))
    assert lines and not any(line.startswith(f"- #{weak} ") for line in lines), lines


async def test_an_episode_that_is_the_only_match_is_injected(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection, repo: Path
) -> None:
    episode = await make_episode(client, alice, conn)
    response = await hook(client, alice, event("How do we deploy the service to production?", repo))
    (line,) = memory_lines(response)
    assert line.startswith(f"- #{episode} [episode ")
