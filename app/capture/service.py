"""`CaptureService`: a coding agent's exchanges in, `episode` memories out, through the memory service.

Each exchange first meets the skip rules (app.capture.rules): one with nothing to remember is
counted under its reason and not stored. One that repeats an episode of the namespace (its
normalised prompt and reply, app.capture.fold) folds into it: one more sighting, a later expiry,
no new row. The rest become `EpisodeIn` items (text built and chunked by app.capture.text, a
capture key per chunk, an expiry) that `MemoryService.store_episodes` checks and redacts exactly as
it does every stored memory, inserts in one statement and leaves to the durable embedding job.
Idempotency is the key `<source>:<session_id>:<turn>:<chunk>` (`claude-code:…`, `codex:…`), unique
per namespace: a batch sent again (a crash in the middle of a flush, the same hook firing twice,
overlapping batches) stores nothing twice and counts no sighting twice.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec

from app.capture.fold import Folded, Sighting, fold, fold_key, remember_keys
from app.capture.rules import DISABLED, skip_reason
from app.capture.schemas import CapturedExchange, CaptureRequest, CaptureResult, Exchange
from app.capture.settings import CaptureSettings
from app.capture.text import chunk, clean_said, episode_text
from app.core.metrics import CaptureMetrics
from app.db.pool import Database
from app.errors import InvalidInput
from app.memories import MemoryService
from app.memories.schemas import MemoryIn
from app.memories.service import EpisodeIn
from app.memories.settings import MemorySettings
from app.memories.validation import check_metadata

SOURCE = "claude-code"
"""The agent of a capture that names none (the capture routes name theirs)."""
DIGEST_FIELDS = ("files_touched", "files_read", "commands", "errors", "subagents")


def capture_key(session_id: str, turn: int, chunk_index: int, source: str = SOURCE) -> str:
    """Unique per namespace; `source` is the agent the exchange was captured from."""
    return f"{source}:{session_id}:{turn}:{chunk_index}"


@dataclass(frozen=True, slots=True)
class _Planned:
    exchange: Exchange
    episodes: list[EpisodeIn]
    skipped: str | None = None
    """The skip rule's reason; None: stored (or folded)."""
    fold_key: bytes | None = None
    """The exchange's fingerprint when it is one episode (only those fold)."""


