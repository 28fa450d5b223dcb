"""The custom import-linter contract of `tests.import_contracts`, on small hand-built graphs.

`make lint` shows it kept on the real code; these pin that it breaks, and on what.
"""

from __future__ import annotations

from grimp import ImportGraph

from tests.import_contracts import ForeignImport, StandardLibraryOnlyContract


def _graph(*imports: tuple[str, str]) -> ImportGraph:
    graph = ImportGraph()
    for module in ("client", "client.hook", "client.log"):
        graph.add_module(module)
    for importer, imported in imports:
        if imported.partition(".")[0] != "client":
            graph.add_module(imported.partition(".")[0], is_squashed=True)
        graph.add_import(
            importer=importer, imported=imported, line_number=7, line_contents=f"import {imported}"
        )
    return graph


def _contract() -> StandardLibraryOnlyContract:
    return StandardLibraryOnlyContract(
        name="stdlib only",
        session_options={"root_packages": ["client"]},
        contract_options={"source_modules": ["client"]},
    )


def test_the_standard_library_and_the_package_itself_keep_the_contract() -> None:
    graph = _graph(("client.hook", "json"), ("client.hook", "client.log"), ("client.log", "os"))
    assert _contract().check(graph, verbose=False).kept


def test_a_third_party_or_other_root_package_import_breaks_it_and_is_named() -> None:
    graph = _graph(("client.hook", "json"), ("client.log", "httpx"), ("client.hook", "app"))
    check = _contract().check(graph, verbose=False)
    assert not check.kept
    assert check.metadata["foreign_imports"] == [
        ForeignImport("client.hook", "app", 7, "import app"),
        ForeignImport("client.log", "httpx", 7, "import httpx"),
    ]
