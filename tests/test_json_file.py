"""Installers rewrite JSON files a person also edits: the file keeps its style, its permissions,
and is never half-written or rewritten when it is not a JSON object."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.client.json_file import JsonFileError, read_object, render_edit, render_like, write_atomically
from app.hooks import install as hooks
from app.mcp import install as mcp

FOUR_SPACES = '{\n    "theme": "dark",\n    "env": {\n        "FOO": "1"\n    }\n}'  # no final newline


def test_a_rewrite_keeps_the_files_indentation_and_missing_final_newline() -> None:
    data = json.loads(FOUR_SPACES)
    assert render_like(data, FOUR_SPACES) == FOUR_SPACES
    assert render_like({"a": 1}, "") == '{\n  "a": 1\n}\n', "a new file is written as Claude Code does"


def test_a_hook_install_then_uninstall_leaves_the_settings_file_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(FOUR_SPACES)
    assert hooks.install(path, hooks.command_hook("http://127.0.0.1:8080", None))
    assert '\n    "hooks"' in path.read_text(), "the hook is written in the file's own indentation"
    assert hooks.uninstall(path)
    assert path.read_text() == FOUR_SPACES


def test_an_mcp_install_then_uninstall_leaves_the_config_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / ".mcp.json"
    path.write_text(FOUR_SPACES)
    entry = mcp.server_entry("http://127.0.0.1:8080", "repo:shop")
    assert mcp.install(path, ("mcpServers",), entry)
    assert mcp.uninstall(path, ("mcpServers",))
    assert path.read_text() == FOUR_SPACES


def test_a_private_file_stays_private_after_a_rewrite(tmp_path: Path) -> None:
    path = tmp_path / ".claude.json"
    path.write_text("{}\n")
    path.chmod(0o600)
    write_atomically(path, '{"a": 1}\n')
    assert path.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir()] == [".claude.json"], "no temporary file is left behind"


@pytest.mark.parametrize("text", ["[1, 2]", "{not json", '"a string"'])
def test_a_file_that_is_not_a_json_object_is_refused_and_left_alone(tmp_path: Path, text: str) -> None:
    path = tmp_path / "settings.json"
    path.write_text(text)
    with pytest.raises(JsonFileError, match="left as it is"):
        read_object(path)
    with pytest.raises(JsonFileError):
        hooks.install(path, hooks.command_hook("http://127.0.0.1:8080", None))
    assert path.read_text() == text


HAND_WRITTEN = """{ "theme":"dark" ,
  "list" : [1,2 ,  {"a": "é\\u00e9\\"q"}],
\t"nested": {"deep": {"keep": []}, "inline": {"x": 1}},
  "last": null
}"""


def test_an_edit_keeps_every_untouched_byte_and_undoing_it_gives_the_original_back() -> None:
    original = json.loads(HAND_WRITTEN)
    edited = json.loads(HAND_WRITTEN)
    edited["nested"]["deep"]["keep"].append({"added": True})
    edited["nested"]["inline"]["y"] = [2]
    edited["list"].append("new")
    edited["added"] = {"k": "v"}
    text = render_edit(edited, HAND_WRITTEN)
    assert json.loads(text) == edited
    assert '{ "theme":"dark" ,\n  "list" : [1,2 ,  {"a": "é\\u00e9\\"q"},  "new"]' in text, (
        "spaced like the last one"
    )
    assert '"inline": {"x": 1, "y": [2]}' in text, "a one-line object stays on one line"
    assert render_edit(original, text) == HAND_WRITTEN


def test_an_edited_element_keeps_its_neighbours_text() -> None:
    text = '[\n  {"id": 1,  "v": "a"},\n  {"id": 2, "v": "b"}\n]'
    assert render_edit({"x": 1}, "") == '{\n  "x": 1\n}\n'
    wrapped = '{"items": ' + text + "}"
    data = json.loads(wrapped)
    data["items"][1]["v"] = "c"
    assert render_edit(data, wrapped) == '{"items": [\n  {"id": 1,  "v": "a"},\n  {"id": 2, "v": "c"}\n]}'
