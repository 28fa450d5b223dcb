"""The command hook: forward a Claude Code `UserPromptSubmit` event from stdin to Memoria.

Claude Code spawns this once per prompt, so it imports the standard library only (`app` and
`app.hooks` are import-free packages): start-up stays in tens of milliseconds and it runs on any
Python 3.11. It fails open: with no server, a hung server, a refused key or bad input it exits 0
with no output, so a memory service that is down never gets in the way of typing a prompt. The
reason goes to a small, size-capped log file instead, because a hook that silently does nothing is
otherwise impossible to debug.

The environment variables are the `MEMORIA_CLIENT__*` names of `app.settings.ClientSettings`, so
the server (which rejects unknown `MEMORIA_*` variables) can share the shell's environment.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import FrameType
from urllib.parse import quote, urlsplit

# pathlib and typing are left out on purpose: importing them took `python -S` from 48 to 64 ms here.
# Paths are plain strings; the annotations below are never evaluated at run time.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any

HOOK_PATH = "/v1/hooks/claude-code/user-prompt-submit"
DEFAULT_URL = "http://127.0.0.1:8080"
DEFAULT_BUDGET_S = 1.5
LOG_CAP_BYTES = 64 * 1024
MAX_EVENT_BYTES = 4 * 1024 * 1024
MAX_ANSWER_BYTES = 1024 * 1024

ENV_URL = "MEMORIA_CLIENT__URL"
ENV_API_KEY = "MEMORIA_CLIENT__API_KEY"
ENV_KEY_FILE = "MEMORIA_CLIENT__KEY_FILE"
ENV_BUDGET = "MEMORIA_CLIENT__HOOK_BUDGET_S"
ENV_LOG = "MEMORIA_CLIENT__HOOK_LOG"

USAGE = "usage: memoria-hook [user-prompt-submit] [--url URL] [--namespace NAME]"


class HookFailure(Exception):
    """A reason to give up quietly; the message goes to the hook log."""


class KeyFileError(HookFailure):
    pass


class _BudgetSpent(BaseException):
    """Raised by the timer signal; a BaseException so no `except Exception` on the way swallows it."""


def _xdg(variable: str, fallback: str) -> str:
    value = os.environ.get(variable)
    return value if value and os.path.isabs(value) else os.path.join(os.path.expanduser("~"), fallback)


def default_key_file() -> str:
    """`$XDG_CONFIG_HOME/memoria/key`, else `~/.config/memoria/key` (the same on every OS, on purpose)."""
    return os.path.join(_xdg("XDG_CONFIG_HOME", ".config"), "memoria", "key")


def default_hook_log() -> str:
    return os.path.join(_xdg("XDG_CACHE_HOME", ".cache"), "memoria", "hook.log")


def read_key_file(path: str | os.PathLike[str]) -> str:
    """The key stored in `path`, refused when other users could read it (as ssh does with keys)."""
    try:
        info = os.stat(path)
        if os.name == "posix" and info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise KeyFileError(f"key file {path} is readable by other users; run `chmod 600 {path}`")
        with open(path, encoding="utf-8") as file:
            key = file.read().strip()
    except FileNotFoundError as exc:
        raise KeyFileError(f"no API key: set {ENV_API_KEY} or store one in {path}") from exc
    except OSError as exc:
        raise KeyFileError(f"cannot read key file {path}: {exc.strerror or exc}") from exc
    if not key:
        raise KeyFileError(f"key file {path} is empty")
    return key


def resolve_key(env: Mapping[str, str]) -> str:
    key = env.get(ENV_API_KEY, "").strip()
    if key:
        return key
    return read_key_file(
        os.path.expanduser(env[ENV_KEY_FILE]) if env.get(ENV_KEY_FILE) else default_key_file()
    )


def write_log(path: str | os.PathLike[str], reason: str) -> None:
    """Append one line; past the cap the old log moves to `<name>.1`, so it never grows unbounded."""
    path = os.fspath(path)
    try:
        os.makedirs(os.path.dirname(path) or ".", mode=0o700, exist_ok=True)
        try:
            if os.stat(path).st_size > LOG_CAP_BYTES:
                os.replace(path, path + ".1")
        except FileNotFoundError:
            pass
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        with open(path, "a", encoding="utf-8") as log:
            log.write(f"{stamp} {reason[:500]}\n")
    except OSError:
        pass  # a log we cannot write must not turn a quiet failure into a loud one


@contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    """Hard wall-clock limit: socket timeouts alone restart on every byte a slow server trickles."""
    armed = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not armed:
        yield
        return

    def expire(_signum: int, _frame: FrameType | None) -> None:
        raise _BudgetSpent

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.001))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


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


def post_event(base_url: str, key: str, event: dict[str, Any], namespace: str | None, timeout: float) -> Any:
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
    if not 200 <= status < 300:
        raise HookFailure(f"server answered {status}: {payload[:200].decode('utf-8', 'replace')}")
    if not payload.strip():
        return {}
    try:
        return json.loads(payload)
    except ValueError as exc:
        raise HookFailure(f"answer is not JSON: {exc}") from exc


def http_post(
    scheme: str,
    host: str,
    port: int | None,
    path: str,
    headers: Mapping[str, str],
    body: bytes,
    timeout: float,
) -> tuple[int, bytes]:
    """One HTTP/1.1 POST on its own connection; (status, body).

    Written on `socket` because `http.client` imports the email package and `ssl`: 37 of the ~80 ms
    the hook process spent importing (`python -X importtime`). `ssl` loads only for https.
    """
    import socket

    default_port = 443 if scheme == "https" else 80
    sock = socket.create_connection((host, port or default_port), timeout=timeout)
    try:
        if scheme == "https":
            import ssl

            sock = ssl.create_default_context().wrap_socket(sock, server_hostname=host)
        authority = f"[{host}]" if ":" in host else host
        if port and port != default_port:
            authority += f":{port}"
        lines = [
            f"POST {path} HTTP/1.1",
            f"Host: {authority}",
            f"Content-Length: {len(body)}",
            "Connection: close",
        ]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
        return _read_response(sock)
    finally:
        sock.close()


def _read_response(sock: Any) -> tuple[int, bytes]:
    """Status and body of the answer on `sock`: Content-Length, chunked, or read to the close."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk or len(data) > 64 * 1024:
            raise HookFailure("the server's answer has no complete HTTP header")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    version, _, rest_of_line = status_line.partition(" ")
    code = rest_of_line[:3]
    if not version.startswith("HTTP/") or not code.isdigit():
        raise HookFailure(f"not an HTTP answer: {status_line[:80]!r}")
    status = int(code)
    fields = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip()
    length = fields.get("content-length")
    if length is not None and length.isdigit() and int(length) > MAX_ANSWER_BYTES:
        raise HookFailure("answer is larger than 1 MiB")
    while length is None or len(rest) < int(length):
        if len(rest) > MAX_ANSWER_BYTES + 64 * 1024:
            raise HookFailure("answer is larger than 1 MiB")
        chunk = sock.recv(65536)
        if not chunk:
            if length is not None:
                raise HookFailure(f"answer cut short at {len(rest)} of {length} bytes")
            break
        rest += chunk
    if "chunked" in fields.get("transfer-encoding", "").lower():
        rest = _dechunk(rest)
    elif length is not None:
        rest = rest[: int(length)]
    if len(rest) > MAX_ANSWER_BYTES:
        raise HookFailure("answer is larger than 1 MiB")
    return status, rest


