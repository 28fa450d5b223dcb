"""How the `memoria` client commands and the command hook reach a server."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, SecretStr, model_validator

from app.core.settings import Section
from app.errors import InvalidInput
from app.namespaces import validate_namespace_name
from memoria_hook_client.environment import (
    DEFAULT_FLUSH_WAIT_S,
    DEFAULT_HOOK_BUDGET_S,
    DEFAULT_URL,
    MAX_FLUSH_WAIT_S,
    default_hook_log,
    default_key_file,
)


class ClientSettings(Section):
    """How `memoria` client commands and the command hook reach a server (`scripts/memoria-hook` reads
    the same `MEMORIA_CLIENT__*` variables, but not `.env`)."""

    url: str = Field(default=DEFAULT_URL, description="Base URL of the Memoria API.")
    api_key: SecretStr | None = Field(default=None, description="API key; else read from key_file.")
    key_file: Path = Field(
        default_factory=lambda: Path(default_key_file()),
        description="File holding the API key (must be chmod 600).",
    )
    timeout_s: float = Field(default=10.0, gt=0, le=600, description="Per-request timeout of CLI commands.")
    hook_budget_s: float = Field(
        default=DEFAULT_HOOK_BUDGET_S,
        gt=0,
        le=60,
        description="Hard total time of one command-hook run (spawn to exit).",
    )
    hook_log: Path = Field(
        default_factory=lambda: Path(default_hook_log()), description="Where the command hook logs."
    )
    namespace_map: dict[str, str] = Field(
        default_factory=dict,
        description="Path prefix -> namespace, checked before the git repository of the session's cwd "
        "(resolved on this machine by the command hook, `memoria remember` and the hook installer).",
    )
    default_namespace: str | None = Field(
        default=None,
        description="Namespace for a cwd outside any git repository; unset = the server's default.",
    )
    # Read by the capture hook itself (standard library only: `memoria_hook_client.state` and
    # `memoria_hook_client.capture_worker`);
    # declared here so one shell environment serves the hooks and the `memoria` commands alike.
    state_dir: Path | None = Field(
        default=None,
        description="The hooks' state (capture spool, transcript cursors, last outcomes); unset = "
        "$XDG_STATE_HOME/memoria, else ~/.local/state/memoria.",
    )
    capture: str = Field(
        default="on", description="`off` stops the capture hooks from storing anything (every project)."
    )
    capture_flush: str = Field(
        default="detached",
        description="`inline`: a capture hook sends its spool before exiting (tests); `detached`: a "
        "separate process does, so the hook never waits for the server.",
    )
    flush_wait_s: float = Field(
        default=DEFAULT_FLUSH_WAIT_S,
        ge=0,
        le=MAX_FLUSH_WAIT_S,
        description="When a capture could not be sent (server down), one detached flusher keeps "
        "retrying with backoff for this long and sends the spool as soon as the server answers; "
        "0 = only at the next hook event.",
    )

    @model_validator(mode="after")
    def _names_are_valid(self) -> ClientSettings:
        """A mapped or default namespace the API would refuse fails here, not on every prompt."""
        for name in [*self.namespace_map.values(), self.default_namespace]:
            if name is not None:
                try:
                    validate_namespace_name(name)
                except InvalidInput as exc:
                    raise ValueError(exc.detail) from exc
        return self
