"""`memoria remember | recall | list | forget | import | export | status | login` against a real server."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import click
import httpx
import pytest
from click.testing import CliRunner, Result

from app.cli import main
from app.core.net import free_port
from tests.test_e2e_serve import MEMORIA
from tests.test_hook_command import Memoria, start_memoria

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def memoria(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memoria]:
    with start_memoria(tmp_path_factory.mktemp("cli-e2e")) as running:
        yield running


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path


def run(
    memoria: Memoria,
    *args: str,
    key: str | None = None,
    stdin: str | None = None,
    cwd: Path | None = None,
    terminal: dict[str, str] | None = None,
) -> Result:
    """The real command, in-process; output as wide as needed so table cells stay on one line
    unless `terminal` says otherwise (e.g. `TTY_COMPATIBLE=1` for what a terminal gets)."""
    env = {
        "MEMORIA_CLIENT__URL": memoria.url,
        "MEMORIA_CLIENT__API_KEY": memoria.key if key is None else key,
        "COLUMNS": "250",
        "MEMORIA_CLIENT__TIMEOUT_S": "120",  # a busy shared test machine, not a slow API
        **(terminal or {}),
    }
    here = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        return CliRunner().invoke(main, list(args), env=env, input=stdin)
    finally:
        os.chdir(here)


def ok(result: Result) -> str:
    assert result.exit_code == 0, result.output
    return result.output


def test_remember_in_a_repository_stores_in_its_namespace_once(memoria: Memoria) -> None:
    first = ok(
        run(memoria, "remember", "Release notes live in docs/CHANGES.md", "-c", "fact", cwd=memoria.repo)
    )
    assert first.startswith("remembered #") and "in repo:shop-api" in first
    memory_id = first.split("#")[1].split()[0]
    again = ok(run(memoria, "remember", "Release notes live in docs/CHANGES.md", cwd=memoria.repo))
    assert again.strip() == f"already remembered as #{memory_id} in repo:shop-api"


def test_remember_takes_tags_importance_namespace_and_stdin(memoria: Memoria) -> None:
    out = ok(
        run(
            memoria,
            "remember",
            "-",
            "--namespace",
            "cli-notes",
            "--tags",
            "ci,flaky",
            "--tags",
            "tests",
            "--importance",
            "0.9",
            stdin="The e2e suite is flaky on Mondays\n",
        )
    )
    assert "in cli-notes" in out
    listed = [json.loads(line) for line in ok(run(memoria, "list", "-n", "cli-notes", "--json")).splitlines()]
    assert listed[0]["content"] == "The e2e suite is flaky on Mondays"
    assert listed[0]["tags"] == ["ci", "flaky", "tests"] and listed[0]["importance"] == 0.9


def test_recall_shows_rank_score_legs_and_content(memoria: Memoria) -> None:
    out = ok(run(memoria, "recall", "how do we deploy with terraform"))
    lines = out.splitlines()
    header = next(line for line in lines if "score" in line)
    assert all(column in header for column in ("#", "score", "legs", "content"))
    first_row = next(line for line in lines if "Terraform" in line)
    assert "lexical:" in first_row and "dense:" in first_row and "[decision]" in first_row


def test_recall_explain_adds_the_fusion_figures(memoria: Memoria) -> None:
    out = ok(run(memoria, "recall", "terraform deploy", "--explain", "--here", cwd=memoria.repo))
    assert "fused" in out and "dense dist" in out and "rrf_k=" in out


def test_recall_json_is_the_api_answer(memoria: Memoria) -> None:
    answer = json.loads(ok(run(memoria, "recall", "pnpm frontend", "--json", "-n", "repo:shop-api")))
    assert answer["results"][0]["content"] == "Use pnpm, not npm, for the frontend workspace."


def test_forget_deletes_and_a_second_forget_says_so(memoria: Memoria) -> None:
    out = ok(run(memoria, "remember", "Temporary note to forget", "-n", "scratch"))
    memory_id = out.split("#")[1].split()[0]
    assert ok(run(memoria, "forget", memory_id)).strip() == f"forgot #{memory_id}"
    again = run(memoria, "forget", memory_id, "--purge")
    assert ok(again).strip() == f"purged #{memory_id}"
    gone = run(memoria, "forget", memory_id)
    assert gone.exit_code == 1
    assert gone.output.strip() == f"Error: no memory #{memory_id} (or it is not yours)"


def _remembered_id(out: str) -> str:
    return out.split("#")[1].split()[0]


def test_list_piped_prints_whole_ids_tab_separated_newest_first(memoria: Memoria) -> None:
    one = _remembered_id(ok(run(memoria, "remember", "Listing check one", "-n", "listing")))
    two = _remembered_id(
        ok(run(memoria, "remember", "Listing check two", "-n", "listing", "-c", "fact", "-t", "a,b"))
    )
    rows = [line.split("\t") for line in ok(run(memoria, "list", "-n", "listing")).splitlines()]
    assert [row[0] for row in rows] == [two, one]
    assert rows[0][1:4] == ["listing", "fact", "a,b"] and rows[0][-1] == "Listing check two"


@pytest.mark.parametrize("columns", ["80", "140"])
def test_list_on_a_terminal_shows_a_table_with_whole_ids(memoria: Memoria, columns: str) -> None:
    memory_id = _remembered_id(
        ok(run(memoria, "remember", "A terminal row " + "with long content " * 12, "-n", "listing-tty"))
    )
    out = ok(
        run(
            memoria,
            "list",
            "-n",
            "listing-tty",
            terminal={"TTY_COMPATIBLE": "1", "NO_COLOR": "1", "COLUMNS": columns},
        )
    )
    lines = click.unstyle(out).splitlines()
    assert "┃" in out and memory_id in out and "…" in out
    assert max(len(line) for line in lines) <= int(columns)


def test_export_then_import_round_trips_and_reimport_stores_nothing(memoria: Memoria, tmp_path: Path) -> None:
    for i in range(5):
        ok(run(memoria, "remember", f"Exported memory number {i}", "-n", "exp-src", "-t", "export"))
    dump = tmp_path / "dump.jsonl"
    ok(run(memoria, "export", "-n", "exp-src", "-o", str(dump)))
    lines = [json.loads(line) for line in dump.read_text().splitlines()]
    assert len(lines) == 5 and {line["namespace"] for line in lines} == {"exp-src"}
    assert lines[0]["content"] == "Exported memory number 4" and lines[0]["tags"] == ["export"]

    first = ok(run(memoria, "import", str(dump), "--namespace", "exp-dst", "--batch-size", "2"))
    assert first.strip() == "imported 5 memories: 5 new, 0 already present"
    again = ok(run(memoria, "import", str(dump), "--namespace", "exp-dst"))
    assert again.strip() == "imported 5 memories: 0 new, 5 already present"
    copied = ok(run(memoria, "export", "-n", "exp-dst"))
    assert sorted(json.loads(x)["content"] for x in copied.splitlines() if x.startswith("{")) == sorted(
        line["content"] for line in lines
    )


def test_export_to_stdout_streams_json_lines(memoria: Memoria) -> None:
    out = ok(run(memoria, "export", "-n", "repo:shop-api"))
    records = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert {r["content"] for r in records} >= {"Use pnpm, not npm, for the frontend workspace."}
    assert set(records[0]) == {
        "content",
        "namespace",
        "category",
        "tags",
        "importance",
        "expanded_keywords",
        "is_sensitive",
        "source",
        "metadata",
        "pinned",
        "valid_from",
        "valid_to",
        "id",
    }


def test_export_then_import_keeps_a_pin(memoria: Memoria, tmp_path: Path) -> None:
    headers = {"Authorization": f"Bearer {memoria.key}"}
    stored = httpx.post(
        f"{memoria.url}/v1/memories",
        json={"content": "Release on Tuesdays only.", "namespace": "pins-a", "pinned": True},
        headers=headers,
    )
    assert stored.status_code == 201, stored.text
    dump = tmp_path / "pins.jsonl"
    ok(run(memoria, "export", "-n", "pins-a", "-o", str(dump)))
    (record,) = [json.loads(line) for line in dump.read_text().splitlines()]
    assert record["pinned"] is True
    dump.write_text(json.dumps({**record, "namespace": "pins-b"}) + "\n")
    ok(run(memoria, "import", str(dump)))
    listed = httpx.get(f"{memoria.url}/v1/memories", params={"namespace": "pins-b"}, headers=headers).json()
    items = listed["items"] if isinstance(listed, dict) else listed
    assert [m["pinned"] for m in items] == [True]


def test_import_reports_the_line_of_a_bad_record(memoria: Memoria, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"content": "fine line", "namespace": "imp-bad"}\n\n{"text": "no content"}\n')
    result = run(memoria, "import", str(bad))
    assert result.exit_code == 1
    assert result.output.strip() == 'Error: line 3: want an object with a "content" string'


def test_import_from_stdin(memoria: Memoria) -> None:
    data = '{"content": "Piped in from another tool", "namespace": "imp-stdin", "category": "fact"}\n'
    assert (
        ok(run(memoria, "import", "-", stdin=data)).strip() == "imported 1 memories: 1 new, 0 already present"
    )


def test_status_reports_server_parts_and_counts(memoria: Memoria) -> None:
    out = ok(run(memoria, "status"))
    assert f"server     {memoria.url}  ready" in out
    assert "shown for a key with the admin scope" in out, "a read/write key does not see the checks"
    assert "repo:shop-api" in out and "namespaces" in out

    admin = subprocess.run(
        [MEMORIA, "keys", "create", "--user", "dev", "--scope", "read", "--scope", "admin"],
        env=memoria.server.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout.strip()
    out = ok(run(memoria, "status", key=admin))
    for check in ("database", "migrations", "embedder"):
        assert f"{check:<10} ok" in out


def test_status_json_says_the_server_is_ready_with_your_namespaces(memoria: Memoria) -> None:
    report = json.loads(ok(run(memoria, "status", "--json")))
    assert (report["server"]["ready"], report["server"]["error"]) == (True, None)
    assert "repo:shop-api" in {ns["name"] for ns in report["server"]["namespaces"]}
    assert report["agents"][0]["agent"] == "claude-code"


def test_login_saves_a_key_only_the_user_can_read(memoria: Memoria, home: Path) -> None:
    key_file = home / "conf" / "memoria" / "key"
    out = ok(run(memoria, "login", "--key-file", str(key_file), stdin=memoria.key + "\n"))
    assert "saved the key" in out
    assert key_file.read_text().strip() == memoria.key
    assert key_file.stat().st_mode & 0o777 == 0o600
    refused = run(memoria, "login", "--key-file", str(home / "other"), stdin="mem_not-a-real-key\n")
    assert refused.exit_code == 1 and "API key was refused" in refused.output
    assert not (home / "other").exists()


def test_commands_use_the_key_file_when_no_key_is_set(memoria: Memoria, home: Path) -> None:
    key_file = home / "key"
    key_file.write_text(memoria.key)
    key_file.chmod(0o600)
    env = {"MEMORIA_CLIENT__URL": memoria.url, "MEMORIA_CLIENT__KEY_FILE": str(key_file), "COLUMNS": "200"}
    assert "repo:shop-api" in ok(CliRunner().invoke(main, ["status"], env=env))
    key_file.chmod(0o644)
    shared = CliRunner().invoke(main, ["status"], env=env)
    assert shared.exit_code == 1 and "readable by other users" in shared.output


def test_a_wrong_key_is_one_line_and_exit_1(memoria: Memoria) -> None:
    result = run(memoria, "list", key="mem_wrong")
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "Error: the API key was refused (invalid, revoked or expired API key)"
    ]


def test_a_stopped_server_is_one_clear_line_from_the_real_command(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORIA_")}
    url = f"http://127.0.0.1:{free_port()}"
    env |= {"MEMORIA_CLIENT__URL": url, "MEMORIA_CLIENT__API_KEY": "mem_x", "HOME": str(tmp_path)}
    done = subprocess.run(
        [MEMORIA, "recall", "anything"], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 1
    assert done.stderr.strip() == f"Error: cannot reach Memoria at {url} (is `memoria serve` running?)"
    assert done.stdout == ""


def test_no_key_anywhere_says_how_to_get_one(tmp_path: Path) -> None:
    env = {"MEMORIA_CLIENT__URL": "http://127.0.0.1:1", "MEMORIA_CLIENT__KEY_FILE": str(tmp_path / "none")}
    result = CliRunner().invoke(main, ["list"], env=env)
    assert result.exit_code == 1
    assert "no API key: set MEMORIA_CLIENT__API_KEY or save one with `memoria login`" in result.output
