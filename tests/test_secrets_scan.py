"""`memoria secrets scan [--apply]`: memories stored in clear before redaction, found and redacted.

The scan counts; `--apply` redacts every free-text field in place, seals the originals when a key
is configured, deletes (soft) a live memory that duplicates another once redacted, drops vectors
computed on clear text and queues concept indexing and embedding as jobs. A second run finds nothing.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from click.testing import CliRunner

from app.cli import main
from app.secrets import Vault, read_sealed

GITHUB = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
OTHER_GITHUB = "ghp_Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2H1g0"
AWS_ID = "AKIAQ3EGRZ7WXMPLT4NV"
PASSWORD = "Sup3r$ecret!"
ORIGINALS = (GITHUB, OTHER_GITHUB, AWS_ID, PASSWORD)


async def _connect(url: str) -> asyncpg.Connection:
    return await asyncpg.connect(url)


async def _seed(url: str) -> dict[str, int]:
    """Memories as an older server stored them: in clear, `has_secrets` false."""
    conn = await _connect(url)
    try:
        user_id = await conn.fetchval("INSERT INTO users (name) VALUES ('old') RETURNING id")
        ns = await conn.fetchval(
            "INSERT INTO namespaces (user_id, name) VALUES ($1, 'shop') RETURNING id", user_id
        )
        rows: dict[str, dict[str, Any]] = {
            "full": {
                "content": f"CI pushes with {GITHUB}",
                "tags": [AWS_ID],
                "metadata": {"db": {"login": f"password={PASSWORD}"}},
            },
            "plain": {"content": "deploys go through Terraform"},
            "twin": {"content": f"CI pushes with {OTHER_GITHUB}"},
            "deleted": {"content": f"old db password={PASSWORD}", "deleted": True},
            "sensitive": {"content": f"the aws key id is {AWS_ID}", "is_sensitive": True},
        }
        ids = {}
        for name, row in rows.items():
            ids[name] = await conn.fetchval(
                """
                INSERT INTO memories (namespace_id, content, tags, metadata, content_hash, is_sensitive,
                                      deleted_at)
                VALUES ($1, $2, $3, $4::jsonb, $5, $6, CASE WHEN $7 THEN now() END)
                RETURNING id
                """,
                ns,
                row["content"],
                row.get("tags", []),
                json.dumps(row.get("metadata", {})),
                hashlib.sha256(row["content"].encode()).digest(),
                row.get("is_sensitive", False),
                row.get("deleted", False),
            )
        return ids
    finally:
        await conn.close()


async def _state(url: str) -> dict[str, Any]:
    conn = await _connect(url)
    try:
        return {
            "memories": {
                row["id"]: dict(row)
                for row in await conn.fetch(
                    "SELECT id, content, tags, metadata::text AS metadata, has_secrets,"
                    " deleted_at IS NOT NULL AS deleted, content_hash FROM memories"
                )
            },
            "text": await conn.fetchval("SELECT string_agg(m::text, E'\\n') FROM memories m"),
            # the term counts' jobs follow every text change by trigger (tests/test_term_counts.py)
            "jobs": sorted(
                tuple(row)
                for row in await conn.fetch(
                    "SELECT kind, memory_id FROM jobs WHERE kind <> 'recall.term_counts'"
                )
            ),
            "sealed": await conn.fetchval("SELECT count(*) FROM memory_secrets"),
        }
    finally:
        await conn.close()


async def _opened(url: str, vault: Vault, memory_id: int) -> dict[int, str]:
    conn = await _connect(url)
    try:
        return {s.number: s.original for s in vault.open(await read_sealed(conn, memory_id))}
    finally:
        await conn.close()


def _scan(url: str, *args: str, key: bytes | None = None) -> Any:
    env = {"MEMORIA_DATABASE__URL": url}
    if key is not None:
        env["MEMORIA_SECRETS__KEYS"] = json.dumps({"k1": base64.b64encode(key).decode()})
    return CliRunner().invoke(main, ["secrets", "scan", *args], env=env)


def test_a_scan_without_apply_counts_and_changes_nothing(
    db_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)  # no stray .env
    asyncio.run(_seed(db_url))
    before = asyncio.run(_state(db_url))
    result = _scan(db_url)
    assert result.exit_code == 0, result.output
    assert "scanned 5 memories: 4 hold credentials in clear" in result.output
    assert "secrets scan --apply" in result.output
    assert asyncio.run(_state(db_url)) == before


def test_apply_redacts_in_place_seals_merges_twins_and_queues_the_follow_up_jobs(
    db_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    ids = asyncio.run(_seed(db_url))
    key = os.urandom(32)
    result = _scan(db_url, "--apply", "--batch-size", "2", key=key)
    assert result.exit_code == 0, result.output
    assert "redacted 4 (1 deleted as duplicates" in result.output
    assert "6 original(s) sealed under 'k1'" in result.output

    state = asyncio.run(_state(db_url))
    assert [o for o in ORIGINALS if o in state["text"] or o.lower() in state["text"].lower()] == []
    full = state["memories"][ids["full"]]
    assert full["content"] == "CI pushes with [secret:github-token#1]"
    assert full["tags"] == ["[secret:aws-access-key#2]"]
    assert json.loads(full["metadata"]) == {"db": {"login": "password=[secret:password#3]"}}
    assert full["has_secrets"] is True and full["deleted"] is False
    assert bytes(full["content_hash"]) == hashlib.sha256(full["content"].encode()).digest()
    assert state["memories"][ids["twin"]]["deleted"] is True, "redacted, it duplicates `full`"
    assert state["memories"][ids["plain"]]["has_secrets"] is False
    assert state["memories"][ids["deleted"]]["content"] == "old db password=[secret:password#1]"

    vault = Vault({"k1": key}, "k1")
    assert asyncio.run(_opened(db_url, vault, ids["full"])) == {1: GITHUB, 2: AWS_ID, 3: PASSWORD}
    assert asyncio.run(_opened(db_url, vault, ids["twin"])) == {1: OTHER_GITHUB}
    assert state["jobs"] == sorted(
        [
            ("embeddings.embed", ids["full"]),
            ("embeddings.embed", ids["sensitive"]),
            ("graph.index", ids["full"]),
        ]
    )

    again = _scan(db_url, "--apply", key=key)
    assert again.exit_code == 0 and "scanned 5 memories: 0 hold credentials in clear" in again.output


def test_apply_without_a_key_redacts_and_keeps_nothing(
    db_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    asyncio.run(_seed(db_url))
    result = _scan(db_url, "--apply")
    assert result.exit_code == 0, result.output
    assert "originals kept nowhere" in result.output
    state = asyncio.run(_state(db_url))
    assert state["sealed"] == 0
    assert [o for o in ORIGINALS if o in state["text"]] == []
