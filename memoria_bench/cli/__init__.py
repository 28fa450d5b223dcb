"""`memoria bench …`: load the settings once, hand the benchmarks the sections they use.

The group reaches `memoria` through the `memoria.commands` entry point (`app.cli.plugins`): the
bench imports the app, never the reverse. The benchmark code never reads the environment; these
commands build its `BenchConfig`, the embedder and the scratch database it runs in. One module per
family of commands; what they share (options, the scratch database, `--json` with provenance) is
`memoria_bench.cli.common`.
"""

from __future__ import annotations

import click

from memoria_bench.cli.common import START_KEY
from memoria_bench.cli.concepts import concepts
from memoria_bench.cli.hook import bench_hook
from memoria_bench.cli.recall import compare_runs, extraction, latency, quality
from memoria_bench.cli.redaction import secrets
from memoria_bench.cli.replica import replica
from memoria_bench.cli.report import report
from memoria_bench.cli.served import capture, inference, ingest, mcp, slow_clients, soak
from memoria_bench.cli.session import session
from memoria_bench.cli.supersede import supersede
from memoria_bench.cli.usage import usage
from memoria_bench.provenance import Start


@click.group()
@click.pass_context
def bench(ctx: click.Context) -> None:
    """Benchmarks of recall quality, latency and the service's costs; `--json` writes a report that
    `memoria bench report` renders into a dated page (docs/benchmarks/reports/)."""
    ctx.meta[START_KEY] = Start()


for _command in (
    extraction,
    quality,
    compare_runs,
    latency,
    soak,
    secrets,
    inference,
    mcp,
    capture,
    ingest,
    slow_clients,
    bench_hook,
    session,
    supersede,
    concepts,
    usage,
    replica,
    report,
):
    bench.add_command(_command)
