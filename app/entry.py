"""The `memoria` console script: `memoria hook <sub>` straight to the command hook, the rest to click.

Claude Code may run `memoria hook user-prompt-submit` (or `session-start`, `capture`, `flush`) on
every prompt, and importing `app.cli` registers every command, which pulls in click, pydantic,
the database drivers and the embedder: about a second per prompt. So this module, which the
console script names, looks at argv first and sends those four subcommands to the hook client's
launcher, `memoria_hook_client.handoff` (standard library only, see its docstring) without
importing anything else. It lives outside the `app.cli` package on purpose: importing any
`app.cli.*` module runs `app/cli/__init__.py`.
"""

from __future__ import annotations

import os
import sys

#: The hook subcommands taken here (kept equal to `memoria_hook_client.command.SUBCOMMANDS`; a test pins it).
HOOK_SUBCOMMANDS = ("user-prompt-submit", "session-start", "capture", "flush")


def hook_subcommand(argv: list[str]) -> str | None:
    """The hook subcommand of `memoria hook [--agent NAME] <sub> …`, None for any other command."""
    if len(argv) < 2 or argv[0] != "hook":
        return None
    words = argv[1:]
    if words[0] == "--agent":
        words = words[2:]
    elif words[0].startswith("--agent="):
        words = words[1:]
    return words[0] if words and words[0] in HOOK_SUBCOMMANDS else None


def main() -> None:
    argv = sys.argv[1:]
    if hook_subcommand(argv) is not None:
        from memoria_hook_client.handoff import main as hook_main

        code = hook_main(argv[1:])
        # Skip interpreter teardown: the hook flushed its answer and closed its log, and every
        # millisecond here delays the person's prompt.
        os._exit(code)
    from app.cli import main as cli_main

    cli_main(prog_name="memoria")


if __name__ == "__main__":
    main()
