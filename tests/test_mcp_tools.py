"""The tool definitions the agent pays for on every request: their size, and that each schema lists
exactly the arguments the server decodes."""

from __future__ import annotations

import msgspec

from app.mcp.tools import TOOLS, definitions_text

# 2,500 tokens is the budget; at the ~4 characters per token of English and JSON, 6,000
# characters keeps well inside it (`memoria bench mcp` prints the count).
MAX_DEFINITION_CHARS = 6000


def test_all_tool_definitions_fit_the_budget() -> None:
    size = len(definitions_text())
    assert size <= MAX_DEFINITION_CHARS, f"tool names, descriptions and schemas are {size} characters"


def test_each_schema_lists_exactly_its_argument_fields() -> None:
    for tool in TOOLS:
        fields = {field.encode_name for field in msgspec.structs.fields(tool.args)}
        assert set(tool.input_schema["properties"]) == fields, tool.name
        required = {field.encode_name for field in msgspec.structs.fields(tool.args) if field.required}
        assert set(tool.input_schema.get("required", [])) == required, tool.name


def test_the_store_items_schema_matches_a_new_memory() -> None:
    (store,) = [tool for tool in TOOLS if tool.name == "memory_store"]
    item = store.input_schema["properties"]["memories"]["items"]
    from app.mcp.tools import NewMemory

    assert set(item["properties"]) == {f.encode_name for f in msgspec.structs.fields(NewMemory)}
    assert item["required"] == ["content"]


def test_every_description_says_when_to_call_the_tool() -> None:
    for tool in TOOLS:
        assert 20 <= len(tool.description) <= 400, tool.name
