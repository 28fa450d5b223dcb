"""The real Qwen Code (from npm) runs `qwen -p` against the fake OpenAI Chat Completions API on
127.0.0.1: the fake gets the prompt as a streamed chat completion request, and its reply is what
the CLI prints. The harness every Qwen Code test stands on (`memoria_bench.clis.qwen`,
`memoria_bench.clis.openai_chat_api`)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path

import pytest

from memoria_bench.clis.openai_chat_api import FakeOpenAIChat
from memoria_bench.clis.qwen import (
    MODEL,
    QWEN_TIMEOUT_S,
    qwen_argv,
    qwen_binary,
    qwen_env,
    write_user_settings,
)

pytestmark = pytest.mark.e2e

PROMPT = "Which port does the walrus gateway listen on?"
REPLY = "The walrus gateway listens on port 7341."


async def test_qwen_code_streams_its_prompt_to_the_fake_api_and_prints_its_reply(tmp_path: Path) -> None:
    qwen = await asyncio.to_thread(qwen_binary)
    repo = tmp_path / "walrus"
    repo.mkdir()
    home = tmp_path / "home"
    write_user_settings(home)
    fake = FakeOpenAIChat(lambda body: REPLY).start()
    try:
        run = await asyncio.to_thread(
            subprocess.run,
            qwen_argv(qwen, PROMPT),
            cwd=repo,
            env=qwen_env(dict(os.environ), home, fake.base_url),
            capture_output=True,
            text=True,
            timeout=QWEN_TIMEOUT_S,
            check=False,
        )
    finally:
        fake.stop()
    shown = f"exit {run.returncode}\nstdout:\n{run.stdout}\nstderr:\n{run.stderr[-3000:]}"
    assert (run.returncode, run.stdout.strip(), run.stderr.strip()) == (0, REPLY, ""), shown
    # After the turn, 0.24.4 asks the model once more on its own (its memory extraction, which
    # quotes the conversation): every request is a chat completion to the fake, the first the turn.
    assert {r.path for r in fake.requests} == {"/v1/chat/completions"}, shown
    turn = fake.completions()[0]
    assert (turn["model"], turn["stream"]) == (MODEL, True)
    assert PROMPT in json.dumps(turn["messages"])
