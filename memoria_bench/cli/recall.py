"""`memoria bench extraction`, `quality` and `latency`: what recall finds, and what it and the concept
extraction cost, each on a scratch database loaded through the real store path."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import click
from rich.console import Console

from app.cli import config
from app.embeddings import build_embedder
from memoria_bench.cli.common import (
    DATA_OPTION,
    JSON_OPTION,
    SENTENCES_OPTION,
    bench_config,
    count_label,
    run_on_scratch,
    run_provenance,
    save_report,
    sentences_file,
)
from memoria_bench.modes import ALL
from memoria_bench.provenance import PROVENANCE
from memoria_bench.scratch import scratch_database, scratch_server


@click.command("extraction")
@DATA_OPTION
@click.option("--corpus", type=click.Choice(["turns", "facts"]), default="turns", show_default=True)
@click.option("--limit", default=1000, show_default=True, help="Memories to time.")
@JSON_OPTION
def extraction(data: Path, corpus: str, limit: int, json_out: Path | None) -> None:
    """Per-memory cost of concept extraction, alone and with its database writes."""
    from memoria_bench.extraction import bench_extraction

    report = run_on_scratch(
        lambda sections, embedder, db, user_id: bench_extraction(
            sections, embedder, db, user_id, data, corpus, limit
        )
    )
    click.echo(json.dumps(report, indent=2))
    save_report(report, json_out, f"{data.name}-{corpus}")


@click.command("quality")
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
@click.option(
    "--systems",
    default="",
    help="Comma-separated systems to run, e.g. all,all+rerank (default: every one): a run that needs "
    "two systems need not pay for the rest. Sweeps (--graph-weights, --leg-depths) always run.",
)
@click.option(
    "--per-query",
    "per_query_out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write every system's R@10, R@1 and MRR per query, for `memoria bench compare` against "
    "another run (another embedder or embedding input: what one run cannot hold as two systems).",
)
@click.option(
    "--floor",
    is_flag=True,
    help="Instead of the modes: the prompt hook's relevance floor (MEMORIA_HOOKS__MIN_SIMILARITY, "
    "MIN_LEXICAL_SCORE), recall of the questions with and without it (paired CIs of R@10, R@1, MRR) "
    "and how many unrelated prompts it leaves without context.",
)
@click.option(
    "--floor-sweep",
    default="",
    help="With --floor, more floors to try, comma-separated: a similarity, or similarity/lexical "
    "score (e.g. 0.25,0.3/0.1; '-' for a bar off, as in -/0.1).",
)
def quality(
    data: Path,
    corpus: str | None,
    json_out: Path | None,
    graph_weights: str,
    leg_depths: str,
    systems: str,
    per_query_out: Path | None,
    floor: bool,
    floor_sweep: str,
) -> None:
    """Load a corpus through the real store path into a scratch database and score recall in each
    mode: lexical, dense, graph, lexical+dense and all (every leg, the configured defaults), and all
    fused by normalised scores instead of ranks, and all with shape-aware fusion (leg weights by the
    query's shape) switched the other way than configured, and all with its top candidates
    re-ordered by the packaged re-ranker (all+rerank). With --floor, the hook's relevance floor
    instead."""
    from memoria_bench.quality import PER_QUERY, bench_quality, known_systems, print_report

    corpus = corpus or ("facts" if (data / "facts.jsonl").is_file() else "turns")
    for needed in (f"{corpus}.jsonl", f"qrels_{corpus}.jsonl", "queries.jsonl"):
        if not (data / needed).is_file():
            raise click.BadParameter(f"{data} has no {needed}", param_hint="--data/--corpus")
    if floor or floor_sweep:
        _floor(data, corpus, json_out, floor_sweep)
        return

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
    only = frozenset(name.strip() for name in systems.split(",") if name.strip()) or None
    if only is not None and (unknown := sorted(only - known_systems())):
        raise click.BadParameter(
            f"unknown systems {', '.join(unknown)}; known: {', '.join(sorted(known_systems()))}",
            param_hint="--systems",
        )
    report = run_on_scratch(
        lambda sections, embedder, db, user_id: bench_quality(
            sections, embedder, db, user_id, data, corpus, sweep, depths, only
        )
    )
    per_query = report.pop(PER_QUERY)
    print_report(report, Console(width=140))
    save_report(report, json_out, f"{data.name}-{corpus}")
    if per_query_out is not None:
        label = f"{data.name}-{corpus}"
        per_query_out.write_text(
            json.dumps({"corpus": label, **per_query, PROVENANCE: run_provenance(label)}, default=str)
        )
        click.echo(f"wrote {per_query_out}", err=True)


@click.command("compare")
@click.argument("after", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("before", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--system", "system_after", default=ALL, show_default=True, help="The system of AFTER.")
@click.option("--before-system", "system_before", help="The system of BEFORE (default: --system).")
@JSON_OPTION
def compare_runs(
    after: Path, before: Path, system_after: str, system_before: str | None, json_out: Path | None
) -> None:
    """Paired bootstrap CIs of R@10, R@1 and MRR between two `bench quality --per-query` files of one
    corpus (AFTER - BEFORE), overall and per stratum."""
    from memoria_bench.compare import CompareError, compare, print_comparison, read_per_query

    try:
        report = compare(
            read_per_query(after), read_per_query(before), system_after, system_before or system_after
        )
    except CompareError as exc:
        raise click.UsageError(str(exc)) from exc
    print_comparison(report, Console(width=160))
    names = (path.name.removesuffix(".json").removesuffix(".pq") for path in (after, before))
    save_report(report, json_out, f"{'-vs-'.join(names)}-{report['after']}")


def _floor(data: Path, corpus: str, json_out: Path | None, floor_sweep: str) -> None:
    """`quality --floor`: the relevance floor's figures (`memoria_bench.floor`)."""
    from memoria_bench.floor import bench_floor, parse_floors, print_floor_report

    try:
        sweep = parse_floors(floor_sweep)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--floor-sweep") from exc
    report = run_on_scratch(
        lambda sections, embedder, db, user_id: bench_floor(
            sections, embedder, db, user_id, data, corpus, sweep
        )
    )
    print_floor_report(report, Console(width=200))
    save_report(report, json_out, f"{data.name}-{corpus}-floor")


@click.command("latency")
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
    help="Queries for the HNSW recall@10 (fewer widen its confidence interval).",
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
    help="Also time the biggest of the other namespaces (a smaller share of the corpus): its "
    "text matches are read namespace by namespace, the big scope's table-wide.",
)
@click.option(
    "--whole-scope",
    is_flag=True,
    help="Also time a recall across every namespace of the user's at once (no namespace named).",
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
    whole_scope: bool,
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
    corpus = sentences_file(sentences)
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
        whole_scope=whole_scope,
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
    save_report(report, json_out, f"{count_label(memories)}-memories")
