"""How Cursor's hook events read, for the hook client (`--agent cursor`).

Cursor hands every agent hook its common fields (`conversation_id`, `generation_id`, `model`,
`hook_event_name`, `cursor_version`, `workspace_roots`, `user_email`, `transcript_path`) plus the
event's own; sessionStart adds `session_id` ("same as conversation_id"). It sends no `cwd`: the
workspace's first root stands in for it, so the namespace is the repository's, as for the other
agents, and the conversation is the session the server's ledger keys on. The workspace roots (paths
on this machine) and the person's e-mail address are left out of what goes to the server. Standard
library only, no typing at run time.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Fields of a Cursor event that stay on this machine (the server has no use for them).
PRIVATE_FIELDS = ("workspace_roots", "user_email")


def normalised(event: dict[str, Any]) -> dict[str, Any]:
    """`event` with `cwd` (the first workspace root) and `session_id` (the conversation) when it
    lacks them, and without the fields that stay here; an explicit `cwd` or `session_id` is kept."""
    result = {name: value for name, value in event.items() if name not in PRIVATE_FIELDS}
    roots = event.get("workspace_roots")
    if "cwd" not in result and isinstance(roots, list) and roots and isinstance(roots[0], str):
        result["cwd"] = roots[0]
    conversation = event.get("conversation_id")
    if not result.get("session_id") and isinstance(conversation, str) and conversation:
        result["session_id"] = conversation
    return result
