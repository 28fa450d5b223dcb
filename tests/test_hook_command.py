"""The command hook process (scripts/memoria-hook, `memoria hook user-prompt-submit`) against real servers.

A real `memoria serve`, a port nobody listens on, and a socket that accepts and never answers: in
every case the hook exits 0, prints either one JSON answer or nothing, and stays within its budget.

Timing is checked from the outside, around a process spawn, so the bounds carry HEADROOM_S: on a
loaded 2-core CI machine a spawn, start-up and exit can take half a second and more. What the tests
pin down is behaviour that does not depend on the machine's speed: the hook log names the budget
that ran out, and a server that must not be asked is checked for a connection.
"""

from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.core.net import free_port
from app.hooks.install import command_hook
from tests.test_e2e_serve import MEMORIA, Server

pytestmark = pytest.mark.e2e

REPO_ROOT = Path(__file__).resolve().parents[1]
SCRIPT = REPO_ROOT / "scripts" / "memoria-hook"
BUDGET_S = 1.5
#: Beyond the budget: spawn, interpreter exit and the parent's wake-up on a busy machine. A hook that
#: ignored its budget against a server that never answers would run into the 30 s process timeout.
HEADROOM_S = 1.0


class Memoria:
    """A running `memoria serve` with one user, their key and a repository namespace with memories."""

    def __init__(self, server: Server, key: str, repo: Path) -> None:
        self.server = server
        self.url = server.base
        self.key = key
        self.repo = repo


@contextmanager
def start_memoria(base: Path, **settings: str) -> Iterator[Memoria]:
    """`memoria serve` on a fresh data dir, a key for user `dev`, two memories in `repo:shop-api`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORIA_")}
    env |= {
        "MEMORIA_DATABASE__DATA_DIR": str(base / "pgdata"),
        "MEMORIA_SERVER__PORT": str(free_port()),
        "HF_HUB_OFFLINE": "1",
        **settings,
    }
    created = subprocess.run(
        [MEMORIA, "keys", "create", "--user", "dev", "--create-user"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    server = Server(env)
    try:
        server.wait_ready()
        repo = base / "shop-api"
        (repo / ".git").mkdir(parents=True)
        key = created.stdout.strip()
        headers = {"Authorization": f"Bearer {key}"}
        stored = httpx.post(
            f"{server.base}/v1/memories",
            json=[{**m, "namespace": "repo:shop-api"} for m in MEMORIES],
            headers=headers,
        )
        assert stored.status_code == 201, stored.text
        # the first query embedding warms the model up; not what these tests measure
        warm = {"query": "warm up the embedder", "namespace": "repo:shop-api"}
        httpx.post(f"{server.base}/v1/recall", json=warm, headers=headers, timeout=60)
        yield Memoria(server, key, repo)
    finally:
        server.stop()


MEMORIES = [
    {"content": "We deploy with Terraform; never run kubectl apply by hand.", "category": "decision"},
    {"content": "Use pnpm, not npm, for the frontend workspace.", "category": "preference"},
]


@pytest.fixture(scope="module")
def memoria(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memoria]:
    # these tests are about the process, not the server's recall budget (test_hook_endpoint.py) nor
    # which prompts its relevance floor leaves alone (test_hook_floor.py): `bench hook` asks of topics
    # these two memories do not hold
    hooks = {"MEMORIA_HOOKS__BUDGET_MS": "5000", "MEMORIA_HOOKS__MIN_SIMILARITY": "-1"}
    with start_memoria(tmp_path_factory.mktemp("hook-e2e"), **hooks) as running:
        yield running


class HangingServer:
    """A listening socket nobody answers on: the kernel accepts connections into the backlog."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"

    def was_asked(self) -> bool:
        """Whether anyone connected (a closed connection still waits in the backlog to be accepted)."""
        self._sock.setblocking(False)
        try:
            conn, _ = self._sock.accept()
        except BlockingIOError:
            return False
        conn.close()
        return True


@pytest.fixture
def hanging() -> Iterator[HangingServer]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield HangingServer(sock)


@pytest.fixture
def hanging_url(hanging: HangingServer) -> str:
    return hanging.url


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path


