"""The embedded server starts with Memoria's settings, not pgserver's stock ones."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from pydantic import ValidationError

from app.db.buffers import relation_bytes, shared_buffers, usable_memory_bytes
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


@pytest.mark.parametrize("value", ["512", "0MB", "1 GB", "512MB'; fsync = off; --", "-1GB", "Auto", "auto;"])
def test_shared_buffers_that_are_not_a_plain_size_are_refused(value: str) -> None:
    with pytest.raises(ValidationError):
        DatabaseSettings(embedded_shared_buffers=value)


def test_a_server_older_than_18_is_not_told_an_io_method_it_does_not_know(tmp_path: Path) -> None:
    (tmp_path / "postgresql.conf").write_text("port = 5432\n")
    write_tuning(tmp_path, "64MB", 16)
    assert "io_method" not in (tmp_path / TUNING_FILE).read_text()
    write_tuning(tmp_path, "64MB", 18)
    assert "io_method = 'sync'" in (tmp_path / TUNING_FILE).read_text().splitlines()


GIB = 1024**3
MIB = 1024**2


@pytest.mark.parametrize(
    ("data", "memory", "expected"),
    [
        (30 * MIB, 24 * GIB, "512MB"),  # a new database: the floor
        (800 * MIB, 24 * GIB, "1000MB"),  # the data and a quarter more
        (6 * GIB, 24 * GIB, "6144MB"),  # a quarter of the memory at most
        (30 * GIB, 64 * GIB, "8192MB"),  # and 8GB
        (30 * MIB, 1 * GIB, "256MB"),  # a small machine keeps its quarter, floor or not
        (30 * MIB, 256 * MIB, "128MB"),  # and never less than 128MB
    ],
)
def test_auto_shared_buffers_hold_the_data_within_a_quarter_of_memory(
    data: int, memory: int, expected: str
) -> None:
    assert shared_buffers("auto", data, memory) == expected


def test_a_size_given_is_written_as_given() -> None:
    assert shared_buffers("1GB", 30 * GIB, 64 * GIB) == "1GB"
    assert DatabaseSettings().embedded_shared_buffers == "auto"


def test_a_cgroup_memory_limit_below_the_machine_sizes_the_buffers_by_the_limit(tmp_path: Path) -> None:
    machine = usable_memory_bytes(limit_files=())
    unlimited, limited, missing = tmp_path / "memory.max", tmp_path / "v1.limit", tmp_path / "absent"
    unlimited.write_text("max\n")
    limited.write_text(f"{2 * GIB}\n")
    assert usable_memory_bytes([unlimited, missing]) == machine
    assert usable_memory_bytes([unlimited, limited]) == min(machine, 2 * GIB)


def test_an_auto_data_dir_is_sized_by_its_relation_files_at_each_start(tmp_path: Path) -> None:
    pgdata = tmp_path / "pgdata"
    server = start_server(pgdata, "auto")
    try:
        assert _buffer_bytes(server.get_uri()) == 512 * MIB  # a new database holds a few MB
    finally:
        server.cleanup()
    # 800 MB more under base/ by the next start: a sparse file, not a database, which PostgreSQL
    # skips (its name is no database's oid) and which takes no disk
    with (pgdata / "base" / "filler.test").open("wb") as filler:
        filler.truncate(800 * MIB)
    assert relation_bytes(pgdata) > 800 * MIB
    server = start_server(pgdata, "auto", cleanup_mode="delete")
    try:
        expected = shared_buffers("auto", relation_bytes(pgdata))
        assert _buffer_bytes(server.get_uri()) == int(expected.removesuffix("MB")) * MIB > 512 * MIB
    finally:
        server.cleanup()


def _buffer_bytes(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT setting::bigint * pg_size_bytes(unit) FROM pg_settings WHERE name = 'shared_buffers'"
        ).fetchone()
    assert row is not None
    return int(row[0])
