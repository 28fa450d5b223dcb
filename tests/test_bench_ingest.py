"""`memoria bench ingest`: its bookkeeping (job batches read from the queue, the request split, the
batches sent) and one tiny run end to end against a real `memoria serve`.

No figure is asserted: speed is what the command prints. These tests check that the figures add up:
every memory sent is accounted for, every job the stores enqueued finished, every phase is there.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from app.graph import INDEX_JOB
from memoria_bench.cli import bench
from memoria_bench.corpus import SyntheticMemory
from memoria_bench.ingest.hosted import stand_in_vector
from memoria_bench.ingest.jobs import JobRow, JobWatch
from memoria_bench.ingest.load import StoreSample, batch_bodies, send_times
from memoria_bench.ingest.split import SPLIT_COLUMNS, STORE_PHASES, phase_split, request_split
from tests.test_bench_corpus import write_sentences

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _at(ms: float) -> datetime:
    return T0 + timedelta(milliseconds=ms)


def test_a_batch_runs_from_its_claim_until_the_first_read_that_no_longer_finds_it() -> None:
    watch = JobWatch((INDEX_JOB,), INDEX_JOB)
    claimed = _at(10)
    watch.observe(0.0, _at(0), [JobRow("queued", INDEX_JOB, None, 40)])
    watch.observe(
        0.05, _at(50), [JobRow("queued", INDEX_JOB, None, 8), JobRow("running", INDEX_JOB, claimed, 32)]
    )
    watch.observe(
        0.10, _at(100), [JobRow("running", INDEX_JOB, claimed, 32), JobRow("running", INDEX_JOB, _at(90), 8)]
    )
    last = watch.observe(0.15, _at(150), [JobRow("running", INDEX_JOB, _at(90), 8)])
    assert last.pending == 8 and watch.drained_after(0.0) is None
    watch.observe(0.20, _at(200), [])

    summary = watch.summary()
    # the first batch was seen until 100 ms and gone at 150: it ran 90..140 ms, 115 ms taken
    # the second one, claimed at 90 ms, seen at 100 and 150, gone at 200: 60..110 ms, 85 ms taken
    assert summary["batches_seen"] == 2 and summary["jobs_seen"] == 40
    assert summary["busy_s_bounds"] == [0.15, 0.25]
    assert summary["busy_s"] == pytest.approx(0.2)
    assert summary["per_job_ms"] == pytest.approx(5.0)
    assert summary["backlog_max"] == 40
    assert summary["left"] == {"queued": 0, "running": 0, "failed": 0}
    drained = watch.drained_after(0.12)
    assert drained is not None and drained.client_at == 0.20


def test_a_batch_still_running_at_the_last_read_is_not_timed_and_failed_jobs_are_left() -> None:
    watch = JobWatch((INDEX_JOB,), INDEX_JOB)
    watch.observe(
        0.0, _at(0), [JobRow("running", INDEX_JOB, _at(0), 4), JobRow("failed", INDEX_JOB, None, 1)]
    )
    summary = watch.summary()
    assert summary["batches_seen"] == 0 and summary["per_job_ms"] is None
    assert summary["left"] == {"queued": 0, "running": 4, "failed": 1}


def test_other_kinds_count_as_pending_but_only_the_timed_kind_is_timed() -> None:
    watch = JobWatch((INDEX_JOB, "embeddings.embed"), INDEX_JOB)
    watch.observe(0.0, _at(0), [JobRow("running", "embeddings.embed", _at(0), 3)])
    assert watch.observations[-1].pending == 3
    watch.observe(0.1, _at(100), [])
    assert watch.summary()["batches_seen"] == 0


def test_a_request_splits_into_its_phases_the_rest_of_the_app_and_what_was_outside() -> None:
    phases = {"auth": 1.0, "prepare": 2.0, "lookup": 3.0, "embed": 50.0, "sql": 20.0, "app": 80.0}
    split = request_split(phases, client_ms=85.0)
    assert split["other"] == pytest.approx(4.0) and split["outside"] == pytest.approx(5.0)
    assert set(split) == set(SPLIT_COLUMNS)

    samples = [
        StoreSample(size=10, status=201, client_ms=85.0, phases=phases),
        StoreSample(size=20, status=201, client_ms=85.0, phases=phases),
        StoreSample(size=10, status=503, client_ms=5.0, phases={"app": 5.0}, error="unavailable"),
    ]
    figures = phase_split(samples)
    assert figures["requests"] == 2  # a failed request says nothing about where a store's time goes
    assert figures["per_batch_ms"]["embed"] == 50.0
    assert figures["per_memory_ms"]["embed"] == pytest.approx(3.75)  # the median of 5.0 and 2.5
    assert figures["total_s"]["app"] == pytest.approx(0.16)
    assert sum(figures["share_of_app"].values()) == pytest.approx(1.0)
    assert phase_split([StoreSample(size=1, status=201, client_ms=1.0)]) == {}  # no Server-Timing


def test_batches_hold_every_memory_once_in_order() -> None:
    memories = [SyntheticMemory(f"memory {i}", "bench-main", "fact", ["work"], 0.5) for i in range(7)]
    bodies = batch_bodies(memories, 3)
    assert [len(body) for body in bodies] == [3, 3, 1]
    assert [item["content"] for body in bodies for item in body] == [m.content for m in memories]
    assert {item["namespace"] for body in batch_bodies(memories, 3, "warm") for item in body} == {"warm"}


def test_a_paced_load_sends_each_batch_once_the_memories_before_it_had_their_share_of_the_time() -> None:
    bodies: list[list[Any]] = [[{}] * 100, [{}] * 100, [{}] * 50, [{}] * 100]
    assert send_times(bodies, rate=300.0) == pytest.approx([0.0, 1 / 3, 2 / 3, 250 / 300])


@pytest.mark.e2e
def test_a_tiny_run_accounts_for_every_memory_job_and_phase(tmp_path: Path) -> None:
    out = tmp_path / "ingest.json"
    sentences = write_sentences(tmp_path / "sentences.txt")
    args = ["ingest", "--memories", "200", "--batch", "50", "--concurrency", "2"]
    args += ["--sentences", str(sentences), "--json", str(out)]
    result = CliRunner().invoke(bench, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())

    requests, memories, stored = report["requests"], report["memories"], report["stored"]
    assert requests["sent"] == requests["ok"] == 4 and requests["errors"] == 0
    assert requests["statuses"] == {"201": 4}
    assert memories["sent"] == memories["accepted"] == 200
    assert memories["new"] + memories["duplicates"] == 200
    assert stored["memories"] == memories["new"] and stored["embedded"] == memories["embedded"]
    assert 0 < stored["with_concepts"] <= stored["memories"] and stored["concepts"] > 0
    assert stored["embedding_models"] == "all-MiniLM-L6-v2"  # the served process's, as it recorded it

    jobs = report["jobs"]
    assert report["served"]["graph"] is True
    assert report["served"]["links.auto_supersede"] is True
    # end to end waits for every kind a store enqueues, term counting included
    assert set(jobs["kinds"]) == {"graph.index", "recall.term_counts", "embeddings.embed"}
    assert jobs["drained"] and jobs["left"] == {"queued": 0, "running": 0, "failed": 0}
    # per new memory one concept-indexing job and one term-counting job, nothing else
    assert jobs["enqueued"] == 2 * memories["new"]
    assert 0 <= jobs["jobs_seen"] <= jobs["enqueued"] and jobs["polls"] > 0
    low, high = jobs["busy_s_bounds"]
    assert low <= jobs["busy_s"] <= high

    rates = report["throughput"]
    assert rates["http_s"] <= rates["end_to_end_s"] and rates["drain_tail_s"] >= 0
    assert rates["end_to_end_per_s"] <= rates["accepted_per_s"]

    split = report["split"]
    assert split["requests"] == 4
    for view in ("per_batch_ms", "per_memory_ms", "total_s"):
        assert set(split[view]) == set(SPLIT_COLUMNS)
    for phase in ("auth", "embed", "sql", "app"):
        assert split["per_batch_ms"][phase] > 0, phase  # the phase was recorded, whatever it took
    assert set(split["share_of_app"]) == {*STORE_PHASES, "other"}

    machine = report["machine"]
    assert len(machine["loadavg_start"]) == len(machine["loadavg_end"]) == 3
    assert [t["target"].split(" >=")[0] for t in report["targets"]] == [
        "accepted over HTTP",
        "end to end (graph indexed)",
    ]
    assert "memoria bench ingest: 200 of 200 memories accepted" in result.output
    assert "graph indexing (worker)" in result.output and "load average" in result.output


@pytest.mark.e2e
def test_with_the_hosted_stand_in_the_server_embeds_over_http_and_stores_every_vector(tmp_path: Path) -> None:
    out = tmp_path / "hosted.json"
    sentences = write_sentences(tmp_path / "sentences.txt")
    args = ["ingest", "--memories", "100", "--batch", "50", "--warmup-batches", "0"]
    args += ["--hosted-embedder-ms", "5", "--sentences", str(sentences), "--json", str(out)]
    result = CliRunner().invoke(bench, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["served"]["embeddings"] == "hosted stand-in answering after 5 ms"
    assert report["options"]["hosted_embedder_ms"] == 5
    assert report["memories"]["accepted"] == report["stored"]["embedded"] == 100
    assert report["jobs"]["drained"] and report["jobs"]["left"]["failed"] == 0


def test_the_stand_in_answers_unit_vectors_that_depend_on_the_text_alone() -> None:
    first, again, other = (stand_in_vector(t, 384) for t in ("a", "a", "b"))
    assert first == again and first != other
    assert sum(x * x for x in first) == pytest.approx(1.0)
