"""`memoria promote ID [--importance X] [--pin]`: keep a captured episode as a curated memory."""

from __future__ import annotations

from typing import Any

import click

from app.cli.config import settings
from app.client.api import Api, RequestFailed
from app.client.render import console


@click.command()
@click.argument("memory_id", type=click.IntRange(1))
@click.option(
    "-i",
    "--importance",
    type=click.FloatRange(0, 1),
    help="Default: the episode's importance, at least 0.5.",
)
@click.option("--pin", is_flag=True, help="Also pin it: session starts show pinned memories first.")
def promote(memory_id: int, importance: float | None, pin: bool) -> None:
    """Turn episode MEMORY_ID (a captured exchange) into a curated memory that never expires."""
    body: dict[str, Any] = {}
    if importance is not None:
        body["importance"] = importance
    if pin:
        body["pinned"] = True
    with Api.from_settings(settings().client) as api:
        try:
            memory = api.json("POST", f"/v1/memories/{memory_id}/promote", json=body)
        except RequestFailed as exc:
            if exc.status == 404:
                raise RequestFailed(f"no memory #{memory_id} (or it is not yours)", 404) from exc
            raise
    pinned = ", pinned" if memory["pinned"] else ""
    console().print(
        f"promoted #{memory['id']} in {memory['namespace']}: "
        f"importance {memory['importance']:.2f}{pinned}, never expires"
    )
