"""Memories: store, read, list, update and delete."""

from app.memories.service import MemoryService

__all__ = ["MemoryService"]
