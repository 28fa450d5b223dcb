"""A domain's named queries and their typed arguments cannot drift apart.

Each query of `app/memories/memories.sql` (and `app/capture/capture.sql`, `app/memories/ledger.sql`)
has one class in the domain's queries.py (ledger.py) whose fields are
its `:name` parameters in the order of first use (they number them `$n`), each of the Python type
PostgreSQL infers for it when it prepares the expanded query.
"""

from __future__ import annotations

import types
import typing
from datetime import datetime
from typing import Any

import asyncpg
import pytest
from pgvector import HalfVector

from app.capture import queries as capture_queries
from app.db.queries import NamedQuery, load_queries, named_parameters
from app.embeddings import inputs as embedding_inputs
from app.links import queries as links_queries
from app.links import supersede_queries
from app.memories import ledger as ledger_queries
from app.memories import queries as memories_queries

DOMAINS = pytest.mark.parametrize(
    ("sql_file", "classes"),
    [
        pytest.param(memories_queries.FILE, memories_queries.QUERIES, id="memories"),
        pytest.param(capture_queries.FILE, capture_queries.QUERIES, id="capture"),
        pytest.param(ledger_queries.FILE, ledger_queries.QUERIES, id="ledger"),
        pytest.param(links_queries.FILE, links_queries.QUERIES, id="links"),
        pytest.param(supersede_queries.FILE, supersede_queries.QUERIES, id="supersede"),
        pytest.param(embedding_inputs.FILE, embedding_inputs.QUERIES, id="embedding-inputs"),
    ],
)

SCALAR = {
    "bigint": int,
    "integer": int,
    "real": float,
    "boolean": bool,
    "text": str,
    "bytea": bytes,
    "jsonb": dict[str, Any],
    "timestamp with time zone": datetime,
    "halfvec": HalfVector,
}


def _postgres_as_python(kind: str) -> Any:
    if kind.endswith("[]"):
        return list[SCALAR[kind[:-2]]]  # type: ignore[misc]
    return SCALAR[kind]


def _without_none(annotation: Any) -> Any:
    """The annotation without `| None`, outside and inside a list."""
    if isinstance(annotation, types.UnionType):
        (annotation,) = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
    if typing.get_origin(annotation) is list:
        (item,) = typing.get_args(annotation)
        return list[_without_none(item)]  # type: ignore[misc]
    return annotation


@DOMAINS
def test_every_query_has_its_arguments_class_and_every_class_its_query(
    sql_file: tuple[str, str], classes: tuple[type[NamedQuery], ...]
) -> None:
    assert sorted(q.QUERY for q in classes) == sorted(load_queries(*sql_file))


@DOMAINS
def test_each_class_names_its_query_parameters_in_the_order_of_first_use(
    sql_file: tuple[str, str], classes: tuple[type[NamedQuery], ...]
) -> None:
    queries = load_queries(*sql_file)
    mismatched = {
        q.QUERY: (q.parameter_names(), named_parameters(queries[q.QUERY]))
        for q in classes
        if q.parameter_names() != named_parameters(queries[q.QUERY])
    }
    assert mismatched == {}


@DOMAINS
async def test_postgres_reads_each_parameter_as_the_type_of_its_field(
    conn: asyncpg.Connection, sql_file: tuple[str, str], classes: tuple[type[NamedQuery], ...]
) -> None:
    mismatched: dict[str, Any] = {}
    for query in classes:
        name = f"q_{query.QUERY}"
        await conn.execute(f"PREPARE {name} AS {query.statement()}")
        inferred = await conn.fetchval(
            "SELECT parameter_types::text[] FROM pg_prepared_statements WHERE name = $1", name
        )
        hints = typing.get_type_hints(query)
        for field, kind in zip(query.parameter_names(), inferred, strict=True):
            if _postgres_as_python(kind) != _without_none(hints[field]):
                mismatched[f"{query.QUERY}.{field}"] = (kind, hints[field])
        await conn.execute(f"DEALLOCATE {name}")
    assert mismatched == {}
