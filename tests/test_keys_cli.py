"""`memoria keys create --scope … --expires …`, `keys list` and `keys revoke` against a real database."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner, Result

from app.cli import main
from app.cli.admin import parse_expiry


@pytest.fixture
def cli(db_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> CliRunner:
    monkeypatch.chdir(tmp_path)  # no stray .env
    return CliRunner(env={"MEMORIA_DATABASE__URL": db_url})


def _run(cli: CliRunner, *args: str) -> Result:
    return cli.invoke(main, list(args))


def _key_row(db_url: str, key_id: int) -> tuple[list[str], datetime | None]:
    with psycopg.connect(db_url) as conn:
        row = conn.execute("SELECT scopes, expires_at FROM api_keys WHERE id = %s", (key_id,)).fetchone()
    assert row is not None
    return row[0], row[1]


def test_create_with_scopes_and_a_relative_expiry(cli: CliRunner, db_url: str) -> None:
    made = _run(
        cli, "keys", "create", "--user", "dev", "--create-user", "--scope", "read", "--expires", "30d"
    )
    assert made.exit_code == 0, made.output
    key = made.stdout.strip()
    assert key.startswith("mem_") and "\n" not in key
    assert "(read, until " in made.stderr
    with psycopg.connect(db_url) as conn:
        key_id = conn.execute("SELECT id FROM api_keys").fetchone()
    assert key_id is not None
    scopes, expires_at = _key_row(db_url, key_id[0])
    assert scopes == ["read"]
    assert expires_at is not None
    assert timedelta(days=29, hours=23) < expires_at - datetime.now(UTC) <= timedelta(days=30)


def test_create_defaults_to_read_and_write_without_expiry(cli: CliRunner, db_url: str) -> None:
    made = _run(cli, "keys", "create", "--user", "dev", "--create-user")
    assert made.exit_code == 0, made.output
    assert _key_row(db_url, 1) == (["read", "write"], None)


def test_create_with_several_scopes_and_a_date(cli: CliRunner, db_url: str) -> None:
    made = _run(
        cli, "keys", "create", "--user", "dev", "--create-user",
        "--scope", "write", "--scope", "secrets:read", "--scope", "read", "--expires", "2099-01-01",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    assert _key_row(db_url, 1) == (["read", "write", "secrets:read"], datetime(2099, 1, 1, tzinfo=UTC))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--scope", "root"], "'root' is not one of"),
        (["--expires", "2001-01-01"], "is not in the future"),
        (["--expires", "soon"], "neither a duration"),
        (["--expires", "0d"], "is not in the future"),
    ],
)
def test_a_bad_scope_or_expiry_is_a_usage_error(
    cli: CliRunner, db_url: str, args: list[str], message: str
) -> None:
    refused = _run(cli, "keys", "create", "--user", "dev", "--create-user", *args)
    assert refused.exit_code == 2, refused.output
    assert message in refused.output
    with psycopg.connect(db_url) as conn:
        assert conn.execute("SELECT count(*) FROM api_keys").fetchone() == (0,)


def test_list_shows_scopes_expiry_last_use_and_revocation(cli: CliRunner, db_url: str) -> None:
    assert _run(cli, "keys", "create", "--user", "dev", "--create-user", "--scope", "read").exit_code == 0
    assert _run(cli, "keys", "create", "--user", "dev", "--expires", "2099-06-01T12:00:00Z").exit_code == 0
    assert _run(cli, "keys", "create", "--user", "dev", "--label", "old").exit_code == 0
    with psycopg.connect(db_url) as conn:
        conn.execute("UPDATE api_keys SET last_used_at = '2026-11-20 08:30:00+00' WHERE id = 1")
        conn.execute("UPDATE api_keys SET expires_at = now() - interval '1 day' WHERE id = 3")
    revoked = _run(cli, "keys", "revoke", "2")
    assert revoked.exit_code == 0, revoked.output
    listed = _run(cli, "keys", "list")
    assert listed.exit_code == 0, listed.output
    header, *rows = [line.split("\t") for line in listed.stdout.splitlines()]
    assert header == ["id", "user", "prefix", "scopes", "state", "expires", "last_used", "label"]
    assert [r[0] for r in rows] == ["1", "2", "3"]
    assert rows[0][3:8] == ["read", "active", "never", "2026-11-20 08:30", ""]
    assert (
        rows[1][3] == "read,write" and rows[1][4].startswith("revoked ") and rows[1][5] == "2099-06-01 12:00"
    )
    assert rows[2][4] == "expired" and rows[2][7] == "old"
    assert _run(cli, "keys", "revoke", "2").exit_code == 1  # no live key matches any more


def test_parse_expiry_reads_durations_dates_and_times() -> None:
    now = datetime(2026, 11, 24, 10, 0, tzinfo=UTC)
    assert parse_expiry("12h", now) == now + timedelta(hours=12)
    assert parse_expiry("2w", now) == now + timedelta(weeks=2)
    assert parse_expiry("2027-01-01", now) == datetime(2027, 1, 1, tzinfo=UTC)
    assert parse_expiry("2027-01-01T09:00:00+02:00", now) == datetime(2027, 1, 1, 7, tzinfo=UTC)
    with pytest.raises(ValueError, match="not in the future"):
        parse_expiry("2026-11-24T09:59:00Z", now)
