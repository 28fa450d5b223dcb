"""The command hook's old module path, kept so hooks installed as `python -m app.hooks.command <sub>`
before the hook client became its own package keep answering instead of failing on every prompt.

It runs `memoria_hook_client.command` and nothing else; `memoria hook install` rewrites such an entry
to the new path (`install.HOOK_MODULES` recognises both), after which this module is never run.
"""

from __future__ import annotations

import sys

from memoria_hook_client.command import main

if __name__ == "__main__":
    sys.exit(main())
