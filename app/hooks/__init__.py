"""Claude Code hooks, the server's side: the hook routes (recall before each prompt, context at
session start) and the installer that writes Memoria's hooks into Claude Code's settings.

The command hooks Claude Code runs on a person's machine live in the `memoria_hook_client` package
(standard library only); `install` names them and `routes` answers them.
"""
