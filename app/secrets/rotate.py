"""Re-seal every stored original under the active key (`memoria secrets rotate-key`).

Batched, one transaction per batch: an interruption loses at most the batch in flight, and a re-run
continues, because it only picks rows not yet under the active key. Before touching anything it
checks that every key id in the table is configured, so a missing old key stops the rotation with
nothing changed instead of half way.

Configure the new key as active on every server first: a server still sealing under the old key
would write rows behind the rotation's cursor (the report's `left` counts them; run again).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import asyncpg

from app.secrets.storage import count_by_key, next_to_rotate, reseal_rows
from app.secrets.vault import NoActiveKey, UnknownKey, Vault


@dataclass(frozen=True, slots=True)
class RotationReport:
    active_key_id: str
    before: dict[str, int]
    """Sealed originals per key id before the rotation."""
    rotated: int
    left: int
    """Rows still not under the active key afterwards (written meanwhile by a server that seals
    under another key); 0 when the rotation is complete."""


async def rotate_keys(
    conn: asyncpg.Connection,
    vault: Vault,
    *,
    batch_size: int,
    progress: Callable[[int], None] | None = None,
) -> RotationReport:
    """Move every row of `memory_secrets` to `vault`'s active key; `progress` gets each batch's size."""
    active = vault.active_key_id
    if active is None:
        raise NoActiveKey("no MEMORIA_SECRETS__KEYS configured: there is no key to rotate to")
    before = await count_by_key(conn)
    missing = {key_id: n for key_id, n in before.items() if key_id not in vault.key_ids}
    if missing:
        listed = ", ".join(f"{key_id!r} ({n} rows)" for key_id, n in sorted(missing.items()))
        raise UnknownKey(
            f"sealed originals use key ids MEMORIA_SECRETS__KEYS does not hold: {listed}; "
            "add those keys (the active one stays the target) and run again"
        )
    rotated = 0
    cursor = (0, 0)
    while True:
        async with conn.transaction():
            batch = await next_to_rotate(conn, active, cursor, batch_size)
            if not batch:
                break
            await reseal_rows(conn, [vault.reseal(row) for row in batch])
        rotated += len(batch)
        cursor = (batch[-1].memory_id, batch[-1].ordinal)
        if progress is not None:
            progress(len(batch))
    after = await count_by_key(conn)
    left = sum(n for key_id, n in after.items() if key_id != active)
    return RotationReport(active_key_id=active, before=before, rotated=rotated, left=left)
