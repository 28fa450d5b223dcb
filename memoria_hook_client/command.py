"""The command hooks: forward a coding agent's event from stdin to Memoria, or hand it to the capture hook.

One entry point, four subcommands (`memoria-hook <sub>` or `memoria hook <sub>`), each for one agent
(`--agent claude-code`, the default, or `--agent codex`: `memoria_hook_client.agents`, which says
how the agents differ):
`user-prompt-submit` (the default) and `session-start` post the event to their hook route and print
the answer; `capture` (Stop, PreCompact, SessionEnd) and `flush` belong to `capture_worker`, which
this module only dispatches to (imported when asked for, so a prompt never loads it).

Claude Code spawns this once per event, so it and the modules it imports (`environment`,
`namespace`, `budget`, `http_post`, `hook_log`, `state`, all of this package) load the standard
library only, and neither pathlib nor typing at run time; the package's `__init__` is import-free.
Start-up stays in tens of milliseconds on any Python 3.11, and `memoria hook <sub>` reaches this
module through `app.entry` without loading the rest of the command line. It fails open: with no
server, a hung server, a refused key, bad arguments or bad input it exits 0 with no output, so a
memory service that is down never gets in the way of typing a prompt; the reason goes to the hook
log, and the outcome to the client's `status.json` for `memoria status`.

This module is the flow only: arguments, event, key, namespace, one POST within the budget, the
answer. The namespace is worked out HERE, on the person's machine, from the event's `cwd`
(`memoria_hook_client.namespace`: the `MEMORIA_CLIENT__NAMESPACE_MAP` mapping, the git root, the
`MEMORIA_CLIENT__DEFAULT_NAMESPACE` default) and sent as `?namespace=`; the server never resolves
a client's path, and the paths in the event (`cwd`, `transcript_path`) are not sent at all.
"""

from __future__ import annotations

import json
import os
import sys
import time

from memoria_hook_client.agents import UnknownAgent, hook_route, normalised_event, split_agent
from memoria_hook_client.budget import BudgetSpent, HookDeadline, hook_budget, process_age
from memoria_hook_client.environment import (
    DEFAULT_URL,
    ENV_URL,
    KeyFileError,
    hook_log_from_environment,
    key_from_environment,
)
from memoria_hook_client.hook_log import write_log
from memoria_hook_client.http_post import InvalidResponse, api_headers, http_post, route_target
from memoria_hook_client.namespace import event_namespace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import IO, Any

HOOK_PATH = "/v1/hooks/claude-code/user-prompt-submit"
SESSION_START_PATH = "/v1/hooks/claude-code/session-start"
#: The subcommand each route answers, and the name its last outcome has in the client's status.json.
ROUTES = {"user-prompt-submit": HOOK_PATH, "session-start": SESSION_START_PATH}
STATUS_NAMES = {"user-prompt-submit": "recall", "session-start": "session-start"}
#: The outcomes of a prompt the server left without context, by the reason `memoria status` counts
#: (the server's metric `memoria_hook_prompts_without_context` uses the same names).
WITHOUT_CONTEXT = {
    "skipped": "trivial",
    "below-floor": "floor",
    "all-seen": "seen",
    "budget-spent": "budget",
    "no-results": "no-results",
}
CAPTURE_SUBCOMMANDS = ("capture", "flush")
SUBCOMMANDS = (*ROUTES, *CAPTURE_SUBCOMMANDS)
#: Where the server names what happened ("injected:3", "no-results", "unauthorized", ...).
OUTCOME_HEADER = "memoria-hook-outcome"
#: Outcomes that answer 200 `{}` (so Claude Code shows nothing) but need the person's attention:
#: they go to the hook log. The others (no results, a skipped prompt) are the hook working.
LOGGED_OUTCOMES = {
    "unauthorized": "the server refused the API key",
    "missing-scope": "the API key lacks a scope the hook needs",
    "too-large": "the event was too large for the server",
    "error": "the server failed to answer",
    "unavailable": "the server is not ready",
    "rejected": "the server rejected the request",
}
MAX_EVENT_BYTES = 4 * 1024 * 1024
#: Event fields naming paths on this machine: the server has no use for them, so they stay here.
LOCAL_FIELDS = ("cwd", "transcript_path")

