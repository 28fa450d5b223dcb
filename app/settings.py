"""The composed settings object, read from `MEMORIA_*` env vars and `.env`; and the one way to load it.

Each domain owns its section beside its code (`app/<domain>/settings.py`); this module only composes
them, so it sits with the wiring (`app.factory`, `app.cli`), above every domain: services receive their
own section, never this object. Nested sections use `__` as the delimiter, e.g.
`MEMORIA_DATABASE__URL`. Unknown keys are rejected so a typo in a deploy manifest fails loudly
instead of being ignored.
"""

from __future__ import annotations

import os
import re
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.auth.settings import AuthSettings
from app.capture.settings import CaptureSettings
from app.client.settings import ClientSettings
from app.core.settings import Section, describe_invalid
from app.db.settings import DatabaseSettings
from app.embeddings.settings import EmbeddingSettings
from app.graph.settings import GraphSettings
from app.hooks.settings import HookSettings
from app.jobs.settings import JobSettings
from app.links.settings import LinkSettings
from app.mcp.settings import McpSettings
from app.memories.settings import MemorySettings
from app.namespaces.settings import NamespaceSettings
from app.observability.settings import MetricsSettings
from app.recall.settings import RecallSettings
from app.secrets.settings import SecretSettings
from app.ui.settings import UiSettings

__all__ = [
    "AuthSettings",
    "CaptureSettings",
    "ClientSettings",
    "DatabaseSettings",
    "EmbeddingSettings",
    "GraphSettings",
    "HookSettings",
    "InvalidSettings",
    "JobSettings",
    "McpSettings",
    "MemorySettings",
    "MetricsSettings",
    "NamespaceSettings",
    "RecallSettings",
    "SecretSettings",
    "ServerSettings",
    "Settings",
    "load_settings",
]


_ORIGIN = re.compile(r"https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?|https?://\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?")


class ServerSettings(Section):
    host: str = Field(default="127.0.0.1", description="Address `memoria serve` binds (loopback by default).")
    port: int = Field(default=8080, ge=0, le=65535, description="Port `memoria serve` listens on.")
    max_body_bytes: int = Field(default=1_048_576, ge=1024, description="Larger request bodies get 413.")
    request_deadline_ms: int = Field(
        default=5000,
        ge=100,
        le=600_000,
        description="Every request is answered within this: past it the answer is 503 with Retry-After "
        "(the hook endpoint answers {} within its own, shorter budget).",
    )
    server_timing: bool = Field(
        default=False,
        description="answer every request with a Server-Timing header: its phases (auth, scope, embed, "
        "sql …) in ms",
    )
    write_deadline_ms: int = Field(
        default=60_000,
        ge=100,
        le=600_000,
        description="The deadline of the routes that embed what they write (store, PATCH): a batch "
        "of 100 memories is 100 model calls",
    )
    shutdown_timeout_s: int = Field(
        default=10,
        ge=0,
        le=3600,
        description="After SIGTERM, how long in-flight requests get to finish before they are cancelled",
    )
    header_timeout_s: float = Field(
        default=10,
        gt=0,
        le=600,
        description="A connection that has not sent a request's complete headers within this is "
        "closed: from its opening, and from the first byte of each later request on it",
    )
    body_timeout_s: float = Field(
        default=30,
        gt=0,
        le=3600,
        description="A request whose body is not all in within this, counted from the end of its "
        "headers, has its connection closed",
    )
    keep_alive_timeout_s: int = Field(
        default=5,
        ge=1,
        le=3600,
        description="An idle kept-alive connection is closed after this. Behind an ingress, set the "
        "ingress's upstream idle timeout shorter, or it may reuse a connection as it closes",
    )
    max_connections: int = Field(
        default=4096,
        ge=1,
        description="Open connections the server holds at most; a further one is answered 503 and "
        "closed unread. Lowered at start to what the open-file limit leaves",
    )
    max_connections_per_address: int = Field(
        default=256,
        ge=0,
        description="Open connections one client address (an IPv6 client: its /64) holds at most; a "
        "further one is answered 503 and closed unread. 0: no per-address cap. The addresses of "
        "MEMORIA_AUTH__TRUSTED_PROXIES (an ingress) are held to MEMORIA_SERVER__MAX_CONNECTIONS only",
    )
    cors_origins: list[str] = Field(
        default_factory=list,
        description="Web origins (`https://app.example.com`, `http://localhost:5173`) whose pages may "
        "call the API from a browser. Empty (the default): CORS is off, no cross-origin grant at all",
    )
    log_level: Literal["debug", "info", "warning", "error"] = Field(
        default="info", description="Least severe log line written to stderr."
    )
    log_format: Literal["text", "json"] = Field(
        default="text",
        description="`json`: one JSON object per log line; every line of a request carries its request id",
    )

    @field_validator("cors_origins")
    @classmethod
    def _origins_only(cls, origins: list[str]) -> list[str]:
        """An origin is scheme, host and optional port, exactly as a browser sends it in `Origin`;
        anything else (a path, a trailing slash, `*`) would never match, or match every site."""
        for origin in origins:
            if not _ORIGIN.fullmatch(origin):
                raise ValueError(
                    f"{origin!r} is not an origin: write scheme://host[:port], e.g. http://localhost:5173 "
                    "(no path, no trailing slash, no wildcard)"
                )
        return origins


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="MEMORIA_",
        env_nested_delimiter="__",
        env_file=".env",
        extra="forbid",
        frozen=True,
    )

    database: DatabaseSettings = Field(default_factory=DatabaseSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    auth: AuthSettings = Field(default_factory=AuthSettings)
    embeddings: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    memories: MemorySettings = Field(default_factory=MemorySettings)
    namespaces: NamespaceSettings = Field(default_factory=NamespaceSettings)
    recall: RecallSettings = Field(default_factory=RecallSettings)
    graph: GraphSettings = Field(default_factory=GraphSettings)
    secrets: SecretSettings = Field(default_factory=SecretSettings)
    jobs: JobSettings = Field(default_factory=JobSettings)
    hooks: HookSettings = Field(default_factory=HookSettings)
    capture: CaptureSettings = Field(default_factory=CaptureSettings)
    links: LinkSettings = Field(default_factory=LinkSettings)
    mcp: McpSettings = Field(default_factory=McpSettings)
    metrics: MetricsSettings = Field(default_factory=MetricsSettings)
    client: ClientSettings = Field(default_factory=ClientSettings)
    ui: UiSettings = Field(default_factory=UiSettings)

    @model_validator(mode="before")
    @classmethod
    def _reject_unknown_env(cls, data: Any) -> Any:
        """pydantic-settings ignores unknown top-level `MEMORIA_*` variables; we refuse them."""
        known = {name.upper() for name in cls.model_fields}
        unknown = sorted(
            key
            for key in os.environ
            if key.upper().startswith("MEMORIA_") and key[8:].upper().split("__")[0] not in known
        )
        if unknown:
            raise ValueError(f"unknown setting(s) in the environment: {', '.join(unknown)}")
        return data

    def with_database_url(self, url: str) -> Settings:
        """The same settings pointed at `url` (the embedded server's, once it runs)."""
        return self.model_copy(update={"database": self.database.model_copy(update={"url": url})})


class InvalidSettings(ValueError):
    """The environment or `.env` holds a bad value; the message is one line a person can act on."""


def load_settings() -> Settings:
    """Read the settings the way every command and the server do; a bad value is one clear line."""
    try:
        return Settings()
    except ValidationError as exc:
        raise InvalidSettings(f"invalid configuration: {describe_invalid(exc)}") from exc
