"""Folding: an exchange that repeats an episode of its namespace counts as one more sighting of
that episode (its `seen_count`, `last_seen_at`, a later expiry) instead of a new row.

The same question asked in six sessions used to be six episodes that crowded recall ahead of the
answer. "Repeats" is decided without a model: two exchanges repeat each other when their prompts
and replies are equal once normalised (`normalised`: case, punctuation and spacing ignored);
`fold_key` is the hash of that pair. The tool digest is left out: the same question answered the
same way is a repeat whichever commands ran on the way. Only exchanges stored as one episode are
folded; a long exchange split in chunks is rare to repeat word for word and keeps its chunks.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import asyncpg

from app.capture.queries import FoldEpisodes, SetFoldKeys

_NOT_WORD = re.compile(r"[\W_]+")


def normalised(text: str) -> str:
    """`text` in lower case, its words separated by single spaces, punctuation and symbols gone."""
    return " ".join(_NOT_WORD.sub(" ", text.casefold()).split())


def fold_key(prompt: str, reply: str) -> bytes:
    """The fingerprint two repeats of an exchange share (prompt and reply already cleaned)."""
    pair = f"{normalised(prompt)}\x00{normalised(reply)}"
    return hashlib.sha256(pair.encode("utf-8")).digest()


@dataclass(frozen=True, slots=True)
class Sighting:
    """One exchange that may repeat a stored episode."""

    namespace_id: int
    fold_key: bytes
    capture_key: str
    seen_at: datetime
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class Folded:
    """The episode an exchange folded into; `counted`: a new sighting (False: this very exchange
    was folded before, and is a duplicate)."""

    public_id: int
    counted: bool


async def fold(conn: asyncpg.Connection, sightings: Sequence[Sighting]) -> dict[int, Folded]:
    """Fold each sighting that repeats a live memory of its namespace into it; {index in
    `sightings`: where it went}. A sighting left out repeats nothing (or was stored before under
    its own capture key): store it."""
    if not sightings:
        return {}
    rows = await FoldEpisodes(
        namespace_ids=[s.namespace_id for s in sightings],
        fold_keys=[s.fold_key for s in sightings],
        capture_keys=[s.capture_key for s in sightings],
        seen_at=[s.seen_at for s in sightings],
        expires_at=[s.expires_at for s in sightings],
    ).fetch(conn)
    return {row["position"] - 1: Folded(row["public_id"], row["counted"]) for row in rows}


async def remember_keys(conn: asyncpg.Connection, public_ids: Sequence[int], keys: Sequence[bytes]) -> None:
    """Give the episodes just stored their fingerprints, so their repeats fold into them."""
    if public_ids:
        await SetFoldKeys(public_ids=list(public_ids), fold_keys=list(keys)).execute(conn)