USAGE = (
    "usage: memoria-hook [user-prompt-submit|session-start|capture|flush] [--agent NAME] [--url URL] "
    "[--namespace NAME]"
)

_COMMON = """
Options:
  --agent NAME      The coding agent running the hook: claude-code (default), codex, gemini,
                    qwen, opencode, copilot or cursor.
  --url URL         Memoria base URL (default: MEMORIA_CLIENT__URL, else http://127.0.0.1:8080).
  --namespace NAME  Use this namespace instead of the session's repository's.
  -h, --help        Show this text and exit.

The namespace is worked out on this machine from the event's cwd: MEMORIA_CLIENT__NAMESPACE_MAP,
else the git repository (repo:<name>), else MEMORIA_CLIENT__DEFAULT_NAMESPACE, else the server's
default. The key comes from MEMORIA_CLIENT__API_KEY, else the key file (`memoria login`).
Always exits 0 and prints one JSON object or nothing (Claude Code shows other exit codes as
errors); why it stayed silent goes to the hook log (MEMORIA_CLIENT__HOOK_LOG, default
~/.cache/memoria/hook.log), the outcome to `memoria status`. Time limit:
MEMORIA_CLIENT__HOOK_BUDGET_S (default 1.5 s), counted from the process start.
"""

HELP = {
    "user-prompt-submit": "usage: memoria hook user-prompt-submit [--url URL] [--namespace NAME]\n\n"
    "Claude Code UserPromptSubmit command hook: event JSON on stdin, the memories that match the\n"
    "prompt on stdout as additionalContext; always exits 0 (fails open).\n" + _COMMON,
    "session-start": "usage: memoria hook session-start [--url URL] [--namespace NAME]\n\n"
    "Claude Code SessionStart command hook: event JSON on stdin, the namespace's pinned and most\n"
    "important memories on stdout as additionalContext (aware of source: startup, resume, clear,\n"
    "compact); always exits 0 (fails open).\n" + _COMMON,
    "capture": "usage: memoria hook capture [--url URL] [--namespace NAME]\n\n"
    "Claude Code Stop / PreCompact / SessionEnd command hook: reads the session's new exchanges\n"
    "from the event's transcript_path, spools them locally and starts a detached flusher that\n"
    "sends them to Memoria; prints nothing, always exits 0. Capture is off with\n"
    "MEMORIA_CLIENT__CAPTURE=off or a .memoria-no-capture file at the repository root.\n" + _COMMON,
    "flush": "usage: memoria hook flush [--url URL]\n\n"
    "Send the spooled captures (MEMORIA_CLIENT__STATE_DIR, else $XDG_STATE_HOME/memoria) to Memoria\n"
    "in order; what the server does not take stays spooled. With the server down it starts one\n"
    "detached `flush --wait`, which tries again with backoff for MEMORIA_CLIENT__FLUSH_WAIT_S (default\n"
    "30 min) and sends the spool once the server answers. Reads no stdin, prints nothing, always\n"
    "exits 0.\n" + _COMMON,
}


class HookFailure(Exception):
    """A reason to give up quietly; the message goes to the hook log, `outcome` to status.json."""

    def __init__(self, message: str, outcome: str = "failed") -> None:
        super().__init__(message)
        self.outcome = outcome


def wants_help(argv: Sequence[str]) -> bool:
    return any(arg in ("-h", "--help") for arg in argv)


def subcommand(argv: Sequence[str]) -> str:
    """The subcommand `argv` names; `user-prompt-submit` when it starts with an option or is empty
    (the launcher's original form), the unknown word itself otherwise."""
    return argv[0] if argv and not argv[0].startswith("-") else "user-prompt-submit"


def parse_args(argv: Sequence[str]) -> dict[str, str]:
    options: dict[str, str] = {}
    args = list(argv)
    if args and args[0] in ROUTES:
        args.pop(0)
    while args:
        flag = args.pop(0)
        if flag in ("--url", "--namespace") and args:
            options[flag[2:]] = args.pop(0)
        else:
            raise HookFailure(f"bad arguments {list(argv)!r}; {USAGE}", "bad-arguments")
    return options


