"""PostgreSQL URLs: the same server, another database."""

from __future__ import annotations

from urllib.parse import quote, unquote, urlsplit


def with_database(url: str, database: str) -> str:
    """`url` pointed at `database` on the same server (credentials and options kept)."""
    return urlsplit(url)._replace(path="/" + quote(database)).geturl()


def database_of(url: str) -> str:
    """The database a URL names."""
    return unquote(urlsplit(url).path.lstrip("/"))