class CaptureService:
    def __init__(
        self,
        memories: MemoryService,
        settings: CaptureSettings,
        limits: MemorySettings,
        db: Database,
        metrics: CaptureMetrics | None = None,
    ) -> None:
        self._memories = memories
        self._settings = settings
        self._limits = limits
        self._db = db
        self._metrics = metrics if metrics is not None else CaptureMetrics()
        # a chunk must also be a storable memory
        self._max_chars = min(settings.max_chunk_chars, limits.max_content_chars)

    async def capture(
        self, user_id: int, namespace: str, request: CaptureRequest, source: str = SOURCE
    ) -> CaptureResult:
        """Store the exchanges of `request`, captured from the agent `source`, as episodes in
        `namespace` (an own namespace, created on first use, or `@owner/name` shared with the caller
        for writing); the episodes name `source` as their source and tag. Exchanges with nothing to
        remember are skipped, each under its rule's reason; repeats of an episode fold into it;
        with capture disabled, every exchange is skipped."""
        count = len(request.exchanges)
        if count > self._settings.max_exchanges:
            raise InvalidInput(
                f"a capture holds at most {self._settings.max_exchanges} exchanges, got {count}"
            )
        # names are stored as given: one holding a credential is refused, as every write path does
        self._memories.check_name(namespace, "namespace")
        for index, exchange in enumerate(request.exchanges):
            self._memories.check_name(exchange.session_id, f"exchanges[{index}].session_id")
        if not self._settings.enabled:
            self._metrics.skipped(DISABLED, count)
            return CaptureResult(
                stored=0, duplicates=0, folded=0, skipped=count, skipped_reasons={DISABLED: count}, results=[]
            )
        expires_at = datetime.now(UTC) + timedelta(days=self._limits.episode_ttl_days)
        planned = [self._plan(namespace, exchange, expires_at, source) for exchange in request.exchanges]
        reasons = Counter(p.skipped for p in planned if p.skipped is not None)
        kept = [p for p in planned if p.skipped is None]
        outcomes: dict[int, CapturedExchange] = {}
        pending = list(range(len(kept)))
        while pending:  # a fingerprint twice in one batch: the second folds into the first, a round later
            seen: set[bytes] = set()
            now: list[int] = []
            later: list[int] = []
            for i in pending:
                key = kept[i].fold_key
                (later if key is not None and key in seen else now).append(i)
                if key is not None:
                    seen.add(key)
            outcomes |= await self._fold_or_store(user_id, namespace, expires_at, kept, now)
            pending = later
        results = [outcomes[i] for i in range(len(kept))]
        folded = sum(r.folded for r in results)
        duplicates = sum(r.duplicate for r in results)
        for reason, skipped in reasons.items():
            self._metrics.skipped(reason, skipped)
        self._metrics.folded(folded)
        return CaptureResult(
            stored=len(results) - duplicates - folded,
            duplicates=duplicates,
            folded=folded,
            skipped=count - len(kept),
            skipped_reasons=dict(sorted(reasons.items())),
            results=results,
        )

    async def _fold_or_store(
        self, user_id: int, namespace: str, expires_at: datetime, kept: list[_Planned], indexes: list[int]
    ) -> dict[int, CapturedExchange]:
        """Fold the exchanges at `indexes` that repeat an episode, store the others (their
        fingerprints recorded, for the repeats to come); {index: its result}."""
        foldable = [i for i in indexes if kept[i].fold_key is not None]
        folded: dict[int, Folded] = {}
        if foldable:
            async with self._db.write.acquire() as conn, conn.transaction():
                namespace_id = (await self._memories.writes.namespace_ids(conn, user_id, [namespace]))[
                    namespace
                ]
                found = await fold(
                    conn, [self._sighting(namespace_id, kept[i], expires_at) for i in foldable]
                )
            folded = {foldable[at]: where for at, where in found.items()}
        outcomes = {
            i: CapturedExchange(
                session_id=kept[i].exchange.session_id,
                turn=kept[i].exchange.turn,
                ids=[where.public_id],
                duplicate=not where.counted,
                folded=where.counted,
            )
            for i, where in folded.items()
        }
        to_store = [i for i in indexes if i not in folded]
        stored = await self._memories.store_episodes(user_id, [e for i in to_store for e in kept[i].episodes])
        new_ids: list[int] = []
        new_keys: list[bytes] = []
        at = 0
        for i in to_store:
            plan = kept[i]
            mine = stored[at : at + len(plan.episodes)]
            at += len(plan.episodes)
            duplicate = all(r.duplicate for r in mine)
            if plan.fold_key is not None and not duplicate:
                new_ids.append(mine[0].id)
                new_keys.append(plan.fold_key)
            outcomes[i] = CapturedExchange(
                session_id=plan.exchange.session_id,
                turn=plan.exchange.turn,
                ids=[r.id for r in mine],
                duplicate=duplicate,
            )
        if new_ids:
            async with self._db.write.acquire() as conn:
                await remember_keys(conn, new_ids, new_keys)
        return outcomes

    @staticmethod
    def _sighting(namespace_id: int, plan: _Planned, expires_at: datetime) -> Sighting:
        assert plan.fold_key is not None  # only foldable plans get here
        episode = plan.episodes[0]
        return Sighting(
            namespace_id=namespace_id,
            fold_key=plan.fold_key,
            capture_key=episode.capture_key,
            seen_at=plan.exchange.started_at or datetime.now(UTC),
            expires_at=expires_at,
        )

    def _plan(self, namespace: str, exchange: Exchange, expires_at: datetime, source: str) -> _Planned:
        """The exchange's episodes, or the reason it has none (app.capture.rules)."""
        prompt, reply = clean_said(exchange.prompt), clean_said(exchange.reply)
        reason = skip_reason(prompt, reply, exchange.digest)
        if reason is not None:
            return _Planned(exchange, [], skipped=reason)
        pieces = chunk(episode_text(prompt, reply, exchange.digest), self._max_chars)
        base = self._metadata(exchange, len(pieces))
        return _Planned(
            exchange,
            [
                EpisodeIn(
                    memory=MemoryIn(
                        content=piece,
                        namespace=namespace,
                        tags=[source],
                        importance=self._settings.importance,
                        source=source,
                        metadata={**base, "chunk": index},
                    ),
                    capture_key=capture_key(exchange.session_id, exchange.turn, index, source),
                    expires_at=expires_at,
                    created_at=exchange.started_at,
                )
                for index, piece in enumerate(pieces)
            ],
            fold_key=fold_key(prompt, reply) if len(pieces) == 1 else None,
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