def read_event(stdin: IO[bytes]) -> dict[str, Any]:
    raw = stdin.read(MAX_EVENT_BYTES + 1)
    if len(raw) > MAX_EVENT_BYTES:
        raise HookFailure("event on stdin is larger than 4 MiB", "bad-event")
    try:
        event = json.loads(raw)
    except (UnicodeDecodeError, ValueError) as exc:
        raise HookFailure(f"stdin is not a JSON event: {exc}", "bad-event") from exc
    if not isinstance(event, dict):
        raise HookFailure("stdin is JSON but not an object", "bad-event")
    return event


def endpoint(
    base_url: str, namespace: str | None, route: str = HOOK_PATH
) -> tuple[str, str, int | None, str]:
    """(scheme, host, port, path+query) of the hook `route` under `base_url` (which may have a path)."""
    try:
        return route_target(base_url, route, namespace)
    except ValueError:
        raise HookFailure(f"{ENV_URL} must be an http(s) URL, got {base_url!r}", "bad-url") from None


def post_event(
    base_url: str,
    key: str,
    event: dict[str, Any],
    namespace: str | None,
    timeout: float,
    route: str = HOOK_PATH,
    answer_headers: dict[str, str] | None = None,
) -> Any:
    """The server's JSON answer to `event` ({} for an empty body); HookFailure names any failure."""
    scheme, host, port, path = endpoint(base_url, namespace, route)
    body = json.dumps(event).encode("utf-8")
    try:
        status, payload = http_post(
            scheme, host, port, path, api_headers(key), body, max(timeout, 0.001), answer_headers
        )
    except TimeoutError as exc:
        raise HookFailure(f"no answer from {base_url} within {timeout:.2f} s", "timeout") from exc
    except OSError as exc:
        raise HookFailure(f"cannot reach {base_url}: {exc}", "unreachable") from exc
    except InvalidResponse as exc:
        raise HookFailure(str(exc), "bad-answer") from exc
    if not 200 <= status < 300:
        preview = payload[:200].decode("utf-8", "replace")
        raise HookFailure(f"server answered {status}: {preview}", f"http-{status}")
    if not payload.strip():
        return {}
    try:
        return json.loads(payload)
    except ValueError as exc:
        raise HookFailure(f"answer is not JSON: {exc}", "bad-answer") from exc


class HookOutcome:
    """What one run did, for status.json: the server's outcome header ("injected:3" -> 3 memories),
    or the reason it gave up."""

    def __init__(self) -> None:
        self.outcome = "failed"
        self.namespace: str | None = None
        self.count = 0

    def answered(self, header: str | None, answer: Mapping[str, Any]) -> None:
        name, _, number = (header or ("injected" if answer else "empty")).partition(":")
        self.outcome = name
        self.count = int(number) if number.isdigit() else 0


def run(
    argv: Sequence[str],
    stdin: IO[bytes],
    env: Mapping[str, str],
    budget: float,
    started: float,
    notes: list[str] | None = None,
    outcome: HookOutcome | None = None,
) -> dict[str, Any] | None:
    """The answer to print, or None to print nothing; `notes` collects what the log should hear."""
    try:
        agent, argv = split_agent(argv)
    except UnknownAgent as exc:
        raise HookFailure(f"{exc}; {USAGE}", "bad-arguments") from exc
    sub = subcommand(argv)
    if sub not in ROUTES:
        raise HookFailure(f"bad arguments {list(argv)!r}; {USAGE}", "bad-arguments")
    options = parse_args(argv)
    event = normalised_event(agent, read_event(stdin))
    try:
        key = key_from_environment(env)
    except KeyFileError as exc:
        raise HookFailure(str(exc), "no-key") from exc
    url = options.get("url") or env.get(ENV_URL) or DEFAULT_URL
    namespace = options.get("namespace") or event_namespace(event, env, [] if notes is None else notes)
    if outcome is not None:
        outcome.namespace = namespace
    sent = {name: value for name, value in event.items() if name not in LOCAL_FIELDS}
    remaining = budget - (time.monotonic() - started)
    headers: dict[str, str] = {}
    answer = post_event(url, key, sent, namespace, remaining, hook_route(agent, sub), headers)
    if not isinstance(answer, dict):
        raise HookFailure("answer is JSON but not an object", "bad-answer")
    header = headers.get(OUTCOME_HEADER)
    if outcome is not None:
        outcome.answered(header, answer)
    why = LOGGED_OUTCOMES.get((header or "").partition(":")[0])
    if why and notes is not None:
        notes.append(f"{why} ({OUTCOME_HEADER}: {header})")
    return answer or None


