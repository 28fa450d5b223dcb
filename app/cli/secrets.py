"""`memoria secrets …`: keys that seal the originals of redacted credentials."""

from __future__ import annotations

import asyncio
import base64

import asyncpg
import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from app.cli import config


@click.group()
def secrets() -> None:
    """Encryption keys of the credentials redacted from memories."""


@secrets.command("new-key")
def new_key() -> None:
    """Print a new random AES-256 key (base64) for MEMORIA_SECRETS__KEYS; nothing is stored."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    click.echo(base64.b64encode(AESGCM.generate_key(bit_length=256)).decode())


@secrets.command("rotate-key")
@click.option(
    "--batch-size", type=click.IntRange(1, 10_000), help="Rows per transaction (default: settings)."
)
def rotate_key(batch_size: int | None) -> None:
    """Re-encrypt every stored original under MEMORIA_SECRETS__ACTIVE_KEY_ID.

    Keep the old keys in MEMORIA_SECRETS__KEYS until this reports nothing left; make the new key the
    active one on every server first. Resumable: a re-run continues where an interrupted one stopped.
    """
    from app.secrets import SecretsError, Vault, count_by_key, rotate_keys

    settings = config.settings()
    vault = Vault.from_settings(settings.secrets)
    size = batch_size or settings.secrets.rotate_batch_size

    async def run(url: str) -> tuple[int, int, dict[str, int]]:
        conn = await asyncpg.connect(url)
        try:
            before = await count_by_key(conn)
            todo = sum(n for key_id, n in before.items() if key_id != vault.active_key_id)
            bars = Progress(
                TextColumn("re-sealing"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            with bars:
                task = bars.add_task("rotate", total=todo)
                report = await rotate_keys(
                    conn, vault, batch_size=size, progress=lambda done: bars.advance(task, done)
                )
            return report.rotated, report.left, await count_by_key(conn)
        finally:
            await conn.close()

    try:
        with config.database(settings) as url:
            rotated, left, after = asyncio.run(run(url))
    except SecretsError as exc:
        raise click.ClickException(str(exc)) from exc
    held = ", ".join(f"{key_id}: {n}" for key_id, n in after.items()) or "none stored"
    click.echo(
        f"re-sealed {rotated} original(s) under {vault.active_key_id!r}; rows per key: {held}", err=True
    )
    if left:
        click.echo(
            f"{left} row(s) are still under another key (written meanwhile by a server sealing with an "
            "older key): make the new key active everywhere and run again",
            err=True,
        )
        raise SystemExit(1)


@secrets.command("scan")
@click.option("--apply", is_flag=True, help="Redact what the scan finds (default: only count it).")
@click.option("--batch-size", type=click.IntRange(1, 10_000), default=500, show_default=True)
def scan(apply: bool, batch_size: int) -> None:
    """Find memories that hold credentials in clear (stored before redaction, or with it off).

    With --apply, redact them in place as a store would, batch by batch (resumable): originals sealed
    under the active key when MEMORIA_SECRETS__KEYS is set (kept nowhere otherwise), concept indexing
    and re-embedding queued as jobs for the server's workers.
    """
    from app.db import create_database
    from app.memories.scan import Scanner, ScanReport
    from app.secrets import Vault

    settings = config.settings()
    if apply and not settings.secrets.redact:
        raise click.ClickException("MEMORIA_SECRETS__REDACT is false: turn redaction on to apply a scan")
    vault = Vault.from_settings(settings.secrets)

    async def run(url: str) -> ScanReport:
        db = await create_database(url, settings.database)
        try:
            with Progress(TextColumn("scanning"), TextColumn("{task.description}"), transient=True) as bars:
                task = bars.add_task("", total=None)

                def advance(report: ScanReport) -> None:
                    bars.update(task, description=f"{report.scanned} memories, {report.found} in clear")

                return await Scanner(db.write, vault).scan(
                    apply=apply, batch_size=batch_size, progress=advance
                )
        finally:
            await db.close()

    with config.database(settings) as url:
        report = asyncio.run(run(url))
    click.echo(f"scanned {report.scanned} memories: {report.found} hold credentials in clear", err=True)
    if not apply:
        if report.found:
            click.echo("run `memoria secrets scan --apply` to redact them", err=True)
        return
    kept = (
        f"{report.sealed} original(s) sealed under {vault.active_key_id!r}"
        if vault.keeps_originals
        else "originals kept nowhere (no MEMORIA_SECRETS__KEYS)"
    )
    click.echo(
        f"redacted {report.redacted} ({report.merged} deleted as duplicates of another memory once "
        f"redacted); {kept}; concept indexing and embedding queued for the server",
        err=True,
    )
    if report.too_long:
        click.echo(
            f"{report.too_long} memor(ies) left in clear: their placeholders would not fit the column; "
            "shorten them with PATCH",
            err=True,
        )
        raise SystemExit(1)
