"""The real Gemini CLI (from npm) runs `gemini -p` against the fake Gemini API on 127.0.0.1: the fake
gets the prompt, scripts a function call the CLI runs, and its text reply is what the CLI prints.
The harness every Gemini CLI test stands on (`memoria_bench.clis.gemini`, `memoria_bench.clis.gemini_api`)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from memoria_bench.clis.gemini import (
    GEMINI_TIMEOUT_S,
    gemini_argv,
    gemini_binary,
    gemini_env,
    write_user_settings,
)
from memoria_bench.clis.gemini_api import FakeGemini, FunctionCall, Reply, Text

pytestmark = pytest.mark.e2e

PROMPT = "Which port does the walrus gateway listen on? Read gateway.toml."
REPLY = "The walrus gateway listens on port 7341."


def script(body: dict[str, Any]) -> Reply:
    """Read gateway.toml first (a function call), then answer."""
    if "functionResponse" not in json.dumps(body.get("contents", [])):
        return FunctionCall("read_file", {"file_path": "gateway.toml"})
    return Text(REPLY)


async def test_gemini_cli_asks_the_fake_api_runs_its_function_call_and_prints_its_reply(
    tmp_path: Path,
) -> None:
    gemini = await asyncio.to_thread(gemini_binary)
    repo = tmp_path / "walrus"
    repo.mkdir()
    (repo / "gateway.toml").write_text("[walrus]\nport = 7341\n")
    home = tmp_path / "home"
    write_user_settings(home)
    fake = FakeGemini(script).start()
    try:
        run = await asyncio.to_thread(
            subprocess.run,
            gemini_argv(gemini, PROMPT),
            cwd=repo,
            env=gemini_env(dict(os.environ), home, fake.url),
            capture_output=True,
            text=True,
            timeout=GEMINI_TIMEOUT_S,
            check=False,
        )
    finally:
        fake.stop()
    shown = f"exit {run.returncode}\nstdout:\n{run.stdout}\nstderr:\n{run.stderr[-3000:]}"
    assert (run.returncode, run.stdout.strip()) == (0, REPLY), shown
    turns = fake.generations()
    assert len(turns) == 2, f"{[r.path for r in fake.requests]}\n{shown}"
    assert PROMPT in json.dumps(turns[0]["contents"])
    assert "port = 7341" in json.dumps(turns[1]["contents"]), "the file's text did not come back to the model"
