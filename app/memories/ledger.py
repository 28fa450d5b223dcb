"""The per-session ledger: a memory a hook session has been given is not given to it again.

Claude Code sends each hook event with its `session_id`; SessionStart (every source: startup,
resume, clear, compact) and the prompt hook record here what they inject, and leave out what the
session already has. Rows expire (`MEMORIA_HOOKS__LEDGER_TTL_HOURS`) and the episode expiry sweep
deletes them (`app.memories.expiry`). Only the hook routes use it: REST and MCP recall stay
stateless.

The ledger is written on the primary (the `write` pool) in one statement per answer (`claim`: the
filter and the record together, `ledger.sql`), right after the read-only recall, the way a recall
pushes back its episodes' expiry. The session id is the client's: it is bounded and checked here
(`session_key`) before any use, and never logged.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import asyncpg

from app.db.queries import NamedQuery, with_fragments

FILE = ("app.memories", "ledger.sql")
MAX_SESSION_ID_CHARS = 128
"""Longest session id kept (Claude Code's are UUIDs); the table's CHECK says the same."""
_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]*")


def session_key(session_id: object) -> str | None:
    """The session id as the ledger keys it, or None when there is none fit to use (missing, not
    text, too long, or with characters no session id has): such a call is served without the ledger."""
    if not isinstance(session_id, str) or len(session_id) > MAX_SESSION_ID_CHARS:
        return None
    return session_id if _SESSION_ID.fullmatch(session_id) else None


def with_ledger_fragments(sql: str) -> str:
    """`sql` (a read written in Python) with `{{ unseen(m, user_id, session_id) }}` expanded."""
    return with_fragments(sql, *FILE)


class _LedgerQuery(NamedQuery):
    SQL_FILE: ClassVar[tuple[str, str]] = FILE


@dataclass(frozen=True, slots=True, kw_only=True)
class Claim(_LedgerQuery):
    QUERY = "claim"
    public_ids: list[int]
    session_id: str
    user_id: int
    max_new: int
    ttl_s: int
    sweep_job: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Release(_LedgerQuery):
    QUERY = "release"
    user_id: int
    session_id: str
    public_ids: list[int]


@dataclass(frozen=True, slots=True, kw_only=True)
class SweepExpired(_LedgerQuery):
    QUERY = "sweep_expired"
    batch: int


QUERIES: tuple[type[NamedQuery], ...] = (Claim, Release, SweepExpired)


@dataclass(frozen=True, slots=True)
class SessionLedger:
    """One session's ledger: `pool` is the primary's (the `write` pool)."""

    pool: asyncpg.Pool
    user_id: int
    session_id: str
    ttl_s: int

    async def claim(self, public_ids: Sequence[int], max_new: int) -> set[int]:
        """Of `public_ids` (best first), the first `max_new` this session has not been given,
        recorded as given: the ones to inject."""
        from app.memories.expiry import EXPIRE_JOB  # the sweep that deletes expired rows

        if not public_ids or max_new < 1:
            return set()
        query = Claim(
            public_ids=list(public_ids),
            session_id=self.session_id,
            user_id=self.user_id,
            max_new=max_new,
            ttl_s=self.ttl_s,
            sweep_job=EXPIRE_JOB,
        )
        return {row["public_id"] for row in await query.fetch(self.pool)}

    async def release(self, public_ids: Sequence[int]) -> None:
        """Claimed memories that were not injected after all (they did not fit the answer)."""
        if public_ids:
            await Release(
                user_id=self.user_id, session_id=self.session_id, public_ids=list(public_ids)
            ).execute(self.pool)
