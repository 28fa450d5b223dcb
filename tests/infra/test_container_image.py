"""The Dockerfile, .dockerignore and the CI infra-check script."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import pytest

from .hcl_model import REPO_ROOT

DOCKERFILE = REPO_ROOT / "Dockerfile"
DOCKERIGNORE = REPO_ROOT / ".dockerignore"
CHECK_SCRIPT = REPO_ROOT / ".ci" / "infra-checks.sh"


@dataclass
class Stage:
    base: str
    name: str | None
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def args(self, instruction: str) -> list[str]:
        return [arguments for keyword, arguments in self.instructions if keyword == instruction]


def parse_dockerfile(text: str) -> list[Stage]:
    """Split into stages of (INSTRUCTION, arguments), joining continuation lines and dropping comments."""
    logical: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        logical.append(pending + line)
        pending = ""
    stages: list[Stage] = []
    for line in logical:
        keyword, _, arguments = line.partition(" ")
        keyword = keyword.upper()
        arguments = arguments.strip()
        if keyword == "FROM":
            match = re.fullmatch(r"(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?", arguments, re.IGNORECASE)
            assert match, f"cannot parse FROM {arguments}"
            stages.append(Stage(base=match.group(1), name=match.group(2)))
        else:
            assert stages, f"{keyword} before the first FROM"
            stages[-1].instructions.append((keyword, arguments))
    return stages


@pytest.fixture(scope="module")
def stages() -> list[Stage]:
    return parse_dockerfile(DOCKERFILE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def final(stages: list[Stage]) -> Stage:
    return stages[-1]


def env_of(stage: Stage) -> dict[str, str]:
    values: dict[str, str] = {}
    for arguments in stage.args("ENV"):
        for key, value in re.findall(r'(\w+)=("[^"]*"|\S+)', arguments):
            values[key] = value.strip('"')
    return values


def test_image_is_multi_stage_on_a_pinned_slim_python_base(stages: list[Stage]) -> None:
    assert len(stages) >= 2, "build in one stage, run in another"
    for stage in stages:
        assert stage.base.startswith("python:3.11-slim-bookworm"), stage.base
        assert not stage.base.endswith(":latest")


def test_builder_installs_cpu_torch_before_the_project(stages: list[Stage]) -> None:
    runs = [arguments for stage in stages[:-1] for arguments in stage.args("RUN")]
    torch = next(i for i, run in enumerate(runs) if "torch==2.13.0" in run)
    assert "download.pytorch.org/whl/cpu" in runs[torch], "torch must come from the CPU wheel index"
    project = next(i for i, run in enumerate(runs) if re.search(r"pip install (\S+ )*\.(\s|$)", run))
    assert torch < project, "install CPU torch first so `pip install .` does not pull the CUDA build"
    assert any("/opt/venv" in run and "venv" in run for run in runs)


def test_runtime_stage_copies_only_the_venv_and_the_app_files(final: Stage) -> None:
    """The service, the hook client its command line runs (`memoria hook`), and the migrations;
    never the benchmarks (memoria_bench) or the tests."""
    copies = final.args("COPY")
    from_builder = [c for c in copies if c.startswith("--from=")]
    assert from_builder and all("/opt/venv" in c for c in from_builder)
    sources = {c.split()[0] for c in copies if not c.startswith("--")}
    expected = {"app", "memoria_hook_client", "migrations", "alembic.ini"}
    assert sources <= expected, f"unexpected files in the image: {sources}"
    assert expected <= sources
    for run in final.args("RUN"):
        assert not re.search(r"apt-get|apk |gcc|build-essential|pip install", run), run


def test_runtime_stage_runs_as_uid_10001(final: Stage) -> None:
    users = final.args("USER")
    assert users, "the runtime stage must switch to a non-root user"
    assert users[-1].split(":")[0] == "10001"
    creates_user = " ".join(final.args("RUN"))
    assert "--uid 10001" in creates_user


def test_runtime_environment_is_offline_and_listens_on_all_interfaces(final: Stage) -> None:
    env = env_of(final)
    assert env["HF_HUB_OFFLINE"] == "1"
    assert env["MEMORIA_SERVER__HOST"] == "0.0.0.0"  # noqa: S104 - the container must listen on every interface
    assert "/opt/venv/bin" in env["PATH"]
    assert final.args("EXPOSE") == ["8080"]


def test_healthcheck_uses_python_urllib_against_healthz(final: Stage) -> None:
    checks = final.args("HEALTHCHECK")
    assert len(checks) == 1
    assert "urllib" in checks[0] and "http://127.0.0.1:8080/healthz" in checks[0]
    whole = DOCKERFILE.read_text(encoding="utf-8")
    assert not re.search(r"^\s*(RUN|HEALTHCHECK).*\b(curl|wget)\b", whole, re.MULTILINE)


def test_entrypoint_is_memoria_serve(final: Stage) -> None:
    assert json.loads(final.args("ENTRYPOINT")[-1]) == ["memoria"]
    assert json.loads(final.args("CMD")[-1]) == ["serve"]


def test_dockerignore_keeps_git_venvs_and_caches_out_of_the_build_context() -> None:
    patterns = {
        line.strip()
        for line in DOCKERIGNORE.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    }
    for required in (".git", ".venv*", "**/__pycache__", ".pytest_cache", ".env"):
        assert required in patterns, f".dockerignore must exclude {required}"
    # The build needs these; excluding them would break `pip install .` or the migrations.
    for needed in ("README.md", "pyproject.toml", "app", "migrations", "alembic.ini", "*.md"):
        assert needed not in patterns


def test_ci_infra_check_runs_checkov_on_terraform_and_the_dockerfile() -> None:
    script = CHECK_SCRIPT.read_text(encoding="utf-8")
    assert script.startswith("#!/usr/bin/env bash")
    assert "set -euo pipefail" in script
    assert ".venv-checkov" in script
    assert "-d infra/terraform --framework terraform" in script
    assert "-f Dockerfile --framework dockerfile" in script
    assert "--soft-fail" not in script, "failed checks must fail the script"
