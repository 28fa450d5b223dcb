"""`memoria capture off|on|flush`: keep a project out of capture, let it back in, send the spool now.

The capture hook itself (`memoria_hook_client.capture_worker`) checks for the `.memoria-no-capture` file these
commands write, and flushes the same spool; this module only gives a person a way to do it by hand
and see what happened.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from memoria_hook_client.capture_worker import NO_CAPTURE_FILE, capture_off_reason, record_flush
from memoria_hook_client.handoff import ENV_CAPTURE
from memoria_hook_client.namespace import git_root
from memoria_hook_client.spool import flush as flush_spool
from memoria_hook_client.state import spool_path

FLUSH_BUDGET_S = 120.0
MARKER_TEXT = (
    "# Memoria: the capture hooks store no exchanges of Claude Code sessions in this project.\n"
    "# Remove this file (or run `memoria capture on`) to capture again.\n"
)

_project_dir = click.option(
    "--project-dir",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    default=Path("."),
    show_default=True,
    help="A directory of the project; the file goes to its git root (else to this directory).",
)


def _root(project_dir: Path) -> Path:
    directory = project_dir.resolve()
    root = git_root(str(directory))
    return Path(root) if root else directory


@click.group()
def capture() -> None:
    """Capture of Claude Code sessions: turn it off or on per project, flush the local spool."""


@capture.command()
@_project_dir
def off(project_dir: Path) -> None:
    """Store no exchanges of sessions in this project (writes .memoria-no-capture at its git root)."""
    marker = _root(project_dir) / NO_CAPTURE_FILE
    if marker.exists():
        click.echo(f"Capture is already off here: {marker} exists.")
        return
    marker.write_text(MARKER_TEXT, encoding="utf-8")
    click.echo(
        f"Capture off: wrote {marker}. Commit it to turn capture off for everyone, or ignore it in git."
    )


@capture.command()
@_project_dir
def on(project_dir: Path) -> None:
    """Capture sessions in this project again (removes .memoria-no-capture)."""
    directory = project_dir.resolve()
    removed = []
    for place in dict.fromkeys((_root(project_dir), directory)):
        marker = place / NO_CAPTURE_FILE
        if marker.exists():
            marker.unlink()
            removed.append(marker)
    for marker in removed:
        click.echo(f"Capture on: removed {marker}.")
    if not removed:
        click.echo("Capture was not turned off by a file here.")
    still_off = capture_off_reason(os.environ, str(directory))
    if still_off:
        click.echo(
            f"Still off: {still_off}" + (f" (unset {ENV_CAPTURE})" if ENV_CAPTURE in still_off else "")
        )


@capture.command()
def flush() -> None:
    """Send the spooled exchanges to Memoria now, oldest first; exit 1 when some could not be sent."""
    notes: list[str] = []
    result = flush_spool(os.environ, FLUSH_BUDGET_S, notes)
    record_flush(os.environ, result)
    for note in notes:
        click.echo(note, err=True)
    if result["outcome"] == "empty":
        click.echo(f"Nothing to send: the spool ({spool_path(os.environ)}) is empty.")
        return
    click.echo(
        f"Sent {result['sent']} exchanges ({result['stored']} stored, {result['duplicates']} already there), "
        f"dropped {result['dropped']}; {result['left']} left in the spool ({result['outcome']})."
    )
    if result["left"]:
        raise SystemExit(1)
