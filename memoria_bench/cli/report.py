"""`memoria bench report`: render `--json` reports into dated Markdown pages (`memoria_bench.pages`)."""

from __future__ import annotations

from pathlib import Path

import click

from memoria_bench.pages import ReportError, render_file

DEFAULT_OUT = Path("docs") / "benchmarks" / "reports"


@click.command("report")
@click.argument(
    "reports", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=DEFAULT_OUT,
    show_default=True,
    help="The folder the pages go to (created).",
)
def report(reports: tuple[Path, ...], out: Path) -> None:
    """Render each JSON report (written by a bench's --json) into a dated Markdown page: its
    provenance (command, commit, date, machine, load) and a table of its figures."""
    for path in reports:
        try:
            page = render_file(path, out)
        except ReportError as exc:
            raise click.ClickException(str(exc)) from exc
        click.echo(str(page))
