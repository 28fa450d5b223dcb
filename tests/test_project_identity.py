"""A git checkout's namespace comes from its project identity (memoria_hook_client/identity.py): the
normalised `origin` remote, else the root commit, else the folder name; real repositories, made with
the real `git`."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from app.namespaces import validate_namespace_name
from memoria_hook_client.identity import origin_url, remote_identity
from memoria_hook_client.namespace import event_namespace, namespace_for_cwd, project_namespace

GIT_ENV = {
    "GIT_AUTHOR_NAME": "dev",
    "GIT_AUTHOR_EMAIL": "dev@example.org",
    "GIT_COMMITTER_NAME": "dev",
    "GIT_COMMITTER_EMAIL": "dev@example.org",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(*args: str, cwd: Path) -> str:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}, **GIT_ENV}
    env["HOME"] = str(cwd)  # no user config of the machine running the tests
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=30, check=True
    )
    return done.stdout.strip()


def checkout(path: Path, origin: str | None = None, commit: bool = True) -> Path:
    path.mkdir(parents=True)
    git("init", "-q", "-b", "main", cwd=path)
    if origin is not None:
        git("remote", "add", "origin", origin, cwd=path)
    if commit:
        (path / "README").write_text("hello\n")
        git("add", "README", cwd=path)
        git("commit", "-q", "-m", "first", cwd=path)
    return path


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """The client's environment: its own state directory (root commits are cached there)."""
    return {"MEMORIA_CLIENT__STATE_DIR": str(tmp_path / "state")}


@pytest.mark.parametrize(
    ("url", "identity"),
    [
        ("git@github.com:Acme/Foo.git", "github.com/acme/foo"),
        ("ssh://git@github.com/acme/foo", "github.com/acme/foo"),
        ("https://user:token@github.com/acme/foo.git/", "github.com/acme/foo"),
        ("https://github.com:443/Acme/Foo", "github.com/acme/foo"),
        ("git+ssh://git@GitHub.com:22/acme/foo.git", "github.com/acme/foo"),
        ("ssh://git@ssh.github.com:443/acme/foo.git", "github.com/acme/foo"),
        ("git@gitlab.com:group/sub/project.git", "gitlab.com/group/sub/project"),
        ("https://gitlab.com/group/sub/project", "gitlab.com/group/sub/project"),
        ("git@ssh.dev.azure.com:v3/org/proj/repo", "dev.azure.com/org/proj/repo"),
        ("https://org@dev.azure.com/org/proj/_git/repo", "dev.azure.com/org/proj/repo"),
        ("host.example:path//to/repo.git/", "host.example/path/to/repo"),
        ("git://example.org/~bob/tool.git", "example.org/-bob/tool"),
        ("https://example.org/a%20b/c", "example.org/a-20b/c"),
        ("/srv/git/foo.git", None),
        ("../foo", None),
        ("~/src/foo", None),
        ("file:///srv/git/foo.git", None),
        ("C:/src/foo", None),
        ("https:///no-host", None),
    ],
)
def test_remote_urls_are_normalised(url: str, identity: str | None) -> None:
    assert remote_identity(url) == identity


def test_every_identity_is_a_valid_namespace_name() -> None:
    for url in ["git@github.com:" + "x" * 300 + "/y.git", "https://h/ü/é/😀", "https://h/a:b/@c+d"]:
        identity = remote_identity(url)
        assert identity is not None
        assert validate_namespace_name(f"repo:{identity}") == f"repo:{identity}"


def test_the_origin_url_is_read_from_the_git_config_text() -> None:
    config = (
        "[core]\n\tbare = false\n"
        '[remote "upstream"]\n\turl = git@github.com:other/fork.git\n'
        '[Remote "origin"]  # the section name is case-insensitive\n'
        '\tURL = "git@github.com:acme/foo.git" ; comment\n'
        "\turl = https://mirror.example/acme/foo\n"
    )
    assert origin_url(config) == "git@github.com:acme/foo.git"
    assert origin_url('[remote "Origin"]\n\turl = x:y\n') is None  # a remote's name is not
    assert origin_url("[remote.origin]\nurl = host:old/spelling\n") == "host:old/spelling"
    assert origin_url('[remote "origin"] url = host:same/line\n') == "host:same/line"
    assert origin_url('[remote "origin"]\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n') is None


def test_same_folder_name_with_different_origins_gets_different_namespaces(
    tmp_path: Path, env: dict[str, str]
) -> None:
    ours = checkout(tmp_path / "a" / "app", "git@github.com:acme/app.git")
    theirs = checkout(tmp_path / "b" / "app", "https://gitlab.com/other/app.git")
    assert namespace_for_cwd(str(ours), env=env) == "repo:github.com/acme/app"
    assert namespace_for_cwd(str(theirs), env=env) == "repo:gitlab.com/other/app"


