"""The recall statement's text: `recall.sql` as written (named parameters) and as asyncpg runs it.

The statement lives in `recall.sql`, shipped beside this module. It is read on first use, not at
import, and compiled once: each `:name` becomes `$n`, n being the position of `name` among
`RecallArgs`' fields. `RECALL_SQL` and `RECALL_STATEMENT` are those two texts under constant names
(for benchmarks and plan tests), read on first access like the functions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from importlib.resources import files

from app.recall.statement import parameter_names

# A `:name` parameter, or text in which a colon is no parameter: string literals, quoted
# identifiers, comments and `::` casts (matched first, so that they are skipped whole).
_TOKENS = re.compile(
    r"""'(?:[^']|'')*'|"(?:[^"]|"")*"|--[^\n]*|/\*.*?\*/|::|:([A-Za-z_][A-Za-z0-9_]*)""", re.DOTALL
)


def named_parameters(sql: str) -> list[str]:
    """The `:name` parameters of `sql`, each once, in the order of first use."""
    return list(dict.fromkeys(m[1] for m in _TOKENS.finditer(sql) if m[1]))


def compile_named(sql: str, order: Sequence[str]) -> str:
    """`sql` with each `:name` replaced by `$n`, n being the 1-based position of `name` in `order`."""
    numbers = {name: n for n, name in enumerate(order, start=1)}

    def placeholder(match: re.Match[str]) -> str:
        name = match[1]
        if not name:
            return match[0]
        if name not in numbers:
            raise ValueError(f"parameter :{name} is not among {list(order)}")
        return f"${numbers[name]}"

    return _TOKENS.sub(placeholder, sql)


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


@cache
def recall_sql() -> str:
    """`recall.sql` as written, with named parameters."""
    return files(__package__).joinpath("recall.sql").read_text(encoding="utf-8")


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
