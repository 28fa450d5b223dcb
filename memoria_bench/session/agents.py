"""How `memoria bench session` runs each coding agent's real CLI for one headless session: the
binary, the fake model API it talks to, the person's own settings in its HOME, its environment and
command line, all from `memoria_bench.clis` (the same recipes the real-CLI tests use)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from memoria_bench.clis import claude, codex, copilot, gemini, opencode, qwen
from memoria_bench.clis.anthropic_api import FakeAnthropic
from memoria_bench.clis.anthropic_api import Text as AnthropicText
from memoria_bench.clis.gemini_api import FakeGemini
from memoria_bench.clis.gemini_api import Text as GeminiText
from memoria_bench.clis.model_api import RecordingApi
from memoria_bench.clis.openai_chat_api import FakeOpenAIChat
from memoria_bench.clis.responses_api import FakeResponses
from memoria_bench.clis.responses_api import Text as ResponsesText

#: What the fake model answers every prompt with; a session counts only when the CLI printed it.
REPLY = "Noted, thank you."


@dataclass(frozen=True, slots=True)
class SessionCli:
    """One agent's CLI as the session bench drives it."""

    label: str
    binary: Callable[[], str]
    """Its path (from `$…_BIN`, else installed by its `.ci` script)."""
    start_fake: Callable[[], tuple[RecordingApi, str]]
    """A started fake model API answering REPLY, and the URL the CLI is given for it."""
    write_settings: Callable[[Path, str], object]
    """(HOME, model URL): the person's own settings, before any hook is installed."""
    environment: Callable[[Mapping[str, str], Path, str, str], dict[str, str]]
    """(base environment, HOME, binary, model URL): the CLI's environment."""
    argv: Callable[[str, str], list[str]]
    """(binary, prompt): one headless session on the prompt."""
    timeout_s: float
    settle_home: Callable[[Path, str], bool] = lambda home, binary: True
    """(HOME, binary): what the CLI leaves in a HOME at its first start on a machine online, given
    to both arms so neither times a once-per-machine cost; False when it could not be given."""


def _claude_fake() -> tuple[RecordingApi, str]:
    fake = FakeAnthropic(lambda body: AnthropicText(REPLY)).start()
    return fake, fake.url


def _codex_fake() -> tuple[RecordingApi, str]:
    fake = FakeResponses(lambda body: ResponsesText(REPLY)).start()
    return fake, fake.url


def _gemini_fake() -> tuple[RecordingApi, str]:
    fake = FakeGemini(lambda body: GeminiText(REPLY)).start()
    return fake, fake.url


def _openai_chat_fake() -> tuple[RecordingApi, str]:
    """Qwen Code's, OpenCode's and Copilot CLI's model: OpenAI Chat Completions."""
    fake = FakeOpenAIChat(lambda body: REPLY).start()
    return fake, fake.base_url


CLAUDE_CODE = SessionCli(
    label="Claude Code",
    binary=claude.claude_binary,
    start_fake=_claude_fake,
    write_settings=lambda home, url: None,  # a HOME without settings: what a first `claude -p` meets
    environment=lambda base, home, binary, url: claude.claude_env(base, home, url),
    argv=claude.claude_argv,
    timeout_s=claude.CLAUDE_TIMEOUT_S,
)

CODEX = SessionCli(
    label="Codex CLI",
    binary=codex.codex_binary,
    start_fake=_codex_fake,
    write_settings=codex.write_provider,
    environment=lambda base, home, binary, url: codex.codex_env(base, home),
    argv=codex.codex_argv,
    timeout_s=codex.CODEX_TIMEOUT_S,
)

GEMINI = SessionCli(
    label="Gemini CLI",
    binary=gemini.gemini_binary,
    start_fake=_gemini_fake,
    write_settings=lambda home, url: gemini.write_user_settings(home),
    environment=lambda base, home, binary, url: gemini.gemini_env(dict(base), home, url),
    argv=gemini.gemini_argv,
    timeout_s=gemini.GEMINI_TIMEOUT_S,
)

QWEN = SessionCli(
    label="Qwen Code",
    binary=qwen.qwen_binary,
    start_fake=_openai_chat_fake,
    write_settings=lambda home, url: qwen.write_user_settings(home),
    environment=lambda base, home, binary, url: qwen.qwen_env(dict(base), home, url),
    argv=qwen.qwen_argv,
    timeout_s=qwen.QWEN_TIMEOUT_S,
)

OPENCODE = SessionCli(
    label="OpenCode",
    binary=opencode.opencode_binary,
    start_fake=_openai_chat_fake,
    # the person's opencode.json names the fake as their model's provider
    write_settings=opencode.write_user_config,
    environment=lambda base, home, binary, url: opencode.opencode_env(base, home),
    argv=opencode.opencode_argv,
    timeout_s=opencode.OPENCODE_TIMEOUT_S,
    # its config folder's `@opencode-ai/plugin`, which it installs at first start
    settle_home=opencode.settle_config_folder,
)

COPILOT = SessionCli(
    label="GitHub Copilot CLI",
    binary=copilot.copilot_binary,
    start_fake=_openai_chat_fake,
    write_settings=lambda home, url: None,  # its BYOK provider is all environment variables
    environment=copilot.copilot_env,
    argv=copilot.copilot_argv,
    timeout_s=copilot.COPILOT_TIMEOUT_S,
)

SESSION_CLIS: dict[str, SessionCli] = {
    "claude-code": CLAUDE_CODE,
    "codex": CODEX,
    "gemini": GEMINI,
    "qwen": QWEN,
    "opencode": OPENCODE,
    "copilot": COPILOT,
}
"""The agents whose real CLI the session bench can drive, by host name (`app.hooks.hosts`)."""
