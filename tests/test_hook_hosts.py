"""The host registry: every coding agent gets the same hook routes and its own capture route, answered
in its own shape and within its own context limit; the hook client knows the same agents.

Claude Code's routes are pinned by the rest of the hook tests (tests/test_hook_endpoint.py and
friends); these pin what the registry adds: a route per host, the host's limit applied on the
server whatever the settings allow, an unknown host a 404, the agent recorded on captured episodes,
and `--agent` in the client (event sent to the agent's route, an unknown agent silent).
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.entry import hook_subcommand
from app.hooks.context import layout
from app.hooks.hosts import CLAUDE_CODE, CODEX, HOSTS
from app.hooks.routes import OUTCOME_HEADER
from app.settings import HookSettings
from memoria_hook_client import agents
from memoria_hook_client.command import main as hook_main
from tests.hook_client import ROOMY, client, hook_settings
from tests.test_hook_rules import hit

__all__ = ["client", "hook_settings"]

Client = AsyncTestClient[Litestar]
NAMESPACE = "repo:quokka"
#: Memories whose characters are 3 bytes each in UTF-8 (the team writes its notes in Greek): a few of
#: them pass Codex's limit, which counts bytes, but not Claude Code's, which counts characters.
FACTS = [
    f"The quokka deploy step {n} runs terraform plan then terraform apply for the quokka stack. "
    + "Σημείωση: η ομάδα κρατά το κλειδί ανάπτυξης στο θησαυροφυλάκιο και ελέγχει το σχέδιο πρώτα. " * 8
    for n in range(16)
]


def test_the_hook_client_knows_every_host_the_server_answers() -> None:
    assert set(agents.AGENTS) == set(HOSTS)
    # Cursor documents no transcript format to capture from: the one host without capture.
    assert set(HOSTS) - set(agents.TRANSCRIPTS) == {"cursor"}
    assert CLAUDE_CODE.name == agents.DEFAULT_AGENT


@pytest.mark.parametrize("host", list(HOSTS.values()), ids=list(HOSTS))
def test_each_host_keeps_its_context_below_the_limit_it_documents(host: Any) -> None:
    # Claude Code previews context over 10,000 characters; Codex spills it over 2,500 tokens, which
    # it estimates at 4 bytes of UTF-8 each; Gemini CLI, Qwen Code, OpenCode and Copilot CLI document no
    # limit (Copilot CLI: none but 10 MiB of hook output; Cursor: none), and are held to Claude Code's
    documented = {
        "claude-code": (10_000, None),
        "codex": (10_000, 2_500 * 4),
        "gemini": (10_000, None),
        "qwen": (10_000, None),
        "opencode": (10_000, None),
        "copilot": (10_000, None),
        "cursor": (10_000, None),
    }
    chars, size = documented[host.name]
    assert host.max_context_chars < chars
    assert (host.max_context_bytes is None) == (size is None)
    assert host.max_context_bytes is None or size is None or host.max_context_bytes < size


async def _store(client: Client, headers: dict[str, str]) -> None:
    body = [{"content": fact, "namespace": NAMESPACE, "category": "fact"} for fact in FACTS[:8]]
    response = await client.post("/v1/memories", json=body, headers=headers)
    assert response.status_code == 201, response.text


@pytest.mark.parametrize("hook_settings", [HookSettings(budget_ms=ROOMY, max_context_chars=9_000)])
async def test_codex_gets_claude_codes_answer_shape_within_its_own_smaller_limit(
    client: Client, alice: dict[str, str]
) -> None:
    await _store(client, alice)
    prompt = {
        "prompt": "How does the quokka deploy step run terraform?",
        "hook_event_name": "UserPromptSubmit",
    }
    answers = {}
    for host in ("claude-code", "codex"):
        response = await client.post(
            f"/v1/hooks/{host}/user-prompt-submit",
            json=prompt,
            headers=alice,
            params={"namespace": NAMESPACE},
        )
        assert response.status_code == 200, response.text
        assert response.headers[OUTCOME_HEADER].startswith("injected:"), response.headers[OUTCOME_HEADER]
        output = response.json()["hookSpecificOutput"]
        assert output["hookEventName"] == "UserPromptSubmit"
        answers[host] = output["additionalContext"]
    assert CODEX.max_context_bytes is not None
    assert len(answers["codex"].encode()) <= CODEX.max_context_bytes < len(answers["claude-code"].encode())
    assert answers["claude-code"].startswith(answers["codex"].rsplit("\n", 1)[0])


@pytest.mark.parametrize("hook_settings", [HookSettings(budget_ms=ROOMY, session_start_max_chars=9_000)])
async def test_codex_session_start_context_stays_within_codexs_limit(
    client: Client, alice: dict[str, str]
) -> None:
    body = [{"content": fact, "namespace": NAMESPACE, "pinned": True} for fact in FACTS]
    assert (await client.post("/v1/memories", json=body, headers=alice)).status_code == 201
    contexts = {}
    for host in ("claude-code", "codex"):
        event = {"hook_event_name": "SessionStart", "source": "startup", "session_id": f"s-{host}"}
        response = await client.post(
            f"/v1/hooks/{host}/session-start", json=event, headers=alice, params={"namespace": NAMESPACE}
        )
        output = response.json()["hookSpecificOutput"]
        assert output["hookEventName"] == "SessionStart"
        contexts[host] = output["additionalContext"]
    assert "The quokka deploy step" in contexts["codex"]
    assert CODEX.max_context_bytes is not None
    assert len(contexts["codex"].encode()) <= CODEX.max_context_bytes < len(contexts["claude-code"].encode())


async def test_an_unknown_host_is_a_404_problem(client: Client, alice: dict[str, str]) -> None:
    response = await client.post("/v1/hooks/no-such-agent/user-prompt-submit", json={}, headers=alice)
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("application/problem+json")


async def test_a_capture_through_an_agents_route_records_that_agent(
    client: Client, alice: dict[str, str]
) -> None:
    turn = {
        "session_id": "s-codex-1",
        "turn": 0,
        "prompt": "Which port does the walrus gateway of quokka listen on?",
        "reply": "The walrus gateway listens on port 7341 behind the amber proxy.",
    }
    response = await client.post(
        "/v1/capture/codex", json={"exchanges": [turn]}, headers=alice, params={"namespace": NAMESPACE}
    )
    assert response.status_code == 200, response.text
    memory_id = response.json()["results"][0]["ids"][0]
    stored = (await client.get(f"/v1/memories/{memory_id}", headers=alice)).json()
    assert (stored["source"], stored["tags"], stored["kind"]) == ("codex", ["codex"], "episode")


def test_split_agent_takes_the_agent_from_anywhere_and_defaults_to_claude_code() -> None:
    assert agents.split_agent(["user-prompt-submit"]) == ("claude-code", ["user-prompt-submit"])
    assert agents.split_agent(["--agent", "codex", "session-start", "--url", "u"]) == (
        "codex",
        ["session-start", "--url", "u"],
    )
    assert agents.split_agent(["capture", "--agent=codex"]) == ("codex", ["capture"])
    for bad in (["--agent"], ["--agent", "vim"], ["--agent=", "capture"]):
        with pytest.raises(agents.UnknownAgent):
            agents.split_agent(bad)


def test_an_unknown_agent_exits_0_silently_and_says_why_in_the_log(tmp_path: Any) -> None:
    log = tmp_path / "hook.log"
    out = io.StringIO()
    env = {"HOME": str(tmp_path), "MEMORIA_CLIENT__HOOK_LOG": str(log), "MEMORIA_CLIENT__API_KEY": "mem_x"}
    stdin = io.BytesIO(json.dumps({"prompt": "How do we deploy?"}).encode())
    code = hook_main(["user-prompt-submit", "--agent", "vim"], stdin, out, env)
    assert (code, out.getvalue()) == (0, "")
    assert "unknown agent 'vim'" in log.read_text()


@pytest.mark.parametrize(
    ("argv", "sub"),
    [
        (["hook", "user-prompt-submit", "--agent", "codex"], "user-prompt-submit"),
        (["hook", "--agent", "codex", "capture"], "capture"),
        (["hook", "--agent=codex", "session-start"], "session-start"),
        (["hook", "install", "--agent", "codex"], None),
        (["hook", "--agent", "codex"], None),
        (["status"], None),
    ],
)
def test_the_console_script_sendshook_subcommands_with_an_agent_straight_to_the_hook(
    argv: list[str], sub: str | None
) -> None:
    assert hook_subcommand(argv) == sub


def test_a_byte_budget_skips_or_cuts_memories_by_their_utf8_size() -> None:
    greek = "θησαυροφυλάκιο " * 40  # 600 characters, 1,160 bytes
    hits = [hit(1, greek), hit(2, "Deploy with Terraform."), hit(3, greek)]
    text, shown = layout("repo:x", hits, 3_000, max_bytes=1_600)
    assert [h.id for h in shown] == [1, 2] and len(text.encode()) <= 1_600
    assert [h.id for h in layout("repo:x", hits, 3_000)[1]] == [1, 2, 3]  # the characters alone fit
    best_alone, (best,) = layout("repo:x", [hit(4, greek * 3)], 3_000, max_bytes=800)
    assert best.id == 4 and best_alone.endswith("…") and len(best_alone.encode()) <= 800
    assert layout("repo:x", hits, 3_000) == layout("repo:x", hits, 3_000, max_bytes=None)