def test_two_clones_of_one_origin_at_different_paths_share_a_namespace(
    tmp_path: Path, env: dict[str, str]
) -> None:
    first = checkout(tmp_path / "work" / "shop", "git@github.com:Acme/Shop.git")
    second = checkout(tmp_path / "elsewhere" / "shop-copy", "https://bot:tok@github.com/acme/shop")
    (second / "src" / "deep").mkdir(parents=True)
    assert namespace_for_cwd(str(first), env=env) == "repo:github.com/acme/shop"
    assert namespace_for_cwd(str(second / "src" / "deep"), env=env) == "repo:github.com/acme/shop"


def test_without_a_remote_the_root_commit_names_the_repository_and_clones_agree(
    tmp_path: Path, env: dict[str, str]
) -> None:
    original = checkout(tmp_path / "tool")
    root = git("rev-list", "--max-parents=0", "HEAD", cwd=original)
    clone = tmp_path / "copies" / "renamed"
    clone.parent.mkdir()
    git("clone", "-q", str(original), str(clone), cwd=tmp_path)
    git("remote", "remove", "origin", cwd=clone)  # a clone of a local path: no project-wide name
    assert namespace_for_cwd(str(original), env=env) == f"repo:root-{root[:12]}"
    assert namespace_for_cwd(str(clone), env=env) == f"repo:root-{root[:12]}"


def test_a_local_path_origin_falls_back_to_the_root_commit(tmp_path: Path, env: dict[str, str]) -> None:
    original = checkout(tmp_path / "tool")
    root = git("rev-list", "--max-parents=0", "HEAD", cwd=original)
    clone = tmp_path / "clone"
    git("clone", "-q", str(original), str(clone), cwd=tmp_path)
    assert namespace_for_cwd(str(clone), env=env) == f"repo:root-{root[:12]}"


def test_the_root_commit_is_asked_of_git_once_then_read_from_the_state_directory(
    tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = checkout(tmp_path / "tool")
    other = checkout(tmp_path / "other")
    first = namespace_for_cwd(str(repo), env=env)
    assert first is not None and first.startswith("repo:root-")
    assert list((tmp_path / "state" / "projects").glob("tool-*.json"))
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))  # git cannot be spawned now
    assert namespace_for_cwd(str(repo), env=env) == first
    assert namespace_for_cwd(str(other), env=env) == "repo:other"  # uncached, and no git: its folder


def test_a_repository_without_commits_or_remote_keeps_its_folder_name_without_running_git(
    tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = checkout(tmp_path / "fresh", commit=False)
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))
    assert namespace_for_cwd(str(repo), env=env) == "repo:fresh"
    assert not (tmp_path / "state").exists()


def test_a_worktree_shares_its_repository_namespace(tmp_path: Path, env: dict[str, str]) -> None:
    main = checkout(tmp_path / "shop", "git@github.com:acme/shop.git")
    worktree = tmp_path / "shop-feature-x"
    git("worktree", "add", "-q", "-b", "feature-x", str(worktree), cwd=main)
    assert (worktree / ".git").is_file()
    assert namespace_for_cwd(str(worktree), env=env) == "repo:github.com/acme/shop"
    local = checkout(tmp_path / "solo")
    solo_tree = tmp_path / "solo-tree"
    git("worktree", "add", "-q", "-b", "other", str(solo_tree), cwd=local)
    assert namespace_for_cwd(str(solo_tree), env=env) == namespace_for_cwd(str(local), env=env)


def test_a_submodule_is_a_project_of_its_own(tmp_path: Path, env: dict[str, str]) -> None:
    library = checkout(tmp_path / "library")
    app = checkout(tmp_path / "app", "git@github.com:acme/app.git")
    git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "vendor/lib", cwd=app)
    git("remote", "set-url", "origin", "git@github.com:acme/lib.git", cwd=app / "vendor" / "lib")
    assert (app / "vendor" / "lib" / ".git").is_file()
    assert namespace_for_cwd(str(app / "vendor" / "lib"), env=env) == "repo:github.com/acme/lib"
    assert namespace_for_cwd(str(app / "vendor"), env=env) == "repo:github.com/acme/app"


def test_the_namespace_map_wins_over_the_identity(tmp_path: Path, env: dict[str, str]) -> None:
    repo = checkout(tmp_path / "mono", "git@github.com:acme/mono.git")
    (repo / "svc").mkdir()
    mapping = f'{{"{repo / "svc"}": "team-platform"}}'
    notes: list[str] = []
    mapped = {**env, "MEMORIA_CLIENT__NAMESPACE_MAP": mapping}
    assert event_namespace({"cwd": str(repo / "svc")}, mapped, notes) == "team-platform"
    assert event_namespace({"cwd": str(repo)}, mapped, notes) == "repo:github.com/acme/mono"
    assert notes == []


def test_project_namespace_of_a_folder_without_git_is_its_folder_name(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    assert project_namespace(str(tmp_path / "plain"), {}) == "repo:plain"
