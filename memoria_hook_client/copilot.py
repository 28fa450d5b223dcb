"""How GitHub Copilot CLI's hook events read, for the hook client (`--agent copilot`).

Copilot CLI sends camelCase fields (renamed by `agents.FIELD_NAMES`) and no event name. The capture
worker needs one (agentStop ends the model's turn), so agentStop is told by the field only it
carries, `stopReason`. (sessionEnd carries no `transcriptPath`, so it captures nothing.) Standard
library only, no typing at run time.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

TURN_OVER_EVENT = "agentStop"


def normalised(event: dict[str, Any]) -> dict[str, Any]:
    """`event` with `hook_event_name` for agentStop (an explicit one is kept)."""
    if "hook_event_name" in event:
        return event
    if "stopReason" in event:
        return {**event, "hook_event_name": TURN_OVER_EVENT}
    return event
