"""The tools Memoria offers an agent: what each is for, its input schema, and the typed arguments.

Few and sharp on purpose: every description and schema here is sent to the model with every request
it makes, so they say *when* to call each tool in as few words as do the job, and the schemas carry
no defaults or limits the server enforces anyway (it answers a clear tool error instead). The size
of all of them together is pinned by a test and reported by `memoria bench mcp`.

Arguments are decoded with msgspec into the structs below, strictly (a number in a string is not a
number, unknown fields are refused), so a bad call gets the same precise message a REST body would.
The schemas are written by hand, shorter than generated ones; a test checks each lists exactly its
struct's fields.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, Final, Literal

import msgspec
from msgspec import Meta

from app.auth.scopes import READ, WRITE
from app.links.schemas import LINK_KINDS, LinkKind

MemoryId = Annotated[int, Meta(ge=1, le=2**63 - 1)]
Importance = Annotated[float, Meta(ge=0.0, le=1.0)]
Limit = Annotated[int, Meta(ge=1, le=50)]


class NewMemory(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    content: str
    category: str | None = None
    tags: list[str] = msgspec.field(default_factory=list)
    importance: Importance = 0.5
    expanded_keywords: str | None = None
    supersedes: list[MemoryId] = msgspec.field(default_factory=list)


class StoreToolArgs(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    memories: Annotated[list[NewMemory], Meta(min_length=1)]
    namespace: str | None = None


class RecallToolArgs(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    query: str
    expanded_query: str | None = None
    category: str | None = None
    tags: list[str] | None = None
    sort: Literal["relevance", "importance", "recency"] = "relevance"
    limit: Limit = 8
    namespace: str | None = None
    explain: bool = False
    rerank: bool = False
    kinds: list[Literal["memory", "episode"]] | None = None
    include_superseded: bool = False
    as_of: datetime | None = None


class GetToolArgs(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    id: MemoryId


class UpdateToolArgs(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    id: MemoryId
    content: str | msgspec.UnsetType = msgspec.UNSET
    category: str | msgspec.UnsetType = msgspec.UNSET
    tags: list[str] | msgspec.UnsetType = msgspec.UNSET
    importance: Importance | msgspec.UnsetType = msgspec.UNSET
    expanded_keywords: str | msgspec.UnsetType = msgspec.UNSET


class LinkToolArgs(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    id: MemoryId
    kind: LinkKind
    target: MemoryId
    undo: bool = False


class ForgetToolArgs(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    id: MemoryId


class PromoteToolArgs(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    id: MemoryId
    importance: Importance | None = None
    pinned: bool | None = None


class ListToolArgs(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    order: Literal["recent", "important"] = "recent"
    category: str | None = None
    limit: Limit = 20
    namespace: str | None = None


_NAMESPACE = {"type": "string", "description": "Default: this project's"}
_CATEGORY = {"type": "string", "description": "decision, preference, convention, runbook, fix, fact…"}
_TAGS = {"type": "array", "items": {"type": "string"}}
_IMPORTANCE = {"type": "number", "description": "0-1, default 0.5; 0.8+ for rules to always follow"}
_KEYWORDS = {"type": "string", "description": "Synonyms and related terms a later search may use"}
_ID = {"type": "integer"}


def _object(properties: dict[str, Any], *required: str) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    return schema


class ToolSpec(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    description: str
    input_schema: dict[str, Any]
    args: type[msgspec.Struct]
    scope: str
    read_only: bool
    search_hint: str | None = None
    """Words a client's tool search matches besides the name and description (Claude Code defers
    MCP tools behind `ToolSearch` and reads this from the tool's `_meta`, `anthropic/searchHint`):
    the words a model searches with when it wants to remember or recall."""


TOOLS: Final = (
    ToolSpec(
        name="memory_store",
        description=(
            "Remember for later sessions: save decisions and why, the user's preferences, "
            "conventions, runbook steps, fixes that took effort. Call when you learn one; not for "
            "task progress. One self-contained fact per memory (name the project or tool)."
        ),
        search_hint="remember save store note a memory: decision, preference, convention, fix",
        input_schema=_object(
            {
                "memories": {
                    "type": "array",
                    "items": _object(
                        {
                            "content": {"type": "string"},
                            "category": _CATEGORY,
                            "tags": _TAGS,
                            "importance": _IMPORTANCE,
                            "expanded_keywords": _KEYWORDS,
                            "supersedes": {
                                "type": "array",
                                "items": _ID,
                                "description": "Ids of memories this changed fact replaces",
                            },
                        },
                        "content",
                    ),
                },
                "namespace": _NAMESPACE,
            },
            "memories",
        ),
        args=StoreToolArgs,
        scope=WRITE,
        read_only=False,
    ),
    ToolSpec(
        name="memory_recall",
        description=(
            "Recall memories of earlier sessions by search. A prompt hook may already have added "
            "the ones relevant to the prompt; call when you need more: the user refers to earlier "
            "work, asks what was decided, or before asking what they may have told you already. "
            "Returns ids (#…), kinds, scores, categories and text."
        ),
        search_hint="recall remember search memory: what did we decide, earlier work, past sessions",
        input_schema=_object(
            {
                "query": {"type": "string"},
                "expanded_query": {"type": "string", "description": "Synonyms and related terms"},
                "category": {"type": "string"},
                "tags": _TAGS,
                "sort": {"enum": ["relevance", "importance", "recency"]},
                "limit": {"type": "integer", "description": "1-50, default 8"},
                "namespace": _NAMESPACE,
                "explain": {"type": "boolean", "description": "Show why each matched"},
                "rerank": {
                    "type": "boolean",
                    "description": "Re-order the top hits with a local re-ranker: slower, better first hits",
                },
                "kinds": {
                    "type": "array",
                    "items": {"enum": ["memory", "episode"]},
                    "description": "memory: curated; episode: captured exchange. Default both",
                },
                "include_superseded": {"type": "boolean", "description": "Replaced versions too"},
                "as_of": {"type": "string", "description": "RFC 3339 time: what held then"},
            },
            "query",
        ),
        args=RecallToolArgs,
        scope=READ,
        read_only=True,
    ),
    ToolSpec(
        name="memory_get",
        description="One memory in full by id (recall and list shorten long ones).",
        input_schema=_object({"id": _ID}, "id"),
        args=GetToolArgs,
        scope=READ,
        read_only=True,
    ),
    ToolSpec(
        name="memory_link",
        description=(
            "Link memory id to target: supersedes (id replaces the outdated target, which leaves "
            "recall), resolved-by (target fixes the problem id states), see-also, part-of. "
            "undo: remove the link. Answers the memory's links."
        ),
        input_schema=_object(
            {"id": _ID, "kind": {"enum": list(LINK_KINDS)}, "target": _ID, "undo": {"type": "boolean"}},
            "id",
            "kind",
            "target",
        ),
        args=LinkToolArgs,
        scope=WRITE,
        read_only=False,
    ),
    ToolSpec(
        name="memory_update",
        description=(
            "Correct a memory by id that was wrong; fields left out stay. When a fact changed, "
            "store the new one with supersedes instead: the old one stays as history."
        ),
        input_schema=_object(
            {
                "id": _ID,
                "content": {"type": "string"},
                "category": {"type": "string"},
                "tags": _TAGS,
                "importance": {"type": "number"},
                "expanded_keywords": {"type": "string"},
            },
            "id",
        ),
        args=UpdateToolArgs,
        scope=WRITE,
        read_only=False,
    ),
    ToolSpec(
        name="memory_forget",
        description="Delete a memory by id that is wrong or obsolete.",
        input_schema=_object({"id": _ID}, "id"),
        args=ForgetToolArgs,
        scope=WRITE,
        read_only=False,
    ),
    ToolSpec(
        name="memory_promote",
        description=(
            "Keep a captured episode for good: it becomes a curated memory that never expires. "
            "Call when a recalled episode holds a decision or fix worth keeping; "
            "pinned ones open every session."
        ),
        input_schema=_object(
            {"id": _ID, "importance": _IMPORTANCE, "pinned": {"type": "boolean"}},
            "id",
        ),
        args=PromoteToolArgs,
        scope=WRITE,
        read_only=False,
    ),
    ToolSpec(
        name="memory_list",
        description="Browse memories without a query: the newest, or the most important of the newest 200.",
        input_schema=_object(
            {
                "order": {"enum": ["recent", "important"]},
                "category": {"type": "string"},
                "limit": {"type": "integer", "description": "1-50, default 20"},
                "namespace": _NAMESPACE,
            }
        ),
        args=ListToolArgs,
        scope=READ,
        read_only=True,
    ),
)

BY_NAME: Final = {tool.name: tool for tool in TOOLS}

_ID_TEXT: Final = re.compile(r"#?([0-9]{1,19})")
"""An id as a model copies it from a result: `123`, or `#123` as recall, list and get show it."""


def with_ids_read(arguments: dict[str, Any]) -> dict[str, Any]:
    """`arguments` with every id given as text (`"123"`, `"#123"`) as the integer it names.

    The schemas ask for integers, yet a model copies ids as it sees them (`#123…`), or quotes one;
    refusing those costs a round trip for nothing. Only the id fields are read this way (`id`,
    `target`, each memory's `supersedes`); anything else that is not an id stays as given, so the
    strict decoding after this still refuses it with a precise message."""

    def read(value: Any) -> Any:
        found = _ID_TEXT.fullmatch(value.strip()) if isinstance(value, str) else None
        return int(found.group(1)) if found else value

    result = dict(arguments)
    for field in ("id", "target"):
        if field in result:
            result[field] = read(result[field])
    memories = result.get("memories")
    if isinstance(memories, list):
        result["memories"] = [
            {**item, "supersedes": [read(v) for v in item["supersedes"]]}
            if isinstance(item, dict) and isinstance(item.get("supersedes"), list)
            else item
            for item in memories
        ]
    return result


def definitions_text() -> str:
    """What the agent is sent about the tools (names, descriptions, schemas) as compact JSON: the
    text whose size the tool budget counts."""
    return msgspec.json.encode(
        [{"name": t.name, "description": t.description, "inputSchema": t.input_schema} for t in TOOLS]
    ).decode()