def event(prompt: str, cwd: Path) -> bytes:
    """A prompt of a new session each time: the server's per-session ledger would leave out of a
    second prompt of one session what the first was given, and these tests compare answers."""
    return json.dumps(
        {
            "session_id": uuid.uuid4().hex,
            "transcript_path": "/tmp/t.jsonl",
            "cwd": str(cwd),
            "hook_event_name": "UserPromptSubmit",
            "prompt": prompt,
        }
    ).encode()


class Run:
    def __init__(self, done: subprocess.CompletedProcess[bytes], elapsed: float, log: Path) -> None:
        self.returncode = done.returncode
        self.stdout = done.stdout.decode()
        self.stderr = done.stderr.decode()
        self.elapsed = elapsed
        self.log = log.read_text() if log.exists() else ""

    def answer(self) -> Any:
        return json.loads(self.stdout)


def run_hook(
    home: Path,
    stdin: bytes,
    *,
    url: str,
    key: str | None = "mem_wrong",
    argv: list[str] | None = None,
    extra_env: dict[str, str] | None = None,
) -> Run:
    log = home / "hook.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORIA_")}
    env |= {"HOME": str(home), "MEMORIA_CLIENT__URL": url, "MEMORIA_CLIENT__HOOK_LOG": str(log)}
    if key is not None:
        env["MEMORIA_CLIENT__API_KEY"] = key
    env |= extra_env or {}
    command = argv or [sys.executable, "-S", str(SCRIPT), "user-prompt-submit"]
    start = time.monotonic()
    done = subprocess.run(command, input=stdin, capture_output=True, env=env, timeout=30, check=False)
    return Run(done, time.monotonic() - start, log)


def assert_silent(run: Run, within: float = BUDGET_S + HEADROOM_S) -> None:
    assert run.returncode == 0, run.stderr
    assert run.stdout == ""
    assert run.elapsed < within, f"took {run.elapsed:.2f} s"


def test_running_server_memories_come_back_as_additional_context(memoria: Memoria, home: Path) -> None:
    run = run_hook(
        home,
        event("How do we deploy the service to production?", memoria.repo),
        url=memoria.url,
        key=memoria.key,
    )
    assert run.returncode == 0, run.log
    output = run.answer()["hookSpecificOutput"]
    assert output["hookEventName"] == "UserPromptSubmit"
    assert "[decision] We deploy with Terraform" in output["additionalContext"]
    assert run.log == ""


def test_the_memoria_command_gives_the_same_answer(memoria: Memoria, home: Path) -> None:
    prompt = "How do we deploy the service to production?"
    script = run_hook(home, event(prompt, memoria.repo), url=memoria.url, key=memoria.key)
    # `memoria` itself takes most of a second to import, so it gets room here; the installed
    # command is the script. Each runs as a session of its own (`event`).
    command = run_hook(
        home,
        event(prompt, memoria.repo),
        url=memoria.url,
        key=memoria.key,
        argv=[MEMORIA, "hook", "user-prompt-submit"],
        extra_env={"MEMORIA_CLIENT__HOOK_BUDGET_S": "10"},
    )
    assert command.returncode == 0, command.log
    assert command.answer() == script.answer()


def test_key_from_a_private_key_file_is_used_and_a_shared_one_refused(memoria: Memoria, home: Path) -> None:
    key_file = home / ".config" / "memoria" / "key"
    key_file.parent.mkdir(parents=True)
    key_file.write_text(memoria.key + "\n")
    payload = event("How do we deploy the service to production?", memoria.repo)
    key_file.chmod(0o644)
    refused = run_hook(home, payload, url=memoria.url, key=None)
    assert_silent(refused)
    assert "readable by other users" in refused.log
    key_file.chmod(0o600)
    used = run_hook(home, payload, url=memoria.url, key=None)
    assert "Terraform" in used.answer()["hookSpecificOutput"]["additionalContext"]


@pytest.mark.parametrize("prompt", ["/compact", "ok", '{"replicas": 3}'])
def test_prompts_the_server_skips_print_nothing(memoria: Memoria, home: Path, prompt: str) -> None:
    run = run_hook(home, event(prompt, memoria.repo), url=memoria.url, key=memoria.key)
    assert_silent(run)
    assert run.log == ""


