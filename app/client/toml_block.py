"""A block of Memoria's own at the end of a person's TOML config file, and only that block taken out.

Coding agents that keep their settings in TOML (Codex CLI's `config.toml`) get Memoria's entries as
one block between two marker comments, appended at the end of the file: the block is all an install
adds and all an uninstall takes away, so everything else keeps its bytes (comments, order, blank
lines, line endings), installing twice changes nothing, and uninstall after install gives the file
back byte for byte, a file the install created removed. No TOML library rewrites the person's text.

The separator is part of what the block owns: a blank line before it, and (named in the opening
marker) the newline an install added to a last line that had none. Before writing, the whole file
is parsed: a block that would not parse with the person's file is refused, the file left as it is.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.client.json_file import write_atomically

NEWLINE_ADDED = " (and the newline it added to the line above)"


class TomlBlockError(Exception):
    """The file cannot be read, is not TOML, or would not parse with the block; it was left as it is."""


@dataclass(frozen=True, slots=True)
class Markers:
    """The opening and closing comment lines of one kind of block."""

    begin: str
    end: str

    def pattern(self) -> re.Pattern[str]:
        return re.compile(
            "(?P<sep>\n?)(?P<begin>" + re.escape(self.begin) + "[^\n]*)\n.*?^" + re.escape(self.end) + "$\n?",
            re.DOTALL | re.MULTILINE,
        )


def read_text(path: Path) -> str | None:
    """The file's text exactly as stored (no newline translation); None when there is none."""
    try:
        with path.open(encoding="utf-8", newline="") as file:
            return file.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise TomlBlockError(f"cannot read {path}: {exc}") from exc


def without_block(text: str, markers: Markers) -> str:
    """`text` as it was before the block was added, with the separator it came with."""
    found = markers.pattern().search(text)
    if found is None:
        return text
    # the newline before the block is ours unless the block starts the file; the line above's
    # own newline too when the opening marker says the install added it
    ours = 2 if found.group("begin").endswith(NEWLINE_ADDED) else len(found.group("sep"))
    return text[: found.start("begin") - ours] + text[found.end() :]


def parsed(text: str, path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TomlBlockError(f"{path} is not valid TOML ({exc}); it was left as it is") from exc


def with_block(base: str, body: str, markers: Markers, path: Path) -> str:
    """`base` (holding no block) with `body` between the markers at its end; refused when the
    result would not parse."""
    block = f"{markers.begin}\n{body.rstrip(chr(10))}\n{markers.end}\n"
    if not base:
        text = block
    elif base.endswith("\n"):
        text = base + "\n" + block
    else:
        text = base + "\n\n" + block.replace(markers.begin, markers.begin + NEWLINE_ADDED, 1)
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TomlBlockError(
            f"{path} would not parse with Memoria's entries added ({exc}): it already defines what they "
            "would extend in a way a block appended at its end cannot; it was left as it is"
        ) from exc
    return text


def write_or_remove(path: Path, original: str | None, updated: str) -> bool:
    """Write `updated` (an empty text removes the file); whether anything changed."""
    if updated == original or (original is None and not updated):
        return False
    if updated:
        write_atomically(path, updated)
    else:
        path.unlink()
    return True
