"""`memoria bench concepts`: concept precision on the labelled dev sample (no database)."""

from __future__ import annotations

from pathlib import Path

import click

from memoria_bench.cli.common import JSON_OPTION, save_report


@click.command("concepts")
@JSON_OPTION
def concepts(json_out: Path | None) -> None:
    """Share of extracted concepts that are specific (not an everyday word or a fragment), before
    issue 38's extraction and now, on the labelled sample shipped beside the bench; concepts the
    labels do not cover are listed (label them, README.md's rule, before trusting the figure)."""
    from memoria_bench.concepts import bench_concepts

    report = bench_concepts()
    for name in ("before", "now"):
        f = report[name]
        low, high = f["ci95"]
        click.echo(
            f"{name:6}  {f['specific']}/{f['labelled']} specific = {f['precision']:.3f} "
            f"(95% CI {low:.3f}-{high:.3f}); unlabelled: {len(f['unlabelled'])}"
        )
        if f["unlabelled"]:
            click.echo(f"        unlabelled: {', '.join(f['unlabelled'])}")
    save_report(report, json_out, "concepts")