def capture_main(argv: Sequence[str], stdin: IO[bytes] | None, env: Mapping[str, str]) -> int:
    """`capture` / `flush`: the capture hook's own flow (it fails open and logs by itself)."""
    try:
        from memoria_hook_client.capture_worker import main as capture_hook
    except Exception as exc:  # a broken install must not turn Stop into an error on screen
        write_log(hook_log_from_environment(env), f"capture hook unavailable: {type(exc).__name__}: {exc}")
        return 0
    try:
        capture_hook(argv, stdin or sys.stdin.buffer, sys.stdout, env)
    except Exception as exc:  # fail open, whatever happened
        write_log(hook_log_from_environment(env), f"capture: unexpected {type(exc).__name__}: {exc}")
    return 0


def _record(env: Mapping[str, str], sub: str, outcome: HookOutcome, agent: str | None) -> None:
    """The outcome for `memoria status` (also as `agent`'s own latest); best effort, it must never
    fail the hook."""
    what = STATUS_NAMES.get(sub)
    if what is None:
        return
    try:
        from memoria_hook_client.state import record

        tally = WITHOUT_CONTEXT.get(outcome.outcome) if what == "recall" else None
        record(env, what, outcome.outcome, outcome.namespace, outcome.count, tally=tally, agent=agent)
    except Exception:  # noqa: S110 - a state directory we cannot write is not the person's problem
        pass


def print_help(argv: Sequence[str], stdout: IO[str] | None) -> int:
    """Usage on stdout, exit 0: only a person types --help; Claude Code never passes it."""
    sub = subcommand(argv)
    text = HELP.get(sub) or USAGE + "\n\n" + "Subcommands: " + ", ".join(SUBCOMMANDS) + "\n"
    out = stdout or sys.stdout
    try:
        out.write(text)
        out.flush()
    except (OSError, ValueError):
        pass
    return 0


def main(
    argv: Sequence[str] | None = None,
    stdin: IO[bytes] | None = None,
    stdout: IO[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> int:
    """Always 0: Claude Code treats other exit codes as errors worth showing, and 2 blocks the prompt."""
    started = time.monotonic() - process_age()
    env = os.environ if env is None else env
    args = list(sys.argv[1:] if argv is None else argv)
    if wants_help(args):
        return print_help(args, stdout)
    try:
        agent, rest = split_agent(args)
        sub = subcommand(rest)
    except UnknownAgent:
        agent, rest, sub = None, args, subcommand(args)  # `run` (or the capture hook) logs the refusal
    if sub in CAPTURE_SUBCOMMANDS:
        return capture_main(rest if agent is None else [*rest, "--agent", agent], stdin, env)
    budget, warning = hook_budget(env)
    answer: dict[str, Any] | None = None
    reason: str | None = None
    notes: list[str] = []
    outcome = HookOutcome()
    try:
        with HookDeadline(budget - (time.monotonic() - started)):
            answer = run(args, stdin or sys.stdin.buffer, env, budget, started, notes, outcome)
    except BudgetSpent:
        reason = f"gave up after the {budget:.2f} s budget"
        outcome.outcome = "timeout"
    except HookFailure as exc:
        reason = str(exc)
        outcome.outcome = exc.outcome
    except Exception as exc:  # fail open, whatever happened
        reason = f"unexpected {type(exc).__name__}: {exc}"
    for line in (warning, *notes, reason):
        if line:
            write_log(hook_log_from_environment(env), line)
    if answer is not None:
        # Re-serialised so stdout is always one JSON object: Claude Code would inject any other
        # text as context verbatim.
        try:
            out = stdout or sys.stdout
            out.write(json.dumps(answer, ensure_ascii=False))
            out.flush()
        except (OSError, ValueError):
            pass
    _record(env, sub, outcome, agent)
    return 0


if __name__ == "__main__":
    sys.exit(main())
