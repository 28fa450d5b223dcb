"""`memoria namespaces migrate-project | rename | list` against a real `memoria serve`: a repository's
folder-name namespace moves to its project identity (dry run first), what the hooks and `memoria
remember` use there afterwards is the moved namespace, and renaming back undoes it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import Result

from tests.test_client_cli import ok, run
from tests.test_hook_command import Memoria, event, run_hook, start_memoria
from tests.test_project_identity import checkout, git

pytestmark = pytest.mark.e2e

OLD, NEW = "repo:shop-api", "repo:github.com/acme/shop-api"


@pytest.fixture(scope="module")
def memoria(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memoria]:
    """Two memories in `repo:shop-api`, as the hooks named the repository before identities (a
    roomy hook budget and no relevance floor: the hook's answer shows which namespace it read)."""
    hooks = {"MEMORIA_HOOKS__BUDGET_MS": "5000", "MEMORIA_HOOKS__MIN_SIMILARITY": "-1"}
    with start_memoria(tmp_path_factory.mktemp("namespaces-cli"), **hooks) as running:
        yield running


@pytest.fixture
def clone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A clone of github.com/acme/shop-api in a folder called shop-api, with the client's own state."""
    monkeypatch.setenv("MEMORIA_CLIENT__STATE_DIR", str(tmp_path / "state"))
    repo = checkout(tmp_path / "shop-api", "git@github.com:Acme/shop-api.git")
    (repo / "src").mkdir()
    return repo


def namespaces(memoria: Memoria) -> dict[str, int]:
    answer = httpx.get(f"{memoria.url}/v1/namespaces", headers={"Authorization": f"Bearer {memoria.key}"})
    assert answer.status_code == 200, answer.text
    return {ns["name"]: ns["memories"] for ns in answer.json()}


def failed(result: Result) -> str:
    assert result.exit_code == 1, result.output
    return result.output


def test_migrate_project_is_a_dry_run_then_a_rename_that_rename_undoes(memoria: Memoria, clone: Path) -> None:
    before = namespaces(memoria)
    dry = ok(run(memoria, "namespaces", "migrate-project", cwd=clone))
    assert (
        dry.strip()
        == f"would rename {OLD} ({before[OLD]} memories) to {NEW}; run again with --apply to do it"
    )
    assert namespaces(memoria) == before

    applied = ok(
        run(memoria, "namespaces", "migrate-project", "--apply", "--project-dir", str(clone / "src"))
    )
    assert applied.strip() == (
        f"renamed {OLD} to {NEW} ({before[OLD]} memories); undo: memoria namespaces rename {NEW} {OLD}"
    )
    assert namespaces(memoria) == {NEW: before[OLD]}
    remembered = ok(run(memoria, "remember", "Releases are tagged vX.Y.Z", cwd=clone))
    assert f"in {NEW}" in remembered  # what you remember here lands in the moved namespace
    hooked = run_hook(
        clone,
        event("How do we deploy the service to production?", clone / "src"),
        url=memoria.url,
        key=memoria.key,
        extra_env={"MEMORIA_CLIENT__STATE_DIR": os.environ["MEMORIA_CLIENT__STATE_DIR"]},
    )
    context = hooked.answer()["hookSpecificOutput"]["additionalContext"]
    assert f"namespace {NEW}" in context and "We deploy with Terraform" in context  # the hook too
    again = ok(run(memoria, "namespaces", "migrate-project", cwd=clone))
    assert again.startswith(f"you have no namespace {OLD} or repo:root-")
    assert again.strip().endswith(f": nothing to move; this repository uses {NEW}")

    undone = ok(run(memoria, "namespaces", "rename", NEW, OLD))
    assert undone.startswith(f"renamed {NEW} to {OLD} ({before[OLD] + 1} memories)")
    assert namespaces(memoria) == {OLD: before[OLD] + 1}
    assert f"{before[OLD] + 1}  {OLD}" in ok(run(memoria, "namespaces", "list"))


def test_when_both_names_exist_migrate_project_plans_then_merges(memoria: Memoria, clone: Path) -> None:
    ok(run(memoria, "namespaces", "rename", OLD, "repo:shop-api-before-merge"))
    try:
        ok(run(memoria, "remember", "Merge me: the staging cluster is eu-west-1", "-n", OLD))
        ok(run(memoria, "remember", "Captured after the upgrade", "-n", NEW))
        ok(run(memoria, "remember", "Merge me: the staging cluster is eu-west-1", "-n", NEW))
        plan = ok(run(memoria, "namespaces", "migrate-project", cwd=clone))
        assert plan.strip() == (
            f"{NEW} exists already: would merge {OLD} (1 memories, 1 of them already in {NEW} (moved as "
            "forgotten)) into it; no rename undoes a merge; run again with --apply to do it"
        )
        assert namespaces(memoria)[OLD] == 1
        merged = ok(run(memoria, "namespaces", "migrate-project", "--apply", cwd=clone))
        assert merged.strip() == (
            f"merged {OLD} into {NEW}: 1 memories moved, 1 of them already in {NEW} (moved as forgotten)"
        )
        after = namespaces(memoria)
        assert OLD not in after and after[NEW] == 2
    finally:
        ok(run(memoria, "namespaces", "rename", NEW, "scratch-after-test"))
        ok(run(memoria, "namespaces", "rename", "repo:shop-api-before-merge", OLD))


def test_the_namespace_map_and_a_repository_without_identity_have_nothing_to_move(
    memoria: Memoria, clone: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMORIA_CLIENT__NAMESPACE_MAP", f'{{"{clone}": "team-shop"}}')
    mapped = ok(run(memoria, "namespaces", "migrate-project", cwd=clone))
    assert (
        mapped.strip()
        == "MEMORIA_CLIENT__NAMESPACE_MAP names this repository's namespace (team-shop): nothing to move"
    )
    monkeypatch.delenv("MEMORIA_CLIENT__NAMESPACE_MAP")
    fresh = checkout(tmp_path / "fresh", commit=False)
    assert ok(run(memoria, "namespaces", "migrate-project", cwd=fresh)).strip() == (
        "this repository has no remote or commit to name it by: it keeps repo:fresh"
    )
    assert "is not inside a git repository" in failed(
        run(memoria, "namespaces", "migrate-project", cwd=tmp_path)
    )


def test_a_remote_added_later_moves_the_root_commit_namespace(
    memoria: Memoria, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMORIA_CLIENT__STATE_DIR", str(tmp_path / "state"))
    repo = checkout(tmp_path / "tool")
    before = ok(run(memoria, "remember", "The tool's config lives in tool.toml", cwd=repo))
    root_name = before.split(" in ")[1].strip()
    assert root_name.startswith("repo:root-")
    git("remote", "add", "origin", "https://github.com/acme/tool.git", cwd=repo)
    moved = ok(run(memoria, "namespaces", "migrate-project", "--apply", cwd=repo))
    assert moved.startswith(f"renamed {root_name} to repo:github.com/acme/tool (1 memories)")
