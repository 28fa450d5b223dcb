"""The client's small on-disk state: where it lives, the last-outcome records, the spool's size.

The capture hook, the recall hooks and `memoria status` share one directory:
`$MEMORIA_CLIENT__STATE_DIR`, else `$XDG_STATE_HOME/memoria`, else `~/.local/state/memoria`.
Inside it: `spool.json` (capture batches not yet accepted by the server, see `memoria_hook_client.spool`),
`cursors/<session_id>.json` (how far each session's transcript was read), `status.json` (the
last capture / recall / session-start / flush outcome, of any agent and of each agent, so
`memoria status` can say what happened without a log to grep), `flush-wait.json` (the waiting
flusher, see `memoria_hook_client.flush_wait`) and `projects/<folder>-<checksum>.json` (a git
repository's root commit, its project identity when it has no remote, see
`memoria_hook_client.identity`). Hooks import this on every
run, so it loads the standard library only, and neither pathlib nor typing at run time. Writing a
status record never raises: a state directory we cannot write must not turn a quiet hook into a
loud one.
"""

from __future__ import annotations

import json
import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

ENV_STATE_DIR = "MEMORIA_CLIENT__STATE_DIR"

SPOOL_FILE = "spool.json"
SPOOL_LOCK = "spool.lock"
STATUS_FILE = "status.json"
STATUS_LOCK = "status.lock"
CURSORS_DIR = "cursors"

#: The key of status.json holding each agent's latest records: {agent: {what: record}}.
AGENTS_KEY = "agents"

#: How long a status writer waits for another one before giving up (the record is best effort).
STATUS_LOCK_WAIT_S = 0.5


def state_dir(env: Mapping[str, str]) -> str:
    """`MEMORIA_CLIENT__STATE_DIR`, else `$XDG_STATE_HOME/memoria` (absolute only, per the XDG spec),
    else `~/.local/state/memoria`."""
    override = env.get(ENV_STATE_DIR, "").strip()
    if override:
        return os.path.expanduser(override)
    xdg = env.get("XDG_STATE_HOME", "")
    base = xdg if xdg and os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "memoria")


def spool_path(env: Mapping[str, str]) -> str:
    return os.path.join(state_dir(env), SPOOL_FILE)


def spool_lock_path(env: Mapping[str, str]) -> str:
    return os.path.join(state_dir(env), SPOOL_LOCK)


def cursor_path(env: Mapping[str, str], session_id: str) -> str:
    """`cursors/<session_id>.json`, the id made file-name safe (Claude Code's ids are UUIDs anyway)."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in session_id).strip(".") or "_"
    return os.path.join(state_dir(env), CURSORS_DIR, safe[:200] + ".json")


def ensure_dir(path: str) -> None:
    """Make `path` (and parents) private to this user: transcripts' text passes through here."""
    os.makedirs(path, mode=0o700, exist_ok=True)


def write_json_atomic(path: str, value: Any) -> None:
    """Replace `path` with `value` as JSON: temp file in the same directory, fsync, `os.replace`, so a
    reader (or a crash) sees the old file or the new one, never half of one."""
    directory = os.path.dirname(path) or "."
    ensure_dir(directory)
    temp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(value, out, ensure_ascii=False, separators=(",", ":"))
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
    except BaseException:
        _discard(temp)
        raise
    try:  # make the rename itself durable; not every file system lets a directory be opened
        dir_fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


def _discard(path: str) -> None:
    """Remove `path` if it is there (contextlib would cost the hook's start-up for this)."""
    try:
        os.unlink(path)
    except OSError:
        return


def read_json(path: str, default: Any) -> Any:
    """The JSON in `path`, `default` when it is missing or unreadable."""
    try:
        with open(path, encoding="utf-8") as file:
            return json.load(file)
    except (OSError, ValueError):
        return default


def lock_file(path: str, wait_s: float) -> int | None:
    """An fd holding an exclusive `flock` on `path`, or None when it stayed busy for `wait_s` seconds.
    Polled (non-blocking tries with short sleeps) so the wait is bounded without a timer signal."""
    import fcntl

    ensure_dir(os.path.dirname(path) or ".")
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    deadline = time.monotonic() + wait_s
    pause = 0.002
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                return None
            time.sleep(pause)
            pause = min(pause * 2, 0.05)
        except OSError:
            os.close(fd)
            raise


def unlock_file(fd: int) -> None:
    """Release a lock from `lock_file` (closing the fd drops the flock)."""
    os.close(fd)


