"""The embedded server starts with Memoria's settings, not pgserver's stock ones."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from pydantic import ValidationError

from app.db.embedded import TUNING_FILE, start_server
from app.settings import DatabaseSettings


def _shared_buffers(url: str) -> str:
    with psycopg.connect(url) as conn:
        row = conn.execute("SHOW shared_buffers").fetchone()
    assert row is not None
    return str(row[0])


def test_a_new_data_dir_starts_with_the_configured_shared_buffers_and_a_restart_applies_a_new_value(
    tmp_path: Path,
) -> None:
    pgdata = tmp_path / "pgdata"
    server = start_server(pgdata, "48MB")
    try:
        assert _shared_buffers(server.get_uri()) == "48MB"  # pgserver's own default is 128MB
    finally:
        server.cleanup()

    server = start_server(pgdata, "80MB", cleanup_mode="delete")
    try:
        assert _shared_buffers(server.get_uri()) == "80MB"
        conf = (pgdata / "postgresql.conf").read_text().splitlines()
        assert conf.count(f"include_if_exists = '{TUNING_FILE}'") == 1  # included once, not per start
    finally:
        server.cleanup()


@pytest.mark.parametrize("value", ["512", "0MB", "1 GB", "512MB'; fsync = off; --", "-1GB"])
def test_shared_buffers_that_are_not_a_plain_size_are_refused(value: str) -> None:
    with pytest.raises(ValidationError):
        DatabaseSettings(embedded_shared_buffers=value)
