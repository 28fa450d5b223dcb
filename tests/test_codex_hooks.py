"""Codex CLI's adapter without the CLI: its config writer, its session file reader, and the hook
client with `--agent codex` (the real `codex` is driven by tests/test_codex_cli.py).

The session file is a real one, recorded from `codex exec` 0.171.0 against the fake Responses API
(tests/fixtures/codex-rollout-0.171.0.jsonl: one prompt, an `exec_command` call, the reply; the
long instruction texts trimmed).
"""

from __future__ import annotations

import io
import json
import sys
import threading
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from app.cli.hook_agents import agents_status
from app.cli.hooks import hook as hook_cli
from app.hooks import install_codex
from app.hooks.agent_install import InstallRequest
from app.mcp import install_codex as mcp_codex
from memoria_hook_client import codex_transcript
from memoria_hook_client.capture_worker import main as capture_main
from tests.test_hook_command import canned_server, run_hook
from tests.test_spool import Stub

FIXTURE = Path(__file__).parent / "fixtures" / "codex-rollout-0.171.0.jsonl"
SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "memoria-hook"
PROMPT = "Which port does the walrus gateway listen on? Check the repo first."
REPLY = "The walrus gateway listens on port 7341 behind the amber proxy; see gateway.toml."
PERSONS_OWN = """model = "gpt-5.5"  # the person's own settings, comments and all

[[hooks.SessionStart]]
[[hooks.SessionStart.hooks]]
type = "command"
command = "~/bin/my-session-banner.sh"

[mcp_servers.docs]
command = "docs-mcp"
"""


def _request(config_dir: Path, capture: bool = True) -> InstallRequest:
    return InstallRequest(
        scope="user",
        project_dir=config_dir,
        url="http://127.0.0.1:8080",
        config_dir=config_dir,
        capture=capture,
    )


@pytest.mark.parametrize(
    "original",
    [None, "", PERSONS_OWN, 'model = "o3"', 'model = "o3"\n\n\n', "a = 1\r\nb = 2\r\n"],
    ids=["no file", "empty", "own hooks", "no final newline", "blank lines", "CRLF"],
)
def test_install_is_idempotent_and_uninstall_gives_the_file_back_byte_for_byte(
    tmp_path: Path, original: str | None
) -> None:
    path = tmp_path / "config.toml"
    if original is not None:
        path.write_bytes(original.encode())
    request = _request(tmp_path)
    assert install_codex.install(request).changed == [path]
    installed = path.read_bytes()
    assert install_codex.install(request).changed == []
    assert path.read_bytes() == installed
    assert install_codex.uninstall(request).changed == [path]
    if original:
        assert path.read_bytes() == original.encode()
    else:
        assert not path.exists()
    assert install_codex.uninstall(request).changed == []


