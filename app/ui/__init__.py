"""The web UI: server-rendered pages under `/` for a person to see and tend their memory.

An adapter like the API routes: pages call the same domain services (`MemoryService`,
`RecallService`, the graph's and namespaces' queries) with a user a signed-in session stands for.
"""

from app.ui.routes import template_config, ui_router
from app.ui.settings import UiSettings

__all__ = ["UiSettings", "template_config", "ui_router"]
