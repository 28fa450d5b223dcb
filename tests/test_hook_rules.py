"""The hook's pure decisions: which prompts recall, which namespace a cwd maps to, what gets injected."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.client.settings import ClientSettings
from app.hooks.context import render
from app.hooks.policy import MAX_QUERY_CHARS, Verdict, judge
from app.namespaces import validate_namespace_name
from app.recall.schemas import RecallHit
from app.settings import HookSettings
from memoria_hook_client.namespace import event_namespace, namespace_for_cwd, repo_namespace


@pytest.mark.parametrize(
    "prompt",
    [
        "How do we deploy the service to production?",
        "/etc/hosts is wrong on the build box, how do we configure DNS?",
        "let's fix the flaky login test",
        "why is f(x) = g(y) slower than before?",
        "# Plan\n- deploy with terraform\n- run the migrations first",
    ],
)
def test_typed_prose_is_searched_as_is(prompt: str) -> None:
    verdict = judge(prompt, 12)
    assert verdict.reason == "ok"
    assert verdict.query == " ".join(prompt.split())


def test_code_under_a_request_is_set_aside() -> None:
    prompt = "Refactor this to use a dataclass\ndef point(x, y):\n    return {'x': x, 'y': y}\n"
    assert judge(prompt, 12).query == "Refactor this to use a dataclass"


def test_a_diff_alone_is_skipped() -> None:
    diff = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-old = 1\n+new = 2"
    assert judge(diff, 12).reason == "pasted-code"


def test_shell_escapes_are_skipped() -> None:
    assert judge("!ls -la", 12).reason == "shell-command"


def test_long_prompts_are_cut_at_a_word_boundary() -> None:
    query = judge("deploy " * 500, 12).query
    assert query is not None and len(query) <= MAX_QUERY_CHARS and query.endswith("deploy")


def test_repository_names_become_valid_namespaces() -> None:
    for name in ["shop-api", "Shop API (old)", "日本語-repo", "x" * 300, ".dotfiles"]:
        namespace = repo_namespace(f"/home/dev/{name}")
        assert namespace is not None and validate_namespace_name(namespace) == namespace
    assert repo_namespace("/home/dev/Shop API (old)") == "repo:Shop-API-old"
    assert repo_namespace("/") is None


def test_cwd_resolves_to_the_enclosing_repository(tmp_path: Path) -> None:
    root = tmp_path / "billing"
    (root / "a" / "b").mkdir(parents=True)
    (root / ".git").write_text("gitdir: /elsewhere/worktrees/billing\n")  # a worktree's .git is a file
    assert namespace_for_cwd(str(root / "a" / "b")) == "repo:billing"
    assert namespace_for_cwd(str(tmp_path)) is None
    assert namespace_for_cwd(str(tmp_path), default="default") == "default"
    assert namespace_for_cwd(None, default="default") == "default"


def test_longest_mapped_prefix_wins(tmp_path: Path) -> None:
    mapping = {str(tmp_path): "outer", str(tmp_path / "inner"): "inner"}
    (tmp_path / "inner" / "deep").mkdir(parents=True)
    assert namespace_for_cwd(str(tmp_path / "inner" / "deep"), mapping) == "inner"
    assert namespace_for_cwd(str(tmp_path / "inner-not"), mapping) == "outer"


def test_mapping_to_an_invalid_namespace_is_refused_at_start() -> None:
    with pytest.raises(ValueError, match="invalid namespace"):
        ClientSettings(namespace_map={"/srv": "no spaces allowed"})
    with pytest.raises(ValueError, match="invalid namespace"):
        HookSettings(default_namespace="no spaces allowed")


def test_namespace_mapping_is_a_client_setting_read_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from app.settings import Settings

    monkeypatch.setenv("MEMORIA_CLIENT__NAMESPACE_MAP", '{"/srv/mono": "team-platform"}')
    monkeypatch.setenv("MEMORIA_CLIENT__DEFAULT_NAMESPACE", "scratch")
    monkeypatch.setenv("MEMORIA_HOOKS__BUDGET_MS", "150")
    monkeypatch.setenv("MEMORIA_CLIENT__URL", "http://memoria.internal:8080")
    settings = Settings()
    assert settings.client.namespace_map == {"/srv/mono": "team-platform"}
    assert settings.client.default_namespace == "scratch"
    assert settings.hooks.budget_ms == 150
    assert settings.client.url == "http://memoria.internal:8080"
    assert not hasattr(settings.hooks, "namespace_map")  # the server has no paths to map


def test_the_command_hook_works_out_the_namespace_from_the_same_variables(tmp_path: Path) -> None:
    """The hook reads `MEMORIA_CLIENT__*` without pydantic; it must agree with `ClientSettings`."""
    repo = tmp_path / "billing"
    (repo / ".git").mkdir(parents=True)
    (tmp_path / "mono" / "svc").mkdir(parents=True)
    env = {
        "MEMORIA_CLIENT__NAMESPACE_MAP": f'{{"{tmp_path / "mono"}": "team-platform"}}',
        "MEMORIA_CLIENT__DEFAULT_NAMESPACE": "scratch",
    }
    notes: list[str] = []
    assert event_namespace({"cwd": str(repo)}, env, notes) == "repo:billing"
    assert event_namespace({"cwd": str(tmp_path / "mono" / "svc")}, env, notes) == "team-platform"
    assert event_namespace({"cwd": str(tmp_path)}, env, notes) == "scratch"
    assert event_namespace({"cwd": str(tmp_path)}, {}, notes) is None  # the server's default then
    assert event_namespace({"cwd": 42}, env, notes) == "scratch"
    assert notes == []
    broken = {**env, "MEMORIA_CLIENT__NAMESPACE_MAP": "{not json"}
    assert event_namespace({"cwd": str(repo)}, broken, notes) == "repo:billing"
    assert len(notes) == 1 and "MEMORIA_CLIENT__NAMESPACE_MAP is not JSON" in notes[0]


def hit(memory_id: int, content: str, category: str | None = None) -> RecallHit:
    return RecallHit(
        id=memory_id,
        namespace="repo:x",
        content=content,
        category=category,
        tags=[],
        importance=0.5,
        is_sensitive=False,
        created_at=datetime.now(UTC),
        score=0.03,
    )


def test_context_is_one_compact_line_per_memory() -> None:
    text, count = render("repo:x", [hit(3, "Use  pnpm\n  not npm", "preference"), hit(9, "Tabs.")], 3000)
    assert count == 2
    assert text.splitlines()[1:] == ["- #3 [preference] Use pnpm not npm", "- #9 Tabs."]


def test_a_memory_too_long_for_the_rest_of_the_budget_is_skipped_not_cut() -> None:
    hits = [hit(1, "a" * 100), hit(2, "b" * 400), hit(3, "c" * 50)]
    text, count = render("repo:x", hits, 400)
    assert count == 2 and "#2" not in text and "#3" in text and len(text) <= 400


def test_the_best_memory_is_shortened_rather_than_dropped() -> None:
    text, count = render("repo:x", [hit(1, "z" * 5000)], 300)
    assert count == 1 and len(text) == 300 and text.endswith("…")


@pytest.mark.parametrize(
    "prompt",
    [
        "thanks, that works!",
        "ok go ahead please",
        "Yes, continue 👍",
        "Sounds good, thank you so much",
        "looks good to me",
        "LGTM, go on please",
        "That\u2019s perfect, thanks",  # a typographic apostrophe
    ],
)
def test_pure_acknowledgements_skip_recall(prompt: str) -> None:
    assert judge(prompt, 12) == Verdict(None, "acknowledgement")


@pytest.mark.parametrize(
    ("prompt", "reason"),
    [("ok", "too-short"), ("go on", "too-short"), ("thanks", "too-short"), ("/compact", "slash-command")],
)
def test_very_short_prompts_and_slash_commands_skip_recall(prompt: str, reason: str) -> None:
    assert judge(prompt, 12) == Verdict(None, reason)


@pytest.mark.parametrize(
    "prompt",
    [
        "no, that is wrong: the staging database is in eu-west-1",
        "continue with the migration of the users table",
        "ok, now add a retry to the deploy script",
        "thanks thanks thanks thanks thanks but where do the logs go?",
    ],
)
def test_a_prompt_that_says_something_besides_an_acknowledgement_is_searched(prompt: str) -> None:
    assert judge(prompt, 12).reason == "ok"


@pytest.mark.parametrize(
    "prompt",
    [
        "/review the auth module before we merge",
        "/clear",
        "  /compact keep the deploy notes",
        "/mcp__memoria__x",
    ],
)
def test_slash_commands_with_arguments_skip_recall_too(prompt: str) -> None:
    assert judge(prompt, 12) == Verdict(None, "slash-command")


@pytest.mark.parametrize("prompt", ["ok!!", "yes.", "k", "👍", "   thanks   "])
def test_prompts_shorter_than_the_minimum_skip_recall_whatever_their_punctuation(prompt: str) -> None:
    assert judge(prompt, 12).query is None
