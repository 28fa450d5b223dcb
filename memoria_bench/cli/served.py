"""`memoria bench soak`, `inference`, `mcp`, `capture`, `ingest` and `slow-clients`: the service as
clients meet it, each on a real `memoria serve` with its own scratch database."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click
from rich.console import Console

from app.cli import config
from memoria_bench.cli.common import (
    JSON_OPTION,
    SENTENCES_OPTION,
    count_label,
    on_scratch_database,
    save_report,
    sentences_file,
)


@click.command("soak")
@click.option("--minutes", type=click.FloatRange(min=0.05), default=30.0, show_default=True)
@click.option("--clients", type=click.IntRange(min=1), default=8, show_default=True)
@click.option(
    "--store-share", type=click.FloatRange(0, 1), default=0.2, show_default=True, help="Share of stores."
)
@click.option(
    "--preload", type=click.IntRange(min=0), default=1000, show_default=True, help="Memories stored first."
)
@click.option(
    "--warmup",
    type=click.FloatRange(min=0),
    default=60.0,
    show_default=True,
    help="Seconds before the server's memory growth is counted.",
)
@click.option(
    "--kill-postgres-at",
    type=click.FloatRange(min=0),
    help="kill -9 the embedded PostgreSQL once, this many seconds in.",
)
@SENTENCES_OPTION
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="The server's embedded PostgreSQL data (default: a temporary directory).",
)
@JSON_OPTION
def soak(
    minutes: float,
    clients: int,
    store_share: float,
    preload: int,
    warmup: float,
    kill_postgres_at: float | None,
    sentences: Path | None,
    data_dir: Path | None,
    json_out: Path | None,
) -> None:
    """A bounded mixed load (stores and recalls) on a real `memoria serve` with its own embedded
    PostgreSQL: p50/p95 per operation every minute, server memory growth, lost writes; with
    --kill-postgres-at, the recovery time and whether errors stayed inside the outage. Exits 1 when
    a target is not met."""
    from memoria_bench.soak import SoakOptions, bench_soak, print_summary

    corpus = sentences_file(sentences)
    config.settings()  # a bad setting is one line here, not a server that fails to start
    options = SoakOptions(
        duration_s=minutes * 60,
        clients=clients,
        store_share=store_share,
        preload=preload,
        warmup_s=warmup,
        kill_postgres_at_s=kill_postgres_at,
        sentences=corpus,
        data_dir=data_dir,
    )
    console = Console()
    report = asyncio.run(bench_soak(options, console))
    print_summary(report, console)
    save_report(report, json_out)
    if not all(check["met"] for check in report["targets"]):
        raise SystemExit(1)


@click.command("inference")
@click.option(
    "--others",
    type=click.IntRange(min=1),
    default=5_000,
    show_default=True,
    help="Memories the other tenant stores, each holding the probe word.",
)
@click.option(
    "--own", type=click.IntRange(min=1), default=200, show_default=True, help="The prober's memories."
)
@click.option("--rounds", type=click.IntRange(min=2), default=200, show_default=True, help="Timed rounds.")
@SENTENCES_OPTION
@JSON_OPTION
def inference(others: int, own: int, rounds: int, sentences: Path | None, json_out: Path | None) -> None:
    """What one tenant can infer about another through the API: recall timing of a word another
    tenant's memories hold vs words nobody has, and the ids seen around another tenant's stores."""
    from memoria_bench.inference import InferenceOptions, bench_inference, print_report

    corpus = sentences_file(sentences)
    options = InferenceOptions(others_memories=others, own_memories=own, rounds=rounds, sentences=corpus)
    on_scratch_database(
        lambda url: bench_inference(url, options, Console(stderr=True)), print_report, json_out
    )


@click.command("mcp")
@click.option("--memories", type=click.IntRange(min=1), default=2000, show_default=True, help="Corpus size.")
@click.option("--rounds", type=click.IntRange(min=2), default=300, show_default=True, help="Timed rounds.")
@SENTENCES_OPTION
@JSON_OPTION
def mcp(memories: int, rounds: int, sentences: Path | None, json_out: Path | None) -> None:
    """Recall through MCP vs REST, interleaved on one `memoria serve`: p50/p95 of each and what MCP
    adds; and the size of the tool definitions in tokens. Exits 1 when a target is not met."""
    from memoria_bench.mcp import McpBenchOptions, bench_mcp, print_report

    options = McpBenchOptions(sentences=sentences_file(sentences), memories=memories, rounds=rounds)
    report = on_scratch_database(
        lambda url: bench_mcp(url, options, Console(stderr=True)), print_report, json_out
    )
    if not all(check["met"] for check in report["targets"]):
        raise SystemExit(1)


@click.command("capture")
@click.option("--memories", type=click.IntRange(min=1), default=2000, show_default=True, help="Corpus size.")
@click.option("--pinned", type=click.IntRange(min=0), default=5, show_default=True, help="Pinned memories.")
@click.option("--runs", type=click.IntRange(min=2), default=30, show_default=True, help="Timed runs of each.")
@click.option("--warmup", type=click.IntRange(min=0), default=3, show_default=True, help="Untimed first.")
@click.option("--exchanges", type=click.IntRange(min=1), default=200, show_default=True, help="Delta size.")
@SENTENCES_OPTION
@JSON_OPTION
@click.option("--check", is_flag=True, help="Exit 1 when a target is missed.")
def capture(
    memories: int,
    pinned: int,
    runs: int,
    warmup: int,
    exchanges: int,
    sentences: Path | None,
    json_out: Path | None,
    check: bool,
) -> None:
    """What the capture and SessionStart hooks cost a session: the capture hook process on a
    200-exchange delta (and until it is stored), SessionStart end to end, the UserPromptSubmit endpoint."""
    from memoria_bench.capture import CaptureBenchOptions, bench_capture, print_report
    from memoria_bench.hook_latency import bench_hook_latency

    options = CaptureBenchOptions(
        sentences=sentences_file(sentences),
        memories=memories,
        pinned=pinned,
        runs=runs,
        warmup=warmup,
        exchanges=exchanges,
    )
    report = on_scratch_database(
        lambda url: bench_capture(url, options, Console(stderr=True), bench_hook_latency),
        print_report,
        json_out,
    )
    if check and not all(target["met"] for target in report["targets"]):
        raise SystemExit(1)


@click.command("ingest")
@click.option(
    "--memories", type=click.IntRange(min=1), default=5000, show_default=True, help="Memories stored."
)
@click.option(
    "--batch", type=click.IntRange(1, 100), default=100, show_default=True, help="Memories per request."
)
@click.option(
    "--concurrency", type=click.IntRange(min=1), default=2, show_default=True, help="Requests in flight."
)
@click.option(
    "--namespaces",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Namespaces the memories spread over (half in the first, the rest Zipf-like).",
)
@click.option(
    "--warmup-batches",
    type=click.IntRange(min=0),
    default=1,
    show_default=True,
    help="Untimed batches first.",
)
@click.option(
    "--drain-timeout",
    type=click.FloatRange(min=1),
    default=600.0,
    show_default=True,
    help="Seconds the stores' jobs may take to finish after the last answer.",
)
@click.option(
    "--poll-ms",
    type=click.FloatRange(min=5),
    default=50.0,
    show_default=True,
    help="How often the jobs table is read (the resolution of the job figures).",
)
@click.option(
    "--hosted-embedder-ms",
    type=click.FloatRange(min=0),
    help="Embed through a stand-in hosted embedding API on 127.0.0.1 that answers after this many ms "
    "(as in production, where the model runs elsewhere); default: the server's own embedder.",
)
@SENTENCES_OPTION
@JSON_OPTION
@click.option("--check", is_flag=True, help="Exit 1 when a target is missed.")
def ingest(
    memories: int,
    batch: int,
    concurrency: int,
    namespaces: int,
    warmup_batches: int,
    drain_timeout: float,
    poll_ms: float,
    hosted_embedder_ms: float | None,
    sentences: Path | None,
    json_out: Path | None,
    check: bool,
) -> None:
    """Batched stores over real HTTP on a `memoria serve` with its defaults (graph on): memories/s
    accepted and end to end (until the concept indexing they enqueued is done), and where the time
    goes: each store's Server-Timing phases and the worker's indexing time. Exits 1 when a request
    failed or the jobs did not finish."""
    from memoria_bench.ingest import IngestOptions, bench_ingest, print_report

    settings = config.settings()
    served = {
        "graph": settings.graph.enabled,
        "concept embeddings": settings.graph.concept_embeddings,
        "jobs.workers": settings.jobs.workers,
        "jobs.batch_size": settings.jobs.batch_size,
        "embeddings": f"{settings.embeddings.provider}/{settings.embeddings.local_runtime}"
        if hosted_embedder_ms is None
        else f"hosted stand-in answering after {hosted_embedder_ms:g} ms",
        "embeddings.onnx_threads": settings.embeddings.onnx_threads,
        "links.auto_supersede": settings.links.auto_supersede,
    }
    options = IngestOptions(
        sentences=sentences_file(sentences),
        memories=memories,
        batch=batch,
        concurrency=concurrency,
        namespaces=namespaces,
        warmup_batches=warmup_batches,
        drain_timeout_s=drain_timeout,
        poll_s=poll_ms / 1000.0,
        served=served,
        hosted_embedder_ms=hosted_embedder_ms,
        dimension=settings.embeddings.resolved_dimension,
    )
    report = on_scratch_database(
        lambda url: bench_ingest(url, options, Console(stderr=True)),
        print_report,
        json_out,
        f"{count_label(memories)}-memories",
    )
    if report["requests"]["errors"] or not report["jobs"]["drained"] or report["jobs"]["left"]["failed"]:
        raise SystemExit(1)
    if check and not all(target["met"] for target in report["targets"]):
        raise SystemExit(1)


@click.command("slow-clients")
@click.option(
    "--sockets", type=click.IntRange(min=1), default=20_000, show_default=True, help="Slow sockets opened."
)
@click.option(
    "--source",
    default="127.0.0.2",
    show_default=True,
    help="The address they come from (a loopback address other than the prober's 127.0.0.1).",
)
@click.option(
    "--hold", type=click.FloatRange(min=1), default=40.0, show_default=True, help="Seconds they are held."
)
@JSON_OPTION
def slow_clients(sockets: int, source: str, hold: float, json_out: Path | None) -> None:
    """A flood of slow-header sockets from one address against a real `memoria serve` (default
    connection limits): healthz and recall, probed from another address every 0.25 s on new
    connections, must answer within 1 s throughout, and the server must close every slow socket.
    Exits 1 when a target is not met."""
    from memoria_bench.slow_clients import SlowClientsOptions, bench_slow_clients, print_report

    options = SlowClientsOptions(sockets=sockets, source=source, hold_s=hold)
    report = on_scratch_database(
        lambda url: bench_slow_clients(url, options, Console(stderr=True)), print_report, json_out
    )
    if not all(check["met"] for check in report["targets"]):
        raise SystemExit(1)
