"""The capture hook (Stop, PreCompact, SessionEnd) and the flusher it starts.

`memoria-hook capture` hands the agent's event, unparsed, to a detached worker
(`memoria-hook capture --worker`: its own session, the event on its stdin, no other stdio) and
exits (`memoria_hook_client.handoff`, which says when the hook's own process captures instead):
Claude Code waits for a Stop, PreCompact or SessionEnd hook, and parsing a long transcript delta
and writing it durably took most of the hook's time (`memoria bench capture` measures it), so none
of it happens while the session waits. The worker parses the event and checks that capture is on
for its project. Handing off loses nothing: it reads the session's transcript from where the last run stopped
(`cursors/<session_id>.json`), turns the new lines into exchanges
(`memoria_hook_client.transcript`), removes `<private>` spans, appends them to the local spool and only then
moves the cursor, so a worker that dies before that leaves the cursor where it was and the next
event reads the same lines again; a crash after the spool write sends the same turns again, which
the server's capture key makes duplicates. Then the worker flushes the spool.
`MEMORIA_CLIENT__CAPTURE_FLUSH=inline` does all of it in the hook's own process instead (tests, and
people who prefer it).

Capture is off when `MEMORIA_CLIENT__CAPTURE=off`, or when the event's project has a
`.memoria-no-capture` file (at its git root, or in `cwd`): `memoria capture off` writes one.

Like the prompt hook it always exits 0 and prints nothing (a capture hook has nothing to say to
Claude Code); reasons go to the hook log and the outcome to `status.json` for `memoria status`.
Standard library only, without pathlib or typing at run time.
"""

from __future__ import annotations

import json
import os
import sys
import time

