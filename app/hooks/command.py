"""The command hook: forward a Claude Code `UserPromptSubmit` event from stdin to Memoria.

Claude Code spawns this once per prompt, so it and the modules it imports (`app.client.environment`,
`app.client.namespace`, `app.hooks.budget`, `app.hooks.http_post`, `app.hooks.hook_log`) load the
standard library only, and neither pathlib nor typing at run time; the `app`, `app.client` and
`app.hooks` packages are import-free. Start-up stays in tens of milliseconds on any Python 3.11. It
fails open: with no server, a hung server, a refused key or bad input it exits 0 with no output, so
a memory service that is down never gets in the way of typing a prompt; the reason goes to the hook
log.

This module is the flow only: arguments, event, key, namespace, one POST within the budget, the
answer. The namespace is worked out HERE, on the person's machine, from the event's `cwd`
(`app.client.namespace`: the `MEMORIA_CLIENT__NAMESPACE_MAP` mapping, the git root, the
`MEMORIA_CLIENT__DEFAULT_NAMESPACE` default) and sent as `?namespace=`; the server never resolves
a client's path, and the paths in the event (`cwd`, `transcript_path`) are not sent at all.
"""

from __future__ import annotations

import json
import os
import sys
import time
from urllib.parse import quote, urlsplit

from app.client.environment import (
    DEFAULT_URL,
    ENV_URL,
    KeyFileError,
    hook_log_from_environment,
    key_from_environment,
)
from app.client.namespace import default_from_environment, mapping_from_environment, namespace_for_cwd
from app.hooks.budget import BudgetSpent, Deadline, hook_budget, process_age
from app.hooks.hook_log import write_log
from app.hooks.http_post import InvalidResponse, http_post

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import IO, Any

HOOK_PATH = "/v1/hooks/claude-code/user-prompt-submit"
MAX_EVENT_BYTES = 4 * 1024 * 1024
#: Event fields naming paths on this machine: the server has no use for them, so they stay here.
LOCAL_FIELDS = ("cwd", "transcript_path")

USAGE = "usage: memoria-hook [user-prompt-submit] [--url URL] [--namespace NAME]"


class HookFailure(Exception):
    """A reason to give up quietly; the message goes to the hook log."""


def parse_args(argv: Sequence[str]) -> dict[str, str]:
    options: dict[str, str] = {}
    args = list(argv)
    if args and args[0] == "user-prompt-submit":
        args.pop(0)
    while args:
        flag = args.pop(0)
        if flag in ("--url", "--namespace") and args:
            options[flag[2:]] = args.pop(0)
        else:
            raise HookFailure(f"bad arguments {list(argv)!r}; {USAGE}")
    return options


def read_event(stdin: IO[bytes]) -> dict[str, Any]:
    raw = stdin.read(MAX_EVENT_BYTES + 1)
    if len(raw) > MAX_EVENT_BYTES:
        raise HookFailure("event on stdin is larger than 4 MiB")
    try:
        event = json.loads(raw)
    except (UnicodeDecodeError, ValueError) as exc:
        raise HookFailure(f"stdin is not a JSON event: {exc}") from exc
    if not isinstance(event, dict):
        raise HookFailure("stdin is JSON but not an object")
    return event


def endpoint(base_url: str, namespace: str | None) -> tuple[str, str, int | None, str]:
    """(scheme, host, port, path+query) of the hook endpoint under `base_url` (which may have a path)."""
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise HookFailure(f"{ENV_URL} must be an http(s) URL, got {base_url!r}")
    path = parts.path.rstrip("/") + HOOK_PATH
    if namespace:
        path += "?namespace=" + quote(namespace, safe="")
    return parts.scheme, parts.hostname, parts.port, path


def event_namespace(event: Mapping[str, Any], env: Mapping[str, str], notes: list[str]) -> str | None:
    """The namespace of the event's `cwd` on this machine (None: the server's default); a bad
    `MEMORIA_CLIENT__NAMESPACE_MAP` is noted and skipped, so the repository's namespace still works."""
    try:
        mapping = mapping_from_environment(env)
    except ValueError as exc:
        notes.append(str(exc))
        mapping = {}
    cwd = event.get("cwd")
    return namespace_for_cwd(cwd if isinstance(cwd, str) else None, mapping, default_from_environment(env))


def post_event(base_url: str, key: str, event: dict[str, Any], namespace: str | None, timeout: float) -> Any:
    """The server's JSON answer to `event` ({} for an empty body); HookFailure names any failure."""
    scheme, host, port, path = endpoint(base_url, namespace)
    body = json.dumps(event).encode("utf-8")
    headers = {
        "Authorization": f"Bearer {key}",
        "Content-Type": "application/json",
        "Accept": "application/json",
        "User-Agent": "memoria-hook",
    }
    try:
        status, payload = http_post(scheme, host, port, path, headers, body, max(timeout, 0.001))
    except TimeoutError as exc:
        raise HookFailure(f"no answer from {base_url} within {timeout:.2f} s") from exc
    except OSError as exc:
        raise HookFailure(f"cannot reach {base_url}: {exc}") from exc
    except InvalidResponse as exc:
        raise HookFailure(str(exc)) from exc
    if not 200 <= status < 300:
        raise HookFailure(f"server answered {status}: {payload[:200].decode('utf-8', 'replace')}")
    if not payload.strip():
        return {}
    try:
        return json.loads(payload)
    except ValueError as exc:
        raise HookFailure(f"answer is not JSON: {exc}") from exc


def run(
    argv: Sequence[str],
    stdin: IO[bytes],
    env: Mapping[str, str],
    budget: float,
    started: float,
    notes: list[str] | None = None,
) -> dict[str, Any] | None:
    """The answer to print, or None to print nothing; `notes` collects what the log should hear."""
    options = parse_args(argv)
    event = read_event(stdin)
    try:
        key = key_from_environment(env)
    except KeyFileError as exc:
        raise HookFailure(str(exc)) from exc
    url = options.get("url") or env.get(ENV_URL) or DEFAULT_URL
    namespace = options.get("namespace") or event_namespace(event, env, [] if notes is None else notes)
    sent = {name: value for name, value in event.items() if name not in LOCAL_FIELDS}
    remaining = budget - (time.monotonic() - started)
    answer = post_event(url, key, sent, namespace, remaining)
    if not isinstance(answer, dict):
        raise HookFailure("answer is JSON but not an object")
    return answer or None


def main(
    argv: Sequence[str] | None = None,
    stdin: IO[bytes] | None = None,
    stdout: IO[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> int:
    """Always 0: Claude Code treats other exit codes as errors worth showing, and 2 blocks the prompt."""
    started = time.monotonic() - process_age()
    env = os.environ if env is None else env
    budget, warning = hook_budget(env)
    answer: dict[str, Any] | None = None
    reason: str | None = None
    notes: list[str] = []
    try:
        with Deadline(budget - (time.monotonic() - started)):
            answer = run(
                sys.argv[1:] if argv is None else argv, stdin or sys.stdin.buffer, env, budget, started, notes
            )
    except BudgetSpent:
        reason = f"gave up after the {budget:.2f} s budget"
    except HookFailure as exc:
        reason = str(exc)
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
