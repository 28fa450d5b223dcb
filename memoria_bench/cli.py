"""`memoria bench …` commands: load the settings once, hand the benchmarks the sections they use.

The group reaches `memoria` through the `memoria.commands` entry point (`app.cli.plugins`): the
bench imports the app, never the reverse. The benchmark code never reads the environment; these
commands build its `BenchConfig`, the embedder and the scratch database it runs in.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from app.cli import config
from app.client.api import api_key
from app.client.namespace import namespace_for_cwd
from app.db import Database
from app.embeddings import Embedder, build_embedder
from app.settings import Settings
from memoria_bench.config import BenchConfig
from memoria_bench.hook_latency import COLUMNS, BenchFailed, bench_hook_latency
from memoria_bench.scratch import bench_user, open_database, scratch_database, scratch_server


@click.group()
def bench() -> None:
    """Benchmarks that print figures (quality, latency)."""


def bench_config(settings: Settings) -> BenchConfig:
    """The sections of `settings` the benchmarks run the product with."""
    return BenchConfig(
        database=settings.database, memories=settings.memories, recall=settings.recall, graph=settings.graph
    )


DATA_OPTION = click.option(
    "--data",
    "data",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    required=True,
    help="A folder in the locomo-dev format.",
)

SENTENCES_OPTION = click.option(
    "--sentences",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="persona-sentences/sentences.txt (default: ../shared/bench/… beside the repo).",
)
JSON_OPTION = click.option(
    "--json", "json_out", type=click.Path(dir_okay=False, path_type=Path), help="Also write JSON."
)

Work = Callable[[BenchConfig, Embedder, Database, int], Awaitable[dict[str, Any]]]


def run_on_scratch(work: Work) -> dict[str, Any]:
    """Run `work` against a fresh, migrated scratch database with a bench user and loaded embedder."""
    settings = config.settings()
    embedder = build_embedder(settings.embeddings)
    sections = bench_config(settings)

    async def run(url: str) -> dict[str, Any]:
        await embedder.load()
        user_id = await bench_user(url)
        async with open_database(url, sections.database) as db:
            return await work(sections, embedder, db, user_id)

    with (
        scratch_server(settings.database.embedded_shared_buffers) as admin_url,
        scratch_database(admin_url, embedder.dimension) as (url, _),
    ):
        return asyncio.run(run(url))


def _corpus(sentences: Path | None) -> Path:
    """`--sentences`, else the persona sentences beside the repository; a missing file is a usage error."""
    from memoria_bench.latency import DEFAULT_SENTENCES

    corpus = sentences or DEFAULT_SENTENCES
    if not corpus.is_file():
        raise click.BadParameter(f"{corpus} does not exist", param_hint="--sentences")
    return corpus


def _save(report: dict[str, Any], json_out: Path | None) -> None:
    """`--json`: the report as JSON, where asked (values JSON has no type for, such as dates, as text)."""
    if json_out is not None:
        json_out.write_text(json.dumps(report, indent=2, default=str))
        click.echo(f"wrote {json_out}", err=True)


def _on_scratch_database(
    run: Callable[[str], Coroutine[Any, Any, dict[str, Any]]],
    print_report: Callable[[dict[str, Any], Console], None],
    json_out: Path | None,
) -> dict[str, Any]:
    """Run a bench against a scratch embedded server and database (dropped after), print its
    report and `_save` it: the tail every bench that owns its database shares."""
    settings = config.settings()
    embedder = build_embedder(settings.embeddings)
    with (
        scratch_server(settings.database.embedded_shared_buffers) as admin_url,
        scratch_database(admin_url, embedder.dimension) as (url, _),
    ):
        report = asyncio.run(run(url))
    print_report(report, Console(width=140))
    _save(report, json_out)
    return report


@bench.command("extraction")
@DATA_OPTION
@click.option("--corpus", type=click.Choice(["turns", "facts"]), default="turns", show_default=True)
@click.option("--limit", default=1000, show_default=True, help="Memories to time.")
def extraction(data: Path, corpus: str, limit: int) -> None:
    """Per-memory cost of concept extraction, alone and with its database writes."""
    from memoria_bench.extraction import bench_extraction

    report = run_on_scratch(
        lambda sections, embedder, db, user_id: bench_extraction(
            sections, embedder, db, user_id, data, corpus, limit
        )
    )
    click.echo(json.dumps(report, indent=2))


@bench.command("quality")
@DATA_OPTION
@click.option(
    "--corpus",
    type=click.Choice(["turns", "facts"]),
    help="Which memories to load; default: facts if the folder has them (LoCoMo), else turns (LongMemEval).",
)
@JSON_OPTION
@click.option(
    "--graph-weights",
    default="",
    help="Comma-separated graph-leg weights to sweep, e.g. 0.25,0.5,1,2: each adds a system "
    "all@graph=<w>, compared with lexical+dense.",
)
@click.option(
    "--leg-depths",
    default="",
    help="Comma-separated leg depths to try, e.g. 30,40: each adds a system all@depth=<d>, every leg "
    "reading d candidates, compared with all at the configured depth.",
)
def quality(
    data: Path, corpus: str | None, json_out: Path | None, graph_weights: str, leg_depths: str
) -> None:
    """Load a corpus through the real store path into a scratch database and score recall in each
    mode: lexical, dense, graph, lexical+dense and all (every leg, the configured defaults), and all
    fused by normalised scores instead of ranks."""
    from memoria_bench.quality import bench_quality, print_report

    corpus = corpus or ("facts" if (data / "facts.jsonl").is_file() else "turns")
    for needed in (f"{corpus}.jsonl", f"qrels_{corpus}.jsonl", "queries.jsonl"):
        if not (data / needed).is_file():
            raise click.BadParameter(f"{data} has no {needed}", param_hint="--data/--corpus")

    try:
        sweep = [float(w) for w in graph_weights.split(",") if w.strip()]
    except ValueError as exc:
        raise click.BadParameter(f"not a list of numbers: {graph_weights!r}") from exc
    try:
        depths = [int(d) for d in leg_depths.split(",") if d.strip()]
        if any(not 1 <= d <= 1000 for d in depths):
            raise ValueError(leg_depths)
    except ValueError as exc:
        raise click.BadParameter(
            f"whole numbers from 1 to 1000: {leg_depths!r}", param_hint="--leg-depths"
        ) from exc
    report = run_on_scratch(
        lambda sections, embedder, db, user_id: bench_quality(
            sections, embedder, db, user_id, data, corpus, sweep, depths
        )
    )
    print_report(report, Console(width=140))
    _save(report, json_out)


@bench.command("latency")
@click.option("--memories", type=click.IntRange(min=1), default=100_000, show_default=True)
@click.option(
    "--namespaces",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="Half the memories go to the first, the rest spread Zipf-like over the others.",
)
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Keep the embedded PostgreSQL here, so a re-run skips loading.",
)
@click.option(
    "--requests",
    type=click.IntRange(min=1),
    default=300,
    show_default=True,
    help="Measured requests per mode, scope and concurrency.",
)
@click.option("--concurrency", default="1,8", show_default=True, help="Comma-separated levels.")
@click.option(
    "--hnsw-queries",
    type=click.IntRange(min=1),
    default=1000,
    show_default=True,
    help="Queries for the HNSW recall@10 (fewer leave it within about ±0.01 only).",
)
@SENTENCES_OPTION
@click.option(
    "--concepts",
    is_flag=True,
    help="Also extract the concept graph, as the store route does (slow on big corpora).",
)
@click.option(
    "--bulk",
    is_flag=True,
    help="Load with COPY: the store path's checks, the model in large batches, the vector and text "
    "indexes built after a big load (for a million memories); concepts as the store route indexes them.",
)
@click.option(
    "--cache-warmup",
    type=click.IntRange(min=0),
    default=300,
    show_default=True,
    help="Untimed recalls per scope first, so a just-started PostgreSQL has its pages in memory.",
)
@click.option(
    "--mid-scope",
    is_flag=True,
    help="Also time the biggest of the other namespaces (17.7% of the corpus with 10 namespaces): its "
    "text matches are read namespace by namespace, the big scope's table-wide.",
)
@click.option("--explain", "show_plans", is_flag=True, help="Print the EXPLAIN ANALYZE plans in full.")
@JSON_OPTION
def latency(
    memories: int,
    namespaces: int,
    data_dir: Path | None,
    requests: int,
    concurrency: str,
    hnsw_queries: int,
    sentences: Path | None,
    concepts: bool,
    bulk: bool,
    cache_warmup: int,
    mid_scope: bool,
    show_plans: bool,
    json_out: Path | None,
) -> None:
    """Load a realistic corpus through the real store path; print recall latency (modes lexical,
    lexical+dense and all, every leg) and HNSW recall@10."""
    from memoria_bench.latency import LatencyOptions, bench_latency, print_report

    try:
        levels = tuple(int(level) for level in concurrency.split(","))
        if min(levels) < 1:
            raise ValueError(concurrency)
    except ValueError as exc:
        raise click.BadParameter("integers ≥ 1, comma-separated: 1,8", param_hint="--concurrency") from exc
    corpus = _corpus(sentences)
    options = LatencyOptions(
        memories=memories,
        namespaces=namespaces,
        requests=requests,
        concurrency=levels,
        hnsw_queries=hnsw_queries,
        sentences=corpus,
        concepts=concepts,
        bulk=bulk,
        cache_warmup=cache_warmup,
        mid_scope=mid_scope,
    )
    settings = config.settings()
    embedder = build_embedder(settings.embeddings)
    with (
        scratch_server(settings.database.embedded_shared_buffers, data_dir) as admin_url,
        scratch_database(admin_url, embedder.dimension, name="bench_latency") as (url, _),
    ):
        report = asyncio.run(
            bench_latency(url, bench_config(settings), embedder, options, Console(stderr=True))
        )
    print_report(report, Console(), show_plans)
    _save(report, json_out)


@bench.command("soak")
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

    corpus = _corpus(sentences)
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
    _save(report, json_out)
    if not all(check["met"] for check in report["targets"]):
        raise SystemExit(1)


@bench.command("secrets")
@click.option("--seed", type=int, default=16, show_default=True, help="Seed of the generated corpus.")
@click.option("--secrets", "n_secrets", type=click.IntRange(min=1), default=264, show_default=True)
@click.option("--lookalikes", type=click.IntRange(min=1), default=200, show_default=True)
@click.option(
    "--long-memories",
    type=click.IntRange(min=1),
    default=200,
    show_default=True,
    help="~4,000-character memories timed (half hold a credential).",
)
@click.option(
    "--repeat", type=click.IntRange(min=1), default=5, show_default=True, help="Runs per memory (median)."
)
@JSON_OPTION
def secrets(
    seed: int, n_secrets: int, lookalikes: int, long_memories: int, repeat: int, json_out: Path | None
) -> None:
    """Credential detection on a generated corpus (fake credentials of every kind in memory-like
    sentences, and look-alikes that are not credentials): recall per kind, false positive rate, and
    the time redaction (and sealing) adds per memory. No database. Exits 1 when a target is not met."""
    from memoria_bench.secrets import SecretsBenchOptions, bench_secrets, print_report

    options = SecretsBenchOptions(
        seed=seed, secrets=n_secrets, lookalikes=lookalikes, long_memories=long_memories, repeat=repeat
    )
    report = bench_secrets(options)
    print_report(report, Console(width=140))
    _save(report, json_out)
    if not all(check["met"] for check in report["targets"]):
        raise SystemExit(1)


@bench.command("inference")
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

    corpus = _corpus(sentences)
    options = InferenceOptions(others_memories=others, own_memories=own, rounds=rounds, sentences=corpus)
    _on_scratch_database(
        lambda url: bench_inference(url, options, Console(stderr=True)), print_report, json_out
    )


@bench.command("mcp")
@click.option("--memories", type=click.IntRange(min=1), default=2000, show_default=True, help="Corpus size.")
@click.option("--rounds", type=click.IntRange(min=2), default=300, show_default=True, help="Timed rounds.")
@SENTENCES_OPTION
@JSON_OPTION
def mcp(memories: int, rounds: int, sentences: Path | None, json_out: Path | None) -> None:
    """Recall through MCP vs REST, interleaved on one `memoria serve`: p50/p95 of each and what MCP
    adds; and the size of the tool definitions in tokens. Exits 1 when a target is not met."""
    from memoria_bench.mcp import McpBenchOptions, bench_mcp, print_report

    options = McpBenchOptions(sentences=_corpus(sentences), memories=memories, rounds=rounds)
    report = _on_scratch_database(
        lambda url: bench_mcp(url, options, Console(stderr=True)), print_report, json_out
    )
    if not all(check["met"] for check in report["targets"]):
        raise SystemExit(1)


@bench.command("capture")
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
        sentences=_corpus(sentences),
        memories=memories,
        pinned=pinned,
        runs=runs,
        warmup=warmup,
        exchanges=exchanges,
    )
    report = _on_scratch_database(
        lambda url: bench_capture(url, options, Console(stderr=True), bench_hook_latency),
        print_report,
        json_out,
    )
    if check and not all(target["met"] for target in report["targets"]):
        raise SystemExit(1)


@bench.command("ingest")
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
    }
    options = IngestOptions(
        sentences=_corpus(sentences),
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
    report = _on_scratch_database(
        lambda url: bench_ingest(url, options, Console(stderr=True)), print_report, json_out
    )
    if report["requests"]["errors"] or not report["jobs"]["drained"] or report["jobs"]["left"]["failed"]:
        raise SystemExit(1)
    if check and not all(target["met"] for target in report["targets"]):
        raise SystemExit(1)


@bench.command("hook")
@click.option("--url", help="Server base URL (default: MEMORIA_CLIENT__URL).")
@click.option("--key", help="API key (default: MEMORIA_CLIENT__API_KEY or the key file).")
@click.option("--namespace", help="Recall from this namespace (default: the one of --cwd, worked out here).")
@click.option("--cwd", default=os.getcwd, show_default="current directory", help="The session's directory.")
@click.option("--runs", type=click.IntRange(2, 10_000), default=30, show_default=True)
@click.option("--warmup", type=click.IntRange(0, 100), default=3, show_default=True)
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path), help="Also write JSON.")
def bench_hook(
    url: str | None,
    key: str | None,
    namespace: str | None,
    cwd: str,
    runs: int,
    warmup: int,
    json_out: Path | None,
) -> None:
    """p50/p95 of the hook endpoint and of the command hook process, server up and down."""
    client = config.settings().client
    url = (url or client.url).rstrip("/")
    namespace = namespace or namespace_for_cwd(cwd, client.namespace_map, client.default_namespace)
    try:
        rows = bench_hook_latency(url, key or api_key(client), cwd, namespace, runs, warmup)
    except BenchFailed as exc:
        raise click.ClickException(str(exc)) from exc
    table = Table(title=f"memoria bench hook: {url}")
    for column in COLUMNS:
        table.add_column(column, justify="left" if column in ("measure", "note") else "right")
    for row in rows:
        table.add_row(*(str(row[column]) for column in COLUMNS))
    Console().print(table)
    sys.stdout.flush()
    if json_out is not None:
        json_out.write_text(json.dumps(rows, indent=2) + "\n")
        click.echo(f"wrote {json_out}", err=True)