def _dechunk(data: bytes) -> bytes:
    body = b""
    while True:
        size_line, sep, data = data.partition(b"\r\n")
        try:
            size = int(size_line.split(b";", 1)[0], 16)
        except ValueError:
            raise HookFailure("malformed chunked answer") from None
        if not sep or size == 0:
            return body
        if len(data) < size:
            raise HookFailure("chunked answer cut short")
        body, data = body + data[:size], data[size + 2 :]


def run(
    argv: Sequence[str], stdin: IO[bytes], env: Mapping[str, str], budget: float, started: float
) -> dict[str, Any] | None:
    """The answer to print, or None to print nothing."""
    options = parse_args(argv)
    event = read_event(stdin)
    key = resolve_key(env)
    url = options.get("url") or env.get(ENV_URL) or DEFAULT_URL
    remaining = budget - (time.monotonic() - started)
    answer = post_event(url, key, event, options.get("namespace"), remaining)
    if not isinstance(answer, dict):
        raise HookFailure("answer is JSON but not an object")
    return answer or None


def process_age() -> float:
    """Seconds since this process started (Linux; 0 elsewhere), so the budget runs from the spawn.

    Matters for `memoria hook user-prompt-submit`, whose imports alone take a good part of a second.
    """
    try:
        with open("/proc/self/stat", encoding="ascii") as stat_file:
            start_ticks = int(stat_file.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime", encoding="ascii") as uptime_file:
            uptime = float(uptime_file.read().split()[0])
        return max(0.0, uptime - start_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0


def _budget(env: Mapping[str, str]) -> tuple[float, str | None]:
    raw = env.get(ENV_BUDGET)
    if not raw:
        return DEFAULT_BUDGET_S, None
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 < value <= 60:
        return DEFAULT_BUDGET_S, f"ignoring {ENV_BUDGET}={raw!r} (want seconds in (0, 60])"
    return value, None


def main(
    argv: Sequence[str] | None = None,
    stdin: IO[bytes] | None = None,
    stdout: IO[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> int:
    """Always 0: Claude Code treats other exit codes as errors worth showing, and 2 blocks the prompt."""
    started = time.monotonic() - process_age()
    env = os.environ if env is None else env
    budget, warning = _budget(env)
    answer: dict[str, Any] | None = None
    reason: str | None = None
    try:
        with _deadline(budget - (time.monotonic() - started)):
            answer = run(
                sys.argv[1:] if argv is None else argv, stdin or sys.stdin.buffer, env, budget, started
            )
    except _BudgetSpent:
        reason = f"gave up after the {budget:.2f} s budget"
    except HookFailure as exc:
        reason = str(exc)
    except Exception as exc:  # fail open, whatever happened
        reason = f"unexpected {type(exc).__name__}: {exc}"
    log = os.path.expanduser(env[ENV_LOG]) if env.get(ENV_LOG) else default_hook_log()
    for line in (warning, reason):
        if line:
            write_log(log, line)
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
