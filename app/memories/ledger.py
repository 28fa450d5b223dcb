"""The per-session ledger: a memory a hook session has been given is not given to it again.

Claude Code sends each hook event with its `session_id`; SessionStart (every source: startup,
resume, clear, compact) and the prompt hook record here what they inject, and leave out what the
session already has. Rows expire (`MEMORIA_HOOKS__LEDGER_TTL_HOURS`) and the episode expiry sweep
deletes them (`app.memories.expiry`). Only the hook routes use it: REST and MCP recall stay
stateless.

Each row also holds what its memory cost the session's context in characters (migration 0016), so
the sum of a session's unexpired rows is what its hooks injected: SessionStart and the prompt hook
share one budget per session (`MEMORIA_HOOKS__SESSION_MAX_CHARS`) and inject nothing once it is
spent.

The ledger is written on the primary (the `write` pool), right after the read-only recall, in one
short transaction per answer (`give`): the session's advisory lock, its spend and the candidates it
has not been given, then the record of what the answer shows. The lock makes two answers of one
session (two prompts racing, or a prompt racing SessionStart) take turns, so neither a memory nor
the last of the budget is given twice; a transaction-scoped lock holds through a transaction-mode
pooler (PgBouncer) as well. The session id is the client's: it is bounded and checked here
(`session_key`) before any use, and never logged.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
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


LOCK_BASE = 0x6D6C << 48
"""Advisory lock keys of sessions: this base plus 48 bits of the session's hash (the other locks
of the service use other bases: `app.jobs.worker`, `app.graph.indexer`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class LockSession(_LedgerQuery):
    QUERY = "lock_session"
    lock_base: int
    user_id: int
    session_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionState(_LedgerQuery):
    QUERY = "session_state"
    user_id: int
    session_id: str
    public_ids: list[int]


@dataclass(frozen=True, slots=True, kw_only=True)
class Record(_LedgerQuery):
    QUERY = "record"
    user_id: int
    session_id: str
    ttl_s: int
    public_ids: list[int]
    chars: list[int]
    sweep_job: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ReleasePinned(_LedgerQuery):
    QUERY = "release_pinned"
    user_id: int
    session_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SweepExpired(_LedgerQuery):
    QUERY = "sweep_expired"
    batch: int


QUERIES: tuple[type[NamedQuery], ...] = (LockSession, SessionState, Record, ReleasePinned, SweepExpired)

Layout = Callable[[list[int], int | None], tuple[str, list[int]]]
"""What a hook answer shows, given the candidates the session has not been given (public ids, best
first) and the characters left of its budget (None: no budget): (text, the ids it shows)."""


@dataclass(frozen=True, slots=True)
class Given:
    """One answer through the ledger: its text and the memories it shows (recorded as given), how
    many candidates the session had not been given, and the characters its budget had left."""

    text: str
    included: list[int]
    unseen: int
    remaining: int | None


def costs(text: str, count: int) -> list[int]:
    """`text`'s characters spread over the `count` memories it shows, summing to its length exactly
    (the header goes with the first): what the session's budget is charged."""
    share, rest = divmod(len(text), count)
    return [share + rest] + [share] * (count - 1)


@dataclass(frozen=True, slots=True)
class SessionLedger:
    """One session's ledger: `pool` is the primary's (the `write` pool). `max_chars` is the session's
    context budget, every hook answer's characters together (None: no budget)."""

    pool: asyncpg.Pool
    user_id: int
    session_id: str
    ttl_s: int
    max_chars: int | None = None

    async def give(self, public_ids: Sequence[int], layout: Layout) -> Given:
        """The answer `layout` makes of the candidates `public_ids` (best first) this session has not
        been given, within what is left of its budget, recorded as given: one transaction holding
        the session's lock, so that a racing answer of the same session sees this one's record."""
        from app.memories.expiry import EXPIRE_JOB  # the sweep that deletes expired rows

        async with self.pool.acquire() as conn, conn.transaction():
            await LockSession(lock_base=LOCK_BASE, user_id=self.user_id, session_id=self.session_id).execute(
                conn
            )
            state = await SessionState(
                user_id=self.user_id, session_id=self.session_id, public_ids=list(public_ids)
            ).fetchrow(conn)
            assert state is not None  # one row, always
            unseen: list[int] = list(state["unseen"])
            remaining = None if self.max_chars is None else max(self.max_chars - state["spent"], 0)
            text, included = layout(unseen, remaining) if unseen else ("", [])
            if included:
                await Record(
                    user_id=self.user_id,
                    session_id=self.session_id,
                    ttl_s=self.ttl_s,
                    public_ids=included,
                    chars=costs(text, len(included)),
                    sweep_job=EXPIRE_JOB,
                ).execute(conn)
        return Given(text, included, len(unseen), remaining)

    async def release_pinned(self) -> None:
        """After a compaction: the pinned memories the session was given may be given again."""
        await ReleasePinned(user_id=self.user_id, session_id=self.session_id).execute(self.pool)
