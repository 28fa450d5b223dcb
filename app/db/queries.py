"""SQL written once: named queries and fragments in `.sql` files, expanded to plain PostgreSQL.

A `.sql` file is a run of sections, each opened by a header comment line:

    -- fragment: visible(m, include_sensitive)
    m.deleted_at IS NULL
    AND (m.is_sensitive = false OR include_sensitive)

    -- name: recall
    SELECT ... WHERE {{ visible(m, :include_sensitive::boolean) }} ...

`-- name: X` opens a named query, `-- fragment: f(a, b)` a fragment: a piece of a clause written
once and used wherever the rule it states applies. Text before the first header is the file's
notes; so are the comment lines that open a fragment. A query (or a fragment) uses a fragment with
`{{ f(x, y) }}`: the marker is replaced by the fragment's text, in which each parameter, as a whole
word outside literals and comments, becomes its argument (a table alias, a `:name` parameter, a
constant); continuation lines take the marker's indentation, so the expanded text still reads as
written. A line `-- uses: package/file.sql` among the notes brings that file's fragments in too
(another domain's rules, e.g. which namespaces a user reaches). Fragments may use fragments. Every file
also sees the fragments of `app/db/fragments.sql`, the rules shared by every domain (the memory a
reader may see). The expansion is plain PostgreSQL with the query's `:name` parameters; `compile_named`
then numbers them `$n` for asyncpg. `NamedQuery` is the base of a query's typed arguments: one
dataclass per query, one field per parameter, in the order the expanded query first uses them.
Files are read on first use, never at import.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from functools import cache
from importlib.resources import files
from typing import Any, ClassVar, TypeAlias, cast

import asyncpg

# A `:name` parameter, or text in which a colon is no parameter: string literals, quoted
# identifiers, comments and `::` casts (matched first, so that they are skipped whole).
_TOKENS = re.compile(
    r"""'(?:[^']|'')*'|"(?:[^"]|"")*"|--[^\n]*|/\*.*?\*/|::|:([A-Za-z_][A-Za-z0-9_]*)""", re.DOTALL
)
_USES = re.compile(r"^-- uses: *([A-Za-z_][\w.]*)/(\S+\.sql) *$", re.MULTILINE)
_HEADER = re.compile(r"^-- (name|fragment): *([A-Za-z_][A-Za-z0-9_]*) *(?:\(([^)]*)\))? *$", re.MULTILINE)
# `{{ f(args) }}`; an argument may hold parentheses, one level deep (`numnode(q.strict_q) > 0`).
_MARKER = re.compile(r"\{\{ *([A-Za-z_][A-Za-z0-9_]*) *\(((?:[^()]|\([^()]*\))*)\) *\}\}")
# A word a fragment parameter may be, or text where it is none (as for `_TOKENS`, plus `:name`s,
# whose names are the caller's, type names after a `::` cast, and qualified names after a dot).
_WORDS = re.compile(
    r"""'(?:[^']|'')*'|"(?:[^"]|"")*"|--[^\n]*|/\*.*?\*/|::\s*[A-Za-z_]\w*|:[A-Za-z_]\w*|\.\w+|([A-Za-z_]\w*)""",
    re.DOTALL,
)
SHARED = ("app.db", "fragments.sql")
"""The file whose fragments every `.sql` file may use."""


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


@dataclass(frozen=True, slots=True)
class Fragment:
    """A piece of a clause and the names its uses fill in."""

    params: tuple[str, ...]
    body: str

    def applied(self, args: Sequence[str]) -> str:
        """The body with each parameter replaced by its argument."""
        if len(args) != len(self.params):
            expected = ", ".join(self.params)
            raise ValueError(f"{len(self.params)} arguments expected ({expected}), got {list(args)}")
        value = dict(zip(self.params, args, strict=True))

        def replace(match: re.Match[str]) -> str:
            word = match[1]
            return value.get(word, match[0]) if word else match[0]

        return _WORDS.sub(replace, self.body)


@dataclass(frozen=True, slots=True)
class SqlFile:
    """A `.sql` file's named queries (not yet expanded) and fragments."""

    queries: dict[str, str]
    fragments: dict[str, Fragment]
    uses: tuple[tuple[str, str], ...] = ()


def parse(text: str) -> SqlFile:
    """The sections of a `.sql` file's text; ValueError for a name given twice."""
    queries: dict[str, str] = {}
    fragments: dict[str, Fragment] = {}
    headers = list(_HEADER.finditer(text))
    notes = text[: headers[0].start()] if headers else text
    uses = tuple((m[1], m[2]) for m in _USES.finditer(notes))
    for header, following in zip(headers, [*headers[1:], None], strict=True):
        kind, name, params = header[1], header[2], header[3]
        body = text[header.end() : following.start() if following else len(text)]
        body = textwrap.dedent(body.strip("\n")).rstrip()
        if name in queries or name in fragments:
            raise ValueError(f"{name} is defined twice")
        if kind == "name":
            queries[name] = body
        else:
            names = tuple(p.strip() for p in params.split(",")) if params and params.strip() else ()
            fragments[name] = Fragment(names, _without_notes(body))
    return SqlFile(queries, fragments, uses)


