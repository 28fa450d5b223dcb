"""Memories: store, read, list, update and delete."""

from app.memories.routes import MemoryController
from app.memories.service import MemoryService

__all__ = ["MemoryController", "MemoryService"]
