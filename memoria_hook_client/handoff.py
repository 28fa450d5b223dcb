"""The capture hook's hand-off: the event goes to a detached worker before `json` is even loaded.

The agents wait for their capture hooks (Claude Code for Stop and SessionEnd, Gemini CLI for
AfterAgent and SessionEnd, ...), and a headless session runs two of them, so their start-up is
time every session pays. The hook only hands the event to `memoria-hook capture --worker`, which
parses it, checks the project's no-capture marker, reads the transcript, spools and flushes
(`memoria_hook_client.capture_worker`): all of that is the worker's. So the hook does not parse
the event at all. It reads stdin, starts the worker in its own session with the event's bytes on
its stdin (`os.posix_spawn`), and exits, importing only `os` and `sys`, which every interpreter
has loaded before the first line runs: `json` (which loads `re` and `enum`) and `subprocess` were
most of the hook's own time.

The hook's own process does the capture itself instead (`capture_worker.main`) when capture is
off in the environment (so `memoria status` shows "off" at once), when
`MEMORIA_CLIENT__CAPTURE_FLUSH=inline` asks for it, when the event is over the size limit, and when
the worker cannot be started: then nothing is lost, only slower.

`main` is the launcher's entry (`scripts/memoria-hook`, `memoria hook <sub>`): a capture hook is
handed off here, every other subcommand goes to `memoria_hook_client.command`.
Standard library only (the client's rule), and nothing beyond `os` and `sys` at import.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

ENV_CAPTURE = "MEMORIA_CLIENT__CAPTURE"
ENV_CAPTURE_FLUSH = "MEMORIA_CLIENT__CAPTURE_FLUSH"
#: Values of `MEMORIA_CLIENT__CAPTURE` that turn capture off.
OFF_VALUES = ("off", "0", "false", "no")
MAX_EVENT_BYTES = 4 * 1024 * 1024
#: Descriptors checked when /proc cannot list the open ones (other systems).
FALLBACK_FD_LIMIT = 256


def capture_off_by_environment(env: Mapping[str, str]) -> bool:
    return env.get(ENV_CAPTURE, "").strip().lower() in OFF_VALUES


def capture_inline(env: Mapping[str, str]) -> bool:
    return env.get(ENV_CAPTURE_FLUSH, "").strip().lower() == "inline"


def hook_script() -> str:
    """`scripts/memoria-hook` of this checkout (the launcher that works under `python -S`)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.path.join(root, "scripts", "memoria-hook")


def hook_command(args: Sequence[str]) -> list[str]:
    """The argv of a detached `memoria-hook <args>`: the launcher under `python -S` when there is
    one, else the same code through `-c` with this checkout on `sys.path`."""
    script = hook_script()
    if os.path.isfile(script):
        return [sys.executable, "-S", script, *args]
    root = os.path.dirname(os.path.dirname(script))
    code = (
        f"import sys; sys.path.insert(0, {root!r}); "
        f"from memoria_hook_client.handoff import main; sys.exit(main({list(args)!r}))"
    )
    return [sys.executable, "-S", "-c", code]


def _not_inherited() -> None:
    """Mark every descriptor above stderr close-on-exec, so a detached process holds none of the
    agent's pipes open (an agent waits for its hook's pipes to close)."""
    try:
        fds = [int(name) for name in os.listdir("/proc/self/fd")]
    except (OSError, ValueError):
        fds = list(range(3, FALLBACK_FD_LIMIT))
    for fd in fds:
        if fd > 2:
            try:
                os.set_inheritable(fd, False)
            except OSError:  # not open: the listing's own descriptor, or a gap in the fallback range
                continue  # (contextlib costs start-up)


def start_detached(argv: Sequence[str], env: Mapping[str, str], stdin: bytes | None = None) -> None:
    """Start `argv` in its own session with no stdio but `stdin` (written, then closed), and do not
    wait for it: the hook exits now, the process goes on after the agent's session ends. OSError
    when it cannot be started."""
    _not_inherited()
    read_end, write_end = os.pipe() if stdin is not None else (-1, -1)
    actions: list[tuple[object, ...]] = [
        (os.POSIX_SPAWN_DUP2, read_end, 0)
        if stdin is not None
        else (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
    ]
    try:
        os.posix_spawn(argv[0], list(argv), dict(env), file_actions=actions, setsid=True)
    except BaseException:
        if stdin is not None:
            os.close(write_end)
        raise
    finally:
        if stdin is not None:
            os.close(read_end)
    if stdin is None:
        return
    try:
        view = memoryview(stdin)
        while view:  # an event over the pipe's buffer waits for the worker to read it
            view = view[os.write(write_end, view) :]
    except OSError:
        pass  # the worker died before reading: the next event reads the transcript again
    finally:
        os.close(write_end)


def read_stdin(fd: int = 0, limit: int = MAX_EVENT_BYTES + 1) -> bytes:
    """At most `limit` bytes of `fd`, to its end."""
    chunks: list[bytes] = []
    size = 0
    while size < limit:
        chunk = os.read(fd, min(65536, limit - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def hand_off(event: bytes, worker_options: Sequence[str], env: Mapping[str, str]) -> bool:
    """Start `memoria-hook capture --worker WORKER_OPTIONS` with `event` on its stdin; False (and
    nothing started) when the hook's own process must capture (see the module's docstring)."""
    if capture_inline(env) or capture_off_by_environment(env) or len(event) > MAX_EVENT_BYTES:
        return False
    try:
        start_detached(hook_command(["capture", "--worker", *worker_options]), env, event)
    except (OSError, NotImplementedError):
        return False
    return True


def capture_hook_options(argv: Sequence[str]) -> list[str] | None:
    """The worker's options when `argv` is a capture hook (`capture` and `--agent`, `--url` or
    `--namespace` with their values, in any order), None for anything else (`capture_worker`
    then says what was wrong)."""
    options: list[str] = []
    seen_capture = False
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg == "capture" and not seen_capture:
            seen_capture = True
        elif arg in ("--agent", "--url", "--namespace") and args:
            options += [arg, args.pop(0)]
        elif arg.startswith("--agent="):
            options += ["--agent", arg[len("--agent=") :]]
        else:
            return None
    return options if seen_capture else None


def main(argv: Sequence[str] | None = None) -> int:
    """The launcher: a capture hook handed off without parsing its event, anything else (and a
    capture this process must do itself) to `memoria_hook_client.command`. Always 0."""
    args = list(sys.argv[1:] if argv is None else argv)
    options = capture_hook_options(args)
    event: bytes | None = None
    if options is not None and not capture_inline(os.environ) and not capture_off_by_environment(os.environ):
        try:
            event = read_stdin()
        except OSError:
            event = b""
        if hand_off(event, options, os.environ):
            return 0
    from memoria_hook_client.command import main as command_main

    if event is None:
        return command_main(args)
    import io

    return command_main(args, io.BytesIO(event))
