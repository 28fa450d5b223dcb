"""Coding agents' hooks, the server's side: the hook routes (recall before each prompt, context at
session start) for every host of `hosts` (Claude Code, Codex CLI, ...), and the installers that
write Memoria's hooks into each agent's settings (`install` for Claude Code, `installers` for all).

The command hooks the agents run on a person's machine live in the `memoria_hook_client` package
(standard library only); the installers name them and `routes` answers them.
"""