from memoria_hook_client.agents import DEFAULT_AGENT, TRANSCRIPTS, normalised_event
from memoria_hook_client.budget import BudgetSpent, HookDeadline, hook_budget
from memoria_hook_client.environment import DEFAULT_URL, ENV_URL, hook_log_from_environment
from memoria_hook_client.handoff import (
    ENV_CAPTURE,
    MAX_EVENT_BYTES,
    capture_off_by_environment,
    hand_off,
    hook_command,
    start_detached,
)
from memoria_hook_client.hook_log import write_log
from memoria_hook_client.namespace import event_namespace, git_root
from memoria_hook_client.private import strip_private
from memoria_hook_client.spool import SpoolBusy, append, flush, load
from memoria_hook_client.state import (
    cursor_path,
    lock_file,
    read_json,
    record,
    unlock_file,
    write_json_atomic,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import IO, Any

NO_CAPTURE_FILE = ".memoria-no-capture"
SESSION_LOCK_WAIT_S = 1.0
#: A worker waits longer: it blocks nobody, and Stop's worker may still hold the session when
#: SessionEnd's starts (the final event must not give up on its turn).
WORKER_SESSION_LOCK_WAIT_S = 30.0
#: The detached flusher's own limit: it blocks nobody, but must not linger forever either.
DETACHED_FLUSH_BUDGET_S = 60.0
FINAL_EVENTS = ("SessionEnd",)
#: The status record of a flush that sent nothing (server down, key refused, ...): kept beside the
#: last flush that sent, which it must not replace.
FLUSH_ATTEMPT = "flush-attempt"
#: Cursors of sessions untouched this long are removed at a SessionEnd (they are a few bytes each,
#: but one per session ever run adds up).
CURSOR_MAX_AGE_S = 90 * 24 * 3600.0
#: Events fired when the model finished its turn: its last text is the final reply.
TURN_OVER_EVENTS = ("Stop", "AfterAgent", "agentStop")

USAGE = "usage: memoria-hook capture [--worker]|flush [--wait] [--agent NAME] [--url URL] [--namespace NAME]"


class CaptureFailure(Exception):
    """A reason to stop quietly; the message goes to the hook log."""


def parse_args(argv: Sequence[str]) -> tuple[str, dict[str, str]]:
    args = list(argv)
    if not args or args[0] not in ("capture", "flush"):
        raise CaptureFailure(f"bad arguments {list(argv)!r}; {USAGE}")
    command = args.pop(0)
    options: dict[str, str] = {}
    while args:
        flag = args.pop(0)
        if flag in ("--url", "--namespace", "--agent") and args:
            options[flag[2:]] = args.pop(0)
        elif flag == "--worker" and command == "capture":
            options["worker"] = "1"
        elif flag == "--wait" and command == "flush":
            options["wait"] = "1"
        else:
            raise CaptureFailure(f"bad arguments {list(argv)!r}; {USAGE}")
    if options.get("agent", DEFAULT_AGENT) not in TRANSCRIPTS:
        raise CaptureFailure(f"unknown agent {options['agent']!r}; {USAGE}")
    return command, options


def read_event(stdin: IO[bytes]) -> dict[str, Any]:
    return parse_event(stdin.read(MAX_EVENT_BYTES + 1))


def parse_event(raw: bytes) -> dict[str, Any]:
    if len(raw) > MAX_EVENT_BYTES:
        raise CaptureFailure("event on stdin is larger than 4 MiB")
    try:
        event = json.loads(raw)
    except (UnicodeDecodeError, ValueError) as exc:
        raise CaptureFailure(f"stdin is not a JSON event: {exc}") from exc
    if not isinstance(event, dict):
        raise CaptureFailure("stdin is JSON but not an object")
    return event


def agent_event(stdin: IO[bytes], options: Mapping[str, str]) -> dict[str, Any]:
    """The event on stdin with the agent's field names as the capture reads them (Copilot CLI's
    camelCase `sessionId` and `transcriptPath`, its agentStop told by its fields)."""
    return normalised_event(_agent(options), read_event(stdin))


def capture_off_reason(env: Mapping[str, str], cwd: str | None) -> str | None:
    """Why capture is off for a session in `cwd`, None when it is on."""
    if capture_off_by_environment(env):
        return f"capture off: {ENV_CAPTURE}={env.get(ENV_CAPTURE)}"
    if cwd and "\x00" not in cwd:
        places = [cwd]
        if os.path.isdir(cwd):
            root = git_root(cwd)
            if root:
                places.insert(0, root)
        for place in places:
            marker = os.path.join(place, NO_CAPTURE_FILE)
            if os.path.exists(marker):
                return f"capture off: {marker} exists"
    return None


def _private_removed(exchange: dict[str, Any]) -> dict[str, Any]:
    """`exchange` with `<private>` spans removed from every text it carries."""
    digest = exchange.get("digest") or {}
    cleaned = {
        name: [kept for kept in (strip_private(item).strip() for item in items) if kept]
        for name, items in digest.items()
    }
    return {
        **exchange,
        "prompt": strip_private(exchange["prompt"]),
        "reply": strip_private(exchange["reply"]),
        "digest": cleaned,
    }


def check_event(event: Mapping[str, Any], env: Mapping[str, str]) -> tuple[str, str, str | None]:
    """(session_id, transcript_path, why capture is off or None); CaptureFailure for a bad event."""
    session_id = event.get("session_id")
    transcript = event.get("transcript_path")
    if not isinstance(session_id, str) or not 0 < len(session_id) <= 200:
        raise CaptureFailure("event has no usable session_id")
    if not isinstance(transcript, str) or not transcript:
        raise CaptureFailure("event has no transcript_path")
    cwd = event.get("cwd")
    return session_id, transcript, capture_off_reason(env, cwd if isinstance(cwd, str) else None)


def capture(
    event: Mapping[str, Any],
    options: Mapping[str, str],
    env: Mapping[str, str],
    notes: list[str],
    lock_wait_s: float = SESSION_LOCK_WAIT_S,
) -> tuple[str, str | None, int]:
    """Spool the new exchanges of the event's session: (outcome, namespace, exchanges spooled)."""
    session_id, transcript, off = check_event(event, env)
    if off:
        notes.append(off)
        return "off", None, 0
    namespace = options.get("namespace") or event_namespace(event, env, notes)
    url = options.get("url") or env.get(ENV_URL) or DEFAULT_URL
    hook_event = event.get("hook_event_name")
    hook_event = hook_event[:100] if isinstance(hook_event, str) else None
    cursor_file = cursor_path(env, session_id)
    lock = lock_file(cursor_file[: -len(".json")] + ".lock", lock_wait_s)
    if lock is None:
        raise CaptureFailure(f"session {session_id} is being captured by another run")
    try:
        cursor = read_json(cursor_file, {})
        if not isinstance(cursor, dict) or cursor.get("transcript") != transcript:
            cursor = {}
        offset = cursor.get("offset", 0)
        turn = cursor.get("turn", 0)
        if not isinstance(offset, int) or not isinstance(turn, int) or offset < 0 or turn < 0:
            offset, turn = 0, 0
        try:
            delta = _reader(options.get("agent", DEFAULT_AGENT))(
                transcript,
                offset,
                turn,
                session_id,
                final=hook_event in FINAL_EVENTS,
                turn_over=hook_event in TURN_OVER_EVENTS,
            )
        except OSError as exc:
            raise CaptureFailure(f"cannot read transcript {transcript}: {exc.strerror or exc}") from exc
        exchanges = [{**_private_removed(exchange), "hook_event": hook_event} for exchange in delta.exchanges]
        if exchanges:
            try:
                append(env, namespace, url, exchanges, notes, options.get("agent", DEFAULT_AGENT))
            except SpoolBusy as exc:
                raise CaptureFailure(f"not spooled, will retry next time: {exc}") from exc
        if delta.offset != offset or delta.turn != turn or not cursor:
            write_json_atomic(
                cursor_file,
                {"transcript": transcript, "offset": delta.offset, "turn": delta.turn, "at": time.time()},
            )
    finally:
        unlock_file(lock)
    if hook_event in FINAL_EVENTS:
        prune_cursors(os.path.dirname(cursor_file), time.time() - CURSOR_MAX_AGE_S)
    if exchanges:
        return "spooled", namespace, len(exchanges)
    return ("pending" if delta.pending else "nothing-new"), namespace, 0


def _reader(agent: str) -> Any:
    """The agent's transcript reader: `read_delta(path, offset, turn, session_id, final=, turn_over=)`."""
    import importlib

    return importlib.import_module(TRANSCRIPTS[agent]).read_delta


def prune_cursors(directory: str, before: float) -> int:
    """Remove cursors (and their lock files) untouched since `before`: a session resumed after that
    long reads its transcript from the top again, which the capture keys make harmless."""
    removed = 0
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return 0
    for entry in entries:
        try:
            if entry.is_file() and entry.stat().st_mtime < before:
                os.unlink(entry.path)
                removed += 1
        except OSError:
            continue
    return removed


def flusher_command() -> list[str]:
    """The detached flusher's argv."""
    return hook_command(["flush"])


def _option_args(options: Mapping[str, str]) -> list[str]:
    names = ("url", "namespace", "agent")
    return [arg for name in names if name in options for arg in (f"--{name}", options[name])]


def start_flusher(env: Mapping[str, str]) -> None:
    """Start `memoria-hook flush` detached."""
    start_detached(flusher_command(), env)


def _agent(options: Mapping[str, str]) -> str:
    return options.get("agent", DEFAULT_AGENT)


def run_flush(env: Mapping[str, str], budget_s: float, notes: list[str], wait: bool = True) -> dict[str, Any]:
    """Flush the spool within `budget_s`, and record how it went (`record_flush`). With `wait`, a
    flush stopped by a server that is down (or busy) starts the waiting flusher
    (`memoria_hook_client.flush_wait`), which sends the spool as soon as the server answers again."""
    result = flush(env, budget_s, notes)
    record_flush(env, result)
    if wait and result["left"] and result["outcome"] != "busy":  # the running flusher sees to it
        from memoria_hook_client.flush_wait import retried, start_waiter

        if retried(result["outcome"]):
            start_waiter(env, notes)
    return result


def record_flush(env: Mapping[str, str], result: Mapping[str, Any]) -> None:
    """Record a flush for `memoria status`. The `flush` record is the last flush that sent (or
    dropped) something; one that sent nothing (server down, key refused) is recorded apart, as
    `FLUSH_ATTEMPT`, so it never hides the last real one; a flush that found nothing to send, or
    another flusher running (which records its own), is not recorded."""
    outcome = result["outcome"]
    if outcome in ("empty", "busy"):
        return
    if result["sent"] or result["dropped"]:
        details = {"skipped": result["skipped"], "folded": result["folded"]}
        record(env, "flush", outcome, None, result["sent"], details, replaces=(FLUSH_ATTEMPT,))
    else:
        record(env, FLUSH_ATTEMPT, outcome, None, 0, {"left": result["left"]})


def main(
    argv: Sequence[str] | None = None,
    stdin: IO[bytes] | None = None,
    stdout: IO[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> int:
    """Always 0 with no output: Claude Code shows other exit codes and Stop's stdout to the person."""
    del stdout  # nothing to say
    # From here, not from the process's spawn as the prompt hook counts: nobody waits on a Stop
    # hook (it runs async), and `main` also runs inside long-lived processes (`memoria`, tests).
    started = time.monotonic()
    env = os.environ if env is None else env
    notes: list[str] = []
    try:
        command, options = parse_args(sys.argv[1:] if argv is None else argv)
    except CaptureFailure as exc:
        write_log(hook_log_from_environment(env), str(exc))
        return 0
    if command == "flush" and "wait" in options:
        from memoria_hook_client.flush_wait import main as wait_and_flush

        return wait_and_flush(env)
    if command == "flush":
        try:
            with HookDeadline(DETACHED_FLUSH_BUDGET_S + 5):
                run_flush(env, DETACHED_FLUSH_BUDGET_S, notes)
        except BudgetSpent:
            notes.append("flush gave up after its time limit")
        except Exception as exc:  # fail quietly, whatever happened
            notes.append(f"flush: unexpected {type(exc).__name__}: {exc}")
        for line in notes:
            write_log(hook_log_from_environment(env), line)
        return 0
    if "worker" in options:
        _work(stdin or sys.stdin.buffer, options, env, notes)
        return 0
    budget, warning = hook_budget(env)
    if warning:
        notes.append(warning)
    outcome, namespace, count = "failed", None, 0
    try:
        with HookDeadline(budget - (time.monotonic() - started)):
            raw = (stdin or sys.stdin.buffer).read(MAX_EVENT_BYTES + 1)
            if hand_off(raw, _option_args(options), env):
                outcome = "handed-off"  # the worker records the capture itself
            else:  # asked for, capture off (recorded here), or no worker: nothing is lost, only slower
                event = normalised_event(_agent(options), parse_event(raw))
                outcome, namespace, count = capture(event, options, env, notes)
                if outcome != "off" and load(env):
                    run_flush(env, max(0.001, budget - (time.monotonic() - started)), notes)
    except BudgetSpent:
        notes.append(f"capture gave up after the {budget:.2f} s budget")
    except CaptureFailure as exc:
        notes.append(str(exc))
    except Exception as exc:  # fail quietly, whatever happened
        notes.append(f"capture: unexpected {type(exc).__name__}: {exc}")
    if outcome != "handed-off":
        record(env, "capture", outcome, namespace, count, agent=_agent(options))
    for line in notes:
        write_log(hook_log_from_environment(env), line)
    return 0


def _work(stdin: IO[bytes], options: Mapping[str, str], env: Mapping[str, str], notes: list[str]) -> None:
    """The detached worker: spool the event's exchanges, record it, then flush (nobody waits)."""
    outcome, namespace, count = "failed", None, 0
    try:
        with HookDeadline(WORKER_SESSION_LOCK_WAIT_S + DETACHED_FLUSH_BUDGET_S + 5):
            event = agent_event(stdin, options)
            outcome, namespace, count = capture(event, options, env, notes, WORKER_SESSION_LOCK_WAIT_S)
            record(env, "capture", outcome, namespace, count, agent=_agent(options))
            if outcome != "off" and load(env):
                run_flush(env, DETACHED_FLUSH_BUDGET_S, notes)
    except BudgetSpent:
        notes.append("capture worker gave up after its time limit")
    except CaptureFailure as exc:
        notes.append(str(exc))
        record(env, "capture", outcome, namespace, count, agent=_agent(options))
    except Exception as exc:  # fail quietly, whatever happened
        notes.append(f"capture worker: unexpected {type(exc).__name__}: {exc}")
        record(env, "capture", outcome, namespace, count, agent=_agent(options))
    for line in notes:
        write_log(hook_log_from_environment(env), line)


if __name__ == "__main__":
    sys.exit(main())
