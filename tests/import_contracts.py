"""An import-linter contract type: the source packages import the standard library only.

The hook client (`memoria_hook_client`) runs on every Claude Code prompt, launched under `python -S`
(no site-packages), so one import of a third-party package breaks every hook on a machine where it
is missing, or slows each prompt where it is not. import-linter's own contracts name the modules
they forbid; this one forbids everything that is neither in `sys.stdlib_module_names` nor in the
source package itself, so a dependency added tomorrow is caught without editing a list.

It needs the graph built with `include_external_packages = true` (pyproject.toml): without it,
imports of packages outside the root packages are not in the graph at all. Registered in
pyproject.toml under `contract_types`; `make lint` (lint-imports) runs it. Kept in `tests` because
it is a check, type-checked and linted with the tests, never imported by the app.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from importlinter import Contract, ContractCheck, fields, output

if TYPE_CHECKING:
    from grimp import ImportGraph


@dataclass(frozen=True)
class ForeignImport:
    """One import, from a module of a source package, of a module outside it and the standard library."""

    importer: str
    imported: str
    line_number: int
    line_contents: str


def foreign_imports(graph: ImportGraph, package: str) -> list[ForeignImport]:
    """Every import in `package` (itself and its descendants) of a module whose top-level package is
    neither `package`'s nor the standard library's, sorted by importer and line."""
    own_root = package.partition(".")[0]
    found: list[ForeignImport] = []
    for importer in sorted({package} | graph.find_descendants(package)):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            root = imported.partition(".")[0]
            if root == own_root or root in sys.stdlib_module_names:
                continue
            details = graph.get_import_details(importer=importer, imported=imported)
            lines = [(detail["line_number"], detail["line_contents"]) for detail in details] or [(0, "?")]
            found += [ForeignImport(importer, imported, number, contents) for number, contents in lines]
    return sorted(found, key=lambda item: (item.importer, item.line_number))


class StandardLibraryOnlyContract(Contract):
    """`source_modules`: packages that may import their own modules and the standard library only."""

    source_modules = fields.ListField(subfield=fields.ModuleField())

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        found = [
            item
            for module in self.source_modules  # type: ignore[attr-defined]
            for item in foreign_imports(graph, module.name)
        ]
        return ContractCheck(kept=not found, metadata={"foreign_imports": found})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for item in check.metadata["foreign_imports"]:
            output.print_error(
                f"{item.importer} imports {item.imported} (l.{item.line_number}: {item.line_contents})",
                bold=False,
            )
