"""Bounds on `GET /mcp` event streams: how many one key holds open, and for how long.

In stateless mode the SDK still answers `GET /mcp` with an event stream, which then never carries
anything (no session, so no server-initiated message) but pings, and stays open until the client
leaves: one key could hold hundreds of them for as long as it liked. The official clients open one
only with a session id, which /mcp never gives, so the bounds cost them nothing.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Awaitable, Callable

import anyio
from litestar.types import Message, Send

from app.errors import TooManyRequests

log = logging.getLogger(__name__)


class EventStreams:
    """The open event streams of one endpoint, by API key id: at most `per_key` at once, each
    ended cleanly after `lifetime_s`."""

    def __init__(self, per_key: int, lifetime_s: float) -> None:
        self._per_key = per_key
        self._lifetime_s = lifetime_s
        self._open: Counter[int] = Counter()

    def open_for(self, key_id: int) -> int:
        return self._open[key_id]

    async def hold(self, key_id: int, respond: Callable[[Send], Awaitable[None]], send: Send) -> None:
        """Run `respond` (which answers through the `send` it is given) as one of `key_id`'s streams:
        429 (`TooManyRequests`) when the key already holds `per_key`, and the answer is ended (its
        last, empty chunk sent) once `lifetime_s` has passed."""
        held = self._open[key_id]
        if held >= self._per_key:
            log.warning(
                "refused a GET /mcp event stream for API key %d: it holds %d open "
                "(MEMORIA_MCP__STREAMS_PER_KEY)",
                key_id,
                held,
            )
            raise TooManyRequests(
                f"too many open event streams on GET /mcp for this key ({held}, at most {self._per_key}); "
                "/mcp never sends on them: use POST",
                retry_after_s=self._lifetime_s,
            )
        self._open[key_id] = held + 1
        started = ended = False

        async def tracked(message: Message) -> None:
            nonlocal started, ended
            if message["type"] == "http.response.start":
                started = True
            elif message["type"] == "http.response.body" and not message.get("more_body", False):
                ended = True
            await send(message)

        try:
            with anyio.move_on_after(self._lifetime_s) as lifetime:
                await respond(tracked)
            if lifetime.cancelled_caught:
                log.info(
                    "closed a GET /mcp event stream of API key %d after %g s "
                    "(MEMORIA_MCP__STREAM_MAX_LIFETIME_S)",
                    key_id,
                    self._lifetime_s,
                )
                if started and not ended:
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            left = self._open[key_id] - 1
            if left > 0:
                self._open[key_id] = left
            else:
                del self._open[key_id]
