"""`CaptureService`: Claude Code exchanges in, `episode` memories out, through the memory service.

Nothing here writes to the database itself: each exchange becomes one or more `EpisodeIn` items
(text built and chunked by app.capture.text, a capture key per chunk, an expiry) that
`MemoryService.store_episodes` checks and redacts exactly as it does every stored memory, inserts
in one statement and leaves to the durable embedding job. Idempotency is the key
`claude-code:<session_id>:<turn>:<chunk>`, unique per namespace: a batch sent again (a crash in the
middle of a flush, the same hook firing twice, overlapping batches) stores nothing twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec

from app.capture.schemas import CapturedExchange, CaptureRequest, CaptureResult, Exchange
from app.capture.settings import CaptureSettings
from app.capture.text import chunk, clean_said, episode_text
from app.errors import InvalidInput
from app.memories import MemoryService
from app.memories.schemas import MemoryIn
from app.memories.service import EpisodeIn
from app.memories.settings import MemorySettings
from app.memories.validation import check_metadata

SOURCE = "claude-code"
TAGS = ["claude-code"]
DIGEST_FIELDS = ("files_touched", "files_read", "commands", "errors", "subagents")


def capture_key(session_id: str, turn: int, chunk_index: int) -> str:
    return f"{SOURCE}:{session_id}:{turn}:{chunk_index}"


@dataclass(frozen=True, slots=True)
class _Planned:
    exchange: Exchange
    episodes: list[EpisodeIn]


class CaptureService:
    def __init__(self, memories: MemoryService, settings: CaptureSettings, limits: MemorySettings) -> None:
        self._memories = memories
        self._settings = settings
        self._limits = limits
        # a chunk must also be a storable memory
        self._max_chars = min(settings.max_chunk_chars, limits.max_content_chars)

    async def capture(self, user_id: int, namespace: str, request: CaptureRequest) -> CaptureResult:
        """Store the exchanges of `request` as episodes in `namespace` (an own namespace, created on
        first use, or `@owner/name` shared with the caller for writing). Empty exchanges are skipped;
        with capture disabled, every exchange is."""
        count = len(request.exchanges)
        if count > self._settings.max_exchanges:
            raise InvalidInput(
                f"a capture holds at most {self._settings.max_exchanges} exchanges, got {count}"
            )
        if not self._settings.enabled:
            return CaptureResult(stored=0, duplicates=0, skipped=count, results=[])
        expires_at = datetime.now(UTC) + timedelta(days=self._limits.episode_ttl_days)
        planned = [self._plan(namespace, exchange, expires_at) for exchange in request.exchanges]
        kept = [p for p in planned if p.episodes]
        stored = await self._memories.store_episodes(user_id, [e for p in kept for e in p.episodes])
        results: list[CapturedExchange] = []
        at = 0
        for plan in kept:
            mine = stored[at : at + len(plan.episodes)]
            at += len(plan.episodes)
            results.append(
                CapturedExchange(
                    session_id=plan.exchange.session_id,
                    turn=plan.exchange.turn,
                    ids=[r.id for r in mine],
                    duplicate=all(r.duplicate for r in mine),
                )
            )
        duplicates = sum(r.duplicate for r in results)
        return CaptureResult(
            stored=len(results) - duplicates,
            duplicates=duplicates,
            skipped=count - len(kept),
            results=results,
        )

    def _plan(self, namespace: str, exchange: Exchange, expires_at: datetime) -> _Planned:
        """The exchange's episodes: none when it is empty once private spans are out."""
        prompt, reply = clean_said(exchange.prompt), clean_said(exchange.reply)
        if not prompt and not reply:
            return _Planned(exchange, [])
        pieces = chunk(episode_text(prompt, reply, exchange.digest), self._max_chars)
        base = self._metadata(exchange, len(pieces))
        return _Planned(
            exchange,
            [
                EpisodeIn(
                    memory=MemoryIn(
                        content=piece,
                        namespace=namespace,
                        tags=list(TAGS),
                        importance=self._settings.importance,
                        source=SOURCE,
                        metadata={**base, "chunk": index},
                    ),
                    capture_key=capture_key(exchange.session_id, exchange.turn, index),
                    expires_at=expires_at,
                    created_at=exchange.started_at,
                )
                for index, piece in enumerate(pieces)
            ],
        )

    def _metadata(self, exchange: Exchange, chunks: int) -> dict[str, Any]:
        """Where the exchange came from, and its tool digest: as much of the digest as fits the
        metadata size limit (the last items of the longest lists go first; `digest_truncated` says
        so). Redacted with the rest by the memory service."""
        meta: dict[str, Any] = {
            "session_id": exchange.session_id,
            "turn": exchange.turn,
            "chunk": 0,
            "chunks": chunks,
            "cwd": _no_nul(exchange.cwd),
            "git_branch": _no_nul(exchange.git_branch),
            "started_at": exchange.started_at.isoformat() if exchange.started_at else None,
            "ended_at": exchange.ended_at.isoformat() if exchange.ended_at else None,
            "hook_event": _no_nul(exchange.hook_event),
        }
        digest = {name: [_no_nul(item) for item in getattr(exchange.digest, name)] for name in DIGEST_FIELDS}
        truncated = False
        # room for the chunk index to grow and the truncation flag
        budget = self._limits.max_metadata_bytes - 64
        size = len(msgspec.json.encode({**meta, **digest}))
        while size > budget:  # each item's share of the JSON: itself and a comma
            longest = max(DIGEST_FIELDS, key=lambda name: len(digest[name]))
            if not digest[longest]:
                break
            size -= len(msgspec.json.encode(digest[longest].pop())) + 1
            truncated = True
        meta |= digest
        if truncated:
            meta["digest_truncated"] = True
        check_metadata(meta, self._limits)  # a tiny configured limit: a clear 422, not a 500
        return meta


def _no_nul(value: str | None) -> str | None:
    return value.replace("\x00", "") if value is not None else None
