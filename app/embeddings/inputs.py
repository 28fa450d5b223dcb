"""What text is embedded for a stored memory: the rule of `inputs.sql`, bound to the settings.

Every path that embeds a stored memory asks here (the embedding job, `memoria embeddings backfill`
and `reembed`, through `embed_rows`), so the same memory gets the same text whichever path embeds
it, and a re-embed reproduces the first vectors. A captured turn is embedded with its neighbourhood
(its date, the start of the previous turn of its session); a curated memory as its content. A
memory whose text is its content alone may be embedded before it is stored (a curated store, an
edit): `embedded_as_content` says which.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import asyncpg

from app.db.queries import Executor, NamedQuery

FILE = ("app.embeddings", "inputs.sql")


@dataclass(frozen=True, slots=True)
class TurnContext:
    """What a captured turn is embedded with besides its content (`MEMORIA_EMBEDDINGS__TURN_CONTEXT_*`)."""

    previous_chars: int = 0
    """At most this many characters of the previous turn of its session; 0: none."""
    with_date: bool = False
    """A first line with the date of the exchange."""

    @property
    def enabled(self) -> bool:
        return self.previous_chars > 0 or self.with_date


NO_CONTEXT = TurnContext()


def embedded_as_content(context: TurnContext, captured: bool) -> bool:
    """Whether a memory's embedding input is its content alone: true of every curated memory, and of
    captured ones when turn context is off. Only such a memory may be embedded from its text in
    hand; the others need the rule's look-up, which the embedding job runs."""
    return not captured or not context.enabled


class _InputsQuery(NamedQuery):
    SQL_FILE: ClassVar[tuple[str, str]] = FILE


@dataclass(frozen=True, slots=True, kw_only=True)
class EmbeddingInputs(_InputsQuery):
    QUERY = "embedding_inputs"
    with_date: bool
    previous_chars: int
    ids: list[int]
    sensitive_ok: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class ForgetNextTurnVectors(_InputsQuery):
    QUERY = "forget_next_turn_vectors"
    ids: list[int]
    previous_chars: int


QUERIES: tuple[type[NamedQuery], ...] = (EmbeddingInputs, ForgetNextTurnVectors)


async def embedding_inputs(
    conn: Executor, ids: Sequence[int], context: TurnContext, *, sensitive_ok: bool
) -> list[asyncpg.Record]:
    """The memories of `ids` still to embed (live; sensitive ones when `sensitive_ok`), in id order:
    `id`, `content_hash`, `is_sensitive` and `input`, the text to embed."""
    return await EmbeddingInputs(
        with_date=context.with_date,
        previous_chars=context.previous_chars,
        ids=list(ids),
        sensitive_ok=sensitive_ok,
    ).fetch(conn)


async def forget_next_turn_vectors(conn: Executor, ids: Sequence[int], context: TurnContext) -> list[int]:
    """The captured turns that follow `ids` in their sessions, their vectors dropped because one
    of `ids` was stored, changed, made sensitive, deleted or restored: each needs an embedding job
    (in the caller's transaction). None when turns are embedded without their previous turn."""
    if context.previous_chars == 0 or not ids:
        return []
    rows = await ForgetNextTurnVectors(ids=list(ids), previous_chars=context.previous_chars).fetch(conn)
    return [row["id"] for row in rows]