def now_iso() -> str:
    """The current UTC time as RFC 3339 with a `Z`."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def record(
    env: Mapping[str, str],
    what: str,
    outcome: str,
    namespace: str | None,
    count: int,
    details: Mapping[str, Any] | None = None,
    tally: str | None = None,
    agent: str | None = None,
    replaces: tuple[str, ...] = (),
) -> None:
    """Store the latest `what` ("capture", "recall", "session-start", "flush", ...) outcome in
    `status.json`, with `details` (a flush: what the server skipped per reason, and folded).
    `tally` adds one to that reason in the record's running `without_context` counts, which
    outlive the record they are kept in (a recall: why prompts got no context, since the state
    directory was made). With `agent` the record is also kept as that agent's latest (under
    `AGENTS_KEY`), so `memoria status` tells each coding agent's hooks apart. `replaces` names
    records this one makes stale (a flush that sent clears the failed attempt noted after the last
    one). Never raises; when another writer holds the file too long the record is skipped."""
    try:
        directory = state_dir(env)
        fd = lock_file(os.path.join(directory, STATUS_LOCK), STATUS_LOCK_WAIT_S)
        if fd is None:
            return
        try:
            path = os.path.join(directory, STATUS_FILE)
            status = read_json(path, {})
            if not isinstance(status, dict):
                status = {}
            tallied = _tallied(status.get(what), tally)
            entry = {
                **(details or {}),
                **({"without_context": tallied} if tallied else {}),
                "at": now_iso(),
                "outcome": outcome,
                "namespace": namespace,
                "count": int(count),
            }
            status[what] = entry
            for stale in replaces:
                status.pop(stale, None)
            if agent is not None:
                agents = status.get(AGENTS_KEY)
                agents = agents if isinstance(agents, dict) else {}
                own = agents.get(agent)
                agents[agent] = {**(own if isinstance(own, dict) else {}), what: entry}
                status[AGENTS_KEY] = agents
            write_json_atomic(path, status)
        finally:
            unlock_file(fd)
    except Exception:  # best effort by design
        return


def _tallied(previous: Any, reason: str | None) -> dict[str, int]:
    """The running `without_context` counts of a record, with one more for `reason`."""
    counts = previous.get("without_context") if isinstance(previous, dict) else None
    tallied = {
        str(name): number
        for name, number in (counts.items() if isinstance(counts, dict) else ())
        if isinstance(number, int)
    }
    if reason is not None:
        tallied[reason] = tallied.get(reason, 0) + 1
    return tallied


def read_status(env: Mapping[str, str]) -> dict[str, Any]:
    """Every stored record, keyed by `what`; `{}` when nothing was recorded yet."""
    status = read_json(os.path.join(state_dir(env), STATUS_FILE), {})
    return status if isinstance(status, dict) else {}


def agent_records(status: Mapping[str, Any], agent: str) -> dict[str, Any]:
    """The latest records of one coding agent (`{what: record}`) in `read_status`'s answer."""
    agents = status.get(AGENTS_KEY)
    own = agents.get(agent) if isinstance(agents, dict) else None
    return own if isinstance(own, dict) else {}


def spool_summary(env: Mapping[str, str]) -> dict[str, int]:
    """{"batches", "exchanges", "bytes"} of the spool: what is waiting for the server."""
    path = spool_path(env)
    try:
        size = os.stat(path).st_size
    except OSError:
        return {"batches": 0, "exchanges": 0, "bytes": 0}
    batches = read_json(path, [])
    if not isinstance(batches, list):
        return {"batches": 0, "exchanges": 0, "bytes": size}
    exchanges = sum(len(batch.get("exchanges") or []) for batch in batches if isinstance(batch, dict))
    return {"batches": len(batches), "exchanges": exchanges, "bytes": size}


def spool_by_agent(env: Mapping[str, str], default_agent: str) -> dict[str, dict[str, int]]:
    """{agent: {"batches", "exchanges", "bytes"}} of the spool, a batch naming no agent counted as
    `default_agent`'s (spooled before there were others); bytes as each batch takes in the file."""
    batches = read_json(spool_path(env), [])
    counts: dict[str, dict[str, int]] = {}
    for batch in batches if isinstance(batches, list) else ():
        if not isinstance(batch, dict):
            continue
        named = batch.get("agent")
        agent = named if isinstance(named, str) else default_agent
        own = counts.setdefault(agent, {"batches": 0, "exchanges": 0, "bytes": 0})
        own["batches"] += 1
        own["exchanges"] += len(batch.get("exchanges") or [])
        own["bytes"] += len(json.dumps(batch, ensure_ascii=False, separators=(",", ":")).encode("utf-8")) + 1
    return counts
