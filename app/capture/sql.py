"""The capture domain's SQL: `capture.sql`, shipped beside this module, one statement per
`-- name: <name>` header, with named parameters (`:name`).

Read on first use, not at import. `statement(name)` is the text asyncpg runs (`:name` numbered
`$1, $2, …` in the order the statement first uses each), `bind(name, values)` the arguments in
that order, so a call names every argument and no column list is positional.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from importlib.resources import files
from typing import Any

from app.recall.sql import compile_named, named_parameters

_HEADER = re.compile(r"^-- name: ([a-z_]+)\s*$", re.MULTILINE)


@cache
def named_statements() -> dict[str, str]:
    """{name: statement as written}, from `capture.sql` (each without its trailing `;`)."""
    text = files(__package__).joinpath("capture.sql").read_text(encoding="utf-8")
    parts = _HEADER.split(text)
    bodies = zip(parts[1::2], parts[2::2], strict=True)
    return {name: body.strip().rstrip(";").strip() for name, body in bodies}


@cache
def parameters(name: str) -> tuple[str, ...]:
    """The named parameters of statement `name`, in the order they are numbered."""
    return tuple(named_parameters(named_statements()[name]))


@cache
def statement(name: str) -> str:
    """Statement `name` as asyncpg prepares it."""
    return compile_named(named_statements()[name], parameters(name))


def bind(name: str, values: Mapping[str, Any]) -> list[Any]:
    """`values` in the order of statement `name`'s parameters; each must be given, and only those."""
    wanted = parameters(name)
    if set(values) != set(wanted):
        raise ValueError(f"{name} takes {sorted(wanted)}, got {sorted(values)}")
    return [values[parameter] for parameter in wanted]
