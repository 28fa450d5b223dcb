"""MkDocs hook: the benchmark reports index lists every dated report in docs/benchmarks/reports/.

The reports are rendered from the bench's JSON (`memoria bench report`) and committed as they come;
this hook writes their list into the index page at build time, newest first (report files are named
by date), so nobody edits the list by hand. The marker `<!-- reports -->` on the index is replaced.
"""

from __future__ import annotations

from typing import Any

from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

INDEX = "benchmarks/reports/index.md"
MARKER = "<!-- reports -->"


def _title(markdown: str, fallback: str) -> str:
    for line in markdown.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return fallback


def on_page_markdown(markdown: str, page: Page, config: Any, files: Files) -> str:
    if page.file.src_uri != INDEX or MARKER not in markdown:
        return markdown
    reports = sorted(
        (
            file
            for file in files.documentation_pages()
            if file.src_uri.startswith("benchmarks/reports/") and file.src_uri != INDEX
        ),
        key=lambda file: file.src_uri,
        reverse=True,
    )
    if not reports:
        listing = "No report has been committed yet."
    else:
        lines = []
        for file in reports:
            name = file.src_uri.removeprefix("benchmarks/reports/")
            lines.append(f"- [{_title(file.content_string, name)}]({name})")
        listing = "\n".join(lines)
    return markdown.replace(MARKER, listing)
