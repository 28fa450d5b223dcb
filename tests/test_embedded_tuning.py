"""The embedded server starts with Memoria's settings, not pgserver's stock ones."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from pydantic import ValidationError

from app.db.embedded import TUNING_FILE, start_server, write_tuning
from app.settings import DatabaseSettings


def _setting(url: str, name: str) -> str:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT current_setting(%s)", (name,)).fetchone()
    assert row is not None
    return str(row[0])


def test_a_new_data_dir_starts_with_the_configured_shared_buffers_and_a_restart_applies_a_new_value(
    tmp_path: Path,
) -> None:
    pgdata = tmp_path / "pgdata"
    server = start_server(pgdata, "48MB")
    try:
        assert _setting(server.get_uri(), "shared_buffers") == "48MB"  # pgserver's own default is 128MB
        # buffer misses are read by the backend itself, not handed to PostgreSQL 18's I/O workers
        assert int(_setting(server.get_uri(), "server_version_num")) >= 180000
        assert _setting(server.get_uri(), "io_method") == "sync"
    finally:
        server.cleanup()

    server = start_server(pgdata, "80MB", cleanup_mode="delete")
    try:
        assert _setting(server.get_uri(), "shared_buffers") == "80MB"
        conf = (pgdata / "postgresql.conf").read_text().splitlines()
        assert conf.count(f"include_if_exists = '{TUNING_FILE}'") == 1  # included once, not per start
    finally:
        server.cleanup()


@pytest.mark.parametrize("value", ["512", "0MB", "1 GB", "512MB'; fsync = off; --", "-1GB"])
def test_shared_buffers_that_are_not_a_plain_size_are_refused(value: str) -> None:
    with pytest.raises(ValidationError):
        DatabaseSettings(embedded_shared_buffers=value)


def test_a_server_older_than_18_is_not_told_an_io_method_it_does_not_know(tmp_path: Path) -> None:
    (tmp_path / "postgresql.conf").write_text("port = 5432\n")
    write_tuning(tmp_path, "64MB", 16)
    assert "io_method" not in (tmp_path / TUNING_FILE).read_text()
    write_tuning(tmp_path, "64MB", 18)
    assert "io_method = 'sync'" in (tmp_path / TUNING_FILE).read_text().splitlines()
