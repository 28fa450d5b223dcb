"""JSON files that other programs own (Claude Code's `settings.json`, `.mcp.json`, `~/.claude.json`),
read and rewritten as their owner would write them.

Installers change one entry in a file a person also edits, so a rewrite keeps the file's
indentation and final newline (an install then uninstall leaves no diff beyond what it changed),
is atomic (a crash leaves the old file), keeps the file's permissions (`~/.claude.json` is
private), and a file that is not a JSON object is refused and left as it is.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any


class JsonFileError(ValueError):
    """The file cannot be read or does not hold a JSON object; it was left as it is."""


def read_object(path: Path) -> tuple[dict[str, Any], str]:
    """(the file's JSON object, its text); ({}, "") for a missing file, ({}, text) for a blank one."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, ""
    except OSError as exc:
        raise JsonFileError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if not text.strip():
        return {}, text
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise JsonFileError(f"{path} is not valid JSON ({exc}); fix it first, it was left as it is") from exc
    if not isinstance(data, dict):
        raise JsonFileError(f"{path} does not hold a JSON object; it was left as it is")
    return data, text


_INDENT = re.compile(r"^\{\s*\n([ \t]+)\S")


def render_like(data: dict[str, Any], original: str) -> str:
    """`data` as JSON in the style of `original`: its indentation (2 spaces, as Claude Code writes,
    when there is none to copy), non-ASCII kept as is, its final newline (or lack of one)."""
    match = _INDENT.match(original)
    indent: str | int = match.group(1) if match else 2
    text = json.dumps(data, indent=indent, ensure_ascii=False)
    return text + "\n" if not original or original.endswith("\n") else text


def write_atomically(path: Path, text: str) -> None:
    """Replace `path` with `text` in one rename, keeping the old file's permissions."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.exists() else None
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
