"""The MCP endpoint's section (`MEMORIA_MCP__*`)."""

from __future__ import annotations

from pydantic import Field

from app.core.settings import Section


class McpSettings(Section):
    """`/mcp`, the Model Context Protocol endpoint agents store and recall through.

    Host and Origin checks guard against DNS rebinding: a web page the person visits could
    otherwise reach a server on their loopback through a name that resolves to 127.0.0.1. Behind an
    ingress, add the name clients use (`memoria.example.com`, or `memoria.example.com:*`).
    """

    enabled: bool = Field(default=True, description="False: no /mcp route (404).")
    allowed_hosts: list[str] = Field(
        default_factory=lambda: ["127.0.0.1", "127.0.0.1:*", "localhost", "localhost:*", "[::1]", "[::1]:*"],
        description="Host header values /mcp answers (`name:*` allows any port).",
    )
    allowed_origins: list[str] = Field(
        default_factory=lambda: ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
        description="Origin header values /mcp answers; requests without an Origin (agents, CLIs) "
        "always pass.",
    )
    max_result_chars: int = Field(
        default=6000,
        ge=500,
        le=100_000,
        description="Longest tool result text; the rest is cut and the cut is marked.",
    )
    max_memory_chars: int = Field(
        default=800,
        ge=100,
        le=100_000,
        description="Longest memory text in recall and list results (memory_get shows up to "
        "max_result_chars).",
    )
    stream_max_lifetime_s: int = Field(
        default=300,
        ge=1,
        le=86_400,
        description="A `GET /mcp` event stream is closed after this. /mcp is stateless and never "
        "sends on one; a client that wants it again opens a new one.",
    )
    streams_per_key: int = Field(
        default=2,
        ge=1,
        le=1000,
        description="`GET /mcp` event streams one API key may hold open at once (in one server "
        "process); one more is answered 429.",
    )
