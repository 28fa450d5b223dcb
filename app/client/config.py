"""Where the client commands find the server and the API key."""

from __future__ import annotations

import click
from pydantic import ValidationError

from app.hooks.command import ENV_API_KEY, KeyFileError, read_key_file
from app.settings import ClientSettings, Settings


def load_settings() -> Settings:
    try:
        return Settings()
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise click.ClickException(
            f"invalid configuration: {where + ': ' if where else ''}{first['msg']}"
        ) from exc


def api_key(client: ClientSettings) -> str:
    """`MEMORIA_CLIENT__API_KEY` (or `.env`), else the key file, which must be readable by its owner only."""
    if client.api_key is not None and client.api_key.get_secret_value().strip():
        return client.api_key.get_secret_value().strip()
    try:
        return read_key_file(client.key_file)
    except KeyFileError as exc:
        if not client.key_file.exists():
            raise click.ClickException(
                f"no API key: set {ENV_API_KEY} or save one with `memoria login`"
            ) from exc
        raise click.ClickException(str(exc)) from exc
