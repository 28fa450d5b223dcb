"""Claude Code hooks: recall before each prompt (HTTP endpoint + command fallback) and their install.

Deliberately empty of imports: `app.hooks.command` runs once per prompt from `scripts/memoria-hook`
and must load nothing beyond the standard library.
"""
