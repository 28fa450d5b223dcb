"""The recall statement's text: `recall.sql` expanded (named parameters) and as asyncpg runs it.

The statement lives in `recall.sql`, shipped beside this module, as the named query `recall` and
the fragments it uses (app/db/queries.py). It is read and expanded on first use, not at import,
and compiled once: each `:name` becomes `$n`, n being the position of `name` among `RecallArgs`'
fields. `RECALL_SQL` and `RECALL_STATEMENT` are those two texts under constant names (for
benchmarks and plan tests), read on first access like the functions.
"""

from __future__ import annotations

from functools import cache

from app.db.queries import compile_named, load_queries
from app.recall.statement import parameter_names

__all__ = ["PUSH_BACK_EXPIRY", "recall_sql", "recall_statement"]


# The episodes a recall returned (internal ids) live `$2` days from now again; only those that
# would expire within that less a day are written, so each is written at most once a day. A
# promoted memory (no expiry) and a deleted one are left alone.
PUSH_BACK_EXPIRY = """
UPDATE memories
SET expires_at = now() + $2::float8 * interval '1 day'
WHERE id = ANY($1::bigint[])
  AND kind = 'episode'
  AND deleted_at IS NULL
  AND expires_at < now() + ($2::float8 - 1) * interval '1 day'
"""


def recall_sql() -> str:
    """The recall statement with its fragments expanded and its parameters named."""
    return load_queries(__package__, "recall.sql")["recall"]


@cache
def recall_statement() -> str:
    """The recall statement asyncpg prepares and runs, `$n` numbered in `RecallArgs` field order."""
    return compile_named(recall_sql(), parameter_names())


def __getattr__(name: str) -> str:
    """`RECALL_SQL` and `RECALL_STATEMENT` as module constants, read on first access (PEP 562)."""
    if name == "RECALL_SQL":
        return recall_sql()
    if name == "RECALL_STATEMENT":
        return recall_statement()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
