"""Capture: Claude Code exchanges stored as `episode` memories, idempotently, without an LLM."""
