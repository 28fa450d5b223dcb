"""The local queue of captured exchanges the server has not accepted yet, and the flush that sends it.

`spool.json` in the client state directory is a JSON list of batches
`{"id", "namespace", "url", "exchanges"}`, oldest first. Every change is a read-modify-write under an
exclusive `flock` on `spool.lock` (bounded wait), written to a temp file in the same directory,
fsynced and `os.replace`d: a reader or a crash sees the old list or the new one, never a torn one,
and two hooks never overwrite each other's batch.

Flushing sends the oldest batch first and removes what it sent only after the server answered 2xx,
so a crash between the answer and the removal can only send a batch again; the server's capture
key (session, turn, chunk) turns that into duplicates, never a second copy. One flusher runs at a
time (`flush.lock`), and it re-reads the spool after each request, so batches appended meanwhile
go out in the same run. Big batches go out in slices of at most `MAX_EXCHANGES_PER_REQUEST`
exchanges and about `MAX_BODY_BYTES`. A 5xx, a timeout, a refused connection, 408/429 or a refused
key (401: fixable by the person, and the exchanges must still be there afterwards) stops the flush
and keeps the rest for next time; 403/404 (a namespace not writable by you, or a server without the
route yet) keeps that namespace's batches and lets the others go; any other 4xx means the request
can never succeed, so that slice is dropped (and logged) rather than blocking everything behind it.
Standard library only: the capture hook and the detached flusher import it.
"""

from __future__ import annotations

import json
import os
import time