def test_namespace_argument_overrides_the_repository(memoria: Memoria, home: Path) -> None:
    argv = [sys.executable, "-S", str(SCRIPT), "user-prompt-submit", "--namespace", "nowhere"]
    run = run_hook(
        home, event("How do we deploy?", memoria.repo), url=memoria.url, key=memoria.key, argv=argv
    )
    assert_silent(run)


def test_a_refused_key_fails_open_and_is_logged(memoria: Memoria, home: Path) -> None:
    """The endpoint answers a bad key with 200 `{}` (a 401 would be a hook error on screen) and
    names it in its outcome header, which the hook logs and records for `memoria status`."""
    run = run_hook(
        home, event("How do we deploy the service?", memoria.repo), url=memoria.url, extra_env=state_env(home)
    )
    assert_silent(run)
    assert "the server refused the API key" in run.log
    assert last_outcomes(home)["recall"]["outcome"] == "unauthorized"


def test_stopped_server_exits_quietly_within_budget(home: Path) -> None:
    run = run_hook(home, event("How do we deploy the service?", home), url=f"http://127.0.0.1:{free_port()}")
    assert_silent(run)
    assert "cannot reach" in run.log


def test_hanging_server_is_abandoned_at_the_budget(home: Path, hanging_url: str) -> None:
    run = run_hook(home, event("How do we deploy the service?", home), url=hanging_url)
    assert_silent(run)
    assert run.elapsed >= BUDGET_S - 0.1  # it did wait for the server, as long as it was allowed to
    assert "gave up after the 1.50 s budget" in run.log


def test_the_memoria_command_also_stops_at_the_budget(home: Path, hanging_url: str) -> None:
    """The budget counts from the spawn, so `memoria`'s slow imports come out of it, not on top."""
    run = run_hook(
        home,
        event("How do we deploy the service?", home),
        url=hanging_url,
        argv=[MEMORIA, "hook", "user-prompt-submit"],
    )
    assert_silent(run, within=max(BUDGET_S, import_seconds()) + HEADROOM_S)
    assert run.log  # why it stayed silent: the budget, or no time left to reach the server


def import_seconds() -> float:
    """How long `memoria --help` takes on this machine right now (mostly imports)."""
    start = time.monotonic()
    subprocess.run([MEMORIA, "--help"], capture_output=True, check=True, timeout=60)
    return time.monotonic() - start


def test_budget_is_configurable(home: Path, hanging_url: str) -> None:
    run = run_hook(
        home,
        event("How do we deploy the service?", home),
        url=hanging_url,
        extra_env={"MEMORIA_CLIENT__HOOK_BUDGET_S": "0.4"},
    )
    assert_silent(run, within=0.4 + HEADROOM_S)  # below the default budget's 1.5 s
    assert "gave up after the 0.40 s budget" in run.log


