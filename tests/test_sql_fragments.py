"""The SQL loader's fragments: written once, expanded where they are used, as plain PostgreSQL."""

from __future__ import annotations

import re

import pytest

from app.db.queries import compile_named, expand, named_parameters, parse, with_shared_fragments
from app.graph import browse
from app.hooks.start_context import START_CONTEXT
from app.memories import queries as memory_queries
from app.memories.ledger import with_ledger_fragments
from app.recall.sql import recall_sql

FILE = """-- notes about the file, no query

-- fragment: live(t)
-- notes about the fragment, not part of its text
t.deleted_at IS NULL

-- fragment: seen(t, sensitive)
{{ live(t) }}
AND (NOT t.is_sensitive OR sensitive)

-- name: listed
SELECT m.id
FROM memories m
WHERE m.namespace_id = :namespace
  AND {{ seen(m, :include_sensitive::boolean) }}
  AND m.note <> 'sensitive t.x -- kept'
"""


def test_a_marker_becomes_the_fragment_with_its_arguments_in_place() -> None:
    sql_file = parse(FILE)
    assert list(sql_file.queries) == ["listed"]
    assert sql_file.fragments["live"].body == "t.deleted_at IS NULL"
    expanded = expand(sql_file.queries["listed"], sql_file.fragments)
    assert expanded == (
        "SELECT m.id\n"
        "FROM memories m\n"
        "WHERE m.namespace_id = :namespace\n"
        "  AND m.deleted_at IS NULL\n"
        "  AND (NOT m.is_sensitive OR :include_sensitive::boolean)\n"
        "  AND m.note <> 'sensitive t.x -- kept'"
    )
    assert named_parameters(expanded) == ["namespace", "include_sensitive"]
    assert compile_named(expanded, ["include_sensitive", "namespace"]).count("$") == 2


def test_an_argument_may_hold_parentheses_and_a_parameter_named_like_a_column_is_left_alone() -> None:
    fragments = parse("-- fragment: f(a, b)\nx.a = a AND b\n").fragments
    assert expand("{{ f(lower(y), count(*) > 0) }}", fragments) == "x.a = lower(y) AND count(*) > 0"


def test_a_parameter_named_like_a_type_leaves_casts_alone() -> None:
    fragments = parse("-- fragment: f(text)\ntext = :name::text AND y::text = 'text'\n").fragments
    assert expand("{{ f(m.title) }}", fragments) == "m.title = :name::text AND y::text = 'text'"


def test_an_unknown_fragment_or_a_wrong_argument_count_is_refused() -> None:
    fragments = parse("-- fragment: f(a)\na\n").fragments
    with pytest.raises(ValueError, match="no fragment g"):
        expand("{{ g(x) }}", fragments)
    with pytest.raises(ValueError, match="1 arguments expected"):
        expand("{{ f(x, y) }}", fragments)


def test_a_fragment_using_itself_is_refused() -> None:
    fragments = parse("-- fragment: f(a)\n{{ f(a) }}\n").fragments
    with pytest.raises(ValueError, match="uses itself"):
        expand("{{ f(x) }}", fragments)


def test_a_name_given_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="twice"):
        parse("-- name: q\nSELECT 1\n-- fragment: q()\n1\n")


def _read_paths() -> dict[str, str]:
    """Every query that answers memories to a reader, as PostgreSQL gets it."""
    return {
        "recall": recall_sql(),
        "session start": with_ledger_fragments(START_CONTEXT),
        "list (and export, which pages through it)": memory_queries.ListMemories.statement(),
        "get": memory_queries.GetMemory.statement(),
        "graph browse": with_shared_fragments(browse._CONCEPT_MEMORIES),
    }


def test_every_read_path_says_which_memories_a_reader_may_see_with_the_one_fragment() -> None:
    # each liveness check is the `visible` fragment expanded (its first line, then its second, whose
    # `include_sensitive` is a grantee's `visible_to` gate on the owner's namespaces, with up to two
    # levels of parentheses): hiding another class of memory from every reader is one edit of
    # app/db/fragments.sql (under whatever alias the query reads the memory by: `m`, or recall's `newer`)
    nested = r"(?:[^()]|\((?:[^()]|\([^()]*\))*\))+"
    visible = re.compile(r"(\w+)\.deleted_at IS NULL\n\s*AND \(\1\.is_sensitive = false OR " + nested + r"\)")
    for path, sql in _read_paths().items():
        assert "{{" not in sql, path
        uses = len(visible.findall(sql))
        assert uses >= 1, path
        assert sql.count("deleted_at IS NULL") == uses, path
