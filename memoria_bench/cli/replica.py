"""`memoria bench replica`: recall with and without a streaming replica, and its lag under ingest."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from app.cli import config
from memoria_bench.cli.common import JSON_OPTION, SENTENCES_OPTION, count_label, save_report, sentences_file


@click.command("replica")
@click.option("--memories", type=click.IntRange(min=1), default=2000, show_default=True, help="Corpus size.")
@click.option(
    "--requests", type=click.IntRange(min=1), default=400, show_default=True, help="Recalls per concurrency."
)
@click.option(
    "--ingest-memories",
    type=click.IntRange(min=1),
    default=6000,
    show_default=True,
    help="Memories stored while the replica's lag is sampled.",
)
@click.option(
    "--ingest-clients",
    type=click.IntRange(min=1),
    default=4,
    show_default=True,
    help="Store requests in flight.",
)
@click.option(
    "--ingest-rate",
    type=click.FloatRange(min=0),
    default=300.0,
    show_default=True,
    help="Memories per second the ingest sends while the lag is sampled; 0: as fast as the service "
    "takes them.",
)
@click.option(
    "--ryw-rounds",
    type=click.IntRange(min=1),
    default=30,
    show_default=True,
    help="Read-your-writes rounds: store a memory, recall it at once, recall it again --ryw-gap later.",
)
@click.option(
    "--ryw-gap",
    type=click.FloatRange(min=0),
    default=1.0,
    show_default=True,
    help="Seconds between a round's two recalls.",
)
@SENTENCES_OPTION
@JSON_OPTION
def replica(
    memories: int,
    requests: int,
    ingest_memories: int,
    ingest_clients: int,
    ingest_rate: float,
    ryw_rounds: int,
    ryw_gap: float,
    sentences: Path | None,
    json_out: Path | None,
) -> None:
    """Recall p50/p95 and throughput at concurrency 1 and 8 over HTTP on a real `memoria serve`, with
    every read on the primary, then with the read URL on a streaming replica of it (pg_basebackup -R);
    then the replica's lag, sampled every 100 ms, while batches of 100 are stored at `--ingest-rate`
    memories/s (or as fast as the service takes them)."""
    from memoria_bench.replica import ReplicaBenchOptions, bench_replica, print_report

    settings = config.settings()
    options = ReplicaBenchOptions(
        sentences=sentences_file(sentences),
        shared_buffers=settings.database.embedded_shared_buffers,
        dimension=settings.embeddings.resolved_dimension,
        memories=memories,
        requests=requests,
        ingest_memories=ingest_memories,
        ingest_clients=ingest_clients,
        ingest_rate=ingest_rate or None,
        ryw_rounds=ryw_rounds,
        ryw_gap_s=ryw_gap,
    )
    report = bench_replica(options, Console(stderr=True))
    print_report(report, Console(width=140))
    save_report(report, json_out, f"{count_label(memories)}-memories")