from memoria_hook_client.agents import AGENTS, DEFAULT_AGENT, capture_route
from memoria_hook_client.environment import KeyFileError, key_from_environment
from memoria_hook_client.http_post import InvalidResponse, api_headers, http_post, route_target
from memoria_hook_client.state import (
    lock_file,
    read_json,
    spool_lock_path,
    spool_path,
    state_dir,
    unlock_file,
    write_json_atomic,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

CAPTURE_PATH = capture_route(DEFAULT_AGENT)
FLUSH_LOCK = "flush.lock"
MAX_EXCHANGES_PER_REQUEST = 200
MAX_BODY_BYTES = 512 * 1024
#: Past this many waiting exchanges, or bytes, the oldest batches go (logged): a server gone for
#: weeks must not fill the disk, nor make each hook run rewrite a huge file. Far beyond what a
#: person's sessions produce while a server is down for a day or two.
MAX_SPOOLED_EXCHANGES = 5_000
MAX_SPOOL_BYTES = 32 * 1024 * 1024
SPOOL_LOCK_WAIT_S = 2.0
REQUEST_TIMEOUT_S = 10.0
#: Answers after which the same request can succeed later: keep the batch, stop for now.
RETRY_LATER = frozenset({401, 408, 425, 429})
#: Answers about one namespace (not shared with you, read-only, or a server without the capture
#: route yet): keep its batches for later, but let other namespaces' batches go.
HELD_PER_NAMESPACE = frozenset({403, 404})
#: Answers that may mean "too much at once": retry with half as many exchanges before dropping.
TOO_MUCH = frozenset({413, 422})


class SpoolBusy(Exception):
    """Another process held the spool lock for longer than we wait."""


def load(env: Mapping[str, str]) -> list[dict[str, Any]]:
    """The batches waiting, oldest first (`[]` when there is no spool or it is unreadable)."""
    batches = read_json(spool_path(env), [])
    if not isinstance(batches, list):
        return []
    return [batch for batch in batches if isinstance(batch, dict)]


class _Locked:
    """`with _Locked(env):` holds the spool lock; SpoolBusy when it stays taken too long."""

    def __init__(self, env: Mapping[str, str], wait_s: float = SPOOL_LOCK_WAIT_S) -> None:
        self.env = env
        self.wait_s = wait_s
        self.fd: int | None = None

    def __enter__(self) -> _Locked:
        self.fd = lock_file(spool_lock_path(self.env), self.wait_s)
        if self.fd is None:
            raise SpoolBusy(f"the spool lock stayed taken for {self.wait_s:.1f} s")
        return self

    def __exit__(self, *_exc: object) -> None:
        if self.fd is not None:
            unlock_file(self.fd)
            self.fd = None


def append(
    env: Mapping[str, str],
    namespace: str | None,
    url: str,
    exchanges: list[dict[str, Any]],
    notes: list[str] | None = None,
    agent: str = DEFAULT_AGENT,
) -> str:
    """Queue `exchanges` as one batch for `namespace` at `url`; returns the batch id. Past the
    spool's caps the oldest batches go, and `notes` says so."""
    batch_id = f"{time.time_ns():x}-{os.getpid()}-{os.urandom(4).hex()}"
    batch = {"id": batch_id, "namespace": namespace, "url": url, "exchanges": exchanges}
    if agent != DEFAULT_AGENT:  # a batch without one is Claude Code's (spooled before there were others)
        batch["agent"] = agent
    path = spool_path(env)
    with _Locked(env):
        batches = load(env)
        batches.append(batch)
        try:
            size = os.stat(path).st_size
        except OSError:
            size = 0
        size += _size(batch)
        total = sum(len(batch.get("exchanges") or []) for batch in batches)
        while (total > MAX_SPOOLED_EXCHANGES or size > MAX_SPOOL_BYTES) and len(batches) > 1:
            gone = batches.pop(0)
            count = len(gone.get("exchanges") or [])
            total -= count
            size -= _size(gone)
            if notes is not None:
                notes.append(f"spool over its cap: dropped the oldest {count} exchanges")
        write_json_atomic(path, batches)
    return batch_id


def _size(value: Any) -> int:
    """About the bytes `value` takes in the spool file."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")) + 1


def _drop_sent(env: Mapping[str, str], batch_id: str, count: int) -> None:
    """Remove the first `count` exchanges of batch `batch_id` (the batch when none are left)."""
    with _Locked(env):
        batches = load(env)
        kept: list[dict[str, Any]] = []
        for batch in batches:
            if batch.get("id") == batch_id:
                rest = (batch.get("exchanges") or [])[count:]
                if not rest:
                    continue
                batch = {**batch, "exchanges": rest}
            kept.append(batch)
        write_json_atomic(spool_path(env), kept)


def _slice(exchanges: list[Any], limit: int) -> tuple[int, bytes]:
    """How many of the first exchanges fit one request (at least one), and that request's body."""
    sizes = 0
    count = 0
    for exchange in exchanges[:limit]:
        size = len(json.dumps(exchange, ensure_ascii=False).encode("utf-8")) + 1
        if count and sizes + size > MAX_BODY_BYTES:
            break
        sizes += size
        count += 1
    body = json.dumps({"exchanges": exchanges[:count]}, ensure_ascii=False).encode("utf-8")
    return count, body


def _valid(batch: dict[str, Any]) -> bool:
    namespace = batch.get("namespace")
    return (
        isinstance(batch.get("id"), str)
        and isinstance(batch.get("url"), str)
        and (namespace is None or isinstance(namespace, str))
        and isinstance(batch.get("exchanges"), list)
        and batch.get("agent", DEFAULT_AGENT) in AGENTS
    )


def _remove_batch(env: Mapping[str, str], batch: dict[str, Any]) -> None:
    """Remove a batch that cannot be sent (no id to find it by: compare the whole thing)."""
    with _Locked(env):
        write_json_atomic(spool_path(env), [other for other in load(env) if other != batch])


def flush(env: Mapping[str, str], budget_s: float, notes: list[str]) -> dict[str, Any]:
    """Send waiting batches in order within `budget_s` seconds; counts and an outcome word:
    "empty" (nothing waited), "flushed" (all sent), "busy" (another flusher runs), "unreachable",
    "http-<status>", "no-key", "budget" (time ran out) or "spool-busy"."""
    started = time.monotonic()
    result: dict[str, Any] = {
        "sent": 0,
        "stored": 0,
        "duplicates": 0,
        "folded": 0,
        "skipped": {},
        "dropped": 0,
        "left": 0,
        "outcome": "empty",
    }
    if not load(env):
        return result
    flush_fd = lock_file(os.path.join(state_dir(env), FLUSH_LOCK), min(budget_s, SPOOL_LOCK_WAIT_S))
    if flush_fd is None:
        result["outcome"] = "busy"
        result["left"] = sum(len(batch.get("exchanges") or []) for batch in load(env))
        return result
    try:
        _flush_locked(env, started + budget_s, notes, result)
    except SpoolBusy as exc:
        result["outcome"] = "spool-busy"
        notes.append(f"flush stopped: {exc}")
    finally:
        unlock_file(flush_fd)
    result["left"] = sum(len(batch.get("exchanges") or []) for batch in load(env))
    return result


def _flush_locked(env: Mapping[str, str], deadline: float, notes: list[str], result: dict[str, Any]) -> None:
    try:
        key = key_from_environment(env)
    except KeyFileError as exc:
        result["outcome"] = "no-key"
        notes.append(f"flush kept the spool: {exc}")
        return
    limit = MAX_EXCHANGES_PER_REQUEST
    #: (url, namespace) pairs refused for now (403/404): their batches wait, the others still go
    held: set[tuple[Any, Any]] = set()
    while True:
        batches = [batch for batch in load(env) if (batch.get("url"), batch.get("namespace")) not in held]
        if not batches:
            if not held:
                result["outcome"] = "flushed"
            return
        batch = batches[0]
        if not _valid(batch):
            _remove_batch(env, batch)
            notes.append("dropped a malformed spool batch")
            continue
        exchanges = batch["exchanges"]
        if not exchanges:
            _drop_sent(env, batch["id"], 0)
            continue
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            result["outcome"] = "budget"
            return
        count, body = _slice(exchanges, limit)
        try:
            route = capture_route(batch.get("agent") or DEFAULT_AGENT)
            scheme, host, port, path = route_target(batch["url"], route, batch["namespace"])
        except ValueError as exc:
            _drop_sent(env, batch["id"], len(exchanges))
            result["dropped"] += len(exchanges)
            notes.append(f"dropped {len(exchanges)} spooled exchanges: {exc}")
            continue
        try:
            status, payload = http_post(
                scheme, host, port, path, api_headers(key), body, min(remaining, REQUEST_TIMEOUT_S)
            )
        except (OSError, InvalidResponse) as exc:
            result["outcome"] = "unreachable"
            notes.append(f"flush stopped, {batch['url']} unreachable: {exc or type(exc).__name__}")
            return
        if 200 <= status < 300:
            _drop_sent(env, batch["id"], count)
            result["sent"] += count
            try:
                answer = json.loads(payload)
                result["stored"] += int(answer.get("stored", 0))
                result["duplicates"] += int(answer.get("duplicates", 0))
                result["folded"] += int(answer.get("folded", 0))
                for reason, skipped in (answer.get("skipped_reasons") or {}).items():
                    result["skipped"][reason] = result["skipped"].get(reason, 0) + int(skipped)
            except (ValueError, TypeError, AttributeError):
                pass
            continue  # a limit halved by a 413/422 stays halved for the rest of this run
        reason = payload[:200].decode("utf-8", "replace")
        if status in TOO_MUCH and count > 1:
            limit = max(1, count // 2)
            continue
        if status in HELD_PER_NAMESPACE:
            held.add((batch["url"], batch["namespace"]))
            result["outcome"] = f"http-{status}"
            notes.append(
                f"kept the spooled exchanges for {batch['namespace']!r}, server answered {status}: {reason}"
            )
            continue
        if status in RETRY_LATER or not 400 <= status < 500:
            result["outcome"] = f"http-{status}"
            notes.append(f"flush stopped, server answered {status}: {reason}")
            return
        _drop_sent(env, batch["id"], count)
        result["dropped"] += count
        notes.append(f"dropped {count} spooled exchanges the server refused ({status}): {reason}")
