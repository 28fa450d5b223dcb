"""Sealed originals in PostgreSQL: stored beside their memory, gone with it, and `rotate-key`."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import hashlib
import json
import os
from pathlib import Path

import asyncpg
import pytest
from click.testing import CliRunner

from app.cli import main
from app.secrets import (
    Secret,
    TamperedSecret,
    UnknownKey,
    Vault,
    count_by_key,
    insert_sealed,
    keep_sealed,
    read_sealed,
    rotate_keys,
)


async def _memories(conn: asyncpg.Connection, n: int) -> list[int]:
    user_id = await conn.fetchval("INSERT INTO users (name) VALUES ('vault') RETURNING id")
    ns = await conn.fetchval(
        "INSERT INTO namespaces (user_id, name) VALUES ($1, 'vault') RETURNING id", user_id
    )
    ids = []
    for i in range(n):
        content = f"memory {i} uses [secret:password#1] and [secret:secret#2]"
        ids.append(
            await conn.fetchval(
                "INSERT INTO memories (namespace_id, content, content_hash) VALUES ($1, $2, $3) RETURNING id",
                ns,
                content,
                hashlib.sha256(content.encode()).digest(),
            )
        )
    return ids


def _originals(memory_id: int) -> list[Secret]:
    return [
        Secret(1, "password", f"pw-{memory_id}-Xk9#q"),
        Secret(2, "secret", f"tok{memory_id}Zq8Lm3Np5Rt7"),
    ]


async def _seal_all(conn: asyncpg.Connection, vault: Vault, ids: list[int]) -> None:
    await insert_sealed(
        conn, [row for memory_id in ids for row in vault.seal(memory_id, _originals(memory_id))]
    )


async def test_sealed_originals_are_read_back_per_memory_and_open(conn: asyncpg.Connection) -> None:
    vault = Vault({"k1": os.urandom(32)}, "k1")
    first, second = await _memories(conn, 2)
    await _seal_all(conn, vault, [first, second])
    rows = await read_sealed(conn, second)
    assert [(r.memory_id, r.ordinal, r.kind) for r in rows] == [
        (second, 1, "password"),
        (second, 2, "secret"),
    ]
    assert vault.open(rows) == _originals(second)


async def test_a_row_copied_into_another_memory_does_not_open(conn: asyncpg.Connection) -> None:
    vault = Vault({"k1": os.urandom(32)}, "k1")
    victim, attacker = await _memories(conn, 2)
    await _seal_all(conn, vault, [victim])
    stolen = (await read_sealed(conn, victim))[0]
    await insert_sealed(conn, [dataclasses.replace(stolen, memory_id=attacker)])
    with pytest.raises(TamperedSecret):
        vault.open(await read_sealed(conn, attacker))


async def test_purging_a_memory_removes_its_sealed_originals(conn: asyncpg.Connection) -> None:
    vault = Vault({"k1": os.urandom(32)}, "k1")
    gone, kept = await _memories(conn, 2)
    await _seal_all(conn, vault, [gone, kept])
    await conn.execute("DELETE FROM memories WHERE id = $1", gone)
    assert await read_sealed(conn, gone) == []
    assert len(await read_sealed(conn, kept)) == 2


async def test_an_edit_keeps_only_the_originals_its_placeholders_still_name(conn: asyncpg.Connection) -> None:
    vault = Vault({"k1": os.urandom(32)}, "k1")
    (memory_id,) = await _memories(conn, 1)
    await _seal_all(conn, vault, [memory_id])
    assert await keep_sealed(conn, memory_id, {2}) == 1
    assert [r.ordinal for r in await read_sealed(conn, memory_id)] == [2]


async def test_rotation_moves_every_row_to_the_active_key_in_batches(conn: asyncpg.Connection) -> None:
    old, new = os.urandom(32), os.urandom(32)
    ids = await _memories(conn, 5)
    await _seal_all(conn, Vault({"old": old}, "old"), ids[:3])
    await _seal_all(conn, Vault({"new": new}, "new"), ids[3:])
    batches: list[int] = []

    report = await rotate_keys(
        conn, Vault({"old": old, "new": new}, "new"), batch_size=2, progress=batches.append
    )

    assert (report.rotated, report.left, report.before) == (6, 0, {"new": 4, "old": 6})
    assert batches == [2, 2, 2]
    assert await count_by_key(conn) == {"new": 10}
    only_new = Vault({"new": new}, "new")
    for memory_id in ids:
        assert only_new.open(await read_sealed(conn, memory_id)) == _originals(memory_id)


async def test_rotation_refuses_to_start_when_a_stored_key_is_not_configured(
    conn: asyncpg.Connection,
) -> None:
    ids = await _memories(conn, 2)
    await _seal_all(conn, Vault({"lost": os.urandom(32)}, "lost"), ids)
    with pytest.raises(UnknownKey, match=r"'lost' \(4 rows\)"):
        await rotate_keys(conn, Vault({"new": os.urandom(32)}, "new"), batch_size=10)
    assert await count_by_key(conn) == {"lost": 4}


async def test_an_interrupted_rotation_keeps_its_finished_batches_and_a_rerun_completes_it(
    conn: asyncpg.Connection,
) -> None:
    old, new = os.urandom(32), os.urandom(32)
    ids = await _memories(conn, 3)
    await _seal_all(conn, Vault({"old": old}, "old"), ids)
    broken = (await read_sealed(conn, ids[2]))[0]
    await conn.execute(
        "UPDATE memory_secrets SET ciphertext = $3 WHERE memory_id = $1 AND ordinal = $2",
        broken.memory_id,
        broken.ordinal,
        bytes([broken.ciphertext[0] ^ 1]) + broken.ciphertext[1:],
    )
    both = Vault({"old": old, "new": new}, "new")
    with pytest.raises(TamperedSecret):
        await rotate_keys(conn, both, batch_size=2)
    assert await count_by_key(conn) == {"new": 4, "old": 2}  # two whole batches committed, the third not

    await conn.execute(
        "DELETE FROM memory_secrets WHERE memory_id = $1 AND ordinal = $2", ids[2], broken.ordinal
    )
    report = await rotate_keys(conn, both, batch_size=2)
    assert (report.rotated, report.left) == (1, 0)
    assert await count_by_key(conn) == {"new": 5}


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def test_the_rotate_key_command_reports_what_it_moved(
    db_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)  # no stray .env
    old, new = os.urandom(32), os.urandom(32)

    async def seed() -> None:
        conn = await asyncpg.connect(db_url)
        try:
            await _seal_all(conn, Vault({"old": old}, "old"), await _memories(conn, 2))
        finally:
            await conn.close()

    async def counts() -> dict[str, int]:
        conn = await asyncpg.connect(db_url)
        try:
            return await count_by_key(conn)
        finally:
            await conn.close()

    asyncio.run(seed())
    env = {
        "MEMORIA_DATABASE__URL": db_url,
        "MEMORIA_SECRETS__KEYS": json.dumps({"old": _b64(old), "new": _b64(new)}),
        "MEMORIA_SECRETS__ACTIVE_KEY_ID": "new",
    }
    result = CliRunner().invoke(main, ["secrets", "rotate-key", "--batch-size", "3"], env=env)
    assert result.exit_code == 0, result.output
    assert "re-sealed 4 original(s) under 'new'; rows per key: new: 4" in result.output
    assert asyncio.run(counts()) == {"new": 4}


def test_the_rotate_key_command_without_keys_says_what_is_missing(
    db_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["secrets", "rotate-key"], env={"MEMORIA_DATABASE__URL": db_url})
    assert result.exit_code == 1
    assert "no MEMORIA_SECRETS__KEYS configured" in result.output


def test_new_key_prints_a_usable_aes_256_key() -> None:
    result = CliRunner().invoke(main, ["secrets", "new-key"])
    assert result.exit_code == 0
    assert len(base64.b64decode(result.output.strip(), validate=True)) == 32
