"""The Claude Code hook client: what runs on a person's machine each time Claude Code fires a hook.

Claude Code spawns a process per event (`memoria hook <sub>` or `scripts/memoria-hook <sub>`), so
this package is the part of Memoria that must start in tens of milliseconds and can never get in
the way of a prompt: `command` (the entry point: recall before a prompt, context at session start),
`capture_worker` (capture on Stop, PreCompact and SessionEnd, and the flusher it starts), `spool`
and `state` (the local spool, cursors and `status.json`), `transcript` (Claude Code's JSONL read
into exchanges), `private` (`<private>` spans removed before anything leaves the machine),
`environment` and `namespace` (the client's configuration and the session's namespace, shared with
the `memoria` commands), `budget`, `http_post` and `hook_log`.

Two rules, held by import contracts in pyproject.toml (`make lint`): it imports nothing of `app`
(the server and the full command line import it, never the reverse), and nothing beyond the
standard library (no site-packages needed: the launcher runs it under `python -S`). This
`__init__` is deliberately empty of imports, so loading one module loads no other.
"""
