"""Settings: one object, `MEMORIA_` prefix, nested sections, unknown keys rejected, `.env` read."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from app.settings import Settings


def test_nested_env_vars_fill_sections(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORIA_DATABASE__URL", "postgresql://u@db/memoria")
    monkeypatch.setenv("MEMORIA_DATABASE__STATEMENT_CACHE_SIZE", "0")
    monkeypatch.setenv("MEMORIA_MEMORIES__MAX_CONTENT_CHARS", "500")
    settings = Settings()
    assert settings.database.url == "postgresql://u@db/memoria"
    assert settings.database.statement_cache_size == 0
    assert settings.memories.max_content_chars == 500


def test_missing_database_url_means_embedded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    settings = Settings()
    assert settings.database.url is None
    assert settings.database.data_dir.name == "pgdata"


@pytest.mark.parametrize("name", ["MEMORIA_DATABSE__URL", "MEMORIA_DATABASE__URLL", "MEMORIA_COLOUR"])
def test_unknown_keys_are_rejected(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setenv(name, "x")
    with pytest.raises(ValidationError):
        Settings()


def test_dotenv_file_is_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("MEMORIA_SERVER__PORT=9123\nMEMORIA_EMBEDDINGS__PROVIDER=voyage\n")
    monkeypatch.chdir(tmp_path)
    settings = Settings()
    assert settings.server.port == 9123
    assert settings.embeddings.model_name == "voyage-3.5"
    assert settings.embeddings.resolved_dimension == 1024


def test_embedding_dimension_of_the_default_local_model_is_known() -> None:
    assert Settings().embeddings.resolved_dimension == 384


def test_unknown_model_needs_an_explicit_dimension(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORIA_EMBEDDINGS__MODEL", "my-custom-model")
    with pytest.raises(ValueError, match="MEMORIA_EMBEDDINGS__DIMENSION"):
        _ = Settings().embeddings.resolved_dimension
    monkeypatch.setenv("MEMORIA_EMBEDDINGS__DIMENSION", "768")
    assert Settings().embeddings.resolved_dimension == 768


@pytest.mark.parametrize(
    "command",
    [["users", "list"], ["graph", "rebuild"], ["bench", "latency"], ["embeddings", "backfill"], ["list"]],
)
def test_every_command_reports_a_bad_setting_in_one_line_naming_the_variable(
    command: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from app.cli import main

    monkeypatch.chdir(tmp_path)  # no stray .env
    if command == ["bench", "latency"]:  # its corpus file is checked before the settings are read
        (tmp_path / "sentences.txt").write_text("One sentence.\n")
        command = [*command, "--sentences", str(tmp_path / "sentences.txt")]
    result = CliRunner().invoke(main, command, env={"MEMORIA_RECALL__LEG_DEPTH": "0"})
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert lines == [
        "Error: invalid configuration: MEMORIA_RECALL__LEG_DEPTH: Input should be greater than or equal to 1"
    ]
    assert "Traceback" not in result.output and "pydantic" not in result.output
