"""Links and validity from the terminal against a real `memoria serve`: `remember --supersedes`,
`link`, `unlink`, `links`, `recall` / `list` with `--include-superseded` and `--as-of`, and export /
import carrying validity and the links between the exported memories."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.test_client_cli import ok, run
from tests.test_hook_command import Memoria, start_memoria

pytestmark = pytest.mark.e2e

OLD = "Background jobs run on Celery with RabbitMQ as the broker"
NEW = "We moved background jobs to Dramatiq on Redis streams"


@pytest.fixture(scope="module")
def memoria(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memoria]:
    with start_memoria(tmp_path_factory.mktemp("links-cli")) as running:
        yield running


def _remembered(out: str) -> int:
    return int(out.split("#")[1].split()[0].rstrip(","))


def _remember(memoria: Memoria, content: str, namespace: str, *options: str) -> int:
    return _remembered(ok(run(memoria, "remember", content, "-n", namespace, *options)))


def _api(memoria: Memoria, method: str, path: str, **kwargs: Any) -> Any:
    answer = httpx.request(
        method,
        f"{memoria.url}{path}",
        headers={"Authorization": f"Bearer {memoria.key}"},
        timeout=60,
        **kwargs,
    )
    assert answer.is_success, answer.text
    return answer.json() if answer.content else None


def _listed(memoria: Memoria, namespace: str, *options: str) -> list[dict[str, Any]]:
    out = ok(run(memoria, "list", "-n", namespace, "--json", *options))
    return [json.loads(line) for line in out.splitlines()]


def test_remember_supersedes_and_recall_and_list_show_only_the_new_version_unless_asked(
    memoria: Memoria,
) -> None:
    old = _remember(memoria, OLD, "jobs")
    out = ok(run(memoria, "remember", NEW, "-n", "jobs", "--supersedes", str(old)))
    new = _remembered(out)
    assert out.strip() == f"remembered #{new} in jobs, superseding #{old}"
    assert [item["id"] for item in _listed(memoria, "jobs")] == [new]
    both = {item["id"]: item for item in _listed(memoria, "jobs", "--include-superseded")}
    assert both.keys() == {old, new} and both[old]["superseded_by"] == new
    piped = ok(run(memoria, "list", "-n", "jobs", "--include-superseded"))
    assert f"(superseded by #{new}) {OLD}" in piped

    table = ok(run(memoria, "recall", "Celery RabbitMQ broker", "-n", "jobs"))
    assert f"(replaces #{old}) {NEW}" in table and OLD not in table
    answer = json.loads(
        ok(run(memoria, "recall", "Celery RabbitMQ", "-n", "jobs", "--json", "--include-superseded"))
    )
    assert {hit["id"]: hit["superseded_by"] for hit in answer["results"]}[old] == new


def test_link_links_and_unlink(memoria: Memoria) -> None:
    problem = _remember(memoria, "CI fails with 'too many open files' on the integration suite", "ci")
    fix = _remember(memoria, "Raise ulimit -n to 65536 in the runner image", "ci")
    assert ok(run(memoria, "link", str(problem), "resolved-by", str(fix))).strip() == (
        f"linked #{problem} resolved-by #{fix}"
    )
    table = ok(run(memoria, "links", str(fix)))
    assert "resolved-by this" in table and str(problem) in table and "too many open files" in table
    listed = json.loads(ok(run(memoria, "links", str(problem), "--json")))
    assert [(x["kind"], x["direction"], x["memory"]["id"]) for x in listed["links"]] == [
        ("resolved-by", "out", fix)
    ]
    hits = json.loads(ok(run(memoria, "recall", "too many open files", "-n", "ci", "-l", "1", "--json")))
    assert [(hit["id"], hit["came_with"]) for hit in hits["results"]] == [(problem, None), (fix, problem)]
    assert ok(run(memoria, "unlink", str(problem), "resolved-by", str(fix))).strip() == (
        f"unlinked #{problem} resolved-by #{fix}"
    )
    assert ok(run(memoria, "links", str(problem))).strip() == f"#{problem} has no links"
    again = run(memoria, "unlink", str(problem), "resolved-by", str(fix))
    assert again.exit_code == 1
    assert again.output.strip() == f"Error: no link #{problem} resolved-by #{fix} (or it is not yours)"
    cycle = run(memoria, "link", str(fix), "see-also", str(fix))
    assert cycle.exit_code == 1 and "cannot be linked to itself" in cycle.output
    bad = run(memoria, "link", str(fix), "replaces", str(problem))
    assert bad.exit_code == 2 and "'replaces' is not one of" in bad.output


def test_as_of_answers_what_held_then(memoria: Memoria) -> None:
    old = _remember(memoria, "The on-call rotation is weekly", "oncall")
    new = _remember(memoria, "The on-call rotation is fortnightly", "oncall")
    _api(memoria, "PATCH", f"/v1/memories/{old}", json={"valid_from": "2026-01-01T00:00:00Z"})
    _api(memoria, "PATCH", f"/v1/memories/{new}", json={"valid_from": "2026-03-01T00:00:00Z"})
    ok(run(memoria, "link", str(new), "supersedes", str(old)))
    assert [item["id"] for item in _listed(memoria, "oncall", "--as-of", "2026-02-01T00:00:00Z")] == [old]
    assert [item["id"] for item in _listed(memoria, "oncall", "--as-of", "2026-02-01")] == [old]
    then = json.loads(
        ok(run(memoria, "recall", "on-call rotation", "-n", "oncall", "--as-of", "2026-02-01", "--json"))
    )
    assert [hit["id"] for hit in then["results"]] == [old]
    bad = run(memoria, "list", "--as-of", "last week")
    assert bad.exit_code == 2 and "not an ISO 8601 date or time" in bad.output


def test_export_and_import_carry_validity_and_links(memoria: Memoria, tmp_path: Path) -> None:
    first = _remember(memoria, "The staging database lives in eu-west-1", "exp-links")
    second = _remember(
        memoria, "The staging database moved to eu-central-1", "exp-links", "--supersedes", str(first)
    )
    problem = _remember(memoria, "Staging deploys time out at the migration step", "exp-links")
    fix = _remember(memoria, "Run staging migrations before the deploy, not during it", "exp-links")
    ok(run(memoria, "link", str(problem), "resolved-by", str(fix)))
    ok(run(memoria, "link", str(second), "see-also", str(problem)))
    dump = tmp_path / "links.jsonl"
    ok(run(memoria, "export", "-n", "exp-links", "-o", str(dump)))
    records = [json.loads(line) for line in dump.read_text().splitlines()]
    links = [record["link"] for record in records if "link" in record]
    memories = {record["id"]: record for record in records if "link" not in record}
    assert [(x["source"], x["kind"], x["target"]) for x in links] == [
        (second, "supersedes", first),
        (problem, "resolved-by", fix),
        (second, "see-also", problem),
    ]
    assert memories.keys() == {first, second, problem, fix}
    assert memories[first]["valid_to"] is not None and memories[second]["valid_to"] is None
    assert all(record["valid_from"] is not None for record in memories.values())

    out = ok(run(memoria, "import", str(dump), "--namespace", "exp-links-copy", "--batch-size", "3"))
    assert out.strip() == "imported 4 memories: 4 new, 0 already present; 3 links"
    copied = {item["content"]: item for item in _listed(memoria, "exp-links-copy", "--include-superseded")}
    new_first, new_second = copied[memories[first]["content"]], copied[memories[second]["content"]]
    assert new_first["superseded_by"] == new_second["id"] and new_first["valid_to"] is not None
    assert new_second["superseded_by"] is None and new_second["valid_to"] is None
    for original in memories.values():
        assert copied[original["content"]]["valid_from"] == original["valid_from"]
    assert [item["content"] for item in _listed(memoria, "exp-links-copy")].count(
        memories[first]["content"]
    ) == 0
    new_problem = copied[memories[problem]["content"]]["id"]
    problem_links = _api(memoria, "GET", f"/v1/memories/{new_problem}/links")["links"]
    assert sorted((x["kind"], x["direction"]) for x in problem_links) == [
        ("resolved-by", "out"),
        ("see-also", "in"),
    ]
    # undone after the import, the supersede gives the old version back, as where it came from
    ok(run(memoria, "unlink", str(new_second["id"]), "supersedes", str(new_first["id"])))
    assert _api(memoria, "GET", f"/v1/memories/{new_first['id']}")["valid_to"] is None

    again = ok(run(memoria, "import", str(dump), "--namespace", "exp-links-copy"))
    assert again.splitlines()[0] == "imported 4 memories: 0 new, 4 already present; 3 links"


def test_an_import_skips_and_reports_a_link_whose_memory_is_not_in_it(
    memoria: Memoria, tmp_path: Path
) -> None:
    dump = tmp_path / "partial.jsonl"
    lines = [
        {"link": {"source": 11, "kind": "supersedes", "target": 10}},
        {"link": {"source": 11, "kind": "see-also", "target": 99}},
        {"link": {"source": 10, "kind": "supersedes", "target": 11}},
        {
            "id": 10,
            "content": "The release train leaves on Tuesdays",
            "namespace": "imp-partial",
            "valid_to": "2026-06-01T00:00:00Z",
        },
        {"id": 11, "content": "The release train leaves on Thursdays", "namespace": "imp-partial"},
    ]
    dump.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = run(memoria, "import", str(dump))
    assert result.exit_code == 0, result.output
    assert "imported 2 memories: 2 new, 0 already present; 1 links" in result.output
    assert "skipped line 2: link 11 see-also 99: memory 99 is not in the import" in result.output
    assert "skipped line 3: link 10 supersedes 11: 409 Conflict:" in result.output
    assert "cycle" in result.output
    listed = _listed(memoria, "imp-partial", "--include-superseded")
    by_content = {item["content"]: item for item in listed}
    tuesdays = by_content["The release train leaves on Tuesdays"]
    assert tuesdays["superseded_by"] == by_content["The release train leaves on Thursdays"]["id"]
