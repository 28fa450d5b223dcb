"""The capture hook's hand-off (`memoria_hook_client.handoff`): the agent waits for this process,
so it starts the worker with the event's bytes and ends without parsing anything, and it keeps
none of the agent's pipes open in the worker. When it cannot hand off, the hook captures itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memoria_hook_client import handoff, state
from tests import test_capture_hook
from tests.test_capture_hook import SCRIPT, SID, THREE_TURNS, Session
from tests.test_spool import Stub

CLIENT_ROOT = str(SCRIPT.parents[1])
#: The capture hook tests' fixtures: a capture stub server and a session in a git project.
stub = test_capture_hook.stub
session = test_capture_hook.session


def launcher_env(session: Session, **extra: str) -> dict[str, str]:
    """The session's client settings as a person's machine has them: the worker, not inline."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORIA_")}
    env |= {k: v for k, v in session.env.items() if k != "MEMORIA_CLIENT__CAPTURE_FLUSH"}
    return env | extra


def wait_for(predicate: object, limit_s: float = 30.0) -> bool:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if callable(predicate) and predicate():
            return True
        time.sleep(0.05)
    return False


def test_the_hook_hands_the_event_off_without_loading_json_re_or_subprocess(
    session: Session, stub: Stub
) -> None:
    session.append(THREE_TURNS)
    code = (
        f"import sys; sys.path.insert(0, {CLIENT_ROOT!r}); "
        "from memoria_hook_client.handoff import main; code = main(['capture']); "
        "sys.stderr.write(' '.join(sorted(sys.modules))); sys.exit(code)"
    )
    done = subprocess.run(
        [sys.executable, "-S", "-c", code],
        input=session.event("Stop"),
        capture_output=True,
        env=launcher_env(session),
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, b"")
    loaded = set(done.stderr.decode().split())
    assert "memoria_hook_client.handoff" in loaded
    assert loaded & {"json", "re", "enum", "subprocess", "memoria_hook_client.command"} == set()
    # ... and the worker it started parsed the event, spooled and delivered the three turns
    assert wait_for(lambda: sorted(turn for _, turn in stub.kept) == [0, 1, 2])


def test_capture_off_in_the_environment_is_recorded_by_the_hook_before_it_ends(session: Session) -> None:
    session.append(THREE_TURNS)
    done = subprocess.run(
        [sys.executable, "-S", str(SCRIPT), "capture"],
        input=session.event("Stop"),
        capture_output=True,
        env=launcher_env(session, MEMORIA_CLIENT__CAPTURE="off"),
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert state.read_status(session.env)["capture"]["outcome"] == "off"


def test_a_project_marker_turns_capture_off_in_the_worker(session: Session, stub: Stub) -> None:
    session.append(THREE_TURNS)
    (session.repo / ".memoria-no-capture").write_text("")
    done = subprocess.run(
        [sys.executable, "-S", str(SCRIPT), "--agent", "claude-code", "capture"],
        input=session.event("Stop"),
        capture_output=True,
        env=launcher_env(session),
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert wait_for(lambda: state.read_status(session.env).get("capture", {}).get("outcome") == "off")
    assert stub.requests == []


def test_a_worker_that_cannot_start_leaves_the_capture_to_the_hook(
    session: Session, stub: Stub, monkeypatch: pytest.MonkeyPatch
) -> None:
    session.append(THREE_TURNS)
    monkeypatch.setattr(handoff, "hook_command", lambda args: ["/nonexistent/python", *args])
    env = {k: v for k, v in session.env.items() if k != "MEMORIA_CLIENT__CAPTURE_FLUSH"}
    assert session.hook("Stop", env=env) == ""
    assert stub.turns == [0, 1, 2]
    assert state.read_status(session.env)["capture"]["count"] == 3


def test_the_detached_process_holds_none_of_the_callers_pipes(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    os.set_inheritable(write_end, True)  # as an agent's pipe may reach its hook
    try:
        handoff.start_detached(
            [sys.executable, "-S", "-c", "import time; time.sleep(20)"], dict(os.environ), b"{}"
        )
        os.close(write_end)
        write_end = -1
        os.set_blocking(read_end, False)
        # the write end's only other holder would be the detached sleeper: EOF means it has none
        deadline = time.monotonic() + 5
        eof = False
        while time.monotonic() < deadline and not eof:
            try:
                eof = os.read(read_end, 1) == b""
            except BlockingIOError:
                time.sleep(0.02)
        assert eof
    finally:
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)


@pytest.mark.parametrize(
    ("argv", "options"),
    [
        (["capture"], []),
        (["--agent", "gemini", "capture"], ["--agent", "gemini"]),
        (
            ["capture", "--agent=codex", "--url", "http://127.0.0.1:1"],
            ["--agent", "codex", "--url", "http://127.0.0.1:1"],
        ),
        (["capture", "--namespace", "repo:x"], ["--namespace", "repo:x"]),
        (["capture", "--worker"], None),
        (["flush"], None),
        (["user-prompt-submit"], None),
        (["capture", "--agent"], None),
        (["capture", "capture"], None),
        ([], None),
    ],
)
def test_only_a_capture_hook_is_handed_off_with_its_options(
    argv: list[str], options: list[str] | None
) -> None:
    assert handoff.capture_hook_options(argv) == options


def test_an_event_over_the_limit_is_not_handed_off(session: Session) -> None:
    env = launcher_env(session)
    assert handoff.hand_off(b" " * (handoff.MAX_EVENT_BYTES + 1), [], env) is False
    inline = env | {"MEMORIA_CLIENT__CAPTURE_FLUSH": "inline"}
    assert handoff.hand_off(json.dumps({"session_id": SID}).encode(), [], inline) is False
