"""The `memoria` console script: `memoria hook <sub>` straight to the command hook, the rest to click.

Claude Code may run `memoria hook user-prompt-submit` (or `session-start`, `capture`, `flush`) on
every prompt, and importing `app.cli` registers every command, which pulls in click, pydantic,
the database drivers and the embedder: about a second per prompt. So this module, which the
console script names, looks at argv first and sends those four subcommands to `memoria_hook_client.command`
(standard library only, see its docstring) without importing anything else. It lives outside the
`app.cli` package on purpose: importing any `app.cli.*` module runs `app/cli/__init__.py`.
"""

from __future__ import annotations

import os
import sys

#: The hook subcommands taken here (kept equal to `memoria_hook_client.command.SUBCOMMANDS`; a test pins it).
HOOK_SUBCOMMANDS = ("user-prompt-submit", "session-start", "capture", "flush")


def main() -> None:
    argv = sys.argv[1:]
    if len(argv) >= 2 and argv[0] == "hook" and argv[1] in HOOK_SUBCOMMANDS:
        from memoria_hook_client.command import main as hook_main

        code = hook_main(argv[1:])
        # Skip interpreter teardown: the hook flushed its answer and closed its log, and every
        # millisecond here delays the person's prompt.
        os._exit(code)
    from app.cli import main as cli_main

    cli_main(prog_name="memoria")


if __name__ == "__main__":
    main()
