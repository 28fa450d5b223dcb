"""The README's walk-through works when pasted whole: the block between its `walk-through` markers runs
in bash, from a checkout-like directory, against a live `memoria serve` with its own database and
HOME, and every step succeeds (`curl --fail-with-body` turns an HTTP error into a failed step)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core.net import free_port
from tests.test_e2e_serve import Server

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(
    r"<!-- --8<-- \[start:walk-through\] -->\n```sh\n(?P<script>.*?)```\n"
    r"<!-- --8<-- \[end:walk-through\] -->",
    re.DOTALL,
)
URL_LINE = "URL=http://127.0.0.1:8080\n"


def walk_through() -> str:
    found = BLOCK.search((ROOT / "README.md").read_text(encoding="utf-8"))
    assert found, "README.md has no ```sh block between the walk-through markers"
    return found.group("script")


def json_documents(output: str) -> list[Any]:
    """The JSON documents printed one after another (`python3 -m json.tool`), skipping other lines."""
    decoder = json.JSONDecoder()
    documents: list[Any] = []
    at = 0
    while at < len(output):
        if output[at] in "{[":
            document, at = decoder.raw_decode(output, at)
            documents.append(document)
        else:
            newline = output.find("\n", at)
            at = len(output) if newline < 0 else newline + 1
    return documents


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    home = tmp_path / "home"
    home.mkdir()
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MEMORIA_")}
    environ |= {
        "HOME": str(home),
        "MEMORIA_DATABASE__DATA_DIR": str(tmp_path / "pgdata"),
        "MEMORIA_SERVER__PORT": str(free_port()),
        # the ONNX export of the packaged model is a cache, not an agent config: reuse it
        "MEMORIA_EMBEDDINGS__ONNX_CACHE_DIR": str(Path.home() / ".cache" / "memoria" / "onnx"),
        "HF_HUB_OFFLINE": "1",
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
    }
    started = Server(environ)
    try:
        started.wait_ready()
        yield started
    finally:
        started.stop()


def test_the_walk_through_block_succeeds_pasted_whole_into_bash(tmp_path: Path, server: Server) -> None:
    script = walk_through()
    assert URL_LINE in script, "the walk-through names the server once, as URL=http://127.0.0.1:8080"
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / ".venv").symlink_to(Path(sys.executable).parent.parent)  # the checkout's .venv/bin/memoria
    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail"],
        input=script.replace(URL_LINE, f"URL={server.base}\n"),
        cwd=checkout,
        env=server.env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    stored = re.search(r"^stored memory (\d+)$", done.stdout, re.MULTILINE)
    assert stored, done.stdout
    recall = json_documents(done.stdout)[-1]  # the block's last answer
    assert [hit["id"] for hit in recall["results"]][:1] == [int(stored.group(1))]