def test_the_hooks_follow_the_persons_own_and_their_trust_keys_name_that_position(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(PERSONS_OWN)
    install_codex.install(_request(tmp_path))
    config = tomllib.loads(path.read_text())
    assert config["model"] == "gpt-5.5" and config["mcp_servers"]["docs"]["command"] == "docs-mcp"
    starts = config["hooks"]["SessionStart"]
    assert [group["hooks"][0]["command"].split()[-3:] for group in starts] == [
        ["~/bin/my-session-banner.sh"],
        ["session-start", "--agent", "codex"],
    ]
    assert [group["hooks"][0]["command"].split()[-3] for group in config["hooks"]["Stop"]] == ["capture"]
    state = config["hooks"]["state"]
    assert set(state) == {f"{path}:session_start:1:0", f"{path}:user_prompt_submit:0:0", f"{path}:stop:0:0"}
    assert all(entry["trusted_hash"].startswith("sha256:") for entry in state.values())
    assert all(hook["hooks"][0]["timeout"] >= 3 for hook in starts[1:])


def test_a_hook_switched_off_is_taken_out_by_the_next_install(tmp_path: Path) -> None:
    install_codex.install(_request(tmp_path))
    install_codex.install(_request(tmp_path, capture=False))
    config = tomllib.loads((tmp_path / "config.toml").read_text())
    assert set(config["hooks"]) == {"SessionStart", "UserPromptSubmit", "state"}


def test_a_file_the_block_cannot_extend_is_left_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    inline = 'hooks.SessionStart = [{ hooks = [{ type = "command", command = "banner" }] }]\n'
    path.write_text(inline)
    with pytest.raises(install_codex.CodexConfigError, match="would not parse"):
        install_codex.install(_request(tmp_path))
    path.write_text("not toml [")
    with pytest.raises(install_codex.CodexConfigError, match="not valid TOML"):
        install_codex.install(_request(tmp_path))
    assert path.read_text() == "not toml ["


def test_the_command_line_installs_and_removes_codexs_hooks(tmp_path: Path) -> None:
    runner = CliRunner()
    folder = str(tmp_path / "codex-home")
    installed = runner.invoke(hook_cli, ["install", "--agent", "codex", "--config-dir", folder])
    assert installed.exit_code == 0, installed.output
    assert "Codex CLI: installed in" in installed.output
    project = runner.invoke(
        hook_cli, ["install", "--agent", "codex", "--scope", "project", "--config-dir", folder]
    )
    assert project.exit_code != 0 and "user scope only" in project.output
    removed = runner.invoke(hook_cli, ["uninstall", "--agent", "codex", "--config-dir", folder])
    assert removed.exit_code == 0, removed.output
    assert not (tmp_path / "codex-home" / "config.toml").exists()


def test_the_recorded_session_reads_as_one_exchange_with_its_command() -> None:
    delta = codex_transcript.read_delta(str(FIXTURE), 0, 0, "s-1")
    (exchange,) = delta.exchanges
    assert (exchange["turn"], exchange["prompt"], exchange["reply"]) == (0, PROMPT, REPLY)
    assert exchange["digest"]["commands"] == ["ls"]
    assert exchange["cwd"] and exchange["started_at"] <= exchange["ended_at"]
    assert (delta.turn, delta.pending, delta.offset) == (1, False, FIXTURE.stat().st_size)


def test_a_turn_without_its_end_waits_unless_stop_says_it_is_over() -> None:
    data = FIXTURE.read_bytes()
    cut = data[: data.index(b'"task_complete"')]
    cut = cut[: cut.rfind(b"\n") + 1]
    waiting = codex_transcript.parse_delta(cut, 0, 0, "s-1")
    assert (waiting.exchanges, waiting.pending, waiting.turn) == ([], True, 0)
    over = codex_transcript.parse_delta(cut, 0, 0, "s-1", turn_over=True)
    assert [e["reply"] for e in over.exchanges] == [REPLY]
    before_reply = cut[: cut.index(REPLY.encode())]
    before_reply = before_reply[: before_reply.rfind(b"\n") + 1]
    assert codex_transcript.parse_delta(before_reply, 0, 0, "s-1", turn_over=True).pending


def test_the_prompt_hook_posts_to_codexs_route(tmp_path: Path) -> None:
    received: list[tuple[bytes, bytes]] = []
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"
    event = {
        "session_id": "s",
        "turn_id": "t",
        "hook_event_name": "UserPromptSubmit",
        "prompt": "how do we deploy",
    }
    argv = [sys.executable, "-S", str(SCRIPT), "user-prompt-submit", "--agent", "codex"]
    with canned_server(answer, received) as url:
        run = run_hook(tmp_path, json.dumps(event).encode(), url=url, argv=argv)
    assert run.returncode == 0 and run.stdout == ""
    ((head, body),) = received
    assert head.startswith(b"POST /v1/hooks/codex/user-prompt-submit "), head
    assert json.loads(body)["turn_id"] == "t"


@pytest.fixture
def stub() -> Iterator[Stub]:
    server = Stub()
    thread = threading.Thread(target=server.server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.server.shutdown()
    server.server.server_close()
    thread.join(timeout=5)


def test_capture_reads_codexs_session_file_and_sends_it_to_codexs_route(tmp_path: Path, stub: Stub) -> None:
    repo = tmp_path / "walrus"
    (repo / ".git").mkdir(parents=True)
    env = {
        "MEMORIA_CLIENT__STATE_DIR": str(tmp_path / "state"),
        "MEMORIA_CLIENT__HOOK_LOG": str(tmp_path / "hook.log"),
        "MEMORIA_CLIENT__API_KEY": "mem_test_key",
        "MEMORIA_CLIENT__URL": stub.url,
        "MEMORIA_CLIENT__CAPTURE_FLUSH": "inline",
        "MEMORIA_CLIENT__HOOK_BUDGET_S": "10",
    }
    event = {
        "session_id": "s-codex",
        "transcript_path": str(FIXTURE),
        "cwd": str(repo),
        "hook_event_name": "Stop",
    }
    out = io.StringIO()
    assert (
        capture_main(["capture", "--agent", "codex"], io.BytesIO(json.dumps(event).encode()), out, env) == 0
    )
    assert out.getvalue() == ""
    ((path, _, exchanges),) = stub.requests
    assert path == "/v1/capture/codex?namespace=repo%3Awalrus"
    assert [(e["prompt"], e["reply"], e["hook_event"]) for e in exchanges] == [(PROMPT, REPLY, "Stop")]


@pytest.mark.parametrize(
    "original", [None, PERSONS_OWN, 'model = "o3"'], ids=["no file", "own", "no newline"]
)
def test_the_mcp_server_entry_goes_in_and_out_byte_for_byte(tmp_path: Path, original: str | None) -> None:
    path = tmp_path / "config.toml"
    if original is not None:
        path.write_text(original)
    assert mcp_codex.install(tmp_path, "http://127.0.0.1:8080/", "repo:walrus", approve_tools=True) == (
        path,
        True,
    )
    assert mcp_codex.install(tmp_path, "http://127.0.0.1:8080/", "repo:walrus", approve_tools=True) == (
        path,
        False,
    )
    server = tomllib.loads(path.read_text())["mcp_servers"]["memoria"]
    assert server == {
        "url": "http://127.0.0.1:8080/mcp",
        "bearer_token_env_var": "MEMORIA_CLIENT__API_KEY",
        "http_headers": {"X-Memoria-Namespace": "repo:walrus"},
        "default_tools_approval_mode": "approve",
    }
    assert "mem_" not in path.read_text()  # never a key in the file
    # the hooks' block beside it: each comes out alone
    install_codex.install(_request(tmp_path))
    assert mcp_codex.uninstall(tmp_path) == (path, True)
    install_codex.uninstall(_request(tmp_path))
    assert (path.read_text() if path.exists() else None) == original


def test_a_memoria_server_of_the_persons_own_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[mcp_servers.memoria]\nurl = "https://memoria.example.com/mcp"\n')
    with pytest.raises(mcp_codex.CodexConfigError, match="of its own"):
        mcp_codex.install(tmp_path, "http://127.0.0.1:8080", None, approve_tools=False)
    assert path.read_text() == '[mcp_servers.memoria]\nurl = "https://memoria.example.com/mcp"\n'


def test_memoria_status_names_the_codex_events_its_hooks_are_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path))
    path = tmp_path.resolve() / "config.toml"
    assert agents_status() == [f"  codex    none  {path}"]
    install_codex.install(_request(tmp_path, capture=False))
    assert agents_status() == [f"  codex    SessionStart, UserPromptSubmit  {path}"]
    path.write_bytes(b"\xff\xfe not UTF-8")
    assert agents_status()[0].startswith("  codex    unreadable:")