def test_stdin_that_never_closes_is_abandoned_at_the_budget(home: Path, hanging_url: str) -> None:
    log = home / "hook.log"
    env = {**os.environ, "HOME": str(home), "MEMORIA_CLIENT__HOOK_LOG": str(log)}
    env |= {"MEMORIA_CLIENT__URL": hanging_url, "MEMORIA_CLIENT__HOOK_BUDGET_S": "0.5"}
    start = time.monotonic()
    with subprocess.Popen(
        [sys.executable, "-S", str(SCRIPT)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(b'{"prompt": "half an ev')  # Claude Code never sends the rest nor closes stdin
        proc.stdin.flush()
        proc.wait(timeout=10)
        elapsed = time.monotonic() - start
        out = proc.stdout.read()
    assert proc.returncode == 0 and out == b""
    assert elapsed < 0.5 + HEADROOM_S
    assert "gave up after the 0.50 s budget" in log.read_text()


@pytest.mark.parametrize("stdin", [b"", b"not json", b'{"prompt": "unterminated', b"[1, 2]", b"\xff\xfe"])
def test_bad_event_on_stdin_exits_quietly_without_calling_the_server(
    home: Path, hanging: HangingServer, stdin: bytes
) -> None:
    run = run_hook(home, stdin, url=hanging.url)
    assert_silent(run, within=BUDGET_S)  # asking the hung server would have taken the whole budget
    assert "stdin" in run.log
    assert not hanging.was_asked()


@pytest.mark.parametrize(
    ("argv", "within"),
    [
        # asking the hung server would have taken the whole budget
        ([sys.executable, "-S", str(SCRIPT), "--frobnicate"], BUDGET_S),
        # `memoria` imports for a good second before it even parses; only a hang matters here
        ([MEMORIA, "hook", "user-prompt-submit", "--url"], 10.0),
    ],
    ids=["script", "memoria-command"],
)
def test_bad_arguments_fail_open(home: Path, hanging: HangingServer, argv: list[str], within: float) -> None:
    """Exit 2 would block the person's prompt, so even a bad command line exits 0 and is logged."""
    run = run_hook(home, event("How do we deploy?", home), url=hanging.url, argv=argv)
    assert_silent(run, within=within)
    assert "bad arguments" in run.log
    assert not hanging.was_asked()


def test_the_log_is_capped(home: Path) -> None:
    log = home / "hook.log"
    log.write_text("x" * 70_000 + "\n")
    run = run_hook(home, b"not json", url="http://127.0.0.1:1")
    assert_silent(run)
    assert (home / "hook.log.1").stat().st_size > 64 * 1024
    assert log.stat().st_size < 1000 and "stdin" in run.log


def test_the_script_loads_nothing_outside_the_standard_library(home: Path) -> None:
    run = run_hook(
        home,
        b"not json",
        url="http://127.0.0.1:1",
        argv=[sys.executable, "-S", "-X", "importtime", str(SCRIPT)],
    )
    imported = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in run.stderr.splitlines()}
    assert "memoria_hook_client" in imported
    assert "app" not in imported
    assert not imported & {"litestar", "pydantic", "httpx", "asyncpg", "click", "rich", "msgspec", "numpy"}
    # http.client (which pulls in the email package) and ssl were a third of the start-up
    assert not imported & {"http", "email", "ssl"}
    # pathlib (with fnmatch) and typing were another 15 ms of it
    assert not imported & {"pathlib", "typing"}


@contextmanager
def canned_server(answer: bytes, received: list[tuple[bytes, bytes]] | None = None) -> Iterator[str]:
    """Answers one request with exactly `answer` (raw HTTP bytes), then closes the connection; the
    request's (head, body) goes to `received`."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            request = b""
            while b"\r\n\r\n" not in request:
                request += conn.recv(65536)
            head, _, body = request.partition(b"\r\n\r\n")
            length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
            while len(body) < length:
                body += conn.recv(65536)
            if received is not None:
                received.append((head, body))
            conn.sendall(answer)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        thread.join(5)
        listener.close()


CONTEXT = {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "a memory"}}


def test_a_chunked_answer_is_read_whole(home: Path) -> None:
    payload = json.dumps(CONTEXT).encode()
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (payload[:10], payload[10:]))
    answer = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n"
    with canned_server(answer + chunked + b"0\r\n\r\n") as url:
        run = run_hook(home, event("how do we deploy", home), url=url)
    assert run.returncode == 0 and run.answer() == CONTEXT, run.log


@pytest.mark.parametrize(
    ("where", "env", "request_line"),
    [
        ("shop-api/src", {}, b"POST /v1/hooks/claude-code/user-prompt-submit?namespace=repo%3Ashop-api "),
        ("elsewhere", {}, b"POST /v1/hooks/claude-code/user-prompt-submit HTTP/1.1"),
        (
            "elsewhere",
            {"MEMORIA_CLIENT__DEFAULT_NAMESPACE": "scratch"},
            b"POST /v1/hooks/claude-code/user-prompt-submit?namespace=scratch ",
        ),
    ],
    ids=["in a repository", "nowhere: the server's default", "the client's default"],
)
def test_the_namespace_is_worked_out_here_and_local_paths_stay_here(
    home: Path, tmp_path: Path, where: str, env: dict[str, str], request_line: bytes
) -> None:
    """The server never resolves a client's path: the hook names the namespace of the session's
    directory on this machine, and the event's paths are not sent at all."""
    (tmp_path / "shop-api" / ".git").mkdir(parents=True)
    cwd = tmp_path / where
    cwd.mkdir(parents=True, exist_ok=True)
    received: list[tuple[bytes, bytes]] = []
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"
    with canned_server(answer, received) as url:
        run = run_hook(home, event("how do we deploy", cwd), url=url, extra_env=env)
    assert_silent(run)
    assert run.log == ""
    ((head, body),) = received
    assert head.startswith(request_line), head
    sent = json.loads(body)
    assert sent["prompt"] == "how do we deploy" and sent["hook_event_name"] == "UserPromptSubmit"
    assert "cwd" not in sent and "transcript_path" not in sent
    assert str(tmp_path).encode() not in head + body


def test_an_answer_cut_short_fails_open_and_is_logged(home: Path) -> None:
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n" + json.dumps(CONTEXT).encode()
    with canned_server(answer) as url:
        run = run_hook(home, event("how do we deploy", home), url=url)
    assert_silent(run)
    assert "cut short" in run.log


def test_an_answer_that_is_not_http_fails_open_and_is_logged(home: Path) -> None:
    with canned_server(b"SSH-2.0-OpenSSH_9.6\r\n\r\n") as url:
        run = run_hook(home, event("how do we deploy", home), url=url)
    assert_silent(run)
    assert "not an HTTP answer" in run.log


def test_bench_hook_reports_percentiles(memoria: Memoria, tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORIA_")}
    done = subprocess.run(
        [
            MEMORIA,
            "bench",
            "hook",
            "--url",
            memoria.url,
            "--key",
            memoria.key,
            "--cwd",
            str(memoria.repo),
            "--runs",
            "4",
            "--warmup",
            "1",
            "--json",
            str(out),
        ],
        env=env | {"COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    rows = {row["measure"]: row for row in json.loads(out.read_text())["rows"]}
    assert set(rows) == {"http endpoint", "command hook, server up", "command hook, server down"}
    assert rows["http endpoint"]["note"] == "injected 4"
    assert rows["command hook, server up"]["note"] == "injected 4"
    assert rows["command hook, server down"]["note"] == "empty 4"
    for row in rows.values():
        assert 0 < row["p50_ms"] <= row["p95_ms"] <= row["max_ms"]
    assert "p95_ms" in done.stdout


def test_the_installed_command_line_runs_as_claude_code_would(memoria: Memoria, home: Path) -> None:
    """Claude Code runs a command hook's `command` through a shell, in the session's directory."""
    command = command_hook(memoria.url, None)["command"]
    run = run_hook(
        home,
        event("How do we deploy the service to production?", memoria.repo),
        url="http://127.0.0.1:1",  # the URL must come from the command line, not the environment
        key=memoria.key,
        argv=["/bin/sh", "-c", f"cd {shlex.quote(str(memoria.repo))} && {command}"],
    )
    assert "Terraform" in run.answer()["hookSpecificOutput"]["additionalContext"], run.log


def state_env(home: Path) -> dict[str, str]:
    return {"MEMORIA_CLIENT__STATE_DIR": str(home / "state")}


def last_outcomes(home: Path) -> dict[str, Any]:
    status: dict[str, Any] = json.loads((home / "state" / "status.json").read_text())
    return status


def answer_with_outcome(body: dict[str, Any], outcome: str) -> bytes:
    payload = json.dumps(body).encode()
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n" % len(payload)
    return head + b"Memoria-Hook-Outcome: " + outcome.encode() + b"\r\n\r\n" + payload


START = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "- #a1 pinned"}}


def session_start_event(cwd: Path, source: str = "startup") -> bytes:
    return json.dumps(
        {
            "session_id": "4b1e0c1a",
            "transcript_path": "/tmp/t.jsonl",
            "cwd": str(cwd),
            "hook_event_name": "SessionStart",
            "source": source,
        }
    ).encode()


@pytest.mark.parametrize("launcher", ["script", "memoria"])
def test_session_start_posts_the_event_to_its_route_and_prints_the_answer(
    home: Path, tmp_path: Path, launcher: str
) -> None:
    repo = tmp_path / "shop-api"
    (repo / ".git").mkdir(parents=True)
    argv = {
        "script": [sys.executable, "-S", str(SCRIPT), "session-start"],
        "memoria": [MEMORIA, "hook", "session-start"],
    }[launcher]
    received: list[tuple[bytes, bytes]] = []
    with canned_server(answer_with_outcome(START, "injected:2"), received) as url:
        run = run_hook(
            home, session_start_event(repo, "resume"), url=url, argv=argv, extra_env=state_env(home)
        )
    assert run.returncode == 0 and run.answer() == START, run.log
    assert run.log == ""
    ((head, body),) = received
    assert head.startswith(b"POST /v1/hooks/claude-code/session-start?namespace=repo%3Ashop-api HTTP/1.1")
    sent = json.loads(body)
    assert sent["source"] == "resume" and sent["hook_event_name"] == "SessionStart"
    assert "cwd" not in sent and "transcript_path" not in sent
    record = last_outcomes(home)["session-start"]
    assert (record["outcome"], record["count"], record["namespace"]) == ("injected", 2, "repo:shop-api")


def test_session_start_with_the_server_down_is_silent_and_recorded(home: Path) -> None:
    argv = [sys.executable, "-S", str(SCRIPT), "session-start"]
    url = f"http://127.0.0.1:{free_port()}"
    run = run_hook(home, session_start_event(home), url=url, argv=argv, extra_env=state_env(home))
    assert_silent(run)
    assert "cannot reach" in run.log
    assert last_outcomes(home)["session-start"]["outcome"] == "unreachable"


def test_session_start_against_a_hanging_server_stops_at_the_budget(home: Path, hanging_url: str) -> None:
    argv = [sys.executable, "-S", str(SCRIPT), "session-start"]
    run = run_hook(home, session_start_event(home), url=hanging_url, argv=argv, extra_env=state_env(home))
    assert_silent(run)
    assert "gave up after the 1.50 s budget" in run.log
    assert last_outcomes(home)["session-start"]["outcome"] == "timeout"


def test_each_recall_outcome_is_recorded_for_memoria_status(home: Path) -> None:
    with canned_server(answer_with_outcome(CONTEXT, "injected:3")) as url:
        run = run_hook(home, event("how do we deploy", home), url=url, extra_env=state_env(home))
    assert run.answer() == CONTEXT
    assert last_outcomes(home)["recall"]["count"] == 3
    with canned_server(answer_with_outcome({}, "skipped:too-short")) as url:
        run = run_hook(home, event("ok", home), url=url, extra_env=state_env(home))
    assert_silent(run)
    assert last_outcomes(home)["recall"]["outcome"] == "skipped"


def test_each_agents_last_recall_is_kept_apart_for_memoria_status(home: Path) -> None:
    with canned_server(answer_with_outcome(CONTEXT, "injected:3")) as url:
        run_hook(home, event("how do we deploy", home), url=url, extra_env=state_env(home))
    codex = [sys.executable, "-S", str(SCRIPT), "user-prompt-submit", "--agent", "codex"]
    dead = f"http://127.0.0.1:{free_port()}"
    assert_silent(
        run_hook(home, event("how do we deploy", home), url=dead, argv=codex, extra_env=state_env(home))
    )
    outcomes = last_outcomes(home)
    assert outcomes["recall"]["outcome"] == "unreachable", "the latest of any agent"
    assert outcomes["agents"]["claude-code"]["recall"]["outcome"] == "injected"
    assert outcomes["agents"]["codex"]["recall"]["outcome"] == "unreachable"


def test_prompts_left_without_context_are_counted_per_reason_for_memoria_status(home: Path) -> None:
    outcomes = ["skipped:acknowledgement", "below-floor", "below-floor", "all-seen", "budget-spent"]
    for outcome in [*outcomes, "injected:2"]:
        body = CONTEXT if outcome.startswith("injected") else {}
        with canned_server(answer_with_outcome(body, outcome)) as url:
            run_hook(home, event("how do we deploy", home), url=url, extra_env=state_env(home))
    recall = last_outcomes(home)["recall"]
    assert (recall["outcome"], recall["count"]) == ("injected", 2)  # the counts outlive the last record
    assert recall["without_context"] == {"trivial": 1, "floor": 2, "seen": 1, "budget": 1}


@pytest.mark.parametrize("sub", ["user-prompt-submit", "session-start", "capture", "flush"])
@pytest.mark.parametrize("launcher", ["script", "memoria"])
def test_help_prints_the_usage_and_exits_0_without_asking_the_server(
    home: Path, hanging: HangingServer, sub: str, launcher: str
) -> None:
    argv = [sys.executable, "-S", str(SCRIPT), sub] if launcher == "script" else [MEMORIA, "hook", sub]
    run = run_hook(home, b"", url=hanging.url, argv=[*argv, "--help"])
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith(f"usage: memoria hook {sub}")
    assert "--url URL" in run.stdout and "always exits 0" in run.stdout.replace("\n", " ")
    assert run.log == ""
    assert not hanging.was_asked()


@pytest.mark.parametrize(
    "argv",
    [
        [sys.executable, "-S", str(SCRIPT), "frobnicate"],
        [sys.executable, "-S", str(SCRIPT), "session-start", "--verbose"],
        [MEMORIA, "hook", "session-start", "--url"],
        [MEMORIA, "hook", "user-prompt-submit", "extra", "words"],
    ],
    ids=["unknown subcommand", "unknown option", "option without value", "stray words"],
)
def test_unknown_arguments_exit_0_silently_and_are_logged(
    home: Path, hanging: HangingServer, argv: list[str]
) -> None:
    run = run_hook(home, session_start_event(home), url=hanging.url, argv=argv)
    assert_silent(run, within=10.0)
    assert "bad arguments" in run.log
    assert not hanging.was_asked()


def test_the_memoria_command_runs_the_hook_without_loading_the_command_line(home: Path) -> None:
    """`memoria hook <sub>` goes straight to the hook (app.entry): click, pydantic and the server's
    dependencies would cost the prompt most of a second."""
    run = run_hook(
        home,
        b"not json",
        url="http://127.0.0.1:1",
        argv=[MEMORIA, "hook", "user-prompt-submit"],
        extra_env={"PYTHONPROFILEIMPORTTIME": "1"},
    )
    assert_silent(run)
    imported = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in run.stderr.splitlines()}
    assert {"app", "memoria_hook_client"} <= imported
    heavy = {"click", "rich", "pydantic", "litestar", "httpx", "asyncpg", "numpy", "torch", "msgspec"}
    assert not imported & heavy


def test_the_entry_point_takes_exactly_the_hook_subcommands() -> None:
    from app import entry
    from memoria_hook_client import command

    assert entry.HOOK_SUBCOMMANDS == command.SUBCOMMANDS


def test_the_memoria_command_hands_capture_to_the_capture_hook(home: Path, tmp_path: Path) -> None:
    stop = {
        "session_id": "4b1e0c1a",
        "transcript_path": str(tmp_path / "none.jsonl"),
        "cwd": str(tmp_path),
        "hook_event_name": "Stop",
    }
    run = run_hook(
        home,
        json.dumps(stop).encode(),
        url="http://127.0.0.1:1",
        argv=[MEMORIA, "hook", "capture"],
        extra_env={**state_env(home), "MEMORIA_CLIENT__CAPTURE": "off"},
    )
    assert_silent(run)
    assert last_outcomes(home)["capture"]["outcome"] == "off"
    assert "capture off" in run.log


def test_a_hook_installed_at_the_old_module_path_still_answers(memoria: Memoria, home: Path) -> None:
    """Hooks written before the client moved name `python -m app.hooks.command`; they keep working."""
    old = [sys.executable, "-m", "app.hooks.command", "user-prompt-submit"]
    run = run_hook(
        home,
        event("How do we deploy the service to production?", memoria.repo),
        url=memoria.url,
        key=memoria.key,
        argv=old,
    )
    assert run.returncode == 0, run.stderr
    assert "additionalContext" in run.stdout, run.log