def _without_notes(body: str) -> str:
    """A fragment's text without the comment lines that open it (its notes, read once here)."""
    lines = body.split("\n")
    while lines and lines[0].lstrip().startswith("--"):
        lines.pop(0)
    return "\n".join(lines)


def expand(sql: str, fragments: Mapping[str, Fragment], _using: tuple[str, ...] = ()) -> str:
    """`sql` with every `{{ f(args) }}` marker replaced by fragment f's text, recursively."""

    def include(match: re.Match[str]) -> str:
        name = match[1]
        if name not in fragments:
            raise ValueError(f"no fragment {name} (known: {sorted(fragments)})")
        if name in _using:
            raise ValueError(f"fragment {name} uses itself ({' > '.join((*_using, name))})")
        args = [a.strip() for a in re.split(r",(?![^()]*\))", match[2])] if match[2].strip() else []
        text = expand(fragments[name].applied(args), fragments, (*_using, name))
        line_start = sql.rfind("\n", 0, match.start()) + 1
        indent = re.match(r"[ \t]*", sql[line_start:])
        return text.replace("\n", "\n" + (indent[0] if indent else ""))

    return _MARKER.sub(include, sql)


@cache
def _read(package: str, name: str) -> SqlFile:
    return parse(files(package).joinpath(name).read_text(encoding="utf-8"))


def shared_fragments() -> dict[str, Fragment]:
    """The fragments every `.sql` file may use (`app/db/fragments.sql`)."""
    return dict(_read(*SHARED).fragments)


@cache
def fragments_of(package: str, name: str) -> dict[str, Fragment]:
    """Every fragment a file's queries may use: the shared ones, those of the files its `-- uses:`
    lines name, and its own."""
    sql_file = _read(package, name)
    fragments = shared_fragments()
    for used in sql_file.uses:
        fragments |= _read(*used).fragments
    return fragments | sql_file.fragments


def load_queries(package: str, name: str) -> dict[str, str]:
    """The named queries of `name` (a file shipped in `package`), fragments expanded, `:name`
    parameters kept; read on first use. A marker left unexpanded is an error, not a query."""
    fragments = fragments_of(package, name)
    expanded = {query: expand(text, fragments) for query, text in _read(package, name).queries.items()}
    for query, text in expanded.items():
        if "{{" in text:
            raise ValueError(f"{name}: {query} keeps an unexpanded marker")
    return expanded


@cache
def with_shared_fragments(sql: str) -> str:
    """`sql` (a query written in Python, `$n` parameters and all) with the shared fragments'
    markers expanded: for the read paths whose queries are not in a `.sql` file yet."""
    return expand(sql, shared_fragments())


def fragment_text(name: str, *args: str, package: str = SHARED[0], file: str = SHARED[1]) -> str:
    """Fragment `name` of a file applied to `args` and expanded, as a query using it holds it."""
    fragments = fragments_of(package, file)
    return expand(fragments[name].applied(args), fragments)


Executor: TypeAlias = asyncpg.Connection | asyncpg.Pool


class NamedQuery:
    """Base of a named query's arguments: subclasses are frozen dataclasses naming the query
    (`SQL_FILE`, `QUERY`) whose fields, in the order the query first uses each parameter, number
    its `:name`s `$1..$n`. A test holds each class to its query: same names, same order, and the
    Python types of what PostgreSQL infers."""

    SQL_FILE: ClassVar[tuple[str, str]]
    QUERY: ClassVar[str]

    @classmethod
    def statement(cls) -> str:
        """The query as asyncpg runs it (expanded, `$n` numbered), compiled once."""
        package, name = cls.SQL_FILE
        return _statement(package, name, cls.QUERY, tuple(cls.parameter_names()))

    @classmethod
    def parameter_names(cls) -> list[str]:
        return [f.name for f in fields(cast(Any, cls))]

    def values(self) -> tuple[object, ...]:
        """The arguments in `$n` order."""
        return tuple(getattr(self, name) for name in self.parameter_names())

    async def fetch(self, conn: Executor) -> list[asyncpg.Record]:
        rows: list[asyncpg.Record] = await conn.fetch(self.statement(), *self.values())
        return rows

    async def fetchrow(self, conn: Executor) -> asyncpg.Record | None:
        return await conn.fetchrow(self.statement(), *self.values())

    async def fetchval(self, conn: Executor) -> Any:
        return await conn.fetchval(self.statement(), *self.values())

    async def execute(self, conn: Executor) -> str:
        status: str = await conn.execute(self.statement(), *self.values())
        return status


@cache
def _statement(package: str, name: str, query: str, order: tuple[str, ...]) -> str:
    return compile_named(load_queries(package, name)[query], order)


@cache
def with_fragments(sql: str, package: str, name: str) -> str:
    """`sql` (a query written in Python) with the markers of the shared fragments and of file
    `name`'s fragments expanded: a read path not in a `.sql` file yet using another domain's rule."""
    return expand(sql, shared_fragments() | _read(package, name).fragments)
