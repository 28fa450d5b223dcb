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


class _Node:
    """A JSON value parsed with the spans of its text, so an edit can reuse the untouched parts."""

    __slots__ = ("closing", "end", "items", "start", "value")

    def __init__(self, value: Any, start: int, end: int, items: list[_Item] | None, closing: str) -> None:
        self.value = value
        self.start = start
        self.end = end
        self.items = items  # None for a scalar
        self.closing = closing  # whitespace before the closing bracket


class _Item:
    """One member of an object (key_text + mid is `"key": `) or element of an array (key None)."""

    __slots__ = ("key", "key_text", "mid", "node", "post", "prefix")

    def __init__(self, key: str | None, prefix: str, key_text: str, mid: str, node: _Node, post: str) -> None:
        self.key = key
        self.prefix = prefix
        self.key_text = key_text
        self.mid = mid
        self.node = node
        self.post = post


_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _parse(text: str, start: int) -> _Node:
    opening = text[start]
    if opening not in "{[":
        value, end = _DECODER.raw_decode(text, start)
        return _Node(value, start, end, None, "")
    closer = "}" if opening == "{" else "]"
    items: list[_Item] = []
    at = start + 1
    while True:
        first = _WS.match(text, at).end()  # type: ignore[union-attr]
        if text[first] == closer and not items:
            return _Node({} if opening == "{" else [], start, first + 1, items, text[at:first])
        key: str | None = None
        key_text = mid = ""
        value_at = first
        if opening == "{":
            key, key_end = json.decoder.scanstring(text, first + 1)  # type: ignore[attr-defined]
            colon = _WS.match(text, key_end).end()  # type: ignore[union-attr]
            value_at = _WS.match(text, colon + 1).end()  # type: ignore[union-attr]
            key_text, mid = text[first:key_end], text[key_end:value_at]
        node = _parse(text, value_at)
        after = _WS.match(text, node.end).end()  # type: ignore[union-attr]
        if text[after] == ",":
            items.append(_Item(key, text[at:first], key_text, mid, node, text[node.end : after]))
            at = after + 1
            continue
        items.append(_Item(key, text[at:first], key_text, mid, node, ""))
        parsed: Any = (
            {item.key: item.node.value for item in items}
            if opening == "{"
            else [item.node.value for item in items]
        )
        return _Node(parsed, start, after + 1, items, text[node.end : after])


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON text (so `1` and `true` differ, and so does the order of keys)."""
    return json.dumps(a, ensure_ascii=False) == json.dumps(b, ensure_ascii=False)


def _fresh(value: Any, indent: str, depth: int, inline: bool = False) -> str:
    if inline:
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, indent=indent, ensure_ascii=False).replace("\n", "\n" + indent * depth)


def _render(text: str, value: Any, node: _Node | None, indent: str, depth: int) -> str:
    if node is not None and _same(value, node.value):
        return text[node.start : node.end]
    if node is None or node.items is None or type(value) is not type(node.value):
        return _fresh(value, indent, depth)
    items = node.items
    new_prefix = items[-1].prefix if items else "\n" + indent * (depth + 1)
    # a container written on one line (`"allow": ["a", "b"]`) gets its new entries on that line too
    inline = bool(items) and "\n" not in text[node.start : node.end]
    if inline and not new_prefix:  # `[{...}]`: the next one after a comma and a space
        new_prefix = " "
    parts: list[str] = []
    if isinstance(value, dict):
        old = {item.key: item for item in items}
        for key, member in value.items():
            item = old.get(key)
            if item is None:
                head = new_prefix + json.dumps(key, ensure_ascii=False) + ": "
                parts.append(head + _fresh(member, indent, depth + 1, inline))
            else:
                body = _render(text, member, item.node, indent, depth + 1)
                parts.append(item.prefix + item.key_text + item.mid + body + item.post)
    else:
        at = 0  # elements before `at` are used up; kept ones stay in their order
        for element in value:
            match = next((k for k in range(at, len(items)) if _same(element, items[k].node.value)), None)
            if match is not None:
                item = items[match]
                parts.append(item.prefix + text[item.node.start : item.node.end] + item.post)
                at = match + 1
            elif (
                at < len(items)
                and type(items[at].node.value) is type(element)
                and not any(_same(items[at].node.value, other) for other in value)
            ):  # the same element, edited
                item = items[at]
                parts.append(item.prefix + _render(text, element, item.node, indent, depth + 1) + item.post)
                at += 1
            else:
                parts.append(new_prefix + _fresh(element, indent, depth + 1, inline))
    if not parts:
        return "{}" if isinstance(value, dict) else "[]"
    closing = node.closing if items else "\n" + indent * depth
    opening, closer = ("{", "}") if isinstance(value, dict) else ("[", "]")
    return opening + ",".join(parts) + closing + closer


def render_edit(data: dict[str, Any], original: str) -> str:
    """`data` as `original` edited in place: every member and element that did not change keeps its
    exact text (inline arrays, spacing, key order), new ones are written in the file's indentation
    and removed ones leave with their comma, so adding an entry and removing it again gives back the
    very bytes of a committed file (a container emptied by an edit is written `{}` / `[]`, whatever
    spacing it had when it was empty before). Falls back to `render_like` for a file it cannot follow."""
    if not original.strip():
        return render_like(data, original)
    match = _INDENT.match(original)
    indent = match.group(1) if match else "  "
    try:
        start = _WS.match(original).end()  # type: ignore[union-attr]
        root = _parse(original, start)
    except (ValueError, IndexError):
        return render_like(data, original)
    return original[: root.start] + _render(original, data, root, indent, 0) + original[root.end :]
