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
