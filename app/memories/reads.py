"""The memory domain's read and admin path: get, list (and so export), the owner's read of sealed
originals, and internal ids for in-process tools. Nothing here changes a memory.

Every `memory_id` taken or answered here is the memory's public id (random; see memories.sql);
readers see what app/db/fragments.sql's `visible` lets them (the trash aside, for its owner).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import asyncpg

from app.core.time import as_utc
from app.db import Database
from app.errors import ApiError, InvalidInput, NotFound
from app.memories import queries as q
from app.memories.redaction import TEXT_FIELDS, placeholders_by_number
from app.memories.schemas import Memory, MemoryKind, MemoryPage, MemorySecrets, SecretOriginal
from app.namespaces import resolve_namespaces
from app.secrets import SecretsError, Vault, placeholder, read_sealed

MAX_CLIENT_CHARS = 200
"""`secret_reads.client` holds at most this much of the reader's address."""


class SecretsUnreadable(ApiError):
    """Sealed originals this server cannot open: their key is no longer configured, or a row does
    not authenticate (altered, or moved from another memory). The stored rows are untouched."""

    status_code = 409


@dataclass(frozen=True, slots=True)
class ListFilters:
    namespaces: Sequence[str] | None = None
    category: str | None = None
    source: str | None = None
    """Where the memories came from: the agent a captured exchange came from (`claude-code`, `codex`,
    `gemini`), or what a store named."""
    tags: Sequence[str] | None = None
    tags_match_all: bool = False
    created_since: datetime | None = None
    created_until: datetime | None = None
    include_deleted: bool = False
    include_sensitive: bool = False
    kind: MemoryKind | None = None
    pinned: bool | None = None
    include_superseded: bool = False
    """Versions no longer current too (superseded, or past their `valid_to`), each with its mark."""
    as_of: datetime | None = None
    """The memories that held at this time (null: now)."""


def encode_cursor(created_at: datetime, memory_id: int) -> str:
    raw = json.dumps([created_at.isoformat(), memory_id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, int]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        stamp, memory_id = json.loads(raw)
        return datetime.fromisoformat(stamp), int(memory_id)
    except (binascii.Error, ValueError, TypeError, UnicodeDecodeError) as exc:
        raise InvalidInput("cursor is not a value returned by this API") from exc


def memory_of(row: asyncpg.Record) -> Memory:
    return Memory(**dict(row))


class MemoryReads:
    def __init__(self, db: Database, vault: Vault) -> None:
        """`vault`: the keys sealed originals are opened with (`read_secrets`)."""
        self._db = db
        self._vault = vault

    async def get(self, user_id: int, memory_id: int, include_deleted: bool = False) -> Memory:
        query = q.GetMemory(user_id=user_id, public_id=memory_id, include_deleted=include_deleted)
        row = await query.fetchrow(self._db.write)
        if row is None:
            raise NotFound(f"memory {memory_id} not found")
        return memory_of(row)

    async def list(
        self, user_id: int, filters: ListFilters, limit: int, cursor: str | None = None
    ) -> MemoryPage:
        ns_ids = (
            await resolve_namespaces(self._db.write, user_id, filters.namespaces)
            if filters.namespaces
            else None
        )
        after_at, after_id = decode_cursor(cursor) if cursor else (None, None)
        rows = await q.ListMemories(
            after_public_id=after_id,
            user_id=user_id,
            namespace_ids=ns_ids,
            category=filters.category,
            source=filters.source,
            tags=list(filters.tags) if filters.tags else None,
            tags_match_all=filters.tags_match_all,
            created_since=as_utc(filters.created_since),
            created_until=as_utc(filters.created_until),
            include_sensitive=filters.include_sensitive,
            include_deleted=filters.include_deleted,
            after_created_at=after_at,
            kind=filters.kind,
            pinned=filters.pinned,
            include_superseded=filters.include_superseded,
            as_of=as_utc(filters.as_of),
            limit=limit + 1,
        ).fetch(self._db.write)
        items = [memory_of(r) for r in rows[:limit]]
        next_cursor = encode_cursor(items[-1].created_at, items[-1].id) if len(rows) > limit else None
        return MemoryPage(items=items, next_cursor=next_cursor)

    async def read_secrets(
        self, user_id: int, memory_id: int, key_id: int | None, client: str | None
    ) -> MemorySecrets:
        """The originals of a live memory's placeholders, for its owner only (a namespace shared
        with the caller is not theirs: 404). Each successful read leaves one `secret_reads` row,
        written in the same transaction, so no original leaves without its record."""
        async with self._db.write.acquire() as conn, conn.transaction():
            row = await q.OwnedLiveText(public_id=memory_id, user_id=user_id).fetchrow(conn)
            if row is None:
                raise NotFound(f"memory {memory_id} not found")
            internal_id = row["id"]  # what the sealed originals and the audit are keyed by
            try:
                opened = self._vault.open(await read_sealed(conn, internal_id))
            except SecretsError as exc:
                raise SecretsUnreadable(str(exc)) from None
            await q.AuditRead(
                memory_id=internal_id,
                user_id=user_id,
                key_id=key_id,
                secrets=len(opened),
                client=client[:MAX_CLIENT_CHARS] if client else None,
            ).execute(conn)
        written = placeholders_by_number({name: row[name] for name in TEXT_FIELDS})
        kept = {secret.number for secret in opened}
        not_kept = [written[number] for number in sorted(written.keys() - kept)]
        detail = None
        if not_kept:
            detail = "the originals of these placeholders are kept nowhere: " + (
                "this server has no encryption key configured (MEMORIA_SECRETS__KEYS), so redaction "
                "keeps nothing"
                if not self._vault.keeps_originals
                else "they were redacted while no encryption key was configured, or the text held "
                "them as placeholders already"
            )
        return MemorySecrets(
            memory_id=memory_id,
            secrets=[
                SecretOriginal(
                    placeholder=placeholder(secret.kind, secret.number),
                    kind=secret.kind,
                    number=secret.number,
                    original=secret.original,
                )
                for secret in opened
            ],
            originals_kept=not not_kept,
            not_kept=not_kept,
            detail=detail,
        )

    async def internal_ids(self, public_ids: Sequence[int]) -> Sequence[int]:
        """The internal ids of memories given by public id (unknown ones left out), for in-process
        tools that hand what `store` answered to internal machinery, such as the benchmarks' graph
        indexing. Never for a caller of the API: it takes and answers public ids only."""
        return [r["id"] for r in await q.InternalIds(public_ids=list(public_ids)).fetch(self._db.write)]
