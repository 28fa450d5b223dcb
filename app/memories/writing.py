"""What every write of a memory shares: the checks and credential redaction before anything is
hashed or embedded, embedding outside any transaction, and the follow-up jobs a written memory needs.

The after-commit work a write needs (concept indexing; embedding, when the provider failed) is
enqueued as durable jobs in the write's own transaction: an acknowledged write always gets it done,
whatever crashes after the commit. Every write redacts credentials first (app.memories.redaction):
only placeholders are hashed, embedded and stored, so nothing downstream ever holds a credential;
with a key configured, the originals are sealed in the write's own transaction and opened only by
`MemoryReads.read_secrets`, for the owner. The two write paths build on this: storing
(app/memories/store.py) and changing what is stored (app/memories/edits.py).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable, Sequence
from typing import Any

import asyncpg
import msgspec
from msgspec import UNSET

from app.db import Database
from app.embeddings import Embedded, Embedder, EmbeddingError, guarded
from app.embeddings.backfill import embedding_job
from app.embeddings.inputs import NO_CONTEXT, TurnContext, forget_next_turn_vectors
from app.graph import indexing_jobs
from app.jobs import JobQueue, JobSettings, NewJob
from app.links.settings import LinkSettings
from app.memories.redaction import (
    TEXT_FIELDS,
    RedactedFields,
    check_stored_bounds,
    redact_fields,
    refuse_credential_in_name,
)
from app.memories.schemas import MemoryIn
from app.memories.settings import MemorySettings
from app.memories.validation import clean_memory
from app.namespaces import ensure_namespaces
from app.namespaces.settings import NamespaceSettings
from app.secrets import SecretSettings, Vault

log = logging.getLogger(__name__)


def content_hash(content: str) -> bytes:
    return hashlib.sha256(content.encode("utf-8")).digest()


def given(value: Any) -> bool:
    """True when a PATCH body set the field (even to null)."""
    return value is not UNSET


class WritePath:
    def __init__(
        self,
        db: Database,
        embedder: Embedder,
        limits: MemorySettings,
        jobs: JobQueue | None = None,
        index_graph: bool = True,
        secrets: SecretSettings | None = None,
        links: LinkSettings | None = None,
        namespaces: NamespaceSettings | None = None,
        turn_context: TurnContext = NO_CONTEXT,
    ) -> None:
        """`jobs`: where follow-up work goes (the app passes its worker's queue, which wakes the
        worker; without one, jobs are still written for whoever works the queue). `index_graph`:
        whether stored and changed memories are queued for concept indexing. `secrets`: whether
        credentials are redacted and the keys their originals are sealed under (default: redact,
        keep nothing). `links`: whether a stored memory supersedes the older ones it restates with
        different specifics (the automatic supersede, app/links/supersede.py; default: on).
        `namespaces`: how many namespaces of their own a write may bring a user to (default: the
        setting's default). `turn_context`: what captured turns are embedded with (their vectors
        are the embedding job's to compute: an edit of one leaves its vector to the job)."""
        secrets = secrets if secrets is not None else SecretSettings()
        self.redact = secrets.redact
        self.vault = Vault.from_settings(secrets)
        self.db = db
        self.router = guarded(embedder)
        self.limits = limits
        self.jobs = jobs if jobs is not None else JobQueue(JobSettings())
        self.index_graph = index_graph
        self.links = links if links is not None else LinkSettings()
        self.namespaces = namespaces if namespaces is not None else NamespaceSettings()
        self.turn_context = turn_context

    async def namespace_ids(
        self, conn: asyncpg.Connection, user_id: int, names: Iterable[str]
    ) -> dict[str, int]:
        """{name: id} of the namespaces a write goes to, own ones created within the user's cap
        (`ensure_namespaces`): every write path creates namespaces through this."""
        return await ensure_namespaces(conn, user_id, names, max_per_user=self.namespaces.max_per_user)

    async def embed(
        self, texts: Sequence[str], sensitive: Sequence[bool]
    ) -> tuple[list[Embedded | None], str | None]:
        """Embed for storage; sensitive text reaches only in-process models. A provider failure
        stores the memories without vectors (an embedding job retries) instead of failing the
        request: then the second value is the error."""
        if not texts:
            return [], None
        try:
            return await self.router.embed_for_storage(texts, sensitive), None
        except EmbeddingError as exc:
            log.warning("embedding failed; storing without embeddings (a job retries)", exc_info=True)
            return [None] * len(texts), f"{type(exc).__name__}: {exc}"

    def may_embed(self, is_sensitive: bool) -> bool:
        """Whether some model may embed this memory (sensitive text needs an in-process one)."""
        return not is_sensitive or self.router.sensitive_model_id is not None

    def prepare(self, items: Sequence[MemoryIn]) -> tuple[list[MemoryIn], list[RedactedFields]]:
        """Every write's checks, then credential redaction: only redacted text goes further (hash,
        embedding, storage, and so every reader). Returns the cleaned items and their redactions."""
        many = len(items) > 1
        redacted: list[RedactedFields] = []
        cleaned: list[MemoryIn] = []
        for i, item in enumerate(items):
            where = f"[{i}]." if many else ""
            memory = clean_memory(item, self.limits, where)
            self.check_name(memory.namespace, f"{where}namespace")
            fields = self.redacted({name: getattr(memory, name) for name in TEXT_FIELDS}, where)
            redacted.append(fields)
            cleaned.append(msgspec.structs.replace(memory, **fields.fields))
        return cleaned, redacted

    def check_name(self, name: str, where: str) -> None:
        """The credential check of a name (a namespace, a session id): refused when it holds one
        (redaction's counterpart for what must stay as given), unless redaction is off."""
        if self.redact:
            refuse_credential_in_name(name, where)

    def redacted(self, fields: dict[str, Any], where: str = "", used: Sequence[int] = ()) -> RedactedFields:
        """`fields` with credentials replaced (unless redaction is off), within the stored bounds."""
        result = redact_fields(fields, used=used) if self.redact else RedactedFields(fields, ())
        check_stored_bounds(result.fields, where)
        return result

    def follow_up(
        self, memory_id: int, is_sensitive: bool, unembedded: bool, embed_error: str | None
    ) -> list[NewJob]:
        """The jobs a stored or changed memory needs: concept indexing (never for sensitive ones), and
        embedding when it has no vector but some model may embed it (after a provider failure the
        job waits out a backoff first)."""
        jobs: list[NewJob] = []
        if self.index_graph and not is_sensitive:
            jobs += indexing_jobs([memory_id])
        if unembedded and self.may_embed(is_sensitive):
            jobs.append(embedding_job(memory_id, embed_error))
        return jobs

    async def next_turns_again(self, conn: asyncpg.Connection, memory_ids: Sequence[int]) -> list[NewJob]:
        """The embedding jobs of the captured turns that follow these memories in their sessions,
        whose vectors held them as their previous turn (app/embeddings/inputs.sql): called when a
        captured turn is stored, changed, made sensitive, deleted or restored, so no vector keeps
        the text of a turn that is no longer its neighbour."""
        return [
            embedding_job(memory_id)
            for memory_id in await forget_next_turn_vectors(conn, memory_ids, self.turn_context)
        ]
