"""LRU cache of query embeddings, shared by every provider: agents repeat the same queries."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable

from app.embeddings.base import Vector


class QueryCache:
    """Bounded, least-recently-used first out; size 0 disables it."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._entries: OrderedDict[str, Vector] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    async def get_or_compute(self, text: str, compute: Callable[[str], Awaitable[Vector]]) -> Vector:
        cached = self._entries.get(text)
        if cached is not None:
            self._entries.move_to_end(text)
            return cached
        vector = await compute(text)
        if self._size > 0:
            self._entries[text] = vector
            self._entries.move_to_end(text)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)
        return vector
